//! The database: the write path (`write`), the read path and recovery
//! (`core`), background flushes and compactions (`background`), the table
//! cache, and the iterators that merge every source into one ordered view.

pub(crate) mod background;
pub(crate) mod builder;
pub(crate) mod core;
pub(crate) mod db_iter;
pub(crate) mod info_log;
pub(crate) mod iter;
pub(crate) mod level_iter;
pub(crate) mod merging_iter;
pub(crate) mod repair;
mod stats;
pub(crate) mod table_cache;
mod wakeup;
pub(crate) mod write;

pub use self::core::{destroy, Db};
pub use self::iter::{Cursor, Iter};
pub use self::repair::repair;
pub use self::stats::{LevelStats, Stats};
