//! Where a flush cuts its output into several tables (`Options::split_flushes`).
//!
//! Writers that each append keys in order to their own part of the key space
//! (several sequential streams: one per thread, tenant or table prefix) fill
//! a memtable with a few long runs separated by wide jumps in key. Flushed as
//! one table, the memtable covers the gaps between the runs, so every later
//! flush overlaps it and every compaction below merges all the streams
//! again, though no two of them share a key. Cut at the jumps, each table
//! holds one run; a run that continues a stream lands in the gap its stream
//! left, overlaps nothing, and goes down the levels without being merged,
//! as one stream's tables do.
//!
//! A jump is found without knowing the keys' format. With the bytewise order,
//! the bytes after the prefix that every key of the memtable shares are read
//! as a number in the radix of how many byte values those bytes take, each
//! byte replaced by its rank among them (so that keys of decimal digits
//! count in tens, not in 256s, and a carry is a step of one), and a step
//! between
//! two consecutive user keys of more than [`JUMP_FACTOR`] times the median
//! step is a jump. Random keys have no such steps (their steps are all of a
//! size), one stream has none, and a cut never falls between two entries of
//! one user key.
//!
//! A run between two jumps is a table of its own however short it is: joined
//! to a neighbour, it would make a table that spans the gap between two
//! streams, and every later table of either stream would overlap it. So a
//! stream that writes only a few keys between two flushes gets a small table
//! each time, and those stay small as they move down the levels.
//!
//! Invariants of a plan: pieces are in key order, disjoint, cover the
//! memtable, and each but the first starts at a user key of the memtable;
//! at most [`MAX_PIECES`] (the largest jumps are cut first); at most one
//! goes to level 0 (two level-0 tables where one would do only add to level
//! 0's file count, and they are merged there anyway); none goes below the
//! level of a compaction running meanwhile whose range it overlaps
//! ([`Running`]).

use std::cmp::Ordering;
use std::sync::Arc;

use crate::comparator::Comparator;
use crate::iter::InternalIterator;
use crate::keys::extract_user_key;
use crate::memtable::MemTable;
use crate::version::version::Version;

/// A step this many times the median step between consecutive keys is a
/// jump. For random keys the largest of n steps is about log2(n) times the
/// median (their gaps are about exponentially distributed): 17 for a
/// memtable of 100,000 keys, far from this.
pub const JUMP_FACTOR: u64 = 1 << 10;

/// At most this many tables from one flush.
pub const MAX_PIECES: usize = 16;

/// One table of a flush: the user keys from `start` (inclusive; `None`: the
/// memtable's first) to `end` (exclusive; `None`: to its last), written to
/// `level`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub start: Option<Vec<u8>>,
    pub end: Option<Vec<u8>>,
    pub level: usize,
}

/// The compaction running while a flush is made (a flush can run in the
/// middle of one): its level and the user-key range of all its inputs.
///
/// Its outputs, installed after the flush, may cover gaps between its
/// inputs (a manual compaction takes every file of a range, gaps and all),
/// so a flushed table that overlaps the range and went below the
/// compaction's level could end up under older data. Such a table goes no
/// deeper than the compaction's level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub level: usize,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

/// The level for a table of user keys `smallest..=largest` (in the order
/// of `ucmp`) flushed over `base` while `running` runs.
pub fn output_level(
    base: &Version,
    ucmp: &dyn Comparator,
    smallest: &[u8],
    largest: &[u8],
    max_file_size: u64,
    running: Option<&Running>,
) -> usize {
    let level = base.pick_level_for_memtable_output(smallest, largest, max_file_size);
    match running {
        Some(r)
            if ucmp.compare(smallest, &r.largest) != Ordering::Greater
                && ucmp.compare(&r.smallest, largest) != Ordering::Greater =>
        {
            level.min(r.level)
        }
        _ => level,
    }
}

/// Keys read as numbers (see the module's comment): the digits are the
/// bytes at positions `prefix..prefix + positions`, each replaced by its rank
/// among the byte values seen at any of those positions, in the radix of
/// how many there are. A key that has ended before a position has the digit
/// 0 there (and the bytes then rank from 1).
struct Digits {
    prefix: usize,
    positions: usize,
    /// The digit of each byte value.
    rank: [u16; 256],
    radix: u128,
}

impl Digits {
    /// The digits of the user keys of `mem` (sharing `prefix` bytes): as
    /// many positions as keep every number under 2^120.
    fn new(mem: &Arc<MemTable>, prefix: usize) -> Digits {
        const MAX_POSITIONS: usize = 24;
        let mut seen = [false; 256];
        let mut shortest = MAX_POSITIONS;
        let mut longest = 0;
        let mut it = mem.iter();
        it.seek_to_first();
        while it.valid() {
            let rest = extract_user_key(it.key()).get(prefix..).unwrap_or(&[]);
            let rest = &rest[..rest.len().min(MAX_POSITIONS)];
            for &b in rest {
                seen[b as usize] = true;
            }
            shortest = shortest.min(rest.len());
            longest = longest.max(rest.len());
            it.next();
        }
        // Keys of one length (within the positions read) need no digit for
        // "ended": it would make every carry a step of more than one.
        let ended = shortest < longest;
        let mut rank = [0u16; 256];
        let mut n = u16::from(ended);
        for (b, &present) in seen.iter().enumerate() {
            if present {
                rank[b] = n;
                n += 1;
            }
        }
        let radix = u128::from(n.max(1));
        let mut positions = 0;
        let mut room: u128 = 1 << 120;
        while positions < longest && radix <= room {
            room /= radix;
            positions += 1;
        }
        Digits {
            prefix,
            positions,
            rank,
            radix,
        }
    }

    /// `key` (a key of the memtable) as a number: monotone in the bytewise
    /// order of the memtable's keys.
    fn value(&self, key: &[u8]) -> u128 {
        let rest = key.get(self.prefix..).unwrap_or(&[]);
        let mut v: u128 = 0;
        for j in 0..self.positions {
            let d = rest
                .get(j)
                .map_or(0, |&b| u128::from(self.rank[b as usize]));
            v = v * self.radix + d;
        }
        v
    }
}

/// The length of the prefix `a` and `b` share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The pieces a flush of `mem` writes, given the version `base` it is
/// installed over and the compaction `running` meanwhile (for each piece's
/// level; see [`output_level`]). An empty plan for an empty memtable. With
/// `split` false, or an order other than the bytewise one, one piece: no
/// jump is looked for.
pub fn plan(
    mem: &Arc<MemTable>,
    base: &Version,
    ucmp: &dyn Comparator,
    max_file_size: u64,
    split: bool,
    running: Option<&Running>,
) -> Vec<Piece> {
    let mut it = mem.iter();
    it.seek_to_last();
    if !it.valid() {
        return Vec::new();
    }
    let last = extract_user_key(it.key()).to_vec();
    it.seek_to_first();
    if !it.valid() {
        return Vec::new();
    }
    let first = extract_user_key(it.key()).to_vec();
    let level_of = |smallest: &[u8], largest: &[u8]| {
        output_level(base, ucmp, smallest, largest, max_file_size, running)
    };
    let whole = || {
        vec![Piece {
            start: None,
            end: None,
            level: level_of(&first, &last),
        }]
    };
    if !split || !ucmp.is_bytewise() {
        return whole();
    }

    // A pass for the digits, then one for the step before each user key
    // after the first.
    let prefix = common_prefix(&first, &last);
    let digits = Digits::new(mem, prefix);
    // As `f32` (numbers under 2^120 fit, to 24 bits): 4 bytes a key.
    let mut steps: Vec<f32> = Vec::new();
    let mut prev_window = digits.value(&first);
    let mut prev_key = first.clone();
    while it.valid() {
        let ikey = it.key();
        let user = extract_user_key(ikey);
        if user != prev_key.as_slice() {
            let w = digits.value(user);
            steps.push(w.saturating_sub(prev_window) as f32);
            prev_window = w;
            prev_key.clear();
            prev_key.extend_from_slice(user);
        }
        it.next();
    }
    // The median of the steps that are not 0 (keys that differ only past
    // the digits read): a memtable of many keys per prefix (rows of several
    // fields, say) has mostly steps of 0, and its jumps are measured
    // against the steps between prefixes.
    let mut sorted: Vec<f32> = steps.iter().copied().filter(|&x| x > 0.0).collect();
    if sorted.is_empty() {
        return whole();
    }
    let mid = sorted.len() / 2;
    let median = *sorted.select_nth_unstable_by(mid, f32::total_cmp).1;
    let threshold = median.max(1.0) * JUMP_FACTOR as f32;
    drop(sorted);
    // The largest jumps, then in key order.
    let mut jumps: Vec<usize> = (0..steps.len())
        .filter(|&i| steps[i] >= threshold)
        .collect();
    if jumps.is_empty() {
        return whole();
    }
    jumps.sort_unstable_by(|&a, &b| steps[b].total_cmp(&steps[a]).then(a.cmp(&b)));
    jumps.truncate(MAX_PIECES - 1);
    jumps.sort_unstable();
    let cuts = jumps;

    // A second pass for the keys on either side of each cut.
    let mut bounds: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(cuts.len());
    let mut next_cut = cuts.iter().copied().peekable();
    let mut index = 0usize;
    it.seek_to_first();
    let mut prev_key = first.clone();
    while let (true, Some(&want)) = (it.valid(), next_cut.peek()) {
        let user = extract_user_key(it.key());
        if user != prev_key.as_slice() {
            if index == want {
                bounds.push((prev_key.clone(), user.to_vec()));
                next_cut.next();
            }
            index += 1;
            prev_key.clear();
            prev_key.extend_from_slice(user);
        }
        it.next();
    }
    if bounds.len() != cuts.len() {
        // The memtable is immutable; a shorter second pass means an inner
        // error. One table, as without the option.
        return whole();
    }

    // Pieces with their levels.
    let mut pieces: Vec<Piece> = Vec::with_capacity(bounds.len() + 1);
    let mut start: Option<Vec<u8>> = None;
    let mut smallest = first.clone();
    for (before, after) in &bounds {
        pieces.push(Piece {
            start: start.take(),
            end: Some(after.clone()),
            level: level_of(&smallest, before),
        });
        start = Some(after.clone());
        smallest = after.clone();
    }
    pieces.push(Piece {
        start,
        end: None,
        level: level_of(&smallest, &last),
    });
    // At most one level-0 table: the pieces from the first that goes to
    // level 0 to the last become one (a level-0 table of its own would only
    // add to level 0's file count, and they are merged there anyway).
    if let (Some(a), Some(b)) = (
        pieces.iter().position(|p| p.level == 0),
        pieces.iter().rposition(|p| p.level == 0),
    ) {
        if a < b {
            let end = pieces[b].end.take();
            pieces[a].end = end;
            pieces.drain(a + 1..=b);
        }
    }
    if pieces.len() == 1 {
        return whole();
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::keys::{InternalKeyComparator, ValueType};

    fn memtable(keys: impl IntoIterator<Item = Vec<u8>>, value_len: usize) -> Arc<MemTable> {
        let mem = Arc::new(MemTable::new(InternalKeyComparator::new(Arc::new(
            BytewiseComparator,
        ))));
        let value = vec![b'v'; value_len];
        for (seq, k) in keys.into_iter().enumerate() {
            mem.add(seq as u64 + 1, ValueType::Value, &k, &value);
        }
        mem
    }

    /// Bytewise in fact, but not known to be.
    struct Opaque;
    impl Comparator for Opaque {
        fn name(&self) -> &str {
            "test.Opaque"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
            a.cmp(b)
        }
    }

    /// The plan of a flush of `mem` over an empty version, split on.
    fn split(mem: &Arc<MemTable>) -> Vec<Piece> {
        plan(
            mem,
            &empty_version(),
            &BytewiseComparator,
            2 << 20,
            true,
            None,
        )
    }

    fn empty_version() -> Version {
        Version::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)))
    }

    /// `streams` writers, each appending keys `n` of its own range in turn.
    fn interleaved(streams: u64, per_stream: u64) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        for i in 0..per_stream {
            for s in 0..streams {
                keys.push(format!("{:010}", s * 1_000_000_000 / streams + i).into_bytes());
            }
        }
        keys
    }

    fn starts(pieces: &[Piece]) -> Vec<Option<String>> {
        pieces
            .iter()
            .map(|p| {
                p.start
                    .as_ref()
                    .map(|k| String::from_utf8_lossy(k).into_owned())
            })
            .collect()
    }

    #[test]
    fn four_interleaved_streams_give_one_table_each() {
        let mem = memtable(interleaved(4, 2000), 16);
        let pieces = split(&mem);
        assert_eq!(
            starts(&pieces),
            vec![
                None,
                Some("0250000000".to_string()),
                Some("0500000000".to_string()),
                Some("0750000000".to_string()),
            ]
        );
        // Each piece ends where the next starts.
        for w in pieces.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert_eq!(pieces.last().unwrap().end, None);
    }

    #[test]
    fn one_stream_and_random_keys_stay_one_table() {
        let seq = memtable((0..8000u64).map(|i| format!("{i:010}").into_bytes()), 16);
        assert_eq!(split(&seq).len(), 1);

        let mut x = 88172645463325252u64;
        let random = memtable(
            (0..8000).map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{:016}", x % 10_000_000_000_000_000).into_bytes()
            }),
            16,
        );
        assert_eq!(split(&random).len(), 1);
    }

    #[test]
    fn another_order_is_never_cut() {
        let mem = memtable(interleaved(4, 2000), 16);
        assert_eq!(
            plan(&mem, &empty_version(), &Opaque, 2 << 20, true, None).len(),
            1
        );
    }

    #[test]
    fn a_short_run_between_two_jumps_is_a_table_of_its_own() {
        // Two streams, and 3 keys of a third between them: joined to either
        // neighbour they would span a gap between two streams.
        let mut keys = interleaved(2, 2000);
        keys.extend((0..3u64).map(|i| format!("{:010}", 250_000_000 + i).into_bytes()));
        let mem = memtable(keys, 16);
        let pieces = split(&mem);
        assert_eq!(
            starts(&pieces),
            vec![
                None,
                Some("0250000000".to_string()),
                Some("0500000000".to_string())
            ]
        );
    }

    #[test]
    fn at_most_max_pieces_tables_cut_at_the_largest_jumps() {
        // 40 streams, the gaps between the first 16 a hundred times wider.
        let mut keys = Vec::new();
        for i in 0..200u64 {
            for s in 0..40u64 {
                let base = if s < 16 {
                    s * 100_000_000
                } else {
                    1_550_000_000 + s * 1_000_000
                };
                keys.push(format!("{:010}", base + i).into_bytes());
            }
        }
        let pieces = split(&memtable(keys, 16));
        assert_eq!(pieces.len(), MAX_PIECES);
        let expected: Vec<Option<String>> = std::iter::once(None)
            .chain((1..16u64).map(|s| Some(format!("{:010}", s * 100_000_000))))
            .collect();
        assert_eq!(starts(&pieces), expected);
    }

    #[test]
    fn many_versions_of_a_key_stay_in_one_piece() {
        // Each key written several times: the cut falls between user keys.
        let mut keys = Vec::new();
        for _ in 0..3 {
            keys.extend(interleaved(2, 1000));
        }
        let mem = memtable(keys, 16);
        let pieces = split(&mem);
        assert_eq!(starts(&pieces), vec![None, Some("0500000000".to_string())]);
    }

    #[test]
    fn an_empty_memtable_has_no_pieces() {
        let mem = memtable(Vec::new(), 16);
        assert!(split(&mem).is_empty());
    }

    /// A version with `files` (level, smallest, largest user key) of 1 MB.
    fn version_with(files: &[(usize, &str, &str)]) -> Version {
        let mut v = empty_version();
        for (n, &(level, a, b)) in files.iter().enumerate() {
            let f = crate::version::edit::FileMetaData::new(
                n as u64 + 10,
                1 << 20,
                crate::keys::InternalKey::new(a.as_bytes(), 100, ValueType::Value),
                crate::keys::InternalKey::new(b.as_bytes(), 100, ValueType::Value),
            );
            v.files[level].push(Arc::new(f));
        }
        v
    }

    #[test]
    fn a_table_in_a_gap_between_a_running_compactions_inputs_stays_above_it() {
        // A manual compaction of level 1 takes [a..c] and [m..z], whose
        // output may span [d..e]: a flush of keys in [d..e] goes no deeper
        // than level 1 while it runs, and to level 2 otherwise.
        let v = version_with(&[(1, "a", "c"), (1, "m", "z")]);
        let mem = memtable(vec![b"d1".to_vec(), b"d2".to_vec(), b"e".to_vec()], 16);
        let running = Running {
            level: 1,
            smallest: b"a".to_vec(),
            largest: b"z".to_vec(),
        };
        let level =
            |split, running| plan(&mem, &v, &BytewiseComparator, 2 << 20, split, running)[0].level;
        assert_eq!(level(false, None), 2);
        assert_eq!(level(true, None), 2);
        assert_eq!(level(false, Some(&running)), 1);
        assert_eq!(level(true, Some(&running)), 1);
        // A compaction elsewhere changes nothing.
        let elsewhere = Running {
            level: 1,
            smallest: b"x".to_vec(),
            largest: b"z".to_vec(),
        };
        assert_eq!(level(false, Some(&elsewhere)), 2);
    }

    #[test]
    fn at_most_one_piece_goes_to_level_zero() {
        // Four streams; level 0 holds tables over the first and the third,
        // so their pieces go to level 0: they and the piece between them
        // become one level-0 table.
        let v = version_with(&[
            (0, "0000000000", "0000000010"),
            (0, "0500000000", "0500000010"),
        ]);
        let mem = memtable(interleaved(4, 2000), 16);
        let pieces = plan(&mem, &v, &BytewiseComparator, 2 << 20, true, None);
        let levels: Vec<usize> = pieces.iter().map(|p| p.level).collect();
        assert_eq!(levels, vec![0, 2]);
        assert_eq!(starts(&pieces), vec![None, Some("0750000000".to_string())]);
    }

    #[test]
    fn keys_that_differ_past_the_digits_read_are_not_jumps() {
        // Rows of four fields under random 32-byte ids: most steps are 0
        // (the fields differ past the 24 digits read), the others random.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut keys = Vec::new();
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = format!("{:016x}{:016x}", x, x.rotate_left(17));
            for f in ["a", "b", "c", "d"] {
                keys.push(format!("{id}/{f}").into_bytes());
            }
        }
        let mem = memtable(keys, 16);
        assert_eq!(split(&mem).len(), 1);
    }
}
