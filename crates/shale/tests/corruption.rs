//! Corruption of every kind of database file, at many positions, through
//! the public API.
//!
//! A database is built on the real file system with tables on several
//! levels (each table made of uncompressed 1 KiB blocks with a bloom
//! filter) and a log holding the last updates only. Each case copies it,
//! damages one file at one position — flips a byte (xor 0xff), zeroes 16
//! bytes, or cuts the file there — in one region located by decoding the
//! file in this test (a table's data blocks, index block, filter block,
//! metaindex and footer; a log's or MANIFEST's fragment headers and
//! payloads; CURRENT), and then, with `paranoid_checks` off or on:
//! opens the database, gets every key ever written, scans forwards and
//! backwards, runs `compact_range` over everything, and gets every key again.
//! All reads ask for checksum verification.
//!
//! # The rules every case must follow
//!
//! 1. Nothing panics (on any thread) and nothing hangs.
//! 2. Every error is `Error::Corruption` naming the damaged file (for
//!    CURRENT, CURRENT or the MANIFEST it now names); an error that surfaces
//!    through a failed background compaction as `Error::Background` must
//!    quote such a corruption. For damage inside a table block the reported
//!    offset is that block's; for damage in a log it is at or before the
//!    damage.
//! 3. Every read that succeeds returns exactly the model's state for the
//!    keys it covers, except where rule 4 allows a loss. A failed scan's
//!    partial results are not judged (its error is the report).
//! 4. Silent losses, as LevelDB documents them:
//!    * damage to the log with `paranoid_checks` off drops the damaged
//!      records (and whatever else its 32 KiB block held), so a key the log
//!      alone held may show its state before the log: "log loss";
//!    * a log or MANIFEST that is cut short or zero-filled, or whose
//!      fragment length field is changed (it may then claim bytes past the
//!      end of the file), reads as a torn append or never-written
//!      preallocated space, even with `paranoid_checks` on: the log gives "log loss"; the MANIFEST loses
//!      its edits from the damage on, so a key may show any state it ever
//!      had: "history loss". (A flipped byte in the MANIFEST is a checksum
//!      failure and must fail the open.)
//!
//!    Table damage never allows a silent loss: with checksums verified a
//!    damaged block is an error, and a damaged filter or metaindex only
//!    costs the filter (or is refused with `paranoid_checks`).
//! 5. With `paranoid_checks` on, damage that changes checked bytes must be
//!    reported by some step (open, a read, the scan, or the compaction).
//!    Exempt: rule 4's torn and zero-filled logs and MANIFESTs, and the
//!    footer's padding, which no reader looks at.
//!
//! # Repair
//!
//! For each damage, `shale::repair` runs on a fresh damaged copy; it must
//! succeed, and the repaired database must read without errors and give
//! every key's exact state except the keys whose records were damaged:
//! the keys of a damaged data block, every key of a table whose index or
//! footer is damaged or that is cut short (its blocks cannot be found), and
//! the log's keys for log damage; such keys may show any state they ever
//! had. A damaged table is moved to `lost/`. The `RepairReport` it returns
//! must name what the damage cost: the damaged table (with the damaged data
//! block's offset and length, or the whole file when its blocks cannot be
//! found), the stretch of the log holding a damaged record, and nothing at
//! all for damage that costs no record (a filter, the metaindex, the
//! footer's padding, the MANIFEST, CURRENT).
//!
//! # Running
//!
//! The fast version (`cargo test -p shale --test corruption`) samples a few
//! positions per region and alternates `paranoid_checks`. The exhaustive
//! version damages every block of every table at many positions, with
//! `paranoid_checks` both off and on:
//!
//! ```text
//! cargo test --release -p shale --test corruption -- --ignored --nocapture
//! ```
//!
//! Each test prints its count of cases. A failure names the case (file,
//! region, position, damage, paranoid); `SHALE_CORRUPTION_CASE=<substring>`
//! runs only the cases whose description contains it.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use shale::{BloomFilterPolicy, CompressionType, Db, Error, Options, ReadOptions, WriteBatch};
use support::{
    contents, contents_reverse, copy_dir, files_named, log_fragments, run_guarded, scratch_dir,
    TableLayout, FOOTER_LEN, LOG_HEADER,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const HANG_LIMIT: Duration = Duration::from_secs(300);

// ---------------------------------------------------------------------------
// The database every case damages.

/// The pristine database and what it must hold.
struct Fixture {
    _root: tempfile::TempDir,
    dir: PathBuf,
    /// The final state.
    model: Model,
    /// The state before the updates only the log holds.
    before_log: Model,
    /// Keys updated by the log's records.
    log_keys: BTreeSet<Vec<u8>>,
    /// Every state each key has had (`None`: absent), for history losses.
    history: BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>>,
    /// Each table's name and decoded layout.
    tables: Vec<(String, TableLayout)>,
}

fn options(dir_fs_paranoid: bool) -> Options {
    Options {
        create_if_missing: true,
        paranoid_checks: dir_fs_paranoid,
        // Never filled (see `build`); 4 MB keeps LevelDB's level-0
        // counts, so that four level-0 tables are due for compaction.
        write_buffer_size: 4 << 20,
        max_file_size: 1 << 20,
        block_size: 1024,
        compression: CompressionType::None,
        filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
        ..Default::default()
    }
}

/// Keys written before the log's updates (more follow).
const KEYS: usize = 800;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A value that names its key and version, so a wrong one is recognisable.
fn value(k: &[u8], version: u32) -> Vec<u8> {
    let tag = format!("{}@{version}:", String::from_utf8_lossy(k));
    tag.repeat(5).into_bytes()
}

/// Applies updates to the database and the model, remembering history.
struct Builder {
    db: Option<Db>,
    model: Model,
    history: BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>>,
}

impl Builder {
    fn record(&mut self, k: &[u8], v: Option<Vec<u8>>) {
        let h = self.history.entry(k.to_vec()).or_insert_with(|| vec![None]);
        h.push(v.clone());
        match v {
            Some(v) => self.model.insert(k.to_vec(), v),
            None => self.model.remove(k),
        };
    }

    fn put(&mut self, i: usize, version: u32) {
        let (k, v) = (key(i), value(&key(i), version));
        self.db().put(&k, &v).unwrap();
        self.record(&k, Some(v));
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("open")
    }

    /// Closes and reopens the database: recovery writes the log to a
    /// level-0 table.
    fn reopen(&mut self, dir: &Path) {
        self.db = None;
        self.db = Some(Db::open(dir, options(false)).unwrap());
    }

    fn delete(&mut self, i: usize) {
        self.db().delete(&key(i)).unwrap();
        self.record(&key(i), None);
    }
}

/// Builds the database: a deep level from a full compaction, a shallower
/// one from a partial compaction of overwrites and deletions, level-0
/// tables from flushes, and a log holding the last updates only.
fn build() -> Fixture {
    let root = scratch_dir();
    let dir = root.path().join("db");
    let mut b = Builder {
        db: Some(Db::open(&dir, options(false)).unwrap()),
        model: Model::new(),
        history: BTreeMap::new(),
    };
    // Level 2: two halves of the keys, each flushed by `compact_range`
    // into the deepest level a memtable may go to, as nothing overlaps it.
    // (Memtables are written to tables only by `compact_range` or a reopen,
    // never by filling up, so the tables do not depend on the background
    // thread's timing.)
    for half in [0..KEYS / 2, KEYS / 2..KEYS] {
        for i in half {
            b.put(i, 1);
        }
        b.db().compact_range(None, None).unwrap();
    }
    // Level 1: overwrites and deletions in four level-0 tables, which
    // reaching the compaction trigger are compacted into level 1.
    for part in 0..4 {
        for i in (part..KEYS).step_by(4) {
            if i % 7 == 0 {
                b.delete(i);
            } else if i % 3 == 0 {
                b.put(i, 2);
            }
        }
        b.reopen(&dir);
    }
    while b.db().property("leveldb.num-files-at-level0").as_deref() != Some("0") {
        std::thread::sleep(Duration::from_millis(5));
    }
    // Two level-0 tables.
    for i in (0..KEYS).step_by(5) {
        b.put(i, 3);
    }
    b.reopen(&dir);
    for i in KEYS..KEYS + 200 {
        b.put(i, 3);
    }
    b.reopen(&dir);
    let before_log = b.model.clone();
    let history_before = b.history.clone();
    // The log: new keys, overwrites and deletions, singly and in batches,
    // each key updated once.
    for i in KEYS + 200..KEYS + 260 {
        b.put(i, 4);
    }
    for i in (1..KEYS / 2).step_by(11) {
        b.put(i, 4);
    }
    for i in (KEYS / 2..KEYS).step_by(13) {
        b.delete(i);
    }
    let mut batch = WriteBatch::new();
    for i in KEYS + 260..KEYS + 300 {
        let (k, v) = (key(i), value(&key(i), 4));
        batch.put(&k, &v).unwrap();
        b.record(&k, Some(v));
    }
    b.db().write(&Default::default(), &batch).unwrap();
    let log_keys = b
        .history
        .iter()
        .filter(|(k, h)| history_before.get(*k).map_or(0, |o| o.len()) != h.len())
        .map(|(k, _)| k.clone())
        .collect();
    let levels: Vec<String> = (0..7)
        .map(|l| {
            b.db()
                .property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
        })
        .collect();
    b.db = None;
    let tables: Vec<(String, TableLayout)> = files_named(&dir, ".ldb")
        .into_iter()
        .map(|n| {
            let layout = TableLayout::decode(&std::fs::read(dir.join(&n)).unwrap());
            (n, layout)
        })
        .collect();
    let nonempty = levels.iter().filter(|n| *n != "0").count();
    assert!(
        nonempty >= 3,
        "the fixture should have tables on three levels, has {levels:?}"
    );
    assert!(tables.iter().all(|(_, t)| t.filter.is_some()));
    assert_eq!(files_named(&dir, ".log").len(), 1, "one log");
    eprintln!(
        "fixture: files per level {levels:?}, tables {:?}, {} keys, {} in the log",
        tables
            .iter()
            .map(|(n, t)| format!("{n} ({} bytes)", t.len))
            .collect::<Vec<_>>(),
        b.model.len(),
        b.history.len() - history_before.len()
    );
    Fixture {
        _root: root,
        dir,
        model: b.model,
        before_log,
        log_keys,
        history: b.history,
        tables,
    }
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(build)
}

// ---------------------------------------------------------------------------
// Damage.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Log,
    DataBlock,
    IndexBlock,
    FilterBlock,
    WholeFilter,
    Metaindex,
    Footer,
    FooterPadding,
    Manifest,
    Current,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Flip,
    Zero,
    Truncate,
}

/// One way to damage the pristine database.
#[derive(Clone, Debug)]
struct Damage {
    file: String,
    region: Region,
    /// Where the region starts (a block's offset for table blocks).
    region_start: u64,
    /// Where it ends (after a block's trailer).
    region_end: u64,
    at: u64,
    mode: Mode,
    /// Keys whose records the damage may destroy (for repair's check).
    damaged_keys: BTreeSet<Vec<u8>>,
}

impl Damage {
    fn describe(&self, paranoid: Option<bool>) -> String {
        let p = paranoid.map_or(String::new(), |p| format!(", paranoid_checks {p}"));
        format!(
            "{:?} of {} at offset {} ({:?} starting at {}){p}",
            self.mode, self.file, self.at, self.region, self.region_start
        )
    }

    /// Damages `dir`'s copy of the file; false if that changes nothing
    /// (e.g. zeroing bytes that are already zero).
    fn apply(&self, dir: &Path) -> bool {
        let path = dir.join(&self.file);
        let mut data = std::fs::read(&path).unwrap();
        let at = self.at as usize;
        let before = data.clone();
        match self.mode {
            Mode::Flip => data[at] ^= 0xff,
            Mode::Zero => {
                let end = (at + 16).min(data.len());
                data[at..end].fill(0);
            }
            Mode::Truncate => data.truncate(at),
        }
        if data == before {
            return false;
        }
        std::fs::write(&path, &data).unwrap();
        true
    }

    /// The silent loss rule 4 allows for this damage.
    fn allowance(&self, paranoid: bool) -> Allowance {
        // A fragment header's length field (bytes 4 and 5) changed to claim
        // more than the file holds reads as a torn last write too.
        let header = self.region_end - self.region_start == LOG_HEADER as u64;
        let length_field = header && (4..6).contains(&(self.at - self.region_start));
        let torn = matches!(self.mode, Mode::Zero | Mode::Truncate) || length_field;
        match self.region {
            Region::Log if torn || !paranoid => Allowance::LogLoss,
            Region::Manifest if torn => Allowance::HistoryLoss,
            _ => Allowance::Exact,
        }
    }

    /// Whether rule 5 requires a paranoid database to report this damage.
    fn must_report_when_paranoid(&self) -> bool {
        self.allowance(true) == Allowance::Exact && self.region != Region::FooterPadding
    }

    /// Rule 2: the error names the damaged file (and offset).
    fn check_error(&self, e: &Error, step: &str, case: &str) {
        let names_file = |p: &Path| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            match self.region {
                Region::Current => {
                    name.is_some_and(|n| n == "CURRENT" || n.starts_with("MANIFEST-"))
                }
                _ => name.as_deref() == Some(self.file.as_str()),
            }
        };
        match e {
            Error::Corruption { file, offset, .. } => {
                assert!(
                    names_file(file),
                    "{step}: error {e} does not name the damaged file; case: {case}"
                );
                let block = matches!(
                    self.region,
                    Region::DataBlock
                        | Region::IndexBlock
                        | Region::FilterBlock
                        | Region::WholeFilter
                        | Region::Metaindex
                );
                // (Zeroed bytes that run on past the block may damage a
                // handle, and then the error is where that points.)
                let contained = match self.mode {
                    Mode::Flip => true,
                    Mode::Zero => self.at + 16 <= self.region_end,
                    Mode::Truncate => false,
                };
                if block && contained {
                    assert!(
                        *offset == Some(self.region_start),
                        "{step}: error {e} does not give the damaged block's offset; case: {case}"
                    );
                }
                if self.region == Region::Log {
                    assert!(
                        offset.is_some_and(|o| o <= self.at),
                        "{step}: error {e} does not give an offset at or before the damage; case: {case}"
                    );
                }
            }
            Error::Background(msg) => {
                let text = msg.to_string();
                assert!(
                    text.contains("corruption in") && text.contains(&self.file)
                        || self.region == Region::Current && text.contains("MANIFEST-"),
                    "{step}: background error {e} does not quote a corruption of the damaged file; case: {case}"
                );
            }
            other => panic!("{step}: {other} is not a corruption error; case: {case}"),
        }
    }
}

/// What a successful read may show instead of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allowance {
    Exact,
    /// A key the log updated may show its state before the log.
    LogLoss,
    /// Any key may show any state it ever had.
    HistoryLoss,
}

impl Fixture {
    /// Whether `got` is an acceptable state of `k` under `allow`, with
    /// `damaged` keys (after a repair) also allowed any past state.
    fn acceptable(
        &self,
        k: &[u8],
        got: Option<&[u8]>,
        allow: Allowance,
        damaged: &BTreeSet<Vec<u8>>,
    ) -> bool {
        if got == self.model.get(k).map(|v| v.as_slice()) {
            return true;
        }
        let in_history = || {
            self.history
                .get(k)
                .is_some_and(|h| h.iter().any(|s| s.as_deref() == got))
        };
        match allow {
            Allowance::LogLoss if self.log_keys.contains(k) => {
                got == self.before_log.get(k).map(|v| v.as_slice())
            }
            Allowance::HistoryLoss => in_history(),
            _ => damaged.contains(k) && in_history(),
        }
    }

    /// Rule 3 for a whole scan (`pairs` in ascending order).
    fn check_scan(
        &self,
        pairs: &[(Vec<u8>, Vec<u8>)],
        allow: Allowance,
        damaged: &BTreeSet<Vec<u8>>,
        what: &str,
    ) {
        for w in pairs.windows(2) {
            assert!(w[0].0 < w[1].0, "{what}: keys out of order or repeated");
        }
        let seen: BTreeMap<&[u8], &[u8]> = pairs
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
            .collect();
        for k in seen.keys() {
            assert!(
                self.history.contains_key(*k),
                "{what}: a key never written: {:?}",
                String::from_utf8_lossy(k)
            );
        }
        for k in self.history.keys() {
            let got = seen.get(k.as_slice()).copied();
            assert!(
                self.acceptable(k, got, allow, damaged),
                "{what}: key {:?} shows {:?}, expected {:?}",
                String::from_utf8_lossy(k),
                got.map(String::from_utf8_lossy),
                self.model.get(k).map(|v| String::from_utf8_lossy(v))
            );
        }
    }

    /// Rule 3 for a get of every key; errors go to `on_error`.
    fn check_gets(
        &self,
        db: &Db,
        allow: Allowance,
        damaged: &BTreeSet<Vec<u8>>,
        what: &str,
        mut on_error: impl FnMut(&Error),
    ) {
        let verify = ReadOptions {
            verify_checksums: true,
            ..Default::default()
        };
        for k in self.history.keys() {
            match db.get_with(&verify, k) {
                Ok(got) => assert!(
                    self.acceptable(k, got.as_deref(), allow, damaged),
                    "{what}: get {:?} gave {:?}, expected {:?}",
                    String::from_utf8_lossy(k),
                    got.as_deref().map(String::from_utf8_lossy),
                    self.model.get(k).map(|v| String::from_utf8_lossy(v))
                ),
                Err(e) => on_error(&e),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Choosing the damage.

/// Positions to damage in `range`: a few in the fast version, many in the
/// exhaustive one, always including the first and last byte.
fn positions(range: std::ops::Range<u64>, exhaustive: bool) -> Vec<u64> {
    let len = range.end - range.start;
    if len == 0 {
        return Vec::new();
    }
    let mut p: BTreeSet<u64> = [range.start, range.start + len / 2, range.end - 1].into();
    if exhaustive {
        let step = (len / 24).max(1);
        p.extend((range.start..range.end).step_by(step as usize));
    }
    p.into_iter().collect()
}

/// The damages for every region of the given kinds of files. The fast
/// version damages the first and last data block of the newest and oldest
/// table and every other region of those tables.
fn damages(fx: &Fixture, exhaustive: bool) -> Vec<Damage> {
    let mut out = Vec::new();
    fn add(
        out: &mut Vec<Damage>,
        exhaustive: bool,
        file: &str,
        region: Region,
        range: std::ops::Range<u64>,
        keys: BTreeSet<Vec<u8>>,
        whole: &BTreeSet<Vec<u8>>,
    ) {
        for at in positions(range.clone(), exhaustive) {
            for mode in [Mode::Flip, Mode::Zero] {
                out.push(Damage {
                    file: file.to_string(),
                    region,
                    region_start: range.start,
                    region_end: range.end,
                    at,
                    mode,
                    damaged_keys: keys.clone(),
                });
            }
        }
        // A cut inside the region loses it and everything after it.
        out.push(Damage {
            file: file.to_string(),
            region,
            region_start: range.start,
            region_end: range.end,
            at: range.start + (range.end - range.start) / 2,
            mode: Mode::Truncate,
            damaged_keys: whole.clone(),
        });
    }

    // Tables.
    let n = fx.tables.len();
    for (i, (name, t)) in fx.tables.iter().enumerate() {
        if !exhaustive && i != 0 && i != n - 1 {
            continue;
        }
        let all: BTreeSet<Vec<u8>> = t.keys().cloned().collect();
        let none = BTreeSet::new();
        let blocks = t.data.len();
        for (j, (h, keys)) in t.data.iter().enumerate() {
            if exhaustive || j == 0 || j == blocks - 1 {
                let keys: BTreeSet<Vec<u8>> = keys.iter().cloned().collect();
                add(
                    &mut out,
                    exhaustive,
                    name,
                    Region::DataBlock,
                    h.extent(),
                    keys,
                    &all,
                );
            }
        }
        let filter = t.filter.expect("filter");
        add(
            &mut out,
            exhaustive,
            name,
            Region::FilterBlock,
            filter.extent(),
            none.clone(),
            &all,
        );
        if let Some(whole) = t.whole_filter {
            add(
                &mut out,
                exhaustive,
                name,
                Region::WholeFilter,
                whole.extent(),
                none.clone(),
                &all,
            );
        }
        add(
            &mut out,
            exhaustive,
            name,
            Region::Metaindex,
            t.footer.metaindex.extent(),
            none.clone(),
            &all,
        );
        add(
            &mut out,
            exhaustive,
            name,
            Region::IndexBlock,
            t.footer.index.extent(),
            all.clone(),
            &all,
        );
        let footer_at = t.len - FOOTER_LEN as u64;
        add(
            &mut out,
            exhaustive,
            name,
            Region::Footer,
            footer_at..t.footer.padding_at,
            all.clone(),
            &all,
        );
        add(
            &mut out,
            exhaustive,
            name,
            Region::FooterPadding,
            t.footer.padding_at..t.len - 8,
            all.clone(),
            &all,
        );
        add(
            &mut out,
            exhaustive,
            name,
            Region::Footer,
            t.len - 8..t.len,
            all.clone(),
            &all,
        );
        // Zeroed bytes may run on past their region: their damage covers
        // every data block they reach, and the whole table if they reach
        // the index or the footer's handles or magic number.
        let footer_at = t.len - FOOTER_LEN as u64;
        for d in out
            .iter_mut()
            .filter(|d| d.file == *name && d.mode == Mode::Zero)
        {
            let zeroed = d.at..d.at + 16;
            let overlaps = |r: std::ops::Range<u64>| r.start < zeroed.end && zeroed.start < r.end;
            for (h, keys) in &t.data {
                if overlaps(h.extent()) {
                    d.damaged_keys.extend(keys.iter().cloned());
                }
            }
            if overlaps(t.footer.index.extent())
                || overlaps(footer_at..t.footer.padding_at)
                || overlaps(t.len - 8..t.len)
            {
                d.damaged_keys.extend(all.iter().cloned());
            }
        }
    }

    // The log: each fragment's header fields and payload.
    let log = &files_named(&fx.dir, ".log")[0];
    let data = std::fs::read(fx.dir.join(log)).unwrap();
    let frags = log_fragments(&data);
    for (i, f) in frags.iter().enumerate() {
        if !exhaustive && i != 0 && i != frags.len() / 2 && i != frags.len() - 1 {
            continue;
        }
        let h = f.offset;
        add(
            &mut out,
            exhaustive,
            log,
            Region::Log,
            h..h + LOG_HEADER as u64,
            fx.log_keys.clone(),
            &fx.log_keys,
        );
        let p = h + LOG_HEADER as u64;
        add(
            &mut out,
            exhaustive,
            log,
            Region::Log,
            p..p + f.len as u64,
            fx.log_keys.clone(),
            &fx.log_keys,
        );
    }

    // The MANIFEST: its records' headers and payloads.
    let manifest = &files_named(&fx.dir, "MANIFEST-")[0];
    let data = std::fs::read(fx.dir.join(manifest)).unwrap();
    let frags = log_fragments(&data);
    for (i, f) in frags.iter().enumerate() {
        if !exhaustive && i != 0 && i != frags.len() / 2 && i != frags.len() - 1 {
            continue;
        }
        let h = f.offset;
        let none = BTreeSet::new();
        add(
            &mut out,
            exhaustive,
            manifest,
            Region::Manifest,
            h..h + LOG_HEADER as u64,
            none.clone(),
            &none,
        );
        let p = h + LOG_HEADER as u64;
        add(
            &mut out,
            exhaustive,
            manifest,
            Region::Manifest,
            p..p + f.len as u64,
            none.clone(),
            &none,
        );
    }

    // CURRENT: every byte.
    let len = std::fs::metadata(fx.dir.join("CURRENT")).unwrap().len();
    let none = BTreeSet::new();
    add(
        &mut out,
        exhaustive,
        "CURRENT",
        Region::Current,
        0..len,
        none.clone(),
        &none,
    );
    if exhaustive {
        for at in 0..len {
            out.push(Damage {
                file: "CURRENT".into(),
                region: Region::Current,
                region_start: 0,
                region_end: len,
                at,
                mode: Mode::Flip,
                damaged_keys: BTreeSet::new(),
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Running a case.

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    unchanged: usize,
    reported: usize,
    open_refused: usize,
    repairs: usize,
}

/// Opens, reads, scans both ways, compacts and reads again the damaged
/// database in `dir`, checking rules 2, 3 and 5. Returns whether any step
/// reported an error and whether the open did.
fn exercise(fx: &Fixture, d: &Damage, dir: &Path, paranoid: bool, case: &str) -> (bool, bool) {
    let allow = d.allowance(paranoid);
    let none = BTreeSet::new();
    let mut reported = false;
    let mut report = |e: &Error, step: &str| {
        d.check_error(e, step, case);
        reported = true;
    };
    let db = match Db::open(dir, options(paranoid)) {
        Ok(db) => db,
        Err(e) => {
            report(&e, "open");
            return (true, true);
        }
    };
    fx.check_gets(&db, allow, &none, &format!("get, {case}"), |e| {
        report(e, "get")
    });
    let verify = ReadOptions {
        verify_checksums: true,
        ..Default::default()
    };
    match contents(&db, &verify) {
        Ok(pairs) => fx.check_scan(&pairs, allow, &none, &format!("forward scan, {case}")),
        Err(e) => report(&e, "forward scan"),
    }
    match contents_reverse(&db, &verify) {
        Ok(mut pairs) => {
            pairs.reverse();
            fx.check_scan(&pairs, allow, &none, &format!("backward scan, {case}"))
        }
        Err(e) => report(&e, "backward scan"),
    }
    if let Err(e) = db.compact_range(None, None) {
        report(&e, "compact_range");
    }
    fx.check_gets(
        &db,
        allow,
        &none,
        &format!("get after compaction, {case}"),
        |e| report(e, "get after compaction"),
    );
    drop(db);
    (reported, false)
}

/// Repairs a fresh damaged copy in `dir` and checks the repaired database.
fn check_repair(fx: &Fixture, d: &Damage, dir: &Path, case: &str) {
    let opts = options(false);
    let report =
        shale::repair(dir, &opts).unwrap_or_else(|e| panic!("repair failed: {e}; case: {case}"));
    let table_lost = matches!(
        d.region,
        Region::DataBlock | Region::IndexBlock | Region::Footer
    );
    if table_lost {
        assert!(
            dir.join("lost").join(&d.file).exists(),
            "repair did not move the damaged table to lost/; case: {case}"
        );
    }
    check_repair_report(&report, d, dir, case);
    let db = Db::open(dir, opts).unwrap_or_else(|e| panic!("open after repair: {e}; case: {case}"));
    let what = format!("after repair, {case}");
    fx.check_gets(&db, Allowance::Exact, &d.damaged_keys, &what, |e| {
        panic!("{what}: get failed: {e}")
    });
    let pairs = contents(&db, &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{what}: scan failed: {e}"));
    fx.check_scan(&pairs, Allowance::Exact, &d.damaged_keys, &what);
}

/// What the report of a repair after damage `d` must say: a damaged table
/// is listed and moved to `lost/`, with a damaged data block's own offset
/// and length or, when its blocks cannot be found, the whole file; damage
/// to a log record is a skipped stretch of the log that holds it; damage
/// that costs no record (a filter, the metaindex, the footer's padding, the
/// MANIFEST, CURRENT) drops nothing.
fn check_repair_report(report: &shale::RepairReport, d: &Damage, dir: &Path, case: &str) {
    let file = dir.join(&d.file);
    let dropped: Vec<_> = report.dropped().collect();
    // Whether the damage stays in its region (zeroed bytes may run on).
    let contained = match d.mode {
        Mode::Flip => true,
        Mode::Zero => d.at + 16 <= d.region_end,
        Mode::Truncate => false,
    };
    // A table cut short anywhere has lost its footer.
    let table_cut = d.mode == Mode::Truncate && TABLE_REGIONS.contains(&d.region);
    match d.region {
        Region::DataBlock | Region::IndexBlock | Region::Footer => {
            check_damaged_table(report, d, dir, case, contained)
        }
        _ if table_cut => check_damaged_table(report, d, dir, case, contained),
        Region::Log if d.allowance(true) == Allowance::Exact => {
            assert!(
                dropped
                    .iter()
                    .any(|r| r.file == file && r.offset <= d.at && d.at < r.offset + r.len),
                "the report does not name the damaged log record; case: {case}; {dropped:#?}"
            );
        }
        Region::Log => {}
        // Zeroed bytes that run on into the next region may cost a table.
        Region::FilterBlock | Region::WholeFilter | Region::Metaindex | Region::FooterPadding
            if !contained => {}
        Region::FilterBlock
        | Region::WholeFilter
        | Region::Metaindex
        | Region::FooterPadding
        | Region::Manifest
        | Region::Current => {
            assert!(
                dropped.is_empty() && report.damaged_tables.is_empty(),
                "the report drops records the damage did not touch; case: {case}; {report:#?}"
            );
        }
    }
}

/// The report's account of a table the damage made unreadable whole:
/// listed, moved, and (when the damage is known to stay in one block or to
/// hide every block) the exact stretch dropped.
fn check_damaged_table(
    report: &shale::RepairReport,
    d: &Damage,
    dir: &Path,
    case: &str,
    contained: bool,
) {
    let file = dir.join(&d.file);
    let damaged = report
        .damaged_tables
        .iter()
        .find(|t| t.file == file)
        .unwrap_or_else(|| {
            panic!("the report does not name the damaged table; case: {case}; {report:#?}")
        });
    assert!(
        report.moved_to_lost.iter().any(|m| m.from == file),
        "the report does not say the damaged table was moved; case: {case}"
    );
    // The damaged file as repair found it, now in lost/.
    let size = std::fs::metadata(dir.join("lost").join(&d.file))
        .map(|m| m.len())
        .unwrap_or_else(|e| panic!("{}: {e}; case: {case}", d.file));
    let has = |offset: u64, len: u64| {
        damaged
            .unreadable
            .iter()
            .any(|u| u.file == file && u.offset == offset && u.len == len)
    };
    if d.mode == Mode::Truncate || d.region == Region::IndexBlock && contained {
        assert!(
            has(0, size) && damaged.entries_salvaged == 0,
            "the report does not drop the whole table; case: {case}; {damaged:#?}"
        );
    } else if d.region == Region::DataBlock && contained {
        assert!(
            has(d.region_start, d.region_end - d.region_start),
            "the report does not name the damaged block; case: {case}; {damaged:#?}"
        );
    }
    // The salvaged copy, if any, holds what the report says was salvaged.
    let salvaged: u64 = report
        .tables
        .iter()
        .filter(|t| t.number == damaged.number)
        .map(|t| t.entries)
        .sum();
    assert_eq!(salvaged, damaged.entries_salvaged, "case: {case}");
}

/// Which `paranoid_checks` settings each damage is tried with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Paranoid {
    Off,
    On,
    /// Off and on for alternate damages.
    Alternate,
    Both,
}

/// Runs the damages to `regions` with the given `paranoid_checks` settings.
fn run(exhaustive: bool, regions: &[Region], paranoid: Paranoid) {
    let fx = fixture();
    let only = std::env::var("SHALE_CORRUPTION_CASE").ok();
    let scratch = scratch_dir();
    let mut tally = Tally::default();
    let all = damages(fx, exhaustive);
    for (i, d) in all
        .iter()
        .filter(|d| regions.contains(&d.region))
        .enumerate()
    {
        let paranoid_modes: &[bool] = match paranoid {
            Paranoid::Off => &[false],
            Paranoid::On => &[true],
            Paranoid::Both => &[false, true],
            Paranoid::Alternate if i % 2 == 0 => &[false],
            Paranoid::Alternate => &[true],
        };
        for &paranoid in paranoid_modes {
            let case = d.describe(Some(paranoid));
            if only.as_ref().is_some_and(|o| !case.contains(o.as_str())) {
                continue;
            }
            let dir = scratch.path().join(format!("case{}", tally.cases));
            copy_dir(&fx.dir, &dir);
            tally.cases += 1;
            if !d.apply(&dir) {
                tally.unchanged += 1;
                std::fs::remove_dir_all(&dir).unwrap();
                continue;
            }
            let (reported, refused) =
                run_guarded(&case, HANG_LIMIT, || exercise(fx, d, &dir, paranoid, &case));
            if paranoid && d.must_report_when_paranoid() {
                assert!(
                    reported,
                    "paranoid_checks did not report the damage; case: {case}"
                );
            }
            tally.reported += usize::from(reported);
            tally.open_refused += usize::from(refused);
            std::fs::remove_dir_all(&dir).unwrap();
        }
        // Repair, once per damage.
        let case = format!("repair after {}", d.describe(None));
        if only.as_ref().is_some_and(|o| !case.contains(o.as_str())) {
            continue;
        }
        let dir = scratch.path().join("repair");
        copy_dir(&fx.dir, &dir);
        if d.apply(&dir) {
            run_guarded(&case, HANG_LIMIT, || check_repair(fx, d, &dir, &case));
            tally.repairs += 1;
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    eprintln!("{regions:?}: {tally:?}");
    assert!(tally.cases > 0 || only.is_some(), "no cases ran");
}

const TABLE_REGIONS: &[Region] = &[
    Region::DataBlock,
    Region::IndexBlock,
    Region::FilterBlock,
    Region::WholeFilter,
    Region::Metaindex,
    Region::Footer,
    Region::FooterPadding,
];

#[test]
fn damaged_tables() {
    run(false, TABLE_REGIONS, Paranoid::On);
}

/// Damaged tables read with checksums verified but `paranoid_checks` off.
/// The reads charge seeks, which start compactions of the damaged tables.
#[test]
fn damaged_tables_without_paranoid_checks() {
    run(false, TABLE_REGIONS, Paranoid::Off);
}

#[test]
fn damaged_log() {
    run(false, &[Region::Log], Paranoid::Alternate);
}

#[test]
fn damaged_manifest() {
    run(false, &[Region::Manifest], Paranoid::Alternate);
}

#[test]
fn damaged_current() {
    run(false, &[Region::Current], Paranoid::Alternate);
}

/// Every region of every file: tables with `paranoid_checks` on (see
/// `damaged_tables_without_paranoid_checks`), the rest off and on.
#[test]
#[ignore = "exhaustive: cargo test --release -p shale --test corruption exhaustive -- --ignored --nocapture"]
fn exhaustive_damage_of_every_file() {
    run(true, TABLE_REGIONS, Paranoid::On);
    run(
        true,
        &[Region::Log, Region::Manifest, Region::Current],
        Paranoid::Both,
    );
}

/// A MANIFEST record that fails its checksum must fail the open (LevelDB's
/// rule: a MANIFEST is never read past damage), with `paranoid_checks` off
/// or on. Here the last record, which adds the table holding `b`, is
/// damaged; skipping it silently would lose `b` and leave its table to be
/// deleted as obsolete.
#[test]
fn a_damaged_manifest_record_fails_the_open() {
    for paranoid in [false, true] {
        let dir = scratch_dir();
        let opts = Options {
            create_if_missing: true,
            paranoid_checks: paranoid,
            ..Default::default()
        };
        {
            let db = Db::open(dir.path(), opts.clone()).unwrap();
            db.put(b"a", b"1").unwrap();
            db.compact_range(None, None).unwrap();
            db.put(b"b", b"2").unwrap();
            db.compact_range(None, None).unwrap();
        }
        let name = files_named(dir.path(), "MANIFEST-")[0].clone();
        let path = dir.path().join(&name);
        let mut data = std::fs::read(&path).unwrap();
        let last = *log_fragments(&data).last().unwrap();
        data[last.offset as usize + LOG_HEADER] ^= 0xff;
        std::fs::write(&path, &data).unwrap();
        match Db::open(dir.path(), opts) {
            Err(Error::Corruption { file, .. }) if file.ends_with(&name) => {}
            Err(e) => panic!("paranoid_checks {paranoid}: {e} is not a corruption of {name}"),
            Ok(db) => panic!(
                "paranoid_checks {paranoid}: opened past a damaged MANIFEST record: a={:?} b={:?}",
                db.get(b"a"),
                db.get(b"b")
            ),
        }
    }
}
