//! Filter policies: small per-table summaries of keys that let a read skip a
//! data block that cannot hold the key.

/// Builds and probes filters. The name is stored in each table's metaindex
/// (`filter.<name>`); a table whose filter has another name is read without it.
///
/// ```
/// use shale::{BloomFilterPolicy, FilterPolicy};
/// let policy = BloomFilterPolicy::new(10);
/// let mut filter = Vec::new();
/// policy.create_filter(&[b"apple", b"pear"], &mut filter);
/// assert!(policy.key_may_match(b"apple", &filter));
/// assert_eq!(policy.name(), "leveldb.BuiltinBloomFilter2");
///
/// // Used by setting `Options::filter_policy`.
/// let options = shale::Options {
///     filter_policy: Some(std::sync::Arc::new(policy)),
///     ..Default::default()
/// };
/// # drop(options);
/// ```
pub trait FilterPolicy: Send + Sync {
    /// The stored name, e.g. `leveldb.BuiltinBloomFilter2`.
    fn name(&self) -> &str;
    /// Appends a filter summarizing `keys` to `dst`.
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>);
    /// False only if `key` was certainly not among the keys of `filter`.
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool;

    /// Bits per key of the whole-table filter written beside this policy's
    /// filters (a bloom filter over all of a table's user keys, in a meta
    /// block of its own that LevelDB ignores, probed before the table's
    /// index), and whether such filters are read. `None`, the default: none
    /// are written or read. The built-in [`BloomFilterPolicy`](crate::BloomFilterPolicy)
    /// gives its own bits per key.
    fn whole_table_bits_per_key(&self) -> Option<usize> {
        None
    }

    /// The bits per key of Shale's built-in bloom filter, when the policy is
    /// that one: tables then make its filters from key hashes they compute
    /// once.
    #[doc(hidden)]
    fn builtin_bloom_bits_per_key(&self) -> Option<usize> {
        None
    }
}
