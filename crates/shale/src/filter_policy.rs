//! Filter policies: small per-table summaries of keys that let a read skip a
//! data block that cannot hold the key.

/// Builds and probes filters. The name is stored in each table's metaindex
/// (`filter.<name>`); a table whose filter has another name is read without it.
pub trait FilterPolicy: Send + Sync {
    /// The stored name, e.g. `leveldb.BuiltinBloomFilter2`.
    fn name(&self) -> &str;
    /// Appends a filter summarizing `keys` to `dst`.
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>);
    /// False only if `key` was certainly not among the keys of `filter`.
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool;
}
