//! Every engine's iterator, as the benchmarks drive it: the same entries in
//! both directions, seeks, turns, and `valid()` false past either end.
//! Adapters may keep what they know of the position between calls (the C
//! API adapters ask the library whether the iterator is valid once per
//! move); this checks that every move updates it.

use shale_bench::engine::{EngineIter, EngineKind};
use shale_bench::engines;
use shale_bench::flags::Flags;
use shale_bench::runner::available_engines;

const N: usize = 100;

fn key(i: usize) -> String {
    format!("key{i:04}")
}

fn value(i: usize) -> String {
    format!("value of {i}")
}

/// The entry the iterator is on.
fn entry(it: &dyn EngineIter) -> Option<(String, String)> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    it.valid().then(|| (text(it.key()), text(it.value())))
}

fn check(kind: EngineKind) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = shale_bench::engine::EngineConfig::from_flags(&Flags::default(), dir.path().into());
    let engine = engines::open(kind, &cfg).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
    let mut session = engine.session().expect("session");
    // Written out of order; every other key is absent.
    for i in (0..N).rev().filter(|i| i % 2 == 0) {
        session
            .put(key(i).as_bytes(), value(i).as_bytes(), false)
            .expect("put");
    }
    let want: Vec<(String, String)> = (0..N)
        .filter(|i| i % 2 == 0)
        .map(|i| (key(i), value(i)))
        .collect();
    let mut it = session.iter().expect("iter");
    let name = kind.name();

    it.seek_to_first();
    let mut forward = Vec::new();
    // Bounded, so that an iterator that never ends fails the test.
    while let Some(e) = entry(&*it).filter(|_| forward.len() <= N) {
        forward.push(e);
        it.next();
    }
    assert_eq!(forward, want, "{name}: forward");
    assert!(!it.valid(), "{name}: past the last entry");

    it.seek_to_last();
    let mut backward = Vec::new();
    while let Some(e) = entry(&*it).filter(|_| backward.len() <= N) {
        backward.push(e);
        it.prev();
    }
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(backward, reversed, "{name}: backward");
    assert!(!it.valid(), "{name}: before the first entry");

    // From invalid, each positioning call makes it valid again.
    it.seek(key(50).as_bytes());
    assert_eq!(entry(&*it), Some((key(50), value(50))), "{name}: seek");
    it.seek(key(51).as_bytes());
    assert_eq!(
        entry(&*it),
        Some((key(52), value(52))),
        "{name}: seek between"
    );
    it.prev();
    assert_eq!(entry(&*it), Some((key(50), value(50))), "{name}: turn back");
    it.next();
    assert_eq!(
        entry(&*it),
        Some((key(52), value(52))),
        "{name}: turn forward"
    );
    it.seek(b"z");
    assert!(!it.valid(), "{name}: seek past the end");
    it.seek_to_last();
    assert_eq!(entry(&*it), Some((key(98), value(98))), "{name}: last");
    it.next();
    assert!(!it.valid(), "{name}: next from the last");
    it.seek_to_first();
    assert_eq!(entry(&*it), Some((key(0), value(0))), "{name}: first");
    it.prev();
    assert!(!it.valid(), "{name}: prev from the first");
    it.status().expect("status");
}

#[test]
fn every_engine_iterates_both_ways_and_seeks() {
    let engines = available_engines();
    assert!(engines.contains(&EngineKind::Shale));
    for kind in engines {
        eprintln!("{}", kind.name());
        check(kind);
    }
}
