//! Key and value generation, byte for byte as LevelDB's db_bench does it.
//!
//! Keys are the decimal key number zero-padded to `key_size` digits
//! (`%016d` for the default 16), optionally after `key_prefix` bytes of `'a'`.
//! Values are consecutive slices of a 1 MB buffer made of 100-byte pieces,
//! each piece `ratio * 100` random printable characters repeated to fill 100
//! bytes, so that a simple compressor shrinks the values to about `ratio` of
//! their size. The buffer is built from `Random(301)`, so every engine (and
//! LevelDB's db_bench itself) writes exactly the same bytes.
//!
//! The `lsmiter` benchmark (SQLite4's LSM test) uses binary blobs instead:
//! [`BlobKeys`] makes the j-th key a pure function of a seed and j (so a key
//! inserted earlier is rebuilt for a lookup instead of being stored), and
//! [`ValueBuffer::incompressible`] fills the value buffer with random bytes.

use std::sync::Arc;

use crate::random::Random;

/// Size the value buffer grows to (it ends at the first piece boundary at or
/// past this, 1,048,600 bytes).
pub const VALUE_BUFFER_MIN: usize = 1_048_576;
/// Length of each compressible piece of the value buffer.
pub const VALUE_PIECE: usize = 100;
/// Seed of the value buffer's generator, as in db_bench.
pub const VALUE_SEED: u32 = 301;

/// Writes `len` random printable characters (`' '..='~'`) to `dst`,
/// replacing its contents.
pub fn random_string(rnd: &mut Random, len: usize, dst: &mut Vec<u8>) {
    dst.clear();
    dst.extend((0..len).map(|_| b' ' + rnd.uniform(95) as u8));
}

/// Writes `len` bytes to `dst` that compress to about `fraction` of `len`:
/// `len * fraction` random characters (at least one), repeated.
pub fn compressible_string(rnd: &mut Random, fraction: f64, len: usize, dst: &mut Vec<u8>) {
    // db_bench truncates towards zero (static_cast<int>); so does `as`.
    let raw_len = ((len as f64 * fraction) as usize).max(1);
    let mut raw = Vec::with_capacity(raw_len);
    random_string(rnd, raw_len, &mut raw);
    dst.clear();
    while dst.len() < len {
        dst.extend_from_slice(&raw);
    }
    dst.truncate(len);
}

/// The shared, immutable value buffer (about 1 MB). Build it once and hand a
/// [`ValueGenerator`] to each thread.
#[derive(Clone)]
pub struct ValueBuffer {
    data: Arc<[u8]>,
}

impl ValueBuffer {
    /// Builds the buffer for values that compress to `compression_ratio`.
    pub fn new(compression_ratio: f64) -> ValueBuffer {
        let mut rnd = Random::new(VALUE_SEED);
        let mut data = Vec::with_capacity(VALUE_BUFFER_MIN + VALUE_PIECE);
        let mut piece = Vec::with_capacity(VALUE_PIECE);
        while data.len() < VALUE_BUFFER_MIN {
            compressible_string(&mut rnd, compression_ratio, VALUE_PIECE, &mut piece);
            data.extend_from_slice(&piece);
        }
        ValueBuffer { data: data.into() }
    }

    /// A buffer of random bytes from `Random(301)` (values that do not
    /// compress), for the `lsmiter` benchmark's random blobs.
    pub fn incompressible() -> ValueBuffer {
        let mut rnd = Random::new(VALUE_SEED);
        let data: Vec<u8> = (0..VALUE_BUFFER_MIN + VALUE_PIECE)
            // The top bits of the 31-bit state are the most random ones.
            .map(|_| (rnd.next() >> 23) as u8)
            .collect();
        ValueBuffer { data: data.into() }
    }

    /// The whole buffer.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// A generator starting at the beginning of the buffer.
    pub fn generator(&self) -> ValueGenerator {
        ValueGenerator {
            data: self.data.clone(),
            pos: 0,
        }
    }
}

/// Hands out consecutive slices of the value buffer, wrapping to the start
/// when a slice would run past its end (db_bench's `RandomGenerator`).
pub struct ValueGenerator {
    data: Arc<[u8]>,
    pos: usize,
}

impl ValueGenerator {
    /// The next `len` bytes. `len` must be smaller than the buffer (the flag
    /// parser rejects larger value sizes); larger requests are clamped.
    #[inline]
    pub fn generate(&mut self, len: usize) -> &[u8] {
        let len = len.min(self.data.len().saturating_sub(1));
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        let start = self.pos;
        self.pos += len;
        &self.data[start..self.pos]
    }
}

/// Formats benchmark keys into a reusable buffer without allocating.
///
/// ```
/// use shale_bench::keygen::KeyBuffer;
/// let mut k = KeyBuffer::new(16, 0);
/// assert_eq!(k.set(42), b"0000000000000042");
/// let mut short = KeyBuffer::new(10, 2);
/// assert_eq!(short.set(7), b"aa0000000007");
/// ```
pub struct KeyBuffer {
    buf: Vec<u8>,
    prefix: usize,
    width: usize,
}

impl KeyBuffer {
    /// Keys of `key_size` zero-padded digits after `key_prefix` bytes of `'a'`.
    pub fn new(key_size: usize, key_prefix: usize) -> KeyBuffer {
        let mut buf = vec![b'a'; key_prefix];
        buf.resize(key_prefix + key_size.max(20), b'0');
        KeyBuffer {
            buf,
            prefix: key_prefix,
            width: key_size,
        }
    }

    /// The length of every key made by this buffer for numbers that fit in
    /// `key_size` digits.
    pub fn len(&self) -> usize {
        self.prefix + self.width
    }

    /// Always false: a key has at least its digits.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Formats key number `k` and returns the key. A number with more digits
    /// than `key_size` gives a longer key, as `%0Nd` does.
    #[inline]
    pub fn set(&mut self, k: u64) -> &[u8] {
        let mut digits = [0u8; 20];
        let mut n = k;
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let ndigits = digits.len() - i;
        let width = self.width.max(ndigits);
        let end = self.prefix + width;
        if self.buf.len() < end {
            self.buf.resize(end, b'0');
        }
        let pad_end = end - ndigits;
        self.buf[self.prefix..pad_end].fill(b'0');
        self.buf[pad_end..end].copy_from_slice(&digits[i..]);
        &self.buf[..end]
    }
}

/// splitmix64's increment (2^64 divided by the golden ratio, made odd).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's output function: a bijection on `u64` that mixes every input
/// bit into every output bit.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Pseudo-random binary keys of a fixed length: key `j` is a pure function
/// of `(seed, j)`, so it can be rebuilt for a lookup without being stored.
///
/// Invariant: for keys of 8 bytes or more, different `j` give different
/// keys (the first 8 bytes are a bijection of `j`); shorter keys are the
/// first bytes of that value and may collide.
pub struct BlobKeys {
    base: u64,
    buf: Vec<u8>,
}

impl BlobKeys {
    /// Keys of `len` bytes drawn from `seed`.
    pub fn new(seed: u32, len: usize) -> BlobKeys {
        BlobKeys {
            base: mix64(u64::from(seed) ^ GOLDEN),
            buf: vec![0; len],
        }
    }

    /// The key of number `j`.
    #[inline]
    pub fn key(&mut self, j: u64) -> &[u8] {
        // `base + j * GOLDEN` is injective in j (GOLDEN is odd); each further
        // 8-byte word continues splitmix64's sequence from there.
        let mut state = self.base.wrapping_add(j.wrapping_mul(GOLDEN));
        for chunk in self.buf.chunks_mut(8) {
            let word = mix64(state).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
            state = state.wrapping_add(GOLDEN);
        }
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_zero_padded_like_printf() {
        let mut k = KeyBuffer::new(16, 0);
        assert_eq!(k.set(0), b"0000000000000000");
        assert_eq!(k.set(999_999), b"0000000000999999");
        assert_eq!(k.set(u64::from(u32::MAX)), b"0000004294967295");
        let mut narrow = KeyBuffer::new(3, 0);
        assert_eq!(narrow.set(12_345), b"12345");
        assert_eq!(narrow.set(5), b"005");
    }

    #[test]
    fn compressible_string_repeats_its_random_part() {
        let mut rnd = Random::new(301);
        let mut s = Vec::new();
        compressible_string(&mut rnd, 0.5, 100, &mut s);
        assert_eq!(s.len(), 100);
        assert_eq!(s[..50], s[50..]);
        assert!(s.iter().all(|&b| (b' '..=b'~').contains(&b)));
        // A tiny ratio still keeps one random character.
        compressible_string(&mut rnd, 0.0, 10, &mut s);
        assert!(s.iter().all(|&b| b == s[0]));
    }

    #[test]
    fn blob_keys_are_reproducible_distinct_and_sized() {
        let mut a = BlobKeys::new(7, 12);
        let mut b = BlobKeys::new(7, 12);
        let k5 = a.key(5).to_vec();
        assert_eq!(k5.len(), 12);
        assert_eq!(b.key(5), &k5[..], "the same (seed, j) gives the same key");
        assert_ne!(a.key(6), &k5[..]);
        assert_ne!(BlobKeys::new(8, 12).key(5), &k5[..], "seeds differ");
        let mut seen = std::collections::HashSet::new();
        for j in 0..10_000 {
            assert!(seen.insert(a.key(j).to_vec()), "key {j} repeats");
        }
        assert_eq!(BlobKeys::new(1, 3).key(0).len(), 3);
    }

    #[test]
    fn incompressible_values_are_random_bytes() {
        let buf = ValueBuffer::incompressible();
        assert_eq!(buf.bytes().len(), VALUE_BUFFER_MIN + VALUE_PIECE);
        let mut counts = [0usize; 256];
        for &b in buf.bytes() {
            counts[usize::from(b)] += 1;
        }
        // Every byte value occurs, none much more often than 1/256.
        let expect = buf.bytes().len() / 256;
        assert!(counts.iter().all(|&c| c > expect / 2 && c < expect * 2));
    }

    #[test]
    fn generator_wraps_before_running_off_the_end() {
        let buf = ValueBuffer::new(0.5);
        assert_eq!(buf.bytes().len(), 1_048_600);
        let mut g = buf.generator();
        let first = g.generate(100_000).to_vec();
        for _ in 0..9 {
            g.generate(100_000);
        }
        // 10 * 100,000 = 1,000,000; the 11th would end at 1,100,000 > 1,048,600.
        assert_eq!(g.generate(100_000), &first[..]);
    }
}
