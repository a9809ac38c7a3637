//! Shale's errors written as LevelDB's status strings (`Corruption: ...`,
//! `IO error: ...`, `Invalid argument: ...`), so that C programs matching on
//! those prefixes and phrases behave the same; Shale's detail (files,
//! offsets) is kept in the text.

use shale::Error;

/// The operating system's text for an I/O error, without Rust's
/// ` (os error N)` suffix (LevelDB prints `strerror` alone).
fn os_text(source: &std::io::Error) -> String {
    let text = source.to_string();
    match source.raw_os_error() {
        Some(code) if source.get_ref().is_none() => {
            let suffix = format!(" (os error {code})");
            text.strip_suffix(&suffix).unwrap_or(&text).to_string()
        }
        _ => {
            // A wrapped message may still start with "... (os error N)".
            match (text.find(" (os error "), text.find("):")) {
                (Some(start), Some(end)) if start < end => {
                    format!("{}{}", &text[..start], &text[end + 1..])
                }
                _ => text,
            }
        }
    }
}

/// Rewrites the open-time messages LevelDB programs commonly match on into
/// LevelDB's wording; others pass through.
fn invalid_argument_text(m: &str) -> String {
    if let Some(path) = m.strip_suffix(": database does not exist (create_if_missing is false)") {
        return format!("{path}: does not exist (create_if_missing is false)");
    }
    if let Some(path) = m.strip_suffix(": database exists (error_if_exists is true)") {
        return format!("{path}: exists (error_if_exists is true)");
    }
    // "<MANIFEST>: comparator 'new' does not match the database's 'old'"
    if let Some((file, rest)) = m.split_once(": comparator '") {
        if let Some((new, old)) = rest.split_once("' does not match the database's '") {
            if let Some(old) = old.strip_suffix('\'') {
                // LevelDB names the stored comparator first.
                return format!("{old} does not match existing comparator : {new} (in {file})");
            }
        }
    }
    m.to_string()
}

/// `e` as LevelDB's `Status::ToString()` would write it.
pub(crate) fn status_string(e: &Error) -> String {
    match e {
        Error::NotFound(m) => format!("NotFound: {m}"),
        Error::Corruption {
            file,
            offset,
            reason,
        } => {
            let mut s = format!("Corruption: {reason}");
            if !file.as_os_str().is_empty() {
                s.push_str(&format!(": {}", file.display()));
            }
            if let Some(o) = offset {
                s.push_str(&format!(" at offset {o}"));
            }
            s
        }
        Error::InvalidArgument(m) => format!("Invalid argument: {}", invalid_argument_text(m)),
        Error::Io { path, source } => {
            let is_lock = path.file_name().is_some_and(|n| n == "LOCK");
            if is_lock && source.kind() == std::io::ErrorKind::WouldBlock {
                format!("IO error: lock {}: {}", path.display(), os_text(source))
            } else {
                format!("IO error: {}: {}", path.display(), os_text(source))
            }
        }
        Error::NotSupported(m) => format!("Not implemented: {m}"),
        Error::Background(m) => {
            if m.starts_with("corruption") {
                format!("Corruption: {m}")
            } else {
                format!("IO error: {m}")
            }
        }
        other => format!("IO error: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_messages_use_leveldb_wording() {
        let e = Error::InvalidArgument(
            "/tmp/x: database does not exist (create_if_missing is false)".into(),
        );
        assert_eq!(
            status_string(&e),
            "Invalid argument: /tmp/x: does not exist (create_if_missing is false)"
        );
        let e = Error::InvalidArgument("/tmp/x: database exists (error_if_exists is true)".into());
        assert_eq!(
            status_string(&e),
            "Invalid argument: /tmp/x: exists (error_if_exists is true)"
        );
        let e = Error::InvalidArgument(
            "/d/MANIFEST-000001: comparator 'foo' does not match the database's 'leveldb.BytewiseComparator'".into(),
        );
        assert_eq!(
            status_string(&e),
            "Invalid argument: leveldb.BytewiseComparator does not match existing comparator : foo (in /d/MANIFEST-000001)"
        );
    }

    #[test]
    fn io_and_corruption_messages() {
        let e = Error::io("/d/000005.ldb", std::io::Error::from_raw_os_error(2));
        assert_eq!(
            status_string(&e),
            "IO error: /d/000005.ldb: No such file or directory"
        );
        let e = Error::io(
            "/d/LOCK",
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "Resource temporarily unavailable (os error 11): the database is already open",
            ),
        );
        assert_eq!(
            status_string(&e),
            "IO error: lock /d/LOCK: Resource temporarily unavailable: the database is already open"
        );
        let e = Error::corruption("/d/000005.ldb", Some(40), "block checksum mismatch");
        assert_eq!(
            status_string(&e),
            "Corruption: block checksum mismatch: /d/000005.ldb at offset 40"
        );
    }
}
