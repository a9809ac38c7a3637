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
//! Level 0 is searched newest file number first, which finds each key's
//! newest version only if, of any two tables whose keys overlap, the one
//! with the higher number holds only newer updates. A compaction's output
//! breaks that (a new number for old updates, beside an older level-0 table
//! with newer ones): when any two tables do, repair then compacts the
//! database, which merges the tables by sequence number, so that every key
//! reads its newest version ([`RepairReport::compacted`]).
//!
//! Blob files (value separation) are kept where they are: each table's
//! blob files are found again by reading its pointers, and a logged batch
//! whose pointer leads to no intact blob record is skipped like a damaged
//! one. The new MANIFEST is marked as using blob files when any is left.
//!
//! Everything repair keeps, drops and moves is recorded as it happens in the
//! [`RepairReport`] it returns: each skipped log record and each part of a
//! table left out is a [`DroppedRange`] naming the file, the offset, the
//! length and the reason.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::blob::format::BlobPointer;
use crate::blob::reader::BlobCache;
use crate::db::builder::build_table;
use crate::db::core::sanitize;
use crate::db::recovery::apply_log_record;
use crate::error::{Error, Result};
use crate::filename::{
    descriptor_file_name, lock_file_name, log_file_name, parse_file_name, set_current_file,
    sst_table_file_name, table_file_name, FileType,
};
use crate::iter::InternalIterator;
use crate::keys::{parse_internal_key, InternalKey, InternalKeyComparator, ValueType};
use crate::log;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::cache::Cache;
use crate::sstable::format::{
    read_block, BlockHandle, Footer, BLOCK_TRAILER_SIZE, FOOTER_ENCODED_LENGTH,
};
use crate::sstable::{TableBuilder, TableOptions};
use crate::table_cache::TableCache;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::set::MAX_FILE_NUMBER;

/// What [`repair`] did: the tables the new MANIFEST lists, what became of
/// each log's records, the tables that could not be read whole, and the
/// files moved to `lost/`.
///
/// Every stretch of a file whose data repair left out is a
/// [`DroppedRange`]: the records skipped in a log are in
/// [`RepairedLog::skipped`], the parts of a table that could not be read in
/// [`DamagedTable::unreadable`], and [`RepairReport::dropped`] lists them
/// all. An empty list means every record repair found was kept.
///
/// Like recovery at open, repair takes zero-filled space in a log for space
/// reserved but never written, and a record cut short by the end of a log
/// for a write that never completed: neither is counted as dropped.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// {
///     let db = shale::Db::open(dir.path(), opts.clone())?;
///     db.put(b"a", b"1")?;
///     db.put(b"b", b"2")?;
/// }
/// // The log holds two records of 24 bytes each (a 7-byte header and a
/// // 17-byte write batch): damage the second.
/// let log = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "log"))
///     .unwrap();
/// let mut bytes = std::fs::read(&log).unwrap();
/// bytes[24 + 10] ^= 0xff;
/// std::fs::write(&log, &bytes).unwrap();
///
/// let report = shale::repair(dir.path(), &opts)?;
/// assert_eq!(report.logs[0].file, log);
/// assert_eq!(report.logs[0].batches, 1);
/// let dropped: Vec<_> = report.dropped().collect();
/// assert_eq!(dropped.len(), 1);
/// assert_eq!(dropped[0].file, log);
/// assert_eq!((dropped[0].offset, dropped[0].len), (24, 24));
/// assert_eq!((report.tables.len(), report.entries()), (1, 1));
/// // The log, now a table, went to lost/.
/// assert!(report.moved_to_lost.iter().any(|m| m.from == log));
///
/// let db = shale::Db::open(dir.path(), opts)?;
/// assert_eq!(db.get(b"a")?.as_deref(), Some(&b"1"[..]));
/// assert_eq!(db.get(b"b")?, None);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// The tables the new MANIFEST lists (all at level 0), by file number;
    /// when repair then [`compacted`](RepairReport::compacted), they were
    /// merged into new tables and are gone.
    pub tables: Vec<RepairedTable>,
    /// Each log found, by file number: each became a table (when it held
    /// any update) and was moved to `lost/`.
    pub logs: Vec<RepairedLog>,
    /// The tables that could not be read whole, by file number: what could
    /// be read of each was copied to a new table under its number, and the
    /// original moved to `lost/`.
    pub damaged_tables: Vec<DamagedTable>,
    /// The files moved to `lost/`, in the order they were moved.
    pub moved_to_lost: Vec<MovedFile>,
    /// The new MANIFEST, which CURRENT names.
    pub manifest: PathBuf,
    /// Two tables overlapped with the higher-numbered one holding older
    /// updates than the other, which level 0's order by file number would
    /// have read wrongly: repair compacted the database after writing the
    /// MANIFEST, and `tables` were merged into new ones (see the module
    /// notes).
    pub compacted: bool,
}

impl RepairReport {
    /// Every stretch of a file whose data was left out: the records skipped
    /// in each log, then the unreadable parts of each damaged table.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = shale::Options { create_if_missing: true, ..Default::default() };
    /// { let db = shale::Db::open(dir.path(), opts.clone())?; db.put(b"k", b"v")?; }
    /// let report = shale::repair(dir.path(), &opts)?;
    /// for d in report.dropped() {
    ///     eprintln!("dropped {} bytes of {} at offset {}: {}", d.len, d.file.display(), d.offset, d.reason);
    /// }
    /// assert_eq!(report.dropped().count(), 0);
    /// # Ok(()) }
    /// ```
    pub fn dropped(&self) -> impl Iterator<Item = &DroppedRange> {
        let logs = self.logs.iter().flat_map(|l| l.skipped.iter());
        logs.chain(self.damaged_tables.iter().flat_map(|t| t.unreadable.iter()))
    }

    /// The entries in the tables the new MANIFEST lists.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = shale::Options { create_if_missing: true, ..Default::default() };
    /// {
    ///     let db = shale::Db::open(dir.path(), opts.clone())?;
    ///     db.put(b"a", b"1")?;
    ///     db.compact_range(None, None)?;
    ///     db.put(b"a", b"2")?;
    /// }
    /// // Both versions of the key, one in a table, one in the log.
    /// assert_eq!(shale::repair(dir.path(), &opts)?.entries(), 2);
    /// # Ok(()) }
    /// ```
    pub fn entries(&self) -> u64 {
        self.tables.iter().map(|t| t.entries).sum()
    }

    /// The size in bytes of the tables the new MANIFEST lists.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = shale::Options { create_if_missing: true, ..Default::default() };
    /// { let db = shale::Db::open(dir.path(), opts.clone())?; db.put(b"k", b"v")?; }
    /// let report = shale::repair(dir.path(), &opts)?;
    /// let on_disk = std::fs::metadata(&report.tables[0].file).unwrap().len();
    /// assert_eq!(report.bytes(), on_disk);
    /// # Ok(()) }
    /// ```
    pub fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.bytes).sum()
    }
}

/// A table the new MANIFEST lists, in [`RepairReport::tables`]: one found
/// sound, one made from a log, or the salvaged copy of a damaged table.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// {
///     let db = shale::Db::open(dir.path(), opts.clone())?;
///     db.put(b"a", b"1")?;
///     db.put(b"b", b"2")?;
///     db.compact_range(None, None)?;
/// }
/// let report = shale::repair(dir.path(), &opts)?;
/// let table = &report.tables[0];
/// assert_eq!(table.entries, 2);
/// assert_eq!(table.file, dir.path().join(format!("{:06}.ldb", table.number)));
/// assert_eq!(std::fs::metadata(&table.file).unwrap().len(), table.bytes);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairedTable {
    /// Its file number.
    pub number: u64,
    /// Its file.
    pub file: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The entries it holds (every version of a key, and deletions, count).
    pub entries: u64,
}

/// What became of a log, in [`RepairReport::logs`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// {
///     let db = shale::Db::open(dir.path(), opts.clone())?;
///     db.put(b"a", b"1")?;
///     let mut batch = shale::WriteBatch::new();
///     batch.put(b"b", b"2")?;
///     batch.delete(b"a")?;
///     db.write(&Default::default(), &batch)?;
/// }
/// let report = shale::repair(dir.path(), &opts)?;
/// let log = &report.logs[0];
/// assert_eq!((log.batches, log.entries), (2, 3));
/// assert!(log.skipped.is_empty());
/// assert!(report.tables.iter().any(|t| Some(t.number) == log.table));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairedLog {
    /// The log file (moved to `lost/` once read).
    pub file: PathBuf,
    /// The write batches recovered into its table.
    pub batches: u64,
    /// The updates those batches held.
    pub entries: u64,
    /// The number of the table its updates went to; `None` when it held
    /// none.
    pub table: Option<u64>,
    /// The records that were skipped, in file order: damaged stretches of
    /// the log, and batches that were malformed, reused sequence numbers,
    /// or pointed to a value no blob file holds intact.
    pub skipped: Vec<DroppedRange>,
}

/// A table that could not be read whole, in [`RepairReport::damaged_tables`].
///
/// Its blocks are read one by one: each readable entry is copied to a new
/// table that takes its number, and each part that cannot be read is
/// listed. A table whose footer or index cannot be read has nothing
/// salvaged (its blocks cannot be found).
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options {
///     create_if_missing: true,
///     block_size: 1024,
///     compression: shale::CompressionType::None,
///     ..Default::default()
/// };
/// {
///     let db = shale::Db::open(dir.path(), opts.clone())?;
///     for i in 0..100 {
///         db.put(format!("k{i:03}").as_bytes(), &[b'v'; 40])?;
///     }
///     db.compact_range(None, None)?;
/// }
/// let table = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "ldb"))
///     .unwrap();
/// let mut bytes = std::fs::read(&table).unwrap();
/// bytes[10] ^= 0xff; // in the first data block
/// std::fs::write(&table, &bytes).unwrap();
///
/// let report = shale::repair(dir.path(), &opts)?;
/// let damaged = &report.damaged_tables[0];
/// assert_eq!(damaged.file, table);
/// assert_eq!(damaged.unreadable.len(), 1);
/// assert_eq!(damaged.unreadable[0].offset, 0);
/// // Every entry but the 20 or so of the first block.
/// assert!(damaged.entries_salvaged >= 50 && damaged.entries_salvaged < 100);
/// assert_eq!(report.entries(), damaged.entries_salvaged);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DamagedTable {
    /// Its file number, which the salvaged copy (if any) takes.
    pub number: u64,
    /// The damaged file (moved to `lost/`).
    pub file: PathBuf,
    /// Why it could not be read whole: the first error met reading it.
    pub reason: String,
    /// The entries copied to the salvaged table (0: there is none).
    pub entries_salvaged: u64,
    /// The parts that could not be read, in the order they were met: data
    /// blocks (offset and length including the block's trailer), entries a
    /// readable block holds that could not be kept (the block's range), or
    /// the whole file when its footer or index cannot be read.
    pub unreadable: Vec<DroppedRange>,
}

/// A stretch of a file whose data [`repair`] left out.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// {
///     let db = shale::Db::open(dir.path(), opts.clone())?;
///     db.put(b"k", b"v")?;
///     db.compact_range(None, None)?;
/// }
/// let table = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "ldb"))
///     .unwrap();
/// std::fs::write(&table, b"not a table").unwrap();
///
/// let report = shale::repair(dir.path(), &opts)?;
/// let dropped: Vec<_> = report.dropped().collect();
/// assert_eq!(dropped.len(), 1);
/// assert_eq!((&dropped[0].file, dropped[0].offset, dropped[0].len), (&table, 0, 11));
/// assert!(dropped[0].reason.contains("too short"), "{}", dropped[0].reason);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DroppedRange {
    /// The file, where it was before repair (logs and damaged tables are
    /// then moved to `lost/`).
    pub file: PathBuf,
    /// Where the stretch starts.
    pub offset: u64,
    /// Its length in bytes: for a damaged part of a log, the bytes the log
    /// reader skipped; for a skipped record, the bytes it occupies; for
    /// a table, see [`DamagedTable::unreadable`]. 0 when not known.
    pub len: u64,
    /// What was wrong.
    pub reason: String,
}

/// A file [`repair`] moved to `lost/`, in [`RepairReport::moved_to_lost`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// drop(shale::Db::open(dir.path(), opts.clone())?);
/// std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
/// let report = shale::repair(dir.path(), &opts)?;
/// let old = report.moved_to_lost.iter()
///     .find(|m| m.from.to_string_lossy().contains("MANIFEST-"))
///     .unwrap();
/// assert_eq!(old.to, dir.path().join("lost").join(old.from.file_name().unwrap()));
/// assert!(old.to.exists() && !old.from.exists());
/// assert_ne!(old.from, report.manifest);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MovedFile {
    /// Where it was.
    pub from: PathBuf,
    /// Where it is now.
    pub to: PathBuf,
    /// Why it was moved.
    pub reason: String,
}

/// The reason an error about `file` gives, without the file and offset a
/// [`DroppedRange`] names itself (an error about another file, such as a
/// blob file, is given whole).
fn reason_of(e: &Error, file: &Path) -> String {
    match e {
        Error::Corruption {
            file: f, reason, ..
        } if f.as_os_str().is_empty() || f == file => reason.clone(),
        other => other.to_string(),
    }
}

/// Rebuilds the MANIFEST of the database in `path` from its tables and logs,
/// and says what was kept, dropped and moved.
///
/// Every log becomes a table (its damaged records skipped), every table is
/// read (a damaged one is salvaged block by block), and a new MANIFEST lists
/// the tables kept, all at level 0. Logs, damaged and empty tables and the
/// old MANIFESTs are moved to `lost/`, never deleted. See [`RepairReport`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let opts = shale::Options { create_if_missing: true, ..Default::default() };
/// { let db = shale::Db::open(dir.path(), opts.clone())?; db.put(b"k", b"v")?; }
/// std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
/// let report = shale::repair(dir.path(), &opts)?;
/// assert_eq!(report.dropped().count(), 0);
/// assert_eq!((report.tables.len(), report.entries()), (1, 1));
/// let db = shale::Db::open(dir.path(), opts)?;
/// assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
pub fn repair(path: impl AsRef<Path>, options: &Options) -> Result<RepairReport> {
    let dir = path.as_ref();
    let mut options = options.clone();
    sanitize(&mut options);
    let options = &options;
    let fs = options.fs.clone();
    let lock = fs.lock(&lock_file_name(dir))?;
    let icmp = InternalKeyComparator::new(options.comparator.clone());
    let table_options = TableOptions {
        comparator: Arc::new(icmp.clone()),
        filter_policy: options.filter_policy.clone(),
        whole_table_filter: options.whole_table_filters,
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
    let mut report = RepairReport {
        tables: Vec::new(),
        logs: Vec::new(),
        damaged_tables: Vec::new(),
        moved_to_lost: Vec::new(),
        manifest: PathBuf::new(),
        compacted: false,
    };
    // Each table placed: its number, its user-key range and the range of
    // its sequence numbers, for the check of level 0's order.
    let mut placed: Vec<Placed> = Vec::new();
    let lost = dir.join("lost");
    let archive = |p: &Path, reason: &str, moved: &mut Vec<MovedFile>| -> Result<()> {
        fs.create_dir_all(&lost)?;
        let name = p.file_name().map(PathBuf::from).unwrap_or_default();
        let to = lost.join(name);
        fs.rename(p, &to)?;
        moved.push(MovedFile {
            from: p.to_path_buf(),
            to,
            reason: reason.to_string(),
        });
        Ok(())
    };

    // Logs become tables. Their batches are checked as recovery checks them.
    let blobs = BlobCache::new(fs.clone(), dir, options.comparator.clone());
    let mut blob_value = Vec::new();
    let mut max_sequence = 0u64;
    for number in logs {
        let path = log_file_name(dir, number);
        let mem = Arc::new(MemTable::new(icmp.clone()));
        let file = fs.new_sequential_file(&path)?;
        // What the reader skips, as it reports it.
        let reported: Arc<Mutex<Vec<DroppedRange>>> = Arc::default();
        let sink = reported.clone();
        let log_file = path.clone();
        let reporter: log::Reporter = Box::new(move |bytes, error: &Error| {
            let offset = match error {
                Error::Corruption { offset, .. } => *offset,
                _ => None,
            };
            sink.lock().push(DroppedRange {
                file: log_file.clone(),
                offset: offset.unwrap_or(0),
                len: bytes,
                reason: reason_of(error, &log_file),
            });
        });
        let mut reader = log::Reader::new(file, path.clone(), Some(reporter), true, 0);
        let mut log_report = RepairedLog {
            file: path.clone(),
            batches: 0,
            entries: 0,
            table: None,
            skipped: Vec::new(),
        };
        // The end of what was read: records returned and stretches skipped.
        let mut read_to = 0u64;
        let mut scratch = Vec::new();
        loop {
            let next = reader
                .read_record(&mut scratch)
                .map(|r| r.map(<[u8]>::to_vec));
            for d in reported.lock().drain(..) {
                read_to = read_to.max(d.offset.saturating_add(d.len));
                log_report.skipped.push(d);
            }
            let record = match next {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(e) => {
                    // The reader stops at a failed read: the rest of the
                    // log is not read.
                    let end = fs.file_size(&path).unwrap_or(read_to).max(read_to);
                    log_report.skipped.push(DroppedRange {
                        file: path.clone(),
                        offset: read_to,
                        len: end - read_to,
                        reason: format!("the rest of the log could not be read: {e}"),
                    });
                    break;
                }
            };
            let (offset, end) = (reader.last_record_offset(), reader.position());
            read_to = read_to.max(end);
            let skipped = |reason: String| DroppedRange {
                file: path.clone(),
                offset,
                len: end.saturating_sub(offset),
                reason,
            };
            // A damaged batch is skipped, and so is one that points to a
            // lost value; `max_sequence` only grows.
            let batch = match crate::batch::WriteBatch::from_contents(record) {
                Ok(batch) => batch,
                Err(e) => {
                    log_report.skipped.push(skipped(reason_of(&e, &path)));
                    continue;
                }
            };
            let values = batch.for_each(|t, key, pointer| {
                if t == ValueType::BlobIndex {
                    blobs.read_value(key, pointer, &mut blob_value)?;
                }
                Ok(())
            });
            if let Err(e) = values {
                log_report.skipped.push(skipped(reason_of(&e, &path)));
                continue;
            }
            let updates = u64::from(batch.count());
            match apply_log_record(&mem, batch.into_contents(), &mut max_sequence) {
                Ok(()) => {
                    log_report.batches += 1;
                    log_report.entries += updates;
                }
                Err(e) => log_report.skipped.push(skipped(reason_of(&e, &path))),
            }
        }
        log_report.skipped.sort_by_key(|d| d.offset);
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
            log_report.table = Some(table_number);
        }
        let reason = match log_report.table {
            Some(n) => format!("a log, its updates now in table {n:06}"),
            None if log_report.skipped.is_empty() => "a log without updates".to_string(),
            None => "a log none of whose updates could be recovered".to_string(),
        };
        archive(&path, &reason, &mut report.moved_to_lost)?;
        report.logs.push(log_report);
    }

    // Scan every table.
    let mut edit = VersionEdit::default();
    for number in tables {
        let path = table_file_name(dir, number);
        let (file, size) = match fs.file_size(&path) {
            Ok(s) => (path.clone(), s),
            Err(e) => {
                let sst = sst_table_file_name(dir, number);
                match fs.file_size(&sst) {
                    Ok(s) => (sst, s),
                    Err(sst_error) => {
                        // Left where it is, and out of the new MANIFEST.
                        let (file, e) = if fs.exists(&sst) {
                            (sst, sst_error)
                        } else {
                            (path, e)
                        };
                        let reason = format!("its size cannot be read: {e}");
                        report.damaged_tables.push(DamagedTable {
                            number,
                            file: file.clone(),
                            reason: reason.clone(),
                            entries_salvaged: 0,
                            unreadable: vec![DroppedRange {
                                file,
                                offset: 0,
                                len: 0,
                                reason,
                            }],
                        });
                        continue;
                    }
                }
            }
        };
        match scan_table(&icmp, &table_cache, number, size) {
            Ok(Some(scanned)) => {
                max_sequence = max_sequence.max(scanned.max_sequence);
                placed.push(Placed {
                    number,
                    smallest: scanned.smallest.user_key().to_vec(),
                    largest: scanned.largest.user_key().to_vec(),
                    sequences: (scanned.min_sequence, scanned.max_sequence),
                });
                let mut meta = FileMetaData::new(number, size, scanned.smallest, scanned.largest);
                meta.blob_files = scanned.blob_files;
                edit.new_files.push((0, meta));
                report.tables.push(RepairedTable {
                    number,
                    file,
                    bytes: size,
                    entries: scanned.entries,
                });
            }
            Ok(None) => {
                // Empty table: nothing to keep.
                table_cache.evict(number);
                let _ = archive(&path, "an empty table", &mut report.moved_to_lost);
            }
            Err(e) => {
                // Copy what can be read into a new table, which then takes
                // the damaged table's place and number: level-0 lookups
                // search higher numbers first, so a copy under a new, higher
                // number would hide newer versions of its keys in other
                // tables.
                let new_number = next_number;
                next_number = next_number.saturating_add(1);
                let salvage =
                    salvage_table(dir, options, &table_options, number, size, new_number)?;
                table_cache.evict(number);
                let original = if fs.exists(&path) {
                    path.clone()
                } else {
                    sst_table_file_name(dir, number)
                };
                let reason = if salvage.table.is_some() {
                    "a damaged table: its readable entries were copied to a new table"
                } else {
                    "a damaged table: none of its entries could be read"
                };
                let _ = archive(&original, reason, &mut report.moved_to_lost);
                if let Some((mut meta, seq)) = salvage.table {
                    fs.rename(&table_file_name(dir, new_number), &path)?;
                    meta.number = number;
                    max_sequence = max_sequence.max(seq);
                    // Its smallest sequence number is not known: taken as 0,
                    // any overlap with it counts.
                    placed.push(Placed {
                        number,
                        smallest: meta.smallest.user_key().to_vec(),
                        largest: meta.largest.user_key().to_vec(),
                        sequences: (0, seq),
                    });
                    report.tables.push(RepairedTable {
                        number,
                        file: path.clone(),
                        bytes: meta.file_size,
                        entries: salvage.entries,
                    });
                    edit.new_files.push((0, meta));
                }
                report.damaged_tables.push(DamagedTable {
                    number,
                    file: original,
                    reason: e.to_string(),
                    entries_salvaged: salvage.entries,
                    unreadable: salvage.unreadable,
                });
            }
        }
    }

    for name in manifests {
        let _ = archive(
            &dir.join(name),
            "a MANIFEST replaced by the new one",
            &mut report.moved_to_lost,
        );
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
    report.tables.sort_by_key(|t| t.number);
    report.damaged_tables.sort_by_key(|t| t.number);
    report.manifest = manifest;
    if misordered(icmp.user_comparator().as_ref(), &mut placed) {
        drop(lock);
        let mut open_options = options.clone();
        open_options.create_if_missing = false;
        open_options.error_if_exists = false;
        let db = crate::db::core::Db::open(dir, open_options)?;
        db.compact_range(None, None)?;
        drop(db);
        report.compacted = true;
    }
    Ok(report)
}

/// A table the new MANIFEST places at level 0.
struct Placed {
    number: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    /// Its smallest and largest sequence numbers.
    sequences: (u64, u64),
}

/// True if two tables overlap with the higher-numbered one not holding only
/// newer updates than the other: level 0, searched newest number first,
/// could then return an older version of a key.
fn misordered(ucmp: &dyn crate::comparator::Comparator, placed: &mut [Placed]) -> bool {
    placed.sort_by(|a, b| ucmp.compare(&a.smallest, &b.smallest));
    for (i, a) in placed.iter().enumerate() {
        // The tables after `a` start at or after its smallest key: they
        // overlap it while they start at or before its largest.
        for b in &placed[i + 1..] {
            if ucmp.compare(&b.smallest, &a.largest) == Ordering::Greater {
                break;
            }
            let (newer, older) = if a.number > b.number { (a, b) } else { (b, a) };
            if newer.sequences.0 <= older.sequences.1 {
                return true;
            }
        }
    }
    false
}

/// What a scan of a sound table finds: its smallest and largest keys, its
/// largest sequence number, the blob files it points into and its number of
/// entries.
struct ScannedTable {
    smallest: InternalKey,
    largest: InternalKey,
    min_sequence: u64,
    max_sequence: u64,
    blob_files: Vec<u64>,
    entries: u64,
}

/// Reads a table whole, `None` if it is empty. Keys out of order are
/// corruption.
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
    let mut min_seq = u64::MAX;
    let mut entries = 0u64;
    while it.valid() {
        let key = it.key();
        let p = parse_internal_key(key).ok_or_else(|| Error::bad_data("bad internal key"))?;
        max_seq = max_seq.max(p.sequence);
        min_seq = min_seq.min(p.sequence);
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
        entries += 1;
        it.next();
    }
    it.status()?;
    Ok(smallest.map(|s| ScannedTable {
        smallest: InternalKey::from_encoded(s),
        largest: InternalKey::from_encoded(largest),
        min_sequence: min_seq,
        max_sequence: max_seq,
        blob_files: blob_files.into_iter().collect(),
        entries,
    }))
}

/// What [`salvage_table`] copied and what it could not.
struct Salvage {
    /// The new table and the largest sequence number in it; `None` when
    /// nothing could be copied.
    table: Option<(FileMetaData, u64)>,
    /// The entries copied.
    entries: u64,
    /// The parts of the damaged table left out.
    unreadable: Vec<DroppedRange>,
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
) -> Result<Salvage> {
    let mut path = table_file_name(dir, number);
    if !options.fs.exists(&path) {
        path = sst_table_file_name(dir, number);
    }
    let mut salvage = Salvage {
        table: None,
        entries: 0,
        unreadable: Vec::new(),
    };
    // Nothing can be found in the file: all of it is lost.
    let whole_file = |salvage: &mut Salvage, reason: String| {
        salvage.unreadable.push(DroppedRange {
            file: path.clone(),
            offset: 0,
            len: size,
            reason,
        });
    };
    let file = match options.fs.new_random_access_file(&path) {
        Ok(file) => file,
        Err(e) => {
            whole_file(&mut salvage, format!("cannot be opened: {e}"));
            return Ok(salvage);
        }
    };
    let Some(footer_at) = size.checked_sub(FOOTER_ENCODED_LENGTH as u64) else {
        whole_file(
            &mut salvage,
            format!("too short to be a table ({size} bytes)"),
        );
        return Ok(salvage);
    };
    let mut footer = [0u8; FOOTER_ENCODED_LENGTH];
    match file.read_at(footer_at, &mut footer) {
        Ok(n) if n == footer.len() => {}
        Ok(n) => {
            whole_file(
                &mut salvage,
                format!(
                    "footer at offset {footer_at}: read {n} of its {FOOTER_ENCODED_LENGTH} bytes"
                ),
            );
            return Ok(salvage);
        }
        Err(e) => {
            whole_file(&mut salvage, format!("footer at offset {footer_at}: {e}"));
            return Ok(salvage);
        }
    }
    let footer = match Footer::decode(&footer) {
        Ok(footer) => footer,
        Err(e) => {
            whole_file(
                &mut salvage,
                format!("footer at offset {footer_at}: {}", reason_of(&e, &path)),
            );
            return Ok(salvage);
        }
    };
    let index_handle = footer.index_handle;
    let index = match read_block(&*file, size, &index_handle, true) {
        Ok(index) => index,
        Err(e) => {
            whole_file(
                &mut salvage,
                format!(
                    "index block at offset {}: {}",
                    index_handle.offset,
                    reason_of(&e, &path)
                ),
            );
            return Ok(salvage);
        }
    };
    // The bytes of the file the block at `handle` occupies, trailer
    // included (as far as they lie in the file).
    let extent = |handle: &BlockHandle| {
        let end = handle
            .offset
            .saturating_add(handle.size)
            .saturating_add(BLOCK_TRAILER_SIZE as u64);
        (handle.offset, end.min(size).saturating_sub(handle.offset))
    };
    let dropped = |handle: &BlockHandle, reason: String| {
        let (offset, len) = extent(handle);
        DroppedRange {
            file: path.clone(),
            offset,
            len,
            reason,
        }
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
    let mut index_entries = 0u64;
    index.seek_to_first();
    while index.valid() {
        index_entries += 1;
        let handle = BlockHandle::decode_from(&mut &index.value()[..]);
        index.next();
        let handle = match handle {
            Ok(handle) => handle,
            Err(e) => {
                salvage.unreadable.push(dropped(
                    &index_handle,
                    format!(
                        "entry {index_entries} of the index block: {}; the data block it points to cannot be found",
                        reason_of(&e, &path)
                    ),
                ));
                continue;
            }
        };
        let block = match read_block(&*file, size, &handle, true) {
            Ok(block) => block,
            Err(e) => {
                salvage.unreadable.push(dropped(
                    &handle,
                    format!("data block: {}", reason_of(&e, &path)),
                ));
                continue;
            }
        };
        let mut it = Arc::new(block).iter(cmp.clone());
        it.seek_to_first();
        // Entries that cannot be kept, by reason.
        let (mut bad_keys, mut out_of_order, mut bad_pointers, mut read) = (0u64, 0u64, 0u64, 0u64);
        // Entries up to a damaged one are kept; the rest of the block is not
        // readable.
        while it.valid() {
            read += 1;
            let key = it.key();
            // Entries the builder would refuse (out of order) are dropped too.
            let in_order = smallest.is_none() || cmp.compare(&largest, key) == Ordering::Less;
            // A blob pointer that does not decode is damage too.
            let parsed = parse_internal_key(key);
            let pointer = match parsed {
                Some(p) if p.value_type == ValueType::BlobIndex => {
                    BlobPointer::decode(it.value()).ok().map(|b| Some(b.file))
                }
                _ => Some(None),
            };
            match (parsed, in_order, pointer) {
                (Some(p), true, Some(blob)) => {
                    blob_files.extend(blob);
                    max_seq = max_seq.max(p.sequence);
                    if smallest.is_none() {
                        smallest = Some(key.to_vec());
                    }
                    largest.clear();
                    largest.extend_from_slice(key);
                    builder.add(key, it.value())?;
                    salvage.entries += 1;
                }
                (None, _, _) => bad_keys += 1,
                (_, false, _) => out_of_order += 1,
                (_, _, None) => bad_pointers += 1,
            }
            it.next();
        }
        for (n, what) in [
            (bad_keys, "the internal key does not parse"),
            (out_of_order, "out of key order"),
            (bad_pointers, "the blob pointer does not decode"),
        ] {
            if n > 0 {
                let entries = if n == 1 { "entry" } else { "entries" };
                salvage
                    .unreadable
                    .push(dropped(&handle, format!("{n} {entries} dropped: {what}")));
            }
        }
        if let Err(e) = it.status() {
            salvage.unreadable.push(dropped(
                &handle,
                format!(
                    "the entries after the first {read} of the data block: {}",
                    reason_of(&e, &path)
                ),
            ));
        }
    }
    if let Err(e) = index.status() {
        salvage.unreadable.push(dropped(
            &index_handle,
            format!(
                "the entries after the first {index_entries} of the index block, and the data blocks they point to: {}",
                reason_of(&e, &path)
            ),
        ));
    }
    match smallest {
        None => {
            builder.abandon();
            let _ = options.fs.remove_file(&table_file_name(dir, new_number));
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
            salvage.table = Some((meta, max_seq));
        }
    }
    Ok(salvage)
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
        let report = repair(dir, &options(&fs)).unwrap();
        // Records of 7 + 20, 7 + 19 and 7 + 21 bytes.
        let skipped: Vec<_> = report.logs[0]
            .skipped
            .iter()
            .map(|d| (d.offset, d.len, d.reason.as_str()))
            .collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert_eq!((skipped[0].0, skipped[0].1), (27, 26));
        assert!(skipped[0].2.contains("past the largest sequence number"));
        assert_eq!((skipped[1].0, skipped[1].1), (53, 28));
        assert!(skipped[1].2.contains("reuses sequence numbers"));
        assert_eq!((report.logs[0].batches, report.entries()), (1, 1));
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
        let report = repair(dir, &options(&fs)).unwrap();
        let damaged = &report.damaged_tables[0];
        assert_eq!(damaged.entries_salvaged, 1);
        let reasons: Vec<_> = damaged.unreadable.iter().map(|d| &d.reason).collect();
        assert_eq!(reasons, ["1 entry dropped: out of key order"]);
        assert_eq!(damaged.unreadable[0].offset, 0);
        let db = Db::open(dir, options(&fs)).unwrap();
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"v1"[..]));
    }
}
