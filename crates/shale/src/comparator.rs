//! Key orderings.
//!
//! A comparator defines the order of user keys. Its name is stored in the
//! MANIFEST; opening a database with a comparator of a different name fails.

use std::cmp::Ordering;

/// A total order over user keys.
///
/// Implementations must be thread-safe and must never change the order of
/// existing keys for a given name.
///
/// ```
/// use std::cmp::Ordering;
/// use shale::Comparator;
///
/// /// Orders keys by their bytes reversed.
/// struct Reverse;
/// impl Comparator for Reverse {
///     fn name(&self) -> &str { "example.Reverse" }
///     fn compare(&self, a: &[u8], b: &[u8]) -> Ordering { b.cmp(a) }
/// }
/// assert_eq!(Reverse.compare(b"a", b"b"), Ordering::Greater);
/// ```
pub trait Comparator: Send + Sync {
    /// The name stored in the database; LevelDB's bytewise order is `leveldb.BytewiseComparator`.
    fn name(&self) -> &str;

    /// Three-way comparison of two user keys.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// Shortens `start` in place to a key `k` with `start <= k < limit`, to make
    /// index blocks smaller. Leaving `start` unchanged is always correct.
    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let _ = (start, limit);
    }

    /// Changes `key` in place to a short key `k >= key`. Leaving it unchanged is always correct.
    fn find_short_successor(&self, key: &mut Vec<u8>) {
        let _ = key;
    }

    /// True only if [`compare`](Comparator::compare) is exactly the
    /// lexicographic order of the bytes (unsigned, shorter prefix first).
    /// The engine then compares keys inline instead of through `compare`.
    /// The default is `false`.
    fn is_bytewise(&self) -> bool {
        false
    }

    /// `Some(n)` only if [`compare`](Comparator::compare) orders keys by
    /// their bytes less the last `n` (all of a key shorter than `n` counts
    /// as empty), lexicographically as [`is_bytewise`](Comparator::is_bytewise)
    /// says, and looks at the last `n` bytes only to order keys whose other
    /// bytes are equal. The engine then narrows searches in table index
    /// blocks by comparing fixed-size key prefixes as integers. The default
    /// is `Some(0)` for a bytewise comparator and `None` otherwise.
    fn bytewise_with_trailer(&self) -> Option<usize> {
        self.is_bytewise().then_some(0)
    }
}

/// Lexicographic comparison of two byte strings (as `a.cmp(b)`), inlined and
/// eight bytes at a time for the short keys that dominate key-value
/// workloads; long keys go to `memcmp`.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    if n > 64 {
        return a.cmp(b);
    }
    let (mut x, mut y) = (&a[..n], &b[..n]);
    while let (Some((xw, xr)), Some((yw, yr))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        let (xv, yv) = (u64::from_be_bytes(*xw), u64::from_be_bytes(*yw));
        if xv != yv {
            return xv.cmp(&yv);
        }
        x = xr;
        y = yr;
    }
    for (p, q) in x.iter().zip(y) {
        if p != q {
            return p.cmp(q);
        }
    }
    a.len().cmp(&b.len())
}

/// Lexicographic order of bytes, LevelDB's default (`leveldb.BytewiseComparator`).
///
/// ```
/// use shale::{BytewiseComparator, Comparator};
/// use std::cmp::Ordering;
/// assert_eq!(BytewiseComparator.compare(b"ab", b"b"), Ordering::Less);
/// assert_eq!(BytewiseComparator.name(), "leveldb.BytewiseComparator");
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        "leveldb.BytewiseComparator"
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        compare_bytes(a, b)
    }

    fn is_bytewise(&self) -> bool {
        true
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let min_len = start.len().min(limit.len());
        let diff = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
        if diff >= min_len {
            // One is a prefix of the other: no shortening.
            return;
        }
        let byte = start[diff];
        if byte < 0xff && byte + 1 < limit[diff] {
            start[diff] += 1;
            start.truncate(diff + 1);
            debug_assert!(self.compare(start, limit) == Ordering::Less);
        }
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        if let Some(i) = key.iter().position(|&b| b != 0xff) {
            key[i] += 1;
            key.truncate(i + 1);
        }
        // All 0xff: leave unchanged.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// `compare_bytes` is exactly the slice order, for keys around every
    /// word boundary, common prefixes, and long keys.
    #[test]
    fn compare_bytes_is_the_slice_order() {
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..20_000 {
            let len_a = rng.gen_range(0..80);
            let a: Vec<u8> = (0..len_a).map(|_| rng.gen_range(0..4u8) * 85).collect();
            let mut b = a.clone();
            match rng.gen_range(0..4) {
                0 => b.truncate(rng.gen_range(0..=a.len())),
                1 => b.push(rng.gen()),
                2 if !b.is_empty() => {
                    let i = rng.gen_range(0..b.len());
                    b[i] = rng.gen();
                }
                _ => b = (0..rng.gen_range(0..80)).map(|_| rng.gen()).collect(),
            }
            assert_eq!(compare_bytes(&a, &b), a.cmp(&b), "{a:?} vs {b:?}");
            assert_eq!(compare_bytes(&b, &a), b.cmp(&a), "{b:?} vs {a:?}");
        }
        assert_eq!(compare_bytes(b"", b""), Ordering::Equal);
        assert_eq!(
            compare_bytes(b"0000000000000001", b"0000000000000002"),
            Ordering::Less
        );
        assert_eq!(compare_bytes(&[0xff; 9], &[0xff; 8]), Ordering::Greater);
        assert!(BytewiseComparator.is_bytewise());
    }

    #[test]
    fn separator_shortens_only_when_safe() {
        let c = BytewiseComparator;
        let mut s = b"abcdefg".to_vec();
        c.find_shortest_separator(&mut s, b"abzzz");
        assert_eq!(s, b"abd");
        let mut s = b"abc".to_vec();
        c.find_shortest_separator(&mut s, b"abcdef");
        assert_eq!(s, b"abc", "prefix is left alone");
        let mut s = b"abc1".to_vec();
        c.find_shortest_separator(&mut s, b"abc2");
        assert_eq!(s, b"abc1", "adjacent bytes cannot be separated");
    }

    #[test]
    fn successor() {
        let c = BytewiseComparator;
        let mut k = b"\xff\xffabc".to_vec();
        c.find_short_successor(&mut k);
        assert_eq!(k, b"\xff\xffb");
        let mut k = b"\xff\xff".to_vec();
        c.find_short_successor(&mut k);
        assert_eq!(k, b"\xff\xff");
    }
}
