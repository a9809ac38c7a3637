//! A concurrent, arena-backed skiplist of byte-string entries.
//!
//! Entries are ordered by a [`KeyComparator`] fixed at construction. They are
//! only ever added, never changed or removed; all memory is released at once
//! when the list is dropped (it lives in the list's [`Arena`]).
//!
//! # Structure
//!
//! Each node is one arena allocation laid out as
//! `prev hint | entry_len: u32 | height: u32 | next[0..height] | entry bytes`.
//! Heights are random, at most [`MAX_HEIGHT`], each level kept with probability
//! 1/4 (as in LevelDB). The head node has the full height and an empty entry.
//! `next[i]` links the level-`i` list; `prev` is a level-0 *backward hint*.
//! Searches are bound by cache misses, so while comparing a node they
//! prefetch the one after it on the same level.
//!
//! # Concurrency
//!
//! Readers never lock and never write. Inserts may run from several threads
//! at once ([`SkipList::insert`]): an insert finds the *splice* (the
//! predecessor and successor at every level), then links level 0 with a
//! compare-and-swap on the predecessor's `next[0]`, then levels 1.. upwards,
//! each with its own CAS; when a CAS fails because another insert got there
//! first, only that level's splice is searched again, starting from the old
//! predecessor (which is still before the new key: nodes never move).
//! There is no separate single-writer path: linking with plain stores
//! instead of CAS measured within noise on random inserts and only a few
//! percent faster on cache-resident sequential ones.
//!
//! Memory orderings: a node's fields, entry bytes and initial links are
//! written with plain or relaxed stores *before* it is published; publication
//! is the release CAS that makes its level-0 predecessor point to it, and
//! every load of a link (or of a prev hint) is an acquire load. A reader
//! that loads a pointer to a node therefore sees the node fully initialised.
//! Since every thread that writes a pointer to node `B` (its own inserter, a
//! later inserter storing `X.next = B`, or one storing `B.prev = X`) has
//! itself acquired `B`, and the chain of release/acquire pairs is transitive,
//! any reader holding `B` happens-after `B`'s level-0 publication.
//!
//! # Reverse iteration and the prev hint
//!
//! `B.prev` is set to `B`'s level-0 predecessor before `B` is published, and
//! whenever a node `X` is later inserted directly before `B`, its inserter
//! stores `B.prev = X` (release). Racing inserts may overwrite a newer hint
//! with an older one, so the hint can be stale, but it is always the head or
//! a node ordered before `B`: nodes never move or leave the list, so a node
//! that was once before `B` stays before it. Stepping back from `B` reads the
//! hint `P` (acquire) and walks level 0 forward from `P` until `P.next == B`.
//!
//! Why the walk reaches `B`: a node's `next[0]` only ever changes from a
//! successor `S` to a node `N` with `node < N < S`, so along its modification
//! order the successor only moves *closer*. The reader happens-after a write
//! that set `P.next[0]` to `B` (the publication of `B` if `P` was the original
//! hint, or the initial `X.next[0] = B` of the insert that stored hint `X`),
//! so by write-read coherence it reads `B` or a later value: a node `N`
//! between `P` and `B`. That value was written by the release CAS publishing
//! `N`, which the reader thus happens-after; that CAS replaced a successor no
//! later than `B`, and `N.next[0]` started as that successor, so the same
//! argument applies from `N`. Every
//! step moves strictly forward in a finite list, so the walk ends at `B`.
//! Normally the hint is exact and the step back costs one load. A null hint
//! (never produced, but handled) falls back to a search for the last node
//! before `B`.

use std::cell::Cell;
use std::cmp::Ordering;
use std::mem::{size_of, MaybeUninit};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering as MemOrder};
use std::sync::Arc;

use super::arena::Arena;
use crate::comparator::Comparator;
use crate::util::prefetch::prefetch_lines;

/// The tallest a node can be.
pub const MAX_HEIGHT: usize = 12;

/// The total order of a skiplist's entries.
///
/// A search compares one key with many entries, so the key is decoded once
/// into a [`Key`](KeyComparator::Key) (for a plain byte order, the bytes
/// themselves); callers may also build a `Key` directly, to search for a key
/// held in another format without re-encoding it.
pub trait KeyComparator: Send + Sync {
    /// A search key, decoded for cheap comparisons.
    type Key<'a>;

    /// Decodes `key`, given in the entry format (or a prefix of it that
    /// determines the order).
    fn decode<'a>(&self, key: &'a [u8]) -> Self::Key<'a>;

    /// Three-way comparison of an entry with a decoded key.
    fn compare_key(&self, entry: &[u8], key: &Self::Key<'_>) -> Ordering;

    #[cfg(test)]
    /// Three-way comparison of two entries.
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare_key(a, &self.decode(b))
    }
}

impl<T: Comparator + ?Sized> KeyComparator for T {
    type Key<'a> = &'a [u8];

    #[inline]
    fn decode<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        key
    }

    #[inline]
    fn compare_key(&self, entry: &[u8], key: &&[u8]) -> Ordering {
        Comparator::compare(self, entry, key)
    }
}

// ---------------------------------------------------------------------------
// Node layout.

const PTR_SIZE: usize = size_of::<AtomicPtr<u8>>();
const PREV_OFFSET: usize = 0;
const LEN_OFFSET: usize = PTR_SIZE;
const HEIGHT_OFFSET: usize = PTR_SIZE + 4;
/// `next[0]` starts here: after the hint and the two u32s, pointer-aligned.
const NEXT_OFFSET: usize = (PTR_SIZE + 8).div_ceil(PTR_SIZE) * PTR_SIZE;
const _: () = assert!(super::arena::ALIGN.is_multiple_of(PTR_SIZE));

/// Lines of a node a scan asks for ahead: the header, the links and the
/// start of the entry (a key and the start of its value).
const NODE_PREFETCH_LINES: usize = 2;

/// A pointer to a node.
///
/// Invariant: it points to a node in the arena of a list that is alive for as
/// long as the `Node` is used, and that node's header and entry were fully
/// written before the pointer was published (or, for a node not yet published,
/// the `Node` is held only by its inserting thread). Nodes are never freed
/// before their list, so a `Node` obtained from a live list stays valid.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Node(NonNull<u8>);

impl Node {
    #[inline]
    fn from_ptr(p: *mut u8) -> Option<Node> {
        NonNull::new(p).map(Node)
    }

    #[inline]
    fn as_ptr(self) -> *mut u8 {
        self.0.as_ptr()
    }

    #[inline]
    fn height(self) -> usize {
        // SAFETY: by the type invariant the header is initialised; HEIGHT_OFFSET
        // is 4-aligned within an 8-aligned node.
        unsafe { self.as_ptr().add(HEIGHT_OFFSET).cast::<u32>().read() as usize }
    }

    #[inline]
    fn entry_len(self) -> usize {
        // SAFETY: as in `height`.
        unsafe { self.as_ptr().add(LEN_OFFSET).cast::<u32>().read() as usize }
    }

    /// The link slot of `level`. Requires `level < self.height()`.
    #[inline]
    fn next_slot<'a>(self, level: usize) -> &'a AtomicPtr<u8> {
        debug_assert!(level < self.height());
        // SAFETY: the node was allocated with room for `height` pointer-aligned
        // link slots from NEXT_OFFSET, each initialised before publication, and
        // `level < height`. The arena outlives every use of the reference (type
        // invariant); all mutation goes through the atomic.
        unsafe {
            &*self
                .as_ptr()
                .add(NEXT_OFFSET + level * PTR_SIZE)
                .cast::<AtomicPtr<u8>>()
        }
    }

    #[inline]
    fn prev_slot<'a>(self) -> &'a AtomicPtr<u8> {
        // SAFETY: the hint slot is at offset 0 of every node, pointer-aligned,
        // initialised before publication; see `next_slot` for the lifetime.
        unsafe { &*self.as_ptr().add(PREV_OFFSET).cast::<AtomicPtr<u8>>() }
    }

    /// The successor at `level` (acquire: its contents are visible).
    #[inline]
    fn next(self, level: usize) -> Option<Node> {
        Node::from_ptr(self.next_slot(level).load(MemOrder::Acquire))
    }

    /// The backward hint (acquire).
    #[inline]
    fn prev_hint(self) -> Option<Node> {
        Node::from_ptr(self.prev_slot().load(MemOrder::Acquire))
    }

    #[inline]
    fn entry_offset(self) -> usize {
        NEXT_OFFSET + self.height() * PTR_SIZE
    }

    /// The entry bytes; immutable once the node is published.
    #[inline]
    fn entry<'a>(self) -> &'a [u8] {
        // SAFETY: the node was allocated with `entry_len` bytes after its link
        // slots; every entry byte was written (by `EntryWriter`, which zeroes
        // what its filler leaves) before publication and never again, so a
        // shared view is sound (the head's entry is empty). The
        // caller bounds the lifetime by the list's (type invariant).
        unsafe {
            std::slice::from_raw_parts(self.as_ptr().add(self.entry_offset()), self.entry_len())
        }
    }

    /// The entry bytes of a node that is not yet published, possibly
    /// uninitialised (large nodes come from [`Arena::allocate_uninit`]).
    ///
    /// # Safety
    /// The node must be fresh from [`SkipList::new_node`] and not yet linked,
    /// so the calling thread has exclusive access to it.
    #[inline]
    unsafe fn entry_uninit<'a>(self) -> &'a mut [MaybeUninit<u8>] {
        // SAFETY: the node was allocated with `entry_len` bytes after its
        // link slots; `MaybeUninit<u8>` has the layout of `u8` and may be
        // uninitialised; the caller guarantees exclusive access.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.as_ptr()
                    .add(self.entry_offset())
                    .cast::<MaybeUninit<u8>>(),
                self.entry_len(),
            )
        }
    }
}

/// Hints the CPU to start loading the node after `n` on `level`, which a
/// search is likely to visit next; the cache miss then overlaps with the
/// comparison against `n`.
#[inline(always)]
fn prefetch_next(n: Node, level: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = n.next_slot(level).load(MemOrder::Relaxed);
        // SAFETY: SSE is part of the x86_64 baseline, and a prefetch is only
        // an address hint: nothing is dereferenced, null or stale is harmless.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (n, level);
}

#[inline]
fn raw(n: Option<Node>) -> *mut u8 {
    n.map_or(ptr::null_mut(), Node::as_ptr)
}

// ---------------------------------------------------------------------------
// Random heights.

thread_local! {
    static RNG_STATE: Cell<u64> = Cell::new(initial_seed());
}

/// A distinct odd seed per thread.
fn initial_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    h.finish() | 1
}

/// A height in `1..=MAX_HEIGHT`, each level above 1 kept with probability 1/4.
#[inline]
fn random_height() -> usize {
    let r = RNG_STATE.with(|s| {
        // xorshift64: cheap and good enough to balance a skiplist.
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x
    });
    // Two bits per level, from the high (better mixed) half.
    let mut bits = r >> 32;
    let mut height = 1;
    while height < MAX_HEIGHT && bits & 3 == 0 {
        height += 1;
        bits >>= 2;
    }
    height
}

// ---------------------------------------------------------------------------
// The list.

/// Where the last insert went: its predecessor and successor at every level.
///
/// Invariant: `prev[l]` is linked at level `l` and `prev[l+1] <= prev[l]`,
/// `next[l] <= next[l+1]` (`None` is the end), and `prev[l] < next[l]`; other
/// inserts may since have put nodes between them. Ascending runs of inserts
/// (sequential loads) find their place here with one or two comparisons.
struct Splice {
    valid: bool,
    prev: [Node; MAX_HEIGHT],
    next: [Option<Node>; MAX_HEIGHT],
    /// Consecutive inserts the splice did not fit.
    misses: u32,
    /// Inserts left before the splice is tried again (random workloads
    /// would otherwise pay its comparisons on every insert).
    skip: u32,
}

/// Writes the bytes of a new entry in place, front to back (see
/// [`SkipList::insert_with`]). Writes past the entry's length are cut off.
pub struct EntryWriter<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    /// Bytes written so far; `buf[..pos]` is initialised.
    pos: usize,
}

impl EntryWriter<'_> {
    /// Appends `data` (as much of it as the entry has room for).
    #[inline]
    pub fn put(&mut self, data: &[u8]) {
        let n = data.len().min(self.buf.len() - self.pos);
        // SAFETY: `pos + n <= buf.len()`, so the destination is inside the
        // entry; the source is `n` initialised bytes of a caller's slice,
        // which cannot overlap the fresh, exclusively owned entry.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.buf.as_mut_ptr().add(self.pos).cast::<u8>(),
                n,
            );
        }
        self.pos += n;
    }

    /// Appends `v` as a varint.
    #[inline]
    pub fn put_varint32(&mut self, mut v: u32) {
        let mut b = [0u8; 5];
        let mut i = 0;
        while v >= 0x80 {
            b[i] = (v as u8) | 0x80;
            v >>= 7;
            i += 1;
        }
        b[i] = v as u8;
        self.put(&b[..=i]);
    }

    #[cfg(test)]
    /// Bytes written so far.
    #[inline]
    pub fn written(&self) -> usize {
        self.pos
    }

    /// Zeroes the bytes not written, so that the whole entry is initialised.
    #[inline]
    fn zero_rest(&mut self) {
        for b in &mut self.buf[self.pos..] {
            b.write(0);
        }
        self.pos = self.buf.len();
    }
}

/// A concurrent skiplist; see the module documentation.
pub struct SkipList<C> {
    head: Node,
    /// The last insert's splice; an insert that cannot take the lock at
    /// once (another insert runs) searches from the head instead.
    splice: parking_lot::Mutex<Splice>,
    /// Height of the tallest node linked so far (at least 1).
    max_height: AtomicUsize,
    len: AtomicUsize,
    cmp: C,
    arena: Arena,
}

// SAFETY: the list owns its arena (and so every node); nodes are shared
// between threads only through atomics with the orderings described in the
// module documentation, and entries are immutable once published.
unsafe impl<C: Send> Send for SkipList<C> {}
// SAFETY: as for `Send`; `&SkipList` allows only lock-free reads and inserts
// that are safe to run concurrently.
unsafe impl<C: Sync> Sync for SkipList<C> {}

impl<C: KeyComparator> SkipList<C> {
    /// An empty list ordered by `cmp`.
    pub fn new(cmp: C) -> SkipList<C> {
        let arena = Arena::new();
        let head = Self::new_node(&arena, MAX_HEIGHT, 0);
        SkipList {
            head,
            splice: parking_lot::Mutex::new(Splice {
                valid: false,
                prev: [head; MAX_HEIGHT],
                next: [None; MAX_HEIGHT],
                misses: 0,
                skip: 0,
            }),
            max_height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
            cmp,
            arena,
        }
    }

    /// The comparator.
    #[inline]
    pub fn comparator(&self) -> &C {
        &self.cmp
    }

    #[cfg(test)]
    /// Number of entries inserted.
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(MemOrder::Relaxed)
    }

    /// True when no entry has been inserted.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head.next(0).is_none()
    }

    /// Bytes held by the list's arena (nodes and entries). An atomic load.
    #[inline]
    pub fn memory_usage(&self) -> usize {
        self.arena.memory_usage()
    }

    #[cfg(test)]
    /// Inserts a copy of `entry`. Returns false (and inserts nothing) if an
    /// equal entry is present. Safe to call from several threads at once.
    ///
    /// # Panics
    /// If `entry` is 4 GiB or longer.
    #[inline]
    pub fn insert(&self, entry: &[u8]) -> bool {
        self.insert_with(entry.len(), |w| w.put(entry))
    }

    /// Inserts an entry of `len` bytes written in place by `fill` through an
    /// [`EntryWriter`], avoiding a copy (and, for a large entry, zeroing its
    /// memory first). Bytes `fill` leaves unwritten are zero. Returns false
    /// if an equal entry is present (the space is then wasted). Safe to call
    /// from several threads at once.
    ///
    /// # Panics
    /// If `len` is 4 GiB or more.
    #[inline]
    pub fn insert_with(&self, len: usize, fill: impl FnOnce(&mut EntryWriter<'_>)) -> bool {
        let node = Self::new_node(&self.arena, random_height(), len);
        // SAFETY: the node is fresh and not linked, so only this thread sees it.
        let buf = unsafe { node.entry_uninit() };
        let mut w = EntryWriter { buf, pos: 0 };
        fill(&mut w);
        w.zero_rest();
        // Every entry byte is now initialised, as `Node::entry` requires.
        self.link(node)
    }

    #[cfg(test)]
    /// True if an entry equal to `key` is present.
    pub fn contains(&self, key: &[u8]) -> bool {
        let key = self.cmp.decode(key);
        self.first_at_or_after_key(&key)
            .is_some_and(|e| self.cmp.compare_key(e, &key) == Ordering::Equal)
    }

    #[cfg(test)]
    /// The first entry `>= key`.
    #[inline]
    pub fn first_at_or_after(&self, key: &[u8]) -> Option<&[u8]> {
        self.first_at_or_after_key(&self.cmp.decode(key))
    }

    /// The first entry `>= key`, for an already decoded key.
    #[inline]
    pub fn first_at_or_after_key(&self, key: &C::Key<'_>) -> Option<&[u8]> {
        self.find_greater_or_equal(key).map(Node::entry)
    }

    #[cfg(test)]
    /// An iterator over the list, borrowing it.
    pub fn iter(&self) -> Iter<&SkipList<C>> {
        Iter::new(self)
    }

    // -- insertion ----------------------------------------------------------

    fn new_node(arena: &Arena, height: usize, entry_len: usize) -> Node {
        let Ok(len32) = u32::try_from(entry_len) else {
            panic!("skiplist entries are limited to 4 GiB, got {entry_len} bytes");
        };
        let size = NEXT_OFFSET + height * PTR_SIZE + entry_len;
        // The header and links are written below and the entry by the
        // inserter's `EntryWriter`, so the memory need not be zeroed.
        let p = arena.allocate_uninit(size).as_ptr();
        // SAFETY: `p` is a fresh, exclusively owned, 8-aligned allocation of
        // `size` bytes: the header fields and `height` link slots fit, at
        // offsets aligned for their types.
        unsafe {
            p.add(PREV_OFFSET)
                .cast::<AtomicPtr<u8>>()
                .write(AtomicPtr::new(ptr::null_mut()));
            p.add(LEN_OFFSET).cast::<u32>().write(len32);
            p.add(HEIGHT_OFFSET).cast::<u32>().write(height as u32);
            for level in 0..height {
                p.add(NEXT_OFFSET + level * PTR_SIZE)
                    .cast::<AtomicPtr<u8>>()
                    .write(AtomicPtr::new(ptr::null_mut()));
            }
        }
        // SAFETY: arena pointers are non-null.
        Node(unsafe { NonNull::new_unchecked(p) })
    }

    /// Links a filled, unpublished node; false if an equal entry is present.
    fn link(&self, node: Node) -> bool {
        let key = self.cmp.decode(node.entry());
        let key = &key;
        let height = node.height();

        let mut max = self.max_height.load(MemOrder::Relaxed);
        while height > max {
            // Relaxed: readers that see the old height just start lower;
            // levels above it are linked through release CASes anyway.
            match self.max_height.compare_exchange_weak(
                max,
                height,
                MemOrder::Relaxed,
                MemOrder::Relaxed,
            ) {
                Ok(_) => max = height,
                Err(current) => max = current,
            }
        }

        // The splice: prev[i] < key <= next[i] at every level below `height`
        // (and below `max` when searched from the head).
        let mut prev = [self.head; MAX_HEIGHT];
        let mut next: [Option<Node>; MAX_HEIGHT] = [None; MAX_HEIGHT];
        let mut hint = self.splice.try_lock();
        let from_hint = hint
            .as_deref_mut()
            .is_some_and(|h| self.splice_from_hint(h, key, height, &mut prev, &mut next));
        if !from_hint {
            let mut start = self.head;
            let mut known_ge = None;
            for level in (0..max).rev() {
                let (p, n) = self.find_splice_for_level(key, start, level, known_ge);
                prev[level] = p;
                next[level] = n;
                start = p;
                known_ge = n;
            }
        }

        // Level 0 first: once linked there the node is in the list.
        loop {
            if let Some(n) = next[0] {
                if self.cmp.compare_key(n.entry(), key) == Ordering::Equal {
                    return false;
                }
            }
            // Not yet published: relaxed stores suffice, the CAS below releases them.
            node.next_slot(0).store(raw(next[0]), MemOrder::Relaxed);
            node.prev_slot().store(prev[0].as_ptr(), MemOrder::Relaxed);
            if self.publish(prev[0], 0, next[0], node) {
                break;
            }
            (prev[0], next[0]) = self.find_splice_for_level(key, prev[0], 0, None);
        }
        // `node` is now directly before `next[0]`: make it that node's hint.
        if let Some(n) = next[0] {
            n.prev_slot().store(node.as_ptr(), MemOrder::Release);
        }

        for level in 1..height {
            loop {
                node.next_slot(level)
                    .store(raw(next[level]), MemOrder::Relaxed);
                if self.publish(prev[level], level, next[level], node) {
                    break;
                }
                (prev[level], next[level]) =
                    self.find_splice_for_level(key, prev[level], level, None);
            }
        }
        self.len.fetch_add(1, MemOrder::Relaxed);
        if let Some(h) = hint.as_deref_mut() {
            if !from_hint {
                h.prev[..max].copy_from_slice(&prev[..max]);
                h.next[..max].copy_from_slice(&next[..max]);
                h.prev[max..].fill(self.head);
                h.next[max..].fill(None);
                h.valid = true;
            }
            // The new node is the predecessor on its levels; the successors stay.
            h.prev[..height].fill(node);
            h.next[..height].copy_from_slice(&next[..height]);
        }
        true
    }

    /// Fills `prev`/`next` for levels `0..height` from the last insert's
    /// splice if `key` falls between its level-0 nodes; false (nothing
    /// filled) otherwise.
    fn splice_from_hint(
        &self,
        h: &mut Splice,
        key: &C::Key<'_>,
        height: usize,
        prev: &mut [Node; MAX_HEIGHT],
        next: &mut [Option<Node>; MAX_HEIGHT],
    ) -> bool {
        if !h.valid {
            return false;
        }
        if h.skip > 0 {
            h.skip -= 1;
            return false;
        }
        let p = h.prev[0];
        let fits = (p == self.head || self.cmp.compare_key(p.entry(), key) == Ordering::Less)
            && h.next[0].is_none_or(|n| self.cmp.compare_key(n.entry(), key) != Ordering::Less);
        if !fits {
            h.misses += 1;
            if h.misses >= 4 {
                h.misses = 0;
                h.skip = 32;
            }
            return false;
        }
        h.misses = 0;
        // By the splice invariant prev[l] <= prev[0] < key <= next[0] <= next[l]:
        // every level's walk starts before `key`, and a successor still equal
        // to the old one is known to be >= key without comparing it.
        for level in 0..height {
            let (p, n) = self.find_splice_for_level(key, h.prev[level], level, h.next[level]);
            prev[level] = p;
            next[level] = n;
        }
        true
    }

    /// Makes `prev.next[level]` point to `node` if it still points to
    /// `expected`. Release: `node`'s contents become visible to whoever
    /// acquires the link. On failure nothing was read through the link, so
    /// the failure ordering is relaxed (the retry searches with acquire loads).
    #[inline]
    fn publish(&self, prev: Node, level: usize, expected: Option<Node>, node: Node) -> bool {
        prev.next_slot(level)
            .compare_exchange(
                raw(expected),
                node.as_ptr(),
                MemOrder::Release,
                MemOrder::Relaxed,
            )
            .is_ok()
    }

    /// Walks `level` from `start` (which is before `key`) to the pair
    /// `(p, n)` with `p < key <= n`. `known_ge`, if given, is a node known to
    /// be `>= key`, which saves comparing it again.
    #[inline]
    fn find_splice_for_level(
        &self,
        key: &C::Key<'_>,
        start: Node,
        level: usize,
        known_ge: Option<Node>,
    ) -> (Node, Option<Node>) {
        let mut x = start;
        loop {
            let next = x.next(level);
            match next {
                Some(n)
                    if next != known_ge && {
                        prefetch_next(n, level);
                        self.cmp.compare_key(n.entry(), key) == Ordering::Less
                    } =>
                {
                    x = n
                }
                _ => return (x, next),
            }
        }
    }

    /// Test support: [`check_invariants_with`](Self::check_invariants_with), exact hints.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.check_invariants_with(true)
    }

    // -- searching ----------------------------------------------------------

    #[inline]
    fn top_level(&self) -> usize {
        self.max_height.load(MemOrder::Relaxed).clamp(1, MAX_HEIGHT) - 1
    }

    /// The first node at or after `key`.
    #[inline]
    fn find_greater_or_equal(&self, key: &C::Key<'_>) -> Option<Node> {
        let mut x = self.head;
        let mut level = self.top_level();
        // The node that stopped the walk on the level above: known >= target.
        let mut last_ge = None;
        loop {
            let next = x.next(level);
            match next {
                Some(n)
                    if next != last_ge && {
                        prefetch_next(n, level);
                        self.cmp.compare_key(n.entry(), key) == Ordering::Less
                    } =>
                {
                    x = n
                }
                _ => {
                    if level == 0 {
                        return next;
                    }
                    last_ge = next;
                    level -= 1;
                }
            }
        }
    }

    /// The last node before `key`, or the head.
    #[inline]
    fn find_less_than(&self, key: &C::Key<'_>) -> Node {
        let mut x = self.head;
        let mut level = self.top_level();
        let mut last_ge = None;
        loop {
            let next = x.next(level);
            match next {
                Some(n)
                    if next != last_ge && {
                        prefetch_next(n, level);
                        self.cmp.compare_key(n.entry(), key) == Ordering::Less
                    } =>
                {
                    x = n
                }
                _ => {
                    if level == 0 {
                        return x;
                    }
                    last_ge = next;
                    level -= 1;
                }
            }
        }
    }

    /// The last node, or the head if the list is empty.
    fn find_last(&self) -> Node {
        let mut x = self.head;
        let mut level = self.top_level();
        loop {
            match x.next(level) {
                Some(n) => x = n,
                None if level == 0 => return x,
                None => level -= 1,
            }
        }
    }

    /// The node before `b` on level 0, or the head; see the module
    /// documentation for why following the hint is correct.
    #[inline]
    fn predecessor(&self, b: Node) -> Node {
        if let Some(mut x) = b.prev_hint() {
            loop {
                match x.next(0) {
                    Some(n) if n == b => return x,
                    Some(n) => x = n,
                    None => {
                        debug_assert!(false, "prev hint walk passed its node");
                        break;
                    }
                }
            }
        }
        self.find_less_than(&self.cmp.decode(b.entry()))
    }

    #[inline]
    fn first(&self) -> Option<Node> {
        self.head.next(0)
    }

    /// Test support: checks every structural invariant, with no insert
    /// running. Hints are exact unless inserts raced (`exact_hints`).
    #[cfg(test)]
    pub(crate) fn check_invariants_with(&self, exact_hints: bool) {
        let mut count = 0;
        let mut x = self.head;
        while let Some(n) = x.next(0) {
            if x != self.head {
                assert_eq!(
                    self.cmp.compare(x.entry(), n.entry()),
                    Ordering::Less,
                    "level 0 out of order"
                );
            }
            let hint = n.prev_hint().expect("every node has a hint");
            if exact_hints {
                assert_eq!(hint, x, "hint is the exact predecessor");
            } else if hint != self.head {
                assert_eq!(
                    self.cmp.compare(hint.entry(), n.entry()),
                    Ordering::Less,
                    "hint after its node"
                );
            }
            assert!(n.height() >= 1 && n.height() <= MAX_HEIGHT);
            count += 1;
            x = n;
        }
        assert_eq!(count, self.len());
        for level in 1..MAX_HEIGHT {
            let mut x = self.head;
            while let Some(n) = x.next(level) {
                assert!(level < n.height());
                if x != self.head {
                    assert_eq!(self.cmp.compare(x.entry(), n.entry()), Ordering::Less);
                }
                assert!(
                    self.contains(n.entry()),
                    "upper level node missing from level 0"
                );
                x = n;
            }
            if level >= self.max_height.load(MemOrder::Relaxed) {
                assert!(self.head.next(level).is_none(), "node above max height");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Iteration.

/// Something that keeps a [`SkipList`] alive and gives access to it, for
/// iterators that must not borrow (e.g. one owning an `Arc` of a memtable).
///
/// # Safety
/// [`list`](ListHandle::list) must return the same list, at the same address,
/// on every call for as long as the handle exists, and the list must not be
/// dropped before the handle: iterators keep pointers into it across calls.
pub unsafe trait ListHandle {
    /// The list's comparator.
    type Cmp: KeyComparator;
    /// The list.
    fn list(&self) -> &SkipList<Self::Cmp>;
}

// SAFETY: a shared reference always designates the same live list.
unsafe impl<C: KeyComparator> ListHandle for &SkipList<C> {
    type Cmp = C;
    #[inline]
    fn list(&self) -> &SkipList<C> {
        self
    }
}

// SAFETY: an `Arc` keeps its value alive and at a fixed address.
unsafe impl<C: KeyComparator> ListHandle for Arc<SkipList<C>> {
    type Cmp = C;
    #[inline]
    fn list(&self) -> &SkipList<C> {
        self
    }
}

/// A bidirectional cursor over a list's entries. It sees entries inserted
/// concurrently if they land ahead of it.
pub struct Iter<H: ListHandle> {
    handle: H,
    node: Option<Node>,
}

// SAFETY: the iterator holds a handle that keeps the list alive and a pointer
// to one of its nodes; the list is `Sync` (reads are lock-free and safe from
// any thread), so moving the cursor to another thread is sound.
unsafe impl<H: ListHandle + Send> Send for Iter<H> {}

impl<H: ListHandle> Iter<H> {
    /// An unpositioned (invalid) iterator over the handle's list.
    pub fn new(handle: H) -> Iter<H> {
        Iter { handle, node: None }
    }

    /// True when positioned on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.node.is_some()
    }

    /// The current entry; empty when not valid.
    #[inline]
    pub fn entry(&self) -> &[u8] {
        // The handle keeps the list, and so the node, alive while `self` is
        // borrowed (ListHandle contract).
        self.node.map_or(&[], Node::entry)
    }

    /// Moves to the next entry (invalid past the end). No-op when invalid.
    ///
    /// Nodes sit in the arena in the order they were inserted, not in key
    /// order, so each step of a scan would wait for memory: the step also
    /// asks for the node after the new one, which the next step then finds
    /// on its way.
    #[inline]
    pub fn next(&mut self) {
        if let Some(n) = self.node {
            self.node = n.next(0);
            if let Some(after) = self.node.and_then(|m| m.next(0)) {
                prefetch_lines(after.as_ptr(), NODE_PREFETCH_LINES);
            }
        }
    }

    /// Moves to the previous entry (invalid before the first). No-op when invalid.
    /// Like `next`, asks for the node before the new one (by its hint).
    #[inline]
    pub fn prev(&mut self) {
        if let Some(n) = self.node {
            let list = self.handle.list();
            let p = list.predecessor(n);
            self.node = if p == list.head {
                None
            } else {
                if let Some(before) = p.prev_hint() {
                    prefetch_lines(before.as_ptr(), NODE_PREFETCH_LINES);
                }
                Some(p)
            };
        }
    }

    #[cfg(test)]
    /// Positions at the first entry `>= target`.
    #[inline]
    pub fn seek(&mut self, target: &[u8]) {
        let list = self.handle.list();
        self.node = list.find_greater_or_equal(&list.cmp.decode(target));
    }

    /// Positions at the first entry `>= key`, for an already decoded key.
    #[inline]
    pub fn seek_key(&mut self, key: &<H::Cmp as KeyComparator>::Key<'_>) {
        self.node = self.handle.list().find_greater_or_equal(key);
    }

    #[cfg(test)]
    /// Positions at the last entry `< target`.
    #[inline]
    pub fn seek_for_prev_exclusive(&mut self, target: &[u8]) {
        let list = self.handle.list();
        let p = list.find_less_than(&list.cmp.decode(target));
        self.node = if p == list.head { None } else { Some(p) };
    }

    /// Positions at the first entry.
    #[inline]
    pub fn seek_to_first(&mut self) {
        self.node = self.handle.list().first();
    }

    /// Positions at the last entry.
    #[inline]
    pub fn seek_to_last(&mut self) {
        let list = self.handle.list();
        let last = list.find_last();
        self.node = if last == list.head { None } else { Some(last) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    fn new_list() -> SkipList<BytewiseComparator> {
        SkipList::new(BytewiseComparator)
    }

    fn key(n: u64) -> [u8; 8] {
        n.to_be_bytes()
    }

    #[test]
    fn empty_list() {
        let list = new_list();
        assert!(list.is_empty());
        assert_eq!(list.len(), 0);
        assert!(!list.contains(b"x"));
        assert_eq!(list.first_at_or_after(b""), None);
        let mut it = list.iter();
        assert!(!it.valid());
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(b"anything");
        assert!(!it.valid());
        assert_eq!(it.entry(), b"");
        list.check_invariants();
    }

    #[test]
    fn heights_are_bounded_and_geometric() {
        let n = if cfg!(miri) { 200 } else { 100_000 };
        let mut counts = [0usize; MAX_HEIGHT + 1];
        for _ in 0..n {
            let h = random_height();
            assert!((1..=MAX_HEIGHT).contains(&h));
            counts[h] += 1;
        }
        if !cfg!(miri) {
            // About 3/4 of nodes have height 1, 3/16 height 2.
            assert!(
                counts[1] > n * 70 / 100 && counts[1] < n * 80 / 100,
                "{counts:?}"
            );
            assert!(
                counts[2] > n * 15 / 100 && counts[2] < n * 22 / 100,
                "{counts:?}"
            );
        }
    }

    /// A bytewise order that counts its comparisons.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl KeyComparator for Counting {
        type Key<'a> = &'a [u8];
        fn decode<'a>(&self, key: &'a [u8]) -> &'a [u8] {
            key
        }
        fn compare_key(&self, entry: &[u8], key: &&[u8]) -> Ordering {
            self.0.fetch_add(1, MemOrder::Relaxed);
            entry.cmp(key)
        }
    }

    /// An ascending run of inserts finds its place from the previous
    /// insert's splice in a couple of comparisons, instead of a search from
    /// the head (about 2 log2(n) comparisons).
    #[test]
    fn ascending_inserts_use_the_last_splice() {
        let n = if cfg!(miri) { 300 } else { 20_000 };
        let list = SkipList::new(Counting::default());
        for i in 0..n {
            assert!(list.insert(&key(i * 2)));
        }
        let per_insert = list.comparator().0.load(MemOrder::Relaxed) as f64 / n as f64;
        assert!(per_insert < 4.0, "{per_insert} comparisons per insert");
        list.check_invariants();

        // Random keys (here: the gaps) still go in at the right place, and a
        // later ascending run is fast again.
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..n / 4 {
            list.insert(&key(rng.gen_range(0..n) * 2 + 1));
        }
        list.check_invariants();
        let before = list.comparator().0.load(MemOrder::Relaxed);
        for i in 0..n {
            assert!(list.insert(&key(4 * n + i)));
        }
        let per_insert = (list.comparator().0.load(MemOrder::Relaxed) - before) as f64 / n as f64;
        assert!(per_insert < 5.0, "{per_insert} comparisons per insert");
        list.check_invariants();
    }

    /// Runs that ascend, descend, jump back and repeat keys, mixed, agree
    /// with a model: the splice is only a starting point, never trusted.
    #[test]
    fn splice_survives_mixed_insert_orders() {
        let seed = 99;
        let mut rng = StdRng::seed_from_u64(seed);
        let list = new_list();
        let mut model = BTreeSet::new();
        let rounds = if cfg!(miri) { 20 } else { 400 };
        for _ in 0..rounds {
            let start = rng.gen_range(0..5_000u64);
            let len = rng.gen_range(1..40u64);
            let descending = rng.gen_bool(0.3);
            for j in 0..len {
                let k = if descending {
                    start + len - j
                } else {
                    start + j
                };
                let fresh = model.insert(k);
                assert_eq!(list.insert(&key(k)), fresh, "seed {seed}, key {k}");
            }
        }
        list.check_invariants();
        let mut it = list.iter();
        it.seek_to_first();
        for k in &model {
            assert!(it.valid());
            assert_eq!(it.entry(), key(*k));
            it.next();
        }
        assert!(!it.valid());
    }

    /// Inserts random keys and compares lookups, full scans both ways and
    /// seeks with a `BTreeSet` holding the same keys.
    #[test]
    fn insert_and_lookup_match_model() {
        let seed = 301;
        let (n, range) = if cfg!(miri) {
            (150, 500)
        } else {
            (5000, 20_000)
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let list = new_list();
        let mut model = BTreeSet::new();
        for _ in 0..n {
            let k = key(rng.gen_range(0..range));
            let inserted = list.insert(&k);
            assert_eq!(
                inserted,
                model.insert(k),
                "seed {seed}: duplicate detection"
            );
        }
        assert_eq!(list.len(), model.len());
        list.check_invariants();

        for i in 0..range {
            let k = key(i);
            assert_eq!(
                list.contains(&k),
                model.contains(&k),
                "seed {seed}: contains {i}"
            );
        }

        // Forward scan.
        let mut it = list.iter();
        it.seek_to_first();
        for k in &model {
            assert!(it.valid());
            assert_eq!(it.entry(), k);
            it.next();
        }
        assert!(!it.valid());

        // Backward scan.
        it.seek_to_last();
        for k in model.iter().rev() {
            assert!(it.valid());
            assert_eq!(it.entry(), k);
            it.prev();
        }
        assert!(!it.valid());

        // Seeks, with a few steps in both directions from each.
        for i in (0..range + 5).step_by(7) {
            let target = key(i);
            it.seek(&target);
            let mut expect = model.range(target..);
            for _ in 0..3 {
                match expect.next() {
                    Some(k) => {
                        assert!(it.valid(), "seed {seed}: seek {i}");
                        assert_eq!(it.entry(), k);
                        it.next();
                    }
                    None => assert!(!it.valid()),
                }
            }
            it.seek(&target);
            let mut before = model.range(..target).rev();
            if it.valid() {
                for k in before.by_ref().take(3) {
                    it.prev();
                    assert!(it.valid());
                    assert_eq!(it.entry(), k);
                }
            }
            it.seek_for_prev_exclusive(&target);
            assert_eq!(
                it.valid().then(|| it.entry().to_vec()),
                model.range(..target).next_back().map(|k| k.to_vec())
            );
        }
    }

    #[test]
    fn prev_from_first_is_invalid() {
        let list = new_list();
        for k in [b"b", b"a", b"c"] {
            list.insert(k);
        }
        let mut it = list.iter();
        it.seek_to_first();
        assert_eq!(it.entry(), b"a");
        it.prev();
        assert!(!it.valid());
        it.prev(); // no-op when invalid
        assert!(!it.valid());
        it.seek_to_last();
        assert_eq!(it.entry(), b"c");
        it.next();
        assert!(!it.valid());
    }

    #[test]
    fn reverse_step_follows_hints_updated_by_later_inserts() {
        // Insert in an order that keeps putting new nodes right before
        // existing ones, so hints must be refreshed for prev to be exact.
        let list = new_list();
        for i in (0..64u64).rev() {
            list.insert(&key(i * 2));
        }
        for i in 0..64u64 {
            list.insert(&key(i * 2 + 1));
        }
        list.check_invariants();
        let mut it = list.iter();
        it.seek_to_last();
        for i in (0..128u64).rev() {
            assert_eq!(it.entry(), key(i));
            it.prev();
        }
        assert!(!it.valid());
    }

    #[test]
    fn stale_or_missing_hint_still_finds_predecessor() {
        let list = new_list();
        for i in 0..40u64 {
            list.insert(&key(i));
        }
        // Make hints stale (point far back) or null, as racing inserts could.
        let nodes: Vec<Node> = {
            let mut v = Vec::new();
            let mut x = list.head;
            while let Some(n) = x.next(0) {
                v.push(n);
                x = n;
            }
            v
        };
        for (i, n) in nodes.iter().enumerate() {
            let hint = match i % 3 {
                0 => ptr::null_mut(),
                1 => list.head.as_ptr(),
                _ => nodes[i / 2].as_ptr(),
            };
            if hint != n.as_ptr() {
                n.prev_slot().store(hint, MemOrder::Release);
            }
        }
        let mut it = list.iter();
        it.seek_to_last();
        for i in (0..40u64).rev() {
            assert!(it.valid());
            assert_eq!(it.entry(), key(i));
            it.prev();
        }
        assert!(!it.valid());
    }

    #[test]
    fn entries_of_many_sizes_round_trip() {
        let list = new_list();
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 7, 8, 9, 1500, 5000]
        } else {
            &[
                0, 1, 7, 8, 9, 63, 64, 65, 1000, 1023, 1024, 1025, 4096, 100_000,
            ]
        };
        for (i, &len) in sizes.iter().enumerate() {
            let mut e = vec![i as u8 + 1; len];
            e.insert(0, i as u8);
            list.insert_with(e.len(), |w| w.put(&e));
        }
        let mut it = list.iter();
        it.seek_to_first();
        for (i, &len) in sizes.iter().enumerate() {
            let e = it.entry();
            assert_eq!(e.len(), len + 1);
            assert_eq!(e[0], i as u8);
            assert!(e[1..].iter().all(|&b| b == i as u8 + 1));
            it.next();
        }
        list.check_invariants();
    }

    #[test]
    fn entry_writer_cuts_long_writes_and_zeroes_short_ones() {
        let list = new_list();
        // Large entries (their own arena block, not zeroed) and small ones.
        for (first, len) in [(1u8, 3000usize), (2, 40), (3, 2500), (4, 8)] {
            list.insert_with(len, |w| {
                w.put(&[first]);
                w.put_varint32(300);
                assert_eq!(w.written(), 3);
                w.put(&vec![0xee; len / 2]);
            });
        }
        // Past its length a write is cut off.
        list.insert_with(4, |w| w.put(&[5, 6, 7, 8, 9, 10]));
        let mut it = list.iter();
        it.seek_to_first();
        for (first, len) in [(1u8, 3000usize), (2, 40), (3, 2500), (4, 8)] {
            let e = it.entry();
            assert_eq!(e.len(), len);
            assert_eq!(&e[..3], &[first, 0xac, 0x02]);
            let filled = (len / 2).min(len - 3);
            assert!(e[3..3 + filled].iter().all(|&b| b == 0xee));
            assert!(
                e[3 + filled..].iter().all(|&b| b == 0),
                "unwritten bytes are zero"
            );
            it.next();
        }
        assert_eq!(it.entry(), &[5, 6, 7, 8]);
        list.check_invariants();
    }

    #[test]
    fn memory_usage_grows() {
        let list = new_list();
        let start = list.memory_usage();
        let n = if cfg!(miri) { 200 } else { 10_000 };
        for i in 0..n {
            list.insert(&key(i));
        }
        let usage = list.memory_usage();
        assert!(usage > start, "{usage}");
        assert!(
            usage >= n as usize * (8 + 8 + 16),
            "holds entries, links and headers: {usage}"
        );
    }

    #[test]
    fn owned_iterator_through_arc() {
        let list = Arc::new(new_list());
        list.insert(b"k1");
        list.insert(b"k2");
        let mut it = Iter::new(Arc::clone(&list));
        drop(list);
        it.seek_to_last();
        assert_eq!(it.entry(), b"k2");
        it.prev();
        assert_eq!(it.entry(), b"k1");
        let moved = std::thread::spawn(move || {
            it.next();
            it.entry().to_vec()
        })
        .join()
        .unwrap();
        assert_eq!(moved, b"k2");
    }

    /// Writers insert concurrently — two on disjoint ranges, two on the same
    /// interleaved range (so they race on duplicates) — while readers scan
    /// forward and backward, checking order, no repeats, and that what they
    /// saw never shrinks.
    #[test]
    fn concurrent_inserts_and_scans() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Barrier;

        let (per_writer, readers) = if cfg!(miri) {
            (40u64, 1)
        } else {
            (25_000u64, 2)
        };
        let list = Arc::new(new_list());
        let done = Arc::new(AtomicBool::new(false));
        let barrier = Arc::new(Barrier::new(4 + readers));
        let mut writers = Vec::new();
        for t in 0..4u64 {
            let list = Arc::clone(&list);
            let barrier = Arc::clone(&barrier);
            writers.push(std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(1000 + t);
                barrier.wait();
                let mut inserted = 0u64;
                for i in 0..per_writer {
                    let k = match t {
                        // Disjoint ranges, ascending and random.
                        0 => i * 4,
                        1 => rng.gen_range(0..per_writer) * 4 + 1,
                        // Both write every odd-2 key, in different orders.
                        2 => i * 4 + 2,
                        _ => (per_writer - 1 - i) * 4 + 2,
                    };
                    if list.insert(&key(k)) {
                        inserted += 1;
                    }
                }
                inserted
            }));
        }
        let mut scanners = Vec::new();
        for r in 0..readers {
            let list = Arc::clone(&list);
            let done = Arc::clone(&done);
            let barrier = Arc::clone(&barrier);
            scanners.push(std::thread::spawn(move || {
                barrier.wait();
                let mut last_count = 0;
                let mut passes = 0;
                loop {
                    let finished = done.load(MemOrder::Acquire);
                    let backward = (passes + r) % 2 == 1;
                    let mut it = list.iter();
                    let mut count = 0usize;
                    let mut last: Option<Vec<u8>> = None;
                    if backward {
                        it.seek_to_last();
                    } else {
                        it.seek_to_first();
                    }
                    while it.valid() {
                        let e = it.entry().to_vec();
                        if let Some(l) = &last {
                            let expected = if backward {
                                Ordering::Greater
                            } else {
                                Ordering::Less
                            };
                            assert_eq!(l.as_slice().cmp(&e), expected, "order or repeat");
                        }
                        last = Some(e);
                        count += 1;
                        if backward {
                            it.prev();
                        } else {
                            it.next();
                        }
                    }
                    assert!(
                        count >= last_count,
                        "a scan saw fewer entries than an earlier one"
                    );
                    last_count = count;
                    passes += 1;
                    if finished {
                        return (passes, last_count);
                    }
                }
            }));
        }
        let inserted: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        done.store(true, MemOrder::Release);
        for s in scanners {
            let (passes, final_count) = s.join().unwrap();
            assert!(passes >= 1);
            assert_eq!(final_count, list.len());
        }
        // Writer 2 and 3 raced on the same keys: each key went in exactly once.
        assert_eq!(inserted[0], per_writer);
        assert_eq!(inserted[2] + inserted[3], per_writer);
        let mut model = BTreeSet::new();
        let mut rng = StdRng::seed_from_u64(1001);
        for i in 0..per_writer {
            model.insert(key(i * 4));
            model.insert(key(rng.gen_range(0..per_writer) * 4 + 1));
            model.insert(key(i * 4 + 2));
        }
        assert_eq!(list.len(), model.len());
        list.check_invariants_with(false);
        let mut it = list.iter();
        it.seek_to_last();
        for k in model.iter().rev() {
            assert_eq!(it.entry(), k);
            it.prev();
        }
        assert!(!it.valid());
    }
}
