//! Errors and exit codes, and opening a database for reading or writing.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use shale::{BloomFilterPolicy, CompressionType, Db, Options};

/// Exit codes (documented in the README's operator section).
pub mod exit {
    /// A negative answer: `get` found no such key, `check` found damage.
    pub const NEGATIVE: i32 = 1;
    /// Bad usage (clap's own code for bad arguments).
    pub const USAGE: i32 = 2;
    /// An error: I/O, a damaged database that could not be read, bad input.
    pub const ERROR: i32 = 3;
    /// The database is held by another process.
    pub const LOCKED: i32 = 4;
}

/// An error of a command: a message for standard error and an exit code.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
}

impl CliError {
    pub fn new(code: i32, message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code,
        }
    }
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::new(exit::USAGE, message)
    }
    pub fn error(message: impl Into<String>) -> CliError {
        CliError::new(exit::ERROR, message)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<shale::Error> for CliError {
    fn from(e: shale::Error) -> CliError {
        CliError::error(e.to_string())
    }
}

pub type CliResult<T> = Result<T, CliError>;

/// An I/O error on `path`, as a command error naming it.
pub fn io_error(path: &Path, e: std::io::Error) -> CliError {
    CliError::error(format!("{}: {e}", path.display()))
}

/// Options of commands that write tables (`put`, `load`, `compact`, ...).
#[derive(Debug, Clone, clap::Args)]
pub struct WriteTuning {
    /// Compression of new table blocks. LevelDB 1.23 reads none and snappy
    /// only; zstd is LevelDB's type 2 (its sources after 1.23), lz4 is
    /// Shale's own.
    #[arg(long, value_enum, default_value_t = Compression::Snappy)]
    pub compression: Compression,
    /// The zstd level of `--compression zstd` blocks (LevelDB's
    /// zstd_compression_level).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub zstd_level: i32,
    /// Compression by output level, comma-separated: the first for level 0,
    /// the last for every deeper level (overrides --compression).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub compression_per_level: Vec<Compression>,
    /// Compression of tables compacted into the deepest level that holds
    /// tables.
    #[arg(long, value_enum)]
    pub bottommost_compression: Option<Compression>,
    /// Bits per key of a bloom filter in new tables (0: no filter, as
    /// LevelDB's default).
    #[arg(long, default_value_t = 0)]
    pub bloom_bits: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    None,
    Snappy,
    Zstd,
    Lz4,
}

impl From<Compression> for CompressionType {
    fn from(c: Compression) -> CompressionType {
        match c {
            Compression::None => CompressionType::None,
            Compression::Snappy => CompressionType::Snappy,
            Compression::Zstd => CompressionType::Zstd,
            Compression::Lz4 => CompressionType::Lz4,
        }
    }
}

impl WriteTuning {
    pub fn apply(&self, o: &mut Options) {
        o.compression = self.compression.into();
        o.zstd_compression_level = self.zstd_level;
        o.compression_per_level = self
            .compression_per_level
            .iter()
            .map(|&c| c.into())
            .collect();
        o.bottommost_compression = self.bottommost_compression.map(Into::into);
        if self.bloom_bits > 0 {
            o.filter_policy = Some(Arc::new(BloomFilterPolicy::new(self.bloom_bits)));
        }
    }
}

/// The name of a block's compression type byte: `uncompressed`, `snappy`,
/// `zstd`, `lz4`, or `type N` for a number Shale does not know.
pub fn compression_name(type_byte: u8) -> String {
    match CompressionType::ALL
        .into_iter()
        .find(|t| *t as u8 == type_byte)
    {
        Some(CompressionType::None) => "uncompressed".into(),
        Some(t) => t.name().into(),
        None => format!("type {type_byte}"),
    }
}

/// Opens `path` for reading only: no lock is taken and nothing is written,
/// so a database another process holds can be read.
pub fn open_read(path: &Path) -> CliResult<Db> {
    existing(path)?;
    let options = Options {
        paranoid_checks: false,
        ..Options::default()
    };
    Db::open_read_only(path, options).map_err(|e| open_error(path, e))
}

/// Opens `path` for writing, taking its lock (creating the database with
/// `create`).
pub fn open_write(path: &Path, create: bool, tune: Option<&WriteTuning>) -> CliResult<Db> {
    let mut options = Options {
        create_if_missing: create,
        ..Options::default()
    };
    if let Some(t) = tune {
        t.apply(&mut options);
    }
    open_write_with(path, options)
}

pub fn open_write_with(path: &Path, options: Options) -> CliResult<Db> {
    if !options.create_if_missing {
        existing(path)?;
    }
    Db::open(path, options).map_err(|e| open_error(path, e))
}

/// An error unless `path` holds a database (a `CURRENT` file).
pub fn existing(path: &Path) -> CliResult<()> {
    if !path.join("CURRENT").exists() {
        if !path.exists() {
            return Err(CliError::error(format!(
                "{}: no such directory (no database there)",
                path.display()
            )));
        }
        return Err(CliError::error(format!(
            "{}: not a database (no CURRENT file); `shale repair` rebuilds one from its tables and logs",
            path.display()
        )));
    }
    Ok(())
}

/// Turns an open error into a command error; a held lock names who holds it.
pub fn open_error(path: &Path, e: shale::Error) -> CliError {
    if let shale::Error::Io { source, .. } = &e {
        if source.kind() == std::io::ErrorKind::WouldBlock {
            return CliError::new(exit::LOCKED, lock_message(path));
        }
    }
    CliError::from(e)
}

/// Who holds the lock of the database in `dir`, as a message.
pub fn lock_message(dir: &Path) -> String {
    let lock = dir.join("LOCK");
    let holder = match lock_holder(&lock) {
        Some(pid) => {
            let name = process_name(pid);
            format!("process {pid}{name}")
        }
        None => "another process".to_string(),
    };
    format!(
        "{}: the database is open in {holder} (Shale or LevelDB holds its lock file {}); \
         commands that only read (get, scan, count, stats, export, check, dump) work while it is held",
        dir.display(),
        lock.display()
    )
}

/// The process holding a POSIX (`fcntl`) write lock on `lock`, as LevelDB
/// and Shale take it.
///
/// This opens and closes `lock`, which would release a lock of this process
/// on it: only for a database this process does not hold open (a command
/// opens one database, and asks this after its open was refused).
fn lock_holder(lock: &Path) -> Option<i32> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(lock).ok()?;
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are valid.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 0;
    // SAFETY: the descriptor is open for the duration of the call and `fl`
    // is a valid, writable `struct flock`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut fl) };
    if rc != 0 || fl.l_type == libc::F_UNLCK as libc::c_short || fl.l_pid <= 0 {
        return None;
    }
    Some(fl.l_pid)
}

/// ` (its command line)` from /proc, or nothing.
fn process_name(pid: i32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .take(6)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    if words.is_empty() {
        String::new()
    } else {
        format!(" ({})", words.join(" "))
    }
}
