//! Fixed-width little-endian and varint integer encodings, as LevelDB lays them out.
//!
//! Decoders never panic: they take a cursor (`&mut &[u8]`) and return `None`
//! when the input is short or malformed, advancing the cursor only on success.

/// Appends `v` as 4 little-endian bytes.
#[inline]
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 8 little-endian bytes.
#[inline]
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads 4 little-endian bytes at the start of `src`. `None` if `src` is shorter.
#[inline]
pub fn decode_fixed32(src: &[u8]) -> Option<u32> {
    src.get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads 8 little-endian bytes at the start of `src`. `None` if `src` is shorter.
#[inline]
pub fn decode_fixed64(src: &[u8]) -> Option<u64> {
    src.get(..8)
        .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
}

/// Appends `v` as a varint (1 to 5 bytes).
#[inline]
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, v as u64)
}

/// Appends `v` as a varint (1 to 10 bytes).
#[inline]
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Number of bytes [`put_varint64`] writes for `v`.
#[inline]
pub fn varint_length(mut v: u64) -> usize {
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

/// Reads a varint of at most 5 bytes that fits in 32 bits.
#[inline]
pub fn get_varint32(src: &mut &[u8]) -> Option<u32> {
    // Fast path: one byte.
    if let Some(&b) = src.first() {
        if b < 0x80 {
            *src = &src[1..];
            return Some(b as u32);
        }
    }
    let mut result: u32 = 0;
    for (i, &byte) in src.iter().enumerate().take(5) {
        let shift = 7 * i as u32;
        let bits = (byte & 0x7f) as u32;
        if shift == 28 && bits > 0x0f {
            return None;
        }
        result |= bits << shift;
        if byte < 0x80 {
            *src = &src[i + 1..];
            return Some(result);
        }
    }
    None
}

/// Reads a varint of at most 10 bytes that fits in 64 bits.
#[inline]
pub fn get_varint64(src: &mut &[u8]) -> Option<u64> {
    let mut result: u64 = 0;
    for (i, &byte) in src.iter().enumerate().take(10) {
        let shift = 7 * i as u32;
        let bits = (byte & 0x7f) as u64;
        if shift == 63 && bits > 1 {
            return None;
        }
        result |= bits << shift;
        if byte < 0x80 {
            *src = &src[i + 1..];
            return Some(result);
        }
    }
    None
}

/// Appends `value` preceded by its length as a varint32.
#[inline]
pub fn put_length_prefixed_slice(dst: &mut Vec<u8>, value: &[u8]) {
    put_varint32(dst, value.len() as u32);
    dst.extend_from_slice(value);
}

/// Reads a varint32 length and that many bytes.
#[inline]
pub fn get_length_prefixed_slice<'a>(src: &mut &'a [u8]) -> Option<&'a [u8]> {
    let mut cursor = *src;
    let len = get_varint32(&mut cursor)? as usize;
    if cursor.len() < len {
        return None;
    }
    let (value, rest) = cursor.split_at(len);
    *src = rest;
    Some(value)
}

#[cfg(any(test, feature = "internals"))]
/// Reads 4 little-endian bytes and advances the cursor.
#[inline]
pub fn get_fixed32(src: &mut &[u8]) -> Option<u32> {
    let v = decode_fixed32(src)?;
    *src = &src[4..];
    Some(v)
}

#[cfg(feature = "internals")]
/// Reads 8 little-endian bytes and advances the cursor.
#[inline]
pub fn get_fixed64(src: &mut &[u8]) -> Option<u64> {
    let v = decode_fixed64(src)?;
    *src = &src[8..];
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_round_trip() {
        let mut buf = Vec::new();
        for v in [0u32, 1, 255, 256, 0xdead_beef, u32::MAX] {
            put_fixed32(&mut buf, v);
        }
        let mut s = &buf[..];
        for v in [0u32, 1, 255, 256, 0xdead_beef, u32::MAX] {
            assert_eq!(get_fixed32(&mut s), Some(v));
        }
        assert!(s.is_empty());
        assert_eq!(get_fixed32(&mut s), None);
        let mut buf = Vec::new();
        put_fixed64(&mut buf, 0x0102_0304_0506_0708);
        assert_eq!(buf, [8, 7, 6, 5, 4, 3, 2, 1]);
    }

    #[test]
    fn varint_round_trip_and_lengths() {
        let mut values = vec![0u64, 1, 127, 128, 255, 300, u32::MAX as u64, u64::MAX];
        for shift in 0..64 {
            values.push(1u64 << shift);
            values.push((1u64 << shift) - 1);
        }
        let mut buf = Vec::new();
        for &v in &values {
            let before = buf.len();
            put_varint64(&mut buf, v);
            assert_eq!(buf.len() - before, varint_length(v));
        }
        let mut s = &buf[..];
        for &v in &values {
            assert_eq!(get_varint64(&mut s), Some(v));
        }
        assert!(s.is_empty());
    }

    #[test]
    fn varint32_rejects_overflow_and_truncation() {
        let mut buf = Vec::new();
        put_varint64(&mut buf, u32::MAX as u64 + 1);
        assert_eq!(get_varint32(&mut &buf[..]), None);
        put_varint32(&mut buf, 300);
        let mut truncated = &[0x80u8, 0x80][..];
        assert_eq!(get_varint32(&mut truncated), None);
        assert_eq!(truncated.len(), 2, "cursor not advanced on failure");
        let eleven = [0xffu8; 11];
        assert_eq!(get_varint64(&mut &eleven[..]), None);
    }

    #[test]
    fn length_prefixed() {
        let mut buf = Vec::new();
        put_length_prefixed_slice(&mut buf, b"");
        put_length_prefixed_slice(&mut buf, b"foo");
        put_length_prefixed_slice(&mut buf, &[b'x'; 200]);
        let mut s = &buf[..];
        assert_eq!(get_length_prefixed_slice(&mut s), Some(&b""[..]));
        assert_eq!(get_length_prefixed_slice(&mut s), Some(&b"foo"[..]));
        assert_eq!(
            get_length_prefixed_slice(&mut s).map(|v| v.len()),
            Some(200)
        );
        assert_eq!(get_length_prefixed_slice(&mut s), None);
        let mut short = &[5u8, b'a', b'b'][..];
        assert_eq!(get_length_prefixed_slice(&mut short), None);
    }
}
