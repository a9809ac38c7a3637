/*
 * shale/c.h - Shale's C API.
 *
 * Shale is an embedded ordered key-value store (an LSM tree) that reads and
 * writes LevelDB's on-disk format. This header declares the C API of
 * LevelDB 1.23 (the same 68 functions, names, signatures and semantics as
 * LevelDB's <leveldb/c.h>), implemented by libshale_c, and what Shale adds
 * to it. A program written for LevelDB's C API builds against this header
 * unchanged, and runs on libshale_c instead of libleveldb.
 *
 * Conventions (as LevelDB's):
 *  - Handles are opaque pointers, created and destroyed by these functions.
 *  - Keys and values are a pointer and a length: any bytes, zero bytes and
 *    zero lengths included (a zero-length key or value may be NULL).
 *  - Errors: every call that can fail takes `char** errptr` last. On entry
 *    `*errptr` is NULL or a message from this library. On success it is left
 *    as it is; on failure the old message is freed and `*errptr` set to a
 *    malloc()ed NUL-terminated message, written as LevelDB's status strings:
 *    "NotFound: ", "Corruption: ", "Not implemented: ", "Invalid argument: ",
 *    "IO error: ", followed by the detail (Shale adds file names and byte
 *    offsets). Release it with leveldb_free().
 *  - Booleans are uint8_t: 0 is false, anything else true.
 *  - Every `char*` returned is malloc()ed: release it with leveldb_free().
 *  - Pointer arguments must be non-NULL unless said otherwise. (Shale
 *    tolerates NULL handles, doing nothing or reporting "Invalid argument",
 *    but a portable program does not rely on it.)
 *  - Thread safety is LevelDB's: a database handle may be used from any
 *    number of threads at once; an iterator, write batch or options object
 *    by one thread at a time. Comparator and filter-policy callbacks are
 *    called from several threads, including a background one.
 *
 * Not provided (as in LevelDB's C API): getters for options, comparators
 * that shorten keys, custom environments, caches or loggers.
 */

#ifndef SHALE_C_H_
#define SHALE_C_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define SHALE_EXPORT __attribute__((visibility("default")))
#else
#define SHALE_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * LevelDB 1.23's API. Skipped when LevelDB's own <leveldb/c.h> was included
 * first (its declarations are the same); including LevelDB's header after
 * this one is a no-op, since its include guard is defined here.
 * ---------------------------------------------------------------------- */
#ifndef STORAGE_LEVELDB_INCLUDE_C_H_
#define STORAGE_LEVELDB_INCLUDE_C_H_

typedef struct leveldb_t leveldb_t;
typedef struct leveldb_cache_t leveldb_cache_t;
typedef struct leveldb_comparator_t leveldb_comparator_t;
typedef struct leveldb_env_t leveldb_env_t;
typedef struct leveldb_filelock_t leveldb_filelock_t;
typedef struct leveldb_filterpolicy_t leveldb_filterpolicy_t;
typedef struct leveldb_iterator_t leveldb_iterator_t;
typedef struct leveldb_logger_t leveldb_logger_t;
typedef struct leveldb_options_t leveldb_options_t;
typedef struct leveldb_randomfile_t leveldb_randomfile_t;
typedef struct leveldb_readoptions_t leveldb_readoptions_t;
typedef struct leveldb_seqfile_t leveldb_seqfile_t;
typedef struct leveldb_snapshot_t leveldb_snapshot_t;
typedef struct leveldb_writablefile_t leveldb_writablefile_t;
typedef struct leveldb_writebatch_t leveldb_writebatch_t;
typedef struct leveldb_writeoptions_t leveldb_writeoptions_t;

/* --- Databases --------------------------------------------------------- */

/* Opens (or, with create_if_missing, creates) the database in directory
   `name`. Returns NULL and sets *errptr on failure, e.g.
   "Invalid argument: <name>: does not exist (create_if_missing is false)"
   or "IO error: lock <name>/LOCK: ..." when it is already open. */
SHALE_EXPORT leveldb_t* leveldb_open(const leveldb_options_t* options,
                                     const char* name, char** errptr);

/* Closes the database and frees the handle. */
SHALE_EXPORT void leveldb_close(leveldb_t* db);

SHALE_EXPORT void leveldb_put(leveldb_t* db,
                              const leveldb_writeoptions_t* options,
                              const char* key, size_t keylen,
                              const char* val, size_t vallen, char** errptr);

SHALE_EXPORT void leveldb_delete(leveldb_t* db,
                                 const leveldb_writeoptions_t* options,
                                 const char* key, size_t keylen,
                                 char** errptr);

/* Applies every update of the batch atomically. */
SHALE_EXPORT void leveldb_write(leveldb_t* db,
                                const leveldb_writeoptions_t* options,
                                leveldb_writebatch_t* batch, char** errptr);

/* The value of `key`: a malloc()ed copy (release with leveldb_free) whose
   length is stored in *vallen, or NULL (and *vallen 0) when the key is
   absent or on error. */
SHALE_EXPORT char* leveldb_get(leveldb_t* db,
                               const leveldb_readoptions_t* options,
                               const char* key, size_t keylen,
                               size_t* vallen, char** errptr);

/* A new iterator, not yet positioned. Destroy it with leveldb_iter_destroy
   before closing the database. */
SHALE_EXPORT leveldb_iterator_t* leveldb_create_iterator(
    leveldb_t* db, const leveldb_readoptions_t* options);

SHALE_EXPORT const leveldb_snapshot_t* leveldb_create_snapshot(leveldb_t* db);

SHALE_EXPORT void leveldb_release_snapshot(leveldb_t* db,
                                           const leveldb_snapshot_t* snapshot);

/* A malloc()ed NUL-terminated value, or NULL for an unknown property.
   Properties: "leveldb.num-files-at-level<N>", "leveldb.stats",
   "leveldb.sstables", "leveldb.approximate-memory-usage", and Shale's own
   (see SHALE_PROPERTY_* below). */
SHALE_EXPORT char* leveldb_property_value(leveldb_t* db, const char* propname);

/* For each of `num_ranges` ranges [start, limit), the approximate number of
   bytes of table files its keys take, into sizes[i]. */
SHALE_EXPORT void leveldb_approximate_sizes(
    leveldb_t* db, int num_ranges, const char* const* range_start_key,
    const size_t* range_start_key_len, const char* const* range_limit_key,
    const size_t* range_limit_key_len, uint64_t* sizes);

/* Compacts the key range [start, limit]; a NULL key means "from the first"
   or "to the last" key. */
SHALE_EXPORT void leveldb_compact_range(leveldb_t* db, const char* start_key,
                                        size_t start_key_len,
                                        const char* limit_key,
                                        size_t limit_key_len);

/* --- Management -------------------------------------------------------- */

/* Deletes the database's files (and its directory when that is left
   empty). */
SHALE_EXPORT void leveldb_destroy_db(const leveldb_options_t* options,
                                     const char* name, char** errptr);

/* Rebuilds a damaged database's MANIFEST from the files it finds, keeping
   what can be read. */
SHALE_EXPORT void leveldb_repair_db(const leveldb_options_t* options,
                                    const char* name, char** errptr);

/* --- Iterators ---------------------------------------------------------
   key/value return pointers into the iterator, valid until it moves or is
   destroyed; both require leveldb_iter_valid (Shale returns NULL with a
   length of 0 otherwise). */

SHALE_EXPORT void leveldb_iter_destroy(leveldb_iterator_t*);
SHALE_EXPORT uint8_t leveldb_iter_valid(const leveldb_iterator_t*);
SHALE_EXPORT void leveldb_iter_seek_to_first(leveldb_iterator_t*);
SHALE_EXPORT void leveldb_iter_seek_to_last(leveldb_iterator_t*);
/* Positions at the first key >= k. */
SHALE_EXPORT void leveldb_iter_seek(leveldb_iterator_t*, const char* k,
                                    size_t klen);
SHALE_EXPORT void leveldb_iter_next(leveldb_iterator_t*);
SHALE_EXPORT void leveldb_iter_prev(leveldb_iterator_t*);
SHALE_EXPORT const char* leveldb_iter_key(const leveldb_iterator_t*,
                                          size_t* klen);
SHALE_EXPORT const char* leveldb_iter_value(const leveldb_iterator_t*,
                                            size_t* vlen);
/* Sets *errptr if the iterator stopped on an error (e.g. corruption). */
SHALE_EXPORT void leveldb_iter_get_error(const leveldb_iterator_t*,
                                         char** errptr);

/* --- Write batches ----------------------------------------------------- */

SHALE_EXPORT leveldb_writebatch_t* leveldb_writebatch_create(void);
SHALE_EXPORT void leveldb_writebatch_destroy(leveldb_writebatch_t*);
SHALE_EXPORT void leveldb_writebatch_clear(leveldb_writebatch_t*);
SHALE_EXPORT void leveldb_writebatch_put(leveldb_writebatch_t*,
                                         const char* key, size_t klen,
                                         const char* val, size_t vlen);
SHALE_EXPORT void leveldb_writebatch_delete(leveldb_writebatch_t*,
                                            const char* key, size_t klen);
/* Calls put or deleted for each update in the batch, in order. */
SHALE_EXPORT void leveldb_writebatch_iterate(
    const leveldb_writebatch_t*, void* state,
    void (*put)(void*, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void*, const char* k, size_t klen));
/* Appends a copy of source's updates to destination. */
SHALE_EXPORT void leveldb_writebatch_append(
    leveldb_writebatch_t* destination, const leveldb_writebatch_t* source);

/* --- Options ----------------------------------------------------------- */

SHALE_EXPORT leveldb_options_t* leveldb_options_create(void);
SHALE_EXPORT void leveldb_options_destroy(leveldb_options_t*);
SHALE_EXPORT void leveldb_options_set_comparator(leveldb_options_t*,
                                                 leveldb_comparator_t*);
/* NULL: no filter. */
SHALE_EXPORT void leveldb_options_set_filter_policy(leveldb_options_t*,
                                                    leveldb_filterpolicy_t*);
SHALE_EXPORT void leveldb_options_set_create_if_missing(leveldb_options_t*,
                                                        uint8_t);
SHALE_EXPORT void leveldb_options_set_error_if_exists(leveldb_options_t*,
                                                      uint8_t);
SHALE_EXPORT void leveldb_options_set_paranoid_checks(leveldb_options_t*,
                                                      uint8_t);
/* Accepted and ignored: Shale always uses the POSIX file system. */
SHALE_EXPORT void leveldb_options_set_env(leveldb_options_t*, leveldb_env_t*);
/* Accepted and ignored: Shale writes its LOG file itself. */
SHALE_EXPORT void leveldb_options_set_info_log(leveldb_options_t*,
                                               leveldb_logger_t*);
SHALE_EXPORT void leveldb_options_set_write_buffer_size(leveldb_options_t*,
                                                        size_t);
SHALE_EXPORT void leveldb_options_set_max_open_files(leveldb_options_t*, int);
/* NULL: a default 8 MiB cache of the database's own. */
SHALE_EXPORT void leveldb_options_set_cache(leveldb_options_t*,
                                            leveldb_cache_t*);
SHALE_EXPORT void leveldb_options_set_block_size(leveldb_options_t*, size_t);
SHALE_EXPORT void leveldb_options_set_block_restart_interval(
    leveldb_options_t*, int);
SHALE_EXPORT void leveldb_options_set_max_file_size(leveldb_options_t*,
                                                    size_t);

enum { leveldb_no_compression = 0, leveldb_snappy_compression = 1 };
SHALE_EXPORT void leveldb_options_set_compression(leveldb_options_t*, int);

/* --- Comparators -------------------------------------------------------
   compare returns <0, 0 or >0; name's string is stored in the database and
   must match at every later open. The destructor is called once, when the
   comparator is destroyed and no options or open database use it. */

SHALE_EXPORT leveldb_comparator_t* leveldb_comparator_create(
    void* state, void (*destructor)(void*),
    int (*compare)(void*, const char* a, size_t alen, const char* b,
                   size_t blen),
    const char* (*name)(void*));
SHALE_EXPORT void leveldb_comparator_destroy(leveldb_comparator_t*);

/* --- Filter policies ---------------------------------------------------
   create_filter returns a malloc()ed filter for num_keys keys (its length
   in *filter_length); the library frees it. The destructor is called as
   for comparators. */

SHALE_EXPORT leveldb_filterpolicy_t* leveldb_filterpolicy_create(
    void* state, void (*destructor)(void*),
    char* (*create_filter)(void*, const char* const* key_array,
                           const size_t* key_length_array, int num_keys,
                           size_t* filter_length),
    uint8_t (*key_may_match)(void*, const char* key, size_t length,
                             const char* filter, size_t filter_length),
    const char* (*name)(void*));
SHALE_EXPORT void leveldb_filterpolicy_destroy(leveldb_filterpolicy_t*);

/* LevelDB's bloom filter ("leveldb.BuiltinBloomFilter2"): filters are
   identical to LevelDB's, so databases stay readable by either library. */
SHALE_EXPORT leveldb_filterpolicy_t* leveldb_filterpolicy_create_bloom(
    int bits_per_key);

/* --- Read options ------------------------------------------------------ */

SHALE_EXPORT leveldb_readoptions_t* leveldb_readoptions_create(void);
SHALE_EXPORT void leveldb_readoptions_destroy(leveldb_readoptions_t*);
SHALE_EXPORT void leveldb_readoptions_set_verify_checksums(
    leveldb_readoptions_t*, uint8_t);
SHALE_EXPORT void leveldb_readoptions_set_fill_cache(leveldb_readoptions_t*,
                                                     uint8_t);
/* NULL: read the latest state. The snapshot must stay alive while the
   options are used. */
SHALE_EXPORT void leveldb_readoptions_set_snapshot(leveldb_readoptions_t*,
                                                   const leveldb_snapshot_t*);

/* --- Write options ----------------------------------------------------- */

SHALE_EXPORT leveldb_writeoptions_t* leveldb_writeoptions_create(void);
SHALE_EXPORT void leveldb_writeoptions_destroy(leveldb_writeoptions_t*);
SHALE_EXPORT void leveldb_writeoptions_set_sync(leveldb_writeoptions_t*,
                                                uint8_t);

/* --- Block cache ------------------------------------------------------- */

/* An LRU cache of `capacity` bytes of uncompressed blocks, shareable by
   several databases. */
SHALE_EXPORT leveldb_cache_t* leveldb_cache_create_lru(size_t capacity);
SHALE_EXPORT void leveldb_cache_destroy(leveldb_cache_t* cache);

/* --- Environment ------------------------------------------------------- */

SHALE_EXPORT leveldb_env_t* leveldb_create_default_env(void);
SHALE_EXPORT void leveldb_env_destroy(leveldb_env_t*);
/* $TEST_TMPDIR, or /tmp/leveldbtest-<euid>; created if missing. A
   malloc()ed string to release with leveldb_free(), or NULL. */
SHALE_EXPORT char* leveldb_env_get_test_directory(leveldb_env_t*);

/* --- Utility ----------------------------------------------------------- */

/* free(ptr), for the malloc()ed strings and values of this library. */
SHALE_EXPORT void leveldb_free(void* ptr);

/* The LevelDB release whose C API this is: 1 and 23, so that programs
   checking for LevelDB 1.23 accept Shale. See shale_version() for Shale's
   own version. */
SHALE_EXPORT int leveldb_major_version(void);
SHALE_EXPORT int leveldb_minor_version(void);

#endif /* STORAGE_LEVELDB_INCLUDE_C_H_ */

/* ------------------------------------------------------------------------
 * What Shale adds.
 * ---------------------------------------------------------------------- */

/* Property naming Shale's version; LevelDB returns NULL for it, so a
   program can tell which library it runs on:
     char* v = leveldb_property_value(db, SHALE_PROPERTY_VERSION); */
#define SHALE_PROPERTY_VERSION "shale.version"

/* Property holding the error that stopped background work (and made the
   database refuse writes), or "" when there is none. */
#define SHALE_PROPERTY_BACKGROUND_ERROR "shale.background-error"

/* Shale's version, e.g. "0.1.0": a static string, not to be freed.
   Exported by libshale_c only, not by the libleveldb stand-in. */
SHALE_EXPORT const char* shale_version(void);

/* --- Compression beyond LevelDB 1.23's ----------------------------------
   Exported by libshale_c only. The type numbers are the block types on
   disk; leveldb_options_set_compression takes them besides LevelDB's
   leveldb_no_compression and leveldb_snappy_compression (any other number
   means no compression). LevelDB 1.23 reads none and snappy blocks only
   and refuses the others as "bad block type": zstd blocks are those of
   LevelDB's sources after 1.23 (built with zstd), lz4 blocks are read by
   Shale only. */
enum { shale_zstd_compression = 2, shale_lz4_compression = 4 };

/* The zstd level (default 1; 0 is zstd's default, 3; negative is faster). */
SHALE_EXPORT void shale_options_set_zstd_compression_level(leveldb_options_t*,
                                                           int);
/* Compression by output level: types[i] for tables written to level i,
   the last entry for deeper levels; n == 0 (types may then be NULL) uses
   leveldb_options_set_compression's type everywhere, the default. The
   array is copied. */
SHALE_EXPORT void shale_options_set_compression_per_level(leveldb_options_t*,
                                                          const int* types,
                                                          size_t n);
/* Compression of tables a compaction writes to the deepest level that holds
   tables; a negative value (the default) means no override. */
SHALE_EXPORT void shale_options_set_bottommost_compression(leveldb_options_t*,
                                                           int);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SHALE_C_H_ */
