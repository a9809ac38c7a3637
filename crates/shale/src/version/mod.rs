//! Versions: the set of live table files per level, and the MANIFEST that
//! records how it changes.
//!
//! `edit` encodes the MANIFEST's records; `filename` names every file of a
//! database directory.

pub mod edit;
pub mod filename;

/// Number of levels in the tree (LevelDB's `config::kNumLevels`).
pub const NUM_LEVELS: usize = 7;
