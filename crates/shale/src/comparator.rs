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
}

/// Lexicographic order of bytes, LevelDB's default (`leveldb.BytewiseComparator`).
#[derive(Debug, Default, Clone, Copy)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        "leveldb.BytewiseComparator"
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
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
