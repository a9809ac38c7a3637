//! New files get durable directory entries before anything depends on them:
//! a new log before a synchronous write into it is acknowledged, a new table
//! before a MANIFEST that may name it is synced and before a log is deleted,
//! and the rename of CURRENT before the database goes on.
//!
//! A file system wrapper records the order of creations, file syncs,
//! directory syncs, renames and removals while a workload switches logs,
//! flushes and compacts; the checks then read the record.

#[macro_use]
mod forward_fs;

use std::path::Path;
use std::sync::{Arc, Mutex};

use shale::env::{FileSystem, MemFs, WritableFile};
use shale::{Db, Options, WriteOptions};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Create(String),
    Sync(String),
    SyncDir,
    Rename { to: String },
    Remove(String),
}

type Events = Arc<Mutex<Vec<Event>>>;

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

struct RecordingFs {
    inner: MemFs,
    events: Events,
}

impl RecordingFs {
    fn record(&self, e: Event) {
        self.events.lock().unwrap().push(e);
    }

    fn wrap(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        self.record(Event::Create(name(path)));
        Box::new(RecordingFile {
            name: name(path),
            inner: file,
            events: self.events.clone(),
        })
    }
}

struct RecordingFile {
    name: String,
    inner: Box<dyn WritableFile>,
    events: Events,
}

impl WritableFile for RecordingFile {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.inner.sync()?;
        self.events
            .lock()
            .unwrap()
            .push(Event::Sync(self.name.clone()));
        Ok(())
    }
    fn close(&mut self) -> shale::Result<()> {
        self.inner.close()
    }
}

impl FileSystem for RecordingFs {
    fn new_writable_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        let f = self.inner.new_writable_file(path)?;
        Ok(self.wrap(path, f))
    }
    fn new_log_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        let f = self.inner.new_log_file(path)?;
        Ok(self.wrap(path, f))
    }
    fn new_appendable_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        let f = self.inner.new_appendable_file(path)?;
        Ok(self.wrap(path, f))
    }
    fn remove_file(&self, path: &Path) -> shale::Result<()> {
        self.inner.remove_file(path)?;
        self.record(Event::Remove(name(path)));
        Ok(())
    }
    fn rename(&self, from: &Path, to: &Path) -> shale::Result<()> {
        self.inner.rename(from, to)?;
        self.record(Event::Rename { to: name(to) });
        Ok(())
    }
    fn sync_dir(&self, dir: &Path) -> shale::Result<()> {
        self.inner.sync_dir(dir)?;
        self.record(Event::SyncDir);
        Ok(())
    }
    forward_fs!(
        new_sequential_file,
        new_random_access_file,
        exists,
        children,
        create_dir_all,
        remove_dir,
        file_size,
        lock
    );
}

fn is_log(name: &str) -> bool {
    name.ends_with(".log")
}

fn is_table(name: &str) -> bool {
    name.ends_with(".ldb")
}

/// True if a directory sync comes after event `from` and before event `to`.
fn synced_between(events: &[Event], from: usize, to: usize) -> bool {
    events[from + 1..to].contains(&Event::SyncDir)
}

/// Checks the recorded order; panics naming the first violation.
fn check_order(events: &[Event]) {
    // Files created and not yet removed, by name: the index of the creation.
    let mut live: Vec<(String, usize)> = Vec::new();
    let mut synced_logs = 0;
    let mut manifest_syncs = 0;
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::Create(n) => {
                live.retain(|(m, _)| m != n);
                live.push((n.clone(), i));
            }
            Event::Remove(n) => {
                if is_log(n) {
                    // The tables holding its data have durable entries.
                    for (t, at) in live.iter().filter(|(t, _)| is_table(t)) {
                        assert!(
                            synced_between(events, *at, i),
                            "log {n} deleted (event {i}) before table {t} (created at \
                             event {at}) had a durable directory entry"
                        );
                    }
                }
                live.retain(|(m, _)| m != n);
            }
            Event::Sync(n) if is_log(n) => {
                let (_, at) = live
                    .iter()
                    .find(|(m, _)| m == n)
                    .expect("synced a live log");
                assert!(
                    synced_between(events, *at, i),
                    "log {n} (created at event {at}) was synced for a write (event {i}) \
                     before its directory entry was durable"
                );
                synced_logs += 1;
            }
            Event::Sync(n) if n.starts_with("MANIFEST-") => {
                for (t, at) in live.iter().filter(|(t, _)| is_table(t)) {
                    assert!(
                        synced_between(events, *at, i),
                        "{n} synced (event {i}) while table {t} (created at event {at}) \
                         had no durable directory entry"
                    );
                }
                manifest_syncs += 1;
            }
            Event::Rename { to } if to == "CURRENT" => {
                assert_eq!(
                    events.get(i + 1),
                    Some(&Event::SyncDir),
                    "the rename of CURRENT (event {i}) is not made durable at once"
                );
            }
            _ => {}
        }
    }
    assert!(synced_logs > 10, "the workload made few sync writes");
    assert!(manifest_syncs > 3, "the workload made few MANIFEST edits");
}

#[test]
fn new_files_have_durable_directory_entries_before_they_are_relied_on() {
    let events: Events = Arc::default();
    let fs = Arc::new(RecordingFs {
        inner: MemFs::new(),
        events: events.clone(),
    });
    let options = Options {
        fs: fs.clone(),
        create_if_missing: true,
        // The smallest allowed: many log switches and flushes.
        write_buffer_size: 64 << 10,
        ..Default::default()
    };
    let dir = Path::new("/db");
    let value = vec![b'v'; 1000];
    for round in 0..2 {
        let db = Db::open(dir, options.clone()).unwrap();
        for i in 0..1500u32 {
            // Every log (a memtable holds about 60 of these) gets synchronous writes.
            let sync = i % 10 == 0;
            let key = format!("key{:06}", (i * 7919) % 3000 + round);
            db.put_with(
                &WriteOptions {
                    sync,
                    ..Default::default()
                },
                key.as_bytes(),
                &value,
            )
            .unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    let events = events.lock().unwrap();
    let logs = events
        .iter()
        .filter(|e| matches!(e, Event::Create(n) if is_log(n)))
        .count();
    assert!(logs > 10, "only {logs} logs were made");
    check_order(&events);
}
