/* A minimal test vocabulary: CHECK records a failure with its location and
 * carries on, so one run reports every broken expectation. */
#ifndef ATTN_TEST_CHECK_H
#define ATTN_TEST_CHECK_H

#include <stdio.h>

typedef struct check_tally {
    int passed, failed;
} check_tally;

#define CHECK(t, cond, ...)                                                                        \
    do {                                                                                           \
        if (cond) {                                                                                \
            (t)->passed++;                                                                         \
        } else {                                                                                   \
            (t)->failed++;                                                                         \
            fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The closing line ctest output readers understand; exit status follows. */
static inline int check_report(const char *suite, const check_tally *t)
{
    printf("%s: %d passed, %d failed\n", suite, t->passed, t->failed);
    return t->failed ? 1 : 0;
}

#endif
