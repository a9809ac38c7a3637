//! Cache prefetch hints for bytes a reader is about to walk in an order the
//! hardware prefetcher does not follow.
//!
//! Four places use it, each measured (docs/benchmarks.md, "Scans: reading
//! ahead where the hardware does not" and "Scans over cached blocks"): a
//! block's backward run, decoded forward before its entries are handed out
//! last first; a compressed block about to be decompressed; and the block a
//! scan reads next, in the file while the scan reads blocks from the file,
//! in the block cache while it finds them there.

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

#[cfg(test)]
mod tests {
    use super::prefetch;

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
