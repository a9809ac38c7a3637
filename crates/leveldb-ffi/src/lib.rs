//! Raw declarations of the functions of LevelDB's C API (`leveldb/c.h`,
//! version 1.23) that Shale's compatibility tests (`shale-compat`) and
//! benchmark (`shale-bench`) call: one copy for both.
//!
//! The crate declares and does not link: each user links `libleveldb` in its
//! own build script (`shale-compat` always; `shale-bench` when its probe finds
//! the library, compiling its LevelDB engine out otherwise), so that a
//! missing library never fails a build that does not call it. Booleans are
//! `unsigned char` (`u8`) as in `c.h`.

#![no_std]
#![allow(non_camel_case_types, missing_docs)]

use core::ffi::{c_char, c_int, c_void};

/// `leveldb_no_compression` of `c.h`'s compression enum.
pub const NO_COMPRESSION: c_int = 0;
/// `leveldb_snappy_compression` of `c.h`'s compression enum.
pub const SNAPPY_COMPRESSION: c_int = 1;

macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}
opaque!(
    leveldb_t,
    leveldb_options_t,
    leveldb_readoptions_t,
    leveldb_writeoptions_t,
    leveldb_writebatch_t,
    leveldb_iterator_t,
    leveldb_cache_t,
    leveldb_filterpolicy_t
);

extern "C" {
    pub fn leveldb_open(
        options: *const leveldb_options_t,
        name: *const c_char,
        errptr: *mut *mut c_char,
    ) -> *mut leveldb_t;
    pub fn leveldb_close(db: *mut leveldb_t);
    pub fn leveldb_put(
        db: *mut leveldb_t,
        options: *const leveldb_writeoptions_t,
        key: *const c_char,
        keylen: usize,
        val: *const c_char,
        vallen: usize,
        errptr: *mut *mut c_char,
    );
    pub fn leveldb_delete(
        db: *mut leveldb_t,
        options: *const leveldb_writeoptions_t,
        key: *const c_char,
        keylen: usize,
        errptr: *mut *mut c_char,
    );
    pub fn leveldb_write(
        db: *mut leveldb_t,
        options: *const leveldb_writeoptions_t,
        batch: *mut leveldb_writebatch_t,
        errptr: *mut *mut c_char,
    );
    pub fn leveldb_get(
        db: *mut leveldb_t,
        options: *const leveldb_readoptions_t,
        key: *const c_char,
        keylen: usize,
        vallen: *mut usize,
        errptr: *mut *mut c_char,
    ) -> *mut c_char;
    pub fn leveldb_create_iterator(
        db: *mut leveldb_t,
        options: *const leveldb_readoptions_t,
    ) -> *mut leveldb_iterator_t;
    pub fn leveldb_property_value(db: *mut leveldb_t, propname: *const c_char) -> *mut c_char;
    pub fn leveldb_compact_range(
        db: *mut leveldb_t,
        start_key: *const c_char,
        start_key_len: usize,
        limit_key: *const c_char,
        limit_key_len: usize,
    );

    pub fn leveldb_iter_destroy(it: *mut leveldb_iterator_t);
    pub fn leveldb_iter_valid(it: *const leveldb_iterator_t) -> u8;
    pub fn leveldb_iter_seek_to_first(it: *mut leveldb_iterator_t);
    pub fn leveldb_iter_seek_to_last(it: *mut leveldb_iterator_t);
    pub fn leveldb_iter_seek(it: *mut leveldb_iterator_t, k: *const c_char, klen: usize);
    pub fn leveldb_iter_next(it: *mut leveldb_iterator_t);
    pub fn leveldb_iter_prev(it: *mut leveldb_iterator_t);
    pub fn leveldb_iter_key(it: *const leveldb_iterator_t, klen: *mut usize) -> *const c_char;
    pub fn leveldb_iter_value(it: *const leveldb_iterator_t, vlen: *mut usize) -> *const c_char;
    pub fn leveldb_iter_get_error(it: *const leveldb_iterator_t, errptr: *mut *mut c_char);

    pub fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t;
    pub fn leveldb_writebatch_destroy(b: *mut leveldb_writebatch_t);
    pub fn leveldb_writebatch_clear(b: *mut leveldb_writebatch_t);
    pub fn leveldb_writebatch_put(
        b: *mut leveldb_writebatch_t,
        key: *const c_char,
        klen: usize,
        val: *const c_char,
        vlen: usize,
    );
    pub fn leveldb_writebatch_delete(b: *mut leveldb_writebatch_t, key: *const c_char, klen: usize);

    pub fn leveldb_options_create() -> *mut leveldb_options_t;
    pub fn leveldb_options_destroy(o: *mut leveldb_options_t);
    pub fn leveldb_options_set_filter_policy(
        o: *mut leveldb_options_t,
        p: *mut leveldb_filterpolicy_t,
    );
    pub fn leveldb_options_set_create_if_missing(o: *mut leveldb_options_t, v: u8);
    pub fn leveldb_options_set_paranoid_checks(o: *mut leveldb_options_t, v: u8);
    pub fn leveldb_options_set_write_buffer_size(o: *mut leveldb_options_t, v: usize);
    pub fn leveldb_options_set_max_open_files(o: *mut leveldb_options_t, v: c_int);
    pub fn leveldb_options_set_cache(o: *mut leveldb_options_t, c: *mut leveldb_cache_t);
    pub fn leveldb_options_set_block_size(o: *mut leveldb_options_t, v: usize);
    pub fn leveldb_options_set_block_restart_interval(o: *mut leveldb_options_t, v: c_int);
    pub fn leveldb_options_set_max_file_size(o: *mut leveldb_options_t, v: usize);
    pub fn leveldb_options_set_compression(o: *mut leveldb_options_t, v: c_int);

    pub fn leveldb_filterpolicy_create_bloom(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    pub fn leveldb_filterpolicy_destroy(p: *mut leveldb_filterpolicy_t);

    pub fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t;
    pub fn leveldb_readoptions_destroy(o: *mut leveldb_readoptions_t);
    pub fn leveldb_readoptions_set_verify_checksums(o: *mut leveldb_readoptions_t, v: u8);
    pub fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t;
    pub fn leveldb_writeoptions_destroy(o: *mut leveldb_writeoptions_t);
    pub fn leveldb_writeoptions_set_sync(o: *mut leveldb_writeoptions_t, v: u8);

    pub fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t;
    pub fn leveldb_cache_destroy(c: *mut leveldb_cache_t);

    pub fn leveldb_free(ptr: *mut c_void);
    pub fn leveldb_major_version() -> c_int;
    pub fn leveldb_minor_version() -> c_int;
}
