//! The engine adapters, one per file, and the table of which ones this build
//! contains.
//!
//! Peer engines are compiled in only when `build.rs` found their library
//! (cfg `have_<lib>`); Shale only with the `shale` feature. Asking for an
//! engine that is not built gives [`OpenError::Unavailable`] with a one-line
//! reason, never a failure.

use crate::engine::{Engine, EngineConfig, EngineKind, Error};

#[cfg(any(have_leveldb, have_rocksdb))]
mod lsm_capi;
mod util;

#[cfg(have_kyotocabinet)]
pub mod kyoto;
#[cfg(have_leveldb)]
pub mod leveldb;
#[cfg(have_lmdb)]
pub mod lmdb;
#[cfg(have_rocksdb)]
pub mod rocksdb;
#[cfg(feature = "shale")]
pub mod shale;
#[cfg(have_sqlite3)]
pub mod sqlite3;
#[cfg(have_wiredtiger)]
pub mod wiredtiger;

/// Why an engine could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The engine is not part of this build; the reason says why.
    Unavailable(String),
    /// The engine is built but opening failed.
    Failed(Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Unavailable(why) => write!(f, "not available: {why}"),
            OpenError::Failed(e) => write!(f, "open error: {e}"),
        }
    }
}

impl From<Error> for OpenError {
    fn from(e: Error) -> OpenError {
        OpenError::Failed(e)
    }
}

fn build_status(status: &'static str) -> Result<(), String> {
    if status == "available" {
        Ok(())
    } else {
        Err(status.to_string())
    }
}

/// `Ok` if `kind` is built into this binary, else the reason it is not.
pub fn availability(kind: EngineKind) -> Result<(), String> {
    match kind {
        EngineKind::Shale => {
            if cfg!(feature = "shale") {
                Ok(())
            } else {
                Err("built without the `shale` cargo feature".to_string())
            }
        }
        EngineKind::LevelDb => build_status(env!("SHALE_BENCH_LEVELDB_STATUS")),
        EngineKind::RocksDb => build_status(env!("SHALE_BENCH_ROCKSDB_STATUS")),
        EngineKind::Sqlite3 => build_status(env!("SHALE_BENCH_SQLITE3_STATUS")),
        EngineKind::KyotoTreeDb => build_status(env!("SHALE_BENCH_KYOTOCABINET_STATUS")),
        EngineKind::WiredTigerLsm | EngineKind::WiredTigerBtree => {
            build_status(env!("SHALE_BENCH_WIREDTIGER_STATUS"))
        }
        EngineKind::Lmdb => build_status(env!("SHALE_BENCH_LMDB_STATUS")),
    }
}

/// How many `assert` call sites the installed library of `kind` contains
/// (`Some(0)`: built with `-DNDEBUG`; `None`: unknown or not a C library).
pub fn library_assert_sites(kind: EngineKind) -> Option<usize> {
    let sites = match kind {
        EngineKind::Shale => return None,
        EngineKind::LevelDb => env!("SHALE_BENCH_LEVELDB_ASSERT_SITES"),
        EngineKind::RocksDb => env!("SHALE_BENCH_ROCKSDB_ASSERT_SITES"),
        EngineKind::Sqlite3 => env!("SHALE_BENCH_SQLITE3_ASSERT_SITES"),
        EngineKind::KyotoTreeDb => env!("SHALE_BENCH_KYOTOCABINET_ASSERT_SITES"),
        EngineKind::WiredTigerLsm | EngineKind::WiredTigerBtree => {
            env!("SHALE_BENCH_WIREDTIGER_ASSERT_SITES")
        }
        EngineKind::Lmdb => env!("SHALE_BENCH_LMDB_ASSERT_SITES"),
    };
    sites.parse().ok()
}

/// Opens engine `kind` with `cfg`. The directory `cfg.path` must exist.
pub fn open(kind: EngineKind, cfg: &EngineConfig) -> Result<Box<dyn Engine>, OpenError> {
    availability(kind).map_err(OpenError::Unavailable)?;
    let _ = cfg;
    match kind {
        #[cfg(feature = "shale")]
        EngineKind::Shale => Ok(Box::new(shale::ShaleEngine::open(cfg)?)),
        #[cfg(have_leveldb)]
        EngineKind::LevelDb => Ok(Box::new(leveldb::LevelDb::open(cfg)?)),
        #[cfg(have_rocksdb)]
        EngineKind::RocksDb => Ok(Box::new(rocksdb::RocksDb::open(cfg)?)),
        #[cfg(have_sqlite3)]
        EngineKind::Sqlite3 => Ok(Box::new(sqlite3::Sqlite::open(cfg)?)),
        #[cfg(have_kyotocabinet)]
        EngineKind::KyotoTreeDb => Ok(Box::new(kyoto::KyotoTreeDb::open(cfg)?)),
        #[cfg(have_wiredtiger)]
        EngineKind::WiredTigerLsm => Ok(Box::new(wiredtiger::WiredTiger::open(cfg, true)?)),
        #[cfg(have_wiredtiger)]
        EngineKind::WiredTigerBtree => Ok(Box::new(wiredtiger::WiredTiger::open(cfg, false)?)),
        #[cfg(have_lmdb)]
        EngineKind::Lmdb => Ok(Box::new(lmdb::Lmdb::open(cfg)?)),
        #[allow(unreachable_patterns)]
        _ => Err(OpenError::Unavailable(
            "not compiled into this binary".to_string(),
        )),
    }
}
