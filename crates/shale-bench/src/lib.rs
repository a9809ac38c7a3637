//! # shale-bench
//!
//! A `db_bench`-compatible benchmark tool: LevelDB's db_bench workloads,
//! flags and output, run against Shale and the real peer libraries (LevelDB,
//! RocksDB, SQLite, Kyoto Cabinet TreeDB, WiredTiger LSM and B-tree, LMDB)
//! through their C APIs.
//!
//! The key and value streams are byte-for-byte those of LevelDB's db_bench
//! (`random`, `keygen`), the result lines use its format (`stats`,
//! `histogram`), and every engine adapter (`engines`) reports the settings it
//! ran with. The driver (`runner`) adds what a report needs beside speed:
//! device bytes written, database size, peak memory and throughput over time.
//! `benchmarks` lists every benchmark name it accepts: LevelDB's, and the
//! few added for the report's studies (BangDB's split put/get, SQLite4's
//! `lsmiter`); the contract with the report generator is tested in
//! `tests/report_contract.rs`.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod benchmarks;
pub mod engine;
pub mod engines;
pub mod flags;
pub mod histogram;
pub mod keygen;
pub mod random;
pub mod runner;
pub mod stats;
pub mod sysinfo;
pub mod timeseries;
