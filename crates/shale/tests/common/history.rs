//! A history of writes and the question a crash test asks of it: which
//! prefixes of the history does a recovered database hold?
//!
//! A write is a batch of updates applied atomically, so the database after a
//! crash must equal the history's model after some whole number of writes:
//! never a later write without an earlier one, never part of a batch.

use std::collections::BTreeMap;

use shale::{Db, ReadOptions};

/// Every key and value of a database or a model, in key order.
pub type Contents = BTreeMap<Vec<u8>, Vec<u8>>;

/// One key set to a value, or deleted (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    /// The key.
    pub key: Vec<u8>,
    /// The new value; `None` deletes.
    pub value: Option<Vec<u8>>,
}

/// The updates of one write (a single put or delete, or a batch).
pub type Write = Vec<Update>;

/// Everything in `db`, read with one forward scan. The only place these
/// tests iterate a database.
pub fn contents(db: &Db) -> shale::Result<Contents> {
    let mut it = db.cursor(&ReadOptions::default());
    it.seek_to_first();
    let mut out = Contents::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status()?;
    Ok(out)
}

/// Applies `write` to `model`.
pub fn apply(model: &mut Contents, write: &Write) {
    for u in write {
        match &u.value {
            Some(v) => model.insert(u.key.clone(), v.clone()),
            None => model.remove(&u.key),
        };
    }
}

/// The model after `writes` applied to `base`.
pub fn model_after(base: &Contents, writes: &[Write]) -> Contents {
    let mut model = base.clone();
    for w in writes {
        apply(&mut model, w);
    }
    model
}

/// The numbers `p` (0 to `writes.len()`) for which `base` followed by the
/// first `p` writes equals `actual`, in increasing order; and the `p`
/// closest to `actual` (fewest keys differing; the longest on a tie), for
/// failure messages.
pub fn consistent_prefixes(
    base: &Contents,
    writes: &[Write],
    actual: &Contents,
) -> (Vec<usize>, usize) {
    // Tracks how many keys differ between the model and `actual` as the
    // model advances one update at a time.
    let mut model = base.clone();
    let mut differing = base
        .iter()
        .filter(|(k, v)| actual.get(*k) != Some(*v))
        .count()
        + actual.keys().filter(|k| !base.contains_key(*k)).count();
    let mut found = Vec::new();
    let mut closest = (differing, 0);
    if differing == 0 {
        found.push(0);
    }
    for (i, w) in writes.iter().enumerate() {
        for u in w {
            let was_equal = model.get(&u.key) == actual.get(&u.key);
            match &u.value {
                Some(v) => model.insert(u.key.clone(), v.clone()),
                None => model.remove(&u.key),
            };
            let is_equal = model.get(&u.key) == actual.get(&u.key);
            match (was_equal, is_equal) {
                (true, false) => differing += 1,
                (false, true) => differing -= 1,
                _ => {}
            }
        }
        if differing == 0 {
            found.push(i + 1);
        }
        if differing <= closest.0 {
            closest = (differing, i + 1);
        }
    }
    (found, closest.1)
}

/// Checks that `actual` is `base` followed by `p` of `writes` for some `p` in
/// `min..=writes.len()`; returns the largest such `p`, or a description of
/// the mismatch (the consistent prefixes found, and how the closest prefix
/// differs from `actual`).
pub fn check_prefix(
    base: &Contents,
    writes: &[Write],
    min: usize,
    actual: &Contents,
) -> Result<usize, String> {
    let (found, closest) = consistent_prefixes(base, writes, actual);
    let n = writes.len();
    match found.last() {
        Some(&p) if p >= min => Ok(p),
        Some(&p) => Err(format!(
            "the database holds the first {p} of the {n} writes, but the first {min} must be \
             there; it differs from the model after {min} writes in:\n{}",
            describe_difference(&model_after(base, &writes[..min]), actual)
        )),
        None => Err(format!(
            "the database holds no prefix of the {n} writes (at least {min} must be there); \
             it differs from the closest, {closest} writes, in:\n{}",
            describe_difference(&model_after(base, &writes[..closest]), actual)
        )),
    }
}

/// The first few keys whose values differ between `expected` and `actual`.
pub fn describe_difference(expected: &Contents, actual: &Contents) -> String {
    let mut keys: Vec<&Vec<u8>> = expected.keys().chain(actual.keys()).collect();
    keys.sort();
    keys.dedup();
    let differing: Vec<String> = keys
        .into_iter()
        .filter(|k| expected.get(*k) != actual.get(*k))
        .map(|k| {
            format!(
                "  {}: expected {}, found {}",
                String::from_utf8_lossy(k),
                show(expected.get(k)),
                show(actual.get(k))
            )
        })
        .collect();
    let n = differing.len();
    let mut out = differing.into_iter().take(8).collect::<Vec<_>>().join("\n");
    if n > 8 {
        out.push_str(&format!("\n  ... {} more keys", n - 8));
    }
    out
}

fn show(value: Option<&Vec<u8>>) -> String {
    match value {
        None => "nothing".to_string(),
        Some(v) => {
            let s = String::from_utf8_lossy(&v[..v.len().min(40)]).into_owned();
            format!("{s:?} ({} bytes)", v.len())
        }
    }
}
