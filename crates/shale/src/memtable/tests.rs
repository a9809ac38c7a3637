//! Specifications of the memtable: lookups by sequence, tombstones, and the
//! internal-key iterator.

use super::*;
use crate::comparator::{BytewiseComparator, Comparator};
use crate::keys::{parse_internal_key, InternalKey};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

fn new_memtable() -> Arc<MemTable> {
    Arc::new(MemTable::new(InternalKeyComparator::new(Arc::new(
        BytewiseComparator,
    ))))
}

fn get<'a>(mem: &'a MemTable, key: &[u8], seq: SequenceNumber) -> MemGet<'a> {
    mem.get(&LookupKey::new(key, seq))
}

/// Orders user keys by their bytes reversed, to show the memtable uses the
/// user comparator rather than byte order.
struct ReverseComparator;
impl Comparator for ReverseComparator {
    fn name(&self) -> &str {
        "test.Reverse"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }
}

#[test]
fn empty_memtable_finds_nothing() {
    let mem = new_memtable();
    assert!(mem.is_empty());
    assert_eq!(mem.len(), 0);
    assert_eq!(get(&mem, b"k", 100), MemGet::NotFound);
    let mut it = mem.iter();
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_ok());
}

#[test]
fn get_returns_newest_visible_version() {
    let mem = new_memtable();
    mem.add(1, ValueType::Value, b"k", b"v1");
    mem.add(2, ValueType::Value, b"k", b"v2");
    mem.add(3, ValueType::Value, b"other", b"o3");
    mem.add(5, ValueType::Value, b"k", b"v5");
    assert!(!mem.is_empty());
    assert_eq!(mem.len(), 4);

    assert_eq!(get(&mem, b"k", 100), MemGet::Value(b"v5"));
    assert_eq!(get(&mem, b"k", 5), MemGet::Value(b"v5"));
    // A lookup at an older sequence sees the older value.
    assert_eq!(get(&mem, b"k", 4), MemGet::Value(b"v2"));
    assert_eq!(get(&mem, b"k", 2), MemGet::Value(b"v2"));
    assert_eq!(get(&mem, b"k", 1), MemGet::Value(b"v1"));
    // Before the first write there is nothing.
    assert_eq!(get(&mem, b"k", 0), MemGet::NotFound);
    assert_eq!(get(&mem, b"other", 2), MemGet::NotFound);
    assert_eq!(get(&mem, b"other", 3), MemGet::Value(b"o3"));
    // Neighbouring and prefix keys do not match.
    assert_eq!(get(&mem, b"", 100), MemGet::NotFound);
    assert_eq!(get(&mem, b"j", 100), MemGet::NotFound);
    assert_eq!(get(&mem, b"kk", 100), MemGet::NotFound);
    assert_eq!(get(&mem, b"z", 100), MemGet::NotFound);
}

#[test]
fn tombstones_hide_older_values() {
    let mem = new_memtable();
    mem.add(10, ValueType::Value, b"k", b"old");
    mem.add(11, ValueType::Deletion, b"k", b"");
    mem.add(12, ValueType::Value, b"k", b"new");
    assert_eq!(get(&mem, b"k", 10), MemGet::Value(b"old"));
    assert_eq!(get(&mem, b"k", 11), MemGet::Deleted);
    assert_eq!(get(&mem, b"k", 12), MemGet::Value(b"new"));
    assert_eq!(get(&mem, b"k", 9), MemGet::NotFound);
}

#[test]
fn empty_keys_and_values() {
    let mem = new_memtable();
    mem.add(1, ValueType::Value, b"", b"");
    mem.add(2, ValueType::Value, b"a", b"");
    assert_eq!(get(&mem, b"", 5), MemGet::Value(b""));
    assert_eq!(get(&mem, b"a", 5), MemGet::Value(b""));
    let mut it = mem.iter();
    it.seek_to_first();
    assert_eq!(
        it.key(),
        InternalKey::new(b"", 1, ValueType::Value).encoded()
    );
    assert_eq!(it.value(), b"");
}

#[test]
fn long_keys_and_values_use_multibyte_lengths() {
    let mem = new_memtable();
    let big_key = vec![b'k'; 300];
    let big_value = vec![b'v'; if cfg!(miri) { 2000 } else { 70_000 }];
    mem.add(7, ValueType::Value, &big_key, &big_value);
    mem.add(8, ValueType::Value, b"small", b"s");
    assert_eq!(get(&mem, &big_key, 7), MemGet::Value(&big_value[..]));
    let mut it = mem.iter();
    it.seek_to_first();
    assert_eq!(
        it.key(),
        InternalKey::new(&big_key, 7, ValueType::Value).encoded()
    );
    assert_eq!(it.value(), &big_value[..]);
}

#[test]
fn iterator_yields_internal_keys_in_internal_order() {
    let mem = new_memtable();
    mem.add(3, ValueType::Value, b"b", b"b3");
    mem.add(1, ValueType::Value, b"a", b"a1");
    mem.add(4, ValueType::Deletion, b"b", b"");
    mem.add(2, ValueType::Value, b"c", b"c2");
    mem.add(5, ValueType::Value, b"a", b"a5");
    let expected: Vec<(Vec<u8>, &[u8])> = vec![
        (
            InternalKey::new(b"a", 5, ValueType::Value)
                .encoded()
                .to_vec(),
            b"a5",
        ),
        (
            InternalKey::new(b"a", 1, ValueType::Value)
                .encoded()
                .to_vec(),
            b"a1",
        ),
        (
            InternalKey::new(b"b", 4, ValueType::Deletion)
                .encoded()
                .to_vec(),
            b"",
        ),
        (
            InternalKey::new(b"b", 3, ValueType::Value)
                .encoded()
                .to_vec(),
            b"b3",
        ),
        (
            InternalKey::new(b"c", 2, ValueType::Value)
                .encoded()
                .to_vec(),
            b"c2",
        ),
    ];
    let mut it = mem.iter();
    it.seek_to_first();
    for (k, v) in &expected {
        assert!(it.valid());
        assert_eq!(it.key(), &k[..]);
        assert_eq!(it.value(), *v);
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for (k, v) in expected.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        assert_eq!(it.value(), *v);
        it.prev();
    }
    assert!(!it.valid());

    // Seeks take internal keys: (b, 10) is before every "b" entry, (b, 3)
    // lands on its own entry, (b, 2) after all of them.
    it.seek(InternalKey::new(b"b", 10, ValueType::Value).encoded());
    assert_eq!(it.key(), &expected[2].0[..]);
    it.seek(InternalKey::new(b"b", 3, ValueType::Value).encoded());
    assert_eq!(it.key(), &expected[3].0[..]);
    it.seek(InternalKey::new(b"b", 2, ValueType::Value).encoded());
    assert_eq!(it.key(), &expected[4].0[..]);
    it.seek(InternalKey::new(b"d", 100, ValueType::Value).encoded());
    assert!(!it.valid());
    it.seek(b"");
    assert_eq!(
        it.key(),
        &expected[0].0[..],
        "a malformed target sorts first"
    );
}

#[test]
fn iterator_keeps_memtable_alive() {
    let mem = new_memtable();
    mem.add(1, ValueType::Value, b"k", b"v");
    let mut it = mem.iter();
    drop(mem);
    it.seek_to_first();
    assert_eq!(
        parse_internal_key(it.key()).map(|p| p.user_key),
        Some(&b"k"[..])
    );
    assert_eq!(it.value(), b"v");
}

#[test]
fn uses_the_user_comparator() {
    let mem = Arc::new(MemTable::new(InternalKeyComparator::new(Arc::new(
        ReverseComparator,
    ))));
    for (i, k) in [b"a", b"c", b"b"].iter().enumerate() {
        mem.add(i as u64 + 1, ValueType::Value, *k, *k);
    }
    assert_eq!(get(&mem, b"b", 10), MemGet::Value(b"b"));
    let mut it = mem.iter();
    it.seek_to_first();
    let mut order = Vec::new();
    while it.valid() {
        order.push(it.value().to_vec());
        it.next();
    }
    assert_eq!(order, [b"c", b"b", b"a"]);
}

#[test]
fn memory_usage_grows() {
    let mem = new_memtable();
    let start = mem.approximate_memory_usage();
    let n = if cfg!(miri) { 50 } else { 5000 };
    for i in 0..n {
        mem.add(
            i,
            ValueType::Value,
            format!("key{i:06}").as_bytes(),
            &[7u8; 100],
        );
    }
    let usage = mem.approximate_memory_usage();
    assert!(usage > start, "{usage}");
    assert!(
        usage >= n as usize * (100 + 9 + 8),
        "holds every key and value: {usage}"
    );
}

/// Random writes and deletions compared with a model: for every key and a
/// spread of snapshot sequences, `get` agrees with the newest write at or
/// before the snapshot, and a full scan matches the model's internal order.
#[test]
fn random_history_matches_model() {
    let seed = 77;
    let (writes, keys) = if cfg!(miri) { (120, 20) } else { (4000, 300) };
    let mut rng = StdRng::seed_from_u64(seed);
    let mem = new_memtable();
    // (user key, seq) -> Some(value) or None for a deletion.
    let mut model: BTreeMap<(Vec<u8>, u64), Option<Vec<u8>>> = BTreeMap::new();
    for seq in 1..=writes {
        let k = format!("k{:04}", rng.gen_range(0..keys)).into_bytes();
        if rng.gen_bool(0.2) {
            mem.add(seq, ValueType::Deletion, &k, b"");
            model.insert((k, seq), None);
        } else {
            let v = format!("v{seq}").into_bytes();
            mem.add(seq, ValueType::Value, &k, &v);
            model.insert((k, seq), Some(v));
        }
    }
    for i in 0..keys + 1 {
        let k = format!("k{i:04}").into_bytes();
        for snap in [
            0,
            1,
            writes / 3,
            writes / 2,
            writes - 1,
            writes,
            writes + 10,
        ] {
            let newest = model
                .range((k.clone(), 0)..=(k.clone(), snap))
                .next_back()
                .map(|(_, v)| v.clone());
            let got = get(&mem, &k, snap);
            let expected = match &newest {
                None => MemGet::NotFound,
                Some(None) => MemGet::Deleted,
                Some(Some(v)) => MemGet::Value(v),
            };
            assert_eq!(got, expected, "seed {seed}: key {i} at {snap}");
        }
    }
    // Internal order: user key ascending, sequence descending.
    let mut versions: Vec<_> = model
        .iter()
        .map(|((k, s), v)| (&k[..], std::cmp::Reverse(*s), v))
        .collect();
    versions.sort();
    let expected: Vec<(Vec<u8>, Vec<u8>)> = versions
        .into_iter()
        .map(|(k, std::cmp::Reverse(s), v)| {
            let t = match v {
                Some(_) => ValueType::Value,
                None => ValueType::Deletion,
            };
            let ikey = InternalKey::new(k, s, t).encoded().to_vec();
            (ikey, v.clone().unwrap_or_default())
        })
        .collect();
    let mut it = mem.iter();
    it.seek_to_first();
    for (k, v) in &expected {
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for (k, _) in expected.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        it.prev();
    }
    assert!(!it.valid());
}

/// Writers on several threads add at once while readers look up and scan;
/// afterwards every write is present exactly once.
#[test]
fn concurrent_adds_and_reads() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as MemOrder};
    let (threads, per_thread) = if cfg!(miri) {
        (2u64, 30u64)
    } else {
        (4, 20_000)
    };
    let mem = new_memtable();
    let next_seq = Arc::new(AtomicU64::new(1));
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let mem = Arc::clone(&mem);
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut scans = 0;
            loop {
                let finished = done.load(MemOrder::Acquire);
                let mut it = mem.iter();
                it.seek_to_last();
                let mut last: Option<Vec<u8>> = None;
                while it.valid() {
                    let k = it.key().to_vec();
                    if let Some(l) = &last {
                        assert_eq!(mem.comparator().compare(&k, l), Ordering::Less);
                    }
                    // A value written for a key is found by a lookup at its sequence.
                    if let Some(p) = parse_internal_key(&k) {
                        assert_eq!(
                            mem.get(&LookupKey::new(p.user_key, p.sequence)),
                            MemGet::Value(it.value())
                        );
                    }
                    last = Some(k);
                    it.prev();
                }
                scans += 1;
                if finished {
                    return scans;
                }
            }
        })
    };
    let writers: Vec<_> = (0..threads)
        .map(|t| {
            let mem = Arc::clone(&mem);
            let next_seq = Arc::clone(&next_seq);
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let seq = next_seq.fetch_add(1, MemOrder::Relaxed);
                    // Threads share user keys, so versions interleave.
                    let k = format!("key{:05}", (i * 7 + t) % (per_thread / 2 + 1));
                    mem.add(
                        seq,
                        ValueType::Value,
                        k.as_bytes(),
                        format!("{seq}").as_bytes(),
                    );
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    done.store(true, MemOrder::Release);
    assert!(reader.join().unwrap() >= 1);
    assert_eq!(mem.len() as u64, threads * per_thread);
    let mut it = mem.iter();
    it.seek_to_first();
    let mut n = 0;
    let mut seqs = std::collections::HashSet::new();
    while it.valid() {
        let p = parse_internal_key(it.key()).unwrap();
        assert_eq!(it.value(), p.sequence.to_string().as_bytes());
        assert!(
            seqs.insert(p.sequence),
            "sequence {} appears twice",
            p.sequence
        );
        n += 1;
        it.next();
    }
    assert_eq!(n, threads * per_thread);
}

/// A memtable with a key filter answers exactly as one without: the filter
/// only skips searches for keys that were never added.
#[test]
fn a_key_filter_never_hides_an_entry() {
    let seed = 21;
    let mut rng = StdRng::seed_from_u64(seed);
    let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
    // A tiny filter, so that most absent keys still pass it.
    let filtered = MemTable::with_key_filter(icmp.clone(), 64);
    let plain = MemTable::new(icmp);
    // Smaller under Miri, which runs the memtable's unsafe code slowly.
    let (writes, keys) = if cfg!(miri) {
        (200u64, 300)
    } else {
        (2000, 3000)
    };
    for seq in 1..=writes {
        let key = format!("key{:05}", rng.gen_range(0..keys)).into_bytes();
        let (t, value) = if rng.gen_bool(0.2) {
            (ValueType::Deletion, Vec::new())
        } else {
            (ValueType::Value, format!("v{seq}").into_bytes())
        };
        filtered.add(seq, t, &key, &value);
        plain.add(seq, t, &key, &value);
    }
    for i in 0..keys + keys / 6 {
        let key = format!("key{i:05}").into_bytes();
        for seq in [1, writes / 3, writes * 3 / 4, writes, writes * 5 / 2] {
            assert_eq!(
                get(&filtered, &key, seq),
                get(&plain, &key, seq),
                "key {i} at {seq} (seed {seed})"
            );
        }
    }
}

#[test]
fn orders_that_are_not_bytewise_get_no_key_filter() {
    let icmp = InternalKeyComparator::new(Arc::new(ReverseComparator));
    let mem = MemTable::with_key_filter(icmp, 1 << 10);
    assert!(mem.filter.is_none());
    mem.add(1, ValueType::Value, b"k", b"v");
    assert_eq!(get(&mem, b"k", 1), MemGet::Value(b"v"));
}
