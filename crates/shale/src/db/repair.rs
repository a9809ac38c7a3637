//! Repair: rebuilds a database's MANIFEST from whatever table and log files
//! survive, for when the MANIFEST or CURRENT is lost or corrupt.
//!
//! Logs are turned into tables (damaged records are skipped); every table is
//! scanned for its key range and largest sequence number (a table that cannot
//! be read whole has its readable entries copied to a new table); then a new
//! MANIFEST places every table at level 0. Replaced files are moved to
//! `lost/`, never deleted. Data in damaged parts of files is lost, as little
//! else as possible.
//!
//! Blob files (value separation) are kept where they are: each table's
//! blob files are found again by reading its pointers, and a logged batch
//! whose pointer leads to no intact blob record is skipped like a damaged
//! one. The new MANIFEST is marked as using blob files when any is left.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::blob::format::BlobPointer;
use crate::blob::reader::BlobCache;
use crate::db::builder::build_table;
use crate::db::core::sanitize;
use crate::db::recovery::apply_log_record;
use crate::error::{Error, Result};
use crate::filename::{
    descriptor_file_name, lock_file_name, log_file_name, parse_file_name, set_current_file,
    table_file_name, FileType,
};
use crate::iter::InternalIterator;
use crate::keys::{parse_internal_key, InternalKey, InternalKeyComparator, ValueType};
use crate::log;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::cache::Cache;
use crate::sstable::format::{read_block, BlockHandle, Footer, FOOTER_ENCODED_LENGTH};
use crate::sstable::{TableBuilder, TableOptions};
use crate::table_cache::TableCache;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::set::MAX_FILE_NUMBER;

/// Rebuilds the MANIFEST of the database in `path` from its tables and logs.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// { let db = shale::Db::open(dir.path(), opts.clone())?; db.put(b"k", b"v")?; }
/// std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
/// shale::repair(dir.path(), &opts)?;
/// let db = shale::Db::open(dir.path(), opts)?;
/// assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
pub fn repair(path: impl AsRef<Path>, options: &Options) -> Result<()> {
    let dir = path.as_ref();
    let mut options = options.clone();
    sanitize(&mut options);
    let options = &options;
    let fs = options.fs.clone();
    let _lock = fs.lock(&lock_file_name(dir))?;
    let icmp = InternalKeyComparator::new(options.comparator.clone());
    let table_options = TableOptions {
        comparator: Arc::new(icmp.clone()),
        filter_policy: options.filter_policy.clone(),
        block_size: options.block_size,
        block_restart_interval: options.block_restart_interval.max(1),
        // Recovered logs become level-0 tables.
        compression: options.compression_for_level(0, false),
        zstd_compression_level: options.zstd_compression_level,
        block_cache: Some(
            options
                .block_cache
                .clone()
                .unwrap_or_else(|| Cache::new(8 << 20)),
        ),
        paranoid_checks: false,
    };
    let table_cache = Arc::new(TableCache::new(dir, options, table_options.clone()));

    let mut logs = Vec::new();
    let mut tables = Vec::new();
    let mut manifests = Vec::new();
    let mut has_blob_files = false;
    let mut next_number = 1u64;
    for name in fs.children(dir)? {
        if let Some((number, t)) = parse_file_name(&name) {
            if number > MAX_FILE_NUMBER {
                // No database numbers its files this high: not one of ours.
                continue;
            }
            next_number = next_number.max(number + 1);
            match t {
                FileType::Log => logs.push(number),
                FileType::Table => tables.push(number),
                FileType::Descriptor => manifests.push(name),
                FileType::BlobFile => has_blob_files = true,
                _ => {}
            }
        }
    }
    if logs.is_empty() && tables.is_empty() && manifests.is_empty() {
        return Err(Error::NotFound(format!(
            "{}: no database files to repair",
            dir.display()
        )));
    }
    logs.sort_unstable();
    let lost = dir.join("lost");
    let archive = |p: &Path| -> Result<()> {
        fs.create_dir_all(&lost)?;
        let name = p.file_name().map(PathBuf::from).unwrap_or_default();
        fs.rename(p, &lost.join(name))
    };

    // Logs become tables. Their batches are checked as recovery checks them.
    let blobs = BlobCache::new(fs.clone(), dir, options.comparator.clone());
    let mut blob_value = Vec::new();
    let mut max_sequence = 0u64;
    for number in logs {
        let path = log_file_name(dir, number);
        let mem = Arc::new(MemTable::new(icmp.clone()));
        let file = fs.new_sequential_file(&path)?;
        let mut reader = log::Reader::new(file, path.clone(), None, true, 0);
        let mut scratch = Vec::new();
        while let Ok(Some(record)) = reader.read_record(&mut scratch) {
            // A damaged batch is skipped, and so is one that points to a
            // lost value; `max_sequence` only grows.
            let Ok(batch) = crate::batch::WriteBatch::from_contents(record.to_vec()) else {
                continue;
            };
            let lost_value = batch
                .for_each(|t, key, pointer| {
                    if t == ValueType::BlobIndex {
                        blobs.read_value(key, pointer, &mut blob_value)?;
                    }
                    Ok(())
                })
                .is_err();
            if !lost_value {
                let _ = apply_log_record(&mem, batch.into_contents(), &mut max_sequence);
            }
        }
        let table_number = next_number;
        next_number = next_number.saturating_add(1);
        let mut it = mem.iter();
        let meta = build_table(
            dir,
            options,
            &table_options,
            &table_cache,
            &mut it,
            table_number,
        )?;
        if meta.file_size > 0 {
            tables.push(table_number);
        }
        archive(&path)?;
    }

    // Scan every table.
    let mut edit = VersionEdit::default();
    for number in tables {
        let path = table_file_name(dir, number);
        let size = match fs.file_size(&path) {
            Ok(s) => s,
            Err(_) => match fs.file_size(&crate::filename::sst_table_file_name(dir, number)) {
                Ok(s) => s,
                Err(_) => continue,
            },
        };
        match scan_table(&icmp, &table_cache, number, size) {
            Ok(Some((smallest, largest, seq, blob_files))) => {
                max_sequence = max_sequence.max(seq);
                let mut meta = FileMetaData::new(number, size, smallest, largest);
                meta.blob_files = blob_files;
                edit.new_files.push((0, meta));
            }
            Ok(None) => {
                // Empty table: nothing to keep.
                table_cache.evict(number);
                let _ = archive(&path);
            }
            Err(_) => {
                // Copy what can be read into a new table, which then takes
                // the damaged table's place and number: level-0 lookups
                // search higher numbers first, so a copy under a new, higher
                // number would hide newer versions of its keys in other
                // tables.
                let new_number = next_number;
                next_number = next_number.saturating_add(1);
                let salvaged =
                    salvage_table(dir, options, &table_options, number, size, new_number)?;
                table_cache.evict(number);
                let original = if fs.exists(&path) {
                    path.clone()
                } else {
                    crate::filename::sst_table_file_name(dir, number)
                };
                let _ = archive(&original);
                if let Some((mut meta, seq)) = salvaged {
                    fs.rename(&table_file_name(dir, new_number), &path)?;
                    meta.number = number;
                    max_sequence = max_sequence.max(seq);
                    edit.new_files.push((0, meta));
                }
            }
        }
    }

    for name in manifests {
        let _ = archive(&dir.join(name));
    }
    let manifest_number = next_number;
    next_number = next_number.saturating_add(1);
    edit.comparator = Some(icmp.user_comparator().name().to_string());
    edit.log_number = Some(0);
    edit.next_file_number = Some(next_number);
    edit.last_sequence = Some(max_sequence);
    edit.uses_blobs =
        has_blob_files || edit.new_files.iter().any(|(_, f)| !f.blob_files.is_empty());
    let manifest = descriptor_file_name(dir, manifest_number);
    let mut w = log::Writer::new(fs.new_writable_file(&manifest)?);
    let mut record = Vec::new();
    edit.encode(&mut record);
    w.add_record(&record)?;
    w.sync()?;
    w.close()?;
    set_current_file(&*fs, dir, manifest_number)?;
    Ok(())
}

/// The key range and largest sequence of a table read whole, `None` if empty.
/// Keys out of order are corruption.
/// What a scan of a sound table finds: its smallest and largest keys, its
/// largest sequence number and the blob files it points into.
type ScannedTable = (InternalKey, InternalKey, u64, Vec<u64>);

fn scan_table(
    icmp: &InternalKeyComparator,
    tc: &TableCache,
    number: u64,
    size: u64,
) -> Result<Option<ScannedTable>> {
    let table = tc.table(number, size)?;
    let mut blob_files = std::collections::BTreeSet::new();
    let mut it = table.iter(true, false);
    it.seek_to_first();
    let mut smallest = None;
    let mut largest = Vec::new();
    let mut max_seq = 0;
    while it.valid() {
        let key = it.key();
        let p = parse_internal_key(key).ok_or_else(|| Error::bad_data("bad internal key"))?;
        max_seq = max_seq.max(p.sequence);
        if p.value_type == ValueType::BlobIndex {
            blob_files.insert(BlobPointer::decode(it.value())?.file);
        }
        if smallest.is_some() && icmp.compare(&largest, key) != std::cmp::Ordering::Less {
            return Err(Error::bad_data("table keys out of order"));
        }
        if smallest.is_none() {
            smallest = Some(key.to_vec());
        }
        largest.clear();
        largest.extend_from_slice(key);
        it.next();
    }
    it.status()?;
    Ok(smallest.map(|s| {
        (
            InternalKey::from_encoded(s),
            InternalKey::from_encoded(largest),
            max_seq,
            blob_files.into_iter().collect(),
        )
    }))
}

/// Copies the readable entries of a damaged table to table `new_number`.
///
/// The table is read block by block rather than through a table iterator,
/// which stops at its first error: a damaged data block loses only its own
/// entries (those before the damage in it are kept), and the blocks after it
/// are still copied. A table whose footer or index cannot be read yields
/// nothing, as its blocks cannot be found.
fn salvage_table(
    dir: &Path,
    options: &Options,
    table_options: &TableOptions,
    number: u64,
    size: u64,
    new_number: u64,
) -> Result<Option<(FileMetaData, u64)>> {
    let mut path = table_file_name(dir, number);
    if !options.fs.exists(&path) {
        path = crate::filename::sst_table_file_name(dir, number);
    }
    let Ok(file) = options.fs.new_random_access_file(&path) else {
        return Ok(None);
    };
    let Some(footer_at) = size.checked_sub(FOOTER_ENCODED_LENGTH as u64) else {
        return Ok(None);
    };
    let mut footer = [0u8; FOOTER_ENCODED_LENGTH];
    if !matches!(file.read_at(footer_at, &mut footer), Ok(n) if n == footer.len()) {
        return Ok(None);
    }
    let Ok(footer) = Footer::decode(&footer) else {
        return Ok(None);
    };
    let Ok(index) = read_block(&*file, size, &footer.index_handle, true) else {
        return Ok(None);
    };
    let cmp = table_options.comparator.clone();
    let mut index = Arc::new(index).iter(cmp.clone());
    let mut builder = TableBuilder::new(
        table_options.clone(),
        options
            .fs
            .new_writable_file(&table_file_name(dir, new_number))?,
    );
    let mut smallest = None;
    let mut largest = Vec::new();
    let mut max_seq = 0;
    let mut blob_files = std::collections::BTreeSet::new();
    index.seek_to_first();
    while index.valid() {
        let block = BlockHandle::decode_from(&mut &index.value()[..])
            .and_then(|handle| read_block(&*file, size, &handle, true));
        index.next();
        let Ok(block) = block else { continue };
        let mut it = Arc::new(block).iter(cmp.clone());
        it.seek_to_first();
        // Entries up to a damaged one are kept; the rest of the block is not
        // readable.
        while it.valid() {
            let key = it.key();
            // Entries the builder would refuse (out of order) are dropped too.
            let in_order = smallest.is_none() || cmp.compare(&largest, key) == Ordering::Less;
            // A blob pointer that does not decode is damage too.
            let pointer = match parse_internal_key(key) {
                Some(p) if p.value_type == ValueType::BlobIndex => {
                    BlobPointer::decode(it.value()).ok().map(|b| Some(b.file))
                }
                _ => Some(None),
            };
            if let (Some(p), true, Some(blob)) = (parse_internal_key(key), in_order, pointer) {
                blob_files.extend(blob);
                max_seq = max_seq.max(p.sequence);
                if smallest.is_none() {
                    smallest = Some(key.to_vec());
                }
                largest.clear();
                largest.extend_from_slice(key);
                builder.add(key, it.value())?;
            }
            it.next();
        }
    }
    match smallest {
        None => {
            builder.abandon();
            let _ = options.fs.remove_file(&table_file_name(dir, new_number));
            Ok(None)
        }
        Some(s) => {
            let new_size = builder.finish()?;
            let mut meta = FileMetaData::new(
                new_number,
                new_size,
                InternalKey::from_encoded(s),
                InternalKey::from_encoded(largest),
            );
            meta.blob_files = blob_files.into_iter().collect();
            Ok(Some((meta, max_seq)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::env::{write_file_sync, FileSystem, MemFs};
    use crate::keys::ValueType;
    use crate::{Db, WriteBatch};

    fn options(fs: &MemFs) -> Options {
        Options {
            fs: Arc::new(fs.clone()),
            create_if_missing: true,
            ..Options::default()
        }
    }

    fn log_of(records: &[Vec<u8>]) -> Vec<u8> {
        let fs = MemFs::new();
        let path = Path::new("/x.log");
        let mut w = log::Writer::new(fs.new_writable_file(path).unwrap());
        for r in records {
            w.add_record(r).unwrap();
        }
        crate::env::read_file(&fs, path).unwrap()
    }

    fn batch(seq: u64, key: &[u8]) -> Vec<u8> {
        let mut b = WriteBatch::new();
        b.put(key, b"v").unwrap();
        b.set_sequence(seq);
        b.contents().to_vec()
    }

    #[test]
    fn repair_skips_batches_with_impossible_sequence_numbers() {
        // Once `sequence + 1` overflowed while the batch was inserted.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let log = log_of(&[
            batch(1, b"good"),
            batch(u64::MAX, b"bad"),
            batch(1, b"again"),
        ]);
        write_file_sync(&fs, &log_file_name(dir, 3), &log).unwrap();
        repair(dir, &options(&fs)).unwrap();
        let db = Db::open(dir, options(&fs)).unwrap();
        assert_eq!(db.get(b"good").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.get(b"bad").unwrap(), None);
        assert_eq!(db.get(b"again").unwrap(), None);
    }

    #[test]
    fn repair_ignores_files_numbered_beyond_any_database() {
        // Once `number + 1` overflowed.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        write_file_sync(&fs, &log_file_name(dir, 3), &log_of(&[batch(1, b"k")])).unwrap();
        write_file_sync(&fs, &log_file_name(dir, u64::MAX), b"").unwrap();
        repair(dir, &options(&fs)).unwrap();
    }

    #[test]
    fn repair_keeps_the_blocks_after_a_damaged_one() {
        // Once the salvage copied entries through a table iterator, which
        // stops at its first error: every block after a damaged one was lost.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut opts = TableOptions::new(Arc::new(InternalKeyComparator::new(Arc::new(
            BytewiseComparator,
        ))));
        opts.compression = crate::CompressionType::None;
        opts.block_size = 256;
        let path = table_file_name(dir, 5);
        let mut b = TableBuilder::new(opts, fs.new_writable_file(&path).unwrap());
        for i in 0..100u64 {
            let k = InternalKey::new(format!("k{i:03}").as_bytes(), i + 1, ValueType::Value);
            b.add(k.encoded(), &[b'v'; 40]).unwrap();
        }
        b.finish().unwrap();
        // A byte inside the first data block, which starts the file.
        fs.corrupt_byte(&path, 10, 0xee).unwrap();
        repair(dir, &options(&fs)).unwrap();
        let db = Db::open(dir, options(&fs)).unwrap();
        assert_eq!(db.get(b"k000").unwrap(), None, "in the damaged block");
        for i in 10..100 {
            let k = format!("k{i:03}");
            assert_eq!(
                db.get(k.as_bytes()).unwrap().as_deref(),
                Some(&[b'v'; 40][..]),
                "{k}"
            );
        }
    }

    #[test]
    fn a_salvaged_table_does_not_hide_newer_versions_in_other_tables() {
        // Once the copy of a damaged table got a new number, higher than the
        // tables holding newer data, and level-0 lookups searched it first.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut opts = TableOptions::new(Arc::new(InternalKeyComparator::new(Arc::new(
            BytewiseComparator,
        ))));
        opts.compression = crate::CompressionType::None;
        opts.block_size = 256;
        let write = |number: u64, seq: u64, tag: u8, damage: bool| {
            let path = table_file_name(dir, number);
            let mut b = TableBuilder::new(opts.clone(), fs.new_writable_file(&path).unwrap());
            for i in 0..50u64 {
                let k = InternalKey::new(format!("k{i:03}").as_bytes(), seq + i, ValueType::Value);
                b.add(k.encoded(), &[tag; 40]).unwrap();
            }
            b.finish().unwrap();
            if damage {
                fs.corrupt_byte(&path, 10, 0xee).unwrap();
            }
        };
        write(5, 1, b'o', true); // old versions, first block damaged
        write(6, 100, b'n', false); // newer versions of the same keys
        repair(dir, &options(&fs)).unwrap();
        let db = Db::open(dir, options(&fs)).unwrap();
        for i in 0..50 {
            let k = format!("k{i:03}");
            assert_eq!(
                db.get(k.as_bytes()).unwrap().as_deref(),
                Some(&[b'n'; 40][..]),
                "{k}"
            );
        }
    }

    #[test]
    fn repair_salvages_a_table_whose_keys_are_out_of_order() {
        // Bytewise order of these internal keys puts seq 1 before seq 2, the
        // reverse of the internal key order. Scanning it once gave a file
        // whose smallest key was after its largest.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut opts = TableOptions::new(Arc::new(BytewiseComparator));
        opts.compression = crate::CompressionType::None;
        let path = table_file_name(dir, 5);
        let mut b = TableBuilder::new(opts, fs.new_writable_file(&path).unwrap());
        for seq in [1, 2] {
            let k = InternalKey::new(b"a", seq, ValueType::Value);
            b.add(k.encoded(), format!("v{seq}").as_bytes()).unwrap();
        }
        b.finish().unwrap();
        repair(dir, &options(&fs)).unwrap();
        let db = Db::open(dir, options(&fs)).unwrap();
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"v1"[..]));
    }
}
