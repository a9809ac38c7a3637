//! Versions: the set of live table files per level, and the MANIFEST that
//! records how it changes.
//!
//! `edit` encodes the MANIFEST's records; `filename` names every file of a
//! database directory; `version` is one immutable set of files; `set` holds
//! the current version and the live files; `manifest` writes and recovers the
//! MANIFEST.

pub mod edit;
pub mod manifest;
pub mod set;
#[allow(clippy::module_inception)]
pub mod version;

/// Number of levels in the tree (LevelDB's `config::kNumLevels`).
pub const NUM_LEVELS: usize = 7;
