/* The checks of the C test programs: each counts itself in `checks` and, on
 * failure, prints where and exits with status 1. Included by one source
 * file per program (it defines `checks`). */
#ifndef SHALE_TEST_CHECK_H
#define SHALE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int checks = 0;

#define CHECK(cond)                                                      \
  do {                                                                   \
    checks++;                                                            \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
              #cond);                                                    \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

#define CHECK_NO_ERROR(err)                                              \
  do {                                                                   \
    checks++;                                                            \
    if ((err) != NULL) {                                                 \
      fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, __LINE__, \
              (err));                                                    \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

#endif
