//! What the search aids of a block (`fences.rs`, `entry_index.rs`) read of
//! it: its bytes, its restart points and its entries. `Block` (`block.rs`)
//! implements it, and the aids are generic over it (static dispatch, one
//! instance), so that they sit below the block that holds them.

/// A parsed block's contents, as the search aids read them.
pub trait BlockEntries {
    /// The raw block contents.
    fn data(&self) -> &[u8];

    /// The number of restart points.
    fn num_restarts(&self) -> u32;

    /// The key stored at restart point `i` (restart entries store their key
    /// whole); `None` if `i` is out of range or the entry does not decode.
    fn restart_key(&self, i: u32) -> Option<&[u8]>;

    /// The unshared key bytes and the value of the entry at `offset`, if it
    /// decodes.
    fn entry_at(&self, offset: u32) -> Option<(&[u8], &[u8])>;

    /// Calls `f(offset, key_at, shared, key)` for every entry in order from
    /// restart point `restart` on, with the entry's offset, where its
    /// unshared key bytes start, how many leading bytes its key shares with
    /// the previous entry's, and its whole key; stops when `f` returns false.
    /// True when every entry decoded and `f` never stopped.
    fn for_each_entry(&self, restart: u32, f: impl FnMut(u32, usize, usize, &[u8]) -> bool)
        -> bool;
}
