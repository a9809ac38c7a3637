//! Running a compaction: the input iterator over its files, the merge loop
//! that drops shadowed entries and tombstones, and the cutting of output
//! tables.
//!
//! Blob pointers are copied as they are, except those into the blob files
//! picked for garbage collection (`Compaction::gc_blob_files`, the oldest
//! live ones): their values are read (and checked), appended to the
//! compaction's own blob file (a pending output, created on the first such
//! value) and the new pointer is written instead. Once the tables that
//! pointed into an old blob file are all compacted, nothing does, and it
//! is deleted. (A table no compaction reaches, at the last level beyond
//! the key ranges still written, keeps its blob files alive: collection
//! rides on compactions and forces none.)

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::path::Path;

use crate::blob::format::BlobPointer;
use crate::blob::reader::BlobCache;
use crate::blob::writer::BlobWriter;
use crate::error::{Error, Result};
use crate::filename::blob_file_name;
use crate::filename::table_file_name;
use crate::iter::InternalIterator;
use crate::keys::{
    parse_internal_key, InternalKey, InternalKeyComparator, SequenceNumber, ValueType,
    MAX_SEQUENCE_NUMBER,
};
use crate::options::Options;
use crate::sstable::{TableBuilder, TableOptions};
use crate::table_cache::TableCache;
use crate::version::edit::FileMetaData;
use crate::version::set::VersionSet;
use crate::version::version::level_iterator;

use super::Compaction;

/// What a compaction job needs from the database it runs in. The database
/// implements it; the job is generic over it (static dispatch).
pub trait JobHost {
    /// The database's options (its file system, among them).
    fn options(&self) -> &Options;
    /// The database directory.
    fn dir(&self) -> &Path;
    /// The internal key order.
    fn icmp(&self) -> &InternalKeyComparator;
    /// How output tables are built.
    fn table_options(&self) -> &TableOptions;
    /// The table cache, to check that an output table opens.
    fn table_cache(&self) -> &TableCache;
    /// True once the database is closing: the job stops.
    fn shutting_down(&self) -> bool;
    /// Flushes the immutable memtable if one is waiting: called before each
    /// entry, since a flush is more urgent than a compaction.
    fn flush_waiting_memtable(&self) -> Result<()>;
    /// A new file number for an output table, recorded as a pending output
    /// so that it is not deleted while it is written.
    fn new_output_number(&self) -> u64;
    /// Reads blob files (for garbage collection).
    fn blob_cache(&self) -> &BlobCache;
}

/// An output table of a compaction in progress.
pub struct Output {
    number: u64,
    builder: TableBuilder,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    /// The blob files the table's pointers lead into.
    blob_files: BTreeSet<u64>,
}

/// The merge loop: copies the entries of `input` into output tables at
/// `c.level + 1`, dropping entries hidden by a newer one for the same user
/// key that no snapshot at or above `smallest_snapshot` can see, and
/// deletions with nothing older below them. Outputs are cut at
/// `c.max_output_file_size()` or when they would overlap too much of the
/// grandparent level; finished ones are pushed to `outputs`, the one being
/// written is left in `current` on an error (see [`abandon`]).
pub fn merge<H: JobHost>(
    host: &H,
    c: &mut Compaction,
    input: &mut dyn InternalIterator,
    smallest_snapshot: SequenceNumber,
    current: &mut Option<Output>,
    outputs: &mut Vec<FileMetaData>,
) -> Result<()> {
    let ucmp = host.icmp().user_comparator().clone();
    input.seek_to_first();
    let mut current_user_key: Option<Vec<u8>> = None;
    let mut last_sequence_for_key = MAX_SEQUENCE_NUMBER;
    // Scratch for garbage collection: a value read, the new pointer.
    let mut gc_value = Vec::new();
    let mut gc_pointer = Vec::new();
    while input.valid() && !host.shutting_down() {
        // A flush is more urgent than this compaction.
        host.flush_waiting_memtable()?;
        let key = input.key();
        if current.is_some() && c.should_stop_before(key) {
            finish_output(host, current, outputs)?;
        }
        let mut drop = false;
        let mut blob = false;
        match parse_internal_key(key) {
            None => {
                // Keep corrupt keys; do not hide anything behind them.
                current_user_key = None;
                last_sequence_for_key = MAX_SEQUENCE_NUMBER;
            }
            Some(p) => {
                let first = current_user_key
                    .as_deref()
                    .is_none_or(|k| ucmp.compare(p.user_key, k) != Ordering::Equal);
                if first {
                    current_user_key = Some(p.user_key.to_vec());
                    last_sequence_for_key = MAX_SEQUENCE_NUMBER;
                }
                if last_sequence_for_key <= smallest_snapshot {
                    // Hidden by a newer entry for the same user key.
                    drop = true;
                } else if p.value_type == ValueType::Deletion
                    && p.sequence <= smallest_snapshot
                    && c.is_base_level_for_key(p.user_key)
                {
                    // No older data below, and newer data for the key
                    // sorts earlier in this input: the tombstone can go.
                    drop = true;
                }
                last_sequence_for_key = p.sequence;
                blob = p.value_type == ValueType::BlobIndex;
            }
        }
        if !drop {
            if current.is_none() {
                *current = Some(open_output(host, c)?);
            }
            if let Some(out) = current.as_mut() {
                if out.builder.num_entries() == 0 {
                    out.smallest.clear();
                    out.smallest.extend_from_slice(key);
                }
                out.largest.clear();
                out.largest.extend_from_slice(key);
                let mut value = input.value();
                if blob {
                    // Pointers are copied as they are (the table keeps their
                    // blob files alive), but for old blob files.
                    let mut p = BlobPointer::decode(value).map_err(|e| {
                        Error::corruption(
                            host.dir(),
                            None,
                            format!("compaction met a bad blob pointer: {e}"),
                        )
                    })?;
                    if c.gc_blob_files.contains(&p.file) {
                        let user_key = &key[..key.len() - 8];
                        host.blob_cache()
                            .read_value(user_key, value, &mut gc_value)?;
                        if c.gc_blob.is_none() {
                            let number = host.new_output_number();
                            c.gc_blob =
                                Some(BlobWriter::create(&*host.options().fs, host.dir(), number)?);
                        }
                        if let Some(w) = c.gc_blob.as_mut() {
                            p = w.add(user_key, &gc_value)?;
                            c.gc_values += 1;
                        }
                        gc_pointer.clear();
                        p.encode(&mut gc_pointer);
                        value = &gc_pointer;
                    }
                    out.blob_files.insert(p.file);
                }
                out.builder.add(key, value)?;
                if out.builder.file_size() >= c.max_output_file_size() {
                    finish_output(host, current, outputs)?;
                }
            }
        }
        input.next();
    }
    if host.shutting_down() {
        return Err(Error::Background(
            "shutting down during a compaction".into(),
        ));
    }
    input.status()?;
    finish_output(host, current, outputs)
}

/// Makes the compaction's own blob file durable (before the edit that
/// installs tables pointing into it), or after a failure removes it.
pub fn finish_gc_blob<H: JobHost>(host: &H, c: &mut Compaction, ok: bool) -> Result<()> {
    let Some(mut w) = c.gc_blob.take() else {
        return Ok(());
    };
    let number = w.number();
    let finished = if ok { w.finish() } else { Ok(()) };
    if !ok || finished.is_err() {
        drop(w);
        let _ = host
            .options()
            .fs
            .remove_file(&blob_file_name(host.dir(), number));
    }
    finished
}

/// Abandons the output table a failed job was writing, and removes its file.
pub fn abandon<H: JobHost>(host: &H, current: Option<Output>) {
    if let Some(out) = current {
        out.builder.abandon();
        let _ = host
            .options()
            .fs
            .remove_file(&table_file_name(host.dir(), out.number));
    }
}

/// Starts an output table of `c`, compressed as its output level asks.
fn open_output<H: JobHost>(host: &H, c: &Compaction) -> Result<Output> {
    let number = host.new_output_number();
    let file = host
        .options()
        .fs
        .new_writable_file(&table_file_name(host.dir(), number))?;
    let mut table_options = host.table_options().clone();
    table_options.compression = host
        .options()
        .compression_for_level(c.output_level(), c.output_is_bottommost());
    Ok(Output {
        number,
        builder: TableBuilder::new(table_options, file),
        smallest: Vec::new(),
        largest: Vec::new(),
        blob_files: BTreeSet::new(),
    })
}

fn finish_output<H: JobHost>(
    host: &H,
    current: &mut Option<Output>,
    outputs: &mut Vec<FileMetaData>,
) -> Result<()> {
    let Some(out) = current.take() else {
        return Ok(());
    };
    if out.builder.num_entries() == 0 {
        out.builder.abandon();
        let _ = host
            .options()
            .fs
            .remove_file(&table_file_name(host.dir(), out.number));
        return Ok(());
    }
    let size = out.builder.finish()?;
    // Verify that the table is usable.
    host.table_cache().table(out.number, size)?;
    let mut meta = FileMetaData::new(
        out.number,
        size,
        InternalKey::from_encoded(out.smallest),
        InternalKey::from_encoded(out.largest),
    );
    meta.blob_files = out.blob_files.into_iter().collect();
    outputs.push(meta);
    Ok(())
}

impl VersionSet {
    /// An iterator over every entry of the compaction's input files.
    ///
    /// It checks the checksum of every block it reads, whatever the options
    /// say: the compaction writes what it reads into new tables under fresh
    /// checksums, so damage it did not catch would be laundered into data
    /// that reads back as sound. A damaged block fails the compaction with a
    /// corruption error naming the file, and the input tables stay.
    pub fn make_input_iterator(&self, c: &Compaction) -> Box<dyn InternalIterator> {
        let verify = true;
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for (which, files) in c.inputs.iter().enumerate() {
            if files.is_empty() {
                continue;
            }
            if c.level + which == 0 {
                for f in files {
                    match self.table_cache.iter(f.number, f.file_size, verify, false) {
                        Ok(it) => children.push(it),
                        Err(e) => {
                            children.push(Box::new(crate::iter::EmptyIterator::with_error(e)))
                        }
                    }
                }
            } else {
                children.push(level_iterator(
                    &self.icmp,
                    &self.table_cache,
                    files,
                    verify,
                    false,
                ));
            }
        }
        Box::new(crate::iter::merging::MergingIterator::new(
            self.icmp.clone(),
            children,
        ))
    }
}
