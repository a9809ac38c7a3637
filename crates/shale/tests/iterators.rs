//! The iterators `Db::iter`, `Db::range` and `Db::prefix` (and the same on a
//! snapshot): what they yield, from either end, over every kind of bound.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use shale::env::MemFs;
use shale::{Db, Error, Options, ReadOptions, Result};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn open() -> Db {
    Db::open(
        "/db",
        Options {
            create_if_missing: true,
            fs: Arc::new(MemFs::new()),
            ..Default::default()
        },
    )
    .unwrap()
}

/// A database holding `keys`, each with the value `v<key>`.
fn db_with(keys: &[&str]) -> Db {
    let db = open();
    for k in keys {
        db.put(k.as_bytes(), format!("v{k}").as_bytes()).unwrap();
    }
    db
}

/// The keys an iterator yields, as strings.
fn keys(it: impl Iterator<Item = Result<(bytes::Bytes, bytes::Bytes)>>) -> Vec<String> {
    it.map(|item| String::from_utf8(item.unwrap().0.to_vec()).unwrap())
        .collect()
}

const ABCDE: &[&str] = &["a", "b", "c", "d", "e"];

#[test]
fn iter_yields_every_entry_in_key_order_with_its_value() {
    let db = db_with(&["c", "a", "b"]);
    let items: Vec<(Vec<u8>, Vec<u8>)> = db
        .iter()
        .map(|item| item.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(
        items,
        [
            (b"a".to_vec(), b"va".to_vec()),
            (b"b".to_vec(), b"vb".to_vec()),
            (b"c".to_vec(), b"vc".to_vec())
        ]
    );
}

#[test]
fn iter_over_an_empty_database_yields_nothing_from_either_end() {
    let db = open();
    assert_eq!(db.iter().next().map(|r| r.is_ok()), None);
    assert_eq!(db.iter().next_back().map(|r| r.is_ok()), None);
}

#[test]
fn rev_yields_every_entry_in_reverse() {
    let db = db_with(ABCDE);
    assert_eq!(keys(db.iter().rev()), ["e", "d", "c", "b", "a"]);
}

#[test]
fn range_takes_every_kind_of_bound() {
    let db = db_with(ABCDE);
    assert_eq!(keys(db.range("b".."d")), ["b", "c"]);
    assert_eq!(keys(db.range("b"..="d")), ["b", "c", "d"]);
    assert_eq!(keys(db.range("b"..)), ["b", "c", "d", "e"]);
    assert_eq!(keys(db.range(.."c")), ["a", "b"]);
    assert_eq!(keys(db.range(..="c")), ["a", "b", "c"]);
    assert_eq!(keys(db.range::<&str, _>(..)), ABCDE);
    let s = |k: &str| k.to_string();
    let excluded_start = (Bound::Excluded(s("b")), Bound::Included(s("d")));
    assert_eq!(keys(db.range(excluded_start)), ["c", "d"]);
    let both_excluded = (Bound::Excluded(s("b")), Bound::Excluded(s("e")));
    assert_eq!(keys(db.range(both_excluded)), ["c", "d"]);
}

#[test]
fn range_bounds_between_keys_and_beyond_the_ends() {
    let db = db_with(&["b", "d", "f"]);
    assert_eq!(keys(db.range("c".."e")), ["d"]);
    assert_eq!(keys(db.range("c".."e").rev()), ["d"]);
    assert_eq!(keys(db.range("a".."z")), ["b", "d", "f"]);
    assert_eq!(keys(db.range("a".."z").rev()), ["f", "d", "b"]);
    assert_eq!(keys(db.range("g"..)), Vec::<String>::new());
    assert_eq!(keys(db.range("g"..).rev()), Vec::<String>::new());
    assert_eq!(keys(db.range(.."a").rev()), Vec::<String>::new());
}

#[test]
fn range_bounds_work_in_reverse() {
    let db = db_with(ABCDE);
    assert_eq!(keys(db.range("b".."d").rev()), ["c", "b"]);
    assert_eq!(keys(db.range("b"..="d").rev()), ["d", "c", "b"]);
    let excluded = (
        Bound::Excluded(b"b".to_vec()),
        Bound::Excluded(b"d".to_vec()),
    );
    assert_eq!(keys(db.range(excluded).rev()), ["c"]);
}

#[test]
fn a_range_whose_start_is_after_its_end_is_empty() {
    let db = db_with(ABCDE);
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = "d".."b";
    assert_eq!(keys(db.range(backwards.clone())), Vec::<String>::new());
    assert_eq!(keys(db.range(backwards).rev()), Vec::<String>::new());
    assert_eq!(keys(db.range("c".."c")), Vec::<String>::new());
    assert_eq!(keys(db.range("c"..="c")), ["c"]);
}

#[test]
fn range_takes_keys_of_any_byte_string_type() {
    let db = db_with(ABCDE);
    assert_eq!(keys(db.range(b"b".to_vec()..b"d".to_vec())), ["b", "c"]);
    assert_eq!(keys(db.range(&b"b"[..]..&b"d"[..])), ["b", "c"]);
    assert_eq!(keys(db.range(*b"b"..*b"d")), ["b", "c"]);
    assert_eq!(keys(db.range(String::from("d")..)), ["d", "e"]);
}

#[test]
fn prefix_yields_the_keys_that_start_with_it() {
    let db = db_with(&["app", "apple", "apply", "apricot", "b", "ap"]);
    assert_eq!(keys(db.prefix("app")), ["app", "apple", "apply"]);
    assert_eq!(keys(db.prefix("app").rev()), ["apply", "apple", "app"]);
    assert_eq!(
        keys(db.prefix("ap")),
        ["ap", "app", "apple", "apply", "apricot"]
    );
    assert_eq!(keys(db.prefix("z")), Vec::<String>::new());
    assert_eq!(keys(db.prefix("z").rev()), Vec::<String>::new());
}

#[test]
fn an_empty_prefix_yields_everything() {
    let db = db_with(ABCDE);
    assert_eq!(keys(db.prefix("")), ABCDE);
    assert_eq!(keys(db.prefix(b"").rev()), ["e", "d", "c", "b", "a"]);
}

#[test]
fn a_prefix_of_0xff_bytes_has_no_upper_bound_to_compute() {
    let db = open();
    for k in [
        &b"\xfe"[..],
        b"\xff",
        b"\xff\xff",
        b"\xff\xff\x00",
        b"\xff\xfe",
    ] {
        db.put(k, b"").unwrap();
    }
    fn raw(it: impl Iterator<Item = Result<(bytes::Bytes, bytes::Bytes)>>) -> Vec<Vec<u8>> {
        it.map(|r| r.unwrap().0.to_vec()).collect()
    }
    assert_eq!(
        raw(db.prefix(b"\xff\xff")),
        [b"\xff\xff".to_vec(), b"\xff\xff\x00".to_vec()]
    );
    assert_eq!(
        raw(db.prefix(b"\xff\xff").rev()),
        [b"\xff\xff\x00".to_vec(), b"\xff\xff".to_vec()]
    );
    assert_eq!(raw(db.prefix(b"\xff")).len(), 4);
    // A prefix ending in 0xff after other bytes: the successor is computed
    // from the last byte that is not 0xff.
    db.put(b"a\xff\x01", b"").unwrap();
    db.put(b"b", b"").unwrap();
    assert_eq!(raw(db.prefix(b"a\xff")), [b"a\xff\x01".to_vec()]);
    assert_eq!(raw(db.prefix(b"a\xff").rev()), [b"a\xff\x01".to_vec()]);
}

#[test]
fn next_and_next_back_meet_in_the_middle_without_repeating() {
    for n in 0..7usize {
        let names: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let db = db_with(&refs);
        // Every interleaving of 8 steps from the two ends.
        for pattern in 0u32..256 {
            let mut it = db.iter();
            let mut front = Vec::new();
            let mut back = Vec::new();
            for step in 0..8 {
                let item = if pattern >> step & 1 == 0 {
                    it.next().map(|r| front.push(r.unwrap().0))
                } else {
                    it.next_back().map(|r| back.push(r.unwrap().0))
                };
                if item.is_none() {
                    assert!(it.next().is_none() && it.next_back().is_none());
                }
            }
            front.extend(it.map(|r| r.unwrap().0));
            back.reverse();
            front.extend(back);
            let seen: Vec<String> = front
                .iter()
                .map(|k| String::from_utf8(k.to_vec()).unwrap())
                .collect();
            assert_eq!(seen, names, "n={n} pattern={pattern:08b}");
        }
    }
}

#[test]
fn the_two_ends_meet_within_a_range() {
    let db = db_with(ABCDE);
    let mut it = db.range("b"..="d");
    assert_eq!(it.next_back().unwrap().unwrap().0, "d");
    assert_eq!(it.next().unwrap().unwrap().0, "b");
    assert_eq!(it.next_back().unwrap().unwrap().0, "c");
    assert!(it.next().is_none());
    assert!(it.next_back().is_none());
}

#[test]
fn an_iterator_reads_as_of_when_it_was_made() {
    let db = db_with(&["a", "c"]);
    let mut it = db.iter();
    assert_eq!(it.next().unwrap().unwrap().0, "a");
    db.put(b"b", b"new").unwrap();
    db.delete(b"c").unwrap();
    // The back end opens its cursor only now, on the same state.
    assert_eq!(keys(it.rev()), ["c"]);
}

#[test]
fn snapshots_iterate_as_of_the_snapshot() {
    let db = db_with(&["a", "b", "c"]);
    let snap = db.snapshot();
    db.delete(b"b").unwrap();
    db.put(b"a", b"changed").unwrap();
    db.put(b"d", b"vd").unwrap();
    assert_eq!(keys(snap.iter()), ["a", "b", "c"]);
    assert_eq!(keys(snap.range("b"..)), ["b", "c"]);
    assert_eq!(keys(snap.prefix("b")), ["b"]);
    assert_eq!(snap.iter().next().unwrap().unwrap().1, "va");
    let at = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    assert_eq!(keys(db.iter_with(&at).rev()), ["c", "b", "a"]);
    assert_eq!(keys(db.range_with(&at, .."c")), ["a", "b"]);
    assert_eq!(keys(db.prefix_with(&at, "a")), ["a"]);
    assert_eq!(keys(db.iter()), ["a", "c", "d"]);
}

#[test]
fn a_snapshot_of_another_database_yields_one_error() {
    let db = db_with(ABCDE);
    let other = open();
    let snap = other.snapshot();
    let at = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    for mut it in [
        db.iter_with(&at),
        db.range_with(&at, "a".."c"),
        db.prefix_with(&at, "a"),
    ] {
        assert!(matches!(it.next(), Some(Err(Error::InvalidArgument(_)))));
        assert!(it.next().is_none());
        assert!(it.next_back().is_none());
    }
    let mut back = db.iter_with(&at);
    assert!(matches!(
        back.next_back(),
        Some(Err(Error::InvalidArgument(_)))
    ));
    assert!(back.next().is_none());
}

#[test]
fn a_snapshot_outliving_its_database_yields_one_error() {
    let db = db_with(ABCDE);
    let snap = db.snapshot();
    drop(db);
    let mut it = snap.iter();
    assert!(matches!(it.next(), Some(Err(Error::InvalidArgument(_)))));
    assert!(it.next().is_none());
}

#[test]
fn an_iterator_outlives_its_database() {
    let db = db_with(ABCDE);
    let it = db.iter();
    drop(db);
    assert_eq!(keys(it), ABCDE);
}

/// Writes `ops` (key index, value or deletion) into `db` and `model`,
/// flushing and compacting in between so that entries end up in the
/// memtable, level 0 and deeper levels, with overwrites and deletions of
/// keys in other levels.
fn load_layers(db: &Db, model: &mut Model, rng: &mut rand::rngs::StdRng, keyspace: u32) {
    for round in 0..4 {
        for _ in 0..200 {
            let k = format!("key{:04}", rng.gen_range(0..keyspace)).into_bytes();
            if rng.gen_bool(0.25) {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("value{}", rng.gen::<u32>()).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        match round {
            0 => db.compact_range(None, None).unwrap(),
            1 => {
                // Level 0 over the deeper levels: flush without a full compaction.
                db.compact_range(Some(b"key9999"), Some(b"key9999"))
                    .unwrap()
            }
            _ => {}
        }
    }
}

fn model_range(model: &Model, lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> Vec<Vec<u8>> {
    let in_lower = |k: &Vec<u8>| match lower {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l,
        Bound::Excluded(l) => k > l,
    };
    let in_upper = |k: &Vec<u8>| match upper {
        Bound::Unbounded => true,
        Bound::Included(u) => k <= u,
        Bound::Excluded(u) => k < u,
    };
    model
        .keys()
        .filter(|k| in_lower(k) && in_upper(k))
        .cloned()
        .collect()
}

fn random_bound(rng: &mut rand::rngs::StdRng, keyspace: u32) -> Bound<Vec<u8>> {
    let key = format!("key{:04}", rng.gen_range(0..keyspace + 2)).into_bytes();
    match rng.gen_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(key),
        _ => Bound::Excluded(key),
    }
}

#[test]
fn over_memtable_and_levels_ranges_match_a_btreemap_model() {
    let keyspace = 300;
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5ca1e);
    let db = open();
    let mut model = Model::new();
    load_layers(&db, &mut model, &mut rng, keyspace);
    let files: u64 = (0..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert!(files >= 2, "the data spans several tables: {files}");

    let all: Vec<(Vec<u8>, Vec<u8>)> = db
        .iter()
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_>>()
        .unwrap();
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
    assert_eq!(all, expected);

    for case in 0..300 {
        let lower = random_bound(&mut rng, keyspace);
        let upper = random_bound(&mut rng, keyspace);
        let want = model_range(&model, &lower, &upper);
        let range = (lower.clone(), upper.clone());
        let got: Vec<Vec<u8>> = db
            .range(range.clone())
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        assert_eq!(got, want, "case {case}: {range:?}");
        let mut got_rev: Vec<Vec<u8>> = db
            .range(range.clone())
            .rev()
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        got_rev.reverse();
        assert_eq!(got_rev, want, "case {case} reversed: {range:?}");
        // Random interleaving from both ends.
        let mut it = db.range(range.clone());
        let (mut front, mut back) = (Vec::new(), Vec::new());
        loop {
            let item = if rng.gen_bool(0.5) {
                it.next().map(|r| front.push(r.unwrap().0.to_vec()))
            } else {
                it.next_back().map(|r| back.push(r.unwrap().0.to_vec()))
            };
            if item.is_none() {
                break;
            }
        }
        back.reverse();
        front.extend(back);
        assert_eq!(front, want, "case {case} from both ends: {range:?}");
    }
}

#[test]
fn prefixes_over_memtable_and_levels_match_a_btreemap_model() {
    let keyspace = 300;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let db = open();
    let mut model = Model::new();
    load_layers(&db, &mut model, &mut rng, keyspace);
    for prefix in [
        "", "k", "key0", "key01", "key012", "key0123", "key02", "kez", "z",
    ] {
        let want: Vec<&Vec<u8>> = model
            .keys()
            .filter(|k| k.starts_with(prefix.as_bytes()))
            .collect();
        let got: Vec<Vec<u8>> = db.prefix(prefix).map(|r| r.unwrap().0.to_vec()).collect();
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "prefix {prefix:?}");
        let mut rev: Vec<Vec<u8>> = db
            .prefix(prefix)
            .rev()
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        rev.reverse();
        assert_eq!(
            rev.iter().collect::<Vec<_>>(),
            want,
            "prefix {prefix:?} reversed"
        );
    }
}

#[test]
fn a_damaged_table_yields_one_error_then_ends() {
    let fs = MemFs::new();
    let options = Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        compression: shale::CompressionType::None,
        ..Default::default()
    };
    let db = Db::open("/db", options).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{i:05}").as_bytes(), &[b'x'; 100])
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    let table = shale::env::FileSystem::children(&fs, std::path::Path::new("/db"))
        .unwrap()
        .into_iter()
        .find(|name| name.ends_with(".ldb"))
        .expect("a table file");
    let path = std::path::Path::new("/db").join(table);
    // A byte in the first data block: its checksum no longer matches.
    fs.corrupt_byte(&path, 10, 0xee).unwrap();
    let opts = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
        ..Default::default()
    };
    for reverse in [false, true] {
        let mut it = db.iter_with(&opts);
        let mut errors = 0;
        let mut items = 0;
        loop {
            let next = if reverse { it.next_back() } else { it.next() };
            match next {
                Some(Ok(_)) => items += 1,
                Some(Err(e)) => {
                    assert!(e.is_corruption(), "{e}");
                    errors += 1;
                }
                None => break,
            }
            assert!(items < 10_000);
        }
        assert_eq!(errors, 1, "reverse: {reverse}");
        assert!(it.next().is_none() && it.next_back().is_none());
    }
}
