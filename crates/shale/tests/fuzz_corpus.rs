//! The fuzz targets on stable: every committed corpus file under
//! `fuzz/corpus/<target>/` and a few thousand deterministic mutations of
//! them go through the same functions the libFuzzer harness calls
//! (`shale::fuzzing`). A panic in a target is a bug in a decoder; the test
//! names the input and saves it under the target directory to reproduce.
//!
//! The seed corpus itself is made from valid files by [`seeds`]; regenerate
//! it with `cargo test -p shale --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use shale::env::{read_file, FileSystem, MemFs};
use shale::internals::fuzzing::{compressed_block_input, db_input, TARGETS};
use shale::internals::{
    BlockBuilder, FilterBlockBuilder, InternalIterator, InternalKey, InternalKeyComparator,
    KeyHashes, LogWriter, Table, TableBuilder, TableOptions, ValueType, VersionEdit,
    WholeFilterBuilder,
};
use shale::{
    BloomFilterPolicy, BytewiseComparator, Comparator, CompressionType, Db, FilterPolicy, Options,
};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

/// Mutated inputs per corpus file, by target: the database target opens a
/// whole database per input, the others are cheap.
fn mutations_per_file(target: &str) -> usize {
    match target {
        "db" => 150,
        "table" | "log_reader" => 400,
        _ => 1000,
    }
}

/// Runs `input` through `target`; on a panic, saves the input and fails with
/// a description of where it came from.
fn run(target: &str, f: fn(&[u8]), input: &[u8], what: &dyn Fn() -> String) {
    if catch_unwind(AssertUnwindSafe(|| f(input))).is_err() {
        let out = std::env::temp_dir().join(format!("shale-fuzz-{target}-failure"));
        let _ = std::fs::write(&out, input);
        panic!(
            "fuzz target {target} panicked on {} (input saved to {})",
            what(),
            out.display()
        );
    }
}

/// One to four random edits of `input`, of the kinds libFuzzer makes.
fn mutate(rng: &mut StdRng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..rng.gen_range(1..=4) {
        let len = v.len();
        match rng.gen_range(0..8) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] = [0, 0x7f, 0x80, 0xff, rng.gen()][rng.gen_range(0..5)];
            }
            2 if len > 0 => v.truncate(rng.gen_range(0..len)),
            3 => {
                let i = rng.gen_range(0..=len);
                let n = rng.gen_range(1..=16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                v.splice(i..i, bytes);
            }
            4 if len > 0 => {
                let i = rng.gen_range(0..len);
                let n = rng.gen_range(1..=(len - i).min(64));
                v.drain(i..i + n);
            }
            5 if len > 0 => {
                // Copy a slice elsewhere (libFuzzer's CopyPart).
                let from = rng.gen_range(0..len);
                let n = rng.gen_range(1..=(len - from).min(32));
                let part = v[from..from + n].to_vec();
                let to = rng.gen_range(0..=len);
                v.splice(to..to, part);
            }
            6 if len >= 4 => {
                // A little-endian 32-bit field set to an interesting value.
                let i = rng.gen_range(0..=len - 4);
                let x: u32 = [0, 1, 0x7fff_ffff, 0xffff_ffff, rng.gen()][rng.gen_range(0..5)];
                v[i..i + 4].copy_from_slice(&x.to_le_bytes());
            }
            _ if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] = v[i].wrapping_add(rng.gen_range(1..=3));
            }
            _ => v.push(rng.gen()),
        }
    }
    v
}

/// The inputs of `target`'s corpus directory, sorted by name.
fn committed(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir().join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus directory {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("corpus directory entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let data = std::fs::read(&path).expect("read corpus file");
            (name, data)
        })
        .collect();
    out.sort();
    out
}

fn replay(target: &str) {
    let f = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|&(_, f)| f)
        .expect("a target of that name");
    let mut inputs = committed(target);
    assert!(!inputs.is_empty(), "no corpus for target {target}");
    // The freshly made seeds too, so a change of format is caught before
    // the committed corpus is regenerated.
    inputs.extend(
        seeds()
            .into_iter()
            .filter(|(t, _, _)| *t == target)
            .map(|(_, name, data)| (format!("fresh {name}"), data)),
    );
    let n = mutations_per_file(target);
    for (i, (name, data)) in inputs.iter().enumerate() {
        run(target, f, data, &|| format!("corpus file {name}"));
        let seed = 0x5eed_0000 + i as u64;
        let mut rng = StdRng::seed_from_u64(seed);
        for m in 0..n {
            let input = mutate(&mut rng, data);
            run(target, f, &input, &|| {
                format!("mutation {m} of {name} (rng seed {seed:#x})")
            });
        }
    }
}

#[test]
fn blob_record_corpus() {
    replay("blob_record");
}

#[test]
fn log_reader_corpus() {
    replay("log_reader");
}

#[test]
fn write_batch_corpus() {
    replay("write_batch");
}

#[test]
fn block_corpus() {
    replay("block");
}

#[test]
fn compressed_block_corpus() {
    replay("compressed_block");
}

#[test]
fn table_corpus() {
    replay("table");
}

#[test]
fn version_edit_corpus() {
    replay("version_edit");
}

#[test]
fn filter_corpus() {
    replay("filter");
}

#[test]
fn coding_corpus() {
    replay("coding");
}

#[test]
fn db_corpus() {
    replay("db");
}

#[test]
fn every_target_has_a_test_and_seeds() {
    let seeds = seeds();
    for (name, _) in TARGETS {
        assert!(
            seeds.iter().any(|(t, _, _)| t == name),
            "no seeds for target {name}"
        );
    }
    assert_eq!(TARGETS.len(), 10, "a new target needs a replay test here");
}

#[test]
fn checksum_fixups_make_damaged_files_pass_their_checks() {
    let table = table_seeds().swap_remove(1).2; // uncompressed, with a filter
    let mut damaged = table.clone();
    damaged[40] ^= 0x10; // inside the first data block
    let open_and_scan = |bytes: &[u8]| -> shale::Result<usize> {
        let fs = MemFs::new();
        let path = Path::new("/t.ldb");
        shale::env::write_file_sync(&fs, path, bytes)?;
        let t = Table::open(
            TableOptions::new(icmp()),
            fs.new_random_access_file(path)?,
            path.into(),
            bytes.len() as u64,
        )?;
        let mut it = t.iter(true, false);
        let mut n = 0;
        it.seek_to_first();
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().map(|()| n)
    };
    assert_eq!(open_and_scan(&table).unwrap(), 60);
    assert!(open_and_scan(&damaged).unwrap_err().is_corruption());
    shale::internals::fuzzing::fix_table_checksums(&mut damaged);
    assert_eq!(open_and_scan(&damaged).unwrap(), 60);

    let log = log_seeds().swap_remove(0).2;
    let mut damaged = log.clone();
    damaged[10] ^= 1; // inside the first record's payload
    shale::internals::fuzzing::fix_log_checksums(&mut damaged);
    assert_ne!(damaged, log);
    let mut fixed_again = damaged.clone();
    shale::internals::fuzzing::fix_log_checksums(&mut fixed_again);
    assert_eq!(fixed_again, damaged, "fixing is idempotent");
    let mut original = log.clone();
    shale::internals::fuzzing::fix_log_checksums(&mut original);
    assert_eq!(original, log, "a sound log is left as it is");
}

/// Writes the seed corpus into `fuzz/corpus/<target>/seed-<name>`.
#[test]
#[ignore = "regenerates the committed seed corpus"]
fn write_seed_corpus() {
    for (target, name, data) in seeds() {
        let dir = corpus_dir().join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{name}")), data).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Seeds: small valid files of every kind.

type Seed = (&'static str, String, Vec<u8>);

fn seeds() -> Vec<Seed> {
    let mut out = Vec::new();
    out.extend(log_seeds());
    out.extend(blob_seeds());
    out.extend(batch_seeds());
    out.extend(block_seeds());
    out.extend(compressed_block_seeds());
    out.extend(table_seeds());
    out.extend(edit_seeds());
    out.extend(filter_seeds());
    out.extend(coding_seeds());
    out.extend(db_seeds());
    out
}

fn icmp() -> Arc<dyn Comparator> {
    Arc::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)))
}

fn ikey(user: &[u8], seq: u64, t: ValueType) -> Vec<u8> {
    InternalKey::new(user, seq, t).encoded().to_vec()
}

/// A write batch in LevelDB's encoding: sequence, count, then the updates.
fn batch(seq: u64, ops: &[(&[u8], Option<&[u8]>)]) -> Vec<u8> {
    fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
        let mut n = b.len() as u32;
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(b);
    }
    let mut out = seq.to_le_bytes().to_vec();
    out.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    for (key, value) in ops {
        match value {
            Some(v) => {
                out.push(1);
                put_bytes(&mut out, key);
                put_bytes(&mut out, v);
            }
            None => {
                out.push(0);
                put_bytes(&mut out, key);
            }
        }
    }
    out
}

fn log_file(records: &[Vec<u8>]) -> Vec<u8> {
    let fs = MemFs::new();
    let path = Path::new("/seed.log");
    let mut w = LogWriter::new(fs.new_writable_file(path).unwrap());
    for r in records {
        w.add_record(r).unwrap();
    }
    w.close().unwrap();
    read_file(&fs, path).unwrap()
}

/// A blob file: its header, then one record (`crc | key_len | value_len | key | value`).
fn blob_file(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = shale::internals::blob_file_header().to_vec();
    let mut record = Vec::new();
    shale::internals::blob_record_prefix(key, value, &mut record);
    record.extend_from_slice(key);
    record.extend_from_slice(value);
    out.extend_from_slice(&record);
    out
}

fn blob_seeds() -> Vec<Seed> {
    vec![
        ("blob_record", "small".into(), blob_file(b"key", b"value")),
        (
            "blob_record",
            "empty-key".into(),
            blob_file(b"", &[0x5a; 200]),
        ),
    ]
}

fn log_seeds() -> Vec<Seed> {
    let mut edit = VersionEdit::new();
    edit.set_comparator_name("leveldb.BytewiseComparator");
    edit.set_log_number(3);
    edit.set_next_file_number(5);
    edit.set_last_sequence(9);
    let mut edit_bytes = Vec::new();
    edit.encode(&mut edit_bytes);
    let small = vec![
        batch(1, &[(b"a", Some(b"1")), (b"b", None)]),
        Vec::new(),
        edit_bytes,
        b"x".repeat(100),
    ];
    // One record spanning two blocks (FIRST, LAST) between two small ones.
    let spanning = vec![
        batch(1, &[(b"k", Some(b"v"))]),
        b"y".repeat(33_000),
        batch(2, &[(b"k", None)]),
    ];
    vec![
        ("log_reader", "records".into(), log_file(&small)),
        ("log_reader", "spanning-blocks".into(), log_file(&spanning)),
    ]
}

fn batch_seeds() -> Vec<Seed> {
    vec![
        (
            "write_batch",
            "puts-and-deletes".into(),
            batch(
                100,
                &[
                    (b"foo", Some(b"bar")),
                    (b"box", None),
                    (b"baz", Some(b"boo")),
                ],
            ),
        ),
        ("write_batch", "empty".into(), batch(7, &[])),
        (
            "write_batch",
            "long-value".into(),
            batch(1, &[(b"key", Some(&[0x55; 300]))]),
        ),
    ]
}

fn block_bytes(restart_interval: usize, entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut b = BlockBuilder::new(restart_interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    b.finish().to_vec()
}

fn block_seeds() -> Vec<Seed> {
    let plain: Vec<(Vec<u8>, Vec<u8>)> = (0..24)
        .map(|i| {
            (
                format!("key{i:03}").into_bytes(),
                format!("v{i}").into_bytes(),
            )
        })
        .collect();
    let internal: Vec<(Vec<u8>, Vec<u8>)> = (0..12)
        .flat_map(|i| {
            let user = format!("user{i:02}").into_bytes();
            [
                (ikey(&user, 20 + i, ValueType::Value), b"value".to_vec()),
                (ikey(&user, 10 + i, ValueType::Deletion), Vec::new()),
            ]
        })
        .collect();
    vec![
        ("block", "restart-1".into(), block_bytes(1, &plain)),
        ("block", "restart-4".into(), block_bytes(4, &plain)),
        ("block", "internal-keys".into(), block_bytes(16, &internal)),
        ("block", "empty".into(), block_bytes(16, &[])),
    ]
}

/// The internal-key block of [`block_seeds`] stored with every codec.
fn compressed_block_seeds() -> Vec<Seed> {
    let contents = block_seeds().swap_remove(2).2;
    CompressionType::ALL
        .into_iter()
        .map(|t| {
            (
                "compressed_block",
                t.name().to_string(),
                compressed_block_input(t, &contents),
            )
        })
        .collect()
}

fn table_bytes(opts: TableOptions, entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let fs = MemFs::new();
    let path = Path::new("/seed.ldb");
    let mut b = TableBuilder::new(opts, fs.new_writable_file(path).unwrap());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap();
    read_file(&fs, path).unwrap()
}

fn table_seeds() -> Vec<Seed> {
    let internal: Vec<(Vec<u8>, Vec<u8>)> = (0..60u64)
        .map(|i| {
            let t = if i % 7 == 3 {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            (
                ikey(format!("key{:04}", i * 3).as_bytes(), 1000 - i, t),
                format!("value-{i}-{}", "z".repeat(i as usize % 13)).into_bytes(),
            )
        })
        .collect();
    let mut db_like = TableOptions::new(icmp());
    db_like.filter_policy = Some(Arc::new(BloomFilterPolicy::new(10)));
    db_like.block_size = 256;
    db_like.block_restart_interval = 4;
    let mut whole = db_like.clone();
    whole.whole_table_filter = true;
    let mut uncompressed = db_like.clone();
    uncompressed.compression = CompressionType::None;
    let mut zstd = db_like.clone();
    zstd.compression = CompressionType::Zstd;
    let mut lz4 = plain_options();
    lz4.compression = CompressionType::Lz4;
    let plain = plain_options();
    let plain_entries: Vec<(Vec<u8>, Vec<u8>)> = (0..30)
        .map(|i| {
            (
                format!("k{i:02}").into_bytes(),
                vec![b'a' + i as u8 % 26; 9],
            )
        })
        .collect();
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sstable/testdata");
    vec![
        (
            "table",
            "snappy-bloom".into(),
            table_bytes(db_like, &internal),
        ),
        (
            "table",
            "uncompressed-bloom".into(),
            table_bytes(uncompressed, &internal),
        ),
        (
            "table",
            "snappy-whole-filter".into(),
            table_bytes(whole, &internal),
        ),
        (
            "table",
            "bytewise-plain".into(),
            table_bytes(plain, &plain_entries),
        ),
        ("table", "zstd-bloom".into(), table_bytes(zstd, &internal)),
        (
            "table",
            "lz4-plain".into(),
            table_bytes(lz4, &plain_entries),
        ),
        (
            "table",
            "leveldb-1.23-snappy".into(),
            std::fs::read(testdata.join("leveldb_1_23_snappy.ldb")).unwrap(),
        ),
    ]
}

/// Bytewise order, 128-byte blocks, no filter, no compression.
fn plain_options() -> TableOptions {
    let mut plain = TableOptions::new(Arc::new(BytewiseComparator));
    plain.compression = CompressionType::None;
    plain.block_size = 128;
    plain
}

fn edit_seeds() -> Vec<Seed> {
    let mut full = VersionEdit::new();
    full.set_comparator_name("leveldb.BytewiseComparator");
    full.set_log_number(12);
    full.set_prev_log_number(0);
    full.set_next_file_number(15);
    full.set_last_sequence(1234);
    full.set_compact_pointer(1, InternalKey::new(b"m", 77, ValueType::Value));
    full.remove_file(2, 9);
    full.add_file(
        0,
        14,
        4096,
        InternalKey::new(b"a", 100, ValueType::Value),
        InternalKey::new(b"z", 90, ValueType::Deletion),
    );
    full.add_file(
        3,
        13,
        1 << 20,
        InternalKey::new(b"b", 5, ValueType::Value),
        InternalKey::new(b"c", 4, ValueType::Value),
    );
    let mut counters = VersionEdit::new();
    counters.set_log_number(3);
    counters.set_next_file_number(4);
    counters.set_last_sequence(u64::MAX >> 8);
    let mut out = Vec::new();
    for (name, edit) in [("every-field", full), ("counters", counters)] {
        let mut bytes = Vec::new();
        edit.encode(&mut bytes);
        out.push(("version_edit", name.to_string(), bytes));
    }
    out
}

fn filter_seeds() -> Vec<Seed> {
    let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
    let mut b = FilterBlockBuilder::new(policy.clone());
    b.start_block(100);
    b.add_key(b"foo");
    b.add_key(b"bar");
    b.start_block(3000);
    b.add_key(b"box");
    b.start_block(9000);
    b.add_key(b"hello");
    let block = b.finish().to_vec();
    let mut bloom = Vec::new();
    let keys: Vec<&[u8]> = vec![b"apple", b"banana", b"cherry"];
    policy.create_filter(&keys, &mut bloom);
    let mut whole = WholeFilterBuilder::new();
    for key in &keys {
        whole.add(KeyHashes::of(key));
    }
    vec![
        ("filter", "filter-block".into(), block),
        ("filter", "bloom".into(), bloom),
        ("filter", "whole-filter".into(), whole.finish(10)),
    ]
}

fn coding_seeds() -> Vec<Seed> {
    let mut varints = Vec::new();
    for v in [0u64, 1, 127, 128, 300, 1 << 31, u32::MAX as u64, u64::MAX] {
        let mut x = v;
        while x >= 0x80 {
            varints.push(x as u8 | 0x80);
            x >>= 7;
        }
        varints.push(x as u8);
    }
    let mut keys = ikey(b"abc", 5, ValueType::Value);
    keys.extend(ikey(b"abd", 6, ValueType::Deletion));
    vec![
        ("coding", "varints".into(), varints),
        ("coding", "internal-keys".into(), keys),
        ("coding", "file-name".into(), b"MANIFEST-000002".to_vec()),
    ]
}

/// The files of a database made on the in-memory file system: writes, a
/// compaction into a table, then more writes left in the log.
fn db_files(options: &Options) -> Vec<(String, Vec<u8>)> {
    let fs = MemFs::new();
    let dir = Path::new("/seed-db");
    let opts = Options {
        fs: Arc::new(fs.clone()),
        create_if_missing: true,
        ..options.clone()
    };
    {
        let db = Db::open(dir, opts.clone()).unwrap();
        for i in 0..40u32 {
            db.put(
                format!("key{i:03}").as_bytes(),
                format!("value{i}").as_bytes(),
            )
            .unwrap();
        }
        db.delete(b"key007").unwrap();
        db.compact_range(None, None).unwrap();
        for i in 30..45u32 {
            db.put(format!("key{i:03}").as_bytes(), b"newer").unwrap();
        }
        db.delete(b"key001").unwrap();
    }
    let mut names = fs.children(dir).unwrap();
    names.sort();
    names
        .into_iter()
        .filter(|n| n != "LOCK" && !n.starts_with("LOG"))
        .map(|n| {
            let data = read_file(&fs, &dir.join(&n)).unwrap();
            (n, data)
        })
        .collect()
}

fn db_seeds() -> Vec<Seed> {
    let snappy_bloom = Options {
        filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
        ..Options::default()
    };
    let plain = Options {
        compression: CompressionType::None,
        ..Options::default()
    };
    // Flags (see `shale::internals::fuzzing::db`): 2 bloom filter, 8 write and reopen,
    // 16 repair first, 32 fix checksums after mutation.
    let mut out = Vec::new();
    for (name, flags, opts) in [
        ("snappy-bloom", 2 | 32, snappy_bloom),
        ("plain", 8 | 32, plain.clone()),
        ("plain-repair", 8 | 16 | 32, plain),
    ] {
        let files = db_files(&opts);
        let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, d)| (n.as_str(), &d[..])).collect();
        out.push(("db", name.to_string(), db_input(flags, &refs)));
    }
    out
}
