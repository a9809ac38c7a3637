//! CRC32C (Castagnoli) checksums, masked as LevelDB stores them.
//!
//! The checksum itself comes from the `crc32c` crate (hardware accelerated).
//! Stored checksums are masked, because computing the CRC of a string that
//! contains embedded CRCs is problematic.

const MASK_DELTA: u32 = 0xa282_ead8;

/// CRC32C of `data`.
#[inline]
pub fn value(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// CRC32C of `concat(A, data)` where `init` is the CRC32C of some string A.
#[inline]
pub fn extend(init: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(init, data)
}

/// The masked form of `crc` that is stored on disk.
#[inline]
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask`].
#[inline]
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_results() {
        // From RFC 3720 section B.4.
        assert_eq!(value(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(value(&[0xffu8; 32]), 0x62a8_ab43);
        let inc: Vec<u8> = (0..32).collect();
        assert_eq!(value(&inc), 0x46dd_794e);
        let dec: Vec<u8> = (0..32).rev().collect();
        assert_eq!(value(&dec), 0x113f_db5c);
    }

    #[test]
    fn extend_matches_whole() {
        assert_eq!(value(b"hello world"), extend(value(b"hello "), b"world"));
    }

    #[test]
    fn mask_round_trips_and_changes_value() {
        let crc = value(b"foo");
        assert_ne!(crc, mask(crc));
        assert_ne!(crc, mask(mask(crc)));
        assert_eq!(crc, unmask(mask(crc)));
        assert_eq!(crc, unmask(unmask(mask(mask(crc)))));
    }
}
