/*
 * The C API suite: calls every function of LevelDB 1.23's C API, error
 * paths and callbacks included, and uses a database from several threads.
 *
 * The same source runs against Shale (libshale_c, or its libleveldb
 * stand-in) and against LevelDB itself (-lleveldb): it expects LevelDB's
 * behaviour. Where Shale legitimately differs (its own properties, the
 * detail in some messages), the check is guarded by ON_SHALE, true when the
 * library answers the "shale.version" property (LevelDB returns NULL), so
 * that one binary runs on either library. Each such difference is listed in
 * README.md ("Using Shale from C").
 *
 * Usage: api_test DIR   (DIR: an existing directory for the databases)
 * Compile with -DUSE_SHALE_HEADER to use <shale/c.h> instead of
 * <leveldb/c.h>.
 */
#ifdef USE_SHALE_HEADER
#include <shale/c.h>
#else
#include <leveldb/c.h>
#endif

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static int on_shale = 0;
static const char* base_dir;

#define ON_SHALE (on_shale)

#define CHECK_ERROR_HAS(err, text)                                       \
  do {                                                                   \
    checks++;                                                            \
    if ((err) == NULL || strstr((err), (text)) == NULL) {                \
      fprintf(stderr, "%s:%d: expected an error containing \"%s\", got %s\n", \
              __FILE__, __LINE__, (text), (err) ? (err) : "no error");   \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static void phase(const char* name) { fprintf(stderr, "=== %s\n", name); }

static char* db_path(const char* name) {
  size_t n = strlen(base_dir) + strlen(name) + 2;
  char* p = malloc(n);
  snprintf(p, n, "%s/%s", base_dir, name);
  return p;
}

/* Checks that the value of `key` is `expected` (NULL: absent). */
static void check_get(leveldb_t* db, const leveldb_readoptions_t* ro,
                      const char* key, size_t klen, const char* expected,
                      size_t elen) {
  char* err = NULL;
  size_t vlen = 12345;
  char* v = leveldb_get(db, ro, key, klen, &vlen, &err);
  CHECK_NO_ERROR(err);
  if (expected == NULL) {
    CHECK(v == NULL);
    CHECK(vlen == 0);
  } else {
    CHECK(v != NULL);
    CHECK(vlen == elen);
    CHECK(elen == 0 || memcmp(v, expected, elen) == 0);
  }
  leveldb_free(v);
}

static size_t len_or_zero(const char* s) { return s ? strlen(s) : 0; }

#define CHECK_GET(db, ro, k, v) \
  check_get((db), (ro), (k), strlen(k), (v), len_or_zero(v))

static void check_iter(leveldb_iterator_t* it, const char* key,
                       const char* val) {
  size_t len;
  const char* p;
  CHECK(leveldb_iter_valid(it));
  p = leveldb_iter_key(it, &len);
  CHECK(len == strlen(key) && memcmp(p, key, len) == 0);
  p = leveldb_iter_value(it, &len);
  CHECK(len == strlen(val) && memcmp(p, val, len) == 0);
}

/* --- A reverse bytewise comparator ------------------------------------ */

static int cmp_destroyed = 0;
static int cmp_calls = 0;

static void cmp_destroy(void* state) {
  CHECK(state == (void*)&cmp_destroyed);
  __atomic_add_fetch(&cmp_destroyed, 1, __ATOMIC_SEQ_CST);
}

static int cmp_compare(void* state, const char* a, size_t alen,
                       const char* b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int r = n ? memcmp(a, b, n) : 0;
  (void)state;
  __atomic_add_fetch(&cmp_calls, 1, __ATOMIC_RELAXED);
  if (r == 0) r = alen < blen ? -1 : (alen > blen ? 1 : 0);
  return -r;
}

static const char* cmp_name(void* state) {
  (void)state;
  return "shale-c-test.Reverse";
}

/* --- A filter policy that answers what the test tells it -------------- */

static int filter_destroyed = 0;
static int filter_result = 1;
static int filter_created = 0;

static void filter_destroy(void* state) {
  (void)state;
  __atomic_add_fetch(&filter_destroyed, 1, __ATOMIC_SEQ_CST);
}

static char* filter_create(void* state, const char* const* keys,
                           const size_t* lens, int n, size_t* flen) {
  char* f;
  int i;
  (void)state;
  for (i = 0; i < n; i++) CHECK(keys[i] != NULL || lens[i] == 0);
  __atomic_add_fetch(&filter_created, 1, __ATOMIC_SEQ_CST);
  f = malloc(4);
  memcpy(f, "fake", 4);
  *flen = 4;
  return f;
}

static uint8_t filter_match(void* state, const char* key, size_t len,
                            const char* filter, size_t flen) {
  (void)state;
  (void)key;
  (void)len;
  CHECK(flen == 4);
  CHECK(memcmp(filter, "fake", 4) == 0);
  return (uint8_t)__atomic_load_n(&filter_result, __ATOMIC_SEQ_CST);
}

static const char* filter_name(void* state) {
  (void)state;
  return "shale-c-test.Fake";
}

/* --- Batch iteration callbacks ---------------------------------------- */

struct batch_log {
  char text[256];
};

static void batch_put(void* state, const char* k, size_t klen, const char* v,
                      size_t vlen) {
  struct batch_log* log = state;
  char buf[128];
  snprintf(buf, sizeof buf, "put(%.*s,%.*s);", (int)klen, k, (int)vlen, v);
  strcat(log->text, buf);
}

static void batch_deleted(void* state, const char* k, size_t klen) {
  struct batch_log* log = state;
  char buf[128];
  snprintf(buf, sizeof buf, "del(%.*s);", (int)klen, k);
  strcat(log->text, buf);
}

/* --- Threads ----------------------------------------------------------- */

#define THREADS 4
#define PER_THREAD 2000

struct worker {
  leveldb_t* db;
  int id;
  int failures;
};

static void* worker_main(void* arg) {
  struct worker* w = arg;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32], val[64];
  int i;
  for (i = 0; i < PER_THREAD; i++) {
    char* err = NULL;
    snprintf(key, sizeof key, "t%d-%06d", w->id, i);
    snprintf(val, sizeof val, "value-%d-%d", w->id, i);
    leveldb_put(w->db, wo, key, strlen(key), val, strlen(val), &err);
    if (err != NULL) {
      w->failures++;
      leveldb_free(err);
    }
    if (i % 7 == 0) {
      size_t vlen;
      char* v = leveldb_get(w->db, ro, key, strlen(key), &vlen, &err);
      if (err != NULL || v == NULL || vlen != strlen(val) ||
          memcmp(v, val, vlen) != 0) {
        w->failures++;
      }
      leveldb_free(err);
      leveldb_free(v);
    }
    if (i % 500 == 0) {
      /* Concurrent iterators and snapshots. */
      const leveldb_snapshot_t* snap = leveldb_create_snapshot(w->db);
      leveldb_readoptions_t* sro = leveldb_readoptions_create();
      leveldb_iterator_t* it;
      leveldb_readoptions_set_snapshot(sro, snap);
      it = leveldb_create_iterator(w->db, sro);
      for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it);
           leveldb_iter_next(it)) {
      }
      leveldb_iter_get_error(it, &err);
      if (err != NULL) {
        w->failures++;
        leveldb_free(err);
      }
      leveldb_iter_destroy(it);
      leveldb_readoptions_destroy(sro);
      leveldb_release_snapshot(w->db, snap);
    }
  }
  leveldb_writeoptions_destroy(wo);
  leveldb_readoptions_destroy(ro);
  return NULL;
}

/* --- Files ------------------------------------------------------------- */

/* Overwrites bytes 16..271 of every file of `dir` ending in `suffix` (so
   that a table file not yet deleted after a compaction cannot take the
   damage meant for a live one). Returns how many files were damaged. */
static int damage_files(const char* dir, const char* suffix) {
  DIR* d = opendir(dir);
  struct dirent* e;
  char junk[256];
  int i, damaged = 0;
  if (d == NULL) return 0;
  for (i = 0; i < (int)sizeof junk; i++) junk[i] = (char)(0x5a ^ i);
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name), s = strlen(suffix);
    if (n > s && strcmp(e->d_name + n - s, suffix) == 0) {
      char path[4096];
      int fd;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      fd = open(path, O_WRONLY);
      if (fd < 0) continue;
      if (pwrite(fd, junk, sizeof junk, 16) == (ssize_t)sizeof junk) damaged++;
      close(fd);
    }
  }
  closedir(d);
  return damaged;
}

int main(int argc, char** argv) {
  leveldb_env_t* env;
  leveldb_cache_t* cache;
  leveldb_options_t* options;
  leveldb_readoptions_t* roptions;
  leveldb_writeoptions_t* woptions;
  leveldb_t* db;
  char* err = NULL;
  char* dbname;
  char* prop;

  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  base_dir = argv[1];

  phase("version");
  CHECK(leveldb_major_version() == 1);
  CHECK(leveldb_minor_version() == 23);

  phase("env");
  env = leveldb_create_default_env();
  CHECK(env != NULL);
  {
    char* dir = leveldb_env_get_test_directory(env);
    struct stat st;
    CHECK(dir != NULL);
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    leveldb_free(dir);
  }

  phase("options");
  cache = leveldb_cache_create_lru(100000);
  options = leveldb_options_create();
  leveldb_options_set_env(options, env);
  leveldb_options_set_info_log(options, NULL);
  leveldb_options_set_cache(options, cache);
  leveldb_options_set_write_buffer_size(options, 100000);
  leveldb_options_set_paranoid_checks(options, 1);
  leveldb_options_set_max_open_files(options, 10);
  leveldb_options_set_block_size(options, 1024);
  leveldb_options_set_block_restart_interval(options, 8);
  leveldb_options_set_max_file_size(options, 3 << 20);
  leveldb_options_set_compression(options, leveldb_no_compression);
  leveldb_options_set_compression(options, leveldb_snappy_compression);
  roptions = leveldb_readoptions_create();
  leveldb_readoptions_set_verify_checksums(roptions, 1);
  leveldb_readoptions_set_fill_cache(roptions, 0);
  woptions = leveldb_writeoptions_create();
  leveldb_writeoptions_set_sync(woptions, 1);

  dbname = db_path("main");
  leveldb_destroy_db(options, dbname, &err);
  CHECK_NO_ERROR(err);

  phase("open of a missing database");
  db = leveldb_open(options, dbname, &err);
  CHECK(db == NULL);
  CHECK_ERROR_HAS(err, "Invalid argument: ");
  CHECK_ERROR_HAS(err, ": does not exist (create_if_missing is false)");
  {
    char expected[4096];
    snprintf(expected, sizeof expected,
             "Invalid argument: %s: does not exist (create_if_missing is "
             "false)",
             dbname);
    CHECK(strcmp(err, expected) == 0);
  }
  /* A second failure frees the first message and replaces it. */
  db = leveldb_open(options, dbname, &err);
  CHECK(db == NULL);
  CHECK_ERROR_HAS(err, "does not exist");
  leveldb_free(err);
  err = NULL;

  phase("open");
  leveldb_options_set_create_if_missing(options, 1);
  db = leveldb_open(options, dbname, &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);
  on_shale = 0;
  prop = leveldb_property_value(db, "shale.version");
  if (prop != NULL) {
    on_shale = 1;
    CHECK(strlen(prop) > 0);
    leveldb_free(prop);
  }
  fprintf(stderr, "running on %s\n", on_shale ? "Shale" : "LevelDB");
  CHECK_GET(db, roptions, "foo", NULL);

  phase("second open refused by the lock");
  {
    leveldb_t* again = leveldb_open(options, dbname, &err);
    CHECK(again == NULL);
    CHECK_ERROR_HAS(err, "IO error: lock ");
    CHECK_ERROR_HAS(err, "/LOCK");
    fprintf(stderr, "lock message: %s\n", err);
    leveldb_free(err);
    err = NULL;
  }

  phase("error_if_exists");
  leveldb_options_set_error_if_exists(options, 1);
  {
    char* other = db_path("exists");
    leveldb_t* d;
    char expected[4096];
    leveldb_options_set_error_if_exists(options, 0);
    d = leveldb_open(options, other, &err);
    CHECK_NO_ERROR(err);
    leveldb_close(d);
    leveldb_options_set_error_if_exists(options, 1);
    d = leveldb_open(options, other, &err);
    CHECK(d == NULL);
    snprintf(expected, sizeof expected,
             "Invalid argument: %s: exists (error_if_exists is true)", other);
    CHECK(err != NULL && strcmp(err, expected) == 0);
    leveldb_free(err);
    err = NULL;
    leveldb_options_set_error_if_exists(options, 0);
    leveldb_destroy_db(options, other, &err);
    CHECK_NO_ERROR(err);
    free(other);
  }

  phase("put, get, delete");
  leveldb_put(db, woptions, "foo", 3, "hello", 5, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "foo", "hello");
  /* A successful call leaves a message already in *errptr alone. */
  {
    char* previous = malloc(9);
    memcpy(previous, "previous", 9);
    err = previous;
    leveldb_put(db, woptions, "foo", 3, "hello", 5, &err);
    CHECK(err == previous);
    leveldb_free(err);
    err = NULL;
  }
  leveldb_delete(db, woptions, "foo", 3, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "foo", NULL);
  leveldb_delete(db, woptions, "never-there", 11, &err);
  CHECK_NO_ERROR(err);

  phase("binary keys and values");
  {
    static const char key[] = {'\xff', '\0', '\xfe', '\0'};
    static const char val[] = {'\0', '\x80', '\0', '\xc3', '\x28'};
    leveldb_put(db, woptions, key, sizeof key, val, sizeof val, &err);
    CHECK_NO_ERROR(err);
    check_get(db, roptions, key, sizeof key, val, sizeof val);
    check_get(db, roptions, key, 3, NULL, 0);
    /* The empty key and the empty value. */
    leveldb_put(db, woptions, "", 0, "", 0, &err);
    CHECK_NO_ERROR(err);
    check_get(db, roptions, "", 0, "", 0);
    leveldb_put(db, woptions, "empty", 5, NULL, 0, &err);
    CHECK_NO_ERROR(err);
    check_get(db, roptions, "empty", 5, "", 0);
    leveldb_delete(db, woptions, "", 0, &err);
    CHECK_NO_ERROR(err);
    check_get(db, roptions, "", 0, NULL, 0);
    leveldb_delete(db, woptions, "empty", 5, &err);
    leveldb_delete(db, woptions, key, sizeof key, &err);
    CHECK_NO_ERROR(err);
  }

  phase("write batch");
  {
    leveldb_writebatch_t* wb = leveldb_writebatch_create();
    leveldb_writebatch_t* wb2 = leveldb_writebatch_create();
    struct batch_log log;
    leveldb_writebatch_put(wb, "foo", 3, "a", 1);
    leveldb_writebatch_clear(wb);
    leveldb_writebatch_put(wb, "bar", 3, "b", 1);
    leveldb_writebatch_put(wb, "box", 3, "c", 1);
    leveldb_writebatch_delete(wb, "bar", 3);
    leveldb_writebatch_put(wb2, "foo", 3, "hello", 5);
    leveldb_writebatch_append(wb, wb2);
    leveldb_write(db, woptions, wb, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(db, roptions, "foo", "hello");
    CHECK_GET(db, roptions, "bar", NULL);
    CHECK_GET(db, roptions, "box", "c");
    memset(&log, 0, sizeof log);
    leveldb_writebatch_iterate(wb, &log, batch_put, batch_deleted);
    CHECK(strcmp(log.text, "put(bar,b);put(box,c);del(bar);put(foo,hello);") ==
          0);
    memset(&log, 0, sizeof log);
    leveldb_writebatch_clear(wb);
    leveldb_writebatch_iterate(wb, &log, batch_put, batch_deleted);
    CHECK(log.text[0] == '\0');
    leveldb_writebatch_destroy(wb);
    leveldb_writebatch_destroy(wb2);
  }

  phase("iterator");
  {
    leveldb_iterator_t* iter = leveldb_create_iterator(db, roptions);
    size_t len;
    CHECK(!leveldb_iter_valid(iter));
    leveldb_iter_seek_to_first(iter);
    check_iter(iter, "box", "c");
    leveldb_iter_next(iter);
    check_iter(iter, "foo", "hello");
    leveldb_iter_prev(iter);
    check_iter(iter, "box", "c");
    leveldb_iter_prev(iter);
    CHECK(!leveldb_iter_valid(iter));
    leveldb_iter_seek_to_last(iter);
    check_iter(iter, "foo", "hello");
    leveldb_iter_seek(iter, "b", 1);
    check_iter(iter, "box", "c");
    leveldb_iter_seek(iter, "c", 1);
    check_iter(iter, "foo", "hello");
    /* A key pointer stays valid until the iterator moves. */
    {
      const char* k = leveldb_iter_key(iter, &len);
      char copy[8];
      memcpy(copy, k, len);
      CHECK(len == 3 && memcmp(copy, "foo", 3) == 0);
    }
    leveldb_iter_seek(iter, "zzz", 3);
    CHECK(!leveldb_iter_valid(iter));
    leveldb_iter_get_error(iter, &err);
    CHECK_NO_ERROR(err);
    leveldb_iter_destroy(iter);
  }

  phase("snapshot");
  {
    const leveldb_snapshot_t* snap = leveldb_create_snapshot(db);
    leveldb_readoptions_t* sro = leveldb_readoptions_create();
    leveldb_iterator_t* iter;
    leveldb_delete(db, woptions, "foo", 3, &err);
    CHECK_NO_ERROR(err);
    leveldb_put(db, woptions, "new", 3, "x", 1, &err);
    CHECK_NO_ERROR(err);
    leveldb_readoptions_set_snapshot(sro, snap);
    CHECK_GET(db, sro, "foo", "hello");
    CHECK_GET(db, sro, "new", NULL);
    iter = leveldb_create_iterator(db, sro);
    leveldb_iter_seek_to_last(iter);
    check_iter(iter, "foo", "hello");
    leveldb_iter_destroy(iter);
    leveldb_readoptions_set_snapshot(sro, NULL);
    CHECK_GET(db, sro, "foo", NULL);
    CHECK_GET(db, sro, "new", "x");
    leveldb_release_snapshot(db, snap);
    leveldb_readoptions_destroy(sro);
  }

  phase("approximate sizes and compaction");
  {
    int i;
    const char* start[2] = {"a", "k00000000000000010000"};
    size_t start_len[2] = {1, 21};
    const char* limit[2] = {"k00000000000000010000", "z"};
    size_t limit_len[2] = {21, 1};
    uint64_t sizes[2] = {0, 0};
    leveldb_writeoptions_set_sync(woptions, 0);
    for (i = 0; i < 20000; i++) {
      char keybuf[100], valbuf[100];
      snprintf(keybuf, sizeof keybuf, "k%020d", i);
      snprintf(valbuf, sizeof valbuf, "v%020d", i);
      leveldb_put(db, woptions, keybuf, strlen(keybuf), valbuf, strlen(valbuf),
                  &err);
      CHECK_NO_ERROR(err);
    }
    leveldb_compact_range(db, NULL, 0, NULL, 0);
    leveldb_compact_range(db, "k", 1, "l", 1);
    leveldb_approximate_sizes(db, 2, start, start_len, limit, limit_len,
                              sizes);
    CHECK(sizes[0] > 0);
    CHECK(sizes[1] > 0);
    CHECK_GET(db, roptions, "k00000000000000012345", "v00000000000000012345");
  }

  phase("property");
  prop = leveldb_property_value(db, "nosuchprop");
  CHECK(prop == NULL);
  prop = leveldb_property_value(db, "leveldb.stats");
  CHECK(prop != NULL);
  leveldb_free(prop);
  prop = leveldb_property_value(db, "leveldb.num-files-at-level0");
  CHECK(prop != NULL);
  leveldb_free(prop);
  prop = leveldb_property_value(db, "leveldb.sstables");
  CHECK(prop != NULL);
  leveldb_free(prop);
  prop = leveldb_property_value(db, "leveldb.approximate-memory-usage");
  CHECK(prop != NULL);
  leveldb_free(prop);
  prop = leveldb_property_value(db, "shale.background-error");
  if (ON_SHALE) {
    /* Shale's own property: no background error. */
    CHECK(prop != NULL && prop[0] == '\0');
  } else {
    CHECK(prop == NULL);
  }
  leveldb_free(prop);

  phase("threads");
  {
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    leveldb_iterator_t* iter;
    int i, count = 0;
    for (i = 0; i < THREADS; i++) {
      workers[i].db = db;
      workers[i].id = i;
      workers[i].failures = 0;
      CHECK(pthread_create(&threads[i], NULL, worker_main, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
      CHECK(pthread_join(threads[i], NULL) == 0);
      CHECK(workers[i].failures == 0);
    }
    iter = leveldb_create_iterator(db, roptions);
    leveldb_iter_seek(iter, "t", 1);
    for (; leveldb_iter_valid(iter); leveldb_iter_next(iter)) {
      size_t len;
      const char* k = leveldb_iter_key(iter, &len);
      if (len == 0 || k[0] != 't') break;
      count++;
    }
    CHECK(count == THREADS * PER_THREAD);
    leveldb_iter_destroy(iter);
  }

  phase("repair");
  leveldb_close(db);
  leveldb_options_set_create_if_missing(options, 0);
  leveldb_options_set_error_if_exists(options, 0);
  leveldb_repair_db(options, dbname, &err);
  CHECK_NO_ERROR(err);
  db = leveldb_open(options, dbname, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "foo", NULL);
  CHECK_GET(db, roptions, "box", "c");
  CHECK_GET(db, roptions, "k00000000000000012345", "v00000000000000012345");
  CHECK_GET(db, roptions, "t3-001999", "value-3-1999");

  phase("corruption reported through errptr");
  {
    leveldb_iterator_t* iter;
    leveldb_compact_range(db, NULL, 0, NULL, 0);
    leveldb_close(db);
    /* Damage the first data blocks of the tables. */
    CHECK(damage_files(dbname, ".ldb") > 0);
    db = leveldb_open(options, dbname, &err);
    CHECK_NO_ERROR(err);
    /* Reading every key with checksums verified meets the damage. */
    iter = leveldb_create_iterator(db, roptions);
    for (leveldb_iter_seek_to_first(iter); leveldb_iter_valid(iter);
         leveldb_iter_next(iter)) {
    }
    leveldb_iter_get_error(iter, &err);
    CHECK_ERROR_HAS(err, "Corruption: ");
    fprintf(stderr, "corruption message: %s\n", err);
    leveldb_free(err);
    err = NULL;
    leveldb_iter_destroy(iter);
    leveldb_close(db);
    /* Repair keeps what can be read. */
    leveldb_repair_db(options, dbname, &err);
    CHECK_NO_ERROR(err);
    db = leveldb_open(options, dbname, &err);
    CHECK_NO_ERROR(err);
    leveldb_close(db);
  }

  phase("comparator");
  {
    char* cmpdb = db_path("comparator");
    leveldb_options_t* copts = leveldb_options_create();
    leveldb_comparator_t* cmp = leveldb_comparator_create(
        &cmp_destroyed, cmp_destroy, cmp_compare, cmp_name);
    leveldb_iterator_t* iter;
    leveldb_options_set_create_if_missing(copts, 1);
    leveldb_options_set_comparator(copts, cmp);
    leveldb_destroy_db(copts, cmpdb, &err);
    CHECK_NO_ERROR(err);
    db = leveldb_open(copts, cmpdb, &err);
    CHECK_NO_ERROR(err);
    leveldb_put(db, woptions, "a", 1, "1", 1, &err);
    leveldb_put(db, woptions, "c", 1, "3", 1, &err);
    leveldb_put(db, woptions, "b", 1, "2", 1, &err);
    CHECK_NO_ERROR(err);
    leveldb_compact_range(db, NULL, 0, NULL, 0);
    CHECK_GET(db, roptions, "b", "2");
    iter = leveldb_create_iterator(db, roptions);
    leveldb_iter_seek_to_first(iter);
    check_iter(iter, "c", "3");
    leveldb_iter_next(iter);
    check_iter(iter, "b", "2");
    leveldb_iter_next(iter);
    check_iter(iter, "a", "1");
    leveldb_iter_destroy(iter);
    CHECK(__atomic_load_n(&cmp_calls, __ATOMIC_SEQ_CST) > 0);
    leveldb_close(db);
    /* Opening with another comparator is refused. */
    {
      leveldb_options_t* plain = leveldb_options_create();
      db = leveldb_open(plain, cmpdb, &err);
      CHECK(db == NULL);
      CHECK_ERROR_HAS(err, "Invalid argument: ");
      /* LevelDB's wording: the stored name, then the one given. */
      CHECK_ERROR_HAS(err,
                      "shale-c-test.Reverse does not match existing "
                      "comparator : leveldb.BytewiseComparator");
      leveldb_free(err);
      err = NULL;
      leveldb_options_destroy(plain);
    }
    leveldb_destroy_db(copts, cmpdb, &err);
    CHECK_NO_ERROR(err);
    CHECK(cmp_destroyed == 0);
    leveldb_options_destroy(copts);
    leveldb_comparator_destroy(cmp);
    CHECK(cmp_destroyed == 1);
    free(cmpdb);
  }

  phase("filter policy");
  {
    char* fdb = db_path("filter");
    leveldb_options_t* fopts = leveldb_options_create();
    leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create(
        NULL, filter_destroy, filter_create, filter_match, filter_name);
    leveldb_options_set_create_if_missing(fopts, 1);
    leveldb_options_set_filter_policy(fopts, policy);
    leveldb_destroy_db(fopts, fdb, &err);
    CHECK_NO_ERROR(err);
    db = leveldb_open(fopts, fdb, &err);
    CHECK_NO_ERROR(err);
    leveldb_put(db, woptions, "foo", 3, "foovalue", 8, &err);
    leveldb_put(db, woptions, "bar", 3, "barvalue", 8, &err);
    CHECK_NO_ERROR(err);
    leveldb_compact_range(db, NULL, 0, NULL, 0);
    CHECK(filter_created > 0);
    filter_result = 1;
    CHECK_GET(db, roptions, "foo", "foovalue");
    CHECK_GET(db, roptions, "bar", "barvalue");
    /* The filter says "absent": the table is not read. */
    filter_result = 0;
    CHECK_GET(db, roptions, "foo", NULL);
    CHECK_GET(db, roptions, "bar", NULL);
    filter_result = 1;
    leveldb_close(db);
    leveldb_destroy_db(fopts, fdb, &err);
    CHECK_NO_ERROR(err);
    /* Reset the policy: the options let go of it. */
    leveldb_options_set_filter_policy(fopts, NULL);
    leveldb_filterpolicy_destroy(policy);
    CHECK(filter_destroyed == 1);

    /* The built-in bloom filter. */
    policy = leveldb_filterpolicy_create_bloom(10);
    leveldb_options_set_filter_policy(fopts, policy);
    db = leveldb_open(fopts, fdb, &err);
    CHECK_NO_ERROR(err);
    leveldb_put(db, woptions, "foo", 3, "foovalue", 8, &err);
    CHECK_NO_ERROR(err);
    leveldb_compact_range(db, NULL, 0, NULL, 0);
    CHECK_GET(db, roptions, "foo", "foovalue");
    CHECK_GET(db, roptions, "fo", NULL);
    leveldb_close(db);
    leveldb_destroy_db(fopts, fdb, &err);
    CHECK_NO_ERROR(err);
    leveldb_options_destroy(fopts);
    leveldb_filterpolicy_destroy(policy);
    free(fdb);
  }

  phase("destroy");
  leveldb_destroy_db(options, dbname, &err);
  CHECK_NO_ERROR(err);
  db = leveldb_open(options, dbname, &err);
  CHECK(db == NULL);
  CHECK_ERROR_HAS(err, "does not exist");
  leveldb_free(err);
  err = NULL;

  phase("cleanup");
  leveldb_options_destroy(options);
  leveldb_readoptions_destroy(roptions);
  leveldb_writeoptions_destroy(woptions);
  leveldb_cache_destroy(cache);
  leveldb_env_destroy(env);
  free(dbname);

  printf("c suite: %d checks passed on %s\n", checks,
         on_shale ? "Shale" : "LevelDB");
  return 0;
}
