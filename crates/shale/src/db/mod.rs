//! The database: the write path (`write`), the read path and recovery
//! (`core`), background flushes and compactions (`background`), the table
//! cache, and the iterators that merge every source into one ordered view.

pub(crate) mod background;
pub(crate) mod builder;
pub(crate) mod core;
pub(crate) mod info_log;
pub(crate) mod iter;
pub(crate) mod repair;
pub(crate) mod snapshot;
mod stats;
mod wakeup;
pub(crate) mod write;

pub use self::core::{destroy, Db};
pub use self::iter::{Cursor, Iter};
pub use self::repair::repair;
pub use self::stats::{LevelStats, Stats};
