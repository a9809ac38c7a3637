//! The 32-bit hash LevelDB uses for bloom filters (a Murmur-like mix).
//!
//! It must stay bit-for-bit identical to LevelDB's, or filters written by one
//! engine would give false negatives in the other.

/// Hashes `data` with `seed`.
pub fn hash(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4_a793;
    const R: u32 = 24;
    let mut h: u32 = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        h = h.wrapping_add(w);
        h = h.wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = chunks.remainder();
    // The tail bytes are added as unsigned bytes (LevelDB 1.23 and later).
    if rest.len() == 3 {
        h = h.wrapping_add((rest[2] as u32) << 16);
    }
    if rest.len() >= 2 {
        h = h.wrapping_add((rest[1] as u32) << 8);
    }
    if !rest.is_empty() {
        h = h.wrapping_add(rest[0] as u32);
        h = h.wrapping_mul(M);
        h ^= h >> R;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::hash;

    #[test]
    fn signed_unsigned_issue() {
        // Known values from LevelDB's hash test, which pin the signed tail bytes.
        assert_eq!(hash(&[], 0xbc9f1d34), 0xbc9f1d34);
        assert_eq!(hash(&[0x62], 0xbc9f1d34), 0xef1345c4);
        assert_eq!(hash(&[0xc3, 0x97], 0xbc9f1d34), 0x5b663814);
        assert_eq!(hash(&[0xe2, 0x99, 0xa5], 0xbc9f1d34), 0x323c078f);
        assert_eq!(hash(&[0xe1, 0x80, 0xb9, 0x32], 0xbc9f1d34), 0xed21633a);
    }
}
