//! An in-memory file system for tests: files are byte vectors in a map,
//! directories are implied by the paths of their files plus explicit creation.
//! Cloning a `MemFs` shares the same files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::{FileLock, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

type FileData = Arc<RwLock<Vec<u8>>>;

#[derive(Default)]
struct State {
    files: BTreeMap<PathBuf, FileData>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
}

/// A file system held in memory, for tests: clones share the same files.
///
/// ```
/// use shale::env::{FileSystem, MemFs};
/// use std::sync::Arc;
/// # fn main() -> shale::Result<()> {
/// let fs = MemFs::new();
/// let options = shale::Options { create_if_missing: true, fs: Arc::new(fs.clone()), ..Default::default() };
/// drop(shale::Db::open("/db", options)?);
/// assert!(fs.exists(std::path::Path::new("/db/CURRENT")));
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct MemFs {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for MemFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("MemFs")
            .field("files", &st.files.len())
            .field("dirs", &st.dirs.len())
            .finish_non_exhaustive()
    }
}

impl MemFs {
    /// An empty file system.
    ///
    /// ```
    /// use shale::env::{FileSystem, MemFs};
    /// use std::path::Path;
    /// # fn main() -> shale::Result<()> {
    /// let fs = MemFs::new();
    /// assert!(!fs.exists(Path::new("/db")));
    /// let options = shale::Options { create_if_missing: true, fs: std::sync::Arc::new(fs.clone()), ..Default::default() };
    /// let db = shale::Db::open("/db", options)?;
    /// db.put(b"k", b"v")?;
    /// assert!(fs.exists(Path::new("/db/CURRENT")));
    /// # Ok(()) }
    /// ```
    pub fn new() -> MemFs {
        MemFs::default()
    }

    fn file(&self, path: &Path) -> Result<FileData> {
        self.state
            .lock()
            .files
            .get(path)
            .cloned()
            .ok_or_else(|| not_found(path))
    }

    /// Overwrites a byte of a file (for corruption tests).
    ///
    /// ```
    /// use shale::env::{read_file, write_file_sync, MemFs};
    /// use std::path::Path;
    /// # fn main() -> shale::Result<()> {
    /// let fs = MemFs::new();
    /// write_file_sync(&fs, Path::new("/f"), b"abc")?;
    /// fs.corrupt_byte(Path::new("/f"), 1, b'X')?;
    /// assert_eq!(read_file(&fs, Path::new("/f"))?, b"aXc");
    /// assert!(fs.corrupt_byte(Path::new("/f"), 3, 0).is_err());
    /// # Ok(()) }
    /// ```
    pub fn corrupt_byte(&self, path: &Path, offset: usize, value: u8) -> Result<()> {
        let f = self.file(path)?;
        let mut data = f.write();
        match data.get_mut(offset) {
            Some(b) => {
                *b = value;
                Ok(())
            }
            None => Err(Error::InvalidArgument(format!(
                "offset {offset} past the end of {}",
                path.display()
            ))),
        }
    }

    /// Cuts a file to `len` bytes (for torn-write tests).
    ///
    /// ```
    /// use shale::env::{read_file, write_file_sync, MemFs};
    /// use std::path::Path;
    /// # fn main() -> shale::Result<()> {
    /// let fs = MemFs::new();
    /// write_file_sync(&fs, Path::new("/f"), b"abcdef")?;
    /// fs.truncate(Path::new("/f"), 2)?;
    /// assert_eq!(read_file(&fs, Path::new("/f"))?, b"ab");
    /// # Ok(()) }
    /// ```
    pub fn truncate(&self, path: &Path, len: usize) -> Result<()> {
        let f = self.file(path)?;
        f.write().truncate(len);
        Ok(())
    }
}

fn not_found(path: &Path) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
    )
}

struct MemSequential {
    data: FileData,
    pos: usize,
}

impl SequentialFile for MemSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let data = self.data.read();
        let start = self.pos.min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        self.pos = start + n;
        Ok(n)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        self.pos = self
            .pos
            .saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
        Ok(())
    }
}

struct MemRandomAccess {
    data: FileData,
}

impl RandomAccessFile for MemRandomAccess {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let data = self.data.read();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }
}

struct MemWritable {
    path: PathBuf,
    data: Option<FileData>,
}

impl WritableFile for MemWritable {
    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        match &self.data {
            Some(d) => {
                d.write().extend_from_slice(bytes);
                Ok(())
            }
            None => Err(Error::io(
                &self.path,
                std::io::Error::other("write to a closed file"),
            )),
        }
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        self.data = None;
        Ok(())
    }
}

struct MemLock {
    state: Arc<Mutex<State>>,
    path: PathBuf,
}

impl FileLock for MemLock {}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.state.lock().locks.remove(&self.path);
    }
}

impl MemFs {
    fn create(&self, path: &Path, truncate: bool) -> Result<Box<dyn WritableFile>> {
        let mut st = self.state.lock();
        let data = if truncate {
            let d: FileData = Arc::default();
            st.files.insert(path.to_path_buf(), d.clone());
            d
        } else {
            st.files.entry(path.to_path_buf()).or_default().clone()
        };
        Ok(Box::new(MemWritable {
            path: path.to_path_buf(),
            data: Some(data),
        }))
    }
}

impl FileSystem for MemFs {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        Ok(Box::new(MemSequential {
            data: self.file(path)?,
            pos: 0,
        }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(MemRandomAccess {
            data: self.file(path)?,
        }))
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path, true)
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path, false)
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.state.lock();
        st.files.contains_key(path) || st.dirs.contains(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let st = self.state.lock();
        if !st.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let names = st
            .files
            .keys()
            .chain(st.dirs.iter())
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        Ok(names)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.state
            .lock()
            .files
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        let mut st = self.state.lock();
        let mut p = Some(path);
        while let Some(d) = p {
            if d.as_os_str().is_empty() {
                break;
            }
            st.dirs.insert(d.to_path_buf());
            p = d.parent();
        }
        Ok(())
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        let mut st = self.state.lock();
        if st.files.keys().any(|p| p.parent() == Some(path)) {
            return Err(Error::io(
                path,
                std::io::Error::other("directory not empty"),
            ));
        }
        st.dirs
            .remove(path)
            .then_some(())
            .ok_or_else(|| not_found(path))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(self.file(path)?.read().len() as u64)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.state.lock();
        let data = st.files.remove(from).ok_or_else(|| not_found(from))?;
        st.files.insert(to.to_path_buf(), data);
        Ok(())
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let mut st = self.state.lock();
        if !st.locks.insert(path.to_path_buf()) {
            return Err(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::WouldBlock, "lock already held"),
            ));
        }
        st.files.entry(path.to_path_buf()).or_default();
        Ok(Box::new(MemLock {
            state: self.state.clone(),
            path: path.to_path_buf(),
        }))
    }

    fn sync_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}
