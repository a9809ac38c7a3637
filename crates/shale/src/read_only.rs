//! Read-only opening: [`Db::open_read_only`].
//!
//! The database is opened through a copy-on-write layer over the options'
//! file system: every read goes to the real files, and everything recovery
//! writes (the table made from the logs, a new MANIFEST and CURRENT, the
//! info log) goes to memory, as do the removals of files recovery finds
//! obsolete. No lock is taken, so a database another process (Shale or
//! LevelDB) holds open can be read as its files stood at the open.
//!
//! Recovery's last write is the rename that installs CURRENT; from then on
//! the layer is sealed: it refuses to create files and to append to the
//! write-ahead log, so writes, flushes and compactions fail (with
//! [`Error::NotSupported`]) instead of copying the database into memory.
//! The first such failure becomes the database's sticky background error,
//! as any failed write does; reads go on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::env::{FileLock, FileSystem, MemFs, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};
use crate::{Db, Options};

/// How often an open is retried when a file the MANIFEST names vanished
/// between reading the MANIFEST and opening the file (another process
/// compacting the database meanwhile).
const RETRIES: usize = 5;

impl Db {
    /// Opens the existing database in `path` for reading only: no lock is
    /// taken and no file is created, changed or removed.
    ///
    /// Recovery runs as in [`Db::open`], but in memory: the MANIFEST is
    /// read, and the logs it does not cover are replayed into a table kept
    /// in memory. A database another process holds open (Shale or LevelDB)
    /// can be opened this way and shows its contents as of the open; a
    /// file that process removes meanwhile (by compacting) makes the open
    /// retry a few times, and may make a later read fail.
    ///
    /// `create_if_missing`, `error_if_exists` and `reuse_logs` are ignored.
    /// Writes, [`Db::compact_range`] and background compactions fail with
    /// [`Error::NotSupported`].
    ///
    /// ```
    /// use shale::{Db, Options};
    ///
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("db");
    /// let writer = Db::open(&path, Options { create_if_missing: true, ..Default::default() })?;
    /// writer.put(b"apple", b"red")?;
    ///
    /// // The writer holds the lock; a reader opens all the same.
    /// let reader = Db::open_read_only(&path, Options::default())?;
    /// assert_eq!(reader.get(b"apple")?.as_deref(), Some(&b"red"[..]));
    /// assert!(reader.put(b"pear", b"green").is_err());
    /// # Ok(()) }
    /// ```
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let dir = path.as_ref();
        let mut attempt = 0;
        loop {
            let overlay = Arc::new(ReadOnlyFs::new(options.fs.clone(), dir)?);
            let opts = Options {
                fs: overlay.clone(),
                create_if_missing: false,
                error_if_exists: false,
                reuse_logs: false,
                ..options.clone()
            };
            match Db::open(dir, opts) {
                Ok(db) => {
                    overlay.seal();
                    return Ok(db);
                }
                Err(e) if attempt + 1 < RETRIES && vanished(&e, &*options.fs) => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }
}

/// True if `e` names a file that does not exist (any more).
fn vanished(e: &Error, fs: &dyn FileSystem) -> bool {
    match e {
        Error::Corruption { file, .. } => !fs.exists(file),
        Error::Io { path, source } => {
            source.kind() == std::io::ErrorKind::NotFound && !fs.exists(path)
        }
        _ => false,
    }
}

fn read_only_error(path: &Path) -> Error {
    Error::NotSupported(format!(
        "{}: the database is open read-only",
        path.display()
    ))
}

/// The copy-on-write layer: reads from `lower` unless `upper` (memory) has
/// the file or it was removed.
struct ReadOnlyFs {
    lower: Arc<dyn FileSystem>,
    upper: MemFs,
    /// Files of `lower` removed or renamed away in the layer.
    hidden: Mutex<HashSet<PathBuf>>,
    sealed: Arc<AtomicBool>,
    current: PathBuf,
}

impl ReadOnlyFs {
    fn new(lower: Arc<dyn FileSystem>, dir: &Path) -> Result<ReadOnlyFs> {
        let upper = MemFs::new();
        upper.create_dir_all(dir)?;
        Ok(ReadOnlyFs {
            lower,
            upper,
            hidden: Mutex::new(HashSet::new()),
            sealed: Arc::new(AtomicBool::new(false)),
            current: dir.join("CURRENT"),
        })
    }

    fn seal(&self) {
        self.sealed.store(true, Ordering::Release);
    }

    fn is_sealed(&self) -> bool {
        self.sealed.load(Ordering::Acquire)
    }

    fn hidden(&self) -> std::sync::MutexGuard<'_, HashSet<PathBuf>> {
        self.hidden.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `path` is to be read from the real file system.
    fn in_lower(&self, path: &Path) -> bool {
        !self.upper.exists(path) && !self.hidden().contains(path)
    }

    fn create(&self, path: &Path) -> Result<()> {
        if self.is_sealed() {
            return Err(read_only_error(path));
        }
        self.hidden().insert(path.to_path_buf());
        Ok(())
    }
}

impl FileSystem for ReadOnlyFs {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        if self.in_lower(path) {
            self.lower.new_sequential_file(path)
        } else {
            self.upper.new_sequential_file(path)
        }
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        if self.in_lower(path) {
            self.lower.new_random_access_file(path)
        } else {
            self.upper.new_random_access_file(path)
        }
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path)?;
        let file = self.upper.new_writable_file(path)?;
        Ok(Box::new(SealedAppends {
            file,
            sealed: self.sealed.clone(),
            path: path.to_path_buf(),
            log: false,
        }))
    }

    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path)?;
        let file = self.upper.new_writable_file(path)?;
        Ok(Box::new(SealedAppends {
            file,
            sealed: self.sealed.clone(),
            path: path.to_path_buf(),
            log: true,
        }))
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        // Recovery appends only with `reuse_logs`, which is off. It opens
        // the blob files the recovered tables point into only to sync them;
        // the layer never changes a file below it, so that sync has nothing
        // to do.
        if self.in_lower(path) && self.lower.exists(path) {
            return Ok(Box::new(Unchanged(path.to_path_buf())));
        }
        Err(read_only_error(path))
    }

    fn exists(&self, path: &Path) -> bool {
        self.upper.exists(path) || (!self.hidden().contains(path) && self.lower.exists(path))
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names: Vec<String> = {
            let hidden = self.hidden();
            self.lower
                .children(dir)?
                .into_iter()
                .filter(|n| !hidden.contains(&dir.join(n)))
                .collect()
        };
        if let Ok(extra) = self.upper.children(dir) {
            for n in extra {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        Ok(names)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let in_upper = self.upper.remove_file(path).is_ok();
        let mut hidden = self.hidden();
        if !hidden.contains(path) && self.lower.exists(path) {
            hidden.insert(path.to_path_buf());
            return Ok(());
        }
        if in_upper {
            Ok(())
        } else {
            Err(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ))
        }
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.upper.create_dir_all(path)
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        Err(read_only_error(path))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        if self.in_lower(path) {
            self.lower.file_size(path)
        } else {
            self.upper.file_size(path)
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        if self.is_sealed() {
            return Err(read_only_error(to));
        }
        if self.in_lower(from) {
            // A real file renamed (the info log rotated): copy it up.
            let data = crate::env::read_file(&*self.lower, from)?;
            let mut f = self.upper.new_writable_file(to)?;
            f.append(&data)?;
            f.close()?;
            self.hidden().insert(from.to_path_buf());
        } else {
            self.upper.rename(from, to)?;
        }
        self.hidden().insert(to.to_path_buf());
        self.seal_if_current(to);
        Ok(())
    }

    fn lock(&self, _path: &Path) -> Result<Box<dyn FileLock>> {
        Ok(Box::new(NoLock))
    }

    fn sync_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

impl ReadOnlyFs {
    /// Seals the layer when recovery installs its CURRENT, its last write
    /// (see the module comment): before the background thread starts, so
    /// that it can never write a table.
    fn seal_if_current(&self, to: &Path) {
        if to == self.current {
            self.seal();
        }
    }
}

/// A file below the layer opened for appending: appends are refused,
/// syncing has nothing to make durable.
struct Unchanged(PathBuf);

impl WritableFile for Unchanged {
    fn append(&mut self, _data: &[u8]) -> Result<()> {
        Err(read_only_error(&self.0))
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A file of the layer; once the layer is sealed, appends to the
/// write-ahead log fail.
struct SealedAppends {
    file: Box<dyn WritableFile>,
    sealed: Arc<AtomicBool>,
    path: PathBuf,
    log: bool,
}

impl WritableFile for SealedAppends {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.log && self.sealed.load(Ordering::Acquire) {
            return Err(read_only_error(&self.path));
        }
        self.file.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.file.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }
    fn close(&mut self) -> Result<()> {
        self.file.close()
    }
}

/// The lock a read-only open "takes": none.
struct NoLock;
impl FileLock for NoLock {}
