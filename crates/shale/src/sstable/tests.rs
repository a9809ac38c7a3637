//! Whole-table tests: round trips through the in-memory file system, byte
//! compatibility with libleveldb 1.23, damaged files, and the block cache.
//!
//! `testdata/leveldb_1_23_{plain,snappy}.ldb` were written by libleveldb 1.23's
//! `TableBuilder` with internal-key ordering, a bloom filter (10 bits per key)
//! over user keys, 256-byte blocks and restart interval 4, from the entries
//! that [`leveldb_entries`] lists.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::bloom::BloomFilterPolicy;
use super::{Table, TableBuilder, TableOptions};
use crate::comparator::{BytewiseComparator, Comparator};
use crate::env::{FileSystem, MemFs, RandomAccessFile};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::keys::{
    extract_user_key, InternalKey, InternalKeyComparator, ValueType, MAX_SEQUENCE_NUMBER,
};
use crate::sstable::cache::Cache;
use crate::sstable::format::CompressionType;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

const LEVELDB_PLAIN: &[u8] = include_bytes!("testdata/leveldb_1_23_plain.ldb");
const LEVELDB_SNAPPY: &[u8] = include_bytes!("testdata/leveldb_1_23_snappy.ldb");

fn ikey(user: &[u8], seq: u64, t: ValueType) -> Vec<u8> {
    InternalKey::new(user, seq, t).encoded().to_vec()
}

/// The key for looking up the newest entry of `user`.
fn lookup(user: &[u8]) -> Vec<u8> {
    ikey(user, MAX_SEQUENCE_NUMBER, ValueType::Value)
}

fn icmp() -> Arc<dyn Comparator> {
    Arc::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)))
}

fn options(compression: CompressionType, bloom: bool) -> TableOptions {
    let mut o = TableOptions::new(icmp());
    o.compression = compression;
    o.filter_policy = bloom.then(|| Arc::new(BloomFilterPolicy::new(10)) as _);
    o
}

/// The entries of the libleveldb-written test tables, in order.
fn leveldb_entries() -> Entries {
    let mut out = Vec::new();
    for i in 0..120u64 {
        let user = format!("key{:05}", i * 7);
        let versions = if i % 10 == 0 { 2 } else { 1 };
        for v in (1..=versions).rev() {
            let seq = 1000 + i * 3 + v;
            let deletion = i % 13 == 5;
            let t = if deletion {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let mut value = String::new();
            if !deletion {
                for _ in 0..1 + i % 5 {
                    value.push_str(&format!("value{i}.{v};"));
                }
            }
            out.push((ikey(user.as_bytes(), seq, t), value.into_bytes()));
        }
    }
    out
}

fn leveldb_options(compression: CompressionType) -> TableOptions {
    let mut o = options(compression, true);
    o.block_size = 256;
    o.block_restart_interval = 4;
    o
}

fn build(fs: &MemFs, path: &Path, opts: &TableOptions, entries: &Entries) -> u64 {
    let mut b = TableBuilder::new(opts.clone(), fs.new_writable_file(path).unwrap());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.num_entries(), entries.len() as u64);
    let size = b.finish().unwrap();
    assert_eq!(size, fs.file_size(path).unwrap());
    size
}

fn open(fs: &MemFs, path: &Path, opts: &TableOptions) -> Result<Arc<Table>> {
    let size = fs.file_size(path)?;
    Table::open(
        opts.clone(),
        fs.new_random_access_file(path)?,
        path.to_path_buf(),
        size,
    )
}

fn write_bytes(fs: &MemFs, path: &Path, bytes: &[u8]) {
    crate::env::write_file_sync(fs, path, bytes).unwrap();
}

fn scan_forward(t: &Arc<Table>) -> Entries {
    let mut it = t.iter(true, true);
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

fn scan_backward(t: &Arc<Table>) -> Entries {
    let mut it = t.iter(true, true);
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    out.reverse();
    out
}

/// The first entry with key >= target, as `get` and `seek` must find it.
fn model_seek<'a>(entries: &'a Entries, target: &[u8]) -> Option<&'a (Vec<u8>, Vec<u8>)> {
    let cmp = icmp();
    let i = entries.partition_point(|(k, _)| cmp.compare(k, target) == Ordering::Less);
    entries.get(i)
}

fn get(t: &Table, key: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    t.get(true, true, key, |k, v| (k.to_vec(), v.to_vec()))
        .unwrap()
}

#[test]
fn writes_the_same_bytes_as_leveldb() {
    let fs = MemFs::new();
    let path = Path::new("/t.ldb");
    build(
        &fs,
        path,
        &leveldb_options(CompressionType::None),
        &leveldb_entries(),
    );
    let ours = crate::env::read_file(&fs, path).unwrap();
    assert_eq!(ours.len(), LEVELDB_PLAIN.len());
    assert!(
        ours == LEVELDB_PLAIN,
        "uncompressed table differs from libleveldb's"
    );

    // Snappy encoders may choose different (equally valid) encodings: the `snap`
    // crate's output differs from libsnappy's, and libleveldb reads it (checked
    // with libleveldb's Table::Open). So compare what the data blocks hold;
    // the filter blocks differ too, as they follow the data blocks' offsets.
    build(
        &fs,
        path,
        &leveldb_options(CompressionType::Snappy),
        &leveldb_entries(),
    );
    let ours = crate::env::read_file(&fs, path).unwrap();
    let (data, _) = block_contents(&ours);
    let (plain_data, _) = block_contents(LEVELDB_PLAIN);
    assert!(data == block_contents(LEVELDB_SNAPPY).0);
    assert!(data == plain_data);
}

/// The decompressed data blocks and the filter block of a table image.
fn block_contents(image: &[u8]) -> (Vec<Vec<u8>>, Vec<u8>) {
    use super::block::Block;
    use super::format::{read_block, read_block_contents, BlockHandle, Footer};
    struct Image<'a>(&'a [u8]);
    impl RandomAccessFile for Image<'_> {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            let start = (offset as usize).min(self.0.len());
            let n = buf.len().min(self.0.len() - start);
            buf[..n].copy_from_slice(&self.0[start..start + n]);
            Ok(n)
        }
    }
    let file = Image(image);
    let size = image.len() as u64;
    let footer = Footer::decode(&image[image.len() - 48..]).unwrap();
    let mut out = Vec::new();
    let index = Arc::new(read_block(&file, size, &footer.index_handle, true).unwrap());
    let mut it = index.iter(icmp());
    it.seek_to_first();
    while it.valid() {
        let h = BlockHandle::decode_from(&mut it.value()).unwrap();
        let block: Block = read_block(&file, size, &h, true).unwrap();
        out.push(block.data().to_vec());
        it.next();
    }
    let meta = Arc::new(read_block(&file, size, &footer.metaindex_handle, true).unwrap());
    let mut it = meta.iter(Arc::new(BytewiseComparator));
    it.seek_to_first();
    assert_eq!(it.key(), b"filter.leveldb.BuiltinBloomFilter2");
    let h = BlockHandle::decode_from(&mut it.value()).unwrap();
    (out, read_block_contents(&file, size, &h, true).unwrap())
}

#[test]
fn reads_tables_written_by_leveldb() {
    let want = leveldb_entries();
    for (bytes, compression) in [
        (LEVELDB_PLAIN, CompressionType::None),
        (LEVELDB_SNAPPY, CompressionType::Snappy),
    ] {
        let fs = MemFs::new();
        let path = Path::new("/leveldb.ldb");
        write_bytes(&fs, path, bytes);
        // Read with default block settings: those are the writer's business.
        let opts = options(compression, true);
        let t = open(&fs, path, &opts).unwrap();
        assert!(t.has_filter(), "the bloom filter is found by name");
        assert_eq!(scan_forward(&t), want);
        assert_eq!(scan_backward(&t), want);
        for (k, v) in &want {
            let user = extract_user_key(k);
            let found = get(&t, &lookup(user)).expect("every key is found");
            assert_eq!(extract_user_key(&found.0), user);
            assert_eq!(&get(&t, k).unwrap(), &(k.clone(), v.clone()));
        }
        // Keys between the stored ones: the filter rules out almost all of them.
        let absent = (0..840u64)
            .filter(|i| i % 7 != 0)
            .filter(|i| {
                let user = format!("key{i:05}");
                get(&t, &lookup(user.as_bytes()))
                    .is_some_and(|(k, _)| extract_user_key(&k) == user.as_bytes())
            })
            .count();
        assert_eq!(absent, 0, "absent keys are never reported as present");
    }
}

/// Random internal keys: user keys with shared prefixes, several versions,
/// some deletions; sorted and unique.
fn random_entries(rng: &mut StdRng, n: usize) -> Entries {
    let cmp = icmp();
    let mut out: Entries = (0..n)
        .map(|_| {
            let len = rng.gen_range(1..20);
            let user: Vec<u8> = (0..len).map(|_| b"abcdxyz"[rng.gen_range(0..7)]).collect();
            let t = if rng.gen_bool(0.1) {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let seq = rng.gen_range(1..1_000_000);
            let vlen = if rng.gen_bool(0.05) {
                rng.gen_range(1000..5000)
            } else {
                rng.gen_range(0..50)
            };
            let value: Vec<u8> = (0..vlen)
                .map(|i| b"0123456789"[(i * 7 + len) % 10])
                .collect();
            (ikey(&user, seq, t), value)
        })
        .collect();
    out.sort_by(|a, b| cmp.compare(&a.0, &b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

#[test]
fn round_trips_with_every_compression_and_bloom() {
    let fs = MemFs::new();
    for seed in 0..3u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let entries = random_entries(&mut rng, 2000);
        for compression in CompressionType::ALL {
            for bloom in [false, true] {
                for (block_size, interval) in [(4096, 16), (256, 1), (1, 2)] {
                    let case = format!(
                        "seed {seed}, {compression:?}, bloom {bloom}, block size {block_size}, interval {interval}"
                    );
                    let mut opts = options(compression, bloom);
                    opts.block_size = block_size;
                    opts.block_restart_interval = interval;
                    let path = PathBuf::from(format!("/{seed}.ldb"));
                    build(&fs, &path, &opts, &entries);
                    let t = open(&fs, &path, &opts).unwrap();
                    assert_eq!(scan_forward(&t), entries, "{case}");
                    assert_eq!(scan_backward(&t), entries, "{case}");

                    let mut it = t.iter(false, true);
                    for _ in 0..300 {
                        let target = if rng.gen_bool(0.5) {
                            entries[rng.gen_range(0..entries.len())].0.clone()
                        } else {
                            let len = rng.gen_range(1..6);
                            let user: Vec<u8> =
                                (0..len).map(|_| b"abcdxyz"[rng.gen_range(0..7)]).collect();
                            ikey(&user, rng.gen_range(1..1_000_000), ValueType::Value)
                        };
                        let want = model_seek(&entries, &target);
                        it.seek(&target);
                        let got = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                        assert_eq!(got.as_ref(), want, "{case}: seek");
                        // One step each way from there.
                        if it.valid() {
                            it.prev();
                            let pos = entries.iter().position(|e| Some(e) == want).unwrap();
                            let before = pos.checked_sub(1).map(|p| &entries[p]);
                            let got = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                            assert_eq!(got.as_ref(), before, "{case}: prev after seek");
                        }
                        let got = get(&t, &target);
                        match (got, want) {
                            (Some(g), Some(w)) => {
                                if extract_user_key(&w.0) == extract_user_key(&target) {
                                    assert_eq!(&g, w, "{case}: get");
                                } else {
                                    assert_ne!(extract_user_key(&g.0), extract_user_key(&target));
                                }
                            }
                            (Some(g), None) => panic!("{case}: get found {:?} past the end", g.0),
                            (None, Some(w)) => assert_ne!(
                                extract_user_key(&w.0),
                                extract_user_key(&target),
                                "{case}: get missed a present key"
                            ),
                            (None, None) => {}
                        }
                    }
                    it.status().unwrap();
                }
            }
        }
    }
}

#[test]
fn empty_table() {
    let fs = MemFs::new();
    let path = Path::new("/empty.ldb");
    for bloom in [false, true] {
        let opts = options(CompressionType::Snappy, bloom);
        build(&fs, path, &opts, &Vec::new());
        let t = open(&fs, path, &opts).unwrap();
        assert!(scan_forward(&t).is_empty());
        assert!(scan_backward(&t).is_empty());
        assert_eq!(get(&t, &lookup(b"a")), None);
        // The end of the (absent) data: where the filter or metaindex block starts.
        let end = t.approximate_offset_of(&lookup(b"a"));
        assert_eq!(end, if bloom { 10 } else { 0 });
        assert_eq!(t.approximate_offset_of(&lookup(b"z")), end);
    }
}

#[test]
fn keys_out_of_order_are_refused() {
    let fs = MemFs::new();
    let opts = options(CompressionType::None, false);
    let mut b = TableBuilder::new(opts, fs.new_writable_file(Path::new("/x.ldb")).unwrap());
    b.add(&ikey(b"b", 1, ValueType::Value), b"").unwrap();
    let e = b.add(&ikey(b"a", 1, ValueType::Value), b"").unwrap_err();
    assert!(matches!(e, crate::Error::InvalidArgument(_)), "{e}");
    // Same key twice.
    let e = b.add(&ikey(b"b", 1, ValueType::Value), b"").unwrap_err();
    assert!(matches!(e, crate::Error::InvalidArgument(_)), "{e}");
    // Newer versions of a user key sort first.
    b.add(&ikey(b"b", 0, ValueType::Value), b"").unwrap();
    assert_eq!(b.num_entries(), 2);
    b.abandon();
}

/// A file that counts its reads.
struct CountingFile {
    inner: Arc<dyn RandomAccessFile>,
    reads: Arc<AtomicUsize>,
}

impl RandomAccessFile for CountingFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.reads.fetch_add(1, AtomicOrdering::Relaxed);
        self.inner.read_at(offset, buf)
    }
}

fn open_counting(fs: &MemFs, path: &Path, opts: &TableOptions) -> (Arc<Table>, Arc<AtomicUsize>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let file = Arc::new(CountingFile {
        inner: fs.new_random_access_file(path).unwrap(),
        reads: reads.clone(),
    });
    let t = Table::open(
        opts.clone(),
        file,
        path.to_path_buf(),
        fs.file_size(path).unwrap(),
    )
    .unwrap();
    (t, reads)
}

fn numbered_entries(n: usize) -> Entries {
    (0..n)
        .map(|i| {
            (
                ikey(format!("k{:06}", i * 2).as_bytes(), 5, ValueType::Value),
                vec![b'v'; 100],
            )
        })
        .collect()
}

#[test]
fn the_filter_spares_block_reads_for_absent_keys() {
    let fs = MemFs::new();
    let path = Path::new("/f.ldb");
    let entries = numbered_entries(1000);
    for bloom in [false, true] {
        let opts = options(CompressionType::None, bloom);
        build(&fs, path, &opts, &entries);
        let (t, reads) = open_counting(&fs, path, &opts);
        reads.store(0, AtomicOrdering::Relaxed);
        for i in 0..1000 {
            // Odd numbers are absent, and fall inside data blocks.
            let user = format!("k{:06}", i * 2 + 1);
            let found = get(&t, &lookup(user.as_bytes()));
            assert!(found.is_none_or(|(k, _)| extract_user_key(&k) != user.as_bytes()));
        }
        let n = reads.load(AtomicOrdering::Relaxed);
        if bloom {
            assert!(n < 30, "{n} block reads for 1000 absent keys");
        } else {
            assert!(n >= 1000, "{n} block reads without a filter");
        }
        reads.store(0, AtomicOrdering::Relaxed);
        for (k, v) in entries.iter().step_by(10) {
            assert_eq!(
                get(&t, &lookup(extract_user_key(k))),
                Some((k.clone(), v.clone()))
            );
        }
        assert_eq!(
            reads.load(AtomicOrdering::Relaxed),
            100,
            "one read per present key"
        );
    }
}

#[test]
fn a_filter_of_another_name_is_ignored() {
    struct Other;
    impl crate::FilterPolicy for Other {
        fn name(&self) -> &str {
            "test.Other"
        }
        fn create_filter(&self, _: &[&[u8]], dst: &mut Vec<u8>) {
            dst.push(0);
        }
        fn key_may_match(&self, _: &[u8], _: &[u8]) -> bool {
            false
        }
    }
    let fs = MemFs::new();
    let path = Path::new("/o.ldb");
    build(
        &fs,
        path,
        &options(CompressionType::None, true),
        &numbered_entries(10),
    );
    let mut opts = options(CompressionType::None, false);
    opts.filter_policy = Some(Arc::new(Other));
    let t = open(&fs, path, &opts).unwrap();
    assert!(!t.has_filter());
    assert!(get(&t, &lookup(b"k000002")).is_some());
}

#[test]
fn block_cache_serves_repeated_reads() {
    let fs = MemFs::new();
    let path = Path::new("/c.ldb");
    let entries = numbered_entries(500);
    let cache = Cache::new(1 << 20);
    let mut opts = options(CompressionType::Snappy, false);
    opts.block_cache = Some(cache.clone());
    build(&fs, path, &opts, &entries);
    let (t, reads) = open_counting(&fs, path, &opts);

    // Reads that do not fill the cache leave it empty.
    let mut it = t.iter(false, false);
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    assert!(cache.is_empty());

    assert_eq!(scan_forward(&t), entries);
    let blocks = cache.len();
    assert!(blocks > 10, "{blocks} blocks cached");
    assert!(cache.usage() > 500 * 100);
    let before = reads.load(AtomicOrdering::Relaxed);
    assert_eq!(scan_backward(&t), entries);
    for (k, _) in entries.iter().step_by(7) {
        assert!(get(&t, k).is_some());
    }
    assert_eq!(
        reads.load(AtomicOrdering::Relaxed),
        before,
        "all reads hit the cache"
    );

    // Another table in the same cache gets its own keys.
    let path2 = Path::new("/c2.ldb");
    let other = numbered_entries(20);
    build(&fs, path2, &opts, &other);
    let t2 = open(&fs, path2, &opts).unwrap();
    assert_eq!(scan_forward(&t2), other);
}

#[test]
fn cached_walks_that_turn_and_seek_read_the_right_blocks() {
    // A scan over cached blocks takes the next block from the cache while it
    // reads the one before (and prefetches its bytes); a walk that turns
    // back or seeks instead must still read the block it lands in.
    let fs = MemFs::new();
    let path = Path::new("/w.ldb");
    let entries: Entries = (0..600)
        .map(|i| {
            (
                ikey(format!("k{:06}", i).as_bytes(), 5, ValueType::Value),
                format!("value of {i:06} ").repeat(6).into_bytes(),
            )
        })
        .collect();
    let cache = Cache::new(4 << 20);
    let mut opts = options(CompressionType::Snappy, false);
    opts.block_cache = Some(cache.clone());
    opts.block_size = 512;
    build(&fs, path, &opts, &entries);
    let (t, reads) = open_counting(&fs, path, &opts);
    assert_eq!(scan_forward(&t), entries);
    let blocks = cache.len();
    assert!(blocks > 50, "{blocks} blocks");
    let before = reads.load(AtomicOrdering::Relaxed);

    let mut rng = StdRng::seed_from_u64(17);
    let mut it = t.iter(true, true);
    let mut at: Option<usize> = None;
    for step in 0..20_000 {
        match rng.gen_range(0..10) {
            0..=3 => {
                if let Some(i) = at {
                    it.next();
                    at = (i + 1 < entries.len()).then_some(i + 1);
                }
            }
            4..=7 => {
                if let Some(i) = at {
                    it.prev();
                    at = i.checked_sub(1);
                }
            }
            8 => {
                let i = rng.gen_range(0..entries.len());
                it.seek(&entries[i].0);
                at = Some(i);
            }
            _ => {
                if rng.gen_bool(0.5) {
                    it.seek_to_first();
                    at = Some(0);
                } else {
                    it.seek_to_last();
                    at = Some(entries.len() - 1);
                }
            }
        }
        match at {
            Some(i) => {
                assert!(it.valid(), "step {step}: expected entry {i}");
                assert_eq!(
                    (it.key(), it.value()),
                    (&entries[i].0[..], &entries[i].1[..]),
                    "step {step}"
                );
            }
            None => assert!(!it.valid(), "step {step}"),
        }
    }
    it.status().unwrap();
    assert_eq!(
        reads.load(AtomicOrdering::Relaxed),
        before,
        "every block came from the cache"
    );
    assert_eq!(cache.len(), blocks);
}

#[test]
fn tables_are_read_from_many_threads() {
    let fs = MemFs::new();
    let path = Path::new("/m.ldb");
    let entries = numbered_entries(2000);
    let mut opts = options(CompressionType::Snappy, true);
    opts.block_cache = Some(Cache::new(64 << 10));
    build(&fs, path, &opts, &entries);
    let t = open(&fs, path, &opts).unwrap();
    std::thread::scope(|s| {
        for th in 0..4 {
            let (t, entries) = (t.clone(), &entries);
            s.spawn(move || {
                for (k, v) in entries.iter().skip(th).step_by(4) {
                    assert_eq!(get(&t, k), Some((k.clone(), v.clone())));
                }
                assert_eq!(scan_forward(&t).len(), entries.len());
            });
        }
    });
}

#[test]
fn approximate_offsets_grow_with_the_key() {
    // LevelDB's ApproximateOffsetOfPlain: values of known sizes, no compression.
    let fs = MemFs::new();
    let path = Path::new("/a.ldb");
    let sizes: [(&[u8], usize); 7] = [
        (b"k01", 5),
        (b"k02", 6),
        (b"k03", 10_000),
        (b"k04", 200_000),
        (b"k05", 300_000),
        (b"k06", 6),
        (b"k07", 100_000),
    ];
    let entries: Entries = sizes
        .iter()
        .map(|(k, n)| (ikey(k, 1, ValueType::Value), vec![b'x'; *n]))
        .collect();
    let mut opts = options(CompressionType::None, false);
    opts.block_size = 1024;
    build(&fs, path, &opts, &entries);
    let t = open(&fs, path, &opts).unwrap();
    let within = |k: &[u8], lo: u64, hi: u64| {
        let o = t.approximate_offset_of(&lookup(k));
        assert!(
            (lo..=hi).contains(&o),
            "{}: {o} not in {lo}..={hi}",
            k.escape_ascii()
        );
    };
    within(b"abc", 0, 0);
    within(b"k01", 0, 0);
    within(b"k01a", 0, 0);
    within(b"k02", 0, 0);
    within(b"k03", 0, 0);
    within(b"k04", 10_000, 11_000);
    within(b"k04a", 210_000, 211_000);
    within(b"k05", 210_000, 211_000);
    within(b"k06", 510_000, 511_000);
    within(b"k07", 510_000, 511_000);
    within(b"xyz", 610_000, 612_000);

    // Monotonic over many keys.
    let entries = numbered_entries(3000);
    build(&fs, path, &opts, &entries);
    let t = open(&fs, path, &opts).unwrap();
    let mut last = 0;
    for i in 0..6001 {
        let o = t.approximate_offset_of(&lookup(format!("k{i:06}").as_bytes()));
        assert!(o >= last, "offset went back at {i}: {o} < {last}");
        last = o;
    }
    assert!(last > 3000 * 100);
}

#[test]
fn too_short_and_foreign_files_are_corrupt() {
    let fs = MemFs::new();
    let path = Path::new("/bad.ldb");
    for bytes in [&b""[..], b"short", &[0u8; 48], &[0xffu8; 100]] {
        write_bytes(&fs, path, bytes);
        let e = open(&fs, path, &options(CompressionType::None, false)).unwrap_err();
        assert!(e.is_corruption(), "{e}");
        assert!(
            e.to_string().contains("/bad.ldb"),
            "error names the file: {e}"
        );
    }
}

#[test]
fn corruption_errors_name_the_file_and_block() {
    let fs = MemFs::new();
    let path = Path::new("/named.ldb");
    let opts = options(CompressionType::None, false);
    build(&fs, path, &opts, &numbered_entries(100));
    // Byte 10 lies in the first data block (offset 0).
    fs.corrupt_byte(path, 10, b'#').unwrap();
    let t = open(&fs, path, &opts).unwrap();
    let mut it = t.iter(true, false);
    it.seek_to_first();
    assert!(!it.valid());
    let e = it.status().unwrap_err();
    match &e {
        crate::Error::Corruption { file, offset, .. } => {
            assert_eq!(file, path);
            assert_eq!(*offset, Some(0));
        }
        other => panic!("{other}"),
    }
    let e = t
        .get(true, false, &lookup(b"k000000"), |_, _| ())
        .unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    // Without checksum verification the bad byte is read as data.
    assert!(t.get(false, false, &lookup(b"k000000"), |_, _| ()).is_ok());
}

/// Opens, scans both ways, seeks and gets on a possibly damaged table:
/// everything must end in success or a corruption error.
fn exercise_damaged(fs: &MemFs, path: &Path, opts: &TableOptions, probes: &[Vec<u8>]) {
    let check = |r: Result<()>| {
        if let Err(e) = r {
            assert!(e.is_corruption(), "unexpected error kind: {e}");
        }
    };
    let t = match open(fs, path, opts) {
        Ok(t) => t,
        Err(e) => return check(Err(e)),
    };
    for verify in [false, true] {
        let mut it = t.iter(verify, false);
        let mut steps = 0;
        it.seek_to_first();
        while it.valid() && steps < 10_000 {
            steps += 1;
            it.next();
        }
        check(it.status());
        let mut it = t.iter(verify, false);
        it.seek_to_last();
        while it.valid() && steps < 20_000 {
            steps += 1;
            it.prev();
        }
        check(it.status());
        for p in probes {
            let mut it = t.iter(verify, false);
            it.seek(p);
            if it.valid() {
                it.prev();
            }
            check(it.status());
            check(t.get(verify, false, p, |_, _| ()).map(|_| ()));
            let _ = t.approximate_offset_of(p);
        }
    }
}

#[test]
fn damaging_any_byte_never_panics() {
    let fs = MemFs::new();
    let path = Path::new("/d.ldb");
    let entries: Entries = (0..40)
        .map(|i| {
            (
                ikey(format!("key{i:03}").as_bytes(), 7, ValueType::Value),
                format!("v{i}").repeat(i % 4 + 1).into_bytes(),
            )
        })
        .collect();
    let probes: Vec<Vec<u8>> = [
        b"key000".as_slice(),
        b"key017",
        b"key0175",
        b"key039",
        b"zzz",
    ]
    .iter()
    .map(|u| lookup(u))
    .collect();
    for compression in CompressionType::ALL {
        let mut opts = options(compression, true);
        opts.block_size = 128;
        opts.block_restart_interval = 3;
        build(&fs, path, &opts, &entries);
        let good = crate::env::read_file(&fs, path).unwrap();
        for (i, &byte) in good.iter().enumerate() {
            for flip in [0x01u8, 0x80, 0xff] {
                fs.corrupt_byte(path, i, byte ^ flip).unwrap();
                exercise_damaged(&fs, path, &opts, &probes);
                let mut paranoid = opts.clone();
                paranoid.paranoid_checks = true;
                if flip == 0x01 {
                    exercise_damaged(&fs, path, &paranoid, &probes);
                }
            }
            fs.corrupt_byte(path, i, byte).unwrap();
        }
        for cut in (0..good.len()).step_by(7) {
            write_bytes(&fs, path, &good[..cut]);
            exercise_damaged(&fs, path, &opts, &probes);
        }
    }
}

#[test]
fn table_iterators_can_move_between_threads() {
    fn is_send<T: Send>() {}
    is_send::<super::TableIterator>();
    fn is_sync<T: Send + Sync>() {}
    is_sync::<Table>();
}

/// A table file offered as a memory mapping (as `PosixFs` does).
struct MappedImage(Vec<u8>);

impl RandomAccessFile for MappedImage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = (offset as usize).min(self.0.len());
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }

    fn mapped(&self) -> Option<&[u8]> {
        Some(&self.0)
    }
}

/// Uncompressed blocks of a mapped table are read in place and not cached
/// (reading them again costs nothing); compressed ones are decompressed and
/// cached as usual. Either way the table reads back exactly.
#[test]
fn mapped_tables_lend_uncompressed_blocks() {
    for compression in CompressionType::ALL {
        let fs = MemFs::new();
        let path = Path::new("/m.ldb");
        let entries = numbered_entries(800);
        let cache = Cache::new(4 << 20);
        let mut opts = options(compression, true);
        opts.block_cache = Some(cache.clone());
        build(&fs, path, &opts, &entries);
        let image = crate::env::read_file(&fs, path).unwrap();
        let size = image.len() as u64;
        let t = Arc::new(
            Table::open(
                opts.clone(),
                Arc::new(MappedImage(image)),
                path.into(),
                size,
            )
            .unwrap(),
        );
        assert_eq!(scan_forward(&t), entries);
        assert_eq!(scan_backward(&t), entries);
        for (k, v) in entries.iter().step_by(13) {
            assert_eq!(get(&t, k).as_ref().map(|(_, v)| v), Some(v));
        }
        match compression {
            CompressionType::None => assert!(cache.is_empty(), "borrowed blocks are not cached"),
            _ => assert!(cache.len() > 10, "decompressed blocks are cached"),
        }
        // A block outlives the table handle it came from.
        let mut it = t.iter(false, true);
        it.seek_to_last();
        drop(t);
        assert!(it.valid());
        assert_eq!(it.key(), entries.last().unwrap().0);
    }
}

#[test]
fn a_block_cached_without_its_checksum_checked_is_checked_when_asked() {
    // Once a block cached by a read that skipped the checksum was served
    // as it was to a reader that asked for the check (a compaction).
    let fs = MemFs::new();
    let path = Path::new("/v.ldb");
    let entries = numbered_entries(200);
    let mut opts = options(CompressionType::None, false);
    opts.block_cache = Some(Cache::new(1 << 20));
    build(&fs, path, &opts, &entries);
    let image = crate::env::read_file(&fs, path).unwrap();
    let at = image
        .windows(100)
        .position(|w| w == [b'v'; 100].as_slice())
        .unwrap();
    fs.corrupt_byte(path, at + 50, b'w').unwrap();
    let t = open(&fs, path, &opts).unwrap();

    // An unchecked read caches the damaged block and sees the damage.
    let first = &entries[0].0;
    let value = t
        .get(false, true, first, |_, v| v.to_vec())
        .unwrap()
        .unwrap();
    assert!(value.contains(&b'w'));

    for fill_cache in [false, true] {
        let mut it = t.iter(true, fill_cache);
        it.seek_to_first();
        while it.valid() {
            it.next();
        }
        let err = it.status().unwrap_err();
        assert!(
            err.is_corruption() && err.to_string().contains("/v.ldb"),
            "{err}"
        );
        let err = t.get(true, true, first, |_, _| ()).unwrap_err();
        assert!(err.is_corruption(), "{err}");
    }
}
