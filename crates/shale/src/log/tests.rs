//! Specifications of the log format: writer and reader together, including
//! every kind of damage the reader must survive.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::env::{read_file, write_file_sync, FileSystem, MemFs, SequentialFile};
use crate::error::{Error, Result};
use crate::util::crc;

/// `partial` repeated to exactly `n` bytes.
fn big_string(partial: &str, n: usize) -> Vec<u8> {
    partial.bytes().cycle().take(n).collect()
}

fn number_string(n: usize) -> Vec<u8> {
    format!("{n}.").into_bytes()
}

/// A string whose length is skewed towards small values (up to 128 KiB).
fn random_skewed_string(i: usize, rng: &mut StdRng) -> Vec<u8> {
    let bits = rng.gen_range(0..=17);
    let len = rng.gen_range(0..(1usize << bits));
    big_string(&format!("{i}."), len)
}

#[derive(Default)]
struct Reports {
    dropped: u64,
    messages: String,
    offsets: Vec<u64>,
}

/// Writes a log into a [`MemFs`], damages it, and reads it back.
struct Harness {
    fs: MemFs,
    path: PathBuf,
    writer: Writer,
    reader: Option<Reader>,
    reports: Arc<Mutex<Reports>>,
}

impl Harness {
    fn new() -> Harness {
        let fs = MemFs::new();
        let path = PathBuf::from("/db/000001.log");
        let writer = Writer::new(fs.new_writable_file(&path).unwrap());
        Harness {
            fs,
            path,
            writer,
            reader: None,
            reports: Arc::default(),
        }
    }

    fn write(&mut self, record: &[u8]) {
        assert!(self.reader.is_none(), "write after starting to read");
        self.writer.add_record(record).unwrap();
    }

    fn written_bytes(&self) -> u64 {
        self.fs.file_size(&self.path).unwrap()
    }

    fn contents(&self) -> Vec<u8> {
        read_file(&self.fs, &self.path).unwrap()
    }

    fn set_contents(&self, data: &[u8]) {
        write_file_sync(&self.fs, &self.path, data).unwrap();
    }

    fn edit(&self, f: impl FnOnce(&mut Vec<u8>)) {
        let mut data = self.contents();
        f(&mut data);
        self.set_contents(&data);
    }

    fn increment_byte(&self, offset: usize, delta: u8) {
        self.edit(|d| d[offset] = d[offset].wrapping_add(delta));
    }

    fn set_byte(&self, offset: usize, value: u8) {
        self.edit(|d| d[offset] = value);
    }

    fn shrink_size(&self, bytes: usize) {
        self.edit(|d| d.truncate(d.len() - bytes));
    }

    /// Recomputes the checksum of the fragment whose header is at `header_offset`.
    fn fix_checksum(&self, header_offset: usize, len: usize) {
        self.edit(|d| {
            let start = header_offset + HEADER_SIZE - 1;
            let c = crc::mask(crc::value(&d[start..start + 1 + len]));
            d[header_offset..header_offset + 4].copy_from_slice(&c.to_le_bytes());
        });
    }

    fn reporter(&self) -> Reporter {
        let reports = self.reports.clone();
        Box::new(move |bytes, err: &Error| {
            let mut r = reports.lock();
            r.dropped += bytes;
            r.messages.push_str(&err.to_string());
            r.messages.push('\n');
            if let Error::Corruption { offset, .. } = err {
                r.offsets.push(offset.expect("drops name their offset"));
            }
        })
    }

    fn open_reader(&self, initial_offset: u64) -> Reader {
        Reader::new(
            self.fs.new_sequential_file(&self.path).unwrap(),
            self.path.clone(),
            Some(self.reporter()),
            true,
            initial_offset,
        )
    }

    /// The next record as a string, or "EOF".
    fn read(&mut self) -> String {
        if self.reader.is_none() {
            self.reader = Some(self.open_reader(0));
        }
        let reader = self.reader.as_mut().unwrap();
        let mut scratch = Vec::new();
        match reader.read_record(&mut scratch).unwrap() {
            Some(r) => String::from_utf8(r.to_vec()).unwrap(),
            None => "EOF".to_string(),
        }
    }

    fn dropped_bytes(&self) -> u64 {
        self.reports.lock().dropped
    }

    fn report_message(&self) -> String {
        self.reports.lock().messages.clone()
    }

    fn match_error(&self, msg: &str) -> bool {
        self.report_message().contains(msg)
    }

    fn reopen_for_append(&mut self) {
        let len = self.written_bytes();
        let file = self.fs.new_appendable_file(&self.path).unwrap();
        self.writer = Writer::with_offset(file, len);
    }
}

fn read_all(fs: &MemFs, path: &Path, checksum: bool, reporter: Option<Reporter>) -> Vec<Vec<u8>> {
    let mut reader = Reader::new(
        fs.new_sequential_file(path).unwrap(),
        path.to_path_buf(),
        reporter,
        checksum,
        0,
    );
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    while let Some(r) = reader.read_record(&mut scratch).unwrap() {
        out.push(r.to_vec());
    }
    out
}

#[test]
fn empty_log_reads_as_end() {
    let mut h = Harness::new();
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.read(), "EOF", "end of log is sticky");
}

#[test]
fn read_back_what_was_written() {
    let mut h = Harness::new();
    for r in ["foo", "bar", "", "xxxx"] {
        h.write(r.as_bytes());
    }
    for r in ["foo", "bar", "", "xxxx", "EOF", "EOF"] {
        assert_eq!(h.read(), r);
    }
}

#[test]
fn empty_record_is_a_bare_header() {
    let mut h = Harness::new();
    h.write(b"");
    assert_eq!(h.written_bytes(), HEADER_SIZE as u64);
    let data = h.contents();
    assert_eq!(data[4..7], [0, 0, record_type::FULL]);
}

#[test]
fn header_layout_is_leveldbs() {
    let mut h = Harness::new();
    h.write(b"hello");
    let data = h.contents();
    let expected_crc = crc::mask(crc::value(b"\x01hello"));
    assert_eq!(data[..4], expected_crc.to_le_bytes());
    assert_eq!(data[4..6], 5u16.to_le_bytes());
    assert_eq!(data[6], record_type::FULL);
    assert_eq!(&data[7..], b"hello");
}

#[test]
#[cfg_attr(miri, ignore)]
fn many_blocks_of_small_records() {
    let mut h = Harness::new();
    for i in 0..100_000 {
        h.write(&number_string(i));
    }
    for i in 0..100_000 {
        assert_eq!(h.read().into_bytes(), number_string(i));
    }
    assert_eq!(h.read(), "EOF");
}

#[test]
fn fragmentation_across_blocks() {
    let mut h = Harness::new();
    h.write(b"small");
    h.write(&big_string("medium", 50_000));
    h.write(&big_string("large", 100_000));
    assert_eq!(h.read(), "small");
    assert_eq!(h.read().into_bytes(), big_string("medium", 50_000));
    assert_eq!(h.read().into_bytes(), big_string("large", 100_000));
    assert_eq!(h.read(), "EOF");
}

#[test]
fn record_exactly_filling_a_block() {
    let mut h = Harness::new();
    let n = BLOCK_SIZE - HEADER_SIZE;
    h.write(&big_string("exact", n));
    assert_eq!(h.written_bytes(), BLOCK_SIZE as u64);
    h.write(b"next");
    assert_eq!(h.written_bytes(), (BLOCK_SIZE + HEADER_SIZE + 4) as u64);
    assert_eq!(h.read().into_bytes(), big_string("exact", n));
    assert_eq!(h.read(), "next");
    assert_eq!(h.read(), "EOF");
}

#[test]
fn record_spanning_three_blocks_has_first_middle_last() {
    let mut h = Harness::new();
    let n = 2 * BLOCK_SIZE + 100;
    h.write(&big_string("span", n));
    let data = h.contents();
    assert_eq!(data[6], record_type::FIRST);
    assert_eq!(data[BLOCK_SIZE + 6], record_type::MIDDLE);
    assert_eq!(data[2 * BLOCK_SIZE + 6], record_type::LAST);
    assert_eq!(
        h.written_bytes(),
        (n + 3 * HEADER_SIZE) as u64,
        "three headers, no padding"
    );
    assert_eq!(h.read().into_bytes(), big_string("span", n));
    assert_eq!(h.read(), "EOF");
}

#[test]
fn marginal_trailer() {
    // Make a trailer that is exactly the same length as an empty record.
    let mut h = Harness::new();
    let n = BLOCK_SIZE - 2 * HEADER_SIZE;
    h.write(&big_string("foo", n));
    assert_eq!(h.written_bytes(), (BLOCK_SIZE - HEADER_SIZE) as u64);
    h.write(b"");
    h.write(b"bar");
    assert_eq!(h.read().into_bytes(), big_string("foo", n));
    assert_eq!(h.read(), "");
    assert_eq!(h.read(), "bar");
    assert_eq!(h.read(), "EOF");
}

#[test]
fn marginal_trailer_then_record() {
    let mut h = Harness::new();
    let n = BLOCK_SIZE - 2 * HEADER_SIZE;
    h.write(&big_string("foo", n));
    assert_eq!(h.written_bytes(), (BLOCK_SIZE - HEADER_SIZE) as u64);
    h.write(b"bar");
    assert_eq!(h.read().into_bytes(), big_string("foo", n));
    assert_eq!(h.read(), "bar");
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 0);
    assert_eq!(h.report_message(), "");
}

#[test]
fn short_trailer() {
    let mut h = Harness::new();
    let n = BLOCK_SIZE - 2 * HEADER_SIZE + 4;
    h.write(&big_string("foo", n));
    assert_eq!(h.written_bytes(), (BLOCK_SIZE - HEADER_SIZE + 4) as u64);
    h.write(b"");
    h.write(b"bar");
    assert_eq!(h.read().into_bytes(), big_string("foo", n));
    assert_eq!(h.read(), "");
    assert_eq!(h.read(), "bar");
    assert_eq!(h.read(), "EOF");
}

#[test]
fn aligned_eof() {
    let mut h = Harness::new();
    let n = BLOCK_SIZE - 2 * HEADER_SIZE + 4;
    h.write(&big_string("foo", n));
    assert_eq!(h.written_bytes(), (BLOCK_SIZE - HEADER_SIZE + 4) as u64);
    assert_eq!(h.read().into_bytes(), big_string("foo", n));
    assert_eq!(h.read(), "EOF");
}

#[test]
fn every_trailer_length_from_zero_to_six_is_padded_with_zeros() {
    for remaining in 0..HEADER_SIZE {
        let mut h = Harness::new();
        let n = BLOCK_SIZE - HEADER_SIZE - remaining;
        h.write(&big_string("pad", n));
        assert_eq!(h.written_bytes(), (BLOCK_SIZE - remaining) as u64);
        h.write(b"after");
        let data = h.contents();
        assert!(
            data[BLOCK_SIZE - remaining..BLOCK_SIZE]
                .iter()
                .all(|&b| b == 0),
            "{remaining}-byte trailer is zero-filled"
        );
        assert_eq!(data[BLOCK_SIZE + 6], record_type::FULL);
        assert_eq!(h.written_bytes(), (BLOCK_SIZE + HEADER_SIZE + 5) as u64);
        assert_eq!(h.writer.file_len(), h.written_bytes());
        assert_eq!(h.read().into_bytes(), big_string("pad", n));
        assert_eq!(h.read(), "after");
        assert_eq!(h.read(), "EOF");
        assert_eq!(h.dropped_bytes(), 0, "remaining {remaining}");
    }
}

#[test]
fn open_for_append_continues_the_block() {
    let mut h = Harness::new();
    h.write(b"hello");
    h.reopen_for_append();
    h.write(b"world");
    assert_eq!(h.read(), "hello");
    assert_eq!(h.read(), "world");
    assert_eq!(h.read(), "EOF");
}

#[test]
fn append_to_log_ending_in_a_short_block_tail() {
    let mut h = Harness::new();
    h.write(&big_string("x", BLOCK_SIZE - HEADER_SIZE - 3));
    h.reopen_for_append();
    assert_eq!(h.writer.file_len(), (BLOCK_SIZE - 3) as u64);
    h.write(b"world");
    assert_eq!(h.written_bytes(), (BLOCK_SIZE + HEADER_SIZE + 5) as u64);
    assert_eq!(h.read().len(), BLOCK_SIZE - HEADER_SIZE - 3);
    assert_eq!(h.read(), "world");
    assert_eq!(h.read(), "EOF");
}

#[test]
#[cfg_attr(miri, ignore)]
fn random_sizes_round_trip() {
    let seed = 301;
    let mut h = Harness::new();
    let mut rng = StdRng::seed_from_u64(seed);
    let n = 500;
    for i in 0..n {
        h.write(&random_skewed_string(i, &mut rng));
    }
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..n {
        let expected = random_skewed_string(i, &mut rng);
        assert_eq!(h.read().into_bytes(), expected, "record {i}, seed {seed}");
    }
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.writer.file_len(), h.written_bytes());
}

struct FailingFile;

impl SequentialFile for FailingFile {
    fn read(&mut self, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::io(
            "/db/000001.log",
            std::io::Error::other("read error"),
        ))
    }
    fn skip(&mut self, _n: u64) -> Result<()> {
        Err(Error::io(
            "/db/000001.log",
            std::io::Error::other("skip error"),
        ))
    }
}

#[test]
fn read_error_is_returned_then_log_ends() {
    let mut reader = Reader::new(
        Box::new(FailingFile),
        PathBuf::from("/db/000001.log"),
        None,
        true,
        0,
    );
    let mut scratch = Vec::new();
    let err = reader.read_record(&mut scratch).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(reader.read_record(&mut scratch).unwrap().is_none());

    let mut reader = Reader::new(
        Box::new(FailingFile),
        PathBuf::from("/db/000001.log"),
        None,
        true,
        BLOCK_SIZE as u64 * 2,
    );
    assert!(reader.read_record(&mut scratch).is_err(), "skip error");
    assert!(reader.read_record(&mut scratch).unwrap().is_none());
}

#[test]
fn bad_record_type_is_reported() {
    let mut h = Harness::new();
    h.write(b"foo");
    // Type is stored in header[6].
    h.increment_byte(6, 100);
    h.fix_checksum(0, 3);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 3);
    assert!(
        h.match_error("unknown record type 101"),
        "{}",
        h.report_message()
    );
}

#[test]
fn truncated_trailing_record_is_ignored() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.shrink_size(4); // Drop all payload as well as a header byte.
    assert_eq!(h.read(), "EOF");
    // Truncated last record is ignored, not treated as an error.
    assert_eq!(h.dropped_bytes(), 0);
    assert_eq!(h.report_message(), "");
}

#[test]
fn bad_length_drops_the_block() {
    let mut h = Harness::new();
    let payload_size = BLOCK_SIZE - HEADER_SIZE;
    h.write(&big_string("bar", payload_size));
    h.write(b"foo");
    // Least significant size byte is stored in header[4].
    h.increment_byte(4, 1);
    assert_eq!(h.read(), "foo");
    assert_eq!(h.dropped_bytes(), BLOCK_SIZE as u64);
    assert!(h.match_error("bad record length"), "{}", h.report_message());
    assert!(
        h.match_error("at offset 0"),
        "physical offset in message: {}",
        h.report_message()
    );
}

#[test]
fn bad_length_at_end_is_ignored() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.shrink_size(1);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 0);
    assert_eq!(h.report_message(), "");
}

#[test]
fn checksum_mismatch_is_reported() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.increment_byte(0, 10);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 10);
    assert!(h.match_error("checksum mismatch"), "{}", h.report_message());
}

#[test]
fn checksum_mismatch_is_not_detected_when_checks_are_off() {
    let h = {
        let mut h = Harness::new();
        h.write(b"foo");
        h
    };
    h.increment_byte(0, 10);
    let records = read_all(&h.fs, &h.path, false, None);
    assert_eq!(records, vec![b"foo".to_vec()]);
}

#[test]
fn unexpected_middle_type() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.set_byte(6, record_type::MIDDLE);
    h.fix_checksum(0, 3);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 3);
    assert!(h.match_error("missing start"), "{}", h.report_message());
}

#[test]
fn unexpected_last_type() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.set_byte(6, record_type::LAST);
    h.fix_checksum(0, 3);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 3);
    assert!(h.match_error("missing start"), "{}", h.report_message());
}

#[test]
fn unexpected_full_type() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.write(b"bar");
    h.set_byte(6, record_type::FIRST);
    h.fix_checksum(0, 3);
    assert_eq!(h.read(), "bar");
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 3);
    assert!(
        h.match_error("partial record without end"),
        "{}",
        h.report_message()
    );
}

#[test]
fn unexpected_first_type() {
    let mut h = Harness::new();
    h.write(b"foo");
    h.write(&big_string("bar", 100_000));
    h.set_byte(6, record_type::FIRST);
    h.fix_checksum(0, 3);
    assert_eq!(h.read().into_bytes(), big_string("bar", 100_000));
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.dropped_bytes(), 3);
    assert!(
        h.match_error("partial record without end"),
        "{}",
        h.report_message()
    );
}

#[test]
fn missing_last_is_ignored() {
    let mut h = Harness::new();
    h.write(&big_string("bar", BLOCK_SIZE));
    // Remove the LAST fragment, including its header.
    h.shrink_size(14);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.report_message(), "");
    assert_eq!(h.dropped_bytes(), 0);
}

#[test]
fn partial_last_is_ignored() {
    let mut h = Harness::new();
    h.write(&big_string("bar", BLOCK_SIZE));
    // Cause a bad record length in the LAST block.
    h.shrink_size(1);
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.report_message(), "");
    assert_eq!(h.dropped_bytes(), 0);
}

#[test]
fn skip_into_multi_record() {
    // Consider a fragmented record: first(R1), middle(R1), last(R1), first(R2).
    // If the initial offset points into the middle of R1, the reader must skip
    // R1's remaining fragments without reporting them.
    let mut h = Harness::new();
    h.write(&big_string("foo", 3 * BLOCK_SIZE));
    h.write(b"correct");
    let mut reader = h.open_reader(BLOCK_SIZE as u64);
    let mut scratch = Vec::new();
    assert_eq!(
        reader.read_record(&mut scratch).unwrap(),
        Some(&b"correct"[..])
    );
    assert_eq!(h.report_message(), "");
    assert_eq!(h.dropped_bytes(), 0);
    assert!(reader.read_record(&mut scratch).unwrap().is_none());
}

#[test]
fn error_joins_records() {
    // Consider two fragmented records: first(R1) last(R1) first(R2) last(R2)
    // where the middle two fragments disappear. The reader must not glue
    // first(R1) and last(R2) into one record.
    let mut h = Harness::new();
    h.write(&big_string("foo", BLOCK_SIZE));
    h.write(&big_string("bar", BLOCK_SIZE));
    h.write(b"correct");
    // Wipe the middle block.
    h.edit(|d| d[BLOCK_SIZE..2 * BLOCK_SIZE].fill(b'x'));
    assert_eq!(h.read(), "correct");
    assert_eq!(h.read(), "EOF");
    let dropped = h.dropped_bytes();
    assert!(dropped <= 2 * BLOCK_SIZE as u64 + 100, "{dropped}");
    assert!(dropped >= 2 * BLOCK_SIZE as u64, "{dropped}");
}

#[test]
fn corrupted_byte_drops_only_its_blocks_records() {
    let mut h = Harness::new();
    // Block 0: ten records of 1000 bytes; block 1 onwards: more records.
    let records: Vec<Vec<u8>> = (0..80)
        .map(|i| big_string(&format!("r{i}-"), 1000))
        .collect();
    for r in &records {
        h.write(r);
    }
    // Records 0..=31 start in block 0 (each takes 1007 bytes); damage record 3.
    let per_record = 1000 + HEADER_SIZE;
    let damaged_at = 3 * per_record + HEADER_SIZE + 10;
    h.increment_byte(damaged_at, 1);
    let mut got = Vec::new();
    loop {
        let r = h.read();
        if r == "EOF" {
            break;
        }
        got.push(r.into_bytes());
    }
    // Records 0..3 survive; the rest of block 0 is dropped, from the damaged
    // record to the block end (record 32 spans blocks 0 and 1 and is dropped too,
    // as its LAST fragment lost its start).
    let first_in_block_1 = BLOCK_SIZE.div_ceil(per_record);
    let mut expected: Vec<Vec<u8>> = records[..3].to_vec();
    expected.extend_from_slice(&records[first_in_block_1..]);
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);
    let r = h.reports.lock();
    assert!(r.messages.contains("checksum mismatch"), "{}", r.messages);
    assert_eq!(
        r.offsets[0],
        (3 * per_record) as u64,
        "offset of the bad fragment"
    );
    assert!(r.dropped >= (BLOCK_SIZE - 3 * per_record) as u64);
}

#[test]
fn zero_type_regions_are_skipped_silently() {
    let mut h = Harness::new();
    h.write(b"first");
    let mut data = h.contents();
    // A preallocated, never written region fills the rest of block 0.
    data.resize(BLOCK_SIZE, 0);
    h.set_contents(&data);
    h.reopen_for_append();
    h.write(b"second");
    assert_eq!(h.read(), "first");
    assert_eq!(h.read(), "second");
    assert_eq!(h.read(), "EOF");
    assert_eq!(h.report_message(), "");
}

// Initial offsets, with LevelDB's layout of six records.
const INITIAL_OFFSET_RECORD_SIZES: [usize; 6] = [
    10000, // Two sizable records in the first block.
    10000,
    2 * BLOCK_SIZE - 1000, // Spans three blocks.
    1,
    13716,                    // Consumes all but two bytes of block 3.
    BLOCK_SIZE - HEADER_SIZE, // Consumes all of block 4.
];

const INITIAL_OFFSET_LAST_RECORD_OFFSETS: [u64; 6] = [
    0,
    (HEADER_SIZE + 10000) as u64,
    (2 * (HEADER_SIZE + 10000)) as u64,
    (2 * (HEADER_SIZE + 10000) + (2 * BLOCK_SIZE - 1000) + 3 * HEADER_SIZE) as u64,
    (2 * (HEADER_SIZE + 10000) + (2 * BLOCK_SIZE - 1000) + 3 * HEADER_SIZE + HEADER_SIZE + 1)
        as u64,
    3 * BLOCK_SIZE as u64,
];

fn write_initial_offset_log(h: &mut Harness) {
    for (i, &size) in INITIAL_OFFSET_RECORD_SIZES.iter().enumerate() {
        h.write(&vec![b'a' + i as u8; size]);
    }
}

fn check_initial_offset_record(initial_offset: u64, mut expected_index: usize) {
    let mut h = Harness::new();
    write_initial_offset_log(&mut h);
    let mut reader = h.open_reader(initial_offset);
    let mut scratch = Vec::new();
    while expected_index < INITIAL_OFFSET_RECORD_SIZES.len() {
        let record = reader
            .read_record(&mut scratch)
            .unwrap()
            .unwrap_or_else(|| panic!("record {expected_index} from offset {initial_offset}"));
        assert_eq!(record.len(), INITIAL_OFFSET_RECORD_SIZES[expected_index]);
        assert_eq!(record[0], b'a' + expected_index as u8);
        assert_eq!(
            reader.last_record_offset(),
            INITIAL_OFFSET_LAST_RECORD_OFFSETS[expected_index]
        );
        expected_index += 1;
    }
    assert!(reader.read_record(&mut scratch).unwrap().is_none());
    assert_eq!(h.dropped_bytes(), 0, "{}", h.report_message());
}

fn check_offset_past_end_returns_no_records(offset_past_end: u64) {
    let mut h = Harness::new();
    write_initial_offset_log(&mut h);
    let mut reader = h.open_reader(h.written_bytes() + offset_past_end);
    let mut scratch = Vec::new();
    assert!(reader.read_record(&mut scratch).unwrap().is_none());
}

#[test]
fn initial_offset_read_start() {
    check_initial_offset_record(0, 0);
}

#[test]
fn initial_offset_read_second_one_off() {
    check_initial_offset_record(1, 1);
}

#[test]
fn initial_offset_read_second_ten_thousand() {
    check_initial_offset_record(10000, 1);
}

#[test]
fn initial_offset_read_second_start() {
    check_initial_offset_record(10007, 1);
}

#[test]
fn initial_offset_read_third_one_off() {
    check_initial_offset_record(10008, 2);
}

#[test]
fn initial_offset_read_third_start() {
    check_initial_offset_record(20014, 2);
}

#[test]
fn initial_offset_read_fourth_one_off() {
    check_initial_offset_record(20015, 3);
}

#[test]
fn initial_offset_read_fourth_first_block_trailer() {
    check_initial_offset_record(BLOCK_SIZE as u64 - 4, 3);
}

#[test]
fn initial_offset_read_fourth_middle_block() {
    check_initial_offset_record(BLOCK_SIZE as u64 + 1, 3);
}

#[test]
fn initial_offset_read_fourth_last_block() {
    check_initial_offset_record(2 * BLOCK_SIZE as u64 + 1, 3);
}

#[test]
fn initial_offset_read_fourth_start() {
    check_initial_offset_record(
        (2 * (HEADER_SIZE + 1000) + (2 * BLOCK_SIZE - 1000) + 3 * HEADER_SIZE) as u64,
        3,
    );
}

#[test]
fn initial_offset_into_block_padding() {
    check_initial_offset_record(3 * BLOCK_SIZE as u64 - 3, 5);
}

#[test]
fn initial_offset_at_end() {
    check_offset_past_end_returns_no_records(0);
}

#[test]
fn initial_offset_past_end() {
    check_offset_past_end_returns_no_records(5);
}

#[test]
fn initial_offset_far_past_end_does_not_overflow() {
    let mut h = Harness::new();
    write_initial_offset_log(&mut h);
    let mut reader = h.open_reader(u64::MAX);
    let mut scratch = Vec::new();
    assert!(reader.read_record(&mut scratch).unwrap().is_none());
}

#[test]
#[cfg_attr(miri, ignore)]
fn every_truncation_yields_a_prefix_of_the_records() {
    let mut h = Harness::new();
    let records: Vec<Vec<u8>> = vec![
        b"a".to_vec(),
        Vec::new(),
        big_string("two", 200),
        big_string("spans", BLOCK_SIZE + 50),
        b"tail".to_vec(),
    ];
    for r in &records {
        h.write(r);
    }
    let full = h.contents();
    let fs = MemFs::new();
    let path = PathBuf::from("/db/000009.log");
    for len in 0..=full.len() {
        write_file_sync(&fs, &path, &full[..len]).unwrap();
        let reports = Arc::new(Mutex::new(0u64));
        let r2 = reports.clone();
        let got = read_all(
            &fs,
            &path,
            true,
            Some(Box::new(move |bytes, _| *r2.lock() += bytes)),
        );
        assert!(got.len() <= records.len(), "len {len}");
        assert_eq!(got[..], records[..got.len()], "truncated at {len}");
        assert_eq!(*reports.lock(), 0, "a torn write is not damage (len {len})");
        if len == full.len() {
            assert_eq!(got, records);
        }
    }
}

/// Reads everything from `data` and checks that nothing returned is larger
/// than the input.
fn read_arbitrary(data: &[u8], checksum: bool, initial_offset: u64) -> usize {
    let fs = MemFs::new();
    let path = PathBuf::from("/fuzz.log");
    write_file_sync(&fs, &path, data).unwrap();
    let mut reader = Reader::new(
        fs.new_sequential_file(&path).unwrap(),
        path,
        Some(Box::new(|_, _| {})),
        checksum,
        initial_offset,
    );
    let mut scratch = Vec::new();
    let mut total = 0;
    while let Some(r) = reader.read_record(&mut scratch).unwrap() {
        assert!(r.len() <= data.len());
        total += r.len();
    }
    assert!(scratch.capacity() <= data.len().max(BLOCK_SIZE) * 2);
    total
}

#[test]
#[cfg_attr(miri, ignore)]
fn random_bytes_never_panic() {
    let seed = 0x5eed_1065;
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..3000 {
        let len = match i % 3 {
            0 => rng.gen_range(0..64),
            1 => rng.gen_range(0..2 * BLOCK_SIZE),
            _ => rng.gen_range(0..300),
        };
        let mut data = vec![0u8; len];
        rng.fill(&mut data[..]);
        // Plausible headers make the parser go deeper: small lengths, valid types.
        let mut pos = 0;
        while i % 2 == 0 && pos + HEADER_SIZE <= data.len() {
            let l: u16 = rng.gen_range(0..200);
            data[pos + 4..pos + 6].copy_from_slice(&l.to_le_bytes());
            data[pos + 6] = rng.gen_range(0..6);
            pos += HEADER_SIZE + l as usize;
        }
        let checksum = rng.gen_bool(0.5);
        let initial = if rng.gen_bool(0.8) {
            0
        } else {
            rng.gen_range(0..=len as u64 + 10)
        };
        let total = read_arbitrary(&data, checksum, initial);
        assert!(total <= data.len(), "iteration {i}, seed {seed:#x}");
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn damaged_real_logs_never_panic() {
    let seed = 0x0da4_a6ed;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut h = Harness::new();
    for i in 0..60 {
        h.write(&random_skewed_string(i, &mut rng));
    }
    let full = h.contents();
    for _ in 0..2000 {
        let mut data = full.clone();
        for _ in 0..rng.gen_range(1..8) {
            let at = rng.gen_range(0..data.len());
            data[at] = rng.gen();
        }
        if rng.gen_bool(0.3) {
            data.truncate(rng.gen_range(0..data.len()));
        }
        let checksum = rng.gen_bool(0.5);
        read_arbitrary(&data, checksum, 0);
    }
}

#[test]
fn writer_refuses_records_after_a_failed_write() {
    struct Broken;
    impl crate::env::WritableFile for Broken {
        fn append(&mut self, _data: &[u8]) -> Result<()> {
            Err(Error::io("/x.log", std::io::Error::other("disk full")))
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn close(&mut self) -> Result<()> {
            Ok(())
        }
    }
    let mut w = Writer::new(Box::new(Broken));
    assert!(w.add_record(b"x").is_err());
    assert!(w.add_record(b"y").is_err());
    assert!(w.sync().is_err());
}

#[test]
fn position_after_a_record_is_its_end() {
    let mut h = Harness::new();
    write_initial_offset_log(&mut h);
    let mut reader = h.open_reader(0);
    let mut scratch = Vec::new();
    let mut ends = Vec::new();
    while reader.read_record(&mut scratch).unwrap().is_some() {
        ends.push(reader.position());
    }
    // Each record ends where the next begins, except the one followed by a
    // block's 2-byte trailer; the last ends at the end of the file.
    let mut expected: Vec<u64> = INITIAL_OFFSET_LAST_RECORD_OFFSETS[1..].to_vec();
    expected[4] -= 2;
    expected.push(h.written_bytes());
    assert_eq!(ends, expected);
}
