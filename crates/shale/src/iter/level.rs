//! The level iterator: the concatenation of the files of one level.
//!
//! The files of a level (other than level 0) are sorted by key and do not
//! overlap, so their entries, file after file, are sorted. The iterator keeps
//! at most one file open: a file's iterator is opened lazily, through a
//! caller-supplied function, only when the position moves into that file.
//!
//! Invariants:
//! - When valid, `data` is the open iterator of file `index` and is valid.
//! - Files whose iterator is empty are skipped in both directions.
//! - An error (a file that cannot be opened, or an open file's iterator
//!   stopping with an error) is kept and stops the iterator for good, so a
//!   merge never silently drops a file's entries.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::keys::InternalKeyComparator;

/// A file of a level, as far as the level iterator needs to know it.
pub trait LevelFile: Send + Sync {
    /// The smallest internal key in the file.
    fn smallest(&self) -> &[u8];
    /// The largest internal key in the file.
    fn largest(&self) -> &[u8];
}

/// Opens the iterator (of type `I`) over one file's entries.
pub type OpenFileFn<F, I = Box<dyn InternalIterator>> = Arc<dyn Fn(&F) -> Result<I> + Send + Sync>;

/// Iterates the entries of a sorted, non-overlapping list of files in order.
/// `I` is the type of a file's iterator: a concrete type (a table iterator)
/// lets the level iterator's steps and key reads reach the file's without a
/// dynamic call.
pub struct LevelIterator<F: LevelFile, I: InternalIterator = Box<dyn InternalIterator>> {
    cmp: InternalKeyComparator,
    files: Arc<Vec<Arc<F>>>,
    open: OpenFileFn<F, I>,
    /// The file `data` iterates, meaningful only while `data` is `Some`.
    index: usize,
    /// The open file's iterator; `None` when unpositioned or past either end.
    data: Option<I>,
    /// The first error met; it stops the iterator for good.
    error: Option<Error>,
}

impl<F: LevelFile, I: InternalIterator> LevelIterator<F, I> {
    /// An iterator over `files`, which must be sorted by key and not overlap
    /// under `cmp`; `open` gives the iterator of one file. The result is unpositioned.
    pub fn new(
        cmp: InternalKeyComparator,
        files: Arc<Vec<Arc<F>>>,
        open: OpenFileFn<F, I>,
    ) -> LevelIterator<F, I> {
        debug_assert!(files
            .windows(2)
            .all(|w| { cmp.compare(w[0].largest(), w[1].smallest()) == Ordering::Less }));
        LevelIterator {
            cmp,
            files,
            open,
            index: 0,
            data: None,
            error: None,
        }
    }

    /// The index of the first file whose largest key is >= `target` (the
    /// number of files if there is none).
    fn find_file(&self, target: &[u8]) -> usize {
        self.files
            .partition_point(|f| self.cmp.compare(f.largest(), target) == Ordering::Less)
    }

    #[cold]
    fn stop(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.data = None;
    }

    /// Makes `data` the iterator of file `i` (re-using it if already open).
    /// Returns false, with `data` unset, if `i` is out of range or the open failed.
    fn open_file(&mut self, i: usize) -> bool {
        if self.data.is_some() && self.index == i {
            return true;
        }
        self.data = None;
        let Some(file) = self.files.get(i) else {
            return false;
        };
        match (self.open)(file) {
            Ok(it) => {
                self.data = Some(it);
                self.index = i;
                true
            }
            Err(e) => {
                self.stop(e);
                false
            }
        }
    }

    /// If `data` is exhausted (or failed): true when it stopped with an error,
    /// which is then kept. False when it is valid or simply at its end.
    fn data_failed(&mut self) -> bool {
        let err = match &self.data {
            Some(d) if !d.valid() => d.status().err(),
            _ => None,
        };
        match err {
            Some(e) => {
                self.stop(e);
                true
            }
            None => false,
        }
    }

    /// Moves forward over exhausted files until positioned or past the last file.
    fn skip_empty_files_forward(&mut self) {
        loop {
            match &self.data {
                Some(d) if d.valid() => return,
                Some(_) => {}
                None => return,
            }
            if self.data_failed() {
                return;
            }
            let next = self.index + 1;
            if !self.open_file(next) {
                self.data = None;
                return;
            }
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
    }

    /// Moves backward over exhausted files until positioned or before the first file.
    fn skip_empty_files_backward(&mut self) {
        loop {
            match &self.data {
                Some(d) if d.valid() => return,
                Some(_) => {}
                None => return,
            }
            if self.data_failed() {
                return;
            }
            let Some(prev) = self.index.checked_sub(1) else {
                self.data = None;
                return;
            };
            if !self.open_file(prev) {
                self.data = None;
                return;
            }
            if let Some(d) = self.data.as_mut() {
                d.seek_to_last();
            }
        }
    }
}

impl<F: LevelFile, I: InternalIterator> InternalIterator for LevelIterator<F, I> {
    #[inline]
    fn valid(&self) -> bool {
        match &self.data {
            Some(d) => d.valid(),
            None => false,
        }
    }

    fn seek_to_first(&mut self) {
        if self.error.is_some() {
            return;
        }
        if self.open_file(0) {
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
        self.skip_empty_files_forward();
    }

    fn seek_to_last(&mut self) {
        if self.error.is_some() {
            return;
        }
        match self.files.len().checked_sub(1) {
            Some(last) if self.open_file(last) => {
                if let Some(d) = self.data.as_mut() {
                    d.seek_to_last();
                }
            }
            _ => self.data = None,
        }
        self.skip_empty_files_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let i = self.find_file(target);
        if self.open_file(i) {
            if let Some(d) = self.data.as_mut() {
                d.seek(target);
            }
        }
        self.skip_empty_files_forward();
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if let Some(d) = self.data.as_mut() {
            d.next();
        }
        self.skip_empty_files_forward();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if let Some(d) = self.data.as_mut() {
            d.prev();
        }
        self.skip_empty_files_backward();
    }

    #[inline]
    fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        match &self.data {
            Some(d) => d.key(),
            None => &[],
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        match &self.data {
            Some(d) => d.value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.duplicate());
        }
        match &self.data {
            Some(d) => d.status(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ValueType;
    use crate::testutil::{icmp, ikey, CallCounter, VecIterator};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

    type Entry = (Vec<u8>, Vec<u8>);

    /// A test file: its bounds, and the entries its iterator yields.
    struct TestFile {
        number: u64,
        smallest: Vec<u8>,
        largest: Vec<u8>,
        entries: Arc<Vec<Entry>>,
    }

    impl LevelFile for TestFile {
        fn smallest(&self) -> &[u8] {
            &self.smallest
        }
        fn largest(&self) -> &[u8] {
            &self.largest
        }
    }

    fn e(k: &str) -> Entry {
        (
            ikey(k.as_bytes(), 1, ValueType::Value),
            format!("v-{k}").into_bytes(),
        )
    }

    /// A file bounded by `lo`..=`hi` holding `keys` (possibly none: the bounds
    /// stand for keys that are no longer visible through its iterator).
    fn file(number: u64, lo: &str, hi: &str, keys: &[&str]) -> Arc<TestFile> {
        Arc::new(TestFile {
            number,
            smallest: ikey(lo.as_bytes(), 1, ValueType::Value),
            largest: ikey(hi.as_bytes(), 1, ValueType::Value),
            entries: Arc::new(keys.iter().map(|k| e(k)).collect()),
        })
    }

    struct Harness {
        opens: Arc<AtomicUsize>,
        counter: Arc<CallCounter>,
    }

    /// A level iterator over `files`; opening file number `fail` fails.
    fn level(files: Vec<Arc<TestFile>>, fail: Option<u64>) -> (LevelIterator<TestFile>, Harness) {
        let opens = Arc::new(AtomicUsize::new(0));
        let counter = Arc::new(CallCounter::default());
        let h = Harness {
            opens: opens.clone(),
            counter: counter.clone(),
        };
        let open: OpenFileFn<TestFile> = Arc::new(move |f: &TestFile| {
            opens.fetch_add(1, AtomicOrdering::Relaxed);
            if Some(f.number) == fail {
                return Err(Error::NotFound(format!("file {}", f.number)));
            }
            let it =
                VecIterator::shared(Arc::new(icmp()), f.entries.clone()).counted(counter.clone());
            Ok(Box::new(it) as Box<dyn InternalIterator>)
        });
        (LevelIterator::new(icmp(), Arc::new(files), open), h)
    }

    fn standard_files() -> Vec<Arc<TestFile>> {
        vec![
            file(1, "a", "c", &["a", "b", "c"]),
            file(2, "d", "e", &[]),
            file(3, "f", "h", &["f", "h"]),
            file(4, "i", "j", &[]),
            file(5, "k", "k", &["k"]),
            file(6, "m", "p", &[]),
        ]
    }

    fn forward(it: &mut LevelIterator<TestFile>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push(it.value().to_vec());
            it.next();
        }
        out
    }

    fn backward(it: &mut LevelIterator<TestFile>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push(it.value().to_vec());
            it.prev();
        }
        out.reverse();
        out
    }

    fn vals(keys: &[&str]) -> Vec<Vec<u8>> {
        keys.iter().map(|k| format!("v-{k}").into_bytes()).collect()
    }

    #[test]
    fn no_files_is_empty() {
        let (mut it, _) = level(vec![], None);
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(&ikey(b"a", 1, ValueType::Value));
        assert!(!it.valid());
        assert!(it.status().is_ok());
    }

    #[test]
    fn only_empty_files_is_empty() {
        let (mut it, _) = level(vec![file(1, "a", "b", &[]), file(2, "c", "d", &[])], None);
        assert!(forward(&mut it).is_empty());
        assert!(backward(&mut it).is_empty());
        it.seek(&ikey(b"a", 1, ValueType::Value));
        assert!(!it.valid());
        assert!(it.status().is_ok());
    }

    #[test]
    fn concatenates_files_skipping_empty_ones_both_ways() {
        let (mut it, _) = level(standard_files(), None);
        let all = vals(&["a", "b", "c", "f", "h", "k"]);
        assert_eq!(forward(&mut it), all);
        assert_eq!(backward(&mut it), all);
    }

    #[test]
    fn seek_lands_in_the_first_file_whose_largest_key_is_not_smaller() {
        let (mut it, _) = level(standard_files(), None);
        let seek = |it: &mut LevelIterator<TestFile>, k: &str| {
            it.seek(&ikey(k.as_bytes(), 1, ValueType::Value));
            it.valid().then(|| it.value().to_vec())
        };
        assert_eq!(
            seek(&mut it, ""),
            Some(b"v-a".to_vec()),
            "before the beginning"
        );
        assert_eq!(seek(&mut it, "b"), Some(b"v-b".to_vec()));
        assert_eq!(seek(&mut it, "bb"), Some(b"v-c".to_vec()));
        assert_eq!(seek(&mut it, "cc"), Some(b"v-f".to_vec()), "in a gap");
        assert_eq!(
            seek(&mut it, "d"),
            Some(b"v-f".to_vec()),
            "in an empty file"
        );
        assert_eq!(seek(&mut it, "g"), Some(b"v-h".to_vec()));
        assert_eq!(seek(&mut it, "i"), Some(b"v-k".to_vec()));
        assert_eq!(seek(&mut it, "l"), None, "only empty files follow");
        assert_eq!(seek(&mut it, "q"), None, "past the end");
        // A seek for an older version of the largest key of a file moves on.
        it.seek(&ikey(b"c", 0, ValueType::Value));
        assert_eq!(it.value(), b"v-f");
        assert!(it.status().is_ok());
    }

    #[test]
    fn steps_across_file_boundaries_in_both_directions() {
        let (mut it, _) = level(standard_files(), None);
        it.seek(&ikey(b"f", 1, ValueType::Value));
        it.prev();
        assert_eq!(it.value(), b"v-c", "prev skips the empty file 2");
        it.next();
        assert_eq!(it.value(), b"v-f");
        it.next();
        it.next();
        assert_eq!(it.value(), b"v-k");
        it.prev();
        assert_eq!(it.value(), b"v-h");
        it.seek_to_first();
        it.prev();
        assert!(!it.valid(), "prev from the first entry");
        it.seek_to_last();
        assert_eq!(
            it.value(),
            b"v-k",
            "seek_to_last skips the trailing empty file"
        );
        it.next();
        assert!(!it.valid(), "next from the last entry");
    }

    #[test]
    fn files_are_opened_lazily_and_kept_open_while_in_use() {
        let (mut it, h) = level(standard_files(), None);
        assert_eq!(h.opens.load(AtomicOrdering::Relaxed), 0);
        it.seek(&ikey(b"k", 1, ValueType::Value));
        assert_eq!(h.opens.load(AtomicOrdering::Relaxed), 1, "only file 5");
        it.seek(&ikey(b"k", 1, ValueType::Value));
        it.seek_to_last();
        assert_eq!(
            h.opens.load(AtomicOrdering::Relaxed),
            3,
            "seek_to_last opens file 6 (empty), then file 5 again"
        );
        it.seek(&ikey(b"a", 1, ValueType::Value));
        it.next();
        it.next();
        assert_eq!(
            h.opens.load(AtomicOrdering::Relaxed),
            4,
            "steps within file 1"
        );
        assert!(h.counter.steps() >= 2);
    }

    #[test]
    fn an_open_error_is_reported_and_stops_the_iterator() {
        // File 3 cannot be opened.
        let (mut it, h) = level(standard_files(), Some(3));
        it.seek(&ikey(b"k", 1, ValueType::Value));
        assert_eq!(it.value(), b"v-k", "file 3 is never touched");
        assert!(it.status().is_ok());
        it.seek(&ikey(b"b", 1, ValueType::Value));
        assert_eq!(it.value(), b"v-b");
        it.next();
        assert_eq!(it.value(), b"v-c");
        it.next(); // through empty file 2 into file 3
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_not_found());
        // The error is kept and the iterator stays stopped.
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.status().is_err());
        assert!(h.opens.load(AtomicOrdering::Relaxed) >= 3);

        let (mut it, _) = level(standard_files(), Some(3));
        it.seek_to_last();
        it.prev();
        assert!(!it.valid(), "prev from file 5 reaches file 3");
        assert!(it.status().is_err());
    }

    #[test]
    fn an_error_inside_a_file_stops_the_iterator() {
        let files = standard_files();
        let entries = files[2].entries.clone();
        let open: OpenFileFn<TestFile> = Arc::new(move |f: &TestFile| {
            let it = VecIterator::shared(Arc::new(icmp()), f.entries.clone());
            let it = if f.number == 3 { it.fail_at(1) } else { it };
            Ok(Box::new(it) as Box<dyn InternalIterator>)
        });
        assert_eq!(entries.len(), 2);
        let mut it = LevelIterator::new(icmp(), Arc::new(files), open);
        it.seek(&ikey(b"c", 1, ValueType::Value));
        it.next();
        assert_eq!(it.value(), b"v-f");
        it.next();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
    }

    #[test]
    fn random_walks_match_the_concatenation() {
        let seed = 0x1e7e1;
        let mut rng = StdRng::seed_from_u64(seed);
        let c = icmp();
        for round in 0..40 {
            // Files over consecutive ranges of k000..k199, some empty.
            let mut files = Vec::new();
            let mut model: Vec<Entry> = Vec::new();
            let mut next_key = 0;
            let mut number = 1;
            while next_key < 200 {
                let span = rng.gen_range(1..15).min(200 - next_key);
                let keys: Vec<String> = (next_key..next_key + span)
                    .filter(|_| rng.gen_bool(0.7))
                    .map(|k| format!("k{k:03}"))
                    .collect();
                let keys = if rng.gen_bool(0.2) { vec![] } else { keys };
                let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
                let lo = format!("k{next_key:03}");
                let hi = format!("k{:03}", next_key + span - 1);
                files.push(file(number, &lo, &hi, &refs));
                model.extend(refs.iter().map(|k| e(k)));
                number += 1;
                next_key += span;
            }
            let (mut it, _) = level(files, None);
            let mut pos: Option<usize> = None;
            for step in 0..1500 {
                let op = rng.gen_range(0..8);
                match op {
                    0 => {
                        it.seek_to_first();
                        pos = (!model.is_empty()).then_some(0);
                    }
                    1 => {
                        it.seek_to_last();
                        pos = model.len().checked_sub(1);
                    }
                    2 => {
                        let target = ikey(
                            format!("k{:03}", rng.gen_range(0..205)).as_bytes(),
                            rng.gen_range(0..3),
                            ValueType::Value,
                        );
                        it.seek(&target);
                        let p = model.partition_point(|e| c.compare(&e.0, &target).is_lt());
                        pos = (p < model.len()).then_some(p);
                    }
                    3..=5 => {
                        if let Some(p) = pos {
                            it.next();
                            pos = (p + 1 < model.len()).then_some(p + 1);
                        }
                    }
                    _ => {
                        if let Some(p) = pos {
                            it.prev();
                            pos = p.checked_sub(1);
                        }
                    }
                }
                let ctx = format!("seed {seed:#x} round {round} step {step} op {op}");
                assert_eq!(it.valid(), pos.is_some(), "{ctx}");
                if let Some(p) = pos {
                    assert_eq!(it.key(), &model[p].0[..], "{ctx}");
                    assert_eq!(it.value(), &model[p].1[..], "{ctx}");
                }
            }
            assert!(it.status().is_ok());
        }
    }
}
