//! Python bindings for Shale, with the API of plyvel (the LevelDB binding):
//! `import shale as plyvel` runs plyvel code unchanged.
//!
//! Every call that reaches the engine runs with the GIL released, so that
//! Python threads run in parallel and so that the engine's own threads can
//! take the GIL (to call a comparator written in Python) while a Python
//! thread waits on an engine lock; the one exception is a write that the
//! engine can make at once without syncing (see [`do_write`]). Engine
//! objects (the database, cursors, snapshots) are dropped with the GIL
//! released too, for the same reason.
//!
//! A database's Python objects share one [`Shared`]: the engine handle,
//! which `close()` takes out, and the cursors and snapshots made from it,
//! which `close()` closes first. A child that outlives its database raises
//! `RuntimeError`, as plyvel's do.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyString, PyTuple, PyType};

// ---------------------------------------------------------------------------
// Errors

const DB_CLOSED: &str = "Database is closed";
const ITER_CLOSED: &str = "Database or iterator is closed";
const SNAPSHOT_CLOSED: &str = "Database or snapshot is closed";

/// An error raised by an engine call, before the GIL is taken back.
enum Failure {
    Engine(shale::Error),
    Closed(&'static str),
    Invalid,
    /// A panic inside the engine, caught before it reaches Python.
    Panic(String),
}

impl From<shale::Error> for Failure {
    fn from(e: shale::Error) -> Failure {
        Failure::Engine(e)
    }
}

type Res<T> = Result<T, Failure>;

static ERROR_CLASSES: [GILOnceCell<Py<PyType>>; 4] = [
    GILOnceCell::new(),
    GILOnceCell::new(),
    GILOnceCell::new(),
    GILOnceCell::new(),
];
const ERROR_NAMES: [&str; 4] = [
    "Error",
    "IOError",
    "CorruptionError",
    "IteratorInvalidError",
];

/// One of the exception classes that `shale/__init__.py` defines.
fn error_class(py: Python<'_>, which: usize) -> PyResult<&Bound<'_, PyType>> {
    let cell = ERROR_CLASSES[which].get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let module = py.import("shale")?;
        let class = module.getattr(ERROR_NAMES[which])?;
        Ok(class.downcast_into::<PyType>()?.unbind())
    })?;
    Ok(cell.bind(py))
}

fn raise(py: Python<'_>, which: usize, message: String) -> PyErr {
    match error_class(py, which) {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    }
}

fn engine_error(py: Python<'_>, e: shale::Error) -> PyErr {
    let which = match &e {
        shale::Error::Io { .. } => 1,
        shale::Error::Corruption { .. } => 2,
        _ => 0,
    };
    raise(py, which, e.to_string())
}

fn to_py(py: Python<'_>, f: Failure) -> PyErr {
    match f {
        Failure::Engine(e) => engine_error(py, e),
        Failure::Closed(msg) => PyRuntimeError::new_err(msg),
        Failure::Invalid => raise(py, 3, String::new()),
        Failure::Panic(msg) => raise(py, 0, format!("internal error: {msg}")),
    }
}

/// Runs `f` with the GIL released and turns its failure, or a panic, into
/// an exception.
fn unlocked<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: Send + FnOnce() -> Res<T>,
    T: Send,
{
    py.allow_threads(|| catching(f)).map_err(|e| to_py(py, e))
}

/// Runs `f`, turning a panic into a failure.
fn catching<T>(f: impl FnOnce() -> Res<T>) -> Res<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_owned());
        Err(Failure::Panic(msg))
    })
}

/// Drops an engine object with the GIL released (see the module's comment).
fn drop_unlocked<T: Send>(x: T) {
    Python::with_gil(|py| py.allow_threads(move || drop(x)));
}

// ---------------------------------------------------------------------------
// Arguments

/// The bytes of a bytes-like argument; `str` and `None` are refused with the
/// `TypeError` plyvel raises.
fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if obj.is_none() {
        return Err(PyTypeError::new_err(format!(
            "Argument '{name}' must not be None"
        )));
    }
    if !obj.is_instance_of::<PyString>() {
        if let Ok(buf) = PyBuffer::<u8>::get(obj) {
            return Ok(Cow::Owned(buf.to_vec(obj.py())?));
        }
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    Err(PyTypeError::new_err(format!(
        "Argument '{name}' has incorrect type (expected bytes, got {type_name})"
    )))
}

fn opt_bytes_arg<'a>(
    obj: Option<&'a Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<Cow<'a, [u8]>>> {
    match obj {
        Some(o) if !o.is_none() => bytes_arg(o, name).map(Some),
        _ => Ok(None),
    }
}

fn with_prefix(prefix: &[u8], key: Cow<'_, [u8]>) -> Vec<u8> {
    if prefix.is_empty() {
        return key.into_owned();
    }
    let mut k = Vec::with_capacity(prefix.len() + key.len());
    k.extend_from_slice(prefix);
    k.extend_from_slice(&key);
    k
}

fn prefixed<'a>(prefix: &[u8], key: Cow<'a, [u8]>) -> Cow<'a, [u8]> {
    if prefix.is_empty() {
        key
    } else {
        Cow::Owned(with_prefix(prefix, key))
    }
}

/// The smallest key greater than every key starting with `s`: `s` with its
/// last byte below 0xff incremented and the rest dropped; `None` when there
/// is none (`s` empty or all 0xff).
fn bytes_increment(s: &[u8]) -> Option<Vec<u8>> {
    let i = s.iter().rposition(|&b| b != 0xff)?;
    let mut out = s[..=i].to_vec();
    out[i] += 1;
    Some(out)
}

/// A database name: `str`, `bytes` or an `os.PathLike`.
fn path_arg(name: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    if let Ok(s) = name.downcast::<PyString>() {
        return Ok(PathBuf::from(s.to_str()?));
    }
    if let Ok(b) = name.downcast::<PyBytes>() {
        return Ok(PathBuf::from(OsStr::from_bytes(b.as_bytes())));
    }
    if name.hasattr("__fspath__")? {
        let p = name.py().import("os")?.call_method1("fspath", (name,))?;
        if p.is_instance_of::<PyString>() || p.is_instance_of::<PyBytes>() {
            return path_arg(&p);
        }
    }
    Err(PyTypeError::new_err(
        "'name' arg must be a byte string or a unicode string",
    ))
}

/// `compression=`: `None`, or `'snappy'` (plyvel's values), `'zstd'` or
/// `'lz4'` (Shale's), as `str` or `bytes`.
#[derive(Clone, Copy)]
struct Compression(shale::CompressionType);

impl Compression {
    const SNAPPY: Compression = Compression(shale::CompressionType::Snappy);
}

impl<'py> FromPyObject<'py> for Compression {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if obj.is_none() {
            return Ok(Compression(shale::CompressionType::None));
        }
        let name: String = if let Ok(b) = obj.downcast::<PyBytes>() {
            String::from_utf8_lossy(b.as_bytes()).into_owned()
        } else if let Ok(s) = obj.downcast::<PyString>() {
            s.to_str()?.to_owned()
        } else {
            return Err(PyTypeError::new_err(
                "'compression' must be None or a string",
            ));
        };
        match name.as_str() {
            "snappy" => Ok(Compression(shale::CompressionType::Snappy)),
            "zstd" => Ok(Compression(shale::CompressionType::Zstd)),
            "lz4" => Ok(Compression(shale::CompressionType::Lz4)),
            _ => Err(PyValueError::new_err(
                "'compression' must be None, 'snappy', 'zstd' or 'lz4'",
            )),
        }
    }
}

/// A comparator written in Python: `f(a, b)` returns a negative number, zero
/// or a positive number. An exception it raises cannot stop the engine's
/// comparison: it is reported through `sys.unraisablehook` and the keys
/// compare equal.
struct PyComparator {
    func: Py<PyAny>,
    name: String,
}

impl shale::Comparator for PyComparator {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        Python::with_gil(|py| {
            let func = self.func.bind(py);
            let result = func
                .call1((PyBytes::new(py, a), PyBytes::new(py, b)))
                .and_then(|r| {
                    if r.lt(0)? {
                        Ok(Ordering::Less)
                    } else if r.gt(0)? {
                        Ok(Ordering::Greater)
                    } else {
                        Ok(Ordering::Equal)
                    }
                });
            result.unwrap_or_else(|e| {
                e.write_unraisable(py, Some(func));
                Ordering::Equal
            })
        })
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// The options plyvel's `DB()` and `repair_db()` take.
#[allow(clippy::too_many_arguments)]
fn build_options(
    create_if_missing: bool,
    error_if_exists: bool,
    paranoid_checks: Option<bool>,
    write_buffer_size: Option<usize>,
    max_open_files: Option<usize>,
    lru_cache_size: Option<usize>,
    block_size: Option<usize>,
    block_restart_interval: Option<usize>,
    max_file_size: Option<usize>,
    compression: Compression,
    bloom_filter_bits: Option<i32>,
    comparator: Option<&Bound<'_, PyAny>>,
    comparator_name: Option<&Bound<'_, PyBytes>>,
) -> PyResult<shale::Options> {
    let mut o = shale::Options {
        create_if_missing,
        error_if_exists,
        ..Default::default()
    };
    if let Some(v) = paranoid_checks {
        o.paranoid_checks = v;
    }
    if let Some(v) = write_buffer_size {
        o.write_buffer_size = v;
    }
    if let Some(v) = max_open_files {
        o.max_open_files = v;
    }
    if let Some(v) = lru_cache_size {
        o.block_cache = Some(shale::Cache::new(v));
    }
    if let Some(v) = block_size {
        o.block_size = v;
    }
    if let Some(v) = block_restart_interval {
        o.block_restart_interval = v;
    }
    if let Some(v) = max_file_size {
        o.max_file_size = v;
    }
    o.compression = compression.0;
    // Unset: Shale's default, a bloom filter of 10 bits per key. Set, as
    // plyvel: 0 (or less) writes no filter.
    match bloom_filter_bits {
        None => {}
        Some(bits) if bits <= 0 => o.filter_policy = None,
        Some(bits) => {
            o.filter_policy = Some(Arc::new(shale::BloomFilterPolicy::new(bits as usize)));
        }
    }
    let comparator = comparator.filter(|c| !c.is_none());
    match (comparator, comparator_name) {
        (None, None) => {}
        (Some(func), Some(name)) => {
            if !func.is_callable() {
                return Err(PyTypeError::new_err(
                    "custom comparator object must be callable",
                ));
            }
            let name = std::str::from_utf8(name.as_bytes())
                .map_err(|_| PyValueError::new_err("'comparator_name' must be UTF-8"))?;
            o.comparator = Arc::new(PyComparator {
                func: func.clone().unbind(),
                name: name.to_owned(),
            });
        }
        _ => {
            return Err(PyValueError::new_err(
                "'comparator' and 'comparator_name' must be specified together",
            ))
        }
    }
    Ok(o)
}

// ---------------------------------------------------------------------------
// The shared state of one open database

/// Something made from a database that its `close()` closes first.
trait Child: Send + Sync {
    fn close(&self);
}

impl<T: Send> Child for Mutex<Option<T>> {
    fn close(&self) {
        drop(self.lock().take());
    }
}

struct Shared {
    /// `None` once closed. Taken for reading (recursively: a Python
    /// comparator may read the database) by every call, and for writing by
    /// `close()`, which so waits for the calls under way.
    db: RwLock<Option<shale::Db>>,
    /// The database's order, for the iterators' bounds.
    cmp: Arc<dyn shale::Comparator>,
    /// Whether that order is the engine's own rather than a Python
    /// function: only then may a write run with the GIL held (see
    /// [`do_write`]).
    native_order: bool,
    children: Mutex<Vec<Weak<dyn Child>>>,
}

impl Shared {
    /// Runs `f` on the open database (with the GIL already released).
    fn with_db<T>(&self, closed: &'static str, f: impl FnOnce(&shale::Db) -> Res<T>) -> Res<T> {
        let guard = self.db.read_recursive();
        match guard.as_ref() {
            Some(db) => f(db),
            None => Err(Failure::Closed(closed)),
        }
    }

    fn is_closed(&self) -> bool {
        self.db.read_recursive().is_none()
    }

    fn register(&self, child: Weak<dyn Child>) {
        let mut children = self.children.lock();
        if children.len() >= 64 && children.len().is_power_of_two() {
            children.retain(|c| c.strong_count() > 0);
        }
        children.push(child);
    }

    /// Closes the children, then the database (GIL released).
    fn close(&self) {
        let db = {
            let mut guard = self.db.write();
            let db = guard.take();
            let children = std::mem::take(&mut *self.children.lock());
            for child in children.iter().filter_map(Weak::upgrade) {
                child.close();
            }
            db
        };
        drop(db);
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(db) = self.db.get_mut().take() {
            drop_unlocked(db);
        }
    }
}

fn read_options(
    verify_checksums: bool,
    fill_cache: bool,
    snapshot: Option<&shale::Snapshot>,
) -> shale::ReadOptions<'_> {
    shale::ReadOptions {
        verify_checksums,
        fill_cache,
        snapshot,
    }
}

// ---------------------------------------------------------------------------
// Operations shared by DB, PrefixedDB and Snapshot

type SnapshotSlot = Arc<Mutex<Option<shale::Snapshot>>>;

/// Reads `key`, through `snapshot` if given.
fn do_get(
    py: Python<'_>,
    shared: &Shared,
    snapshot: Option<&SnapshotSlot>,
    key: &[u8],
    verify_checksums: bool,
    fill_cache: bool,
) -> PyResult<Option<Vec<u8>>> {
    let closed = if snapshot.is_some() {
        SNAPSHOT_CLOSED
    } else {
        DB_CLOSED
    };
    unlocked(py, || {
        shared.with_db(closed, |db| {
            let snap_guard = snapshot.map(|s| s.lock());
            let snap = match &snap_guard {
                Some(g) => Some(g.as_ref().ok_or(Failure::Closed(closed))?),
                None => None,
            };
            Ok(db.get_with(&read_options(verify_checksums, fill_cache, snap), key)?)
        })
    })
}

fn get_or_default(py: Python<'_>, value: Option<Vec<u8>>, default: Option<Py<PyAny>>) -> Py<PyAny> {
    match value {
        Some(v) => PyBytes::new(py, &v).into_any().unbind(),
        None => default.unwrap_or_else(|| py.None()),
    }
}

fn do_put(py: Python<'_>, shared: &Shared, key: &[u8], value: &[u8], sync: bool) -> PyResult<()> {
    do_write(py, shared, sync, |db, opts| db.put_with(opts, key, value))
}

fn do_delete(py: Python<'_>, shared: &Shared, key: &[u8], sync: bool) -> PyResult<()> {
    do_write(py, shared, sync, |db, opts| db.delete_with(opts, key))
}

/// Runs a write, `write(db, options)`, with the GIL held when it cannot
/// block, else with the GIL released.
///
/// A small write takes about a microsecond in the engine. Releasing the GIL
/// for it costs little with one thread, but when another Python thread waits
/// for the GIL it costs two hand-offs of the GIL between threads, each a
/// wake-up of a sleeping thread: two threads putting then ran slower than
/// one. So a write that is not synced, on a database whose order is not a
/// Python function (the engine's threads would need the GIL to compare
/// keys), is first tried with the GIL held and
/// [`no_slowdown`](shale::WriteOptions::no_slowdown): the engine writes it
/// at once or refuses it without waiting (another write under way, a full
/// memtable, a level-0 slowdown), and only then is it written again with
/// the GIL released, where it may wait.
fn do_write<F>(py: Python<'_>, shared: &Shared, sync: bool, write: F) -> PyResult<()>
where
    F: Sync + Fn(&shale::Db, &shale::WriteOptions) -> shale::Result<()>,
{
    if !sync && shared.native_order {
        // A `close()` under way holds the lock for writing: do not wait for
        // it with the GIL held.
        if let Some(guard) = shared.db.try_read_recursive() {
            if let Some(db) = guard.as_ref() {
                let now = shale::WriteOptions {
                    no_slowdown: true,
                    ..Default::default()
                };
                match catching(|| Ok(write(db, &now)?)) {
                    Err(Failure::Engine(shale::Error::Incomplete(_))) => {}
                    done => return done.map_err(|e| to_py(py, e)),
                }
            }
        }
    }
    let opts = shale::WriteOptions {
        sync,
        ..Default::default()
    };
    unlocked(py, || shared.with_db(DB_CLOSED, |db| Ok(write(db, &opts)?)))
}

/// Arguments of `iterator()`.
struct IterArgs<'a> {
    reverse: bool,
    start: Option<&'a Bound<'a, PyAny>>,
    stop: Option<&'a Bound<'a, PyAny>>,
    include_start: bool,
    include_stop: bool,
    prefix: Option<&'a Bound<'a, PyAny>>,
    include_key: bool,
    include_value: bool,
    verify_checksums: bool,
    fill_cache: bool,
}

fn make_iterator(
    py: Python<'_>,
    shared: &Arc<Shared>,
    db_prefix: &[u8],
    snapshot: Option<&SnapshotSlot>,
    a: IterArgs<'_>,
) -> PyResult<Iterator> {
    let start = opt_bytes_arg(a.start, "start")?;
    let stop = opt_bytes_arg(a.stop, "stop")?;
    let prefix = opt_bytes_arg(a.prefix, "prefix")?;
    let (start, stop, include_start, include_stop) = match prefix {
        Some(p) => {
            if start.is_some() || stop.is_some() {
                return Err(PyTypeError::new_err(
                    "'prefix' cannot be used together with 'start' or 'stop'",
                ));
            }
            let stop = bytes_increment(&p).map(Cow::Owned);
            (Some(p), stop, true, false)
        }
        None => (start, stop, a.include_start, a.include_stop),
    };
    let lower = match start {
        Some(s) => Some((with_prefix(db_prefix, s), include_start)),
        None if db_prefix.is_empty() => None,
        None => Some((db_prefix.to_vec(), true)),
    };
    let upper = match stop {
        Some(s) => Some((with_prefix(db_prefix, s), include_stop)),
        None => bytes_increment(db_prefix).map(|u| (u, false)),
    };
    let closed = if snapshot.is_some() {
        SNAPSHOT_CLOSED
    } else {
        ITER_CLOSED
    };
    let cursor = unlocked(py, || {
        shared.with_db(closed, |db| {
            let snap_guard = snapshot.map(|s| s.lock());
            let snap = match &snap_guard {
                Some(g) => Some(g.as_ref().ok_or(Failure::Closed(closed))?),
                None => None,
            };
            Ok(db.cursor(&read_options(a.verify_checksums, a.fill_cache, snap)))
        })
    })?;
    let state = IterState {
        cursor,
        lower,
        upper,
        pos: if a.reverse {
            Pos::AfterStop
        } else {
            Pos::BeforeStart
        },
    };
    let slot = Arc::new(Mutex::new(Some(state)));
    let weak: Weak<Mutex<Option<IterState>>> = Arc::downgrade(&slot);
    shared.register(weak);
    Ok(Iterator {
        shared: shared.clone(),
        slot,
        db_prefix: db_prefix.to_vec(),
        reverse: a.reverse,
        include_key: a.include_key,
        include_value: a.include_value,
    })
}

fn make_raw_iterator(
    py: Python<'_>,
    shared: &Arc<Shared>,
    snapshot: Option<&SnapshotSlot>,
    verify_checksums: bool,
    fill_cache: bool,
) -> PyResult<RawIterator> {
    let closed = if snapshot.is_some() {
        SNAPSHOT_CLOSED
    } else {
        ITER_CLOSED
    };
    let cursor = unlocked(py, || {
        shared.with_db(closed, |db| {
            let snap_guard = snapshot.map(|s| s.lock());
            let snap = match &snap_guard {
                Some(g) => Some(g.as_ref().ok_or(Failure::Closed(closed))?),
                None => None,
            };
            Ok(db.cursor(&read_options(verify_checksums, fill_cache, snap)))
        })
    })?;
    let slot = Arc::new(Mutex::new(Some(cursor)));
    let weak: Weak<Mutex<Option<shale::Cursor>>> = Arc::downgrade(&slot);
    shared.register(weak);
    Ok(RawIterator {
        shared: shared.clone(),
        slot,
    })
}

fn make_snapshot(py: Python<'_>, shared: &Arc<Shared>, db_prefix: &[u8]) -> PyResult<Snapshot> {
    let snap = unlocked(py, || {
        shared.with_db("Cannot operate on closed LevelDB database", |db| {
            Ok(db.snapshot())
        })
    })?;
    let slot: SnapshotSlot = Arc::new(Mutex::new(Some(snap)));
    let weak: Weak<Mutex<Option<shale::Snapshot>>> = Arc::downgrade(&slot);
    shared.register(weak);
    Ok(Snapshot {
        shared: shared.clone(),
        slot,
        prefix: db_prefix.to_vec(),
    })
}

fn make_write_batch(
    shared: &Arc<Shared>,
    db_prefix: &[u8],
    transaction: bool,
    sync: bool,
) -> PyResult<WriteBatch> {
    if shared.is_closed() {
        return Err(PyRuntimeError::new_err(DB_CLOSED));
    }
    Ok(WriteBatch {
        shared: shared.clone(),
        prefix: db_prefix.to_vec(),
        batch: shale::WriteBatch::new(),
        transaction,
        sync,
    })
}

fn closed_error() -> PyErr {
    PyRuntimeError::new_err(DB_CLOSED)
}

// ---------------------------------------------------------------------------
// DB

/// A database, opened by `DB(name, ...)` as plyvel opens one.
#[pyclass(frozen, module = "shale", name = "DB")]
struct Db {
    shared: Arc<Shared>,
    name: Py<PyAny>,
}

#[pymethods]
impl Db {
    #[new]
    #[pyo3(signature = (
        name, *, create_if_missing=false, error_if_exists=false, paranoid_checks=None,
        write_buffer_size=None, max_open_files=None, lru_cache_size=None, block_size=None,
        block_restart_interval=None, max_file_size=None, compression=Compression::SNAPPY,
        bloom_filter_bits=None, comparator=None, comparator_name=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        create_if_missing: bool,
        error_if_exists: bool,
        paranoid_checks: Option<bool>,
        write_buffer_size: Option<usize>,
        max_open_files: Option<usize>,
        lru_cache_size: Option<usize>,
        block_size: Option<usize>,
        block_restart_interval: Option<usize>,
        max_file_size: Option<usize>,
        compression: Compression,
        bloom_filter_bits: Option<i32>,
        comparator: Option<&Bound<'_, PyAny>>,
        comparator_name: Option<&Bound<'_, PyBytes>>,
    ) -> PyResult<Db> {
        let path = path_arg(name)?;
        let options = build_options(
            create_if_missing,
            error_if_exists,
            paranoid_checks,
            write_buffer_size,
            max_open_files,
            lru_cache_size,
            block_size,
            block_restart_interval,
            max_file_size,
            compression,
            bloom_filter_bits,
            comparator,
            comparator_name,
        )?;
        let cmp = options.comparator.clone();
        let native_order = comparator.is_none_or(|c| c.is_none());
        let db = unlocked(py, || Ok(shale::Db::open(&path, options)?))?;
        Ok(Db {
            shared: Arc::new(Shared {
                db: RwLock::new(Some(db)),
                cmp,
                native_order,
                children: Mutex::new(Vec::new()),
            }),
            name: name.clone().unbind(),
        })
    }

    /// The name the database was opened with.
    #[getter]
    fn name(&self, py: Python<'_>) -> Py<PyAny> {
        self.name.clone_ref(py)
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Closes the database, and its iterators and snapshots.
    fn close(&self, py: Python<'_>) {
        py.allow_threads(|| self.shared.close());
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    #[pyo3(signature = (key, default=None, *, verify_checksums=false, fill_cache=true))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = bytes_arg(key, "key")?;
        let v = do_get(py, &self.shared, None, &key, verify_checksums, fill_cache)?;
        Ok(get_or_default(py, v, default))
    }

    #[pyo3(signature = (key, value, *, sync=false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        let key = bytes_arg(key, "key")?;
        let value = bytes_arg(value, "value")?;
        do_put(py, &self.shared, &key, &value, sync)
    }

    #[pyo3(signature = (key, *, sync=false))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        let key = bytes_arg(key, "key")?;
        do_delete(py, &self.shared, &key, sync)
    }

    #[pyo3(signature = (*, transaction=false, sync=false))]
    fn write_batch(&self, transaction: bool, sync: bool) -> PyResult<WriteBatch> {
        make_write_batch(&self.shared, b"", transaction, sync)
    }

    #[pyo3(signature = (
        *, reverse=false, start=None, stop=None, include_start=true, include_stop=false,
        prefix=None, include_key=true, include_value=true, verify_checksums=false,
        fill_cache=true
    ))]
    #[allow(clippy::too_many_arguments)]
    fn iterator(
        &self,
        py: Python<'_>,
        reverse: bool,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        include_start: bool,
        include_stop: bool,
        prefix: Option<&Bound<'_, PyAny>>,
        include_key: bool,
        include_value: bool,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<Iterator> {
        let args = IterArgs {
            reverse,
            start,
            stop,
            include_start,
            include_stop,
            prefix,
            include_key,
            include_value,
            verify_checksums,
            fill_cache,
        };
        make_iterator(py, &self.shared, b"", None, args)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Iterator> {
        if self.shared.is_closed() {
            return Err(closed_error());
        }
        make_iterator(py, &self.shared, b"", None, IterArgs::default())
    }

    fn __contains__(&self, _key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "'in' is not supported; use db.get(key) is not None",
        ))
    }

    #[pyo3(signature = (*, verify_checksums=false, fill_cache=true))]
    fn raw_iterator(
        &self,
        py: Python<'_>,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<RawIterator> {
        make_raw_iterator(py, &self.shared, None, verify_checksums, fill_cache)
    }

    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        make_snapshot(py, &self.shared, b"")
    }

    /// A LevelDB property (`b"leveldb.stats"`, `b"leveldb.sstables"`,
    /// `b"leveldb.num-files-at-level<N>"`, ...), or `None`.
    fn get_property(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        let name = bytes_arg(name, "name")?;
        let Ok(name) = std::str::from_utf8(&name) else {
            return Ok(None);
        };
        let value = unlocked(py, || {
            self.shared.with_db(DB_CLOSED, |db| Ok(db.property(name)))
        })?;
        Ok(value.map(|v| PyBytes::new(py, v.as_bytes()).into_any().unbind()))
    }

    #[pyo3(signature = (*ranges))]
    fn approximate_sizes(&self, py: Python<'_>, ranges: &Bound<'_, PyTuple>) -> PyResult<Vec<u64>> {
        if self.shared.is_closed() {
            return Err(closed_error());
        }
        let mut owned: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(ranges.len());
        for r in ranges.iter() {
            let n = r.len().unwrap_or(0);
            if n != 2 {
                return Err(PyValueError::new_err(format!(
                    "each range must be a (start, stop) pair, not {n} values"
                )));
            }
            let start = r.get_item(0)?;
            let stop = r.get_item(1)?;
            owned.push((
                bytes_arg(&start, "start")?.into_owned(),
                bytes_arg(&stop, "stop")?.into_owned(),
            ));
        }
        unlocked(py, || {
            self.shared.with_db(DB_CLOSED, |db| {
                let ranges: Vec<(&[u8], &[u8])> = owned
                    .iter()
                    .map(|(a, b)| (a.as_slice(), b.as_slice()))
                    .collect();
                Ok(db.approximate_sizes(&ranges))
            })
        })
    }

    fn approximate_size(
        &self,
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        stop: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let start = bytes_arg(start, "start")?;
        let stop = bytes_arg(stop, "stop")?;
        let sizes = unlocked(py, || {
            self.shared.with_db(DB_CLOSED, |db| {
                Ok(db.approximate_sizes(&[(&start[..], &stop[..])]))
            })
        })?;
        Ok(sizes.first().copied().unwrap_or(0))
    }

    #[pyo3(signature = (*, start=None, stop=None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let start = opt_bytes_arg(start, "start")?;
        let stop = opt_bytes_arg(stop, "stop")?;
        unlocked(py, || {
            self.shared.with_db(DB_CLOSED, |db| {
                Ok(db.compact_range(start.as_deref(), stop.as_deref())?)
            })
        })
    }

    fn prefixed_db(slf: &Bound<'_, Self>, prefix: &Bound<'_, PyAny>) -> PyResult<PrefixedDb> {
        let prefix = bytes_arg(prefix, "prefix")?.into_owned();
        Ok(PrefixedDb {
            db: slf.clone().unbind(),
            shared: slf.get().shared.clone(),
            prefix,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let name = self.name.bind(py).str()?;
        Ok(format!(
            "<shale.DB with name '{name}' at {:#x}>",
            self as *const Self as usize
        ))
    }
}

impl Default for IterArgs<'_> {
    fn default() -> Self {
        IterArgs {
            reverse: false,
            start: None,
            stop: None,
            include_start: true,
            include_stop: false,
            prefix: None,
            include_key: true,
            include_value: true,
            verify_checksums: false,
            fill_cache: true,
        }
    }
}

// ---------------------------------------------------------------------------
// PrefixedDB

/// A view of the keys of `db` that start with `prefix`, with the prefix
/// left out of the keys it takes and returns.
#[pyclass(frozen, module = "shale", name = "PrefixedDB")]
struct PrefixedDb {
    db: Py<Db>,
    shared: Arc<Shared>,
    prefix: Vec<u8>,
}

#[pymethods]
impl PrefixedDb {
    /// The database this is a view of.
    #[getter]
    fn db(&self, py: Python<'_>) -> Py<Db> {
        self.db.clone_ref(py)
    }

    /// The prefix, including those of the views this was made from.
    #[getter]
    fn prefix<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.prefix)
    }

    #[pyo3(signature = (key, default=None, *, verify_checksums=false, fill_cache=true))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = prefixed(&self.prefix, bytes_arg(key, "key")?);
        let v = do_get(py, &self.shared, None, &key, verify_checksums, fill_cache)?;
        Ok(get_or_default(py, v, default))
    }

    #[pyo3(signature = (key, value, *, sync=false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        let key = prefixed(&self.prefix, bytes_arg(key, "key")?);
        let value = bytes_arg(value, "value")?;
        do_put(py, &self.shared, &key, &value, sync)
    }

    #[pyo3(signature = (key, *, sync=false))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        let key = prefixed(&self.prefix, bytes_arg(key, "key")?);
        do_delete(py, &self.shared, &key, sync)
    }

    #[pyo3(signature = (*, transaction=false, sync=false))]
    fn write_batch(&self, transaction: bool, sync: bool) -> PyResult<WriteBatch> {
        make_write_batch(&self.shared, &self.prefix, transaction, sync)
    }

    #[pyo3(signature = (
        *, reverse=false, start=None, stop=None, include_start=true, include_stop=false,
        prefix=None, include_key=true, include_value=true, verify_checksums=false,
        fill_cache=true
    ))]
    #[allow(clippy::too_many_arguments)]
    fn iterator(
        &self,
        py: Python<'_>,
        reverse: bool,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        include_start: bool,
        include_stop: bool,
        prefix: Option<&Bound<'_, PyAny>>,
        include_key: bool,
        include_value: bool,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<Iterator> {
        let args = IterArgs {
            reverse,
            start,
            stop,
            include_start,
            include_stop,
            prefix,
            include_key,
            include_value,
            verify_checksums,
            fill_cache,
        };
        make_iterator(py, &self.shared, &self.prefix, None, args)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Iterator> {
        if self.shared.is_closed() {
            return Err(closed_error());
        }
        make_iterator(py, &self.shared, &self.prefix, None, IterArgs::default())
    }

    fn __contains__(&self, _key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "'in' is not supported; use db.get(key) is not None",
        ))
    }

    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        make_snapshot(py, &self.shared, &self.prefix)
    }

    fn prefixed_db(&self, py: Python<'_>, prefix: &Bound<'_, PyAny>) -> PyResult<PrefixedDb> {
        let more = bytes_arg(prefix, "prefix")?;
        Ok(PrefixedDb {
            db: self.db.clone_ref(py),
            shared: self.shared.clone(),
            prefix: with_prefix(&self.prefix, more),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<shale.PrefixedDB with prefix {} at {:#x}>",
            PyBytes::new(py, &self.prefix)
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_default(),
            self as *const Self as usize
        )
    }
}

// ---------------------------------------------------------------------------
// Snapshot

/// A consistent, read-only view of the database as it was when made.
#[pyclass(frozen, module = "shale", name = "Snapshot")]
struct Snapshot {
    shared: Arc<Shared>,
    slot: SnapshotSlot,
    prefix: Vec<u8>,
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        if let Some(s) = self.slot.lock().take() {
            drop_unlocked(s);
        }
    }
}

#[pymethods]
impl Snapshot {
    #[pyo3(signature = (key, default=None, *, verify_checksums=false, fill_cache=true))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = prefixed(&self.prefix, bytes_arg(key, "key")?);
        let v = do_get(
            py,
            &self.shared,
            Some(&self.slot),
            &key,
            verify_checksums,
            fill_cache,
        )?;
        Ok(get_or_default(py, v, default))
    }

    #[pyo3(signature = (
        *, reverse=false, start=None, stop=None, include_start=true, include_stop=false,
        prefix=None, include_key=true, include_value=true, verify_checksums=false,
        fill_cache=true
    ))]
    #[allow(clippy::too_many_arguments)]
    fn iterator(
        &self,
        py: Python<'_>,
        reverse: bool,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        include_start: bool,
        include_stop: bool,
        prefix: Option<&Bound<'_, PyAny>>,
        include_key: bool,
        include_value: bool,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<Iterator> {
        let args = IterArgs {
            reverse,
            start,
            stop,
            include_start,
            include_stop,
            prefix,
            include_key,
            include_value,
            verify_checksums,
            fill_cache,
        };
        make_iterator(py, &self.shared, &self.prefix, Some(&self.slot), args)
    }

    #[pyo3(signature = (*, verify_checksums=false, fill_cache=true))]
    fn raw_iterator(
        &self,
        py: Python<'_>,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<RawIterator> {
        // As plyvel's, a prefixed snapshot's raw iterator sees every key.
        make_raw_iterator(
            py,
            &self.shared,
            Some(&self.slot),
            verify_checksums,
            fill_cache,
        )
    }

    /// Releases the snapshot; later reads through it raise `RuntimeError`.
    fn close(&self, py: Python<'_>) {
        py.allow_threads(|| drop(self.slot.lock().take()));
    }

    /// The same as `close()`.
    fn release(&self, py: Python<'_>) {
        self.close(py);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}

// ---------------------------------------------------------------------------
// WriteBatch

/// Updates applied together, atomically, by `write()`.
#[pyclass(module = "shale", name = "WriteBatch")]
struct WriteBatch {
    shared: Arc<Shared>,
    prefix: Vec<u8>,
    batch: shale::WriteBatch,
    transaction: bool,
    sync: bool,
}

impl WriteBatch {
    fn check_open(&self) -> PyResult<()> {
        if self.shared.is_closed() {
            Err(closed_error())
        } else {
            Ok(())
        }
    }
}

#[pymethods]
impl WriteBatch {
    fn put(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.check_open()?;
        let key = prefixed(&self.prefix, bytes_arg(key, "key")?);
        let value = bytes_arg(value, "value")?;
        self.batch
            .put(&key, &value)
            .map_err(|e| engine_error(py, e))
    }

    fn delete(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_open()?;
        let key = prefixed(&self.prefix, bytes_arg(key, "key")?);
        self.batch.delete(&key).map_err(|e| engine_error(py, e))
    }

    /// Drops the updates added so far.
    fn clear(&mut self) -> PyResult<()> {
        self.check_open()?;
        self.batch.clear();
        Ok(())
    }

    /// Adds the updates of `source`, another batch.
    fn append(&mut self, py: Python<'_>, source: PyRef<'_, WriteBatch>) -> PyResult<()> {
        self.check_open()?;
        self.batch
            .append(&source.batch)
            .map_err(|e| engine_error(py, e))
    }

    /// The size in bytes of the batch's encoding.
    fn approximate_size(&self) -> PyResult<usize> {
        self.check_open()?;
        Ok(self.batch.approximate_size())
    }

    /// Applies the batch (and keeps it: `clear()` empties it).
    fn write(&self, py: Python<'_>) -> PyResult<()> {
        let batch = &self.batch;
        do_write(py, &self.shared, self.sync, |db, opts| {
            db.write(opts, batch)
        })
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type=None, _exc_value=None, _traceback=None))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc_value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let failed = exc_type.is_some_and(|t| !t.is_none());
        if !(self.transaction && failed) {
            self.write(py)?;
        }
        self.batch.clear();
        Ok(false)
    }
}

// ---------------------------------------------------------------------------
// Iterator

/// Where an iterator stands: between two entries (plyvel's model), so that
/// `next()` and `prev()` return the entries on either side.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pos {
    /// Before the first entry of the range.
    BeforeStart,
    /// After the last entry of the range.
    AfterStop,
    /// Just before the cursor's entry (or at the end of the database when
    /// the cursor is not valid); that entry may lie past the range.
    Gap,
}

struct IterState {
    cursor: shale::Cursor,
    /// The range's bounds, with whether each is included.
    lower: Option<(Vec<u8>, bool)>,
    upper: Option<(Vec<u8>, bool)>,
    pos: Pos,
}

impl IterState {
    fn below_lower(&self, cmp: &dyn shale::Comparator, key: &[u8]) -> bool {
        match &self.lower {
            Some((l, incl)) => match cmp.compare(key, l) {
                Ordering::Less => true,
                Ordering::Equal => !incl,
                Ordering::Greater => false,
            },
            None => false,
        }
    }

    fn above_upper(&self, cmp: &dyn shale::Comparator, key: &[u8]) -> bool {
        match &self.upper {
            Some((u, incl)) => match cmp.compare(key, u) {
                Ordering::Greater => true,
                Ordering::Equal => !incl,
                Ordering::Less => false,
            },
            None => false,
        }
    }

    /// Forward from the gap: the entry after it, moving past it.
    fn step_forward(&mut self, cmp: &dyn shale::Comparator, want: Want) -> Res<Option<Entry>> {
        match self.pos {
            Pos::AfterStop => return Ok(None),
            Pos::BeforeStart => {
                match &self.lower {
                    Some((l, incl)) => {
                        self.cursor.seek(l);
                        if !incl && self.cursor.valid() && cmp.compare(self.cursor.key(), l).is_eq()
                        {
                            self.cursor.next();
                        }
                    }
                    None => self.cursor.seek_to_first(),
                }
                self.pos = Pos::Gap;
            }
            Pos::Gap => {}
        }
        self.cursor.status()?;
        if !self.cursor.valid() || self.above_upper(cmp, self.cursor.key()) {
            self.pos = Pos::AfterStop;
            return Ok(None);
        }
        let entry = want.take(&self.cursor);
        self.cursor.next();
        self.cursor.status()?;
        Ok(Some(entry))
    }

    /// Backward from the gap: the entry before it, moving before it.
    fn step_backward(&mut self, cmp: &dyn shale::Comparator, want: Want) -> Res<Option<Entry>> {
        match self.pos {
            Pos::BeforeStart => return Ok(None),
            Pos::AfterStop => match &self.upper {
                Some((u, incl)) => {
                    self.cursor.seek(u);
                    self.cursor.status()?;
                    if self.cursor.valid() {
                        let c = cmp.compare(self.cursor.key(), u);
                        if c.is_gt() || (c.is_eq() && !incl) {
                            self.cursor.prev();
                        }
                    } else {
                        self.cursor.seek_to_last();
                    }
                }
                None => self.cursor.seek_to_last(),
            },
            Pos::Gap => {
                if self.cursor.valid() {
                    self.cursor.prev();
                } else {
                    self.cursor.seek_to_last();
                }
            }
        }
        self.cursor.status()?;
        if !self.cursor.valid() || self.below_lower(cmp, self.cursor.key()) {
            self.pos = Pos::BeforeStart;
            return Ok(None);
        }
        self.pos = Pos::Gap;
        Ok(Some(want.take(&self.cursor)))
    }

    /// Moves the gap before the first entry of the range at or after `target`.
    fn seek(&mut self, cmp: &dyn shale::Comparator, target: &[u8]) -> Res<()> {
        if let Some((l, _)) = &self.lower {
            if !cmp.compare(target, l).is_gt() {
                self.pos = Pos::BeforeStart;
                return Ok(());
            }
        }
        if self.above_upper(cmp, target) {
            self.pos = Pos::AfterStop;
            return Ok(());
        }
        self.cursor.seek(target);
        self.pos = Pos::Gap;
        self.cursor.status()?;
        Ok(())
    }
}

/// What an iterator returns of each entry, and how much of the key to drop.
#[derive(Clone, Copy)]
struct Want {
    key: bool,
    value: bool,
    strip: usize,
}

type Entry = (Option<Vec<u8>>, Option<Vec<u8>>);

impl Want {
    fn take(&self, cursor: &shale::Cursor) -> Entry {
        let key = self
            .key
            .then(|| cursor.key().get(self.strip..).unwrap_or_default().to_vec());
        let value = self.value.then(|| cursor.value().to_vec());
        (key, value)
    }
}

/// An iterator over a range of a database or snapshot, as plyvel's
/// `Iterator`: `(key, value)` pairs (or keys, or values), forward or in
/// reverse.
#[pyclass(frozen, module = "shale", name = "Iterator")]
struct Iterator {
    shared: Arc<Shared>,
    slot: Arc<Mutex<Option<IterState>>>,
    /// The database prefix: added to seek targets, dropped from returned keys.
    db_prefix: Vec<u8>,
    reverse: bool,
    include_key: bool,
    include_value: bool,
}

impl Drop for Iterator {
    fn drop(&mut self) {
        if let Some(s) = self.slot.lock().take() {
            drop_unlocked(s);
        }
    }
}

impl Iterator {
    fn with_state<T: Send>(
        &self,
        py: Python<'_>,
        f: impl Send + FnOnce(&mut IterState, &dyn shale::Comparator) -> Res<T>,
    ) -> PyResult<T> {
        let shared = &self.shared;
        let slot = &self.slot;
        unlocked(py, move || {
            shared.with_db(ITER_CLOSED, |_db| {
                let mut guard = slot.lock();
                let state = guard.as_mut().ok_or(Failure::Closed(ITER_CLOSED))?;
                f(state, &*shared.cmp)
            })
        })
    }

    fn want(&self) -> Want {
        Want {
            key: self.include_key,
            value: self.include_value,
            strip: self.db_prefix.len(),
        }
    }

    fn step(&self, py: Python<'_>, forward: bool) -> PyResult<Option<Py<PyAny>>> {
        let want = self.want();
        let entry = self.with_state(py, move |st, cmp| {
            if forward {
                st.step_forward(cmp, want)
            } else {
                st.step_backward(cmp, want)
            }
        })?;
        entry.map(|e| entry_to_py(py, e)).transpose()
    }
}

fn entry_to_py(py: Python<'_>, (key, value): Entry) -> PyResult<Py<PyAny>> {
    Ok(match (key, value) {
        (Some(k), Some(v)) => PyTuple::new(py, [PyBytes::new(py, &k), PyBytes::new(py, &v)])?
            .into_any()
            .unbind(),
        (Some(k), None) => PyBytes::new(py, &k).into_any().unbind(),
        (None, Some(v)) => PyBytes::new(py, &v).into_any().unbind(),
        (None, None) => py.None(),
    })
}

#[pymethods]
impl Iterator {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.step(py, !self.reverse)
    }

    /// Moves one entry back and returns it (the same entry as the last
    /// `next()`); raises `StopIteration` at the start.
    fn prev(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.step(py, self.reverse)?
            .ok_or_else(|| PyStopIteration::new_err(()))
    }

    /// Moves to the start of the range.
    fn seek_to_start(&self, py: Python<'_>) -> PyResult<()> {
        self.with_state(py, |st, _| {
            st.pos = Pos::BeforeStart;
            Ok(())
        })
    }

    /// Moves to the end of the range.
    fn seek_to_stop(&self, py: Python<'_>) -> PyResult<()> {
        self.with_state(py, |st, _| {
            st.pos = Pos::AfterStop;
            Ok(())
        })
    }

    /// Moves to just before the first entry of the range whose key is at or
    /// after `target`.
    fn seek(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<()> {
        let target = prefixed(&self.db_prefix, bytes_arg(target, "target")?);
        self.with_state(py, move |st, cmp| st.seek(cmp, &target))
    }

    /// Closes the iterator; later calls raise `RuntimeError`.
    fn close(&self, py: Python<'_>) {
        let slot = &self.slot;
        py.allow_threads(|| drop(slot.lock().take()));
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}

// ---------------------------------------------------------------------------
// RawIterator

/// A thin wrapper of the engine's cursor, as plyvel's `RawIterator`.
#[pyclass(frozen, module = "shale", name = "RawIterator")]
struct RawIterator {
    shared: Arc<Shared>,
    slot: Arc<Mutex<Option<shale::Cursor>>>,
}

impl Drop for RawIterator {
    fn drop(&mut self) {
        if let Some(c) = self.slot.lock().take() {
            drop_unlocked(c);
        }
    }
}

impl RawIterator {
    fn with_cursor<T: Send>(
        &self,
        py: Python<'_>,
        f: impl Send + FnOnce(&mut shale::Cursor) -> Res<T>,
    ) -> PyResult<T> {
        let shared = &self.shared;
        let slot = &self.slot;
        unlocked(py, move || {
            shared.with_db(ITER_CLOSED, |_db| {
                let mut guard = slot.lock();
                let cursor = guard.as_mut().ok_or(Failure::Closed(ITER_CLOSED))?;
                f(cursor)
            })
        })
    }

    fn read(&self, py: Python<'_>, key: bool, value: bool) -> PyResult<Py<PyAny>> {
        let entry = self.with_cursor(py, move |c| {
            if !c.valid() {
                return Err(Failure::Invalid);
            }
            Ok(Want {
                key,
                value,
                strip: 0,
            }
            .take(c))
        })?;
        entry_to_py(py, entry)
    }
}

#[pymethods]
impl RawIterator {
    fn valid(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_cursor(py, |c| Ok(c.valid()))
    }

    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.with_cursor(py, |c| {
            c.seek_to_first();
            Ok(c.status()?)
        })
    }

    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.with_cursor(py, |c| {
            c.seek_to_last();
            Ok(c.status()?)
        })
    }

    fn seek(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<()> {
        let target = bytes_arg(target, "target")?;
        self.with_cursor(py, move |c| {
            c.seek(&target);
            Ok(c.status()?)
        })
    }

    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.with_cursor(py, |c| {
            if !c.valid() {
                return Err(Failure::Invalid);
            }
            c.next();
            Ok(c.status()?)
        })
    }

    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.with_cursor(py, |c| {
            if !c.valid() {
                return Err(Failure::Invalid);
            }
            c.prev();
            Ok(c.status()?)
        })
    }

    fn key(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.read(py, true, false)
    }

    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.read(py, false, true)
    }

    /// The current `(key, value)`.
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.read(py, true, true)
    }

    fn close(&self, py: Python<'_>) {
        let slot = &self.slot;
        py.allow_threads(|| drop(slot.lock().take()));
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}

// ---------------------------------------------------------------------------
// Module functions

/// Deletes the database `name` and its directory.
#[pyfunction]
fn destroy_db(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<()> {
    let path = path_arg(name)?;
    unlocked(py, || {
        Ok(shale::destroy(&path, &shale::Options::default())?)
    })
}

/// Rebuilds the database `name` from whatever of it can be read.
#[pyfunction]
#[pyo3(signature = (
    name, *, paranoid_checks=None, write_buffer_size=None, max_open_files=None,
    lru_cache_size=None, block_size=None, block_restart_interval=None, max_file_size=None,
    compression=Compression::SNAPPY, bloom_filter_bits=None, comparator=None, comparator_name=None
))]
#[allow(clippy::too_many_arguments)]
fn repair_db(
    py: Python<'_>,
    name: &Bound<'_, PyAny>,
    paranoid_checks: Option<bool>,
    write_buffer_size: Option<usize>,
    max_open_files: Option<usize>,
    lru_cache_size: Option<usize>,
    block_size: Option<usize>,
    block_restart_interval: Option<usize>,
    max_file_size: Option<usize>,
    compression: Compression,
    bloom_filter_bits: Option<i32>,
    comparator: Option<&Bound<'_, PyAny>>,
    comparator_name: Option<&Bound<'_, PyBytes>>,
) -> PyResult<()> {
    let path = path_arg(name)?;
    let options = build_options(
        false,
        false,
        paranoid_checks,
        write_buffer_size,
        max_open_files,
        lru_cache_size,
        block_size,
        block_restart_interval,
        max_file_size,
        compression,
        bloom_filter_bits,
        comparator,
        comparator_name,
    )?;
    // plyvel's repair_db returns nothing; the report is not kept.
    unlocked(py, || Ok(shale::repair(&path, &options).map(drop)?))
}

#[pymodule]
fn _shale(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Db>()?;
    m.add_class::<PrefixedDb>()?;
    m.add_class::<Snapshot>()?;
    m.add_class::<WriteBatch>()?;
    m.add_class::<Iterator>()?;
    m.add_class::<RawIterator>()?;
    m.add_function(wrap_pyfunction!(destroy_db, m)?)?;
    m.add_function(wrap_pyfunction!(repair_db, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The LevelDB release whose on-disk format and behaviour Shale follows.
    m.add("__leveldb_version__", "1.23")?;
    Ok(())
}
