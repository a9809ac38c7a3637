//! Cache prefetch hints for bytes a reader is about to walk in an order the
//! hardware prefetcher does not follow.
//!
//! Five places use it, each measured (docs/benchmarks.md, "Scans: reading
//! ahead where the hardware does not" and "Scans over cached blocks"): a
//! block's backward run, decoded forward before its entries are handed out
//! last first; a compressed block about to be decompressed; and the block a
//! scan reads next, in the file while the scan reads blocks from the file,
//! in the block cache while it finds them there; and the memtable node after
//! the one a memtable iterator steps to.

/// Asks the CPU to start loading `bytes` into its caches, one request per
/// 64-byte line. A hint only: it never faults and changes no data.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for line in bytes.chunks(64) {
            // SAFETY: a prefetch reads nothing the program sees and never
            // faults, whatever the address; SSE, which provides it, is part
            // of every x86_64 CPU.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Asks the CPU to start loading the `lines` 64-byte lines from `start`, for
/// memory whose length is not known yet (a linked node whose header says
/// how long it is). Any address may be given: the addresses are only
/// computed, never dereferenced, and a prefetch never faults.
#[inline]
pub fn prefetch_lines(start: *const u8, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for i in 0..lines {
            // SAFETY: as in `prefetch`: the hint reads nothing the program
            // sees and never faults; `wrapping_add` computes the address
            // without the in-bounds requirement of `add`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(64 * i).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, lines);
}

#[cfg(test)]
mod tests {
    use super::{prefetch, prefetch_lines};

    #[test]
    fn prefetching_lines_anywhere_changes_nothing() {
        let bytes = vec![7u8; 300];
        prefetch_lines(bytes.as_ptr(), 5);
        prefetch_lines(bytes.as_ptr().wrapping_add(290), 3);
        prefetch_lines(std::ptr::null(), 2);
        prefetch_lines(usize::MAX as *const u8, 2);
        assert!(bytes.iter().all(|&b| b == 7));
    }

    #[test]
    fn prefetching_changes_nothing() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let copy = bytes.clone();
        prefetch(&bytes);
        prefetch(&bytes[999..]);
        prefetch(&[]);
        assert_eq!(bytes, copy);
    }
}
