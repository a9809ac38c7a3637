//! Kyoto Cabinet's file B+ tree database (TreeDB) through its C API
//! (`kclangc.h`), configured as LevelDB's db_bench_tree_db: `TSMALL` and
//! `TLINEAR`, compression (`TCOMPRESS`) with the LZO raw compressor when
//! `--compression=1` (Debian's build links liblzo2; `--kyoto_zcomp` picks
//! another), page size 1024, a page cache of `--cache_size` bytes (4 MB by
//! default), a 256 MB memory map, `OAUTOSYNC` when opened for synchronous
//! writes, and `synchronize` at the end of each write benchmark (timed, as
//! db_bench_tree_db does).
//!
//! TreeDB has no write batches and no explicit compaction; those benchmarks
//! report "not supported". The database object is thread-safe; each session
//! has its own cursor.

use std::ffi::c_void;
use std::os::raw::{c_char, c_int};
use std::ptr;

use super::util::{self, setting};
use crate::engine::{
    Batch, Engine, EngineConfig, EngineIter, EngineKind, Error, Feature, Result, Session,
};
use crate::flags::Codec;

#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    clippy::upper_case_acronyms
)]
mod ffi {
    use std::ffi::c_void;
    use std::os::raw::c_char;

    #[repr(C)]
    pub struct KCDB {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct KCCUR {
        _private: [u8; 0],
    }

    pub const KCOWRITER: u32 = 1 << 1;
    pub const KCOCREATE: u32 = 1 << 2;
    pub const KCOAUTOSYNC: u32 = 1 << 5;
    pub const KCENOREC: i32 = 7;

    extern "C" {
        pub static KCVERSION: *const c_char;
        pub fn kcfree(ptr: *mut c_void);
        pub fn kcdbnew() -> *mut KCDB;
        pub fn kcdbdel(db: *mut KCDB);
        pub fn kcdbopen(db: *mut KCDB, path: *const c_char, mode: u32) -> i32;
        pub fn kcdbclose(db: *mut KCDB) -> i32;
        pub fn kcdbecode(db: *mut KCDB) -> i32;
        pub fn kcdbemsg(db: *mut KCDB) -> *const c_char;
        pub fn kcdbset(
            db: *mut KCDB,
            kbuf: *const c_char,
            ksiz: usize,
            vbuf: *const c_char,
            vsiz: usize,
        ) -> i32;
        pub fn kcdbremove(db: *mut KCDB, kbuf: *const c_char, ksiz: usize) -> i32;
        pub fn kcdbget(
            db: *mut KCDB,
            kbuf: *const c_char,
            ksiz: usize,
            sp: *mut usize,
        ) -> *mut c_char;
        pub fn kcdbsync(db: *mut KCDB, hard: i32, proc_: *const c_void, opq: *mut c_void) -> i32;
        pub fn kcdbstatus(db: *mut KCDB) -> *mut c_char;

        pub fn kcdbcursor(db: *mut KCDB) -> *mut KCCUR;
        pub fn kccurdel(cur: *mut KCCUR);
        pub fn kccurjump(cur: *mut KCCUR) -> i32;
        pub fn kccurjumpkey(cur: *mut KCCUR, kbuf: *const c_char, ksiz: usize) -> i32;
        pub fn kccurjumpback(cur: *mut KCCUR) -> i32;
        pub fn kccurstep(cur: *mut KCCUR) -> i32;
        pub fn kccurstepback(cur: *mut KCCUR) -> i32;
        pub fn kccurget(
            cur: *mut KCCUR,
            ksp: *mut usize,
            vbp: *mut *const c_char,
            vsp: *mut usize,
            step: i32,
        ) -> *mut c_char;
    }
}

const DEFAULT_PAGE_CACHE: u64 = 4 << 20;
const PAGE_SIZE: u64 = 1024;
const MAP_SIZE: u64 = 256 << 20;

/// An open Kyoto Cabinet TreeDB.
pub struct KyotoTreeDb {
    db: *mut ffi::KCDB,
    settings: Vec<(String, String)>,
}

// SAFETY: Kyoto Cabinet's database objects are thread-safe (internally
// locked); cursors are per session.
unsafe impl Send for KyotoTreeDb {}
// SAFETY: as above.
unsafe impl Sync for KyotoTreeDb {}

impl KyotoTreeDb {
    /// Opens (or creates) `<cfg.path>/kyoto.kct`.
    pub fn open(cfg: &EngineConfig) -> Result<KyotoTreeDb> {
        let file = cfg.path.join("kyoto.kct");
        if matches!(cfg.compression, Codec::Zstd | Codec::Lz4) {
            return Err(Error::new(format!(
                "--compression_type={}: Kyoto Cabinet has no {} compressor (--compression_type=snappy uses --kyoto_zcomp)",
                cfg.compression.name(),
                cfg.compression.name()
            )));
        }
        let compress = cfg.compression.is_on() && cfg.kyoto_zcomp != "none";
        let page_cache = cfg.cache_size.unwrap_or(DEFAULT_PAGE_CACHE);
        let mut params = format!(
            "{}#opts=sl{}#pccap={page_cache}#psiz={PAGE_SIZE}#msiz={MAP_SIZE}",
            file.display(),
            if compress { "c" } else { "" }
        );
        if compress {
            params.push_str(&format!("#zcomp={}", cfg.kyoto_zcomp));
        }
        let mut mode = ffi::KCOWRITER;
        if cfg.create {
            mode |= ffi::KCOCREATE;
        }
        if cfg.sync_writes {
            mode |= ffi::KCOAUTOSYNC;
        }
        let cpath = util::cstring(&params)?;
        // SAFETY: a new database object, owned by the returned value (or
        // deleted here when opening fails).
        let db = unsafe { ffi::kcdbnew() };
        // SAFETY: `db` is a fresh object; the path is a valid C string.
        if unsafe { ffi::kcdbopen(db, cpath.as_ptr(), mode) } == 0 {
            // SAFETY: the message belongs to `db`, which is deleted right after.
            let msg = unsafe { util::string_from(ffi::kcdbemsg(db)) };
            // SAFETY: never opened, deleted once.
            unsafe { ffi::kcdbdel(db) };
            return Err(Error::new(format!("kcdbopen {params}: {msg}")));
        }
        let settings = vec![
            setting("open path", &params),
            setting(
                "tune_options",
                if compress {
                    "TSMALL | TLINEAR | TCOMPRESS"
                } else {
                    "TSMALL | TLINEAR"
                },
            ),
            setting(
                "compressor",
                if compress {
                    match cfg.kyoto_zcomp.as_str() {
                        "lzo" => "LZO raw (as db_bench_tree_db)".to_string(),
                        other => format!("{other} (db_bench_tree_db used LZO raw)"),
                    }
                } else {
                    "none".to_string()
                },
            ),
            setting("page_cache", util::bytes(page_cache)),
            setting("page_size", PAGE_SIZE),
            setting("map_size", util::bytes(MAP_SIZE)),
            setting(
                "open mode",
                if cfg.sync_writes {
                    "OWRITER | OCREATE | OAUTOSYNC"
                } else {
                    "OWRITER | OCREATE"
                },
            ),
            setting(
                "after each write benchmark",
                "synchronize(hard=false), timed",
            ),
            setting("batches", "not supported"),
            setting("compact", "not supported"),
        ];
        Ok(KyotoTreeDb { db, settings })
    }

    fn error(&self, what: &str) -> Error {
        // SAFETY: the database is open; the message belongs to it (per thread).
        let msg = unsafe { util::string_from(ffi::kcdbemsg(self.db)) };
        Error::new(format!("kyoto {what}: {msg}"))
    }
}

impl Drop for KyotoTreeDb {
    fn drop(&mut self) {
        // SAFETY: open database, closed and deleted once.
        unsafe {
            ffi::kcdbclose(self.db);
            ffi::kcdbdel(self.db);
        }
    }
}

impl Engine for KyotoTreeDb {
    fn kind(&self) -> EngineKind {
        EngineKind::KyotoTreeDb
    }

    fn version(&self) -> String {
        // SAFETY: a static NUL-terminated string of the library.
        unsafe { util::string_from(ffi::KCVERSION) }
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        // SAFETY: a cursor of the open database, deleted by the session.
        let cur = unsafe { ffi::kcdbcursor(self.db) };
        if cur.is_null() {
            return Err(self.error("cursor"));
        }
        Ok(Box::new(KyotoSession { db: self, cur }))
    }

    fn compact(&self) -> Result<()> {
        Err(Error::new("not supported by Kyoto TreeDB"))
    }

    fn property(&self, _name: &str) -> Option<String> {
        // SAFETY: the status text is malloc'ed by Kyoto and freed here.
        unsafe {
            let s = ffi::kcdbstatus(self.db);
            if s.is_null() {
                return None;
            }
            let text = util::string_from(s);
            ffi::kcfree(s.cast());
            Some(text)
        }
    }

    fn unsupported(&self, feature: Feature) -> Option<&'static str> {
        match feature {
            Feature::Batch => Some("Kyoto TreeDB has no write batches"),
            Feature::Compact => Some("Kyoto TreeDB has no compaction call"),
        }
    }
}

struct KyotoSession<'a> {
    db: &'a KyotoTreeDb,
    cur: *mut ffi::KCCUR,
}

impl Drop for KyotoSession<'_> {
    fn drop(&mut self) {
        // SAFETY: the cursor belongs to this session.
        unsafe { ffi::kccurdel(self.cur) };
    }
}

impl Session for KyotoSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], _sync: bool) -> Result<()> {
        // Durability comes from the open mode (OAUTOSYNC), set per benchmark.
        // SAFETY: key and value outlive the call; Kyoto copies them.
        let ok = unsafe {
            ffi::kcdbset(
                self.db.db,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        };
        if ok == 0 {
            return Err(self.db.error("set"));
        }
        Ok(())
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let mut len = 0usize;
        // SAFETY: the result is a malloc'ed copy (or null), freed after copying.
        unsafe {
            let v = ffi::kcdbget(self.db.db, key.as_ptr().cast(), key.len(), &mut len);
            if v.is_null() {
                if ffi::kcdbecode(self.db.db) == ffi::KCENOREC {
                    return Ok(false);
                }
                return Err(self.db.error("get"));
            }
            value.clear();
            value.extend_from_slice(util::slice(v as *const u8, len));
            ffi::kcfree(v.cast());
        }
        Ok(true)
    }

    fn delete(&mut self, key: &[u8], _sync: bool) -> Result<()> {
        // SAFETY: the key outlives the call.
        let ok = unsafe { ffi::kcdbremove(self.db.db, key.as_ptr().cast(), key.len()) };
        // SAFETY: reads this thread's last error of the open database.
        if ok == 0 && unsafe { ffi::kcdbecode(self.db.db) } != ffi::KCENOREC {
            return Err(self.db.error("remove"));
        }
        Ok(())
    }

    fn write(&mut self, _batch: &Batch, _sync: bool) -> Result<()> {
        Err(Error::new("Kyoto TreeDB has no write batches"))
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        Ok(Box::new(KyotoIter {
            cur: self.cur,
            db: self.db,
            rec: ptr::null_mut(),
            key_len: 0,
            value: ptr::null(),
            value_len: 0,
            ahead: false,
            status: Ok(()),
        }))
    }

    fn finish_writes(&mut self) -> Result<()> {
        // SAFETY: the database is open; no file processor.
        if unsafe { ffi::kcdbsync(self.db.db, 0, ptr::null(), ptr::null_mut()) } == 0 {
            return Err(self.db.error("synchronize"));
        }
        Ok(())
    }
}

/// A cursor iterator. Moving forward uses `kccurget(step=1)`, which returns
/// the record and advances in one call (as db_bench_tree_db reads); the
/// cursor is then one record *ahead* of the current entry, which `prev`
/// accounts for.
struct KyotoIter<'a> {
    cur: *mut ffi::KCCUR,
    db: &'a KyotoTreeDb,
    /// The current record (key followed by value), malloc'ed by Kyoto; null
    /// when the iterator is not valid.
    rec: *mut c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
    ahead: bool,
    status: Result<()>,
}

impl KyotoIter<'_> {
    fn release(&mut self) {
        if !self.rec.is_null() {
            // SAFETY: allocated by kccurget, freed once.
            unsafe { ffi::kcfree(self.rec.cast::<c_void>()) };
            self.rec = ptr::null_mut();
        }
    }

    /// Reads the record under the cursor (advancing when `step`).
    fn fetch(&mut self, step: bool) {
        self.release();
        // SAFETY: the cursor belongs to the session this iterator borrows.
        self.rec = unsafe {
            ffi::kccurget(
                self.cur,
                &mut self.key_len,
                &mut self.value,
                &mut self.value_len,
                c_int::from(step),
            )
        };
        self.ahead = step && !self.rec.is_null();
        if self.rec.is_null() {
            // SAFETY: reads this thread's last error of the open database.
            let code = unsafe { ffi::kcdbecode(self.db.db) };
            if code != ffi::KCENOREC {
                self.status = Err(self.db.error("cursor get"));
            }
        }
    }

    fn moved(&mut self, ok: i32, what: &str) -> bool {
        if ok == 0 {
            self.release();
            // SAFETY: as in `fetch`.
            if unsafe { ffi::kcdbecode(self.db.db) } != ffi::KCENOREC {
                self.status = Err(self.db.error(what));
            }
            return false;
        }
        true
    }
}

impl Drop for KyotoIter<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

impl EngineIter for KyotoIter<'_> {
    fn seek_to_first(&mut self) {
        // SAFETY: the session's cursor.
        let ok = unsafe { ffi::kccurjump(self.cur) };
        if self.moved(ok, "jump") {
            self.fetch(true);
        }
    }
    fn seek_to_last(&mut self) {
        // SAFETY: the session's cursor.
        let ok = unsafe { ffi::kccurjumpback(self.cur) };
        if self.moved(ok, "jumpback") {
            self.fetch(false);
        }
    }
    fn seek(&mut self, key: &[u8]) {
        // SAFETY: the session's cursor; the key is copied.
        let ok = unsafe { ffi::kccurjumpkey(self.cur, key.as_ptr().cast(), key.len()) };
        if self.moved(ok, "jumpkey") {
            self.fetch(true);
        }
    }
    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if !self.ahead {
            // SAFETY: the session's cursor.
            let ok = unsafe { ffi::kccurstep(self.cur) };
            if !self.moved(ok, "step") {
                return;
            }
        }
        self.fetch(true);
    }
    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.ahead {
            // Re-position on the current key (the cursor may have run off
            // the end), then step back from it.
            let key = self.key().to_vec();
            // SAFETY: the session's cursor; the key is copied.
            let ok = unsafe { ffi::kccurjumpkey(self.cur, key.as_ptr().cast(), key.len()) };
            if !self.moved(ok, "jumpkey") {
                return;
            }
        }
        // SAFETY: the session's cursor.
        let ok = unsafe { ffi::kccurstepback(self.cur) };
        if self.moved(ok, "stepback") {
            self.fetch(false);
        }
    }
    fn valid(&self) -> bool {
        !self.rec.is_null()
    }
    fn key(&self) -> &[u8] {
        // SAFETY: `rec` holds `key_len` key bytes until released (needs &mut).
        unsafe { util::slice(self.rec as *const u8, self.key_len) }
    }
    fn value(&self) -> &[u8] {
        if self.rec.is_null() {
            return &[];
        }
        // SAFETY: `value` points into `rec`, valid until released.
        unsafe { util::slice(self.value as *const u8, self.value_len) }
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}
