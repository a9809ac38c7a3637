//! The on-disk format of a blob file and of a blob pointer.
//!
//! ```text
//! file    := header record*
//! header  := magic: 8 bytes "shaleBLB", version: fixed32 (1)
//! record  := crc: fixed32 | key_len: varint32 | value_len: varint32 | key | value
//! pointer := file: varint64 | offset: varint64 | len: varint64
//! ```
//!
//! `crc` is the masked CRC-32C (masked as the log masks it) of everything
//! after it in the record: both lengths, the key and the value. A pointer
//! names the blob file, the offset of a record and the record's whole length;
//! it is the value of a `ValueType::BlobIndex` entry. The key stored in the
//! record is the user key of the entry, so that a reader can check that a
//! pointer leads to the value of the key it was looked up for.
//!
//! Decoding never trusts a length field beyond the bytes at hand: the
//! pointer's length is checked against the file's size before anything is
//! read (`reader.rs`), and the record's lengths against the pointer's.

use crate::error::{Error, Result};
use crate::util::coding::{get_varint32, get_varint64, put_varint32, put_varint64};
use crate::util::crc;

/// The first 8 bytes of every blob file.
pub const MAGIC: [u8; 8] = *b"shaleBLB";
/// The format version written after the magic.
pub const VERSION: u32 = 1;
/// The length of the file header.
pub const HEADER_LEN: usize = 12;
/// The most bytes a record takes before its key: CRC and two varint32s.
#[cfg(test)]
pub const MAX_RECORD_PREFIX: usize = 4 + 5 + 5;

/// The file header.
pub fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// Checks a file header; the error names no file (callers add it).
pub fn check_header(h: &[u8]) -> Result<()> {
    if h.len() < HEADER_LEN {
        return Err(Error::bad_data(format!(
            "blob file header of {} bytes is too short",
            h.len()
        )));
    }
    if h[..8] != MAGIC {
        return Err(Error::bad_data("not a blob file (bad magic)"));
    }
    let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
    if version != VERSION {
        return Err(Error::bad_data(format!(
            "unsupported blob file version {version}"
        )));
    }
    Ok(())
}

/// Where a separated value is: the value of a `BlobIndex` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobPointer {
    /// The blob file's number.
    pub file: u64,
    /// The offset of the record in the file.
    pub offset: u64,
    /// The record's length (prefix, key and value).
    pub len: u64,
}

impl BlobPointer {
    /// Appends the encoding.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.file);
        put_varint64(dst, self.offset);
        put_varint64(dst, self.len);
    }

    /// Decodes a pointer, which must take the whole of `src`.
    pub fn decode(src: &[u8]) -> Result<BlobPointer> {
        let mut input = src;
        let (Some(file), Some(offset), Some(len)) = (
            get_varint64(&mut input),
            get_varint64(&mut input),
            get_varint64(&mut input),
        ) else {
            return Err(Error::bad_data(format!(
                "malformed blob pointer of {} bytes",
                src.len()
            )));
        };
        if !input.is_empty() {
            return Err(Error::bad_data(format!(
                "blob pointer has {} trailing bytes",
                input.len()
            )));
        }
        if offset < HEADER_LEN as u64 {
            return Err(Error::bad_data(format!(
                "blob pointer to offset {offset}, inside the file header"
            )));
        }
        Ok(BlobPointer { file, offset, len })
    }
}

/// The record prefix (CRC and lengths) of `key` and `value`, into `dst`
/// (cleared first); the record is the prefix followed by key and value.
/// Key and value lengths must fit in 32 bits (the write batch refuses longer).
pub fn encode_record_prefix(key: &[u8], value: &[u8], dst: &mut Vec<u8>) {
    dst.clear();
    dst.extend_from_slice(&[0; 4]);
    put_varint32(dst, key.len() as u32);
    put_varint32(dst, value.len() as u32);
    let c = crc::extend(crc::extend(crc::value(&dst[4..]), key), value);
    dst[..4].copy_from_slice(&crc::mask(c).to_le_bytes());
}

/// Splits a whole record (exactly the pointer's bytes) into key and value,
/// checking its lengths and CRC; the error names no file or offset (callers
/// add them).
pub fn decode_record(record: &[u8]) -> Result<(&[u8], &[u8])> {
    let Some((crc_bytes, rest)) = record.split_first_chunk::<4>() else {
        return Err(Error::bad_data(format!(
            "blob record of {} bytes is too short",
            record.len()
        )));
    };
    let mut input = rest;
    let (Some(key_len), Some(value_len)) = (get_varint32(&mut input), get_varint32(&mut input))
    else {
        return Err(Error::bad_data("blob record has malformed lengths"));
    };
    let body = u64::from(key_len) + u64::from(value_len);
    if body != input.len() as u64 {
        return Err(Error::bad_data(format!(
            "blob record lengths (key {key_len}, value {value_len}) do not match its {} bytes",
            record.len()
        )));
    }
    let expected = crc::unmask(u32::from_le_bytes(*crc_bytes));
    if crc::value(rest) != expected {
        return Err(Error::bad_data("blob record checksum mismatch"));
    }
    Ok(input.split_at(key_len as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &[u8], value: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        encode_record_prefix(key, value, &mut r);
        r.extend_from_slice(key);
        r.extend_from_slice(value);
        r
    }

    #[test]
    fn record_round_trip() {
        for (k, v) in [
            (&b""[..], &b""[..]),
            (b"key", b"value"),
            (b"k", &[7u8; 300][..]),
        ] {
            let r = record(k, v);
            assert!(r.len() - k.len() - v.len() <= MAX_RECORD_PREFIX);
            assert_eq!(decode_record(&r).unwrap(), (k, v));
        }
    }

    #[test]
    fn every_damaged_byte_is_corruption() {
        let r = record(b"key", b"a value long enough");
        for i in 0..r.len() {
            let mut bad = r.clone();
            bad[i] ^= 0x40;
            let e = decode_record(&bad).unwrap_err();
            assert!(e.is_corruption(), "byte {i}: {e}");
        }
        for len in 0..r.len() {
            assert!(decode_record(&r[..len]).unwrap_err().is_corruption());
        }
        let mut longer = r.clone();
        longer.push(0);
        assert!(decode_record(&longer).unwrap_err().is_corruption());
    }

    #[test]
    fn pointer_round_trip_and_damage() {
        let p = BlobPointer {
            file: 7,
            offset: 1 << 40,
            len: 100_000,
        };
        let mut enc = Vec::new();
        p.encode(&mut enc);
        assert_eq!(BlobPointer::decode(&enc).unwrap(), p);
        for len in 0..enc.len() {
            assert!(BlobPointer::decode(&enc[..len])
                .unwrap_err()
                .is_corruption());
        }
        let mut longer = enc.clone();
        longer.push(1);
        assert!(BlobPointer::decode(&longer).unwrap_err().is_corruption());
        let mut header = Vec::new();
        BlobPointer { offset: 3, ..p }.encode(&mut header);
        assert!(BlobPointer::decode(&header).unwrap_err().is_corruption());
    }

    #[test]
    fn header_checks() {
        check_header(&header()).unwrap();
        let mut bad = header();
        bad[0] = b'x';
        assert!(check_header(&bad).unwrap_err().is_corruption());
        let mut v2 = header();
        v2[8] = 2;
        assert!(check_header(&v2).unwrap_err().is_corruption());
        assert!(check_header(&header()[..5]).unwrap_err().is_corruption());
    }
}
