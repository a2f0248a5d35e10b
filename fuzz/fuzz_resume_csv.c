/* libFuzzer target: the results-CSV reader behind `attnbench matrix
 * --resume` (harness/results_csv.c) on arbitrary files: truncated,
 * foreign, overlong lines, broken quoting, numbers out of range.
 *
 * - Each line alone through attn_results_parse. A line it accepts must
 *   format (attn_results_format) and read back, and the second formatting
 *   must equal the first: what --resume keeps is what the next run writes.
 * - The whole input as a file through attn_results_open(resume = 1): it
 *   either refuses with a message, or keeps exactly one row per whole line
 *   after the header and cuts a partial last line off the file.
 *
 * Input: byte 0 bit 0 = start the file with the real header line (so the
 * fuzzer reaches the row parser of a whole file without guessing the
 * 300-byte header); the rest is the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results_csv.h"

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_resume_csv: %s:%d: violated: %s: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

enum { LINE_CAP = 8192 };

/* format(parse(line)) read back and formatted again is the same text. */
static void check_line(const char *line, size_t err_cap)
{
    attn_result_row r, again;
    char *err = malloc(err_cap ? err_cap : 1); /* exactly err_cap bytes for ASan */
    if (attn_results_parse(line, &r, err, err_cap) != 0) {
        REQUIRE(err_cap == 0 || memchr(err, '\0', err_cap), "error message not terminated");
        free(err);
        return;
    }
    REQUIRE(r.case_name[0], "accepted an empty case");
    static char first[LINE_CAP], second[LINE_CAP];
    int n = attn_results_format(&r, first, sizeof first);
    REQUIRE(n > 0 && first[n - 1] == '\n', "accepted row does not format (%d)", n);
    first[n - 1] = '\0';
    REQUIRE(attn_results_parse(first, &again, err, err_cap) == 0,
            "own output does not read back: '%s'", first);
    int m = attn_results_format(&again, second, sizeof second);
    REQUIRE(m == n && memcmp(first, second, (size_t)n - 1) == 0,
            "format is not stable:\n  %s\n  %.*s", first, m > 0 ? m - 1 : 0, second);
    free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int with_header = data[0] & 1;
    const size_t err_cap = data[0] >> 1; /* 0 .. 127 bytes for messages */
    data++;
    size--;

    /* Line by line (a NUL ends a line early, as in a C string). */
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    for (char *line = text; line <= text + size;) {
        char *nl = memchr(line, '\n', (size_t)(text + size - line));
        if (nl)
            *nl = '\0';
        check_line(line, err_cap);
        if (!nl)
            break;
        line = nl + 1;
    }
    free(text);

    /* The whole file through --resume. */
    char path[] = "/tmp/fuzz_resume_csv.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0, "mkstemp");
    char header[ATTN_RESULTS_HEADER_CAP];
    attn_results_header(header, sizeof header);
    size_t hlen = strlen(header), file_size = size;
    if (with_header) {
        REQUIRE(write(fd, header, hlen) == (ssize_t)hlen && write(fd, "\n", 1) == 1, "write");
        file_size += hlen + 1;
    }
    REQUIRE(size == 0 || write(fd, data, size) == (ssize_t)size, "write");
    close(fd);

    attn_results_file f;
    char err[256];
    int rc = attn_results_open(&f, path, ATTN_RESULTS_RESUME, err, sizeof err);
    struct stat st;
    REQUIRE(stat(path, &st) == 0, "stat");
    if (rc != 0) {
        REQUIRE(err[0] != '\0', "refused without a message");
        REQUIRE((size_t)st.st_size == file_size, "a refused file was changed");
    } else if (file_size == 0) {
        REQUIRE(f.n_rows == 0 && (size_t)st.st_size == hlen + 1, "empty file: header written");
        attn_results_close(&f);
    } else {
        /* Accepted: a header, then whole lines that each parsed, then at
         * most one partial line, which is cut off. */
        char *all = malloc(file_size + 1);
        FILE *in = fopen(path, "rb");
        REQUIRE(all && in, "reopen");
        size_t got = fread(all, 1, file_size, in);
        fclose(in);
        REQUIRE(got == (size_t)st.st_size && got <= file_size, "size %zu", got);
        REQUIRE(got > 0 && all[got - 1] == '\n', "file does not end in a whole line");
        REQUIRE(strncmp(all, header, hlen) == 0, "header");
        long lines = 0;
        for (size_t i = hlen + 1; i < got; i++)
            lines += all[i] == '\n';
        REQUIRE(lines == f.n_rows, "%ld whole lines but %d rows kept", lines, f.n_rows);
        REQUIRE(f.dropped_partial == (got < file_size), "dropped_partial %d, %zu of %zu bytes",
                f.dropped_partial, got, file_size);
        free(all);
        attn_results_close(&f);
    }
    unlink(path);
    return 0;
}
