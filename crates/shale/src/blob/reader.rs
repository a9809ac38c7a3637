//! Reads records of blob files by pointer, through a small cache of open
//! files. Reads are positional (`pread`, or a copy out of a mapping when the
//! file system maps files): a value is read once, into the caller's buffer.
//!
//! The file being written by the write path grows while it is read: an
//! open file (or mapping) that is too short for a pointer is opened again,
//! and only a pointer past the end of the file as it is now is corruption.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::comparator::Comparator;
use crate::env::{FileSystem, RandomAccessFile};
use crate::error::{Error, Result};
use crate::filename::blob_file_name;

use super::format::{check_header, decode_record, BlobPointer, HEADER_LEN};

impl crate::iter::db_iter::BlobResolver for BlobCache {
    fn resolve(&self, user_key: &[u8], pointer: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.read_value(user_key, pointer, out)
    }
}

/// Open blob files kept at most; beyond, the cache starts over.
const MAX_OPEN_BLOB_FILES: usize = 64;

/// An open blob file and its size when opened.
#[derive(Clone)]
struct OpenFile {
    file: Arc<dyn RandomAccessFile>,
    size: u64,
}

/// Resolves blob pointers of one database directory.
pub struct BlobCache {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    /// Tells whether a record's key is the key looked up.
    comparator: Arc<dyn Comparator>,
    open: Mutex<HashMap<u64, OpenFile>>,
}

impl BlobCache {
    /// A cache for the blob files of `dir`.
    pub fn new(fs: Arc<dyn FileSystem>, dir: &Path, comparator: Arc<dyn Comparator>) -> BlobCache {
        BlobCache {
            fs,
            dir: dir.to_path_buf(),
            comparator,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets blob file `number` (it was deleted).
    pub fn evict(&self, number: u64) {
        self.open.lock().remove(&number);
    }

    /// Reads the value `pointer` (an encoded [`BlobPointer`]) addresses into
    /// `out` (its old contents replaced), checking the record's CRC and that
    /// it holds `user_key`. A missing file or record, a damaged one, or one
    /// of another key is [`Error::Corruption`] naming the file and offset.
    pub fn read_value(&self, user_key: &[u8], pointer: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let p = BlobPointer::decode(pointer).map_err(|e| {
            Error::corruption(
                &self.dir,
                None,
                format!(
                    "the blob pointer of key \"{}\": {e}",
                    user_key.escape_ascii()
                ),
            )
        })?;
        let path = blob_file_name(&self.dir, p.file);
        let at = |reason: String| Error::corruption(&path, Some(p.offset), reason);
        let end = p
            .offset
            .checked_add(p.len)
            .ok_or_else(|| at(format!("blob record of {} bytes overflows", p.len)))?;
        let file = self.file_for(p.file, &path, end)?;
        let len = usize::try_from(p.len)
            .map_err(|_| at(format!("blob record of {} bytes is too long", p.len)))?;
        out.clear();
        out.resize(len, 0);
        let n = file.read_at(p.offset, out)?;
        if n != len {
            return Err(at(format!(
                "blob record of {len} bytes cut short at {n} bytes"
            )));
        }
        let (key, value) = decode_record(out).map_err(|e| e.in_file(&path, Some(p.offset)))?;
        if self.comparator.compare(key, user_key) != std::cmp::Ordering::Equal {
            return Err(at(format!(
                "blob record holds key \"{}\", not \"{}\"",
                key.escape_ascii(),
                user_key.escape_ascii()
            )));
        }
        let (start, value_len) = (out.len() - value.len(), value.len());
        out.copy_within(start.., 0);
        out.truncate(value_len);
        Ok(())
    }

    /// The open file `number`, at least `end` bytes long.
    fn file_for(&self, number: u64, path: &Path, end: u64) -> Result<Arc<dyn RandomAccessFile>> {
        if let Some(f) = self.open.lock().get(&number) {
            if f.size >= end {
                return Ok(f.file.clone());
            }
        }
        let size = match self.fs.file_size(path) {
            Ok(s) => s,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::corruption(path, None, "blob file is missing"));
            }
            Err(e) => return Err(e),
        };
        if size < end {
            return Err(Error::corruption(
                path,
                Some(end),
                format!("blob record ends past the end of the file ({size} bytes)"),
            ));
        }
        let file = self.fs.new_random_access_file(path)?;
        let mut h = [0u8; HEADER_LEN];
        let n = file.read_at(0, &mut h)?;
        check_header(&h[..n]).map_err(|e| e.in_file(path, Some(0)))?;
        let mut open = self.open.lock();
        if open.len() >= MAX_OPEN_BLOB_FILES {
            open.clear();
        }
        open.insert(
            number,
            OpenFile {
                file: file.clone(),
                size,
            },
        );
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::format::BlobPointer;
    use crate::blob::writer::BlobWriter;
    use crate::env::{read_file, write_file_sync, MemFs};

    fn setup() -> (Arc<MemFs>, PathBuf) {
        let fs = Arc::new(MemFs::new());
        let dir = PathBuf::from("/db");
        fs.create_dir_all(&dir).unwrap();
        (fs, dir)
    }

    fn enc(p: BlobPointer) -> Vec<u8> {
        let mut v = Vec::new();
        p.encode(&mut v);
        v
    }

    #[test]
    fn written_records_read_back_while_the_file_grows() {
        let (fs, dir) = setup();
        let cache = BlobCache::new(
            fs.clone(),
            &dir,
            Arc::new(crate::comparator::BytewiseComparator),
        );
        let mut w = BlobWriter::create(&*fs, &dir, 9).unwrap();
        let mut pointers = Vec::new();
        for i in 0..20u32 {
            let key = format!("key{i}").into_bytes();
            let value = vec![i as u8; 1000 + i as usize];
            let p = w.add(&key, &value).unwrap();
            w.flush().unwrap();
            pointers.push((key, value, p));
            // Every record so far reads back, the cache reopening the file
            // as it grows.
            for (k, v, p) in &pointers {
                let mut out = vec![1, 2, 3];
                cache.read_value(k, &enc(*p), &mut out).unwrap();
                assert_eq!(&out, v);
            }
        }
        assert_eq!(w.len(), fs.file_size(&dir.join("000009.blob")).unwrap());
        w.finish().unwrap();
    }

    #[test]
    fn every_damage_is_corruption_naming_file_and_offset() {
        let (fs, dir) = setup();
        let mut w = BlobWriter::create(&*fs, &dir, 3).unwrap();
        let _first = w.add(b"a", b"first value").unwrap();
        let p = w.add(b"b", b"second value").unwrap();
        w.finish().unwrap();
        let path = dir.join("000003.blob");
        let good = read_file(&*fs, &path).unwrap();

        let check = |e: Error, offset: Option<u64>| {
            let Error::Corruption {
                file, offset: at, ..
            } = &e
            else {
                panic!("not a corruption: {e}");
            };
            assert_eq!(file, &path, "{e}");
            assert_eq!(*at, offset, "{e}");
        };
        let fresh_cache = || {
            BlobCache::new(
                fs.clone(),
                &dir,
                Arc::new(crate::comparator::BytewiseComparator),
            )
        };
        // The error of reading "b" from a file of `bytes`, through a new cache.
        let read_b_from = |bytes: &[u8]| {
            write_file_sync(&*fs, &path, bytes).unwrap();
            fresh_cache()
                .read_value(b"b", &enc(p), &mut Vec::new())
                .unwrap_err()
        };
        let cache = fresh_cache();
        let mut out = Vec::new();
        // Each byte of the record damaged.
        for i in p.offset..p.offset + p.len {
            let mut bad = good.clone();
            bad[i as usize] ^= 0x10;
            check(read_b_from(&bad), Some(p.offset));
        }
        write_file_sync(&*fs, &path, &good).unwrap();
        // Another key's record.
        check(
            cache.read_value(b"x", &enc(p), &mut out).unwrap_err(),
            Some(p.offset),
        );
        // A length off by one either way.
        for len in [p.len - 1, p.len + 1] {
            let e = cache
                .read_value(b"b", &enc(BlobPointer { len, ..p }), &mut out)
                .unwrap_err();
            assert!(e.is_corruption(), "{e}");
        }
        // Past the end, and a huge length: refused before any allocation.
        let huge = BlobPointer {
            len: u64::MAX / 2,
            ..p
        };
        check(
            cache.read_value(b"b", &enc(huge), &mut out).unwrap_err(),
            Some(p.offset + u64::MAX / 2),
        );
        // A torn tail.
        assert!(read_b_from(&good[..good.len() - 3]).is_corruption());
        // A bad header.
        let mut bad = good.clone();
        bad[1] ^= 1;
        check(read_b_from(&bad), Some(0));
        let cache = fresh_cache();
        // A missing file.
        let gone = BlobPointer { file: 77, ..p };
        let e = cache.read_value(b"b", &enc(gone), &mut out).unwrap_err();
        assert!(
            e.is_corruption() && e.to_string().contains("000077.blob"),
            "{e}"
        );
        // A malformed pointer.
        assert!(cache
            .read_value(b"b", &[0x80], &mut out)
            .unwrap_err()
            .is_corruption());
    }

    #[test]
    fn a_failed_write_is_sticky() {
        let (fs, dir) = setup();
        let mut w = BlobWriter::create(&*fs, &dir, 4).unwrap();
        w.add(b"k", b"v").unwrap();
        w.finish().unwrap();
        // Closed: the next append fails, and so does everything after it.
        assert!(w.add(b"k2", b"v2").is_err());
        assert!(w.flush().is_err());
        assert!(w.sync().is_err());
    }
}
