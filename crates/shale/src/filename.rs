//! The names of a database directory's files, as LevelDB names them:
//!
//! ```text
//! CURRENT            the name of the current MANIFEST, plus a newline
//! LOCK               held by the process that has the database open
//! LOG, LOG.old       the human-readable info log and its predecessor
//! MANIFEST-NNNNNN    version edits
//! NNNNNN.log         write-ahead log
//! NNNNNN.ldb         table (NNNNNN.sst is read as a table too)
//! NNNNNN.dbtmp       temporary file
//! ```
//!
//! Numbers are decimal, zero-padded to at least six digits when written,
//! and parsed strictly: ASCII digits only, no sign, no overflow.

use std::path::{Path, PathBuf};

use crate::env::{write_file_sync, FileSystem, SequentialFile};
use crate::error::{Error, Result};

/// The kind of a file in a database directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileType {
    /// A write-ahead log (`NNNNNN.log`).
    Log,
    /// The lock file (`LOCK`).
    DbLock,
    /// A table (`NNNNNN.ldb` or `NNNNNN.sst`).
    Table,
    /// A MANIFEST (`MANIFEST-NNNNNN`).
    Descriptor,
    /// The pointer to the current MANIFEST (`CURRENT`).
    Current,
    /// A temporary file (`NNNNNN.dbtmp`).
    Temp,
    /// The info log (`LOG` or `LOG.old`).
    InfoLog,
    /// A blob file of separated values (`NNNNNN.blob`, see `blob/`).
    BlobFile,
}

const CURRENT: &str = "CURRENT";
const LOCK: &str = "LOCK";
const INFO_LOG: &str = "LOG";
const OLD_INFO_LOG: &str = "LOG.old";
const MANIFEST_PREFIX: &str = "MANIFEST-";

/// A valid CURRENT file is short; anything longer is not read into memory.
const MAX_CURRENT_LEN: usize = 4096;

fn numbered(dir: &Path, number: u64, suffix: &str) -> PathBuf {
    dir.join(format!("{number:06}.{suffix}"))
}

/// `dir/NNNNNN.log`.
pub fn log_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "log")
}

/// `dir/NNNNNN.ldb`, the name new tables are written under.
pub fn table_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "ldb")
}

/// `dir/NNNNNN.blob`, a file of separated values.
pub fn blob_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "blob")
}

/// `dir/NNNNNN.sst`, the older table name, still accepted when reading.
pub fn sst_table_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "sst")
}

/// The file name (without directory) of MANIFEST `number`: `MANIFEST-NNNNNN`.
pub fn descriptor_name(number: u64) -> String {
    format!("{MANIFEST_PREFIX}{number:06}")
}

/// `dir/MANIFEST-NNNNNN`.
pub fn descriptor_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(descriptor_name(number))
}

/// `dir/CURRENT`.
pub fn current_file_name(dir: &Path) -> PathBuf {
    dir.join(CURRENT)
}

/// `dir/LOCK`.
pub fn lock_file_name(dir: &Path) -> PathBuf {
    dir.join(LOCK)
}

/// `dir/NNNNNN.dbtmp`.
pub fn temp_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "dbtmp")
}

/// `dir/LOG`.
pub fn info_log_file_name(dir: &Path) -> PathBuf {
    dir.join(INFO_LOG)
}

/// `dir/LOG.old`.
pub fn old_info_log_file_name(dir: &Path) -> PathBuf {
    dir.join(OLD_INFO_LOG)
}

/// Splits a leading decimal number off `s`: at least one ASCII digit, and a
/// value that fits in `u64`.
fn consume_decimal(s: &str) -> Option<(u64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (num, rest) = s.split_at(digits);
    let mut value: u64 = 0;
    for b in num.bytes() {
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some((value, rest))
}

/// The number and type of a database file from its name (no directory);
/// `None` for names the database does not own. Unnumbered files have number 0.
pub fn parse_file_name(name: &str) -> Option<(u64, FileType)> {
    match name {
        CURRENT => return Some((0, FileType::Current)),
        LOCK => return Some((0, FileType::DbLock)),
        INFO_LOG | OLD_INFO_LOG => return Some((0, FileType::InfoLog)),
        _ => {}
    }
    if let Some(rest) = name.strip_prefix(MANIFEST_PREFIX) {
        return match consume_decimal(rest)? {
            (number, "") => Some((number, FileType::Descriptor)),
            _ => None,
        };
    }
    let (number, suffix) = consume_decimal(name)?;
    let file_type = match suffix {
        ".log" => FileType::Log,
        ".ldb" | ".sst" => FileType::Table,
        ".dbtmp" => FileType::Temp,
        ".blob" => FileType::BlobFile,
        _ => return None,
    };
    Some((number, file_type))
}

/// Points `dir/CURRENT` at MANIFEST `descriptor_number`: writes the name and
/// a newline to a temporary file, syncs it, renames it over CURRENT and
/// syncs the directory, so a crash leaves either the old or the new CURRENT.
pub fn set_current_file(fs: &dyn FileSystem, dir: &Path, descriptor_number: u64) -> Result<()> {
    let mut contents = descriptor_name(descriptor_number);
    contents.push('\n');
    let tmp = temp_file_name(dir, descriptor_number);
    let result = write_file_sync(fs, &tmp, contents.as_bytes())
        .and_then(|()| fs.rename(&tmp, &current_file_name(dir)))
        .and_then(|()| fs.sync_dir(dir));
    if result.is_err() && fs.exists(&tmp) {
        // Best effort: the original error is the one worth reporting.
        let _ = fs.remove_file(&tmp);
    }
    result
}

/// Whether `dir/CURRENT` may name MANIFEST `descriptor_number`, asked after
/// [`set_current_file`] failed: true if it does, or if CURRENT cannot be
/// read (the rename may have happened); false only if CURRENT names another
/// MANIFEST or does not exist. A MANIFEST for which this is true must never
/// be deleted: the database could not be opened without it.
pub fn current_may_name(fs: &dyn FileSystem, dir: &Path, descriptor_number: u64) -> bool {
    match read_current_file(fs, dir) {
        Ok(name) => name == descriptor_name(descriptor_number),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
    }
}

/// Reads at most `limit` bytes from the start of `file`.
fn read_prefix(file: &mut dyn SequentialFile, limit: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; limit];
    let mut n = 0;
    while n < limit {
        let got = file.read(&mut out[n..])?;
        if got == 0 {
            break;
        }
        n += got.min(limit - n);
    }
    out.truncate(n);
    Ok(out)
}

/// The name of the current MANIFEST (such as `MANIFEST-000002`), read from
/// `dir/CURRENT`.
///
/// Corruption if the file does not end with a newline, or does not name a
/// MANIFEST.
pub fn read_current_file(fs: &dyn FileSystem, dir: &Path) -> Result<String> {
    let path = current_file_name(dir);
    let mut file = fs.new_sequential_file(&path)?;
    let data = read_prefix(file.as_mut(), MAX_CURRENT_LEN + 1)?;
    if data.len() > MAX_CURRENT_LEN {
        return Err(Error::corruption(
            &path,
            None,
            format_args!("CURRENT file is longer than {MAX_CURRENT_LEN} bytes"),
        ));
    }
    let Some(name) = data.strip_suffix(b"\n") else {
        return Err(Error::corruption(
            &path,
            None,
            "CURRENT file does not end with newline",
        ));
    };
    let name = std::str::from_utf8(name)
        .map_err(|_| Error::corruption(&path, None, "CURRENT file is not UTF-8"))?;
    match parse_file_name(name) {
        Some((_, FileType::Descriptor)) => Ok(name.to_owned()),
        _ => Err(Error::corruption(
            &path,
            None,
            format_args!("CURRENT file names {name:?}, which is not a MANIFEST"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::MemFs;

    #[test]
    fn parse_accepts_owned_names() {
        let cases: &[(&str, u64, FileType)] = &[
            ("100.log", 100, FileType::Log),
            ("0.log", 0, FileType::Log),
            ("0.sst", 0, FileType::Table),
            ("0.ldb", 0, FileType::Table),
            ("CURRENT", 0, FileType::Current),
            ("LOCK", 0, FileType::DbLock),
            ("MANIFEST-2", 2, FileType::Descriptor),
            ("MANIFEST-7", 7, FileType::Descriptor),
            ("LOG", 0, FileType::InfoLog),
            ("LOG.old", 0, FileType::InfoLog),
            ("18446744073709551615.log", u64::MAX, FileType::Log),
            ("000123.dbtmp", 123, FileType::Temp),
            ("000124.blob", 124, FileType::BlobFile),
        ];
        for &(name, number, file_type) in cases {
            assert_eq!(parse_file_name(name), Some((number, file_type)), "{name}");
        }
    }

    #[test]
    fn parse_rejects_foreign_names() {
        let errors = [
            "",
            "foo",
            "foo-dx-100.log",
            ".log",
            "manifest",
            "CURREN",
            "CURRENTX",
            "MANIFES",
            "MANIFEST",
            "MANIFEST-",
            "XMANIFEST-3",
            "MANIFEST-3x",
            "MANIFEST-18446744073709551616",
            "LOC",
            "LOCKx",
            "LO",
            "LOGx",
            "LOG.old.1",
            "18446744073709551616.log",
            "184467440737095516150.log",
            "100",
            "100.",
            "100.lop",
            "+100.log",
            "-1.log",
            " 100.log",
            "100.log ",
            "100.LOG",
            "١٠٠.log", // non-ASCII digits
        ];
        for name in errors {
            assert_eq!(parse_file_name(name), None, "{name:?}");
        }
    }

    #[test]
    fn constructors_parse_back() {
        let dir = Path::new("foo");
        let check = |path: PathBuf, number: u64, file_type: FileType| {
            assert_eq!(path.parent(), Some(dir), "{}", path.display());
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(parse_file_name(name), Some((number, file_type)), "{name}");
        };
        check(current_file_name(dir), 0, FileType::Current);
        check(lock_file_name(dir), 0, FileType::DbLock);
        check(log_file_name(dir, 192), 192, FileType::Log);
        check(table_file_name(dir, 200), 200, FileType::Table);
        check(sst_table_file_name(dir, 200), 200, FileType::Table);
        check(descriptor_file_name(dir, 100), 100, FileType::Descriptor);
        check(temp_file_name(dir, 999), 999, FileType::Temp);
        check(blob_file_name(dir, 998), 998, FileType::BlobFile);
        check(info_log_file_name(dir), 0, FileType::InfoLog);
        check(old_info_log_file_name(dir), 0, FileType::InfoLog);
        check(log_file_name(dir, u64::MAX), u64::MAX, FileType::Log);
    }

    #[test]
    fn names_are_zero_padded_to_six_digits() {
        let dir = Path::new("/db");
        assert_eq!(log_file_name(dir, 7), Path::new("/db/000007.log"));
        assert_eq!(table_file_name(dir, 12), Path::new("/db/000012.ldb"));
        assert_eq!(sst_table_file_name(dir, 12), Path::new("/db/000012.sst"));
        assert_eq!(
            descriptor_file_name(dir, 2),
            Path::new("/db/MANIFEST-000002")
        );
        assert_eq!(temp_file_name(dir, 3), Path::new("/db/000003.dbtmp"));
        assert_eq!(log_file_name(dir, 1234567), Path::new("/db/1234567.log"));
        assert_eq!(current_file_name(dir), Path::new("/db/CURRENT"));
        assert_eq!(lock_file_name(dir), Path::new("/db/LOCK"));
        assert_eq!(info_log_file_name(dir), Path::new("/db/LOG"));
        assert_eq!(old_info_log_file_name(dir), Path::new("/db/LOG.old"));
    }

    #[test]
    fn current_file_round_trip() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        set_current_file(&fs, dir, 2).unwrap();
        let raw = crate::env::read_file(&fs, &current_file_name(dir)).unwrap();
        assert_eq!(raw, b"MANIFEST-000002\n");
        assert_eq!(read_current_file(&fs, dir).unwrap(), "MANIFEST-000002");
        assert!(
            !fs.exists(&temp_file_name(dir, 2)),
            "temp file renamed away"
        );

        set_current_file(&fs, dir, 1_000_000).unwrap();
        assert_eq!(read_current_file(&fs, dir).unwrap(), "MANIFEST-1000000");
        assert_eq!(fs.children(dir).unwrap(), vec!["CURRENT".to_string()]);
    }

    #[test]
    fn current_file_must_end_with_newline() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let path = current_file_name(dir);
        for contents in [&b""[..], b"MANIFEST-000002", b"\n", b"MANIFEST-000002\n\n"] {
            write_file_sync(&fs, &path, contents).unwrap();
            let err = read_current_file(&fs, dir).unwrap_err();
            assert!(err.is_corruption(), "{err}");
            if !contents.ends_with(b"\n") {
                assert!(
                    err.to_string()
                        .contains("CURRENT file does not end with newline"),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn current_file_must_name_a_manifest() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let path = current_file_name(dir);
        for contents in [
            &b"../../etc/passwd\n"[..],
            b"000005.log\n",
            b"MANIFEST-\xff\n",
        ] {
            write_file_sync(&fs, &path, contents).unwrap();
            assert!(read_current_file(&fs, dir).unwrap_err().is_corruption());
        }
        let mut huge = vec![b'x'; MAX_CURRENT_LEN * 4];
        huge.push(b'\n');
        write_file_sync(&fs, &path, &huge).unwrap();
        assert!(read_current_file(&fs, dir).unwrap_err().is_corruption());
    }

    #[test]
    fn missing_current_file_is_an_error() {
        let fs = MemFs::new();
        assert!(read_current_file(&fs, Path::new("/nowhere")).is_err());
    }
}
