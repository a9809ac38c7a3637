/*
 * Shale's compression extensions of the C API: zstd and lz4 through
 * leveldb_options_set_compression, the zstd level, compression by level
 * and for the bottommost level. Each database is written, compacted,
 * closed, reopened with default options (snappy) and read back whole. The
 * databases are left in DIR for the Rust test to check their block types:
 *   DIR/zstd, DIR/lz4   every table compressed so;
 *   DIR/per-level       one flush to level 2, which is zstd;
 *   DIR/bottommost      a compaction into level 2, which is snappy.
 *
 * Usage: compression DIR   (DIR: an existing directory)
 */
#include <shale/c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRIES 3000

#include "check.h"

static void key_of(int i, char* buf, size_t n) {
  snprintf(buf, n, "key%06d", i);
}

static void value_of(int i, int batch, char* buf, size_t n) {
  /* Repetitive, so that every codec saves more than an eighth. */
  snprintf(buf, n,
           "batch %d value %d; batch %d value %d; batch %d value %d; "
           "batch %d value %d",
           batch, i, batch, i, batch, i, batch, i);
}

/* Writes keys [0, ENTRIES) of `batch` and compacts everything. */
static void write_batch(leveldb_t* db, int batch) {
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  char k[32], v[256];
  char* err = NULL;
  int i;
  for (i = 0; i < ENTRIES; i++) {
    key_of(i, k, sizeof k);
    value_of(i, batch, v, sizeof v);
    leveldb_put(db, wo, k, strlen(k), v, strlen(v), &err);
    CHECK_NO_ERROR(err);
  }
  leveldb_writeoptions_destroy(wo);
  leveldb_compact_range(db, NULL, 0, NULL, 0);
}

/* Reopens `path` with default options and checks it holds `batch`. */
static void check_reads_back(const char* path, int batch) {
  leveldb_options_t* o = leveldb_options_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_iterator_t* it;
  char* err = NULL;
  char k[32], v[256];
  int i = 0;
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_NO_ERROR(err);
  leveldb_readoptions_set_verify_checksums(ro, 1);
  it = leveldb_create_iterator(db, ro);
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it);
       leveldb_iter_next(it), i++) {
    size_t klen, vlen;
    const char* gk = leveldb_iter_key(it, &klen);
    const char* gv = leveldb_iter_value(it, &vlen);
    key_of(i, k, sizeof k);
    value_of(i, batch, v, sizeof v);
    CHECK(klen == strlen(k) && memcmp(gk, k, klen) == 0);
    CHECK(vlen == strlen(v) && memcmp(gv, v, vlen) == 0);
  }
  leveldb_iter_get_error(it, &err);
  CHECK_NO_ERROR(err);
  CHECK(i == ENTRIES);
  leveldb_iter_destroy(it);
  leveldb_readoptions_destroy(ro);
  leveldb_close(db);
  leveldb_options_destroy(o);
}

static char* db_path(const char* dir, const char* name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char* p = malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Makes DIR/name with `o`, writing `batches` batches. */
static void make_db(const char* dir, const char* name, leveldb_options_t* o,
                    int batches) {
  char* path = db_path(dir, name);
  char* err = NULL;
  int b;
  leveldb_t* db;
  leveldb_options_set_create_if_missing(o, 1);
  db = leveldb_open(o, path, &err);
  CHECK_NO_ERROR(err);
  for (b = 0; b < batches; b++) write_batch(db, b);
  leveldb_close(db);
  check_reads_back(path, batches - 1);
  free(path);
}

int main(int argc, char** argv) {
  leveldb_options_t* o;
  const int per_level[] = {shale_lz4_compression, leveldb_no_compression,
                           shale_zstd_compression};
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  CHECK(shale_zstd_compression == 2 && shale_lz4_compression == 4);

  o = leveldb_options_create();
  leveldb_options_set_compression(o, shale_zstd_compression);
  shale_options_set_zstd_compression_level(o, 5);
  make_db(argv[1], "zstd", o, 1);
  leveldb_options_destroy(o);

  o = leveldb_options_create();
  leveldb_options_set_compression(o, shale_lz4_compression);
  make_db(argv[1], "lz4", o, 1);
  leveldb_options_destroy(o);

  o = leveldb_options_create();
  leveldb_options_set_compression(o, leveldb_no_compression);
  shale_options_set_compression_per_level(o, per_level, 3);
  shale_options_set_bottommost_compression(o, leveldb_snappy_compression);
  make_db(argv[1], "per-level", o, 1);
  make_db(argv[1], "bottommost", o, 2);
  /* Clearing both: every table is uncompressed. */
  shale_options_set_compression_per_level(o, NULL, 0);
  shale_options_set_bottommost_compression(o, -1);
  make_db(argv[1], "none", o, 2);
  leveldb_options_destroy(o);

  /* NULL options are tolerated, as by every setter. */
  shale_options_set_zstd_compression_level(NULL, 3);
  shale_options_set_compression_per_level(NULL, per_level, 3);
  shale_options_set_bottommost_compression(NULL, 2);

  printf("%d compression checks passed\n", checks);
  return 0;
}
