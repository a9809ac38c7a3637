//! The table cache: open table files, by file number, bounded by
//! `max_open_files`. Opening a table reads its footer, index and filter once;
//! later reads of that table go straight to the block cache or the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::filename::{sst_table_file_name, table_file_name};
use crate::iter::InternalIterator;
use crate::options::Options;
use crate::sstable::{Table, TableIterator, TableOptions};

/// Files reserved for logs, the MANIFEST and other non-table uses.
const NON_TABLE_FILES: usize = 10;

/// Open tables of one database.
pub struct TableCache {
    dir: PathBuf,
    options: Options,
    table_options: TableOptions,
    // `quick_cache` is a well-kept concurrent cache; an open table is one entry
    // of weight one, so the bound is the count of open files.
    tables: quick_cache::sync::Cache<u64, Arc<Table>>,
}

impl TableCache {
    /// A cache for the tables of the database in `dir`.
    pub fn new(dir: &Path, options: &Options, table_options: TableOptions) -> TableCache {
        let entries = options
            .max_open_files
            .saturating_sub(NON_TABLE_FILES)
            .max(1);
        TableCache {
            dir: dir.to_path_buf(),
            options: options.clone(),
            table_options,
            tables: quick_cache::sync::Cache::new(entries),
        }
    }

    /// The open table for file `number` of `size` bytes, opening it if needed.
    ///
    /// A file whose size on disk is not `size` (the size the MANIFEST
    /// records) is corruption, reported before any of it is read: the
    /// table was cut short or overwritten, and a mapped table read past its
    /// real end would fault the process instead of failing.
    pub fn table(&self, number: u64, size: u64) -> Result<Arc<Table>> {
        if let Some(t) = self.tables.get(&number) {
            return Ok(t);
        }
        let fs = &self.options.fs;
        let mut path = table_file_name(&self.dir, number);
        let file = match fs.new_random_access_file(&path) {
            Ok(f) => f,
            Err(e) => {
                // Tables written by LevelDB before 1.14 use the `.sst` suffix.
                let old = sst_table_file_name(&self.dir, number);
                match fs.new_random_access_file(&old) {
                    Ok(f) => {
                        path = old;
                        f
                    }
                    Err(_) => return Err(e),
                }
            }
        };
        // (One `stat` per table opened; opened tables stay in the cache.)
        let actual = fs.file_size(&path)?;
        if actual != size {
            return Err(Error::corruption(
                &path,
                None,
                format!("table file is {actual} bytes, but the MANIFEST records {size} bytes"),
            ));
        }
        let table = Table::open(self.table_options.clone(), file, path, size)?;
        self.tables.insert(number, table.clone());
        Ok(table)
    }

    /// An iterator over the entries of table `number`, of the table's own type.
    pub fn table_iter(
        &self,
        number: u64,
        size: u64,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> Result<TableIterator> {
        Ok(self.table(number, size)?.iter(verify_checksums, fill_cache))
    }

    /// An iterator over the entries of table `number`.
    pub fn iter(
        &self,
        number: u64,
        size: u64,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> Result<Box<dyn InternalIterator>> {
        let table = self.table(number, size)?;
        Ok(Box::new(table.iter(verify_checksums, fill_cache)))
    }

    /// Forgets table `number` (after it was deleted).
    pub fn evict(&self, number: u64) {
        self.tables.remove(&number);
    }
}
