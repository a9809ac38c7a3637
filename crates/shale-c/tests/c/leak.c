/*
 * Control for the AddressSanitizer run: leaks the value leveldb_get
 * returns, which LeakSanitizer must report.
 * Usage: leak DIR
 */
#ifdef USE_SHALE_HEADER
#include <shale/c.h>
#else
#include <leveldb/c.h>
#endif

#include <stdio.h>

int main(int argc, char** argv) {
  leveldb_options_t* options = leveldb_options_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  char* err = NULL;
  char* value;
  size_t len;
  leveldb_t* db;
  if (argc != 2) return 2;
  leveldb_options_set_create_if_missing(options, 1);
  db = leveldb_open(options, argv[1], &err);
  if (err != NULL) return 1;
  leveldb_put(db, wo, "k", 1, "a value to leak", 15, &err);
  value = leveldb_get(db, ro, "k", 1, &len, &err);
  printf("%zu bytes at %p, never freed\n", len, (void*)value);
  value = NULL;
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  return 0;
}
