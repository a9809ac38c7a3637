//! What the process costs the machine: bytes read and written by this
//! process (`/proc/self/io`, counted over all its threads, background
//! compactions included), peak resident memory (`getrusage`), the size of
//! the database directory; and the machine description printed in the header.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// The counters of `/proc/self/io`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Bytes passed to read-like system calls.
    pub rchar: u64,
    /// Bytes passed to write-like system calls.
    pub wchar: u64,
    /// Bytes fetched from the storage layer.
    pub read_bytes: u64,
    /// Bytes sent (or to be sent) to the storage layer.
    pub write_bytes: u64,
    /// Written bytes that never reached storage (files truncated or deleted
    /// while still dirty in the page cache).
    pub cancelled_write_bytes: u64,
}

impl IoCounters {
    /// Parses the text of a `/proc/<pid>/io` file.
    pub fn parse(text: &str) -> Option<IoCounters> {
        let mut c = IoCounters::default();
        let mut seen = 0;
        for line in text.lines() {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let Ok(v) = value.trim().parse::<u64>() else {
                continue;
            };
            let slot = match name.trim() {
                "rchar" => &mut c.rchar,
                "wchar" => &mut c.wchar,
                "read_bytes" => &mut c.read_bytes,
                "write_bytes" => &mut c.write_bytes,
                "cancelled_write_bytes" => &mut c.cancelled_write_bytes,
                _ => continue,
            };
            *slot = v;
            seen += 1;
        }
        (seen > 0).then_some(c)
    }

    /// This process's counters now, if the kernel provides them.
    pub fn now() -> Option<IoCounters> {
        std::fs::read_to_string("/proc/self/io")
            .ok()
            .and_then(|t| IoCounters::parse(&t))
    }

    /// The counts since `earlier`.
    pub fn since(&self, earlier: &IoCounters) -> IoCounters {
        IoCounters {
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            cancelled_write_bytes: self
                .cancelled_write_bytes
                .saturating_sub(earlier.cancelled_write_bytes),
        }
    }
}

/// Peak resident set size of this process so far, in KB.
pub fn max_rss_kb() -> Option<u64> {
    // SAFETY: getrusage only writes the struct passed to it.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return None;
        }
        u64::try_from(usage.ru_maxrss).ok()
    }
}

/// Total length of the files under `path` (recursively; unreadable entries
/// are skipped).
pub fn dir_size(path: &Path) -> u64 {
    dir_usage(path).0
}

/// `(total file length, bytes allocated on disk)` under `path`: the second
/// counts preallocated space (e.g. WiredTiger's log files) and not holes.
pub fn dir_usage(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(path) else {
        return (0, 0);
    };
    let (mut len, mut alloc) = (0, 0);
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_dir() {
            let (l, a) = dir_usage(&entry.path());
            len += l;
            alloc += a;
        } else {
            len += meta.len();
            alloc += meta.blocks() * 512;
        }
    }
    (len, alloc)
}

/// The file system type holding `path` (e.g. `ext4`): the mount point of
/// `/proc/self/mounts` that is the longest prefix of the path, or else the
/// `statfs` magic number.
pub fn fs_type(path: &Path) -> Option<String> {
    let full = std::fs::canonicalize(path).ok()?;
    if let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") {
        let best = mounts
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (_dev, mnt, ty) = (f.next()?, f.next()?, f.next()?);
                // Mount points escape spaces as \040.
                let mnt = mnt.replace("\\040", " ");
                full.starts_with(&mnt).then(|| (mnt.len(), ty.to_string()))
            })
            .max_by_key(|(len, _)| *len);
        if let Some((_, ty)) = best {
            return Some(ty);
        }
    }
    fs_magic(&full)
}

fn fs_magic(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs only writes the struct passed to it; `c` is a valid path.
    let magic = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        st.f_type as u64
    };
    let name = match magic {
        0xEF53 => "ext2/3/4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlayfs",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6969 => "nfs",
        _ => return Some(format!("unknown (magic {magic:#x})")),
    };
    Some(name.to_string())
}

/// `(number of CPUs, model name, cache size)` from `/proc/cpuinfo`.
pub fn cpu_info() -> Option<(usize, String, String)> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let mut count = 0;
    let mut model = String::new();
    let mut cache = String::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim() {
            "model name" => {
                count += 1;
                model = v.trim().to_string();
            }
            "cache size" => cache = v.trim().to_string(),
            _ => {}
        }
    }
    Some((count, model, cache))
}

/// The current time as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_io_text_parses() {
        let text = "rchar: 6976\nwchar: 10\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 4096\n";
        let c = IoCounters::parse(text).unwrap();
        assert_eq!(c.rchar, 6976);
        assert_eq!(c.write_bytes, 8192);
        assert_eq!(c.cancelled_write_bytes, 4096);
        let later = IoCounters {
            write_bytes: 10_000,
            ..c
        };
        assert_eq!(later.since(&c).write_bytes, 1808);
        assert_eq!(IoCounters::parse("nothing here"), None);
    }

    #[test]
    fn dir_size_sums_files_recursively() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 100]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 23]).unwrap();
        assert_eq!(dir_size(dir.path()), 123);
        let (len, alloc) = dir_usage(dir.path());
        assert_eq!(len, 123);
        assert!(alloc >= 2 * 512, "{alloc}");
        assert_eq!(dir_size(&dir.path().join("missing")), 0);
    }

    #[test]
    fn peak_rss_is_reported() {
        assert!(max_rss_kb().unwrap() > 0);
    }

    #[test]
    fn utc_dates_are_well_formed() {
        let s = utc_now();
        assert_eq!(s.len(), 23, "{s}");
        assert!(s.ends_with(" UTC"));
    }
}
