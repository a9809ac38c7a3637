//! The database: its state, opening and closing (`core`), recovery
//! (`recovery`), the write path (`write`), point reads (`read`), cursors and
//! Rust iterators (`iter`), snapshots and read options (`snapshot`),
//! properties and stats (`properties`), background flushes and the scheduling
//! of compactions (`background`, `wakeup`), the write path's hand-offs
//! between threads (`handoff`), memtable-to-table (`builder`, cut at key jumps by `flush_split`),
//! bulk ingestion of sorted entries straight into tables (`ingest`),
//! the info log (`info_log`) and `repair`.

pub(crate) mod background;
pub(crate) mod builder;
#[cfg(test)]
mod compression_tests;
pub(crate) mod core;
pub(crate) mod flush_split;
mod handoff;
pub(crate) mod info_log;
pub(crate) mod ingest;
pub(crate) mod iter;
mod properties;
pub(crate) mod read;
pub(crate) mod recovery;
pub(crate) mod repair;
pub(crate) mod snapshot;
mod wakeup;
pub(crate) mod write;

pub use self::core::{destroy, Db};
pub use self::ingest::{BulkLoader, IngestStats, IngestedTable};
pub use self::iter::{Cursor, Iter};
pub use self::properties::{LevelStats, Stats};
pub use self::repair::{
    repair, DamagedTable, DroppedRange, MovedFile, RepairReport, RepairedLog, RepairedTable,
};
