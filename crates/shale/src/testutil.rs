//! Test helpers shared by the unit tests of several modules.
//!
//! [`VecIterator`] is an [`InternalIterator`] over an in-memory sorted list of
//! entries, used as a stand-in for memtables and tables. It can be told to fail
//! when it reaches a given entry, to exercise error paths.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::comparator::{BytewiseComparator, Comparator};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::keys::{InternalKey, InternalKeyComparator, SequenceNumber, ValueType};

/// The internal key comparator over the bytewise user order.
pub(crate) fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(BytewiseComparator))
}

/// The encoded internal key for (`user_key`, `seq`, `t`).
pub(crate) fn ikey(user_key: &[u8], seq: SequenceNumber, t: ValueType) -> Vec<u8> {
    InternalKey::new(user_key, seq, t).encoded().to_vec()
}

/// Counts the calls made on the iterators that share it.
#[derive(Default)]
pub(crate) struct CallCounter {
    /// Calls to `next` and `prev`.
    pub steps: AtomicUsize,
    /// Calls to `seek`, `seek_to_first` and `seek_to_last`.
    pub seeks: AtomicUsize,
}

impl CallCounter {
    pub(crate) fn steps(&self) -> usize {
        self.steps.load(AtomicOrdering::Relaxed)
    }
    pub(crate) fn seeks(&self) -> usize {
        self.seeks.load(AtomicOrdering::Relaxed)
    }
}

/// An iterator over a sorted vector of (key, value) entries.
pub(crate) struct VecIterator {
    cmp: Arc<dyn Comparator>,
    entries: Arc<Vec<(Vec<u8>, Vec<u8>)>>,
    /// `entries.len()` when not positioned.
    pos: usize,
    /// Reaching this entry stops the iterator with an error.
    fail_at: Option<usize>,
    error: Option<Error>,
    counter: Option<Arc<CallCounter>>,
}

impl VecIterator {
    /// An iterator over `entries`, which must be strictly increasing under `cmp`.
    pub(crate) fn new(cmp: Arc<dyn Comparator>, entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIterator {
        Self::shared(cmp, Arc::new(entries))
    }

    /// Like [`VecIterator::new`] over entries shared with other iterators.
    pub(crate) fn shared(
        cmp: Arc<dyn Comparator>,
        entries: Arc<Vec<(Vec<u8>, Vec<u8>)>>,
    ) -> VecIterator {
        for w in entries.windows(2) {
            assert_eq!(
                cmp.compare(&w[0].0, &w[1].0),
                Ordering::Less,
                "test entries must be strictly increasing"
            );
        }
        let pos = entries.len();
        VecIterator {
            cmp,
            entries,
            pos,
            fail_at: None,
            error: None,
            counter: None,
        }
    }

    /// An iterator over internal keys ordered by [`icmp`].
    pub(crate) fn internal(entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIterator {
        Self::new(Arc::new(icmp()), entries)
    }

    /// Makes the iterator fail (become invalid with a corruption status) when
    /// it would position on entry `index`.
    pub(crate) fn fail_at(mut self, index: usize) -> VecIterator {
        self.fail_at = Some(index);
        self
    }

    /// Counts the calls made on this iterator in `counter`.
    pub(crate) fn counted(mut self, counter: Arc<CallCounter>) -> VecIterator {
        self.counter = Some(counter);
        self
    }

    fn land(&mut self, pos: usize) {
        if self.error.is_some() {
            return;
        }
        if pos < self.entries.len() && self.fail_at == Some(pos) {
            self.error = Some(Error::bad_data(format!("injected failure at entry {pos}")));
            self.pos = self.entries.len();
            return;
        }
        self.pos = pos;
    }

    fn count_step(&self) {
        if let Some(c) = &self.counter {
            c.steps.fetch_add(1, AtomicOrdering::Relaxed);
        }
    }

    fn count_seek(&self) {
        if let Some(c) = &self.counter {
            c.seeks.fetch_add(1, AtomicOrdering::Relaxed);
        }
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) {
        self.count_seek();
        self.land(0);
    }
    fn seek_to_last(&mut self) {
        self.count_seek();
        let n = self.entries.len();
        self.land(if n == 0 { 0 } else { n - 1 });
    }
    fn seek(&mut self, target: &[u8]) {
        self.count_seek();
        let p = self
            .entries
            .partition_point(|(k, _)| self.cmp.compare(k, target) == Ordering::Less);
        self.land(p);
    }
    fn next(&mut self) {
        assert!(self.valid());
        self.count_step();
        self.land(self.pos + 1);
    }
    fn prev(&mut self) {
        assert!(self.valid());
        self.count_step();
        if self.pos == 0 {
            self.pos = self.entries.len();
        } else {
            self.land(self.pos - 1);
        }
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
    fn status(&self) -> Result<()> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }
}
