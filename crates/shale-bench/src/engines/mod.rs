//! The engine adapters, one per file, and the table of which ones this build
//! contains.
//!
//! Peer engines are compiled in only when `build.rs` found their library
//! (cfg `have_<lib>`); Shale only with the `shale` feature. Asking for an
//! engine that is not built gives [`OpenError::Unavailable`] with a one-line
//! reason, never a failure.
//!
//! [`codecs`] says which checksum and snappy code stand for each engine in
//! db_bench's `crc32c`, `snappycomp` and `snappyuncomp` lines: its own, or
//! the reason it has none (`libsnappy` is the C library the LevelDB family
//! links, cfg `have_snappy`).

use crate::engine::{Codecs, Engine, EngineConfig, EngineKind, Error};

mod leveldb_family;
#[cfg(have_snappy)]
pub mod libsnappy;
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
pub mod shale_c;
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
        EngineKind::ShaleC => shale_c::availability(),
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
        EngineKind::Shale | EngineKind::ShaleC => return None,
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

/// The shared library file engine `kind` was linked against and where it
/// comes from (a Debian package, or a release build of
/// `scripts/build-peers.sh`), as build.rs found them; `None` for Shale and
/// for an engine not in this build.
pub fn library(kind: EngineKind) -> Option<(&'static str, &'static str)> {
    let (file, build) = match kind {
        EngineKind::Shale => return None,
        EngineKind::ShaleC => return shale_c::library(),
        EngineKind::LevelDb => (
            env!("SHALE_BENCH_LEVELDB_LIBRARY"),
            env!("SHALE_BENCH_LEVELDB_BUILD"),
        ),
        EngineKind::RocksDb => (
            env!("SHALE_BENCH_ROCKSDB_LIBRARY"),
            env!("SHALE_BENCH_ROCKSDB_BUILD"),
        ),
        EngineKind::Sqlite3 => (
            env!("SHALE_BENCH_SQLITE3_LIBRARY"),
            env!("SHALE_BENCH_SQLITE3_BUILD"),
        ),
        EngineKind::KyotoTreeDb => (
            env!("SHALE_BENCH_KYOTOCABINET_LIBRARY"),
            env!("SHALE_BENCH_KYOTOCABINET_BUILD"),
        ),
        EngineKind::WiredTigerLsm | EngineKind::WiredTigerBtree => (
            env!("SHALE_BENCH_WIREDTIGER_LIBRARY"),
            env!("SHALE_BENCH_WIREDTIGER_BUILD"),
        ),
        EngineKind::Lmdb => (
            env!("SHALE_BENCH_LMDB_LIBRARY"),
            env!("SHALE_BENCH_LMDB_BUILD"),
        ),
    };
    (!file.is_empty()).then_some((file, build))
}

/// The checksum and snappy code of engine `kind`, for db_bench's `crc32c`,
/// `snappycomp` and `snappyuncomp` lines; what it lacks (or this build
/// cannot reach) is an `Err` with a one-line reason.
pub fn codecs(kind: EngineKind) -> Codecs {
    if let Err(why) = availability(kind) {
        return Codecs::none(&format!("{} is not in this build: {why}", kind.name()));
    }
    match kind {
        // Shale's C library runs the same engine code.
        #[cfg(feature = "shale")]
        EngineKind::Shale | EngineKind::ShaleC => shale::codecs(),
        #[cfg(have_leveldb)]
        EngineKind::LevelDb => leveldb::codecs(),
        #[cfg(have_rocksdb)]
        EngineKind::RocksDb => rocksdb::codecs(),
        #[cfg(have_wiredtiger)]
        EngineKind::WiredTigerLsm | EngineKind::WiredTigerBtree => wiredtiger::codecs(),
        EngineKind::Sqlite3 => Codecs::none("SQLite's API has neither a CRC-32C nor a compressor"),
        EngineKind::KyotoTreeDb => Codecs {
            crc32c: Err("Kyoto Cabinet's API has no CRC-32C".to_string()),
            snappy: Err("Kyoto Cabinet compresses with zlib, LZO or LZMA, not snappy".to_string()),
        },
        EngineKind::Lmdb => Codecs::none("LMDB has neither a checksum nor a compressor"),
        #[allow(unreachable_patterns)]
        _ => Codecs::none("not compiled into this binary"),
    }
}

/// Why an engine that links libsnappy cannot run the snappy lines in this
/// build (libsnappy was not found when it was built).
#[cfg(not(have_snappy))]
#[allow(dead_code)] // used by whichever snappy-linking engines are built
fn no_libsnappy() -> String {
    env!("SHALE_BENCH_SNAPPY_STATUS").to_string()
}

/// Opens engine `kind` with `cfg`. The directory `cfg.path` must exist.
pub fn open(kind: EngineKind, cfg: &EngineConfig) -> Result<Box<dyn Engine>, OpenError> {
    availability(kind).map_err(OpenError::Unavailable)?;
    let _ = cfg;
    match kind {
        #[cfg(feature = "shale")]
        EngineKind::Shale => Ok(Box::new(shale::ShaleEngine::open(cfg)?)),
        EngineKind::ShaleC => Ok(Box::new(shale_c::open(cfg)?)),
        #[cfg(have_leveldb)]
        EngineKind::LevelDb => Ok(Box::new(leveldb::open(cfg)?)),
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

#[cfg(test)]
mod tests {
    //! Each engine's codecs compute the standard CRC-32C and speak the raw
    //! snappy format: their output round-trips, and libsnappy's encoding is
    //! read by Shale's decoder and the other way round.

    use super::*;
    use crate::engine::Snappy;
    use crate::keygen::{random_string, ValueBuffer};
    use crate::random::Random;

    /// `(input, CRC-32C)`: RFC 3720 section B.4, and the usual check value.
    fn crc_vectors() -> Vec<(Vec<u8>, u32)> {
        vec![
            (Vec::new(), 0),
            (vec![0u8; 32], 0x8a91_36aa),
            (vec![0xffu8; 32], 0x62a8_ab43),
            ((0..32).collect(), 0x46dd_794e),
            ((0..32).rev().collect(), 0x113f_db5c),
            (b"123456789".to_vec(), 0xe306_9283),
        ]
    }

    /// Inputs for the snappy tests (fixed seed): empty, one byte, db_bench's
    /// 4 KB half-compressible value, runs, and 100 KB of random bytes (more
    /// than snappy's 64 KB fragment).
    fn snappy_inputs() -> Vec<Vec<u8>> {
        let mut rnd = Random::new(301);
        let mut random = Vec::new();
        random_string(&mut rnd, 100_000, &mut random);
        vec![
            Vec::new(),
            b"x".to_vec(),
            ValueBuffer::new(0.5).generator().generate(4096).to_vec(),
            b"abcd".repeat(5000),
            random,
        ]
    }

    fn built_with_codecs() -> Vec<(EngineKind, Codecs)> {
        EngineKind::ALL
            .into_iter()
            .filter(|k| availability(*k).is_ok())
            .map(|k| (k, codecs(k)))
            .collect()
    }

    fn encode(codec: &Snappy, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let n = (codec.compressor)()
            .compress(input, &mut out)
            .expect("compresses");
        out.truncate(n);
        out
    }

    #[test]
    fn every_crc32c_computes_the_standard_values() {
        let mut checked = 0;
        for (kind, c) in built_with_codecs() {
            let Ok(crc) = c.crc32c else { continue };
            for (input, want) in crc_vectors() {
                assert_eq!(
                    (crc.value)(&input),
                    want,
                    "{}: crc32c of {input:02x?}",
                    kind.name()
                );
            }
            // A db_bench-sized buffer at any alignment agrees with the
            // bit-at-a-time definition.
            let data: Vec<u8> = (0..4099u32).map(|i| (i * 7 + i / 13) as u8).collect();
            for start in 0..4 {
                assert_eq!(
                    (crc.value)(&data[start..]),
                    bitwise_crc32c(&data[start..]),
                    "{}: offset {start}",
                    kind.name()
                );
            }
            checked += 1;
        }
        if cfg!(feature = "shale") {
            assert!(checked > 0);
        }
    }

    /// CRC-32C one bit at a time (reflected polynomial 0x82f63b78).
    fn bitwise_crc32c(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0x82f6_3b78
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn every_snappy_codec_round_trips_and_checks_the_length() {
        for (kind, c) in built_with_codecs() {
            let Ok(codec) = c.snappy else { continue };
            let name = kind.name();
            let mut compressor = (codec.compressor)();
            let mut buf = Vec::new();
            for input in snappy_inputs() {
                // The same compressor and buffer, reused, as db_bench does.
                let n = compressor.compress(&input, &mut buf).expect("compresses");
                let encoded = &buf[..n];
                let mut out = vec![0u8; input.len()];
                assert!((codec.uncompress)(encoded, &mut out), "{name}");
                assert_eq!(out, input, "{name}: round trip");
                let mut long = vec![0u8; input.len() + 1];
                assert!(
                    !(codec.uncompress)(encoded, &mut long),
                    "{name}: a buffer longer than the value is refused"
                );
                if !input.is_empty() {
                    let mut short = vec![0u8; input.len() - 1];
                    assert!(
                        !(codec.uncompress)(encoded, &mut short),
                        "{name}: a buffer shorter than the value is refused"
                    );
                }
            }
            // db_bench's value compresses to about half.
            let value = &snappy_inputs()[2];
            let n = encode(&codec, value).len();
            assert!(n < value.len() * 6 / 10, "{name}: {n} bytes");
            // Not snappy: a length varint that never ends.
            let mut out = vec![0u8; 16];
            assert!(!(codec.uncompress)(&[0xff; 8], &mut out), "{name}");
        }
    }

    #[test]
    fn the_engines_that_have_codecs_in_this_build_expose_them() {
        for (kind, c) in built_with_codecs() {
            let (crc, snappy) = match kind {
                EngineKind::Shale | EngineKind::ShaleC => (true, true),
                EngineKind::LevelDb => (cfg!(have_leveldb_crc32c), cfg!(have_snappy)),
                EngineKind::RocksDb => (true, cfg!(have_snappy)),
                EngineKind::WiredTigerLsm | EngineKind::WiredTigerBtree => (
                    true,
                    cfg!(have_snappy) && !env!("SHALE_BENCH_WIREDTIGER_SNAPPY").is_empty(),
                ),
                EngineKind::Sqlite3 | EngineKind::KyotoTreeDb | EngineKind::Lmdb => (false, false),
            };
            assert_eq!(c.crc32c.is_ok(), crc, "{}: {:?}", kind.name(), c.crc32c);
            assert_eq!(c.snappy.is_ok(), snappy, "{}: {:?}", kind.name(), c.snappy);
            let settings = c.settings();
            assert_eq!(settings.len(), 2);
            for (name, value) in settings {
                assert!(!value.is_empty(), "{}: {name}", kind.name());
            }
        }
    }

    #[cfg(all(feature = "shale", have_snappy))]
    #[test]
    fn libsnappy_and_shale_read_each_others_encoding() {
        let shale = shale::codecs().snappy.expect("shale has snappy");
        let lib = libsnappy::snappy("");
        for input in snappy_inputs() {
            for (from, to, what) in [
                (&lib, &shale, "libsnappy -> shale"),
                (&shale, &lib, "shale -> libsnappy"),
            ] {
                let encoded = encode(from, &input);
                let mut out = vec![0u8; input.len()];
                assert!((to.uncompress)(&encoded, &mut out), "{what}");
                assert_eq!(out, input, "{what}");
            }
        }
    }

    #[test]
    fn an_engine_not_built_has_no_codecs() {
        for kind in EngineKind::ALL {
            if let Err(why) = availability(kind) {
                let c = codecs(kind);
                let reason = c.crc32c.expect_err("not built");
                assert!(reason.contains(&why), "{reason}");
                assert!(c.snappy.is_err());
            }
        }
    }
}
