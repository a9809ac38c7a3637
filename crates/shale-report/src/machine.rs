//! What the report says about where it ran: CPU model and cores, memory,
//! kernel and OS, the file system of the database root (`df -T`), the Debian
//! package version of each peer library, and the date.
//!
//! Invariants: every probe degrades to "unknown" instead of failing; nothing
//! here changes the machine.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Facts about the machine and the database file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPU model from /proc/cpuinfo.
    pub cpu: String,
    /// Logical CPUs (and physical cores when known).
    pub cores: String,
    /// Total memory.
    pub memory: String,
    /// Kernel release.
    pub kernel: String,
    /// Distribution (PRETTY_NAME of /etc/os-release).
    pub os: String,
    /// `df -T` of the database root: device, type, size.
    pub file_system: String,
    /// File-system type alone (`ext4`, `tmpfs`, ...).
    pub fs_type: String,
    /// Free bytes on the database file system.
    pub free_bytes: Option<u64>,
    /// UTC date and time the report started.
    pub date: String,
}

/// Probes the machine; `db_root` must exist for the file-system facts.
pub fn probe(db_root: &Path) -> Machine {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (cpu, cores) = cpu_facts(&cpuinfo);
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = mem_total(&meminfo).unwrap_or_else(|| "unknown".to_string());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    let os = fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
    let df = run("df", &["-T", "-B1", &db_root.display().to_string()]).unwrap_or_default();
    let (file_system, fs_type, free_bytes) =
        df_facts(&df).unwrap_or(("unknown".into(), "unknown".into(), None));
    Machine {
        cpu,
        cores,
        memory,
        kernel,
        os,
        file_system,
        fs_type,
        free_bytes,
        date: utc_now(),
    }
}

fn run(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// CPU model and core counts from /proc/cpuinfo text.
pub fn cpu_facts(cpuinfo: &str) -> (String, String) {
    let field = |l: &str, name: &str| -> Option<String> {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim().to_string())
    };
    let model = cpuinfo
        .lines()
        .find_map(|l| field(l, "model name"))
        .unwrap_or_else(|| "unknown".to_string());
    let logical = cpuinfo
        .lines()
        .filter(|l| field(l, "processor").is_some())
        .count();
    let logical = if logical == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    } else {
        logical
    };
    let mut physical: Vec<(String, String)> = Vec::new();
    let mut phys_id = String::new();
    for l in cpuinfo.lines() {
        if let Some(v) = field(l, "physical id") {
            phys_id = v;
        } else if let Some(v) = field(l, "core id") {
            let key = (phys_id.clone(), v);
            if !physical.contains(&key) {
                physical.push(key);
            }
        }
    }
    let cores = if physical.is_empty() || physical.len() == logical {
        format!("{logical} logical CPUs")
    } else {
        format!(
            "{logical} logical CPUs on {} physical cores",
            physical.len()
        )
    };
    (model, cores)
}

/// `MemTotal` from /proc/meminfo text, as GiB.
pub fn mem_total(meminfo: &str) -> Option<String> {
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(format!("{:.1} GiB", kb as f64 / (1024.0 * 1024.0)))
}

/// (summary, type, free bytes) from `df -T -B1 <dir>` output.
pub fn df_facts(df: &str) -> Option<(String, String, Option<u64>)> {
    let row = df.lines().nth(1)?;
    let f: Vec<&str> = row.split_whitespace().collect();
    if f.len() < 7 {
        return None;
    }
    let size: Option<u64> = f[2].parse().ok();
    let free: Option<u64> = f[4].parse().ok();
    let gb = |b: Option<u64>| {
        b.map(|b| format!("{:.1} GB", b as f64 / 1e9))
            .unwrap_or_else(|| "?".to_string())
    };
    Some((
        format!(
            "{} on {} (mounted at {}; {} total, {} free)",
            f[1],
            f[0],
            f[6],
            gb(size),
            gb(free)
        ),
        f[1].to_string(),
        free,
    ))
}

/// The installed version of a Debian package, if dpkg knows it.
pub fn debian_version(package: &str) -> Option<String> {
    let v = run("dpkg-query", &["-W", "-f=${Version}", package])?;
    let v = v.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// Now as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_utc(secs)
}

/// Formats seconds since the Unix epoch as a UTC date and time.
pub fn format_utc(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Gregorian (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Count from 0000-03-01 so that leap days fall at the end of a year.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097; // day of the 400-year era
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153; // month, March = 0
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_and_cores() {
        let info = "processor\t: 0\nmodel name\t: Test CPU @ 3.0GHz\nphysical id\t: 0\ncore id\t\t: 0\n\n\
                    processor\t: 1\nmodel name\t: Test CPU @ 3.0GHz\nphysical id\t: 0\ncore id\t\t: 0\n";
        let (model, cores) = cpu_facts(info);
        assert_eq!(model, "Test CPU @ 3.0GHz");
        assert_eq!(cores, "2 logical CPUs on 1 physical cores");
    }

    #[test]
    fn memory_total() {
        assert_eq!(
            mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n").as_deref(),
            Some("23.4 GiB")
        );
        assert_eq!(mem_total("nothing"), None);
    }

    #[test]
    fn df_output() {
        let df = "Filesystem     Type         1B-blocks        Used    Available Use% Mounted on\n\
                  /dev/vda       ext4      270553174016 12815167488 84977999872  14% /\n";
        let (summary, ty, free) = df_facts(df).unwrap();
        assert_eq!(ty, "ext4");
        assert_eq!(free, Some(84_977_999_872));
        assert!(
            summary.starts_with("ext4 on /dev/vda (mounted at /;"),
            "{summary}"
        );
        assert_eq!(df_facts("header only\n"), None);
    }

    #[test]
    fn dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }
}
