//! A concurrent bump allocator that owns all of a memtable's memory.
//!
//! Memory comes in blocks of [`BLOCK_SIZE`] bytes; an allocation bumps an
//! atomic offset inside the current block, so threads allocating at the same
//! time never take a lock unless the block is full. Only then does one thread
//! take the mutex, check that nobody replaced the block meanwhile, and install
//! a fresh one. Requests larger than a quarter of a block get a block of their
//! own, so a large entry wastes no more than the tail of one small block.
//!
//! Invariants:
//! - Every returned pointer is aligned to [`ALIGN`] (8) bytes and the region it
//!   starts is disjoint from every other returned region. Sizes are rounded up
//!   to a multiple of 8, and every block's data starts 8-aligned.
//! - Regions from [`Arena::allocate`] are zero-initialised, so a caller may
//!   view a fresh one as `&mut [u8]`. [`Arena::allocate_uninit`] skips the
//!   zeroing of large requests (a value of 100 KB would otherwise be
//!   written twice): their bytes are uninitialised until the caller writes
//!   them, and must be treated as `MaybeUninit<u8>` until then.
//! - Memory is never freed or reused before the arena is dropped; pointers stay
//!   valid for the arena's whole life (the arena may move: blocks are separate
//!   heap allocations).
//! - [`Arena::memory_usage`] is a single atomic load.

use std::alloc::{alloc, alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Size of a regular block, header included.
pub const BLOCK_SIZE: usize = 4096;

/// Alignment of every allocation.
pub const ALIGN: usize = 8;

/// The header at the start of every regular block; the block's data follows it.
#[repr(C, align(8))]
struct BlockHeader {
    /// Bytes of the data area handed out (or reserved by a failed attempt: it
    /// may exceed `capacity`, which only means the block is full).
    used: AtomicUsize,
    /// Bytes in the data area.
    capacity: usize,
}

const HEADER_SIZE: usize = std::mem::size_of::<BlockHeader>();
const _: () = assert!(HEADER_SIZE.is_multiple_of(ALIGN));

/// Allocations above this size get a dedicated block.
const LARGE_THRESHOLD: usize = BLOCK_SIZE / 4;

/// A concurrent-safe bump allocator; see the module documentation.
pub struct Arena {
    /// The block small allocations are carved from. Always a live regular block.
    current: AtomicPtr<BlockHeader>,
    /// Every block (regular and dedicated) with its layout, for freeing. Held
    /// only while adding a block.
    blocks: Mutex<Vec<(NonNull<u8>, Layout)>>,
    /// Bytes obtained from the system, plus the bookkeeping vector.
    memory_usage: AtomicUsize,
}

// SAFETY: the arena hands out disjoint regions and only ever mutates shared
// state through atomics or under the mutex; the raw block pointers it stores
// are owned allocations that no other object frees.
unsafe impl Send for Arena {}
// SAFETY: as for `Send`: `allocate` is safe to call from many threads at once
// (atomic bump or mutex), and `memory_usage` is an atomic load.
unsafe impl Sync for Arena {}

impl Arena {
    /// An arena holding one empty block.
    pub fn new() -> Arena {
        let blocks = Vec::with_capacity(16);
        let bookkeeping = blocks.capacity() * std::mem::size_of::<(NonNull<u8>, Layout)>();
        let arena = Arena {
            current: AtomicPtr::new(ptr::null_mut()),
            blocks: Mutex::new(blocks),
            memory_usage: AtomicUsize::new(bookkeeping),
        };
        let mut blocks = arena.lock_blocks();
        let first = arena.new_regular_block(&mut blocks, 0);
        drop(blocks);
        arena.current.store(first, Ordering::Release);
        arena
    }

    #[cfg(test)]
    /// Allocates `size` bytes (`size` > 0), aligned to [`ALIGN`], zeroed.
    ///
    /// The region stays valid and is never handed out again until the arena is
    /// dropped. Safe to call from several threads at once.
    #[inline]
    pub fn allocate(&self, size: usize) -> NonNull<u8> {
        self.allocate_inner(size, true)
    }

    /// Like [`Arena::allocate`], but a large request (one that gets a block
    /// of its own) is not zeroed: the region's bytes are uninitialised, and
    /// the caller must write each byte before reading it. Small requests
    /// come from regular blocks and are zeroed anyway.
    #[inline]
    pub fn allocate_uninit(&self, size: usize) -> NonNull<u8> {
        self.allocate_inner(size, false)
    }

    #[inline]
    fn allocate_inner(&self, size: usize, zeroed: bool) -> NonNull<u8> {
        debug_assert!(size > 0);
        // Round up to keep every allocation aligned. A size this close to
        // usize::MAX cannot be allocated anyway.
        let size = match size.checked_add(ALIGN - 1) {
            Some(s) => s & !(ALIGN - 1),
            None => handle_alloc_error(Layout::new::<u8>()),
        };
        if size > LARGE_THRESHOLD {
            return self.allocate_dedicated(size, zeroed);
        }
        loop {
            let block = self.current.load(Ordering::Acquire);
            // SAFETY: `current` always points to a live regular block: it is set
            // in `new` before the arena is shared, replaced only by other live
            // blocks, and blocks are freed only in `drop` (which has `&mut self`).
            let header = unsafe { &*block };
            let offset = header.used.fetch_add(size, Ordering::Relaxed);
            // `used` only grows by at most LARGE_THRESHOLD per attempt and a
            // full block is replaced after one attempt per thread, so the sum
            // cannot overflow in practice; `checked_add` keeps it correct anyway.
            if offset
                .checked_add(size)
                .is_some_and(|end| end <= header.capacity)
            {
                // SAFETY: `offset + size <= capacity`, so the region lies inside the
                // block's data area, which starts HEADER_SIZE bytes into the block
                // allocation `block` points to (and has its provenance). The
                // fetch_add reserved [offset, offset + size) for this caller alone.
                let p = unsafe { block.cast::<u8>().add(HEADER_SIZE + offset) };
                // SAFETY: derived from a non-null block pointer by an in-bounds offset.
                return unsafe { NonNull::new_unchecked(p) };
            }
            if let Some(p) = self.replace_full_block(block, size) {
                return p;
            }
            // Another thread installed a new block first: bump in that one.
        }
    }

    /// Bytes of memory held by the arena. An atomic load.
    #[inline]
    pub fn memory_usage(&self) -> usize {
        self.memory_usage.load(Ordering::Relaxed)
    }

    /// Installs a new current block in place of `full`, with the first `size`
    /// bytes reserved for the caller, unless another thread already replaced
    /// `full` (then returns `None` and the caller retries).
    #[cold]
    fn replace_full_block(&self, full: *mut BlockHeader, size: usize) -> Option<NonNull<u8>> {
        let mut blocks = self.lock_blocks();
        if self.current.load(Ordering::Acquire) != full {
            return None;
        }
        let block = self.new_regular_block(&mut blocks, size);
        self.current.store(block, Ordering::Release);
        // SAFETY: the data area starts HEADER_SIZE bytes into the fresh block,
        // and `size <= LARGE_THRESHOLD < capacity` bytes of it were reserved for
        // us by initialising `used` to `size`.
        Some(unsafe { NonNull::new_unchecked(block.cast::<u8>().add(HEADER_SIZE)) })
    }

    /// A dedicated block for one large allocation, zeroed or not.
    #[cold]
    fn allocate_dedicated(&self, size: usize, zeroed: bool) -> NonNull<u8> {
        let layout = match Layout::from_size_align(size, ALIGN) {
            Ok(l) => l,
            Err(_) => handle_alloc_error(Layout::new::<u8>()),
        };
        let p = Self::system_alloc(layout, zeroed);
        let mut blocks = self.lock_blocks();
        self.record_block(&mut blocks, p, layout);
        p
    }

    /// Allocates and initialises a regular block whose first `reserved` bytes
    /// are taken, recording it for freeing.
    fn new_regular_block(
        &self,
        blocks: &mut Vec<(NonNull<u8>, Layout)>,
        reserved: usize,
    ) -> *mut BlockHeader {
        let layout = match Layout::from_size_align(BLOCK_SIZE, ALIGN) {
            Ok(l) => l,
            // BLOCK_SIZE and ALIGN are valid constants.
            Err(_) => unreachable!("block layout constants are valid"),
        };
        let p = Self::system_alloc(layout, true);
        let header = p.as_ptr().cast::<BlockHeader>();
        // SAFETY: `p` is a fresh allocation of BLOCK_SIZE bytes aligned to 8,
        // large enough and aligned for the header, and not yet shared.
        unsafe {
            header.write(BlockHeader {
                used: AtomicUsize::new(reserved),
                capacity: BLOCK_SIZE - HEADER_SIZE,
            })
        };
        self.record_block(blocks, p, layout);
        header
    }

    fn record_block(
        &self,
        blocks: &mut Vec<(NonNull<u8>, Layout)>,
        p: NonNull<u8>,
        layout: Layout,
    ) {
        let old_capacity = blocks.capacity();
        blocks.push((p, layout));
        let grown =
            (blocks.capacity() - old_capacity) * std::mem::size_of::<(NonNull<u8>, Layout)>();
        self.memory_usage
            .fetch_add(layout.size() + grown, Ordering::Relaxed);
    }

    fn system_alloc(layout: Layout, zeroed: bool) -> NonNull<u8> {
        // SAFETY: every layout passed here has a non-zero size.
        let p = unsafe {
            if zeroed {
                alloc_zeroed(layout)
            } else {
                alloc(layout)
            }
        };
        match NonNull::new(p) {
            Some(p) => p,
            None => handle_alloc_error(layout),
        }
    }

    fn lock_blocks(&self) -> std::sync::MutexGuard<'_, Vec<(NonNull<u8>, Layout)>> {
        // The vector stays consistent even if a holder panicked (push is the
        // only mutation), so a poisoned lock is safe to use.
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for Arena {
    fn default() -> Self {
        Arena::new()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let blocks = match self.blocks.get_mut() {
            Ok(b) => b,
            Err(e) => e.into_inner(),
        };
        for &(p, layout) in blocks.iter() {
            // SAFETY: each entry was allocated by `system_alloc` with exactly this
            // layout, and is freed once, here, when no reference into the arena
            // can remain (`&mut self`).
            unsafe { dealloc(p.as_ptr(), layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    fn fill(p: NonNull<u8>, len: usize, byte: u8) {
        // SAFETY: test regions come from `allocate(len)`, exclusively ours.
        unsafe { ptr::write_bytes(p.as_ptr(), byte, len) }
    }

    fn check(p: NonNull<u8>, len: usize, byte: u8) -> bool {
        // SAFETY: as in `fill`; the region is initialised (zeroed, then filled).
        let s = unsafe { std::slice::from_raw_parts(p.as_ptr(), len) };
        s.iter().all(|&b| b == byte)
    }

    #[test]
    fn allocations_are_aligned_zeroed_and_disjoint() {
        let arena = Arena::new();
        let sizes: Vec<usize> = if cfg!(miri) {
            vec![1, 7, 8, 13, 100, 1000, 1025, 3000, 5000, 1]
        } else {
            (0..2000).map(|i| 1 + (i * 7919) % 1500).collect()
        };
        let mut regions = Vec::new();
        for (i, &len) in sizes.iter().enumerate() {
            let p = arena.allocate(len);
            assert_eq!(p.as_ptr() as usize % ALIGN, 0, "allocation {i} misaligned");
            assert!(check(p, len, 0), "allocation {i} not zeroed");
            fill(p, len, i as u8);
            regions.push((p, len, i as u8));
        }
        for (i, &(p, len, byte)) in regions.iter().enumerate() {
            assert!(check(p, len, byte), "allocation {i} was overwritten");
        }
    }

    #[test]
    fn uninit_allocations_are_aligned_and_disjoint_once_written() {
        let arena = Arena::new();
        let sizes: &[usize] = &[1, 100, 1025, 3000, 5000, 8, 20_000];
        let mut regions = Vec::new();
        for (i, &len) in sizes.iter().enumerate() {
            let p = arena.allocate_uninit(len);
            assert_eq!(p.as_ptr() as usize % ALIGN, 0, "allocation {i} misaligned");
            // Written before it is read, as the contract asks.
            fill(p, len, i as u8 + 1);
            regions.push((p, len, i as u8 + 1));
        }
        for (i, &(p, len, byte)) in regions.iter().enumerate() {
            assert!(check(p, len, byte), "allocation {i} was overwritten");
        }
        assert!(arena.memory_usage() >= 1025 + 3000 + 5000 + 20_000);
    }

    #[test]
    fn memory_usage_counts_blocks() {
        let arena = Arena::new();
        let start = arena.memory_usage();
        assert!(start >= BLOCK_SIZE);
        arena.allocate(100);
        assert_eq!(arena.memory_usage(), start, "fits in the first block");
        arena.allocate(10_000);
        assert!(
            arena.memory_usage() >= start + 10_000,
            "large block counted"
        );
        let before = arena.memory_usage();
        for _ in 0..(BLOCK_SIZE / 512 + 1) {
            arena.allocate(512);
        }
        assert!(
            arena.memory_usage() >= before + BLOCK_SIZE,
            "new block counted"
        );
    }

    #[test]
    fn concurrent_allocations_are_disjoint() {
        let arena = Arc::new(Arena::new());
        let (threads, per_thread) = if cfg!(miri) { (3, 40) } else { (4, 20_000) };
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let arena = Arc::clone(&arena);
                std::thread::spawn(move || {
                    let mut mine = Vec::with_capacity(per_thread);
                    for i in 0..per_thread {
                        let len = 1 + (i * 31 + t * 17) % 300 + if i % 97 == 0 { 2000 } else { 0 };
                        let p = arena.allocate(len);
                        fill(p, len, t as u8 + 1);
                        mine.push((p, len));
                    }
                    for &(p, len) in &mine {
                        assert!(check(p, len, t as u8 + 1), "thread {t}: region overwritten");
                    }
                    // Only the addresses leave the thread, for the overlap check.
                    mine.iter()
                        .map(|&(p, len)| (p.as_ptr().addr(), len))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut starts = HashSet::new();
        let mut all: Vec<(usize, usize)> = Vec::new();
        for h in handles {
            for r in h.join().unwrap() {
                assert!(starts.insert(r.0), "address handed out twice");
                all.push(r);
            }
        }
        all.sort_unstable();
        for w in all.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "regions overlap");
        }
    }
}
