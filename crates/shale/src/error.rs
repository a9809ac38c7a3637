//! The one error type of the engine.
//!
//! Every failure says what went wrong and where: the file and byte offset of
//! a corruption, the argument that was refused, the I/O call that failed.

use std::fmt;
use std::path::PathBuf;

/// The result type used throughout Shale.
///
/// ```
/// fn first_key(db: &shale::Db) -> shale::Result<Option<Vec<u8>>> {
///     Ok(db.iter().next().transpose()?.map(|(key, _)| key.to_vec()))
/// }
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() }).unwrap();
/// # assert_eq!(first_key(&db).unwrap(), None);
/// ```
pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong, and where: the file and offset of a corruption, the
/// argument refused, the path of a failed I/O call. More kinds may come:
/// match with a `_` arm.
///
/// ```
/// use shale::{Db, Error, Options};
/// let dir = tempfile::tempdir().unwrap();
/// match Db::open(dir.path().join("missing"), Options::default()) {
///     Err(Error::InvalidArgument(why)) => assert!(why.contains("does not exist"), "{why}"),
///     Err(other) => panic!("unexpected: {other}"),
///     Ok(_) => panic!("opened a database that does not exist"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The key, file or database that was asked for does not exist.
    #[error("not found: {0}")]
    NotFound(String),

    /// Bytes read from disk do not have the expected form.
    #[error("corruption in {file}{}: {reason}", fmt_offset(*.offset))]
    Corruption {
        /// The file the bad bytes were read from (empty when in memory).
        file: PathBuf,
        /// The byte offset in that file, when known.
        offset: Option<u64>,
        /// What was wrong with them.
        reason: String,
    },

    /// A caller passed an argument or option that cannot be used.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The operating system refused a file operation.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory the operation was on.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The operation is not supported by this build or configuration.
    #[error("not supported: {0}")]
    NotSupported(String),

    /// The database was closed, or a background error made it read-only.
    #[error("database unusable after an earlier error: {0}")]
    Background(String),

    /// A write with [`WriteOptions::no_slowdown`](crate::WriteOptions::no_slowdown)
    /// would have had to wait (for other writers, a memtable switch or a
    /// level-0 slowdown); nothing was written.
    #[error("incomplete: {0}")]
    Incomplete(String),
}

fn fmt_offset(offset: Option<u64>) -> String {
    match offset {
        Some(o) => format!(" at offset {o}"),
        None => String::new(),
    }
}

impl Error {
    /// A corruption at a known place in a file.
    ///
    /// ```
    /// let e = shale::Error::corruption("db/000005.ldb", Some(4096), "bad block checksum");
    /// assert!(e.is_corruption());
    /// assert!(e.to_string().contains("bad block checksum"));
    /// ```
    pub fn corruption(
        file: impl Into<PathBuf>,
        offset: Option<u64>,
        reason: impl fmt::Display,
    ) -> Error {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.to_string(),
        }
    }

    /// A corruption found in bytes whose file is not known at the point of decoding;
    /// callers that know the file wrap it with [`Error::in_file`].
    pub(crate) fn bad_data(reason: impl fmt::Display) -> Error {
        Error::Corruption {
            file: PathBuf::new(),
            offset: None,
            reason: reason.to_string(),
        }
    }

    /// An I/O error on a path.
    ///
    /// ```
    /// use std::io::{Error, ErrorKind};
    /// let e = shale::Error::io("db/CURRENT", Error::new(ErrorKind::PermissionDenied, "denied"));
    /// assert!(matches!(e, shale::Error::Io { ref source, .. } if source.kind() == ErrorKind::PermissionDenied));
    /// ```
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Fills in the file (and offset, when not yet known) of a corruption error.
    pub(crate) fn in_file(self, file: &std::path::Path, at: Option<u64>) -> Error {
        match self {
            Error::Corruption {
                file: f,
                offset,
                reason,
            } if f.as_os_str().is_empty() => Error::Corruption {
                file: file.to_path_buf(),
                offset: offset.or(at),
                reason,
            },
            other => other,
        }
    }

    /// True for [`Error::NotFound`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// // Repairing a directory that holds no database files finds nothing.
    /// let e = shale::repair(dir.path(), &shale::Options::default()).unwrap_err();
    /// assert!(e.is_not_found());
    /// ```
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }

    /// True for [`Error::Corruption`].
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("000001.ldb"), b"not a table").unwrap();
    /// let e = shale::inspect::table_summary(&dir.path().join("000001.ldb")).unwrap_err();
    /// assert!(e.is_corruption());
    /// assert!(!e.is_not_found());
    /// # Ok(()) }
    /// ```
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// A copy of this error for handing to several waiters (I/O sources are not `Clone`).
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::NotFound(s) => Error::NotFound(s.clone()),
            Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
            Error::Io { path, source } => Error::Io {
                path: path.clone(),
                // An OS error stays one, so that callers can still tell
                // ENOSPC from EIO by its number.
                source: match source.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(source.kind(), source.to_string()),
                },
            },
            Error::NotSupported(s) => Error::NotSupported(s.clone()),
            Error::Background(s) => Error::Background(s.clone()),
            Error::Incomplete(s) => Error::Incomplete(s.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicated_os_error_keeps_its_number() {
        let e = Error::io("/db/000005.ldb", std::io::Error::from_raw_os_error(28));
        let Error::Io { path, source } = e.duplicate() else {
            panic!("not an I/O error");
        };
        assert_eq!(path, PathBuf::from("/db/000005.ldb"));
        assert_eq!(source.raw_os_error(), Some(28));
        let other = Error::io("/db/x", std::io::Error::other("closed"));
        let Error::Io { source, .. } = other.duplicate() else {
            panic!("not an I/O error");
        };
        assert_eq!(source.to_string(), "closed");
    }
}
