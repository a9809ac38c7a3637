//! Metamorphic model test: one random sequence of operations (puts,
//! deletes, batches, bulk loads, gets, seeks and walks in both directions,
//! snapshots and reads through them, `compact_range`, reopens, and
//! crash-reopens) is run against a `BTreeMap` model under several random
//! option sets that vary every option axis (write buffer, table and block
//! sizes at their real minimums and above, restart interval, compression,
//! filter, block cache none / tiny / small, `paranoid_checks`,
//! `reuse_logs`, `max_open_files`, `concurrent_memtable_writes`,
//! `blob_threshold`: off, every value, or values from 100 or 2000 bytes
//! in blob files; `blob_file_size` at its minimum, 1 MB or its default).
//! Every
//! read is checked against the model as it happens, and the reads'
//! observations of all option sets must be identical.
//!
//! A bulk load is a sorted run of keys, over keys the other operations
//! write or in a range of its own, sometimes empty; it is finished (through
//! a `BulkLoader` or `ingest_sorted`), finished after a write that makes it
//! rewrite its tables, given a key that goes back (refused alone by `add`,
//! or the whole load refused by `ingest_sorted`), or dropped unfinished.
//! What it installed must match the model, and the level statistics must
//! count its tables.
//!
//! A crash-reopen copies the files as they are (everything the engine has
//! handed to the file system, as after a process crash) to a new `MemFs`,
//! leaks the open database without closing it, and opens the copy: every
//! acknowledged write must be there.
//!
//! The seed is printed on failure; `SHALE_METAMORPHIC_SEED=<n>` replays one.
//! Long version:
//!
//! ```text
//! cargo test --release -p shale --test metamorphic -- --ignored --nocapture
//! ```

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale::env::{FileSystem, MemFs};
use shale::{
    BloomFilterPolicy, Cache, CompressionType, Db, Options, ReadOptions, Snapshot, WriteBatch,
};
use support::{Cursor, Move};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entry = Option<(Vec<u8>, Vec<u8>)>;

const DIR: &str = "/meta";

/// One operation of a sequence.
#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Get(Vec<u8>),
    /// Seek to the key (or first/last), then step: true next, false prev.
    Walk {
        snapshot: Option<usize>,
        start: Start,
        steps: Vec<bool>,
    },
    SnapshotGet(usize, Vec<u8>),
    TakeSnapshot,
    ReleaseSnapshot(usize),
    Compact(Option<Vec<u8>>, Option<Vec<u8>>),
    /// A bulk load of `entries`, whose keys increase, ended as `end` says.
    Load {
        entries: Run,
        end: LoadEnd,
    },
    Reopen,
    CrashReopen,
}

/// The entries of a bulk load; shown by their number and key range.
#[derive(Clone)]
struct Run(Vec<(Vec<u8>, Vec<u8>)>);

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = |e: Option<&(Vec<u8>, Vec<u8>)>| {
            e.map_or(String::new(), |(k, _)| k.escape_ascii().to_string())
        };
        write!(
            f,
            "{} entries, '{}' to '{}'",
            self.0.len(),
            key(self.0.first()),
            key(self.0.last())
        )
    }
}

/// How a bulk load ends.
#[derive(Clone, Debug)]
enum LoadEnd {
    /// Finished: through a `BulkLoader`, or `ingest_sorted` with `via_iter`.
    Finish { via_iter: bool },
    /// This put comes after half the entries are added: the load is newer
    /// still, and rewrites its tables under a newer sequence number.
    FinishAfterWrite(Vec<u8>, Vec<u8>),
    /// Before entry `at`, `add` is given an entry whose key is that of
    /// entry `back` (not after the one before it): refused, the loader
    /// goes on and finishes with the rest.
    Skip { at: usize, back: usize },
    /// `ingest_sorted` of the entries with that entry among them: the whole
    /// load is refused and nothing is installed.
    Refused { at: usize, back: usize },
    /// Dropped after `at` entries: nothing is installed.
    Dropped { at: usize },
}

#[derive(Clone, Debug)]
enum Start {
    First,
    Last,
    Seek(Vec<u8>),
}

/// What a read saw, recorded to compare option sets.
#[derive(Debug, PartialEq, Eq)]
enum Observation {
    Get(Option<Vec<u8>>),
    Walk(Vec<Entry>),
    /// The entries a bulk load installed, or its refusal.
    Load(Result<u64, String>),
}

fn key(rng: &mut StdRng) -> Vec<u8> {
    // Mostly a small key space (many overwrites), sometimes long keys.
    let n = rng.gen_range(0..600);
    if rng.gen_bool(0.02) {
        format!("k{n:04}{}", "x".repeat(rng.gen_range(100..2000))).into_bytes()
    } else {
        format!("k{n:04}").into_bytes()
    }
}

/// A key of the range bulk loads write most (after every `key`); loads
/// into it overlap one another, and a few writes go there too.
fn load_key(n: u32) -> Vec<u8> {
    format!("m{n:05}").into_bytes()
}

const LOAD_KEYS: u32 = 2000;

/// Mostly `key`, sometimes a key of the loads' range.
fn any_key(rng: &mut StdRng) -> Vec<u8> {
    if rng.gen_bool(0.1) {
        load_key(rng.gen_range(0..LOAD_KEYS))
    } else {
        key(rng)
    }
}

/// A run of entries with increasing keys: over the keys writes use, in a
/// range of the loads' own, or none.
fn sorted_run(rng: &mut StdRng) -> Vec<(Vec<u8>, Vec<u8>)> {
    let keys: Vec<Vec<u8>> = match rng.gen_range(0..10) {
        0 => Vec::new(),
        // A window of the keys writes use, some of them long.
        1..=5 => {
            let start = rng.gen_range(0..600);
            let width = rng.gen_range(1..150);
            let dense = rng.gen_range(0.2..1.0);
            let mut set = BTreeSet::new();
            for n in start..start + width {
                if rng.gen_bool(dense) {
                    let long = rng.gen_bool(0.02);
                    let tail = if long { rng.gen_range(100..2000) } else { 0 };
                    set.insert(format!("k{n:04}{}", "x".repeat(tail)).into_bytes());
                }
            }
            set.into_iter().collect()
        }
        6..=8 => {
            let (start, step) = (rng.gen_range(0..LOAD_KEYS), rng.gen_range(1..5));
            let n = rng.gen_range(1..200);
            (0..n).map(|i| load_key(start + i * step)).collect()
        }
        // Now and then large: 1 to 3 MB that does not compress, in few
        // entries; tables are cut at `max_file_size`.
        _ if rng.gen_bool(0.5) => {
            let start = rng.gen_range(0..LOAD_KEYS);
            let n = rng.gen_range(30..100);
            return (0..n)
                .map(|i| {
                    let len = rng.gen_range(20_000..40_000);
                    (load_key(start + i), noise(rng.gen(), len))
                })
                .collect();
        }
        _ => {
            let start = rng.gen_range(0..LOAD_KEYS);
            (0..rng.gen_range(1..50))
                .map(|i| load_key(start + i))
                .collect()
        }
    };
    keys.into_iter().map(|k| (k, load_value(rng))).collect()
}

/// `len` bytes that do not compress, from `seed`.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A value of a bulk load: smaller than `value`'s, as a load holds many.
fn load_value(rng: &mut StdRng) -> Vec<u8> {
    let len = if rng.gen_bool(0.01) {
        rng.gen_range(2000..20_000)
    } else {
        rng.gen_range(0..100)
    };
    vec![rng.gen(); len]
}

fn load(rng: &mut StdRng) -> Op {
    let entries = sorted_run(rng);
    let n = entries.len();
    let end = match rng.gen_range(0..10) {
        _ if n == 0 => LoadEnd::Finish {
            via_iter: rng.gen(),
        },
        0..=4 => LoadEnd::Finish {
            via_iter: rng.gen(),
        },
        5 => LoadEnd::FinishAfterWrite(key(rng), value(rng)),
        6 | 7 => {
            let at = rng.gen_range(1..=n);
            LoadEnd::Skip {
                at,
                back: rng.gen_range(0..at),
            }
        }
        8 => {
            let at = rng.gen_range(1..=n);
            LoadEnd::Refused {
                at,
                back: rng.gen_range(0..at),
            }
        }
        _ => LoadEnd::Dropped {
            at: rng.gen_range(0..=n),
        },
    };
    Op::Load {
        entries: Run(entries),
        end,
    }
}

fn value(rng: &mut StdRng) -> Vec<u8> {
    let len = if rng.gen_bool(0.03) {
        rng.gen_range(2000..40_000)
    } else {
        rng.gen_range(0..150)
    };
    let seed: u8 = rng.gen();
    (0..len)
        .map(|i| seed.wrapping_add((i % 97) as u8))
        .collect()
}

/// A random sequence of `steps` operations.
fn operations(rng: &mut StdRng, steps: usize) -> Vec<Op> {
    (0..steps)
        .map(|_| match rng.gen_range(0..104) {
            0..=39 => Op::Put(any_key(rng), value(rng)),
            40..=51 => Op::Delete(any_key(rng)),
            52..=59 => Op::Batch(
                (0..rng.gen_range(1..30))
                    .map(|_| (any_key(rng), rng.gen_bool(0.7).then(|| value(rng))))
                    .collect(),
            ),
            60..=69 => Op::Get(any_key(rng)),
            70..=79 => Op::Walk {
                snapshot: rng.gen_bool(0.3).then(|| rng.gen_range(0..3)),
                start: match rng.gen_range(0..4) {
                    0 => Start::First,
                    1 => Start::Last,
                    _ => Start::Seek(any_key(rng)),
                },
                steps: (0..rng.gen_range(0..30))
                    .map(|_| rng.gen_bool(0.6))
                    .collect(),
            },
            80..=84 => Op::SnapshotGet(rng.gen_range(0..3), any_key(rng)),
            85..=88 => Op::TakeSnapshot,
            89..=90 => Op::ReleaseSnapshot(rng.gen_range(0..3)),
            91..=94 => {
                let (a, b) = (key(rng), key(rng));
                let (a, b) = if a <= b { (a, b) } else { (b, a) };
                Op::Compact(
                    rng.gen_bool(0.8).then_some(a),
                    rng.gen_bool(0.8).then_some(b),
                )
            }
            95..=97 => Op::Reopen,
            98 | 99 => Op::CrashReopen,
            _ => load(rng),
        })
        .collect()
}

/// A random option set; every axis varies, sizes include their minimums.
fn random_options(rng: &mut StdRng, fs: &MemFs) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        write_buffer_size: [64 << 10, 100 << 10, 1 << 20][rng.gen_range(0..3)],
        max_file_size: [1 << 20, 2 << 20][rng.gen_range(0..2)],
        block_size: [1 << 10, 4 << 10, 32 << 10][rng.gen_range(0..3)],
        block_restart_interval: [1, 2, 16, 64][rng.gen_range(0..4)],
        compression: if rng.gen() {
            CompressionType::None
        } else {
            CompressionType::Snappy
        },
        filter_policy: match rng.gen_range(0..3) {
            0 => None,
            1 => Some(Arc::new(BloomFilterPolicy::new(1))),
            _ => Some(Arc::new(BloomFilterPolicy::new(10))),
        },
        block_cache: match rng.gen_range(0..3) {
            0 => None,
            1 => Some(Cache::new(1)),
            _ => Some(Cache::new(64 << 10)),
        },
        paranoid_checks: rng.gen(),
        reuse_logs: rng.gen(),
        max_open_files: [74, 1000][rng.gen_range(0..2)],
        concurrent_memtable_writes: rng.gen(),
        blob_threshold: [None, None, Some(0), Some(100), Some(2000)][rng.gen_range(0..5)],
        blob_file_size: [64 << 10, 1 << 20, 256 << 20][rng.gen_range(0..3)],
        split_flushes: rng.gen(),
        ..Default::default()
    }
}

/// The model's answer to a walk (the cursor does not move once invalid).
fn model_walk(model: &Model, start: &Start, steps: &[bool]) -> Vec<Entry> {
    use std::ops::Bound::{Excluded, Unbounded};
    let entry = |k: Option<&Vec<u8>>| k.map(|k| (k.clone(), model[k].clone()));
    let mut pos = match start {
        Start::First => entry(model.keys().next()),
        Start::Last => entry(model.keys().next_back()),
        Start::Seek(k) => entry(model.range(k.clone()..).next().map(|(k, _)| k)),
    };
    let mut out = vec![pos.clone()];
    for &forward in steps {
        if let Some((k, _)) = &pos {
            pos = if forward {
                entry(
                    model
                        .range::<Vec<u8>, _>((Excluded(k.clone()), Unbounded))
                        .next()
                        .map(|(k, _)| k),
                )
            } else {
                entry(
                    model
                        .range::<Vec<u8>, _>(..k.clone())
                        .next_back()
                        .map(|(k, _)| k),
                )
            };
        }
        out.push(pos.clone());
    }
    out
}

fn db_walk(db: &Db, snap: Option<&Snapshot>, start: &Start, steps: &[bool]) -> Vec<Entry> {
    let opts = ReadOptions {
        snapshot: snap,
        ..Default::default()
    };
    let mut c = Cursor::new(db, &opts);
    let mut out = vec![c.step(match start {
        Start::First => Move::First,
        Start::Last => Move::Last,
        Start::Seek(k) => Move::Seek(k),
    })];
    for &forward in steps {
        out.push(c.step(if forward { Move::Next } else { Move::Prev }));
    }
    c.status().unwrap();
    out
}

/// Copies every file of `dir` in `from` to a new file system, as a process
/// crash leaves them. The copy is retried until CURRENT and the MANIFEST
/// are the same before and after it, so that it holds one version's files
/// even while the background thread works.
fn crash_copy(from: &MemFs) -> MemFs {
    let dir = Path::new(DIR);
    let read = |name: &str| -> Option<Vec<u8>> {
        let mut f = from.new_sequential_file(&dir.join(name)).ok()?;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match f.read(&mut buf).ok()? {
                0 => return Some(out),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    };
    let descriptor = || {
        let current = read("CURRENT").unwrap_or_default();
        let manifest = read(String::from_utf8_lossy(&current).trim_end());
        (current, manifest)
    };
    loop {
        let before = descriptor();
        let to = MemFs::new();
        to.create_dir_all(dir).unwrap();
        for name in from.children(dir).unwrap() {
            if name == "LOCK" {
                continue;
            }
            if let Some(data) = read(&name) {
                let mut f = to.new_writable_file(&dir.join(&name)).unwrap();
                f.append(&data).unwrap();
                f.close().unwrap();
            }
        }
        if descriptor() == before {
            return to;
        }
    }
}

/// Runs `ops` under `opts`, checking every read against the model, and
/// returns what the reads observed.
fn run(ops: &[Op], mut opts: Options, fs: MemFs, context: &str) -> Vec<Observation> {
    let mut fs = fs;
    let mut db = Some(Db::open(DIR, opts.clone()).unwrap());
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
    let mut seen = Vec::new();
    for (step, op) in ops.iter().enumerate() {
        let d = db.as_ref().unwrap();
        let at = || format!("step {step} ({op:?}), {context}");
        match op {
            Op::Put(k, v) => {
                d.put(k, v).unwrap();
                model.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                d.delete(k).unwrap();
                model.remove(k);
            }
            Op::Batch(updates) => {
                let mut b = WriteBatch::new();
                for (k, v) in updates {
                    match v {
                        Some(v) => {
                            b.put(k, v).unwrap();
                            model.insert(k.clone(), v.clone());
                        }
                        None => {
                            b.delete(k).unwrap();
                            model.remove(k);
                        }
                    }
                }
                d.write(&Default::default(), &b).unwrap();
            }
            Op::Get(k) => {
                let got = d.get(k).unwrap();
                assert!(
                    got == model.get(k).cloned(),
                    "get differs from the model at {}",
                    at()
                );
                seen.push(Observation::Get(got));
            }
            Op::SnapshotGet(i, k) => {
                if let Some((s, m)) = snapshots.get(*i) {
                    let r = ReadOptions {
                        snapshot: Some(s),
                        ..Default::default()
                    };
                    let got = d.get_with(&r, k).unwrap();
                    assert!(got == m.get(k).cloned(), "snapshot get differs at {}", at());
                    seen.push(Observation::Get(got));
                }
            }
            Op::Walk {
                snapshot,
                start,
                steps,
            } => {
                let (snap, m) = match snapshot.and_then(|i| snapshots.get(i)) {
                    Some((s, m)) => (Some(s), m),
                    None => (None, &model),
                };
                let got = db_walk(d, snap, start, steps);
                assert!(
                    got == model_walk(m, start, steps),
                    "walk differs from the model at {}",
                    at()
                );
                seen.push(Observation::Walk(got));
            }
            Op::TakeSnapshot => {
                if snapshots.len() < 3 {
                    snapshots.push((d.snapshot(), model.clone()));
                }
            }
            Op::ReleaseSnapshot(i) => {
                if *i < snapshots.len() {
                    snapshots.remove(*i);
                }
            }
            Op::Compact(a, b) => d.compact_range(a.as_deref(), b.as_deref()).unwrap(),
            Op::Load { entries, end } => {
                let outcome = bulk_load(d, &entries.0, end, &mut model)
                    .unwrap_or_else(|e| panic!("{e} at {}", at()));
                seen.push(Observation::Load(outcome));
            }
            Op::Reopen => {
                snapshots.clear();
                // The old handle is closed (and its lock released) first.
                drop(db.take());
                db = Some(
                    Db::open(DIR, opts.clone())
                        .unwrap_or_else(|e| panic!("reopen: {e} at {}", at())),
                );
            }
            Op::CrashReopen => {
                snapshots.clear();
                let copy = crash_copy(&fs);
                // The crashed process never closes its database: the copy
                // was taken from it while open. Closing the old handle now
                // touches only the old file system, and frees its thread
                // and memory (forgetting it would leak them, and thousands
                // of crash reopens exhaust the process).
                drop(db.take());
                fs = copy;
                opts.fs = Arc::new(fs.clone());
                db = Some(
                    Db::open(DIR, opts.clone())
                        .unwrap_or_else(|e| panic!("crash reopen: {e} at {}", at())),
                );
            }
        }
    }
    let d = db.as_ref().unwrap();
    let all = support::contents(d, &ReadOptions::default()).unwrap();
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    assert!(
        all == expected,
        "final contents differ from the model, {context}"
    );
    seen
}

/// Ingested files and bytes the database counts, over its levels.
fn ingested(db: &Db) -> (u64, u64) {
    db.stats().levels.iter().fold((0, 0), |(f, b), l| {
        (f + l.ingested_files, b + l.ingested_bytes)
    })
}

/// Runs a bulk load on `db` and `model`; returns the entries it installed
/// or the refusal (an error message on anything unexpected).
fn bulk_load(
    db: &Db,
    entries: &[(Vec<u8>, Vec<u8>)],
    end: &LoadEnd,
    model: &mut Model,
) -> Result<Result<u64, String>, String> {
    let stats_before = ingested(db);
    let last_sequence = db.stats().last_sequence;
    let mut loader = db.bulk_loader().map_err(|e| e.to_string())?;
    let add = |loader: &mut shale::BulkLoader<'_>, (k, v): &(Vec<u8>, Vec<u8>)| {
        loader.add(k, v).map_err(|e| format!("add: {e}"))
    };
    let done = match end {
        LoadEnd::Finish { via_iter: true } => {
            drop(loader);
            db.ingest_sorted(entries.iter().map(|(k, v)| (k, v)))
        }
        LoadEnd::Finish { via_iter: false } => {
            for e in entries {
                add(&mut loader, e)?;
            }
            loader.finish()
        }
        LoadEnd::FinishAfterWrite(k, v) => {
            let half = entries.len() / 2;
            for e in &entries[..half] {
                add(&mut loader, e)?;
            }
            db.put(k, v).map_err(|e| e.to_string())?;
            model.insert(k.clone(), v.clone());
            for e in &entries[half..] {
                add(&mut loader, e)?;
            }
            loader.finish()
        }
        LoadEnd::Skip { at, back } => {
            for (i, e) in entries.iter().enumerate() {
                if i == *at {
                    break;
                }
                add(&mut loader, e)?;
            }
            let refused = loader.add(&entries[*back].0, b"refused");
            if !matches!(refused, Err(shale::Error::InvalidArgument(_))) {
                return Err(format!("a key going back was not refused: {refused:?}"));
            }
            for e in &entries[*at..] {
                add(&mut loader, e)?;
            }
            loader.finish()
        }
        LoadEnd::Refused { at, back } => {
            drop(loader);
            let bad = (entries[*back].0.clone(), b"refused".to_vec());
            let mut with_bad = entries.to_vec();
            with_bad.insert(*at, bad);
            match db.ingest_sorted(with_bad) {
                Err(shale::Error::InvalidArgument(why)) => {
                    let entry = format!("entry {}", at + 1);
                    if !why.contains(&entry) {
                        return Err(format!("the refusal does not name {entry}: {why}"));
                    }
                    if ingested(db) != stats_before || db.stats().last_sequence != last_sequence {
                        return Err("a refused load changed the database".to_string());
                    }
                    return Ok(Err(format!("refused at {entry}")));
                }
                other => return Err(format!("an unsorted load was not refused: {other:?}")),
            }
        }
        LoadEnd::Dropped { at } => {
            for e in &entries[..*at] {
                add(&mut loader, e)?;
            }
            drop(loader);
            if ingested(db) != stats_before || db.stats().last_sequence != last_sequence {
                return Err("a dropped loader changed the database".to_string());
            }
            return Ok(Ok(0));
        }
    };
    let done = done.map_err(|e| format!("finish: {e}"))?;
    let n = entries.len() as u64;
    if done.entries != n {
        return Err(format!("{} entries installed of {n}", done.entries));
    }
    let rewritten = matches!(end, LoadEnd::FinishAfterWrite(..)) && n > 0;
    if done.rewritten != rewritten {
        return Err(format!(
            "rewritten: {}, expected {rewritten}",
            done.rewritten
        ));
    }
    let (files, bytes) = ingested(db);
    let table_bytes: u64 = done.tables.iter().map(|t| t.bytes).sum();
    if (files - stats_before.0, bytes - stats_before.1) != (done.tables.len() as u64, table_bytes) {
        return Err(format!("the level statistics miss tables: {done:?}"));
    }
    if n > 0 && db.stats().last_sequence != done.sequence {
        return Err(format!(
            "last sequence {} after installing at {}",
            db.stats().last_sequence,
            done.sequence
        ));
    }
    model.extend(entries.iter().cloned());
    Ok(Ok(n))
}

/// Runs one seed's sequence under `option_sets` random option sets and
/// compares their observations.
fn check_seed(seed: u64, steps: usize, option_sets: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let ops = operations(&mut rng, steps);
    let mut first: Option<(String, Vec<Observation>)> = None;
    for set in 0..option_sets {
        let fs = MemFs::new();
        let opts = random_options(&mut rng, &fs);
        let context = format!("seed {seed}, option set {set}: {opts:?}");
        let seen = run(&ops, opts, fs, &context);
        match &first {
            None => first = Some((context, seen)),
            Some((c0, s0)) => {
                if let Some(i) = s0.iter().zip(&seen).position(|(a, b)| a != b) {
                    panic!("observation {i} differs between {c0} and {context}");
                }
                assert_eq!(s0.len(), seen.len(), "{c0} vs {context}");
            }
        }
    }
}

fn seeds(default: std::ops::Range<u64>, steps: usize, option_sets: usize) {
    let seeds: Vec<u64> = match std::env::var("SHALE_METAMORPHIC_SEED") {
        Ok(s) => vec![s.parse().expect("SHALE_METAMORPHIC_SEED must be a number")],
        Err(_) => default.collect(),
    };
    for seed in seeds {
        let r = std::panic::catch_unwind(|| check_seed(seed, steps, option_sets));
        if let Err(e) = r {
            eprintln!(
                "metamorphic test failed with seed {seed} (replay: SHALE_METAMORPHIC_SEED={seed})"
            );
            std::panic::resume_unwind(e);
        }
    }
}

#[test]
fn one_sequence_many_option_sets() {
    seeds(1..4, 700, 3);
}

#[test]
#[ignore = "long: cargo test --release -p shale --test metamorphic -- --ignored --nocapture"]
fn one_sequence_many_option_sets_long() {
    seeds(100..120, 20_000, 5);
}
