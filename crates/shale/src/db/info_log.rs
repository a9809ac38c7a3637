//! The human-readable `LOG` file: one line per notable event (recovery,
//! flushes, compactions, errors), as LevelDB keeps it. The previous run's log
//! is kept as `LOG.old`.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::env::{FileSystem, WritableFile};
use crate::filename::{info_log_file_name, old_info_log_file_name};

/// An append-only text log; failures to write it are ignored (it is advisory).
pub struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

impl InfoLog {
    /// Rotates `LOG` to `LOG.old` and opens a new `LOG` in `dir`.
    pub fn open(fs: &dyn FileSystem, dir: &Path) -> InfoLog {
        let path = info_log_file_name(dir);
        if fs.exists(&path) {
            let _ = fs.rename(&path, &old_info_log_file_name(dir));
        }
        InfoLog {
            file: Mutex::new(fs.new_writable_file(&path).ok()),
        }
    }

    /// Appends a time-stamped line.
    pub fn log(&self, msg: &str) {
        let mut f = self.file.lock();
        if let Some(file) = f.as_mut() {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let line = format!("{}.{:06} {}\n", now.as_secs(), now.subsec_micros(), msg);
            let _ = file.append(line.as_bytes());
            let _ = file.flush();
        }
    }
}
