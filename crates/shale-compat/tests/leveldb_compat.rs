//! On-disk compatibility with the reference LevelDB 1.23 library.
//!
//! Each scenario runs with Snappy on and off and with a bloom filter on and
//! off. The workloads are deterministic (fixed seeds), large enough that both
//! engines flush and compact into levels below 0, and contain overwrites and
//! deletions. Every check compares a database against a `BTreeMap` model:
//! point reads of every key ever written (deleted ones must be absent), and
//! full forward and reverse iteration.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale_compat::{RefDb, RefOptions};

const WRITE_BUFFER_SIZE: usize = 256 << 10;
const MAX_FILE_SIZE: usize = 256 << 10;
const BLOOM_BITS: usize = 10;

/// One configuration both engines are opened with.
#[derive(Debug, Clone, Copy)]
struct Config {
    snappy: bool,
    bloom: bool,
}

const CONFIGS: [Config; 4] = [
    Config {
        snappy: false,
        bloom: false,
    },
    Config {
        snappy: false,
        bloom: true,
    },
    Config {
        snappy: true,
        bloom: false,
    },
    Config {
        snappy: true,
        bloom: true,
    },
];

impl Config {
    fn reference(self) -> RefOptions {
        RefOptions {
            snappy: self.snappy,
            bloom_bits_per_key: self.bloom.then_some(BLOOM_BITS as i32),
            write_buffer_size: WRITE_BUFFER_SIZE,
            max_file_size: MAX_FILE_SIZE,
        }
    }

    fn shale(self) -> shale::Options {
        shale::Options {
            create_if_missing: true,
            compression: if self.snappy {
                shale::CompressionType::Snappy
            } else {
                shale::CompressionType::None
            },
            filter_policy: if self.bloom {
                Some(Arc::new(shale::BloomFilterPolicy::new(BLOOM_BITS)))
            } else {
                None
            },
            write_buffer_size: WRITE_BUFFER_SIZE,
            max_file_size: MAX_FILE_SIZE,
            ..Default::default()
        }
    }
}

/// One mutation of a workload.
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
}

/// The expected contents, and every key ever touched (to check absences).
#[derive(Default)]
struct Model {
    live: BTreeMap<Vec<u8>, Vec<u8>>,
    touched: BTreeSet<Vec<u8>>,
}

impl Model {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Put(k, v) => {
                self.touched.insert(k.clone());
                self.live.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                self.touched.insert(k.clone());
                self.live.remove(k);
            }
        }
    }
}

fn key(n: u32) -> Vec<u8> {
    // Shared prefixes of varying length, and some longer keys, exercise the
    // blocks' prefix compression.
    if n.is_multiple_of(7) {
        format!("user{n:06}/profile/settings").into_bytes()
    } else {
        format!("user{n:06}").into_bytes()
    }
}

fn value(rng: &mut StdRng, tag: u32) -> Vec<u8> {
    // Mostly ~100 bytes, partly repetitive so Snappy has something to do;
    // occasionally empty or a few kilobytes.
    let len = match rng.gen_range(0..100) {
        0 => 0,
        1 => rng.gen_range(2_000..6_000),
        _ => rng.gen_range(80..120),
    };
    let mut v = format!("v{tag}:").into_bytes();
    let chunk: Vec<u8> = (0..12).map(|_| rng.gen_range(b'a'..=b'z')).collect();
    while v.len() < len {
        if rng.gen_bool(0.3) {
            v.push(rng.gen());
        } else {
            v.extend_from_slice(&chunk);
        }
    }
    v.truncate(len);
    v
}

/// `n` deterministic operations over a key space of `key_space` keys:
/// about 85% puts (many of them overwrites) and 15% deletes.
fn workload(seed: u64, n: u32, key_space: u32) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let k = key(rng.gen_range(0..key_space));
            if rng.gen_range(0..100) < 15 {
                Op::Delete(k)
            } else {
                Op::Put(k, value(&mut rng, i))
            }
        })
        .collect()
}

fn files_below_level0_ref(db: &RefDb) -> u64 {
    (1..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

fn files_below_level0_shale(db: &shale::Db) -> u64 {
    (1..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

fn write_ref(db: &RefDb, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Put(k, v) => db.put(k, v).expect("reference put"),
            Op::Delete(k) => db.delete(k).expect("reference delete"),
        }
    }
}

/// Writes `ops` to Shale, alternating single writes and batches of up to 50.
fn write_shale(db: &shale::Db, ops: &[Op]) {
    let wo = shale::WriteOptions::default();
    for (i, chunk) in ops.chunks(500).enumerate() {
        if i % 2 == 0 {
            for op in chunk {
                match op {
                    Op::Put(k, v) => db.put(k, v).expect("shale put"),
                    Op::Delete(k) => db.delete(k).expect("shale delete"),
                }
            }
        } else {
            for small in chunk.chunks(50) {
                let mut b = shale::WriteBatch::new();
                for op in small {
                    match op {
                        Op::Put(k, v) => b.put(k, v).expect("batch put"),
                        Op::Delete(k) => b.delete(k).expect("batch delete"),
                    }
                }
                db.write(&wo, &b).expect("shale batch write");
            }
        }
    }
}

fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

fn verify_ref(db: &RefDb, model: &Model, cfg: Config) {
    for k in &model.touched {
        let got = db.get(k).expect("reference get");
        assert_eq!(
            got.as_deref(),
            model.live.get(k).map(|v| v.as_slice()),
            "{cfg:?}: reference get of {}",
            show(k)
        );
    }
    check_walks(&mut db.iter(), model, cfg, "reference");
}

fn verify_shale(db: &shale::Db, model: &Model, cfg: Config) {
    let ro = shale::ReadOptions {
        verify_checksums: true,
        ..Default::default()
    };
    for k in &model.touched {
        let got = db.get_with(&ro, k).expect("shale get");
        assert_eq!(
            got.as_deref(),
            model.live.get(k).map(|v| v.as_slice()),
            "{cfg:?}: shale get of {}",
            show(k)
        );
    }
    check_walks(&mut db.cursor(&ro), model, cfg, "shale");
}

/// The iterator calls both databases share, so that one walk checks either.
trait Cursor {
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn valid(&self) -> bool;
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    fn next(&mut self);
    fn prev(&mut self);
    fn status(&self) -> Result<(), String>;
}

macro_rules! cursor_for {
    ($t:ty) => {
        impl Cursor for $t {
            fn seek_to_first(&mut self) {
                <$t>::seek_to_first(self)
            }
            fn seek_to_last(&mut self) {
                <$t>::seek_to_last(self)
            }
            fn valid(&self) -> bool {
                <$t>::valid(self)
            }
            fn key(&self) -> &[u8] {
                <$t>::key(self)
            }
            fn value(&self) -> &[u8] {
                <$t>::value(self)
            }
            fn next(&mut self) {
                <$t>::next(self)
            }
            fn prev(&mut self) {
                <$t>::prev(self)
            }
            fn status(&self) -> Result<(), String> {
                <$t>::status(self).map_err(|e| e.to_string())
            }
        }
    };
}
cursor_for!(shale_compat::RefIter<'_>);
cursor_for!(shale::Cursor);

/// Walks `it` forward from the first key and backward from the last, and
/// checks that both walks see exactly the model's live keys and values.
fn check_walks(it: &mut impl Cursor, model: &Model, cfg: Config, who: &str) {
    it.seek_to_first();
    let mut expected = model.live.iter();
    while it.valid() {
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{cfg:?}: {who}: extra key {} forward", show(it.key())));
        assert_eq!(it.key(), k.as_slice(), "{cfg:?}: {who}: forward key order");
        assert_eq!(
            it.value(),
            v.as_slice(),
            "{cfg:?}: {who}: forward value of {}",
            show(k)
        );
        it.next();
    }
    it.status()
        .unwrap_or_else(|e| panic!("{who} forward iteration status: {e}"));
    assert!(
        expected.next().is_none(),
        "{cfg:?}: {who}: forward iteration ended early"
    );

    it.seek_to_last();
    let mut expected = model.live.iter().rev();
    while it.valid() {
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{cfg:?}: {who}: extra key {} reverse", show(it.key())));
        assert_eq!(it.key(), k.as_slice(), "{cfg:?}: {who}: reverse key order");
        assert_eq!(
            it.value(),
            v.as_slice(),
            "{cfg:?}: {who}: reverse value of {}",
            show(k)
        );
        it.prev();
    }
    it.status()
        .unwrap_or_else(|e| panic!("{who} reverse iteration status: {e}"));
    assert!(
        expected.next().is_none(),
        "{cfg:?}: {who}: reverse iteration ended early"
    );
}

/// What the table files in a database directory say about themselves,
/// decoded directly from the documented table format.
#[derive(Debug, Default)]
struct TableSummary {
    tables: usize,
    data_blocks: usize,
    snappy_data_blocks: usize,
    /// Data blocks by compression type byte.
    data_block_types: BTreeMap<u8, usize>,
    /// Names of the metaindex entries, with how many tables had each.
    meta_names: BTreeMap<String, usize>,
}

fn varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let b = buf[*pos];
        *pos += 1;
        out |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return out;
        }
    }
    panic!("varint too long");
}

/// Reads the block at `handle`, returning its uncompressed contents and its
/// compression type byte, and checks the masked CRC32C of the trailer.
fn read_block(file: &[u8], offset: u64, size: u64) -> (Vec<u8>, u8) {
    let (off, size) = (offset as usize, size as usize);
    let raw = &file[off..off + size];
    let kind = file[off + size];
    let stored = u32::from_le_bytes(file[off + size + 1..off + size + 5].try_into().unwrap());
    let crc = crc32c(&file[off..off + size + 1]);
    let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
    assert_eq!(stored, masked, "block at {off}: trailer checksum");
    let contents = match kind {
        0 => raw.to_vec(),
        1 => snap::raw::Decoder::new()
            .decompress_vec(raw)
            .expect("snappy block"),
        // One zstd frame with its content size.
        2 => {
            let size = zstd::zstd_safe::get_frame_content_size(raw)
                .expect("zstd frame header")
                .expect("zstd content size");
            let out = zstd::decode_all(raw).expect("zstd block");
            assert_eq!(out.len() as u64, size, "block at {off}: zstd content size");
            out
        }
        // Shale's LZ4 blocks: varint32 length, then an LZ4 block.
        4 => {
            let mut p = 0;
            let len = varint(raw, &mut p) as usize;
            lz4_flex::block::decompress(&raw[p..], len).expect("lz4 block")
        }
        t => panic!("block at {off}: unknown compression type {t}"),
    };
    (contents, kind)
}

fn crc32c(data: &[u8]) -> u32 {
    // Bitwise CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The (key, value) entries of a block, undoing the key prefix compression.
fn block_entries(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let n = block.len();
    let restarts = u32::from_le_bytes(block[n - 4..].try_into().unwrap()) as usize;
    let end = n - 4 - 4 * restarts;
    let mut pos = 0;
    let mut key = Vec::new();
    let mut out = Vec::new();
    while pos < end {
        let shared = varint(block, &mut pos) as usize;
        let unshared = varint(block, &mut pos) as usize;
        let vlen = varint(block, &mut pos) as usize;
        key.truncate(shared);
        key.extend_from_slice(&block[pos..pos + unshared]);
        pos += unshared;
        out.push((key.clone(), block[pos..pos + vlen].to_vec()));
        pos += vlen;
    }
    out
}

/// The numbers of the table files the current MANIFEST lists as live: files
/// left over from an abandoned compaction (LevelDB leaves its partial output
/// on disk when it closes mid-compaction) are not part of the database.
fn live_tables(dir: &Path) -> BTreeSet<u64> {
    let current = std::fs::read_to_string(dir.join("CURRENT")).expect("CURRENT");
    let data = std::fs::read(dir.join(current.trim_end())).expect("MANIFEST");
    // Reassemble the log records (32 KB blocks, 7-byte fragment headers).
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut pos = 0;
    while pos + 7 <= data.len() {
        let left_in_block = 32768 - pos % 32768;
        if left_in_block < 7 {
            pos += left_in_block;
            continue;
        }
        let len = u16::from_le_bytes([data[pos + 4], data[pos + 5]]) as usize;
        let kind = data[pos + 6];
        let payload = &data[pos + 7..pos + 7 + len];
        pos += 7 + len;
        match kind {
            1 => records.push(payload.to_vec()),
            2 => record = payload.to_vec(),
            3 => record.extend_from_slice(payload),
            4 => {
                record.extend_from_slice(payload);
                records.push(std::mem::take(&mut record));
            }
            _ => break, // zero padding at the end of a block or file
        }
    }
    let mut live = BTreeSet::new();
    for edit in records {
        let mut p = 0;
        while p < edit.len() {
            let skip_slice = |p: &mut usize| {
                let n = varint(&edit, p) as usize;
                *p += n;
            };
            match varint(&edit, &mut p) {
                1 => skip_slice(&mut p),
                2 | 3 | 4 | 9 => {
                    varint(&edit, &mut p);
                }
                5 => {
                    varint(&edit, &mut p);
                    skip_slice(&mut p);
                }
                6 => {
                    varint(&edit, &mut p);
                    live.remove(&varint(&edit, &mut p));
                }
                7 => {
                    varint(&edit, &mut p);
                    live.insert(varint(&edit, &mut p));
                    varint(&edit, &mut p);
                    skip_slice(&mut p);
                    skip_slice(&mut p);
                }
                t => panic!("unknown version edit tag {t}"),
            }
        }
    }
    live
}

fn summarize_tables(dir: &Path) -> TableSummary {
    let mut summary = TableSummary::default();
    for number in live_tables(dir) {
        let path = dir.join(format!("{number:06}.ldb"));
        let file = std::fs::read(&path).expect("read table");
        let n = file.len();
        assert!(n >= 48, "{path:?}: shorter than a footer");
        let footer = &file[n - 48..];
        let magic = u64::from_le_bytes(footer[40..].try_into().unwrap());
        assert_eq!(magic, 0xdb47_7524_8b80_fb57, "{path:?}: table magic");
        let mut pos = 0;
        let (meta_off, meta_size) = (varint(footer, &mut pos), varint(footer, &mut pos));
        let (index_off, index_size) = (varint(footer, &mut pos), varint(footer, &mut pos));
        summary.tables += 1;

        let (index, _) = read_block(&file, index_off, index_size);
        for (_, handle) in block_entries(&index) {
            let mut p = 0;
            let (off, size) = (varint(&handle, &mut p), varint(&handle, &mut p));
            let (_, kind) = read_block(&file, off, size);
            summary.data_blocks += 1;
            summary.snappy_data_blocks += usize::from(kind == 1);
            *summary.data_block_types.entry(kind).or_default() += 1;
        }

        let (meta, _) = read_block(&file, meta_off, meta_size);
        for (name, handle) in block_entries(&meta) {
            let name = String::from_utf8_lossy(&name).into_owned();
            if name.starts_with("filter.") {
                let mut p = 0;
                let (off, size) = (varint(&handle, &mut p), varint(&handle, &mut p));
                let (filter, _) = read_block(&file, off, size);
                assert_eq!(
                    filter.last().copied(),
                    Some(11),
                    "{path:?}: filter block base lg (2 KB filter ranges)"
                );
            }
            *summary.meta_names.entry(name).or_default() += 1;
        }
    }
    summary
}

/// Checks that the tables in `dir` carry what `cfg` asks for: Snappy-compressed
/// data blocks (compressible data) or none, and LevelDB's bloom filter block
/// in every table or in none.
fn check_tables(dir: &Path, cfg: Config, writer: &str) {
    let s = summarize_tables(dir);
    assert!(s.tables > 0, "{cfg:?} {writer}: no tables");
    if cfg.snappy {
        assert!(
            s.snappy_data_blocks * 2 > s.data_blocks,
            "{cfg:?} {writer}: most data blocks should be Snappy-compressed: {s:?}"
        );
    } else {
        assert_eq!(s.snappy_data_blocks, 0, "{cfg:?} {writer}: {s:?}");
    }
    // Shale adds its whole-table filter (a meta block LevelDB ignores) to the
    // tables it writes with the bloom filter; LevelDB's compactions drop it.
    let mut names = s.meta_names.clone();
    let whole = names.remove("fullfilter.shale.BlockedBloom1").unwrap_or(0);
    let expected: BTreeMap<String, usize> = if cfg.bloom {
        [("filter.leveldb.BuiltinBloomFilter2".to_string(), s.tables)].into()
    } else {
        BTreeMap::new()
    };
    assert_eq!(names, expected, "{cfg:?} {writer}: metaindex entries");
    assert!(
        whole <= s.tables && (cfg.bloom || whole == 0),
        "{cfg:?} {writer}: {whole} whole-table filters in {} tables",
        s.tables
    );
}

const OPS: u32 = 60_000;
const KEY_SPACE: u32 = 30_000;

fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("db");
    (dir, path)
}

fn reference_writes(path: &Path, cfg: Config, ops: &[Op]) {
    let db = RefDb::open(path, cfg.reference()).expect("reference open");
    write_ref(&db, ops);
    assert!(
        files_below_level0_ref(&db) > 0,
        "{cfg:?}: the reference workload should compact below level 0"
    );
}

#[test]
fn database_written_by_leveldb_reads_back_in_shale() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0001 + i as u64;
        let ops = workload(seed, OPS, KEY_SPACE);
        let mut model = Model::default();
        ops.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        reference_writes(&path, cfg, &ops);
        check_tables(&path, cfg, "leveldb");

        let db = shale::Db::open(&path, cfg.shale())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale open: {e}"));
        verify_shale(&db, &model, cfg);
    }
}

#[test]
fn database_written_by_shale_reads_back_in_leveldb() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0101 + i as u64;
        let ops = workload(seed, OPS, KEY_SPACE);
        let mut model = Model::default();
        ops.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        {
            let db = shale::Db::open(&path, cfg.shale()).expect("shale open");
            write_shale(&db, &ops);
            assert!(
                files_below_level0_shale(&db) > 0,
                "{cfg:?}: the shale workload should compact below level 0"
            );
        }
        check_tables(&path, cfg, "shale");

        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: reference open: {e}"));
        verify_ref(&db, &model, cfg);
    }
}

/// Shale's default options (Snappy, and a 10-bit bloom filter where
/// LevelDB's default has none) write LevelDB's tables: LevelDB reads them
/// back opened with its defaults (no filter: the filter blocks go unused)
/// and with its bloom filter policy (which then uses them).
#[test]
fn database_written_with_shale_defaults_reads_back_in_leveldb_either_way() {
    let ops = workload(0x5ea1_0201, OPS, KEY_SPACE);
    let mut model = Model::default();
    ops.iter().for_each(|op| model.apply(op));
    let (_dir, path) = temp_db();
    {
        let options = shale::Options {
            create_if_missing: true,
            // Small enough to make tables below level 0; the rest default.
            write_buffer_size: WRITE_BUFFER_SIZE,
            max_file_size: MAX_FILE_SIZE,
            ..Default::default()
        };
        let db = shale::Db::open(&path, options).expect("shale open");
        write_shale(&db, &ops);
        assert!(files_below_level0_shale(&db) > 0);
    }
    let with_filter = Config {
        snappy: true,
        bloom: true,
    };
    check_tables(&path, with_filter, "shale (defaults)");
    let without_filter = Config {
        snappy: true,
        bloom: false,
    };
    for cfg in [without_filter, with_filter] {
        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?}: reference open: {e}"));
        verify_ref(&db, &model, cfg);
    }
}

#[test]
fn leveldb_then_shale_then_leveldb_agree() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0201 + i as u64;
        let first = workload(seed, OPS, KEY_SPACE);
        // The second phase reaches past the first key space, so it both
        // updates and deletes old keys and adds new ones.
        let second = workload(seed ^ 0xffff, OPS / 3, KEY_SPACE + KEY_SPACE / 3);
        let mut model = Model::default();
        first.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        reference_writes(&path, cfg, &first);

        {
            let db = shale::Db::open(&path, cfg.shale())
                .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale open: {e}"));
            write_shale(&db, &second);
            second.iter().for_each(|op| model.apply(op));
            db.compact_range(None, None).expect("shale compact_range");
            assert!(
                files_below_level0_shale(&db) > 0,
                "{cfg:?}: a full compaction leaves files below level 0"
            );
            assert_eq!(
                db.property("leveldb.num-files-at-level0").as_deref(),
                Some("0"),
                "{cfg:?}: a full compaction empties level 0"
            );
            verify_shale(&db, &model, cfg);
        }
        // After the full compaction every table was written by Shale.
        check_tables(&path, cfg, "shale after compact_range");

        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: reference reopen: {e}"));
        verify_ref(&db, &model, cfg);
    }
}

/// The database's log and MANIFEST file names, sorted.
fn logs_and_manifests(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the database directory")
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    let logs = names.iter().filter(|n| n.ends_with(".log")).cloned();
    let manifests = names.iter().filter(|n| n.starts_with("MANIFEST-")).cloned();
    (logs.collect(), manifests.collect())
}

/// With `reuse_logs`, Shale appends to the log and MANIFEST LevelDB left;
/// both engines then read everything back from the shared files.
#[test]
fn leveldb_files_reused_by_shale_read_back_in_both() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0301 + i as u64;
        let first = workload(seed, OPS, KEY_SPACE);
        let second = workload(seed ^ 0xffff, OPS / 10, KEY_SPACE);
        let mut model = Model::default();
        first.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        reference_writes(&path, cfg, &first);
        let (leveldb_logs, leveldb_manifests) = logs_and_manifests(&path);
        // LevelDB may close with a memtable not yet flushed, and so two logs:
        // Shale flushes the older one and reuses the last.
        let leveldb_logs = leveldb_logs[leveldb_logs.len() - 1..].to_vec();
        let reuse = shale::Options {
            reuse_logs: true,
            ..cfg.shale()
        };
        {
            let db = shale::Db::open(&path, reuse.clone())
                .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale open: {e}"));
            assert_eq!(
                logs_and_manifests(&path),
                (leveldb_logs.clone(), leveldb_manifests.clone()),
                "{cfg:?}: LevelDB's log and MANIFEST are reused"
            );
            verify_shale(&db, &model, cfg);
            // Appended to LevelDB's log (and, should the memtable fill up,
            // flushed with an edit appended to LevelDB's MANIFEST).
            for op in &second[..1000] {
                model.apply(op);
            }
            write_shale(&db, &second[..1000]);
        }
        assert_eq!(
            logs_and_manifests(&path).1,
            leveldb_manifests,
            "{cfg:?}: still LevelDB's MANIFEST"
        );
        {
            let db = shale::Db::open(&path, reuse.clone())
                .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale reopen: {e}"));
            verify_shale(&db, &model, cfg);
            // Enough to switch logs and compact: new tables, MANIFEST edits.
            second.iter().for_each(|op| model.apply(op));
            write_shale(&db, &second);
            verify_shale(&db, &model, cfg);
        }
        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: reference reopen: {e}"));
        verify_ref(&db, &model, cfg);
    }
}

/// Tables Shale's bulk ingestion writes and installs are ordinary LevelDB
/// tables: LevelDB 1.23 opens the database, reads back the loaded entries
/// over the older ones, and compacts them.
#[test]
fn database_after_bulk_ingestion_reads_back_in_leveldb() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0401 + i as u64;
        let first = workload(seed, OPS / 2, KEY_SPACE);
        let second = workload(seed ^ 0xffff, 2_000, KEY_SPACE);
        let mut model = Model::default();
        first.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        reference_writes(&path, cfg, &first);
        {
            let db = shale::Db::open(&path, cfg.shale())
                .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale open: {e}"));
            // Writes in the memtable (flushed before the tables go in), then
            // a load over half the key space, past its end, with overwrites
            // of live and deleted keys.
            second.iter().for_each(|op| model.apply(op));
            write_shale(&db, &second);
            let mut rng = StdRng::seed_from_u64(seed);
            let loaded: Vec<Op> = (KEY_SPACE / 4..KEY_SPACE + KEY_SPACE / 4)
                .map(|n| Op::Put(key(n), value(&mut rng, n)))
                .collect();
            let done = db
                .ingest_sorted(loaded.iter().map(|op| match op {
                    Op::Put(k, v) => (k.as_slice(), v.as_slice()),
                    Op::Delete(k) => (k.as_slice(), &[][..]),
                }))
                .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: ingest: {e}"));
            loaded.iter().for_each(|op| model.apply(op));
            assert!(done.tables.len() > 1, "{cfg:?}: {done:?}");
            verify_shale(&db, &model, cfg);
        }
        check_tables(&path, cfg, "shale after ingestion");

        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: reference open: {e}"));
        verify_ref(&db, &model, cfg);
        db.compact_all();
        verify_ref(&db, &model, cfg);
    }
}

// -- The LOCK file keeps the other engine out --------------------------------
//
// LevelDB locks `LOCK` with an `fcntl` write lock, which another lock of the
// same process never conflicts with, so the two engines must run in separate
// processes: the test runs this binary again as a child, told through
// environment variables what to do.

const LOCK_CHILD_DIR: &str = "SHALE_COMPAT_LOCK_CHILD_DIR";
const LOCK_CHILD_MODE: &str = "SHALE_COMPAT_LOCK_CHILD_MODE";
const LOCK_TEST: &str = "leveldb_and_shale_lock_each_other_out";

/// What the holding child prints once it has the database open (the test
/// harness may print on the same line before it).
const HOLDING: &str = "LEVELDB-HOLDS-THE-DATABASE";

/// Exit statuses of a child that tried to open the database.
const OPEN_REFUSED: i32 = 10;
const OPEN_GRANTED: i32 = 11;

/// The child's side. `leveldb-try`: opens the database with LevelDB and
/// exits with whether that worked. `leveldb-hold`: opens it, prints
/// [`HOLDING`], and keeps it open until its standard input closes.
fn lock_child(dir: &Path, mode: &str) -> ! {
    let opts = CONFIGS[0].reference();
    match mode {
        "leveldb-try" => match RefDb::open(dir, opts) {
            Ok(_) => std::process::exit(OPEN_GRANTED),
            Err(e) => {
                eprintln!("LevelDB refused: {e}");
                let code = if e.to_lowercase().contains("lock") {
                    OPEN_REFUSED
                } else {
                    1
                };
                std::process::exit(code)
            }
        },
        "leveldb-hold" => {
            let db = RefDb::open(dir, opts).expect("LevelDB open in the child");
            db.put(b"from-leveldb", b"1").unwrap();
            println!("{HOLDING}");
            use std::io::Read;
            let mut rest = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut rest);
            drop(db);
            std::process::exit(0)
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn lock_child_command(dir: &Path, mode: &str) -> std::process::Command {
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", LOCK_TEST, "--nocapture", "--test-threads=1"])
        .env(LOCK_CHILD_DIR, dir)
        .env(LOCK_CHILD_MODE, mode);
    c
}

#[test]
fn leveldb_and_shale_lock_each_other_out() {
    if let (Some(dir), Ok(mode)) = (
        std::env::var_os(LOCK_CHILD_DIR),
        std::env::var(LOCK_CHILD_MODE),
    ) {
        lock_child(Path::new(&dir), &mode);
    }
    let (_tmp, path) = temp_db();
    let try_leveldb = |what: &str| {
        lock_child_command(&path, "leveldb-try")
            .status()
            .unwrap()
            .code()
            .unwrap_or_else(|| panic!("{what}: the child died"))
    };

    // Shale holds the database: LevelDB is refused.
    let db = shale::Db::open(&path, CONFIGS[0].shale()).unwrap();
    db.put(b"from-shale", b"1").unwrap();
    assert_eq!(
        try_leveldb("under Shale"),
        OPEN_REFUSED,
        "LevelDB opened a database Shale holds"
    );
    drop(db);
    assert_eq!(try_leveldb("after Shale closed"), OPEN_GRANTED);

    // LevelDB holds the database: Shale is refused, with an error naming LOCK.
    let mut holder = lock_child_command(&path, "leveldb-hold")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    {
        use std::io::BufRead;
        let stdout = holder.stdout.as_mut().unwrap();
        let mut reader = std::io::BufReader::new(stdout);
        while !line.contains(HOLDING) {
            line.clear();
            if reader.read_line(&mut line).unwrap() == 0 {
                panic!("the LevelDB child ended before opening the database");
            }
        }
    }
    let refused = shale::Db::open(&path, CONFIGS[0].shale());
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    match refused {
        Ok(_) => panic!("Shale opened a database LevelDB holds"),
        Err(e) => assert!(e.to_string().contains("LOCK"), "{e}"),
    }
    let db = shale::Db::open(&path, CONFIGS[0].shale()).unwrap();
    assert_eq!(db.get(b"from-shale").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"from-leveldb").unwrap().as_deref(), Some(&b"1"[..]));
}

/// Tables whose blocks are zstd (type 2, which LevelDB 1.23 predates) or
/// lz4 (type 4, Shale's own) are refused by LevelDB 1.23 with its
/// "bad block type" corruption, on reads and on iteration: never misread as
/// another type or as missing keys.
#[test]
fn zstd_and_lz4_tables_are_refused_by_leveldb() {
    for (compression, type_byte) in [
        (shale::CompressionType::Zstd, 2u8),
        (shale::CompressionType::Lz4, 4u8),
    ] {
        let cfg = CONFIGS[3];
        let ops = workload(0x5ea1_0301, 5_000, 2_000);
        let mut model = Model::default();
        ops.iter().for_each(|op| model.apply(op));
        let (_dir, path) = temp_db();
        {
            let opts = shale::Options {
                compression,
                ..cfg.shale()
            };
            let db = shale::Db::open(&path, opts).expect("shale open");
            write_shale(&db, &ops);
            db.compact_range(None, None).unwrap();
        }
        let s = summarize_tables(&path);
        assert!(
            s.data_block_types.get(&type_byte).copied().unwrap_or(0) * 2 > s.data_blocks,
            "{compression:?}: most data blocks should be type {type_byte}: {s:?}"
        );
        assert!(
            s.data_block_types.keys().all(|&t| t == type_byte || t == 0),
            "{s:?}"
        );
        // Shale reads them back under any options.
        verify_shale(&shale::Db::open(&path, cfg.shale()).unwrap(), &model, cfg);

        let db = RefDb::open(&path, cfg.reference()).expect("reference open");
        let (k, _) = model.live.iter().next().unwrap();
        match db.get(k) {
            Err(e) => assert!(e.contains("bad block type"), "{compression:?}: {e}"),
            Ok(v) => panic!("{compression:?}: LevelDB read {v:?} from a type-{type_byte} table"),
        }
        let mut it = db.iter();
        it.seek_to_first();
        let mut seen = 0;
        while it.valid() {
            seen += 1;
            it.next();
        }
        let status = it.status();
        assert!(
            status.as_ref().is_err_and(|e| e.contains("bad block type")),
            "{compression:?}: LevelDB walked {seen} entries, status {status:?}"
        );
    }
}

/// A database opened with value separation (`blob_threshold`) is marked in
/// its MANIFEST: LevelDB 1.23 refuses to open it with a corruption error
/// (its unknown-tag check) even before any table points into a blob file,
/// and after tables do; the same workload without the option opens in
/// LevelDB and reads back.
#[test]
fn blob_databases_are_refused_by_leveldb_and_others_are_not() {
    let cfg = CONFIGS[3];
    let ops = workload(0x5ea1_0401, 3_000, 1_000);
    let mut model = Model::default();
    ops.iter().for_each(|op| model.apply(op));
    let blobs = |threshold| shale::Options {
        blob_threshold: threshold,
        ..cfg.shale()
    };

    // Marked at the first open, before any value is separated.
    let (_dir, empty) = temp_db();
    drop(shale::Db::open(&empty, blobs(Some(64))).unwrap());
    let e = RefDb::open(&empty, cfg.reference())
        .err()
        .expect("LevelDB opened a blob database");
    assert!(e.contains("Corruption") && e.contains("unknown tag"), "{e}");

    // With separated values in tables.
    let (_dir, path) = temp_db();
    {
        let db = shale::Db::open(&path, blobs(Some(64))).unwrap();
        write_shale(&db, &ops);
        db.compact_range(None, None).unwrap();
    }
    let blob_files = std::fs::read_dir(&path)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".blob")
        })
        .count();
    assert!(blob_files > 0, "no blob file written");
    let e = RefDb::open(&path, cfg.reference())
        .err()
        .expect("LevelDB opened a blob database");
    assert!(e.contains("Corruption"), "{e}");
    // Shale reads it whatever its options say.
    verify_shale(&shale::Db::open(&path, blobs(None)).unwrap(), &model, cfg);

    // Without the option: LevelDB reads Shale's database.
    let (_dir, plain) = temp_db();
    {
        let db = shale::Db::open(&plain, blobs(None)).unwrap();
        write_shale(&db, &ops);
        db.compact_range(None, None).unwrap();
    }
    verify_ref(&RefDb::open(&plain, cfg.reference()).unwrap(), &model, cfg);
}
