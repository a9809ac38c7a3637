//! `FaultFs`: an in-memory [`FileSystem`] that tests can break.
//!
//! It models what a POSIX file system with ext4-like semantics promises
//! about durability, and nothing more:
//!
//! - A file's bytes are durable up to its last `sync`. Appends after it live
//!   in the "page cache" only.
//! - A directory entry (a creation, a rename, a removal) is durable only
//!   after `sync_dir` of its directory. A synced file whose entry was never
//!   synced is lost at a power cut; a rename not followed by a directory sync
//!   may be undone.
//! - Directories themselves (`create_dir_all`) are durable at once: the tests
//!   treat the database directory as existing before the database.
//!
//! [`FaultFs::power_cut`] takes the state a machine would find after losing
//! power at this instant ([`Cut`] says how much unsynced data survives), and
//! [`FaultFs::from_image`] boots a fresh file system from it.
//!
//! Every fallible call is an *operation* with a 1-based index (`exists` and
//! `SequentialFile::skip` are not counted: they cannot fail).
//! [`FaultFs::cut_at`] makes operation `k` and all later ones fail with EIO,
//! as if the machine died just before `k`; [`Fault`]s make chosen operations
//! fail with a chosen OS error, once or persistently.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale::env::{FileLock, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use shale::{Error, Result};

/// Linux's "I/O error".
pub const EIO: i32 = 5;
/// Linux's "No space left on device".
pub const ENOSPC: i32 = 28;

/// The kinds of operation, for counting and for choosing what fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// `new_writable_file`, `new_log_file`, `new_appendable_file`.
    Create,
    /// `new_sequential_file`, `new_random_access_file`.
    Open,
    /// `SequentialFile::read`, `RandomAccessFile::read_at`.
    Read,
    /// `WritableFile::append`.
    Append,
    /// `WritableFile::flush`.
    Flush,
    /// `WritableFile::sync`.
    Sync,
    /// `WritableFile::close`.
    Close,
    /// `rename`.
    Rename,
    /// `remove_file`, `remove_dir`.
    Remove,
    /// `create_dir_all`.
    CreateDir,
    /// `children`.
    List,
    /// `file_size`.
    Size,
    /// `lock`.
    Lock,
    /// `sync_dir`.
    SyncDir,
}

impl Op {
    /// Every kind.
    pub const ALL: [Op; 14] = [
        Op::Create,
        Op::Open,
        Op::Read,
        Op::Append,
        Op::Flush,
        Op::Sync,
        Op::Close,
        Op::Rename,
        Op::Remove,
        Op::CreateDir,
        Op::List,
        Op::Size,
        Op::Lock,
        Op::SyncDir,
    ];
}

/// A rule that makes matching operations fail with an OS error.
///
/// By default it matches every operation on every path and fires once, at
/// the first match; the builder methods narrow it.
#[derive(Clone, Debug)]
pub struct Fault {
    op: Option<Op>,
    path: Option<String>,
    not_path: Option<String>,
    from_index: u64,
    skip: u64,
    persistent: bool,
    errno: i32,
    partial: bool,
    seen: u64,
    fired: u64,
}

impl Fault {
    /// Fails with OS error `errno` (see [`EIO`], [`ENOSPC`]).
    pub fn new(errno: i32) -> Fault {
        Fault {
            op: None,
            path: None,
            not_path: None,
            from_index: 0,
            skip: 0,
            persistent: false,
            errno,
            partial: false,
            seen: 0,
            fired: 0,
        }
    }

    /// Matches only operations of kind `op`.
    pub fn on(mut self, op: Op) -> Fault {
        self.op = Some(op);
        self
    }

    /// Matches only paths containing `pattern` (e.g. `".log"`, `"MANIFEST"`).
    pub fn on_path(mut self, pattern: &str) -> Fault {
        self.path = Some(pattern.to_string());
        self
    }

    /// Matches no path containing `pattern`.
    pub fn except_path(mut self, pattern: &str) -> Fault {
        self.not_path = Some(pattern.to_string());
        self
    }

    /// Matches only operations with index `index` or later.
    pub fn at_or_after(mut self, index: u64) -> Fault {
        self.from_index = index;
        self
    }

    /// Lets the first `n` matching operations succeed.
    pub fn skip(mut self, n: u64) -> Fault {
        self.skip = n;
        self
    }

    /// Fails every matching operation after the skipped ones, not just one.
    pub fn persistent(mut self) -> Fault {
        self.persistent = true;
        self
    }

    /// A failing append first writes the first half of its data, as a short
    /// write that ran out of space would.
    pub fn partial(mut self) -> Fault {
        self.partial = true;
        self
    }

    fn matches(&self, op: Op, path: &Path, index: u64) -> bool {
        let path = path.to_string_lossy();
        self.op.is_none_or(|o| o == op)
            && index >= self.from_index
            && self.path.as_deref().is_none_or(|p| path.contains(p))
            && self.not_path.as_deref().is_none_or(|p| !path.contains(p))
    }

    /// True if this rule fires on a matching operation (counting it).
    fn fire(&mut self) -> bool {
        self.seen += 1;
        if self.seen <= self.skip || (!self.persistent && self.fired > 0) {
            return false;
        }
        self.fired += 1;
        true
    }
}

/// A fault that fired.
#[derive(Clone, Debug)]
pub struct Injected {
    /// The operation's index.
    pub index: u64,
    /// Its kind.
    pub op: Op,
    /// The file or directory it was on.
    pub path: PathBuf,
    /// The OS error it failed with.
    pub errno: i32,
}

impl fmt::Display for Injected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "op #{} {:?} on {} failed with errno {}",
            self.index,
            self.op,
            self.path.display(),
            self.errno
        )
    }
}

/// How much of what was not synced survives a power cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Nothing: files end at their last sync, directories hold what their
    /// last `sync_dir` saw.
    DropUnsynced,
    /// As `DropUnsynced`, except that the file of the last append keeps its
    /// unsynced bytes up to a random point inside that append: a torn write.
    TornTail,
    /// Some of it, as when the kernel writes pages back early: a random
    /// prefix (in order) of the unsynced directory changes is kept, and each
    /// file keeps a random prefix of its unsynced appends.
    KeepSome,
}

impl Cut {
    /// Every mode.
    pub const ALL: [Cut; 3] = [Cut::DropUnsynced, Cut::TornTail, Cut::KeepSome];
}

/// The durable contents of a file system: what a machine finds on boot.
/// (Images share the bytes of files that did not change between them.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// Every file and its bytes.
    pub files: BTreeMap<PathBuf, Arc<Vec<u8>>>,
    /// Every directory.
    pub dirs: BTreeSet<PathBuf>,
}

/// A file: what readers see, and what a power cut keeps.
struct FileData {
    data: Vec<u8>,
    /// Shared with the images taken since the last sync.
    durable: Arc<Vec<u8>>,
    /// True while `data` is `durable` followed by appended bytes (false after
    /// a truncation not yet synced).
    extends_durable: bool,
}

impl FileData {
    fn new(bytes: Arc<Vec<u8>>) -> FileData {
        FileData {
            data: bytes.to_vec(),
            durable: bytes,
            extends_durable: true,
        }
    }

    fn sync(&mut self) {
        if !self.extends_durable {
            self.durable = Arc::default();
            self.extends_durable = true;
        }
        let from = self.durable.len();
        if from < self.data.len() {
            Arc::make_mut(&mut self.durable).extend_from_slice(&self.data[from..]);
        }
    }
}

/// A file's identity: directory entries and open handles share it.
type Inode = Arc<Mutex<FileData>>;

/// A new file holding `bytes`, all of them durable.
fn new_inode(bytes: Arc<Vec<u8>>) -> Inode {
    Arc::new(Mutex::new(FileData::new(bytes)))
}

/// A change to one directory, durable once that directory is synced: each
/// (name, inode) pair links the name, each (name, None) unlinks it. A rename
/// in one directory is one change, so a power cut keeps all of it or none.
struct DirChange {
    dir: PathBuf,
    entries: Vec<(PathBuf, Option<Inode>)>,
}

/// An image taken for [`FaultFs::capture_at`].
pub struct Captured {
    /// The operation it was taken before.
    pub index: u64,
    /// How much unsynced data it kept.
    pub cut: Cut,
    /// The image.
    pub image: Image,
    /// The operations that led there, the last being the one that did not
    /// happen.
    pub trace: String,
}

/// The append a torn write may cut: `inode` took bytes `start..end`.
struct LastAppend {
    inode: Inode,
    start: usize,
    end: usize,
}

#[derive(Default)]
struct State {
    /// The entries the running system sees.
    live: BTreeMap<PathBuf, Inode>,
    /// The entries a power cut keeps.
    durable: BTreeMap<PathBuf, Inode>,
    /// Directory changes not yet synced, oldest first.
    pending: Vec<DirChange>,
    dirs: BTreeSet<PathBuf>,
    /// Directory changes are durable when made (see
    /// [`FaultFs::set_synchronous_directories`]).
    dirsync: bool,
    locks: BTreeSet<PathBuf>,
    last_append: Option<LastAppend>,
    /// Operations so far: the index of the latest.
    ops: u64,
    counts: BTreeMap<Op, u64>,
    cut_at: Option<u64>,
    /// Operations before which to take an image, and how.
    capture_at: BTreeMap<u64, (Cut, u64)>,
    captured: Vec<Captured>,
    faults: Vec<Fault>,
    injected: Vec<Injected>,
    /// The latest operations (up to the cut), for failure messages.
    trace: VecDeque<String>,
}

const TRACE_LEN: usize = 16;

/// A fault that fired on an operation.
struct Fired {
    error: Error,
    partial: bool,
}

impl State {
    /// Counts an operation and decides whether it fails.
    fn begin(&mut self, op: Op, path: &Path) -> std::result::Result<(), Fired> {
        self.ops += 1;
        let index = self.ops;
        *self.counts.entry(op).or_default() += 1;
        // The trace ends at the cut: what the dead machine was asked later
        // tells nothing.
        if self.cut_at.is_none_or(|k| index <= k) {
            if self.trace.len() == TRACE_LEN {
                self.trace.pop_front();
            }
            self.trace
                .push_back(format!("#{index} {op:?} {}", path.display()));
        }
        if let Some((cut, seed)) = self.capture_at.remove(&index) {
            let image = self.image(cut, seed);
            let trace = self.trace();
            self.captured.push(Captured {
                index,
                cut,
                image,
                trace,
            });
        }
        if self.cut_at.is_some_and(|k| index >= k) {
            return Err(Fired {
                error: Error::io(
                    path,
                    std::io::Error::new(
                        std::io::Error::from_raw_os_error(EIO).kind(),
                        format!("the machine is down (cut at operation {index})"),
                    ),
                ),
                partial: false,
            });
        }
        let fired = self
            .faults
            .iter_mut()
            .filter(|f| f.matches(op, path, index))
            .find_map(|f| f.fire().then_some((f.errno, f.partial)));
        match fired {
            None => Ok(()),
            Some((errno, partial)) => {
                self.injected.push(Injected {
                    index,
                    op,
                    path: path.to_path_buf(),
                    errno,
                });
                Err(Fired {
                    error: Error::io(path, std::io::Error::from_raw_os_error(errno)),
                    partial,
                })
            }
        }
    }

    fn check_dir(&self, dir: &Path) -> Result<()> {
        if self.dirs.contains(dir) {
            Ok(())
        } else {
            Err(not_found(dir))
        }
    }

    fn check_parent(&self, path: &Path) -> Result<()> {
        self.check_dir(path.parent().unwrap_or(Path::new("")))
    }

    fn file(&self, path: &Path) -> Result<Inode> {
        self.live.get(path).cloned().ok_or_else(|| not_found(path))
    }

    /// Records a directory change (already made to `live`).
    fn change(&mut self, path: &Path, inode: Option<Inode>) {
        self.record(DirChange {
            dir: parent(path),
            entries: vec![(path.to_path_buf(), inode)],
        });
    }

    /// Records a directory change, durable at once if directories are
    /// synchronous.
    fn record(&mut self, change: DirChange) {
        if self.dirsync {
            apply(&mut self.durable, &change);
        } else {
            self.pending.push(change);
        }
    }

    fn trace(&self) -> String {
        self.trace.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// What a power cut now would leave on disk.
    fn image(&self, cut: Cut, seed: u64) -> Image {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut namespace = self.durable.clone();
        if cut == Cut::KeepSome {
            let kept = rng.gen_range(0..=self.pending.len());
            for change in &self.pending[..kept] {
                apply(&mut namespace, change);
            }
        }
        let mut files = BTreeMap::new();
        for (path, inode) in &namespace {
            let f = inode.lock().unwrap();
            let mut bytes = f.durable.clone();
            match cut {
                Cut::DropUnsynced => {}
                Cut::TornTail => {
                    if let Some(last) = self
                        .last_append
                        .as_ref()
                        .filter(|a| Arc::ptr_eq(&a.inode, inode) && f.extends_durable)
                    {
                        let from = last.start.max(bytes.len());
                        if from < last.end && last.end <= f.data.len() {
                            let keep = rng.gen_range(from..last.end);
                            bytes = Arc::new(f.data[..keep].to_vec());
                        }
                    }
                }
                Cut::KeepSome => {
                    if f.extends_durable {
                        let keep = rng.gen_range(bytes.len()..=f.data.len());
                        if keep > bytes.len() {
                            bytes = Arc::new(f.data[..keep].to_vec());
                        }
                    } else if rng.gen() {
                        bytes = Arc::new(f.data.clone());
                    }
                }
            }
            files.insert(path.clone(), bytes);
        }
        Image {
            files,
            dirs: self.dirs.clone(),
        }
    }
}

fn parent(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new("")).to_path_buf()
}

fn not_found(path: &Path) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
    )
}

fn apply(namespace: &mut BTreeMap<PathBuf, Inode>, change: &DirChange) {
    for (name, inode) in &change.entries {
        match inode {
            Some(inode) => namespace.insert(name.clone(), inode.clone()),
            None => namespace.remove(name),
        };
    }
}

/// The file system. Clones share the same files.
#[derive(Clone, Default)]
pub struct FaultFs {
    state: Arc<Mutex<State>>,
}

impl FaultFs {
    /// An empty file system.
    pub fn new() -> FaultFs {
        FaultFs::default()
    }

    /// A file system holding `image`, all of it durable.
    pub fn from_image(image: &Image) -> FaultFs {
        let fs = FaultFs::new();
        {
            let mut st = fs.lock();
            st.dirs = image.dirs.clone();
            for (path, bytes) in &image.files {
                let inode = new_inode(bytes.clone());
                st.live.insert(path.clone(), inode.clone());
                st.durable.insert(path.clone(), inode);
            }
        }
        fs
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding the lock has failed already.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts operation `op` on `path`: counts it and fails it if a fault
    /// or the cut says so.
    fn begin(&self, op: Op, path: &Path) -> Result<MutexGuard<'_, State>> {
        let mut st = self.lock();
        st.begin(op, path).map_err(|f| f.error)?;
        Ok(st)
    }

    /// Makes directory changes durable when they are made, as on a file
    /// system mounted with `dirsync`: what survives a power cut then depends
    /// only on the files' syncs.
    pub fn set_synchronous_directories(&self, on: bool) {
        self.lock().dirsync = on;
    }

    /// The number of operations so far.
    pub fn op_count(&self) -> u64 {
        self.lock().ops
    }

    /// The number of operations of each kind so far.
    pub fn op_counts(&self) -> BTreeMap<Op, u64> {
        self.lock().counts.clone()
    }

    /// Makes operation `k` (1-based) and every later one fail with EIO.
    pub fn cut_at(&self, k: u64) {
        self.lock().cut_at = Some(k);
    }

    /// Makes every operation from now on fail with EIO.
    pub fn cut_now(&self) {
        let mut st = self.lock();
        st.cut_at = Some(st.ops + 1);
    }

    /// True once an operation has been refused by the cut.
    pub fn is_cut(&self) -> bool {
        let st = self.lock();
        st.cut_at.is_some_and(|k| st.ops >= k)
    }

    /// Adds a fault rule.
    pub fn inject(&self, fault: Fault) {
        self.lock().faults.push(fault);
    }

    /// Removes every fault rule (not the cut).
    pub fn clear_faults(&self) {
        self.lock().faults.clear();
    }

    /// The faults that fired so far, in order.
    pub fn injected(&self) -> Vec<Injected> {
        self.lock().injected.clone()
    }

    /// The latest operations up to the cut, one per line, for failure
    /// messages.
    pub fn recent_ops(&self) -> String {
        self.lock().trace()
    }

    /// The files and directories the running system sees (unsynced data
    /// included), as an image.
    pub fn live_image(&self) -> Image {
        let st = self.lock();
        Image {
            files: st
                .live
                .iter()
                .map(|(p, inode)| (p.clone(), Arc::new(inode.lock().unwrap().data.clone())))
                .collect(),
            dirs: st.dirs.clone(),
        }
    }

    /// Loses power: every later operation fails, and the returned image is
    /// what survives on disk. `seed` drives the random choices of
    /// [`Cut::TornTail`] and [`Cut::KeepSome`].
    pub fn power_cut(&self, cut: Cut, seed: u64) -> Image {
        let mut st = self.lock();
        st.cut_at = Some(st.cut_at.map_or(st.ops + 1, |k| k.min(st.ops + 1)));
        st.image(cut, seed)
    }

    /// Takes, just before each operation whose index is a key of `points`,
    /// the image a power cut there would leave (with the cut mode and seed
    /// given), without stopping anything; [`FaultFs::captured`] returns them.
    pub fn capture_at(&self, points: BTreeMap<u64, (Cut, u64)>) {
        self.lock().capture_at = points;
    }

    /// The images taken so far for [`FaultFs::capture_at`], in order.
    pub fn captured(&self) -> Vec<Captured> {
        std::mem::take(&mut self.lock().captured)
    }

    fn create(&self, path: &Path, truncate: bool) -> Result<Box<dyn WritableFile>> {
        let mut st = self.begin(Op::Create, path)?;
        st.check_parent(path)?;
        let inode = match st.live.get(path).cloned() {
            Some(inode) => {
                if truncate {
                    let mut f = inode.lock().unwrap();
                    f.data.clear();
                    f.extends_durable = f.durable.is_empty();
                }
                inode
            }
            None => {
                let inode = new_inode(Arc::default());
                st.live.insert(path.to_path_buf(), inode.clone());
                st.change(path, Some(inode.clone()));
                inode
            }
        };
        Ok(Box::new(Handle {
            fs: self.clone(),
            path: path.to_path_buf(),
            inode,
            pos: 0,
            closed: false,
        }))
    }

    fn open(&self, path: &Path) -> Result<Handle> {
        let st = self.begin(Op::Open, path)?;
        let inode = st.file(path)?;
        Ok(Handle {
            fs: self.clone(),
            path: path.to_path_buf(),
            inode,
            pos: 0,
            closed: false,
        })
    }
}

/// An open file, for reading or writing.
struct Handle {
    fs: FaultFs,
    path: PathBuf,
    inode: Inode,
    /// The next byte a sequential read returns.
    pos: usize,
    closed: bool,
}

impl Handle {
    fn read_from(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        let _st = self.fs.begin(Op::Read, &self.path)?;
        let f = self.inode.lock().unwrap();
        let start = offset.min(f.data.len());
        let n = buf.len().min(f.data.len() - start);
        buf[..n].copy_from_slice(&f.data[start..start + n]);
        Ok(n)
    }

    /// Starts a write-side operation; fails on a closed file.
    fn begin_write(&self, op: Op) -> Result<MutexGuard<'_, State>> {
        let st = self.fs.begin(op, &self.path)?;
        if self.closed {
            return Err(Error::io(
                &self.path,
                std::io::Error::other("operation on a closed file"),
            ));
        }
        Ok(st)
    }
}

impl SequentialFile for Handle {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = self.read_from(self.pos, buf)?;
        self.pos += n;
        Ok(n)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        self.pos = self
            .pos
            .saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
        Ok(())
    }
}

impl RandomAccessFile for Handle {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_from(usize::try_from(offset).unwrap_or(usize::MAX), buf)
    }
}

impl WritableFile for Handle {
    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        let mut st = self.fs.lock();
        let (bytes, result) = match st.begin(Op::Append, &self.path) {
            Ok(()) => (bytes, Ok(())),
            Err(Fired { error, partial }) => (
                if partial {
                    &bytes[..bytes.len() / 2]
                } else {
                    &[][..]
                },
                Err(error),
            ),
        };
        if self.closed {
            return Err(Error::io(
                &self.path,
                std::io::Error::other("append to a closed file"),
            ));
        }
        if !bytes.is_empty() {
            let mut f = self.inode.lock().unwrap();
            let start = f.data.len();
            f.data.extend_from_slice(bytes);
            st.last_append = Some(LastAppend {
                inode: self.inode.clone(),
                start,
                end: f.data.len(),
            });
        }
        result
    }

    fn flush(&mut self) -> Result<()> {
        self.begin_write(Op::Flush).map(drop)
    }

    fn sync(&mut self) -> Result<()> {
        let _st = self.begin_write(Op::Sync)?;
        self.inode.lock().unwrap().sync();
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        drop(self.begin_write(Op::Close)?);
        self.closed = true;
        Ok(())
    }
}

/// A held lock; released on drop.
struct Lock {
    fs: FaultFs,
    path: PathBuf,
}

impl FileLock for Lock {}

impl Drop for Lock {
    fn drop(&mut self) {
        self.fs.lock().locks.remove(&self.path);
    }
}

impl FileSystem for FaultFs {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        Ok(Box::new(self.open(path)?))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(self.open(path)?))
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path, true)
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path, false)
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.lock();
        st.live.contains_key(path) || st.dirs.contains(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let st = self.begin(Op::List, dir)?;
        st.check_dir(dir)?;
        Ok(st
            .live
            .keys()
            .chain(st.dirs.iter())
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut st = self.begin(Op::Remove, path)?;
        st.live.remove(path).ok_or_else(|| not_found(path))?;
        st.change(path, None);
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        let mut st = self.begin(Op::CreateDir, path)?;
        let mut p = Some(path);
        while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
            if st.live.contains_key(d) {
                return Err(Error::io(d, std::io::Error::other("a file is in the way")));
            }
            st.dirs.insert(d.to_path_buf());
            p = d.parent();
        }
        Ok(())
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        let mut st = self.begin(Op::Remove, path)?;
        st.check_dir(path)?;
        let has_children = st
            .live
            .keys()
            .chain(st.dirs.iter())
            .any(|p| p.parent() == Some(path));
        if has_children {
            return Err(Error::io(
                path,
                std::io::Error::other("directory not empty"),
            ));
        }
        st.dirs.remove(path);
        Ok(())
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        let st = self.begin(Op::Size, path)?;
        let inode = st.file(path)?;
        let len = inode.lock().unwrap().data.len();
        Ok(len as u64)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.begin(Op::Rename, from)?;
        let inode = st.file(from)?;
        st.check_parent(to)?;
        st.live.remove(from);
        st.live.insert(to.to_path_buf(), inode.clone());
        if parent(from) == parent(to) {
            st.record(DirChange {
                dir: parent(to),
                entries: vec![(from.to_path_buf(), None), (to.to_path_buf(), Some(inode))],
            });
        } else {
            st.change(to, Some(inode));
            st.change(from, None);
        }
        Ok(())
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let mut st = self.begin(Op::Lock, path)?;
        st.check_parent(path)?;
        if st.locks.contains(path) {
            return Err(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::WouldBlock, "lock already held"),
            ));
        }
        if !st.live.contains_key(path) {
            let inode = new_inode(Arc::default());
            st.live.insert(path.to_path_buf(), inode.clone());
            st.change(path, Some(inode));
        }
        st.locks.insert(path.to_path_buf());
        Ok(Box::new(Lock {
            fs: self.clone(),
            path: path.to_path_buf(),
        }))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let mut st = self.begin(Op::SyncDir, dir)?;
        st.check_dir(dir)?;
        let pending = std::mem::take(&mut st.pending);
        let (synced, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|c| c.dir == dir);
        for change in &synced {
            apply(&mut st.durable, change);
        }
        st.pending = rest;
        Ok(())
    }
}

/// The OS error number of an I/O error, if `e` is one.
pub fn os_error(e: &Error) -> Option<i32> {
    match e {
        Error::Io { source, .. } => source.raw_os_error(),
        _ => None,
    }
}
