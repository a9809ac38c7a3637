//! Writes the entries of an iterator (a memtable) into a new level-0 table.

use std::path::Path;
use std::sync::Arc;

use crate::blob::format::BlobPointer;
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::iter::InternalIterator;
use crate::keys::{
    append_internal_key, extract_user_key, parse_internal_key, InternalKey, ValueType,
    MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK,
};
use crate::options::Options;
use crate::sstable::{TableBuilder, TableOptions};
use crate::table_cache::TableCache;
use crate::version::edit::FileMetaData;

/// Builds table `number` in `dir` from every entry of `iter`. Returns its
/// metadata (with the blob files its pointers lead into), with `file_size` 0
/// (and no file left behind) when `iter` is empty.
/// The new table is opened once through the table cache to check it is usable.
pub fn build_table(
    dir: &Path,
    options: &Options,
    table_options: &TableOptions,
    table_cache: &Arc<TableCache>,
    iter: &mut dyn InternalIterator,
    number: u64,
) -> Result<FileMetaData> {
    build_table_range(
        dir,
        options,
        table_options,
        table_cache,
        iter,
        number,
        None,
        None,
    )
}

/// [`build_table`] from the entries of `iter` whose user keys are at least
/// `start` and less than `end` (`None`: unbounded), in the order of
/// `options.comparator`.
#[allow(clippy::too_many_arguments)]
pub fn build_table_range(
    dir: &Path,
    options: &Options,
    table_options: &TableOptions,
    table_cache: &Arc<TableCache>,
    iter: &mut dyn InternalIterator,
    number: u64,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<FileMetaData> {
    let path = table_file_name(dir, number);
    match start {
        Some(start) => {
            let mut target = Vec::with_capacity(start.len() + 8);
            append_internal_key(&mut target, start, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
            iter.seek(&target);
        }
        None => iter.seek_to_first(),
    }
    let in_range = |iter: &dyn InternalIterator| {
        iter.valid()
            && end.is_none_or(|end| {
                options
                    .comparator
                    .compare(extract_user_key(iter.key()), end)
                    == std::cmp::Ordering::Less
            })
    };
    if !in_range(iter) {
        iter.status()?;
        return Ok(FileMetaData::new(
            number,
            0,
            InternalKey::default(),
            InternalKey::default(),
        ));
    }
    let result = (|| -> Result<FileMetaData> {
        let file = options.fs.new_writable_file(&path)?;
        let mut builder = TableBuilder::new(table_options.clone(), file);
        let smallest = InternalKey::from_encoded(iter.key().to_vec());
        let mut largest = Vec::new();
        let mut blob_files = std::collections::BTreeSet::new();
        while in_range(iter) {
            if parse_internal_key(iter.key()).is_some_and(|p| p.value_type == ValueType::BlobIndex)
            {
                let p = BlobPointer::decode(iter.value()).map_err(|e| {
                    Error::corruption(dir, None, format!("a flush met a bad blob pointer: {e}"))
                })?;
                blob_files.insert(p.file);
            }
            largest.clear();
            largest.extend_from_slice(iter.key());
            builder.add(iter.key(), iter.value())?;
            iter.next();
        }
        iter.status()?;
        let size = builder.finish()?;
        let mut meta =
            FileMetaData::new(number, size, smallest, InternalKey::from_encoded(largest));
        meta.blob_files = blob_files.into_iter().collect();
        // Verify that the table is usable.
        table_cache.table(number, size)?;
        Ok(meta)
    })();
    if result.is_err() {
        let _ = options.fs.remove_file(&path);
    }
    result
}
