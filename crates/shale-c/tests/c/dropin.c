/*
 * A small program written for LevelDB's C API, used to show that a binary
 * already built against LevelDB (-lleveldb) runs unchanged on Shale's
 * libleveldb stand-in (LD_LIBRARY_PATH), and that what it writes opens in
 * LevelDB again.
 *
 * Usage: dropin write DIR N   - creates DIR, writes N keys, deletes every
 *                               tenth, reads them back
 *        dropin check DIR N   - opens DIR (must exist), checks the N keys
 * Prints "engine: shale" or "engine: leveldb" (from the "shale.version"
 * property, which LevelDB does not know).
 */
#include <leveldb/c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char* what, char* err) {
  fprintf(stderr, "dropin: %s: %s\n", what, err ? err : "(no message)");
  exit(1);
}

int main(int argc, char** argv) {
  leveldb_options_t* options;
  leveldb_readoptions_t* ro;
  leveldb_writeoptions_t* wo;
  leveldb_filterpolicy_t* bloom;
  leveldb_t* db;
  char* err = NULL;
  char* prop;
  int n, i, write;

  if (argc != 4) {
    fprintf(stderr, "usage: dropin write|check DIR N\n");
    return 2;
  }
  write = strcmp(argv[1], "write") == 0;
  n = atoi(argv[3]);
  options = leveldb_options_create();
  bloom = leveldb_filterpolicy_create_bloom(10);
  leveldb_options_set_filter_policy(options, bloom);
  leveldb_options_set_create_if_missing(options, (uint8_t)write);
  leveldb_options_set_write_buffer_size(options, 64 << 10);
  ro = leveldb_readoptions_create();
  leveldb_readoptions_set_verify_checksums(ro, 1);
  wo = leveldb_writeoptions_create();

  db = leveldb_open(options, argv[2], &err);
  if (err) die("open", err);
  prop = leveldb_property_value(db, "shale.version");
  printf("engine: %s\n", prop ? "shale" : "leveldb");
  leveldb_free(prop);
  printf("version: %d.%d\n", leveldb_major_version(), leveldb_minor_version());

  if (write) {
    for (i = 0; i < n; i++) {
      char k[32], v[64];
      snprintf(k, sizeof k, "key%08d", i);
      snprintf(v, sizeof v, "value %d written through the C API", i);
      leveldb_put(db, wo, k, strlen(k), v, strlen(v), &err);
      if (err) die("put", err);
    }
    for (i = 0; i < n; i += 10) {
      char k[32];
      snprintf(k, sizeof k, "key%08d", i);
      leveldb_delete(db, wo, k, strlen(k), &err);
      if (err) die("delete", err);
    }
    leveldb_compact_range(db, NULL, 0, NULL, 0);
  }

  {
    int found = 0;
    leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
    for (i = 0; i < n; i++) {
      char k[32], v[64];
      size_t len;
      char* got;
      snprintf(k, sizeof k, "key%08d", i);
      snprintf(v, sizeof v, "value %d written through the C API", i);
      got = leveldb_get(db, ro, k, strlen(k), &len, &err);
      if (err) die("get", err);
      if (i % 10 == 0) {
        if (got != NULL) die("deleted key found", NULL);
      } else if (got == NULL || len != strlen(v) || memcmp(got, v, len) != 0) {
        fprintf(stderr, "dropin: wrong value for %s\n", k);
        return 1;
      }
      leveldb_free(got);
    }
    for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it);
         leveldb_iter_next(it)) {
      found++;
    }
    leveldb_iter_get_error(it, &err);
    if (err) die("iterate", err);
    leveldb_iter_destroy(it);
    if (found != n - (n + 9) / 10) {
      fprintf(stderr, "dropin: %d keys found, %d expected\n", found,
              n - (n + 9) / 10);
      return 1;
    }
    printf("keys: %d\n", found);
  }

  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(bloom);
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  printf("ok\n");
  return 0;
}
