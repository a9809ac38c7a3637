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
//! at most [`MAX_PIECES`] (the largest jumps are cut first); adjacent pieces
//! that would both go to level 0 are one piece (two level-0 tables where one
//! would do only add to level 0's file count, and they are merged there
//! anyway).

use std::sync::Arc;

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
/// installed over (for each piece's level; see
/// [`Version::pick_level_for_memtable_output`]). An empty plan for an empty
/// memtable. `bytewise`: the database orders keys bytewise (with any other
/// order no jump is looked for).
pub fn plan(mem: &Arc<MemTable>, base: &Version, max_file_size: u64, bytewise: bool) -> Vec<Piece> {
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
    let whole = |base: &Version| {
        vec![Piece {
            start: None,
            end: None,
            level: base.pick_level_for_memtable_output(&first, &last, max_file_size),
        }]
    };
    if !bytewise {
        return whole(base);
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
    if steps.is_empty() {
        return whole(base);
    }
    let mut sorted = steps.clone();
    let mid = sorted.len() / 2;
    let median = *sorted.select_nth_unstable_by(mid, f32::total_cmp).1;
    let threshold = median.max(1.0) * JUMP_FACTOR as f32;
    drop(sorted);
    // The largest jumps, then in key order.
    let mut jumps: Vec<usize> = (0..steps.len())
        .filter(|&i| steps[i] >= threshold)
        .collect();
    if jumps.is_empty() {
        return whole(base);
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
        return whole(base);
    }

    // Pieces with their levels; neighbours both at level 0 become one.
    let mut pieces: Vec<Piece> = Vec::with_capacity(bounds.len() + 1);
    let mut start: Option<Vec<u8>> = None;
    let mut smallest = first.clone();
    for (before, after) in &bounds {
        let level = base.pick_level_for_memtable_output(&smallest, before, max_file_size);
        push_piece(&mut pieces, start.take(), Some(after.clone()), level);
        start = Some(after.clone());
        smallest = after.clone();
    }
    let level = base.pick_level_for_memtable_output(&smallest, &last, max_file_size);
    push_piece(&mut pieces, start, None, level);
    if pieces.len() == 1 {
        return whole(base);
    }
    pieces
}

/// Appends a piece, merged into the previous one when both go to level 0.
fn push_piece(pieces: &mut Vec<Piece>, start: Option<Vec<u8>>, end: Option<Vec<u8>>, level: usize) {
    if let Some(prev) = pieces.last_mut() {
        if prev.level == 0 && level == 0 {
            prev.end = end;
            return;
        }
    }
    pieces.push(Piece { start, end, level });
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
        let pieces = plan(&mem, &empty_version(), 2 << 20, true);
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
        assert_eq!(plan(&seq, &empty_version(), 2 << 20, true).len(), 1);

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
        assert_eq!(plan(&random, &empty_version(), 2 << 20, true).len(), 1);
    }

    #[test]
    fn another_order_is_never_cut() {
        let mem = memtable(interleaved(4, 2000), 16);
        assert_eq!(plan(&mem, &empty_version(), 2 << 20, false).len(), 1);
    }

    #[test]
    fn a_short_run_between_two_jumps_is_a_table_of_its_own() {
        // Two streams, and 3 keys of a third between them: joined to either
        // neighbour they would span a gap between two streams.
        let mut keys = interleaved(2, 2000);
        keys.extend((0..3u64).map(|i| format!("{:010}", 250_000_000 + i).into_bytes()));
        let mem = memtable(keys, 16);
        let pieces = plan(&mem, &empty_version(), 2 << 20, true);
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
        let pieces = plan(&memtable(keys, 16), &empty_version(), 2 << 20, true);
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
        let pieces = plan(&mem, &empty_version(), 2 << 20, true);
        assert_eq!(starts(&pieces), vec![None, Some("0500000000".to_string())]);
    }

    #[test]
    fn an_empty_memtable_has_no_pieces() {
        let mem = memtable(Vec::new(), 16);
        assert!(plan(&mem, &empty_version(), 2 << 20, true).is_empty());
    }
}
