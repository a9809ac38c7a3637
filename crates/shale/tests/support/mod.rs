//! Helpers shared by the whole-database robustness tests (corruption,
//! hostile sizes, the metamorphic model test, concurrency).
//!
//! * Reading the database: [`contents`], [`contents_reverse`] and [`Cursor`]
//!   are the only code that touches the database iterator, so a change of
//!   the iterator API is absorbed here.
//! * Decoding LevelDB's file formats from their documentation, without the
//!   engine's own decoders: [`TableLayout`] (footer, index, metaindex,
//!   filter and data blocks) and [`log_fragments`] (the log format's 32 KiB
//!   blocks of 7-byte-header fragments, used by logs and the MANIFEST).
//! * Running a case safely: [`run_guarded`] turns a panic (on any thread,
//!   including the engine's background thread) into a failure naming the
//!   case, and aborts the process with the case's description if it hangs.
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Once;
use std::time::Duration;

use shale::{Db, ReadOptions, Result};

/// Key/value pairs in the order a scan produced them.
pub type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Everything visible through `opts`, in ascending key order, or the
/// iterator's error.
pub fn contents(db: &Db, opts: &ReadOptions<'_>) -> Result<Pairs> {
    let mut it = db.cursor(opts);
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status()?;
    Ok(out)
}

/// Everything visible through `opts`, walked from the last key back to the
/// first (returned in that descending order), or the iterator's error.
pub fn contents_reverse(db: &Db, opts: &ReadOptions<'_>) -> Result<Pairs> {
    let mut it = db.cursor(opts);
    it.seek_to_last();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status()?;
    Ok(out)
}

/// A positioned walk over the database for tests that seek and step: each
/// call returns the entry the cursor lands on (`None` past either end).
pub struct Cursor {
    it: shale::Cursor,
}

/// Where to position a [`Cursor`].
pub enum Move<'k> {
    First,
    Last,
    Seek(&'k [u8]),
    Next,
    Prev,
}

impl Cursor {
    pub fn new(db: &Db, opts: &ReadOptions<'_>) -> Cursor {
        Cursor {
            it: db.cursor(opts),
        }
    }

    /// Moves and returns the entry now under the cursor. `Next`/`Prev` on an
    /// exhausted cursor return `None` without moving.
    pub fn step(&mut self, m: Move<'_>) -> Option<(Vec<u8>, Vec<u8>)> {
        match m {
            Move::First => self.it.seek_to_first(),
            Move::Last => self.it.seek_to_last(),
            Move::Seek(k) => self.it.seek(k),
            Move::Next if self.it.valid() => self.it.next(),
            Move::Prev if self.it.valid() => self.it.prev(),
            Move::Next | Move::Prev => {}
        }
        self.it
            .valid()
            .then(|| (self.it.key().to_vec(), self.it.value().to_vec()))
    }

    pub fn status(&self) -> Result<()> {
        self.it.status()
    }
}

// ---------------------------------------------------------------------------
// Running cases: panics anywhere and hangs become failures naming the case.

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Installs (once) a panic hook that counts every panic in the process,
/// whichever thread it happens on, before the default report.
fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            default(info);
        }));
    });
}

/// Runs `f` for the case described by `case`: a panic in `f`, or in any
/// thread while it runs (e.g. the engine's background thread), fails with
/// the case's description; if `f` has not returned after `limit`, the
/// process aborts after printing the description (a hang cannot be
/// interrupted from inside the process). The limit is a hang detector, far
/// above any case's running time, not a performance assertion.
pub fn run_guarded<T>(case: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    count_panics();
    let (done, wait) = mpsc::channel::<()>();
    let description = case.to_string();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
            eprintln!("HANG: no result after {limit:?} in case: {description}");
            std::process::abort();
        }
    });
    let before = PANICS.load(Ordering::SeqCst);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let _ = done.send(());
    let _ = watchdog.join();
    match result {
        Err(_) => panic!("panic in case: {case}"),
        Ok(v) => {
            let after = PANICS.load(Ordering::SeqCst);
            assert_eq!(
                before, after,
                "a panic on another thread (see above) during case: {case}"
            );
            v
        }
    }
}

// ---------------------------------------------------------------------------
// LevelDB's formats, decoded from their documentation.

/// Decodes a varint (up to 64 bits) at `*pos`, advancing it.
pub fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Appends `v` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// LevelDB's masked CRC32C, as stored in block trailers and log headers.
pub fn masked_crc(parts: &[&[u8]]) -> u32 {
    let crc = parts.iter().fold(0u32, |c, p| crc32c::crc32c_append(c, p));
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The magic number that ends every table file.
pub const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// A table's footer: two block handles, zero padding, the magic number.
pub const FOOTER_LEN: usize = 48;
/// Each block is followed by a type byte and a masked CRC.
pub const BLOCK_TRAILER_LEN: usize = 5;

/// Where a block sits in a table file: `size` bytes of contents from
/// `offset`, then the 5-byte trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    pub offset: u64,
    pub size: u64,
}

impl Handle {
    fn decode(data: &[u8], pos: &mut usize) -> Option<Handle> {
        Some(Handle {
            offset: get_varint(data, pos)?,
            size: get_varint(data, pos)?,
        })
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }

    /// The bytes the block occupies including its trailer.
    pub fn extent(&self) -> std::ops::Range<u64> {
        self.offset..self.offset + self.size + BLOCK_TRAILER_LEN as u64
    }
}

/// The decoded footer.
#[derive(Clone, Copy, Debug)]
pub struct Footer {
    pub metaindex: Handle,
    pub index: Handle,
    /// Where the padding after the two handles starts (a file offset).
    pub padding_at: u64,
}

/// Decodes the footer of the table `data`.
pub fn footer(data: &[u8]) -> Footer {
    let at = data.len() - FOOTER_LEN;
    let f = &data[at..];
    let magic = u64::from_le_bytes(f[40..48].try_into().unwrap());
    assert_eq!(magic, TABLE_MAGIC, "not a table: bad magic");
    let mut pos = 0;
    let metaindex = Handle::decode(f, &mut pos).expect("metaindex handle");
    let index = Handle::decode(f, &mut pos).expect("index handle");
    Footer {
        metaindex,
        index,
        padding_at: (at + pos) as u64,
    }
}

/// The contents of the block at `h` (decompressed if Snappy-compressed).
pub fn block_contents(data: &[u8], h: Handle) -> Vec<u8> {
    let start = h.offset as usize;
    let end = start + h.size as usize;
    let raw = &data[start..end];
    match data[end] {
        0 => raw.to_vec(),
        1 => snap::raw::Decoder::new()
            .decompress_vec(raw)
            .expect("snappy block"),
        t => panic!("unknown block type {t}"),
    }
}

/// The entries (full keys and values) of a block: prefix-compressed
/// entries (`shared`, `non_shared`, `value_len` varints, key delta, value)
/// followed by the restart array and its 32-bit count.
pub fn block_entries(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let n = block.len();
    let restarts = u32::from_le_bytes(block[n - 4..].try_into().unwrap()) as usize;
    let end = n - 4 - 4 * restarts;
    let mut pos = 0;
    let mut key: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    while pos < end {
        let shared = get_varint(block, &mut pos).unwrap() as usize;
        let non_shared = get_varint(block, &mut pos).unwrap() as usize;
        let value_len = get_varint(block, &mut pos).unwrap() as usize;
        key.truncate(shared);
        key.extend_from_slice(&block[pos..pos + non_shared]);
        pos += non_shared;
        out.push((key.clone(), block[pos..pos + value_len].to_vec()));
        pos += value_len;
    }
    out
}

/// A table file's regions, located through its footer and index.
#[derive(Debug)]
pub struct TableLayout {
    pub len: u64,
    pub footer: Footer,
    /// Each data block and the user keys of its entries.
    pub data: Vec<(Handle, Vec<Vec<u8>>)>,
    /// The filter block named in the metaindex, if any.
    pub filter: Option<Handle>,
    /// The whole-table filter block (Shale's own), if any.
    pub whole_filter: Option<Handle>,
}

impl TableLayout {
    pub fn decode(data: &[u8]) -> TableLayout {
        let footer = footer(data);
        let data_blocks = block_entries(&block_contents(data, footer.index))
            .into_iter()
            .map(|(_, v)| {
                let h = Handle::decode(&v, &mut 0).expect("index entry");
                let keys = block_entries(&block_contents(data, h))
                    .into_iter()
                    .map(|(ik, _)| ik[..ik.len() - 8].to_vec())
                    .collect();
                (h, keys)
            })
            .collect();
        let meta = block_entries(&block_contents(data, footer.metaindex));
        let named = |prefix: &[u8]| {
            meta.iter()
                .find(|(k, _)| k.starts_with(prefix))
                .map(|(_, v)| Handle::decode(v, &mut 0).expect("meta block handle"))
        };
        TableLayout {
            len: data.len() as u64,
            footer,
            data: data_blocks,
            filter: named(b"filter."),
            whole_filter: named(b"fullfilter."),
        }
    }

    /// Every user key stored in the table.
    pub fn keys(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.data.iter().flat_map(|(_, k)| k.iter())
    }
}

/// The log format's block size; a fragment never crosses a block boundary.
pub const LOG_BLOCK: usize = 32 * 1024;
/// A fragment header: masked CRC (4), length (2), type (1).
pub const LOG_HEADER: usize = 7;

/// One physical fragment of a log (or MANIFEST) file.
#[derive(Clone, Copy, Debug)]
pub struct Fragment {
    /// File offset of the header.
    pub offset: u64,
    /// Payload length.
    pub len: usize,
    /// 1 full, 2 first, 3 middle, 4 last.
    pub kind: u8,
}

/// The fragments of a log file in order (stops at zero-filled space).
pub fn log_fragments(data: &[u8]) -> Vec<Fragment> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let left_in_block = LOG_BLOCK - pos % LOG_BLOCK;
        if left_in_block < LOG_HEADER {
            pos += left_in_block; // block trailer padding
            continue;
        }
        if pos + LOG_HEADER > data.len() {
            break;
        }
        let len = u16::from_le_bytes([data[pos + 4], data[pos + 5]]) as usize;
        let kind = data[pos + 6];
        if kind == 0 && len == 0 {
            break;
        }
        out.push(Fragment {
            offset: pos as u64,
            len,
            kind,
        });
        pos += LOG_HEADER + len;
    }
    out
}

/// Appends `payload` as one record in the log format to `log` (which must
/// hold only whole records), fragmenting it across 32 KiB blocks.
pub fn append_log_record(log: &mut Vec<u8>, payload: &[u8]) {
    let mut rest = payload;
    let mut first = true;
    loop {
        let left_in_block = LOG_BLOCK - log.len() % LOG_BLOCK;
        if left_in_block < LOG_HEADER {
            log.extend(std::iter::repeat_n(0u8, left_in_block));
            continue;
        }
        let room = left_in_block - LOG_HEADER;
        let n = rest.len().min(room);
        let last = n == rest.len();
        let kind: u8 = match (first, last) {
            (true, true) => 1,
            (true, false) => 2,
            (false, false) => 3,
            (false, true) => 4,
        };
        let crc = masked_crc(&[&[kind], &rest[..n]]);
        log.extend_from_slice(&crc.to_le_bytes());
        log.extend_from_slice(&(n as u16).to_le_bytes());
        log.push(kind);
        log.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        first = false;
        if last {
            return;
        }
    }
}

/// Names of the files in `dir` ending with `suffix` (or starting with it,
/// for `MANIFEST-`), sorted.
pub fn files_named(dir: &Path, pattern: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(pattern) || n.starts_with(pattern))
        .collect();
    names.sort();
    names
}

/// Copies the regular files of directory `from` into `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A temporary directory, in memory-backed `/dev/shm` when there is one
/// (the cases' many fsyncs are then cheap; the file system is still POSIX).
pub fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

/// This process's peak resident set size in bytes (VmHWM).
pub fn peak_rss() -> u64 {
    proc_status_kb("VmHWM:") * 1024
}

/// This process's current virtual size in bytes (VmSize).
pub fn virtual_size() -> u64 {
    proc_status_kb("VmSize:") * 1024
}

fn proc_status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}
