//! The file-system interface: every file the engine touches goes through a
//! [`FileSystem`]. [`PosixFs`] is the real one; [`MemFs`] keeps files in memory
//! for tests. No other module calls `std::fs`.

mod mem;
mod posix;

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;

pub use mem::MemFs;
pub use posix::PosixFs;

/// A file read from front to back (logs, MANIFEST).
///
/// ```
/// use shale::env::{write_file_sync, FileSystem, MemFs};
/// use std::path::Path;
/// # fn main() -> shale::Result<()> {
/// let fs = MemFs::new();
/// write_file_sync(&fs, Path::new("/f"), b"hello world")?;
/// let mut file = fs.new_sequential_file(Path::new("/f"))?;
/// file.skip(6)?;
/// let mut buf = [0u8; 16];
/// let n = file.read(&mut buf)?;
/// assert_eq!(&buf[..n], b"world");
/// assert_eq!(file.read(&mut buf)?, 0);
/// # Ok(()) }
/// ```
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; returns how many were read, 0 at the end.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
    /// Skips `n` bytes.
    fn skip(&mut self, n: u64) -> Result<()>;
}

/// A file read at arbitrary offsets by many threads at once (tables).
///
/// ```
/// use shale::env::{write_file_sync, FileSystem, MemFs};
/// use std::path::Path;
/// # fn main() -> shale::Result<()> {
/// let fs = MemFs::new();
/// write_file_sync(&fs, Path::new("/f"), b"hello world")?;
/// let file = fs.new_random_access_file(Path::new("/f"))?;
/// let mut buf = [0u8; 8];
/// // Short only at the end of the file.
/// assert_eq!(file.read_at(6, &mut buf)?, 5);
/// assert_eq!(&buf[..5], b"world");
/// # Ok(()) }
/// ```
pub trait RandomAccessFile: Send + Sync {
    /// Reads into `buf` from `offset`, as much as the file holds up to
    /// `buf.len()`; returns the count (short only at the end of the file).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;

    /// The whole file as one slice, when it is mapped into memory; readers
    /// then take their bytes from it without a copy or a system call.
    /// The default is `None`.
    fn mapped(&self) -> Option<&[u8]> {
        None
    }
}

/// A file written from front to back.
///
/// ```
/// use shale::env::{read_file, FileSystem, MemFs};
/// use std::path::Path;
/// # fn main() -> shale::Result<()> {
/// let fs = MemFs::new();
/// let mut file = fs.new_writable_file(Path::new("/f"))?;
/// file.append(b"hello ")?;
/// file.append(b"world")?;
/// file.sync()?;
/// file.close()?;
/// assert_eq!(read_file(&fs, Path::new("/f"))?, b"hello world");
/// # Ok(()) }
/// ```
pub trait WritableFile: Send {
    /// Appends `data` (may be buffered).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered data to the operating system.
    fn flush(&mut self) -> Result<()>;
    /// Flushes and makes the data durable (fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Flushes and closes; later calls fail. Dropping without `close` flushes on a best-effort basis.
    fn close(&mut self) -> Result<()>;
}

/// A held lock on a database directory's `LOCK` file; released on drop.
///
/// ```
/// use shale::env::{FileSystem, PosixFs};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let fs = PosixFs::new();
/// let path = dir.path().join("LOCK");
/// let lock = fs.lock(&path)?;
/// assert!(fs.lock(&path).is_err());
/// drop(lock);
/// let _again = fs.lock(&path)?;
/// # Ok(()) }
/// ```
pub trait FileLock: Send + Sync {}

/// Everything the engine needs from a file system. [`PosixFs`] is the
/// default; [`MemFs`] keeps a database in memory.
///
/// ```
/// use shale::env::{read_file, write_file_sync, FileSystem, MemFs};
/// use std::path::Path;
/// use std::sync::Arc;
///
/// # fn main() -> shale::Result<()> {
/// let fs = MemFs::new();
/// fs.create_dir_all(Path::new("/data"))?;
/// write_file_sync(&fs, Path::new("/data/hello"), b"world")?;
/// assert_eq!(read_file(&fs, Path::new("/data/hello"))?, b"world");
/// assert_eq!(fs.children(Path::new("/data"))?, ["hello"]);
///
/// // A database on it.
/// let options = shale::Options { create_if_missing: true, fs: Arc::new(fs), ..Default::default() };
/// let db = shale::Db::open("/db", options)?;
/// db.put(b"k", b"v")?;
/// # Ok(()) }
/// ```
pub trait FileSystem: Send + Sync + 'static {
    /// Opens an existing file for sequential reading.
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    /// Opens an existing file for positional reads.
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Creates (or truncates) a file for writing.
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Creates (or truncates) a write-ahead log file. Like
    /// [`new_writable_file`](FileSystem::new_writable_file), but the file
    /// may be extended ahead of the data with zeros, which the log format
    /// reads as padding; `close` trims them. The default is
    /// `new_writable_file`.
    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.new_writable_file(path)
    }
    /// Creates (or truncates) a blob file: a file written in large appends
    /// on behalf of the caller of a write, synced rarely. Like
    /// [`new_writable_file`](FileSystem::new_writable_file), but the file
    /// system may reserve space ahead of the data (without changing the
    /// file's size; `close` releases what was not used) and write back in
    /// the background. The default is `new_writable_file`.
    fn new_blob_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.new_writable_file(path)
    }
    /// Opens a file for appending, creating it if missing.
    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// True if `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Names (not paths) of the entries of directory `dir`.
    fn children(&self, dir: &Path) -> Result<Vec<String>>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Creates a directory and its parents; succeeds if it exists.
    fn create_dir_all(&self, path: &Path) -> Result<()>;
    /// Removes an empty directory.
    fn remove_dir(&self, path: &Path) -> Result<()>;
    /// Size of a file in bytes.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Atomically renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Takes an exclusive lock on `path` (created if missing), against this
    /// process and others. Fails if it is held.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// Makes directory entries (creations, renames) in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
}

/// Writes `data` to a new file at `path` and syncs it.
///
/// ```
/// use shale::env::{write_file_sync, FileSystem, MemFs};
/// use std::path::Path;
/// # fn main() -> shale::Result<()> {
/// let fs = MemFs::new();
/// write_file_sync(&fs, Path::new("/f"), b"data")?;
/// assert_eq!(fs.file_size(Path::new("/f"))?, 4);
/// # Ok(()) }
/// ```
pub fn write_file_sync(fs: &dyn FileSystem, path: &Path, data: &[u8]) -> Result<()> {
    let mut f = fs.new_writable_file(path)?;
    f.append(data)?;
    f.sync()?;
    f.close()
}

/// Reads a whole file into memory.
///
/// ```
/// use shale::env::{read_file, write_file_sync, PosixFs};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f");
/// write_file_sync(&PosixFs::new(), &path, b"data")?;
/// assert_eq!(read_file(&PosixFs::new(), &path)?, b"data");
/// assert!(read_file(&PosixFs::new(), &dir.path().join("missing")).is_err());
/// # Ok(()) }
/// ```
pub fn read_file(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    let mut f = fs.new_sequential_file(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// The default file system.
pub(crate) fn default_fs() -> Arc<dyn FileSystem> {
    Arc::new(PosixFs::new())
}

#[cfg(test)]
mod tests;
