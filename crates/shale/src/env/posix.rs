//! The real file system, through `std::fs`.
//!
//! Writable files keep a 64 KiB user-space buffer so that small appends (log
//! records, table blocks) cost no system call; `flush` hands the buffer to the
//! kernel and `sync` adds an fdatasync. An append of [`DIRECT_APPEND_MIN`]
//! bytes or more (a block holding a large value) is not copied into the
//! buffer: it goes to the kernel at once, together with what is buffered
//! before it, in one `writev`.
//!
//! Log files are written through a shared memory mapping of space reserved
//! ahead with `posix_fallocate`, one [`LOG_CHUNK`] at a time: an append is a
//! copy into the page cache, with no system call, and is as safe against a
//! crash of the process as a `write` (the pages belong to the file, not to
//! the process). `sync` is an fdatasync; `close` trims the unused reserve.
//! A log cut short by a crash ends in zeros, which the log format reads as
//! padding (LevelDB's reader does the same). Appends of a page or more go
//! through `pwrite` into the reserved space instead: for them one system call
//! is cheaper than a page fault per page. Where space cannot be reserved
//! (a file system without fallocate) the log falls back to plain writes.
//!
//! Blob files (`new_blob_file`), written in large appends on behalf of the
//! caller of a `put`, reserve space ahead of the data with `fallocate`
//! (`FALLOC_FL_KEEP_SIZE`, so the size stays at the data) a
//! [`BLOB_RESERVE_STEP`] at a time, and hand their write-back hints to a
//! thread of their own: writing into reserved space skips ext4's delayed
//! allocation on every page, and `sync_file_range` submits the I/O on the
//! thread that calls it. Together these were a quarter to a third of a
//! 100 KB `put` (docs/benchmarks.md, "Value separation").
//! `close` releases the unused reserve (a truncate to the size).
//!
//! Random-access files (tables) are mapped into memory, up to
//! [`MAX_MAPPED_FILES`] at once, so that a block read is a slice of the
//! mapping instead of a `pread` system call and a copy; beyond that budget,
//! or where mapping fails, they are read with `pread`.
//!
//! A mapping covers the file as it is when opened, and every read is
//! bounded by the mapping's length, so a file that is already short reads as
//! short (an error), never past its end. The table cache also compares each
//! table's size on disk with the size the MANIFEST records before using it
//! (`db/table_cache.rs`), so a table cut short while the database was closed
//! is reported as corruption naming the file and both sizes. What remains is
//! a file that shrinks *while* it is mapped: touching a page past its new
//! end raises SIGBUS, which no error return can catch. The engine never
//! writes or truncates a table once it is opened for reading (it unlinks
//! obsolete tables, which leaves their mappings intact), so only another
//! program truncating a live table in place could cause it, the same
//! exposure LevelDB accepts for its mapped tables. Mapping is kept because
//! it is what makes block reads cheap (a cache miss costs no system call
//! and no copy); the risk is documented in `docs/architecture.md` rather
//! than traded for a `pread` per block read.
//!
//! A database's `LOCK` is held the way LevelDB holds it, with an `fcntl`
//! write lock, which keeps other processes out and is not inherited by
//! children, plus a table of lock files held by this process, which keeps
//! out a second open from this process under any spelling of the path.
//! There is no `flock`: a forked child would share it. [`PosixLock`] gives
//! the details and what releases the lock.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{FileLock, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

const WRITE_BUFFER: usize = 64 * 1024;

/// Appends at least this long skip the write buffer.
pub const DIRECT_APPEND_MIN: usize = WRITE_BUFFER / 4;

/// The operating system's file system.
///
/// ```
/// use shale::env::{FileSystem, PosixFs};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// // The default file system of `Options`.
/// let options = shale::Options { create_if_missing: true, fs: std::sync::Arc::new(PosixFs), ..Default::default() };
/// drop(shale::Db::open(dir.path(), options)?);
/// assert!(PosixFs.exists(&dir.path().join("CURRENT")));
/// # Ok(()) }
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixFs;

impl PosixFs {
    /// The real file system.
    ///
    /// ```
    /// use shale::env::{FileSystem, PosixFs};
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let fs = PosixFs::new();
    /// fs.create_dir_all(&dir.path().join("a/b"))?;
    /// assert_eq!(fs.children(dir.path())?, ["a"]);
    /// # Ok(()) }
    /// ```
    pub fn new() -> PosixFs {
        PosixFs
    }
}

/// Lock files held by this process (keys from [`lock_key`]), each with the
/// id of the process that locked it: `fcntl` locks are per process, so a
/// second lock in the same process must be caught here, before the file is
/// opened again (see [`PosixLock`]).
///
/// A child forked while a lock is held starts with a copy of this table but
/// holds none of its parent's `fcntl` locks: an entry counts only in the
/// process it names, and elsewhere the `fcntl` lock decides (it refuses
/// while the parent still holds the file, and grants once it has let go).
fn locked_paths() -> &'static Mutex<HashMap<LockKey, u32>> {
    static LOCKS: OnceLock<Mutex<HashMap<LockKey, u32>>> = OnceLock::new();
    LOCKS.get_or_init(|| Mutex::new(HashMap::new()))
}

struct PosixSequential {
    path: PathBuf,
    file: File,
}

impl SequentialFile for PosixSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.file.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.path, e)),
            }
        }
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let off =
            i64::try_from(n).map_err(|_| Error::InvalidArgument(format!("skip of {n} bytes")))?;
        self.file
            .seek(SeekFrom::Current(off))
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }
}

struct PosixRandomAccess {
    path: PathBuf,
    file: File,
}

impl RandomAccessFile for PosixRandomAccess {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.path, e)),
            }
        }
        Ok(done)
    }
}

/// Tables mapped at most at once (LevelDB's limit on 64-bit systems).
pub const MAX_MAPPED_FILES: usize = 1000;

/// Mappings currently held by this process.
static MAPPED_FILES: AtomicUsize = AtomicUsize::new(0);

/// One slot of the mapping budget, returned on drop.
struct MapSlot;

impl MapSlot {
    fn acquire() -> Option<MapSlot> {
        MAPPED_FILES
            .fetch_update(AtomicOrdering::AcqRel, AtomicOrdering::Acquire, |n| {
                (n < MAX_MAPPED_FILES).then_some(n + 1)
            })
            .ok()
            .map(|_| MapSlot)
    }
}

impl Drop for MapSlot {
    fn drop(&mut self) {
        MAPPED_FILES.fetch_sub(1, AtomicOrdering::AcqRel);
    }
}

/// A table file mapped into memory.
struct PosixMapped {
    map: memmap2::Mmap,
    _slot: MapSlot,
}

impl RandomAccessFile for PosixMapped {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let data: &[u8] = &self.map;
        let start = usize::try_from(offset).map_or(data.len(), |o| o.min(data.len()));
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn mapped(&self) -> Option<&[u8]> {
        Some(&self.map)
    }
}

/// Maps `file` if the budget allows; `None` means "read it with pread".
fn try_map(file: &File) -> Option<PosixMapped> {
    let slot = MapSlot::acquire()?;
    // SAFETY: the mapping is read-only and private to this handle. Mapped
    // files are tables, which the engine writes completely and closes before
    // opening them for reading and never modifies afterwards (it deletes
    // them only once no reader holds them; an unlinked file stays mapped
    // intact). Only a truncation by another program could invalidate the
    // pages, the same exposure LevelDB accepts for its mapped tables.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    Some(PosixMapped { map, _slot: slot })
}

/// Bytes of log reserved and mapped at a time.
pub const LOG_CHUNK: usize = 1 << 20;

/// Appends at least this long are written with `pwrite` into the reserved
/// space instead of through the mapping (both go to the same page cache).
const DIRECT_WRITE_MIN: usize = 4096;

/// A log file written through a shared mapping; see the module docs.
///
/// Invariant: `map`, when present, maps file bytes
/// `map_offset..map_offset + map.len()`, all reserved on disk; bytes before
/// `map_offset + pos` are the data written so far, the rest zeros.
struct PosixMappedLog {
    path: PathBuf,
    file: Option<File>,
    map: Option<memmap2::MmapMut>,
    map_offset: u64,
    pos: usize,
}

/// The error for a use of a file after `close`.
fn closed_file(path: &Path) -> Error {
    Error::io(path, std::io::Error::other("use of a closed file"))
}

impl PosixMappedLog {
    /// The open file, or an error naming it after `close`.
    fn file(&self) -> Result<&File> {
        self.file.as_ref().ok_or_else(|| closed_file(&self.path))
    }

    /// Reserves and maps the next chunk after the data written so far.
    fn next_chunk(&mut self, at_least: usize) -> Result<()> {
        let path = &self.path;
        let file = self.file()?;
        let offset = self.map_offset + self.pos as u64;
        // Mappings start at page boundaries: begin the chunk at the page
        // holding `offset` (the bytes before it in that page are already
        // written and are mapped again unchanged).
        let start = offset & !(page_size() as u64 - 1);
        let len = (LOG_CHUNK + (offset - start) as usize).max(at_least + (offset - start) as usize);
        reserve(file, start, len as u64).map_err(|e| Error::io(path, e))?;
        // SAFETY: the mapping is of bytes reserved just above in a file this
        // handle created and owns (no other writer in the engine); it is
        // dropped before the file is trimmed, and the engine never truncates
        // or rewrites a log while it is being written.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(start)
                .len(len)
                .map_mut(file)
        }
        .map_err(|e| Error::io(path, e))?;
        // The old mapping's pages stay dirty in the page cache, where the
        // next fdatasync finds them.
        self.map = Some(map);
        self.map_offset = start;
        self.pos = (offset - start) as usize;
        Ok(())
    }
}

/// The system page size.
fn page_size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(n)
            .ok()
            .filter(|n| n.is_power_of_two())
            .unwrap_or(4096)
    })
}

/// Allocates disk space for `len` bytes from `offset`, extending the file.
fn reserve(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(off), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(std::io::Error::other("log offset out of range"));
    };
    // SAFETY: the descriptor is open for as long as `file` is borrowed.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), off, n) } {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

impl WritableFile for PosixMappedLog {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let room = self.map.as_ref().map_or(0, |m| m.len() - self.pos);
            if room == 0 {
                self.next_chunk(data.len())?;
                continue;
            }
            let n = room.min(data.len());
            if n >= DIRECT_WRITE_MIN {
                // Large pieces go through the kernel: faulting every page of
                // the mapping in for writing costs more than one `pwrite`.
                let at = self.map_offset + self.pos as u64;
                self.file()?
                    .write_all_at(&data[..n], at)
                    .map_err(|e| Error::io(&self.path, e))?;
            } else {
                let Some(map) = self.map.as_mut() else {
                    continue;
                };
                map[self.pos..self.pos + n].copy_from_slice(&data[..n]);
            }
            self.pos += n;
            data = &data[n..];
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        // The data is in the page cache already.
        Ok(())
    }

    /// fdatasync writes back every dirty page of the file, those dirtied
    /// through a mapping included, and the reserved size.
    fn sync(&mut self) -> Result<()> {
        self.file()?
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))
    }

    fn close(&mut self) -> Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        self.map = None;
        file.set_len(self.map_offset + self.pos as u64)
            .map_err(|e| Error::io(&self.path, e))
    }
}

impl Drop for PosixMappedLog {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// A written file starts writing back every this many bytes.
const WRITEBACK_EVERY: u64 = 1 << 20;

/// A blob file reserves space ahead of its data this many bytes at a time.
const BLOB_RESERVE_STEP: u64 = 4 << 20;

struct PosixWritable {
    path: PathBuf,
    /// Shared with the write-back thread while a hint for it is queued.
    file: Option<Arc<File>>,
    buf: Vec<u8>,
    /// Bytes handed to the kernel so far.
    written: u64,
    /// Bytes before this offset have been queued for write-back.
    writeback_from: u64,
    /// Space is reserved ahead of the data this many bytes at a time (0:
    /// never; also once the file system refused a reservation).
    reserve_step: u64,
    /// Bytes from the start of the file reserved so far; `close` releases
    /// what lies past the data.
    reserved: u64,
    /// Start write-back on the write-back thread instead of the caller's.
    background_writeback: bool,
}

impl PosixWritable {
    fn new(path: &Path, file: File) -> PosixWritable {
        PosixWritable {
            path: path.to_path_buf(),
            file: Some(Arc::new(file)),
            buf: Vec::with_capacity(WRITE_BUFFER),
            written: 0,
            writeback_from: 0,
            reserve_step: 0,
            reserved: 0,
            background_writeback: false,
        }
    }

    fn file(&self) -> Result<&File> {
        let path = &self.path;
        self.file.as_deref().ok_or_else(|| closed_file(path))
    }

    /// Reserves space for `n` more bytes ahead of time, a step at a time,
    /// without changing the file's size: writing into reserved space skips
    /// the file system's allocation on every page (ext4's delayed
    /// allocation costs about a third of a large buffered write).
    fn reserve(&mut self, n: usize) {
        let end = self.written.saturating_add(n as u64);
        if self.reserve_step == 0 || end <= self.reserved {
            return;
        }
        let Some(file) = self.file.as_deref() else {
            return;
        };
        let new_end = end
            .div_ceil(self.reserve_step)
            .saturating_mul(self.reserve_step);
        if keep_size_fallocate(file, self.reserved, new_end - self.reserved).is_ok() {
            self.reserved = new_end;
        } else {
            // Not supported here, or no space: plain writes, which report
            // a full disk themselves.
            self.reserve_step = 0;
        }
    }

    fn write_out(&mut self, data: &[u8]) -> Result<()> {
        self.reserve(data.len());
        let mut file = self.file()?;
        file.write_all(data).map_err(|e| Error::io(&self.path, e))?;
        self.wrote(data.len());
        Ok(())
    }

    /// Writes the buffer, then `data`, with as few system calls as the
    /// kernel allows (one `writev`, usually), and empties the buffer.
    fn write_out_with_buffer(&mut self, data: &[u8]) -> Result<()> {
        let total = self.buf.len() + data.len();
        self.reserve(total);
        let Some(file) = self.file.as_deref() else {
            return Err(closed_file(&self.path));
        };
        write_all_vectored(file, &self.buf, data).map_err(|e| Error::io(&self.path, e))?;
        self.buf.clear();
        self.wrote(total);
        Ok(())
    }

    /// Counts `n` bytes handed to the kernel, starting write-back now and then.
    fn wrote(&mut self, n: usize) {
        self.written += n as u64;
        if self.written - self.writeback_from >= WRITEBACK_EVERY {
            // Start writing the new bytes back now, so that the final
            // fdatasync of a big file (a table) waits for little more than
            // its tail; the I/O overlaps with building the rest.
            if let Some(f) = &self.file {
                let (from, len) = (self.writeback_from, self.written - self.writeback_from);
                if self.background_writeback {
                    writeback_thread::start(f, from, len);
                } else {
                    start_writeback(f, from, len);
                }
            }
            self.writeback_from = self.written;
        }
    }
}

/// Writes `a` then `b` to `file` completely, with `writev`.
fn write_all_vectored(mut file: &File, a: &[u8], b: &[u8]) -> std::io::Result<()> {
    let (mut a, mut b) = (a, b);
    while !a.is_empty() || !b.is_empty() {
        let n = match file.write_vectored(&[std::io::IoSlice::new(a), std::io::IoSlice::new(b)]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let from_a = n.min(a.len());
        a = &a[from_a..];
        b = &b[(n - from_a).min(b.len())..];
    }
    Ok(())
}

/// Reserves `len` bytes of `file` from `offset` without changing its size
/// (`fallocate` with `FALLOC_FL_KEEP_SIZE`).
fn keep_size_fallocate(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(off), Ok(n)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    // SAFETY: the descriptor is open while `file` is borrowed; the call
    // only reserves blocks of the file.
    match unsafe { libc::fallocate64(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, off, n) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Starts write-back for files written on a thread that should not do it
/// itself (the writers of blob files, which write on behalf of the caller
/// of a `put`): `sync_file_range` submits the I/O on the calling thread,
/// which for a large buffered write costs as much as a third of the write.
/// One thread serves every database of the process; it is started on
/// first use.
mod writeback_thread {
    use std::fs::File;
    use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
    use std::sync::{Arc, OnceLock};

    /// Hints queued and not yet taken; beyond this a caller does its own.
    const QUEUE: usize = 64;

    type Hint = (Arc<File>, u64, u64);

    fn queue() -> Option<&'static SyncSender<Hint>> {
        static QUEUE_TX: OnceLock<Option<SyncSender<Hint>>> = OnceLock::new();
        QUEUE_TX
            .get_or_init(|| {
                let (tx, rx) = sync_channel::<Hint>(QUEUE);
                std::thread::Builder::new()
                    .name("shale-writeback".into())
                    .spawn(move || {
                        for (file, offset, len) in rx {
                            super::start_writeback(&file, offset, len);
                        }
                    })
                    .ok()
                    .map(|_| tx)
            })
            .as_ref()
    }

    /// Has the write-back of `len` bytes of `file` from `offset` started,
    /// on the write-back thread when it can take it, here otherwise.
    pub(super) fn start(file: &Arc<File>, offset: u64, len: u64) {
        let sent = queue().is_some_and(|tx| match tx.try_send((Arc::clone(file), offset, len)) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        });
        if !sent {
            super::start_writeback(file, offset, len);
        }
    }
}

/// Asks the kernel to start writing back `len` bytes from `offset` (a hint:
/// failures are ignored, and a later fdatasync reports real errors).
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    if let (Ok(off), Ok(n)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) {
        // SAFETY: the descriptor is open while `file` is borrowed; the call
        // only schedules I/O on it.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), off, n, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
}

impl WritableFile for PosixWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.file()?;
        if data.len() >= DIRECT_APPEND_MIN {
            // Large: no copy into the buffer.
            return self.write_out_with_buffer(data);
        }
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.flush()?;
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let r = self.write_out(&buf);
        self.buf = buf;
        self.buf.clear();
        r
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        let path = self.path.clone();
        self.file()?.sync_data().map_err(|e| Error::io(path, e))
    }

    fn close(&mut self) -> Result<()> {
        if self.file.is_none() {
            return Ok(());
        }
        let mut r = self.flush();
        if r.is_ok() && self.reserved > self.written {
            // Release the reserve past the data (the size is unchanged).
            r = self.file().and_then(|f| {
                f.set_len(self.written)
                    .map_err(|e| Error::io(&self.path, e))
            });
        }
        self.file = None;
        r
    }
}

impl Drop for PosixWritable {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// A held `LOCK`.
///
/// Two locks, each covering what the other cannot:
///
/// - An `fcntl` (POSIX record) write lock on the whole file, the lock
///   LevelDB takes: it keeps out every other process, Shale or LevelDB.
///   It belongs to the process, not to a descriptor, so `fork` does not
///   pass it on: a child, whether it execs at once, later or never, holds
///   none of it, and the parent can close and reopen the database while
///   children run.
/// - An entry in this process's table of held lock files
///   ([`locked_paths`]), since an `fcntl` lock does not exclude its own
///   process: a second lock by this process would be granted. The entry is
///   keyed by the identity of the directory (see [`lock_key`]), so every
///   spelling of the path meets it, and is checked before the file is
///   opened. A child forked while the lock is held inherits copies of the
///   table and of this value; neither counts in the child, which may lock
///   the file once the parent has let go (see [`locked_paths`] and `Drop`).
///
/// There is no `flock`. A `flock` belongs to the open file description,
/// which a child shares from `fork` until it execs or exits (descriptors
/// marked close-on-exec too, and children made by `posix_spawn` or
/// `vfork`): a reopen while some thread was starting a subprocess found
/// the lock still held by the child, and a child that never execs kept the
/// database locked for its lifetime, even after the parent ended. (Builds
/// of this engine that locked with `flock` alone are not kept out.)
///
/// The `fcntl` lock is released when this process closes *any* descriptor
/// of the file, not only this one. The engine therefore never opens `LOCK`
/// otherwise: a second open, `repair` and `destroy` are refused by the
/// table before opening it, a read-only open does not lock or read it, and
/// `destroy` removes it only after unlocking. Code of the application that
/// opens and closes `LOCK` of an open database (copying the directory file
/// by file, say) releases the lock, as with LevelDB.
struct PosixLock {
    key: LockKey,
    /// The process that took the lock (see [`locked_paths`]).
    pid: u32,
    /// The only descriptor of the file this process holds while the lock
    /// is held; closing it releases the `fcntl` lock.
    file: Option<File>,
}

impl FileLock for PosixLock {}

impl Drop for PosixLock {
    fn drop(&mut self) {
        if self.pid != std::process::id() {
            // A copy a forked child inherited: the child holds no lock
            // through it, but may hold its own lock on the same file, taken
            // once the parent let go, which closing this descriptor would
            // release. The descriptor is left open (closed when the child
            // execs or exits) and the child's table is left alone.
            if let Some(file) = self.file.take() {
                let _ = std::os::fd::IntoRawFd::into_raw_fd(file);
            }
            return;
        }
        // Release the OS lock before the table entry: once the entry is gone
        // another thread may open and lock the file again, and closing this
        // descriptor after that would release the new holder's lock.
        drop(self.file.take());
        if let Ok(mut held) = locked_paths().lock() {
            if held.get(&self.key) == Some(&self.pid) {
                held.remove(&self.key);
            }
        }
    }
}

/// A file's identity in the in-process lock table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum LockKey {
    /// The device and inode of the file's directory, and the file's name.
    InDir { dev: u64, ino: u64, name: OsString },
    /// The file's path as given, where its directory cannot be examined
    /// (then the file cannot be created either, and the lock fails).
    Path(PathBuf),
}

/// The key of `path` in the in-process lock table: the identity of its
/// directory (which exists once the database directory is created) and the
/// file name, so that every way of naming the same directory (a symbolic
/// link, `..`, a relative path, a bind mount, a hard-linked path) meets in
/// the table, whether or not the lock file exists yet, and without opening
/// the file.
fn lock_key(path: &Path) -> LockKey {
    use std::os::unix::fs::MetadataExt;
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(meta) = fs::metadata(dir) {
            return LockKey::InDir {
                dev: meta.dev(),
                ino: meta.ino(),
                name: name.to_os_string(),
            };
        }
    }
    LockKey::Path(path.to_path_buf())
}

/// The error for a lock held elsewhere (the kind callers test for).
fn lock_held(path: &Path, by: &str) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::WouldBlock, format!("lock held by {by}")),
    )
}

/// Takes LevelDB's lock on `file`: an `fcntl` (POSIX record) write lock on
/// the whole file, without waiting.
fn fcntl_lock(file: &File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are a
    // valid value; the fields that matter are set below.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = 0;
    // Length 0: to the end of the file, however long it grows.
    request.l_len = 0;
    loop {
        // SAFETY: the descriptor is open while `file` is borrowed, and
        // `request` is a valid `struct flock` that outlives the call.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &request) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EACCES) | Some(libc::EAGAIN) => {
                return Err(lock_held(path, "another process (fcntl lock)"))
            }
            _ => return Err(Error::io(path, e)),
        }
    }
}

fn open_writable(path: &Path, append: bool) -> Result<Box<dyn WritableFile>> {
    Ok(Box::new(open_posix_writable(path, append)?))
}

/// Opens `path` for writing: appending to it, or created or truncated.
fn open_posix_writable(path: &Path, append: bool) -> Result<PosixWritable> {
    let mut o = OpenOptions::new();
    o.write(true).create(true);
    if append {
        o.append(true);
    } else {
        o.truncate(true);
    }
    let file = o.open(path).map_err(|e| Error::io(path, e))?;
    Ok(PosixWritable::new(path, file))
}

impl FileSystem for PosixFs {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Box::new(PosixSequential {
            path: path.to_path_buf(),
            file,
        }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        if let Some(mapped) = try_map(&file) {
            return Ok(Arc::new(mapped));
        }
        Ok(Arc::new(PosixRandomAccess {
            path: path.to_path_buf(),
            file,
        }))
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        open_writable(path, false)
    }

    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let mut log = PosixMappedLog {
            path: path.to_path_buf(),
            file: Some(file),
            map: None,
            map_offset: 0,
            pos: 0,
        };
        match log.next_chunk(0) {
            Ok(()) => Ok(Box::new(log)),
            // No fallocate or no mapping here: plain writes.
            Err(_) => {
                drop(log);
                open_writable(path, false)
            }
        }
    }

    /// Reserves space 4 MB at a time and starts write-back on a shared
    /// write-back thread (see the module documentation).
    fn new_blob_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut w = open_posix_writable(path, false)?;
        w.reserve_step = BLOB_RESERVE_STEP;
        w.background_writeback = true;
        Ok(Box::new(w))
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        open_writable(path, true)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io(path, e))
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        fs::create_dir_all(path).map_err(|e| Error::io(path, e))
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        fs::remove_dir(path).map_err(|e| Error::io(path, e))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(fs::metadata(path).map_err(|e| Error::io(path, e))?.len())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| Error::io(from, e))
    }

    /// Locks `path` the way LevelDB 1.23 does, so that neither opens a
    /// directory the other is using: an `fcntl` write lock on the whole
    /// file (`F_SETLK`, no waiting), and, within this process, an entry in
    /// a table of held lock files. No `flock` is taken, since a forked
    /// child would share it: `env/posix.rs` (`PosixLock`) gives the details
    /// and what would release the lock early.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let key = lock_key(path);
        let pid = std::process::id();
        {
            let mut held = locked_paths()
                .lock()
                .map_err(|_| Error::io(path, std::io::Error::other("lock table poisoned")))?;
            // An entry of another process was inherited through `fork`.
            if held.insert(key.clone(), pid) == Some(pid) {
                return Err(lock_held(path, "this process"));
            }
        }
        let result = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(path, e))
            .and_then(|file| fcntl_lock(&file, path).map(|()| file));
        // On failure the file is closed before the table entry goes, as in
        // `PosixLock::drop` (no lock was granted, so there is none to drop).
        match result {
            Ok(file) => Ok(Box::new(PosixLock {
                key,
                pid,
                file: Some(file),
            })),
            Err(e) => {
                if let Ok(mut held) = locked_paths().lock() {
                    held.remove(&key);
                }
                Err(e)
            }
        }
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = File::open(dir).map_err(|e| Error::io(dir, e))?;
        d.sync_all().map_err(|e| Error::io(dir, e))
    }
}
