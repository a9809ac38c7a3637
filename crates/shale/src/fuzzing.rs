//! Entry points for fuzzing only: not part of the supported API.
//!
//! Each target feeds arbitrary bytes to one decoder of on-disk data, the way
//! the engine meets them when reading files, and drives everything that
//! decoder hands back (iterators, lookups, re-encoding). A target returns
//! normally for every input; a panic, overflow, out-of-bounds access or
//! unbounded allocation in one of them is a bug in the engine. The few
//! assertions here check properties the engine promises for any input (a
//! decoded edit re-encodes to itself, a bloom filter has no false negatives,
//! an iterator over `n` bytes stops within `n` steps).
//!
//! The libFuzzer harness in `fuzz/` and the stable corpus replay
//! (`tests/fuzz_corpus.rs`) both call these functions, listed in [`TARGETS`].

use std::path::Path;
use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::comparator::{BytewiseComparator, Comparator};
use crate::db::snapshot::ReadOptions;
use crate::env::{FileSystem, MemFs, RandomAccessFile};
use crate::error::Result;
use crate::filename::{parse_file_name, FileType};
use crate::filter_policy::FilterPolicy;
use crate::iter::InternalIterator;
use crate::keys::{
    extract_user_key, parse_internal_key, InternalKeyComparator, LookupKey, ValueType,
    MAX_SEQUENCE_NUMBER,
};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::block::Block;
use crate::sstable::bloom::BloomFilterPolicy;
use crate::sstable::cache::Cache;
use crate::sstable::compression::{BlockCompressor, CompressionType};
use crate::sstable::filter_block::FilterBlockReader;
use crate::sstable::format::{
    read_block_contents, BlockHandle, Footer, BLOCK_TRAILER_SIZE, FOOTER_ENCODED_LENGTH,
};
use crate::sstable::whole_filter::{KeyHashes, WholeFilter, WholeFilterBuilder};
use crate::sstable::{Table, TableOptions};
use crate::util::{coding, crc};
use crate::version::edit::VersionEdit;

/// A fuzz target: takes any bytes, returns normally.
pub type Target = fn(&[u8]);

/// Every target by name: the names of the `fuzz/fuzz_targets/*.rs` binaries
/// and of the corpus directories `fuzz/corpus/<name>/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("log_reader", log_reader),
    ("write_batch", write_batch),
    ("block", block),
    ("compressed_block", compressed_block),
    ("table", table),
    ("version_edit", version_edit),
    ("filter", filter),
    ("coding", coding),
    ("db", db),
    ("blob_record", blob_record),
];

/// Entries visited per iterator pass, so that a huge valid input cannot make
/// one run slow; far above what the seeds hold.
const MAX_STEPS: usize = 100_000;

/// Keys remembered from a forward pass to seek to and look up later.
const MAX_PROBES: usize = 32;

/// The separator of the files in a [`db`] input (see there).
pub const DB_FILE_SEPARATOR: &[u8] = b"@@shale-file:";

/// `data` as a whole log file, read with and without checksums and from an
/// initial offset, every record then decoded as a write batch and as a
/// version edit (the two things logs hold); then the same with the
/// checksums of its fragments made right (see [`fix_log_checksums`]).
pub fn log_reader(data: &[u8]) {
    log_file(data);
    let mut fixed = data.to_vec();
    fix_log_checksums(&mut fixed);
    if fixed != data {
        log_file(&fixed);
    }
}

fn log_file(data: &[u8]) {
    let fs = MemFs::new();
    let path = Path::new("/log/000001.log");
    if write_file(&fs, path, data).is_err() {
        return;
    }
    let offsets = [0, data.len() as u64 / 3, 32768 - 3];
    for (checksum, initial_offset) in [(true, offsets[0]), (false, offsets[0])]
        .into_iter()
        .chain(offsets[1..].iter().map(|&o| (true, o)))
    {
        let Ok(file) = fs.new_sequential_file(path) else {
            return;
        };
        let reporter: crate::log::Reporter = Box::new(|_bytes, err| {
            assert!(err.is_corruption(), "log damage reported as {err:?}");
        });
        let mut reader = crate::log::Reader::new(
            file,
            path.to_path_buf(),
            Some(reporter),
            checksum,
            initial_offset,
        );
        let mut scratch = Vec::new();
        // Every record, even an empty one, takes at least a fragment header.
        let mut budget = data.len() + 1;
        while let Ok(Some(record)) = reader.read_record(&mut scratch) {
            assert!(record.len() <= data.len(), "a record longer than its file");
            let _ = VersionEdit::decode(record);
            let _ =
                WriteBatch::from_contents(record.to_vec()).map(|b| b.for_each(|_, _, _| Ok(())));
            assert!(reader.last_record_offset() < data.len() as u64);
            budget = budget
                .checked_sub(1)
                .expect("log reader returns more records than the file has bytes");
        }
    }
}

/// `data` as a log record holding a write batch: decoded, iterated and
/// applied to a memtable exactly as recovery replays it.
pub fn write_batch(data: &[u8]) {
    let Ok(batch) = WriteBatch::from_contents(data.to_vec()) else {
        return;
    };
    let _ = batch.count();
    let _ = batch.sequence();
    let mut ops = 0usize;
    for op in batch.iter() {
        let _ = op;
        ops += 1;
    }
    assert!(ops <= data.len(), "more updates than bytes");
    let _ = batch.for_each(|_, _, _| Ok(()));
    let mem = MemTable::new(icmp());
    let mut last_sequence = 0;
    let _ = crate::db::recovery::apply_log_record(&mem, data.to_vec(), &mut last_sequence);
    // The same bytes once more on top: overlapping sequence numbers.
    let _ = crate::db::recovery::apply_log_record(&mem, data.to_vec(), &mut last_sequence);
    let mem = Arc::new(mem);
    let mut it = mem.iter();
    let _ = forward(&mut it, MAX_STEPS);
}

/// `data` as a block's contents, iterated both ways and searched, under the
/// bytewise and the internal-key order.
pub fn block(data: &[u8]) {
    let Ok(block) = Block::new(data.to_vec()) else {
        return;
    };
    let block = Arc::new(block);
    let cmps: [Arc<dyn Comparator>; 2] = [Arc::new(BytewiseComparator), Arc::new(icmp())];
    for cmp in cmps {
        let mut it = block.iter(cmp.clone());
        let keys = forward(&mut it, data.len());
        backward(&mut it, data.len());
        let mut targets = keys;
        targets.extend([Vec::new(), vec![0xff; 9], b"key".to_vec()]);
        let fences = crate::sstable::fences::Fences::build(&*block, &*cmp);
        let index = crate::sstable::entry_index::EntryIndex::build(&*block, &*cmp);
        for t in &targets {
            it.seek(t);
            wander(&mut it, t);
            let mut key = Vec::new();
            let _ = block.seek_entry(&*cmp, t, &mut key);
            if let Some(f) = &fences {
                let _ = f.window(t);
                let _ = f.locate(t).map(|i| block.restart_value(i));
                let _ = block.seek_entry_with(&*cmp, Some(f), t, &mut key);
            }
            if let Some(index) = &index {
                let _ = index.find(&*block, &*cmp, t, &mut key);
            }
            // Twice: the second lookup builds the block's own entry index.
            let _ = block.point_lookup(&*cmp, t, &mut key);
            let _ = block.point_lookup(&*cmp, t, &mut key);
        }
        // Moves mixed after a failed or finished pass.
        it.seek_to_last();
        wander(&mut it, data);
    }
}

/// The block type each value of [`compressed_block`]'s first byte (modulo
/// 8) selects: zstd and lz4 twice as often as the others, the unused type 3
/// too, and for 7 the byte itself (mostly unknown types).
const COMPRESSED_BLOCK_TYPES: [Option<CompressionType>; 7] = [
    Some(CompressionType::None),
    Some(CompressionType::Snappy),
    Some(CompressionType::Zstd),
    Some(CompressionType::Lz4),
    Some(CompressionType::Zstd),
    Some(CompressionType::Lz4),
    None,
];

/// `data[0]` selects a block type (see `COMPRESSED_BLOCK_TYPES`), the rest
/// is a block as stored in a table; it gets a trailer whose checksum
/// matches and is read as a table block is (by positional reads and from a
/// mapping, with and without the checksum check). Contents that decode must
/// agree with the length the block states, survive a round trip through
/// every codec, and go through [`block`].
pub fn compressed_block(data: &[u8]) {
    let Some((&selector, stored)) = data.split_first() else {
        return;
    };
    let type_byte = match COMPRESSED_BLOCK_TYPES.get(usize::from(selector % 8)) {
        Some(Some(t)) => *t as u8,
        Some(None) => 3,
        None => selector,
    };
    let mut file = stored.to_vec();
    let crc = crc::mask(crc::extend(crc::value(stored), &[type_byte]));
    file.push(type_byte);
    file.extend_from_slice(&crc.to_le_bytes());
    let handle = BlockHandle::new(0, stored.len() as u64);
    let size = file.len() as u64;
    let plain = BytesFile(file.clone());
    let mapped = MappedBytes(file);
    let mut decoded = None;
    for verify in [false, true] {
        let a = read_block_contents(&plain, size, &handle, verify);
        let b = read_block_contents(&mapped, size, &handle, verify);
        match (&a, &b) {
            (Ok(x), Ok(y)) => assert_eq!(x, y, "read and mapped blocks differ"),
            (Err(x), Err(y)) => {
                assert!(x.is_corruption(), "{x}");
                assert_eq!(x.to_string(), y.to_string());
            }
            _ => panic!("read {a:?} but mapped {b:?}"),
        }
        decoded = a.ok();
    }
    let Some(contents) = decoded else {
        return;
    };
    match CompressionType::from_u8(type_byte) {
        Some(CompressionType::Zstd) => assert_eq!(
            zstd::zstd_safe::get_frame_content_size(stored)
                .ok()
                .flatten(),
            Some(contents.len() as u64),
            "a zstd block decoded to another size than its frame states"
        ),
        Some(CompressionType::Lz4) => {
            let mut prefix = stored;
            assert_eq!(
                coding::get_varint32(&mut prefix),
                u32::try_from(contents.len()).ok(),
                "an lz4 block decoded to another size than it states"
            );
        }
        _ => {}
    }
    for t in CompressionType::ALL {
        let mut c = BlockCompressor::new(t, 1);
        let (again, ct) = c.compress(&contents);
        let back = crate::sstable::compression::decompress(ct, again)
            .unwrap_or_else(|e| panic!("{ct} block made from decoded contents: {e}"));
        assert_eq!(back.as_deref().unwrap_or(again), contents, "{t} round trip");
    }
    block(&contents);
}

/// Builds a [`compressed_block`] input: `contents` stored as `ctype` would
/// store them (as they are if the codec saves too little).
pub fn compressed_block_input(ctype: CompressionType, contents: &[u8]) -> Vec<u8> {
    let mut c = BlockCompressor::new(ctype, 1);
    let (stored, t) = c.compress(contents);
    let selector = COMPRESSED_BLOCK_TYPES
        .iter()
        .position(|x| *x == Some(t))
        .unwrap_or(0) as u8;
    let mut out = vec![selector];
    out.extend_from_slice(stored);
    out
}

/// Copies the bytes of `file` at `offset` into `buf`, as a positional read.
fn read_bytes_at(file: &[u8], offset: u64, buf: &mut [u8]) -> usize {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(file.len());
    let n = buf.len().min(file.len() - start);
    buf[..n].copy_from_slice(&file[start..start + n]);
    n
}

/// Bytes read by positional reads.
struct BytesFile(Vec<u8>);

impl RandomAccessFile for BytesFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        Ok(read_bytes_at(&self.0, offset, buf))
    }
}

/// Bytes offered as a memory mapping.
struct MappedBytes(Vec<u8>);

impl RandomAccessFile for MappedBytes {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        Ok(read_bytes_at(&self.0, offset, buf))
    }

    fn mapped(&self) -> Option<&[u8]> {
        Some(&self.0)
    }
}

/// `data` as a whole table file in the in-memory file system, opened with
/// database settings and with plain ones, iterated both ways and searched;
/// then the same with every block checksum the file's index structure
/// reaches rewritten to match (see [`fix_table_checksums`]).
pub fn table(data: &[u8]) {
    table_file(data);
    // Most mutations break a checksum that opening verifies; with the
    // checksums made right again the damage reaches the block decoders.
    let mut fixed = data.to_vec();
    fix_table_checksums(&mut fixed);
    if fixed != data {
        table_file(&fixed);
    }
}

fn table_file(data: &[u8]) {
    let fs = MemFs::new();
    let path = Path::new("/table/000005.ldb");
    if write_file(&fs, path, data).is_err() {
        return;
    }
    let bloom: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
    let mut db_like = TableOptions::new(Arc::new(icmp()));
    db_like.filter_policy = Some(bloom);
    db_like.block_cache = Some(Cache::new(1 << 20));
    let mut plain = TableOptions::new(Arc::new(BytewiseComparator));
    plain.paranoid_checks = true;
    for opts in [db_like, plain] {
        let Ok(file) = fs.new_random_access_file(path) else {
            return;
        };
        let Ok(table) = Table::open(opts, file, path.to_path_buf(), data.len() as u64) else {
            continue;
        };
        for verify in [false, true] {
            let mut it = table.iter(verify, true);
            let mut keys = forward(&mut it, MAX_STEPS);
            backward(&mut it, MAX_STEPS);
            keys.extend([Vec::new(), vec![0xff; 9], lookup_key(b"key")]);
            for k in &keys {
                it.seek(k);
                wander(&mut it, k);
                let _ = table.get(verify, true, k, |k, v| (k.len(), v.len()));
                // The newest entry for the key's user key, as a read asks.
                let newest = lookup_key(extract_user_key(k));
                let _ = table.get(verify, false, &newest, |k, v| (k.len(), v.len()));
                let _ = table.approximate_offset_of(k);
            }
        }
    }
}

/// `data` as a MANIFEST record. A record that decodes re-encodes to bytes
/// that decode to the same edit.
pub fn version_edit(data: &[u8]) {
    let Ok(edit) = VersionEdit::decode(data) else {
        return;
    };
    let _ = edit.to_string();
    let mut encoded = Vec::new();
    edit.encode(&mut encoded);
    match VersionEdit::decode(&encoded) {
        Ok(again) => assert_eq!(again, edit, "a version edit changed in a round trip"),
        Err(e) => panic!("a decoded version edit does not decode after encoding: {e}"),
    }
}

/// `data` as a filter block, as one bloom filter and as a whole-table
/// filter, probed with keys taken from it; then filters built over those
/// keys must match every one.
pub fn filter(data: &[u8]) {
    let bloom = Arc::new(BloomFilterPolicy::new(10));
    let keys: Vec<&[u8]> = data.chunks(7).take(256).collect();
    let reader = FilterBlockReader::new(bloom.clone(), data.to_vec());
    for (i, key) in keys.iter().enumerate() {
        let offset = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 64);
        let _ = reader.key_may_match(offset, key);
        let _ = reader.key_may_match(i as u64 * 2048, key);
        let _ = bloom.key_may_match(key, data);
    }
    for bits_per_key in [1, 10, 2000] {
        let policy = BloomFilterPolicy::new(bits_per_key);
        let mut built = Vec::new();
        policy.create_filter(&keys, &mut built);
        for key in &keys {
            assert!(
                policy.key_may_match(key, &built),
                "bloom filter false negative"
            );
        }
    }
    // The whole-table filter: `data` decoded as one (refused or answered),
    // and one built over the keys matching every one.
    if let Some(whole) = WholeFilter::new(data.to_vec()) {
        for key in &keys {
            let _ = whole.may_contain(KeyHashes::of(key));
        }
    }
    for bits_per_key in [1, 10, 2000] {
        let mut builder = WholeFilterBuilder::new();
        for key in &keys {
            builder.add(KeyHashes::of(key));
        }
        let whole = WholeFilter::new(builder.finish(bits_per_key))
            .expect("a built whole-table filter decodes");
        for key in &keys {
            assert!(
                whole.may_contain(KeyHashes::of(key)),
                "whole-table filter false negative"
            );
        }
    }
}

/// `data` as a blob file (`blob/format.rs`): its header, the record after
/// the header and the pointer to it read through a blob cache, and `data`
/// itself as one record and as a blob pointer. Whatever reads back must
/// hold the key the record says.
pub fn blob_record(data: &[u8]) {
    use crate::blob::format::{check_header, decode_record, BlobPointer, HEADER_LEN};
    use crate::blob::reader::BlobCache;
    let _ = check_header(data);
    let _ = BlobPointer::decode(data);
    let _ = decode_record(data);
    let fs = Arc::new(MemFs::new());
    let dir = Path::new("/db");
    if fs.create_dir_all(dir).is_err()
        || crate::env::write_file_sync(&*fs, &crate::filename::blob_file_name(dir, 5), data)
            .is_err()
    {
        return;
    }
    let cache = BlobCache::new(fs, dir, Arc::new(BytewiseComparator));
    let rest = data.get(HEADER_LEN..).unwrap_or_default();
    let key = decode_record(rest)
        .map(|(k, _)| k.to_vec())
        .unwrap_or_default();
    let mut out = Vec::new();
    // The whole tail as one record, and pointers of lengths taken from it.
    for len in [
        rest.len() as u64,
        u64::from(data.first().copied().unwrap_or(0)),
        u64::MAX,
    ] {
        let mut ptr = Vec::new();
        BlobPointer {
            file: 5,
            offset: HEADER_LEN as u64,
            len,
        }
        .encode(&mut ptr);
        if cache.read_value(&key, &ptr, &mut out).is_ok() {
            assert!(
                out.len() as u64 <= len,
                "a blob value longer than its record"
            );
        }
    }
}

/// `data` through the integer codings, block handles, footers, internal keys
/// and file names.
pub fn coding(data: &[u8]) {
    let mut s = data;
    while !s.is_empty() {
        let before = s.len();
        match coding::get_varint32(&mut s) {
            Some(v) => {
                let mut buf = Vec::new();
                coding::put_varint32(&mut buf, v);
                assert_eq!(buf.len(), coding::varint_length(v as u64));
                assert_eq!(coding::get_varint32(&mut &buf[..]), Some(v));
            }
            None => s = &s[1..],
        }
        assert!(s.len() < before);
    }
    let mut s = data;
    while !s.is_empty() {
        match coding::get_varint64(&mut s) {
            Some(v) => {
                let mut buf = Vec::new();
                coding::put_varint64(&mut buf, v);
                assert_eq!(coding::get_varint64(&mut &buf[..]), Some(v));
            }
            None => s = &s[1..],
        }
    }
    let mut s = data;
    while coding::get_length_prefixed_slice(&mut s).is_some() {}
    let mut s = data;
    while coding::get_fixed64(&mut s).is_some() {}
    let _ = coding::get_fixed32(&mut s);
    let _ = coding::decode_fixed32(data);
    let _ = coding::decode_fixed64(data);

    let mut s = data;
    while let Ok(h) = BlockHandle::decode_from(&mut s) {
        let _ = h.end_with_trailer();
    }
    if let Some(tail) = data.len().checked_sub(48).map(|at| &data[at..]) {
        let _ = Footer::decode(tail);
    }

    let cmp = icmp();
    let keys: Vec<&[u8]> = data.chunks(11).take(64).collect();
    for (i, k) in keys.iter().enumerate() {
        if let Some(p) = parse_internal_key(k) {
            assert!(p.sequence <= MAX_SEQUENCE_NUMBER);
            assert_eq!(p.user_key, extract_user_key(k));
        }
        let _ = crate::keys::extract_trailer(k);
        let _ = cmp.compare(k, keys[(i + 1) % keys.len()]);
        let mut shortened = k.to_vec();
        cmp.find_shortest_separator(&mut shortened, keys[(i + 1) % keys.len()]);
        let mut successor = k.to_vec();
        cmp.find_short_successor(&mut successor);
        let lk = LookupKey::new(k, i as u64);
        assert_eq!(lk.user_key(), *k);
    }
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = parse_file_name(name);
    }
}

/// A whole database from `data`: a flags byte, then files, each
/// [`DB_FILE_SEPARATOR`], a name, a newline and the contents (up to the next
/// separator). The files are written to an in-memory database directory,
/// which is then opened, iterated both ways and searched. Opening may fail;
/// nothing may panic.
///
/// Flags: bit 0 paranoid checks, bit 1 a bloom filter policy, bit 2 verify
/// checksums on reads, bit 3 write and reopen after reading, bit 4 repair
/// the database before opening it, bit 5 rewrite the checksums of logs,
/// MANIFESTs and tables to match their (mutated) contents first.
pub fn db(data: &[u8]) {
    let Some(db) = DbInput::parse(data) else {
        return;
    };
    let fs = MemFs::new();
    let dir = Path::new("/db");
    if fs.create_dir_all(dir).is_err() {
        return;
    }
    for (name, contents) in &db.files {
        let mut contents = contents.to_vec();
        if db.flags & 32 != 0 {
            match parse_file_name(name) {
                Some((_, FileType::Log | FileType::Descriptor)) => fix_log_checksums(&mut contents),
                Some((_, FileType::Table)) => fix_table_checksums(&mut contents),
                _ => {}
            }
        }
        if write_file(&fs, &dir.join(name), &contents).is_err() {
            return;
        }
    }
    let options = Options {
        fs: Arc::new(fs),
        paranoid_checks: db.flags & 1 != 0,
        filter_policy: (db.flags & 2 != 0)
            .then(|| Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn FilterPolicy>),
        block_cache: Some(Cache::new(1 << 20)),
        ..Options::default()
    };
    let read = ReadOptions {
        verify_checksums: db.flags & 4 != 0,
        ..ReadOptions::default()
    };
    if db.flags & 16 != 0 {
        if let Ok(report) = crate::repair(dir, &options) {
            // The report describes the directory repair left (its tables
            // merged into new ones when it compacted).
            let tables = if report.compacted {
                &[][..]
            } else {
                &report.tables[..]
            };
            for t in tables {
                assert_eq!(
                    options.fs.file_size(&t.file).ok(),
                    Some(t.bytes),
                    "{report:?}"
                );
            }
            for m in &report.moved_to_lost {
                assert!(options.fs.exists(&m.to), "{report:?}");
            }
        }
    }
    let rounds = if db.flags & 8 != 0 { 2 } else { 1 };
    for round in 0..rounds {
        let Ok(handle) = crate::Db::open(dir, options.clone()) else {
            return;
        };
        let mut it = handle.cursor(&read);
        let mut keys = Vec::new();
        it.seek_to_first();
        let mut steps = 0;
        while it.valid() && steps < MAX_STEPS {
            if keys.len() < MAX_PROBES {
                keys.push(it.key().to_vec());
            }
            let _ = it.value();
            it.next();
            steps += 1;
        }
        let _ = it.status();
        it.seek_to_last();
        steps = 0;
        while it.valid() && steps < MAX_STEPS {
            it.prev();
            steps += 1;
        }
        let _ = it.status();
        keys.extend([Vec::new(), b"key".to_vec(), vec![0xff; 4]]);
        for k in &keys {
            it.seek(k);
            if it.valid() {
                it.prev();
            }
            let _ = handle.get_with(&read, k);
        }
        drop(it);
        let _ = handle.property("leveldb.stats");
        let _ = handle.property("leveldb.sstables");
        let _ = handle.approximate_sizes(&[(b"", b"\xff")]);
        if round + 1 < rounds {
            // Writes on top of what was recovered, then a reopen replays them.
            let _ = handle.put(b"key", b"value");
            let _ = handle.delete(keys.first().map_or(&b""[..], |k| k));
            let _ = handle.compact_range(None, None);
        }
    }
}

/// The files of a [`db`] input.
struct DbInput<'a> {
    flags: u8,
    files: Vec<(&'a str, &'a [u8])>,
}

impl<'a> DbInput<'a> {
    /// At most this many files; more add nothing a database can be made of.
    const MAX_FILES: usize = 8;

    fn parse(data: &'a [u8]) -> Option<DbInput<'a>> {
        let mut parts = split(data, DB_FILE_SEPARATOR);
        let flags = parts.next()?.first().copied().unwrap_or(0);
        let mut files = Vec::new();
        for part in parts.take(Self::MAX_FILES) {
            let Some(newline) = part.iter().position(|&b| b == b'\n') else {
                continue;
            };
            let Ok(name) = std::str::from_utf8(&part[..newline]) else {
                continue;
            };
            // Plain names only: the files stay inside the database directory.
            if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
                continue;
            }
            files.push((name, &part[newline + 1..]));
        }
        Some(DbInput { flags, files })
    }
}

/// Pieces of `data` between occurrences of `sep` (the first piece is what
/// comes before the first separator).
fn split<'a>(data: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(sep.len()).position(|w| w == sep) {
            Some(at) => {
                rest = Some(&r[at + sep.len()..]);
                Some(&r[..at])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Builds a [`db`] input from files (the inverse of its parsing).
pub fn db_input(flags: u8, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = vec![flags];
    for (name, contents) in files {
        out.extend_from_slice(DB_FILE_SEPARATOR);
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(contents);
    }
    out
}

fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(BytewiseComparator))
}

fn lookup_key(user_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + 8);
    crate::keys::append_internal_key(&mut k, user_key, MAX_SEQUENCE_NUMBER, ValueType::Value);
    k
}

fn write_file(fs: &MemFs, path: &Path, data: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs.create_dir_all(dir)?;
    }
    crate::env::write_file_sync(fs, path, data)
}

/// Walks forward from the first entry; returns the first keys seen.
/// Panics if the iterator yields more than `limit` entries.
fn forward(it: &mut dyn InternalIterator, limit: usize) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    let mut steps = 0usize;
    it.seek_to_first();
    while it.valid() {
        if keys.len() < MAX_PROBES {
            keys.push(it.key().to_vec());
        }
        let _ = it.value();
        it.next();
        steps += 1;
        if steps > limit {
            assert!(limit >= MAX_STEPS, "more entries than bytes");
            break;
        }
    }
    let _ = it.status();
    keys
}

/// Walks backward from the last entry.
fn backward(it: &mut dyn InternalIterator, limit: usize) {
    let mut steps = 0usize;
    it.seek_to_last();
    while it.valid() {
        let _ = (it.key(), it.value());
        it.prev();
        steps += 1;
        if steps > limit {
            assert!(limit >= MAX_STEPS, "more entries than bytes");
            break;
        }
    }
    let _ = it.status();
}

/// A few steps back and forth from the current position, chosen by `script`.
fn wander(it: &mut dyn InternalIterator, script: &[u8]) {
    for &b in script.iter().take(8) {
        if !it.valid() {
            break;
        }
        let _ = (it.key(), it.value());
        if b & 1 == 0 {
            it.next();
        } else {
            it.prev();
        }
    }
    let _ = it.status();
}

/// Rewrites the checksum of every fragment of a log whose header and
/// payload fit in its block, as the writer would have computed it, so that
/// the reader looks past the checksums at the fragments and records.
pub fn fix_log_checksums(data: &mut [u8]) {
    use crate::log::{BLOCK_SIZE, HEADER_SIZE};
    for block in data.chunks_mut(BLOCK_SIZE) {
        let mut at = 0;
        while block.len() - at >= HEADER_SIZE {
            let length = u16::from_le_bytes([block[at + 4], block[at + 5]]) as usize;
            let kind = block[at + 6];
            let end = at + HEADER_SIZE + length;
            if end > block.len() || (kind == 0 && length == 0) {
                break;
            }
            let sum = crc::mask(crc::value(&block[at + HEADER_SIZE - 1..end]));
            block[at..at + 4].copy_from_slice(&sum.to_le_bytes());
            at = end;
        }
    }
}

/// Rewrites the trailer checksum of every block of a table reachable from
/// its footer: the index and metaindex blocks, the data blocks the index
/// entries point to and the meta blocks the metaindex entries point to, so
/// that opening and reading look past the checksums at the blocks.
pub fn fix_table_checksums(data: &mut [u8]) {
    let Some(footer_at) = data.len().checked_sub(FOOTER_ENCODED_LENGTH) else {
        return;
    };
    let Ok(footer) = Footer::decode(&data[footer_at..]) else {
        return;
    };
    for parent in [footer.index_handle, footer.metaindex_handle] {
        if !fix_block_trailer(data, &parent) {
            continue;
        }
        for child in handles_in_block(data, &parent) {
            fix_block_trailer(data, &child);
        }
    }
}

/// Sets the checksum in the trailer of the block at `handle`; false if the
/// block does not fit in `data`.
fn fix_block_trailer(data: &mut [u8], handle: &BlockHandle) -> bool {
    let fits = handle
        .end_with_trailer()
        .is_some_and(|end| end <= data.len() as u64);
    if !fits {
        return false;
    }
    // Both fit in `data`, a slice, so in usize.
    let (start, n) = (handle.offset as usize, handle.size as usize);
    let covered = &data[start..start + n + 1];
    let sum = crc::mask(crc::value(covered));
    let at = start + n + 1;
    data[at..at + BLOCK_TRAILER_SIZE - 1].copy_from_slice(&sum.to_le_bytes());
    true
}

/// The values of the entries of the block at `handle` that decode as block
/// handles (at most a few thousand).
fn handles_in_block(data: &[u8], handle: &BlockHandle) -> Vec<BlockHandle> {
    let fs = MemFs::new();
    let path = Path::new("/fix/000001.ldb");
    let mut out = Vec::new();
    let Ok(file) = write_file(&fs, path, data).and_then(|()| fs.new_random_access_file(path))
    else {
        return out;
    };
    let Ok(contents) = read_block_contents(&*file, data.len() as u64, handle, false) else {
        return out;
    };
    let Ok(block) = Block::new(contents) else {
        return out;
    };
    let mut it = Arc::new(block).iter(Arc::new(BytewiseComparator));
    it.seek_to_first();
    while it.valid() && out.len() < 4096 {
        if let Ok(h) = BlockHandle::decode_from(&mut it.value()) {
            out.push(h);
        }
        it.next();
    }
    out
}
