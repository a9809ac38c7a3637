//! Small building blocks shared by every layer: integer encodings, checksums
//! and hashing.

pub mod coding;
pub mod crc;
pub mod hash;
