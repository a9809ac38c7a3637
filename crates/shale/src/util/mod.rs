//! Small building blocks shared by every layer: integer encodings, checksums,
//! hashing and cache prefetch hints.

pub mod coding;
pub mod crc;
pub mod hash;
pub mod prefetch;
