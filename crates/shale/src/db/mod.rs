//! The database: the write path (`write`), the read path and recovery
//! (`core`), background flushes and compactions (`background`), the table
//! cache, and the iterators that merge every source into one ordered view.

pub mod background;
pub mod builder;
pub mod core;
pub mod db_iter;
pub mod info_log;
pub mod iter;
pub mod level_iter;
pub mod merging_iter;
pub mod repair;
pub mod table_cache;
mod wakeup;
pub mod write;

pub use self::core::{destroy, Db};
pub use self::iter::DbIter;
pub use self::repair::repair;
