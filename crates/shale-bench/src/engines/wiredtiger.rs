//! WiredTiger (the installed 3.2.1 library), as an LSM tree or a B-tree,
//! configured as in the LevelDB-vs-WiredTiger write-up (its
//! db_bench_wiredtiger): connection `cache_size` of `--cache_size` bytes
//! (128 MB by default); the table created with `prefix_compression=false,
//! checksum=off`, 16 KB internal and leaf pages with `memory_page_max` at 90%
//! of the cache (4 KB pages and `memory_page_max` = cache below 10 MB), LSM
//! chunks of 20 MB (smaller when the cache cannot hold three of them, which
//! WiredTiger requires: 1.3 MB chunks in a 4 MB cache), and
//! `block_compressor=snappy` when the snappy extension
//! is installed (otherwise no compression, said in the settings); a bulk
//! cursor for sequential loads of a fresh table from one thread.
//!
//! Differences from the write-up, all printed in the settings: keys and
//! values use the raw-bytes format `u` instead of C strings `S` (so any byte
//! string works), and the write-ahead log is on by default (`--wt_log=0`
//! turns it off as in the write-up) so that asynchronous writes reach the OS
//! as LevelDB's do; synchronous writes commit with `sync=on`.
//!
//! The FFI structs below declare the leading members of `WT_CONNECTION`,
//! `WT_SESSION` and `WT_CURSOR` (method tables) up to the last one used; the
//! offsets were checked against the installed header and are pinned by a
//! test. Sessions and cursors are single-threaded: each benchmark session
//! owns one WiredTiger session and its cursors.
//!
//! Its codecs for db_bench's `crc32c` and snappy lines: WiredTiger's own
//! checksum, the function `wiredtiger_crc32c_func()` returns, and libsnappy
//! when the snappy extension is installed (the extension compresses by
//! calling libsnappy's `snappy_compress` / `snappy_uncompress`).

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use super::util::{self, setting};
use crate::engine::{
    Batch, BatchOp, Codecs, Crc32c, Engine, EngineConfig, EngineIter, EngineKind, Error, Result,
    Session,
};
use crate::flags::Codec;

#[allow(non_camel_case_types)]
pub(crate) mod ffi {
    use std::ffi::c_void;
    use std::os::raw::{c_char, c_int};

    type Unused = *const c_void;

    #[repr(C)]
    pub struct WT_ITEM {
        pub data: *const c_void,
        pub size: usize,
        pub mem: *mut c_void,
        pub memsize: usize,
        pub flags: u32,
    }

    #[repr(C)]
    pub struct WT_CONNECTION {
        pub async_flush: Unused,
        pub async_new_op: Unused,
        pub close: unsafe extern "C" fn(*mut WT_CONNECTION, *const c_char) -> c_int,
        pub debug_info: Unused,
        pub reconfigure: Unused,
        pub get_home: Unused,
        pub configure_method: Unused,
        pub is_new: Unused,
        pub open_session: unsafe extern "C" fn(
            *mut WT_CONNECTION,
            *mut c_void,
            *const c_char,
            *mut *mut WT_SESSION,
        ) -> c_int,
    }

    #[repr(C)]
    pub struct WT_SESSION {
        pub connection: *mut WT_CONNECTION,
        pub app_private: *mut c_void,
        pub close: unsafe extern "C" fn(*mut WT_SESSION, *const c_char) -> c_int,
        pub reconfigure: Unused,
        pub strerror: Unused,
        pub open_cursor: unsafe extern "C" fn(
            *mut WT_SESSION,
            *const c_char,
            *mut WT_CURSOR,
            *const c_char,
            *mut *mut WT_CURSOR,
        ) -> c_int,
        pub alter: Unused,
        pub create: unsafe extern "C" fn(*mut WT_SESSION, *const c_char, *const c_char) -> c_int,
        pub import: Unused,
        pub compact: unsafe extern "C" fn(*mut WT_SESSION, *const c_char, *const c_char) -> c_int,
        pub drop: Unused,
        pub join: Unused,
        pub log_flush: Unused,
        pub log_printf: Unused,
        pub rebalance: Unused,
        pub rename: Unused,
        pub reset: Unused,
        pub salvage: Unused,
        pub truncate: Unused,
        pub upgrade: Unused,
        pub verify: Unused,
        pub begin_transaction: unsafe extern "C" fn(*mut WT_SESSION, *const c_char) -> c_int,
        pub commit_transaction: unsafe extern "C" fn(*mut WT_SESSION, *const c_char) -> c_int,
        pub prepare_transaction: Unused,
        pub rollback_transaction: unsafe extern "C" fn(*mut WT_SESSION, *const c_char) -> c_int,
    }

    #[repr(C)]
    pub struct WT_CURSOR {
        pub session: *mut WT_SESSION,
        pub uri: *const c_char,
        pub key_format: *const c_char,
        pub value_format: *const c_char,
        pub get_key: unsafe extern "C" fn(*mut WT_CURSOR, ...) -> c_int,
        pub get_value: unsafe extern "C" fn(*mut WT_CURSOR, ...) -> c_int,
        pub set_key: unsafe extern "C" fn(*mut WT_CURSOR, ...),
        pub set_value: unsafe extern "C" fn(*mut WT_CURSOR, ...),
        pub compare: Unused,
        pub equals: Unused,
        pub next: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
        pub prev: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
        pub reset: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
        pub search: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
        pub search_near: unsafe extern "C" fn(*mut WT_CURSOR, *mut c_int) -> c_int,
        pub insert: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
        pub modify: Unused,
        pub update: Unused,
        pub remove: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
        pub reserve: Unused,
        pub close: unsafe extern "C" fn(*mut WT_CURSOR) -> c_int,
    }

    pub const WT_NOTFOUND: c_int = -31803;

    extern "C" {
        pub fn wiredtiger_open(
            home: *const c_char,
            event_handler: *mut c_void,
            config: *const c_char,
            connection: *mut *mut WT_CONNECTION,
        ) -> c_int;
        pub fn wiredtiger_strerror(error: c_int) -> *const c_char;
        /// The checksum function WiredTiger uses (hardware or software,
        /// chosen by the library).
        pub fn wiredtiger_crc32c_func() -> unsafe extern "C" fn(*const c_void, usize) -> u32;
        pub fn wiredtiger_version(
            major: *mut c_int,
            minor: *mut c_int,
            patch: *mut c_int,
        ) -> *const c_char;
    }
}

/// The function `wiredtiger_crc32c_func()` returned, asked once.
static CRC32C: std::sync::OnceLock<unsafe extern "C" fn(*const std::ffi::c_void, usize) -> u32> =
    std::sync::OnceLock::new();

/// WiredTiger's CRC-32C of `data`.
fn crc32c(data: &[u8]) -> u32 {
    // SAFETY: the library's accessor has no preconditions.
    let f = *CRC32C.get_or_init(|| unsafe { ffi::wiredtiger_crc32c_func() });
    // SAFETY: the checksum reads `data.len()` bytes from `data`, which are
    // readable, and keeps no pointer.
    unsafe { f(data.as_ptr().cast(), data.len()) }
}

/// WiredTiger's checksum and, with its snappy extension installed,
/// libsnappy.
pub fn codecs() -> Codecs {
    let code = match env!("SHALE_BENCH_WIREDTIGER_CRC32_INSNS").parse::<usize>() {
        Ok(0) => "the installed library has no SSE4.2 crc32 instruction: its software code",
        Ok(_) => "the installed library picks SSE4.2 crc32 code or its software code at run time",
        Err(_) => "hardware or software code, unknown (objdump was not available at build time)",
    };
    let crc32c = Ok(Crc32c {
        implementation: format!("wiredtiger_crc32c_func() ({code})"),
        value: crc32c,
    });
    let snappy = if env!("SHALE_BENCH_WIREDTIGER_SNAPPY").is_empty() {
        Err("WiredTiger's snappy extension (libwiredtiger_snappy.so) is not installed".to_string())
    } else {
        snappy_codec()
    };
    Codecs { crc32c, snappy }
}

#[cfg(have_snappy)]
fn snappy_codec() -> std::result::Result<crate::engine::Snappy, String> {
    Ok(super::libsnappy::snappy(
        "; WiredTiger's snappy extension calls snappy_compress / snappy_uncompress",
    ))
}

#[cfg(not(have_snappy))]
fn snappy_codec() -> std::result::Result<crate::engine::Snappy, String> {
    Err(super::no_libsnappy())
}

const DEFAULT_CACHE: u64 = 128 << 20;
const SMALL_CACHE: u64 = 10 << 20;
/// The write-up's LSM chunk size.
const LSM_CHUNK_MAX: u64 = 20 << 20;
/// WiredTiger's smallest accepted `lsm=(chunk_size)`.
const LSM_CHUNK_MIN: u64 = 512 << 10;
/// WiredTiger's default `lsm=(merge_max)`.
const LSM_MERGE_MAX: u64 = 15;

/// The LSM chunk size for a connection cache of `cache` bytes and leaf pages
/// of `leaf` bytes: the write-up's 20 MB, or less when the cache is too small
/// for it. WiredTiger refuses to open an LSM tree unless the cache holds
/// three chunks plus one leaf page per participant of three merges
/// (`3 * chunk + 3 * merge_max * leaf`); `None` when even the smallest chunk
/// does not fit.
fn lsm_chunk_size(cache: u64, leaf: u64) -> Option<u64> {
    let fit = cache.checked_sub(3 * LSM_MERGE_MAX * leaf)? / 3;
    // Whole KB, as WiredTiger prints sizes.
    let chunk = LSM_CHUNK_MAX.min(fit) & !1023;
    (chunk >= LSM_CHUNK_MIN).then_some(chunk)
}

fn wt_err(what: &str, rc: c_int) -> Error {
    // SAFETY: returns a static (or thread-local) message.
    let msg = unsafe { util::string_from(ffi::wiredtiger_strerror(rc)) };
    Error::new(format!("wiredtiger {what}: {msg} ({rc})"))
}

fn check(what: &str, rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(wt_err(what, rc))
    }
}

fn item(bytes: &[u8]) -> ffi::WT_ITEM {
    ffi::WT_ITEM {
        data: bytes.as_ptr().cast(),
        size: bytes.len(),
        mem: ptr::null_mut(),
        memsize: 0,
        flags: 0,
    }
}

fn empty_item() -> ffi::WT_ITEM {
    item(&[])
}

/// An open WiredTiger connection with one table.
pub struct WiredTiger {
    conn: *mut ffi::WT_CONNECTION,
    uri: CString,
    lsm: bool,
    log: bool,
    bulk: AtomicBool,
    settings: Vec<(String, String)>,
}

// SAFETY: a WT_CONNECTION may be used from many threads; sessions and
// cursors are per benchmark session and never shared.
unsafe impl Send for WiredTiger {}
// SAFETY: as above.
unsafe impl Sync for WiredTiger {}

impl WiredTiger {
    /// Opens (or creates) the database home `cfg.path` with an LSM tree
    /// (`lsm`) or a B-tree table.
    pub fn open(cfg: &EngineConfig, lsm: bool) -> Result<WiredTiger> {
        let home = util::path_cstring(&cfg.path)?;
        let cache = cfg.cache_size.unwrap_or(DEFAULT_CACHE);
        let snappy_ext = env!("SHALE_BENCH_WIREDTIGER_SNAPPY");
        let mut compressor_note = String::new();
        if matches!(cfg.compression, Codec::Zstd | Codec::Lz4) {
            return Err(Error::new(format!(
                "--compression_type={}: only WiredTiger's snappy extension is supported here",
                cfg.compression.name()
            )));
        }
        let want_snappy = cfg.compression.is_on() && !snappy_ext.is_empty();
        if cfg.compression.is_on() && snappy_ext.is_empty() {
            compressor_note = "none: libwiredtiger_snappy.so not installed".to_string();
        }
        let base = format!(
            "{}cache_size={cache},session_max={},log=(enabled={}),transaction_sync=(enabled=false)",
            if cfg.create { "create," } else { "" },
            (cfg.threads as u64 * 2 + 20).max(100),
            if cfg.wt_log { "true" } else { "false" },
        );
        let mut conn: *mut ffi::WT_CONNECTION = ptr::null_mut();
        let mut conn_config = if want_snappy {
            format!("{base},extensions=[{snappy_ext}]")
        } else {
            base.clone()
        };
        let c = util::cstring(&conn_config)?;
        // SAFETY: opens a connection owned by the returned value.
        let mut rc =
            unsafe { ffi::wiredtiger_open(home.as_ptr(), ptr::null_mut(), c.as_ptr(), &mut conn) };
        let mut snappy = want_snappy;
        if rc != 0 && want_snappy {
            compressor_note = format!(
                "none: loading {snappy_ext} failed ({})",
                wt_err("open", rc).message()
            );
            snappy = false;
            conn_config = base;
            let c = util::cstring(&conn_config)?;
            // SAFETY: as above.
            rc = unsafe {
                ffi::wiredtiger_open(home.as_ptr(), ptr::null_mut(), c.as_ptr(), &mut conn)
            };
        }
        check("open", rc)?;
        let mut engine = WiredTiger {
            conn,
            uri: CString::default(),
            lsm,
            log: cfg.wt_log,
            bulk: AtomicBool::new(false),
            settings: Vec::new(),
        };

        let uri = if lsm { "lsm:dbbench" } else { "table:dbbench" };
        let mut table =
            String::from("key_format=u,value_format=u,prefix_compression=false,checksum=off");
        let leaf: u64 = if cache < SMALL_CACHE {
            4 << 10
        } else {
            16 << 10
        };
        if cache < SMALL_CACHE {
            table.push_str(&format!(
                ",internal_page_max=4kb,leaf_page_max=4kb,memory_page_max={cache}"
            ));
        } else {
            table.push_str(&format!(
                ",internal_page_max=16kb,leaf_page_max=16kb,memory_page_max={}",
                (cache as f64 * 0.9) as u64
            ));
        }
        if lsm {
            let chunk = lsm_chunk_size(cache, leaf).ok_or_else(|| {
                Error::new(format!(
                    "a WiredTiger LSM tree needs a cache of at least {} bytes; --cache_size={cache}",
                    3 * LSM_CHUNK_MIN + 3 * LSM_MERGE_MAX * leaf
                ))
            })?;
            let mut parts = vec![format!("chunk_size={chunk}")];
            match cfg.bloom_bits {
                Some(0) => parts.push("bloom=false".to_string()),
                Some(b) => parts.push(format!("bloom_bit_count={b}")),
                None => {}
            }
            table.push_str(&format!(",lsm=({})", parts.join(",")));
        }
        if snappy {
            table.push_str(",block_compressor=snappy");
        }
        engine.uri = util::cstring(uri)?;
        let table_c = util::cstring(&table)?;
        {
            let s = engine.open_session()?;
            // SAFETY: an open session of this connection; closed right after.
            let rc = unsafe { ((*s).create)(s, engine.uri.as_ptr(), table_c.as_ptr()) };
            // SAFETY: as above.
            unsafe { ((*s).close)(s, ptr::null()) };
            check("create", rc)?;
        }
        let compression = if !cfg.compression.is_on() {
            "none".to_string()
        } else if snappy {
            "snappy (extension loaded)".to_string()
        } else {
            compressor_note
        };
        engine.settings = vec![
            setting("wiredtiger_open config", &conn_config),
            setting("uri", uri),
            setting("create config", &table),
            setting("compression", compression),
            setting(
                "key/value format",
                "u/u (raw bytes; the write-up used S/S C strings)",
            ),
            setting(
                "log",
                if cfg.wt_log {
                    "enabled, commits not synced (sync=on for synchronous writes)"
                } else {
                    "disabled (as the write-up); synchronous writes are not durable"
                },
            ),
            setting(
                "write cursor",
                "overwrite=true; bulk=true for fillseq/fillbatch/putseq on a fresh table, 1 thread, asynchronous writes",
            ),
            setting("batches", "one transaction per batch"),
            setting("compact", "WT_SESSION::compact"),
        ];
        Ok(engine)
    }

    fn open_session(&self) -> Result<*mut ffi::WT_SESSION> {
        let mut s = ptr::null_mut();
        // SAFETY: the connection is open; the session is closed by its owner.
        check("open_session", unsafe {
            ((*self.conn).open_session)(self.conn, ptr::null_mut(), ptr::null(), &mut s)
        })?;
        Ok(s)
    }
}

impl Drop for WiredTiger {
    fn drop(&mut self) {
        // SAFETY: all sessions borrow the engine, so they are closed; closing
        // the connection checkpoints and frees everything else.
        unsafe { ((*self.conn).close)(self.conn, ptr::null()) };
    }
}

impl Engine for WiredTiger {
    fn kind(&self) -> EngineKind {
        if self.lsm {
            EngineKind::WiredTigerLsm
        } else {
            EngineKind::WiredTigerBtree
        }
    }

    fn version(&self) -> String {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: writes three ints.
        unsafe { ffi::wiredtiger_version(&mut a, &mut b, &mut c) };
        format!("{a}.{b}.{c}")
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        let session = self.open_session()?;
        Ok(Box::new(WtSession {
            db: self,
            session,
            write_cursor: ptr::null_mut(),
            read_cursor: ptr::null_mut(),
            bulk: self.bulk.load(Ordering::Relaxed),
        }))
    }

    fn compact(&self) -> Result<()> {
        let s = self.open_session()?;
        // SAFETY: an open session; closed right after.
        let rc = unsafe { ((*s).compact)(s, self.uri.as_ptr(), ptr::null()) };
        // SAFETY: as above.
        unsafe { ((*s).close)(s, ptr::null()) };
        check("compact", rc)
    }

    fn property(&self, _name: &str) -> Option<String> {
        None
    }

    fn set_bulk_load(&self, on: bool) {
        self.bulk.store(on, Ordering::Relaxed);
    }
}

struct WtSession<'a> {
    db: &'a WiredTiger,
    session: *mut ffi::WT_SESSION,
    write_cursor: *mut ffi::WT_CURSOR,
    read_cursor: *mut ffi::WT_CURSOR,
    bulk: bool,
}

impl Drop for WtSession<'_> {
    fn drop(&mut self) {
        // SAFETY: closing a session closes its cursors.
        unsafe { ((*self.session).close)(self.session, ptr::null()) };
    }
}

impl WtSession<'_> {
    fn open_cursor(&self, config: &str) -> Result<*mut ffi::WT_CURSOR> {
        let cfg = util::cstring(config)?;
        let mut c = ptr::null_mut();
        // SAFETY: an open session; the cursor is closed with it.
        check("open_cursor", unsafe {
            ((*self.session).open_cursor)(
                self.session,
                self.db.uri.as_ptr(),
                ptr::null_mut(),
                cfg.as_ptr(),
                &mut c,
            )
        })?;
        Ok(c)
    }

    fn writer(&mut self) -> Result<*mut ffi::WT_CURSOR> {
        if self.write_cursor.is_null() {
            if self.bulk {
                match self.open_cursor("bulk=true") {
                    Ok(c) => self.write_cursor = c,
                    Err(e) => {
                        eprintln!("wiredtiger: bulk cursor refused ({e}); using a regular cursor");
                        self.bulk = false;
                    }
                }
            }
            if self.write_cursor.is_null() {
                self.write_cursor = self.open_cursor("overwrite=true")?;
            }
        }
        Ok(self.write_cursor)
    }

    fn reader(&mut self) -> Result<*mut ffi::WT_CURSOR> {
        if self.read_cursor.is_null() {
            self.read_cursor = self.open_cursor("")?;
        }
        Ok(self.read_cursor)
    }

    fn begin(&self) -> Result<()> {
        // SAFETY: an open session.
        check("begin_transaction", unsafe {
            ((*self.session).begin_transaction)(self.session, ptr::null())
        })
    }

    fn commit(&self, sync: bool) -> Result<()> {
        let cfg: &[u8] = if sync && self.db.log {
            b"sync=on\0"
        } else {
            b"\0"
        };
        // SAFETY: an open session with a running transaction.
        check("commit_transaction", unsafe {
            ((*self.session).commit_transaction)(self.session, cfg.as_ptr().cast::<c_char>())
        })
    }

    fn rollback(&self) {
        // SAFETY: an open session with a running transaction.
        unsafe { ((*self.session).rollback_transaction)(self.session, ptr::null()) };
    }

    /// Runs `f` alone (bulk cursors are not transactional) or in a
    /// transaction when `txn`.
    fn in_txn(
        &mut self,
        txn: bool,
        sync: bool,
        f: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        if !txn || self.bulk {
            return f(self);
        }
        self.begin()?;
        match f(self) {
            Ok(()) => self.commit(sync),
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }

    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let c = self.writer()?;
        let k = item(key);
        let v = item(value);
        // SAFETY: an open cursor of this session; WiredTiger copies the items
        // during insert.
        unsafe {
            ((*c).set_key)(c, &k as *const ffi::WT_ITEM);
            ((*c).set_value)(c, &v as *const ffi::WT_ITEM);
            check("insert", ((*c).insert)(c))
        }
    }

    fn remove(&mut self, key: &[u8]) -> Result<()> {
        let c = self.writer()?;
        let k = item(key);
        // SAFETY: as in `insert`.
        let rc = unsafe {
            ((*c).set_key)(c, &k as *const ffi::WT_ITEM);
            ((*c).remove)(c)
        };
        if rc == ffi::WT_NOTFOUND {
            return Ok(());
        }
        check("remove", rc)
    }
}

impl Session for WtSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        self.in_txn(sync, sync, |s| s.insert(key, value))
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let c = self.reader()?;
        let k = item(key);
        // SAFETY: an open cursor of this session; the value item points into
        // WiredTiger memory until the cursor is reset, after the copy.
        unsafe {
            ((*c).set_key)(c, &k as *const ffi::WT_ITEM);
            let rc = ((*c).search)(c);
            let found = match rc {
                0 => {
                    let mut v = empty_item();
                    let rc = ((*c).get_value)(c, &mut v as *mut ffi::WT_ITEM);
                    if rc == 0 {
                        value.clear();
                        value.extend_from_slice(util::slice(v.data.cast(), v.size));
                        Ok(true)
                    } else {
                        Err(wt_err("get_value", rc))
                    }
                }
                ffi::WT_NOTFOUND => Ok(false),
                rc => Err(wt_err("search", rc)),
            };
            ((*c).reset)(c);
            found
        }
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        self.in_txn(sync, sync, |s| s.remove(key))
    }

    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()> {
        self.in_txn(true, sync, |s| {
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => s.insert(k, v)?,
                    BatchOp::Delete(k) => s.remove(k)?,
                }
            }
            Ok(())
        })
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        let cursor = self.reader()?;
        Ok(Box::new(WtIter {
            cursor,
            key: empty_item(),
            value: empty_item(),
            valid: false,
            status: Ok(()),
            seek_key: Vec::new(),
            _session: self,
        }))
    }

    fn finish_writes(&mut self) -> Result<()> {
        // Close the write cursor inside the timing, as db_bench_wiredtiger
        // does (for a bulk load this writes out the loaded table).
        if !self.write_cursor.is_null() {
            let c = std::mem::replace(&mut self.write_cursor, ptr::null_mut());
            // SAFETY: an open cursor of this session, closed once.
            check("cursor close", unsafe { ((*c).close)(c) })?;
        }
        Ok(())
    }
}

struct WtIter<'s, 'a> {
    _session: &'s mut WtSession<'a>,
    cursor: *mut ffi::WT_CURSOR,
    key: ffi::WT_ITEM,
    value: ffi::WT_ITEM,
    valid: bool,
    status: Result<()>,
    seek_key: Vec<u8>,
}

impl WtIter<'_, '_> {
    /// Records the outcome of a move and loads the current key and value.
    fn moved(&mut self, rc: c_int, what: &str) {
        self.valid = false;
        match rc {
            0 => {
                // SAFETY: the cursor is positioned; the items point into
                // WiredTiger memory until the next move or reset.
                let (rk, rv) = unsafe {
                    (
                        ((*self.cursor).get_key)(self.cursor, &mut self.key as *mut ffi::WT_ITEM),
                        ((*self.cursor).get_value)(
                            self.cursor,
                            &mut self.value as *mut ffi::WT_ITEM,
                        ),
                    )
                };
                if rk != 0 || rv != 0 {
                    self.status = Err(wt_err("get_key/get_value", if rk != 0 { rk } else { rv }));
                } else {
                    self.valid = true;
                }
            }
            ffi::WT_NOTFOUND => {}
            rc => self.status = Err(wt_err(what, rc)),
        }
    }

    fn reset(&mut self) {
        // SAFETY: an open cursor of the borrowed session.
        unsafe { ((*self.cursor).reset)(self.cursor) };
        self.valid = false;
    }
}

impl Drop for WtIter<'_, '_> {
    fn drop(&mut self) {
        self.reset();
    }
}

impl EngineIter for WtIter<'_, '_> {
    fn seek_to_first(&mut self) {
        self.reset();
        // SAFETY: a reset cursor: `next` moves to the first record.
        let rc = unsafe { ((*self.cursor).next)(self.cursor) };
        self.moved(rc, "next");
    }
    fn seek_to_last(&mut self) {
        self.reset();
        // SAFETY: a reset cursor: `prev` moves to the last record.
        let rc = unsafe { ((*self.cursor).prev)(self.cursor) };
        self.moved(rc, "prev");
    }
    fn seek(&mut self, key: &[u8]) {
        self.seek_key.clear();
        self.seek_key.extend_from_slice(key);
        let k = item(&self.seek_key);
        let mut exact: c_int = 0;
        // SAFETY: an open cursor; the search key lives in `seek_key`.
        let mut rc = unsafe {
            ((*self.cursor).set_key)(self.cursor, &k as *const ffi::WT_ITEM);
            ((*self.cursor).search_near)(self.cursor, &mut exact)
        };
        if rc == 0 && exact < 0 {
            // Landed before the key: the next record is the first at or after it.
            // SAFETY: the cursor is positioned.
            rc = unsafe { ((*self.cursor).next)(self.cursor) };
        }
        self.moved(rc, "search_near");
    }
    fn next(&mut self) {
        if self.valid {
            // SAFETY: the cursor is positioned.
            let rc = unsafe { ((*self.cursor).next)(self.cursor) };
            self.moved(rc, "next");
        }
    }
    fn prev(&mut self) {
        if self.valid {
            // SAFETY: the cursor is positioned.
            let rc = unsafe { ((*self.cursor).prev)(self.cursor) };
            self.moved(rc, "prev");
        }
    }
    fn valid(&self) -> bool {
        self.valid
    }
    fn key(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        // SAFETY: valid until the next move, which needs `&mut self`.
        unsafe { util::slice(self.key.data.cast(), self.key.size) }
    }
    fn value(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        // SAFETY: as for `key`.
        unsafe { util::slice(self.value.data.cast(), self.value.size) }
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::ffi::*;
    use std::mem::{offset_of, size_of};

    /// Offsets read from the installed wiredtiger.h (3.2.1) with offsetof().
    #[test]
    fn method_tables_match_the_installed_header() {
        assert_eq!(size_of::<WT_ITEM>(), 40);
        assert_eq!(offset_of!(WT_CONNECTION, close), 16);
        assert_eq!(offset_of!(WT_CONNECTION, open_session), 64);
        assert_eq!(offset_of!(WT_SESSION, close), 16);
        assert_eq!(offset_of!(WT_SESSION, open_cursor), 40);
        assert_eq!(offset_of!(WT_SESSION, create), 56);
        assert_eq!(offset_of!(WT_SESSION, compact), 72);
        assert_eq!(offset_of!(WT_SESSION, begin_transaction), 168);
        assert_eq!(offset_of!(WT_SESSION, commit_transaction), 176);
        assert_eq!(offset_of!(WT_SESSION, rollback_transaction), 192);
        assert_eq!(offset_of!(WT_CURSOR, get_key), 32);
        assert_eq!(offset_of!(WT_CURSOR, get_value), 40);
        assert_eq!(offset_of!(WT_CURSOR, set_key), 48);
        assert_eq!(offset_of!(WT_CURSOR, set_value), 56);
        assert_eq!(offset_of!(WT_CURSOR, next), 80);
        assert_eq!(offset_of!(WT_CURSOR, prev), 88);
        assert_eq!(offset_of!(WT_CURSOR, reset), 96);
        assert_eq!(offset_of!(WT_CURSOR, search), 104);
        assert_eq!(offset_of!(WT_CURSOR, search_near), 112);
        assert_eq!(offset_of!(WT_CURSOR, insert), 120);
        assert_eq!(offset_of!(WT_CURSOR, remove), 144);
        assert_eq!(offset_of!(WT_CURSOR, close), 160);
    }
}
