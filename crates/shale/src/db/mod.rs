//! The read and write paths that tie memtables, tables and versions together.

pub mod db_iter;
pub mod level_iter;
pub mod merging_iter;
