/* The block kernels' prefetch plan (flash_driver.h): which lines a tile
 * asks for during a block's Q·Kᵀ and during its P·V. Read in place (f32
 * K/V), this block's V rows and the next block's K rows; staged (f16/bf16
 * K/V widened per block), the next block's narrow K and V rows of the
 * caller's tensors, since the staged block itself is already in cache.
 * Each plan must name every line its rows touch and no line outside them,
 * nothing past the tile's last key, and nothing of the staged copy. The
 * avx512 decode kernel's per-step span (check_per_step) is checked here too,
 * and the avx2 decode kernel's plan of the next block's K during P·V
 * (check_avx2_ahead), the one plan that may name lines past the tile's
 * last key: up to one pass's share past the next block, where a prefetch
 * is harmless. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flash_avx2_decode_plan.h"
#include "flash_driver.h"

/* Lines [first, last] that bytes [at, at + n) touch. */
typedef struct line_span {
    uintptr_t first, last;
} line_span;

static line_span span_of(const char *at, size_t n)
{
    return (line_span){(uintptr_t)at / 64, ((uintptr_t)at + n - 1) / 64};
}

/* The plan walked to its end, as flash_prefetch_step would: the lines it
 * names must be exactly `want` (n = 0: none). */
static void check_plan(check_tally *t, flash_prefetch pf, const char *at, size_t n, const char *ctx,
                       const char *rows)
{
    char what[200];
    snprintf(what, sizeof what, "%s, %s", ctx, rows);
    if (n == 0) {
        CHECK(t, pf.lines == 0, "%s: %d lines for no rows", what, pf.lines);
        return;
    }
    line_span want = span_of(at, n);
    CHECK(t, (uintptr_t)pf.at % 64 == 0, "%s: starts %zu bytes into a line", what,
          (size_t)((uintptr_t)pf.at % 64));
    CHECK(t, (uintptr_t)pf.at / 64 == want.first, "%s: first line %+lld from the rows' first", what,
          (long long)((uintptr_t)pf.at / 64) - (long long)want.first);
    CHECK(t, pf.lines >= 0 && (uintptr_t)pf.lines == want.last - want.first + 1,
          "%s: %d lines for rows spanning %zu", what, pf.lines,
          (size_t)(want.last - want.first + 1));
}

typedef struct tensors {
    float *kbuf, *vbuf;  /* a staged block (f32) */
    char *k_src, *v_src; /* the caller's K and V of the head */
} tensors;

/* One tile over keys [0, kv_end) in blocks of kv_block, each block's plans. */
static void check_tile(check_tally *t, const tensors *ts, int32_t type, int32_t d_k, int32_t d_v,
                       int32_t kv_block, int32_t kv_end)
{
    const size_t elem = attn_dtype_size(type);
    const int staged = type != ATTN_F32;
    char what[120];
    for (int32_t j0 = 0; j0 < kv_end; j0 += kv_block) {
        const int32_t nb = kv_end - j0 < kv_block ? kv_end - j0 : kv_block;
        const int32_t after = kv_end - (j0 + nb);
        const int32_t next = after < kv_block ? after : kv_block;
        flash_tile tile = {.d_k = d_k,
                           .d_v = d_v,
                           .kv_block = kv_block,
                           .kv_begin = 0,
                           .kv_end = kv_end,
                           .k = staged ? ts->kbuf : (const float *)ts->k_src,
                           .v = staged ? ts->vbuf : (const float *)ts->v_src,
                           .kv_row0 = staged ? j0 : 0,
                           .staged = staged,
                           .k_src = ts->k_src,
                           .v_src = ts->v_src,
                           .kv_type = type};
        flash_prefetch in_scores = flash_prefetch_during_scores(&tile, j0, nb);
        flash_prefetch in_pv = flash_prefetch_during_pv(&tile, j0, nb);
        snprintf(what, sizeof what, "type %d d_k %d d_v %d block %d keys %d j0 %d", (int)type,
                 (int)d_k, (int)d_v, (int)kv_block, (int)kv_end, (int)j0);
        if (staged) {
            check_plan(t, in_scores, ts->k_src + (size_t)(j0 + nb) * d_k * elem,
                       (size_t)next * d_k * elem, what, "Q.K^T: the next block's narrow K");
            check_plan(t, in_pv, ts->v_src + (size_t)(j0 + nb) * d_v * elem,
                       (size_t)next * d_v * elem, what, "P.V: the next block's narrow V");
        } else {
            check_plan(t, in_scores, ts->v_src + (size_t)j0 * d_v * 4, (size_t)nb * d_v * 4, what,
                       "Q.K^T: this block's V");
            check_plan(t, in_pv, ts->k_src + (size_t)(j0 + nb) * d_k * 4, (size_t)next * d_k * 4,
                       what, "P.V: the next block's K");
        }
    }
}

/* The avx512 decode kernel's K plan: a key group's rows (kg rows of d_k
 * elements) prefetched as one span, flash_prefetch_per_step lines a
 * column step. Every placement of the span must be named within the
 * group's steps, and per must be the fewest that does (more would run
 * into the next group's lines early). */
static void check_per_step(check_tally *t, const char *line, int64_t bytes, int32_t steps)
{
    int32_t per = flash_prefetch_per_step(bytes, steps), most = 0;
    for (int off = 0; off < 64; off++) {
        flash_prefetch pf = flash_prefetch_bytes(line + off, bytes);
        if (pf.lines > most)
            most = pf.lines;
        CHECK(t, (int64_t)per * steps >= pf.lines,
              "per step: %lld bytes at +%d in %d steps: %d lines a step leave %lld of %d",
              (long long)bytes, off, steps, per, (long long)pf.lines - (int64_t)per * steps,
              pf.lines);
    }
    int32_t fewest = (most + steps - 1) / steps;
    CHECK(t, per == fewest, "per step: %lld bytes in %d steps: %d lines a step, %d would do",
          (long long)bytes, steps, per, fewest);
}

/* The avx2 decode kernel's P·V passes over a block of nb keys, each naming
 * lines of the next block's V (`next` keys of d_v elements, the first
 * `skew` bytes into a line) as flash_avx2_decode.c's few_pv and
 * few_accumulate do: the span from that line, pass i's start
 * (avx2_few_ahead_start), then a line or two a key. The lines named must
 * run contiguously from the span's first line as far as the passes reach,
 * no further than one step past its end; they must reach every V byte
 * (every line of the span but, off a line, maybe its last), whatever the
 * type, rows and d_v; with no V to come, no line. */
static void check_avx2_ahead(check_tally *t, int32_t type, int rows, int32_t d_v, int32_t nb,
                             int32_t next, size_t skew)
{
    enum { MAX_LINES = 4096 };
    static unsigned char named[MAX_LINES];
    char what[160];
    snprintf(what, sizeof what, "avx2 ahead, %s, R %d, d_v %d, nb %d, next %d, skew %zu",
             attn_dtype_name(type), rows, (int)d_v, (int)nb, (int)next, skew);
    const avx2_few_passes np = avx2_few_column_passes(d_v, avx2_few_widest(rows, type));
    const int32_t passes = np.of4 + np.of2 + np.of1;
    const int lines = avx2_few_ahead_lines(rows, type);
    const size_t step = avx2_few_ahead_step(rows, type, nb);
    const size_t bytes = (size_t)next * (size_t)d_v * attn_dtype_size(type);
    /* As few_pv: the driver's plan of the next block's V lines. */
    static char v_mem[64 * 2 + 64 * 264 * 4];
    const char *line0 = (const char *)(((uintptr_t)v_mem + 63) / 64 * 64);
    const size_t span = 64 * (size_t)flash_prefetch_bytes(line0 + skew, (int64_t)bytes).lines;
    CHECK(t, np.of4 * 4 + np.of2 * 2 + np.of1 == np.vectors && np.of1 <= 1,
          "%s: passes of 4/2/1 (%d/%d/%d) miss the %d vectors", what, (int)np.of4, (int)np.of2,
          (int)np.of1, (int)np.vectors);
    CHECK(t, (lines == 1 || lines == 2) && step == 64 * (size_t)lines * (size_t)nb,
          "%s: %d lines a key, step %zu", what, lines, step);
    memset(named, 0, sizeof named);
    size_t first = SIZE_MAX, last = 0;
    for (int32_t pass = 0; pass < passes; pass++) {
        const size_t at = avx2_few_ahead_start(span, step, pass);
        if (at == SIZE_MAX)
            continue;
        CHECK(t, at < span && at % 64 == 0, "%s: pass %d starts at byte %zu of a %zu-byte span",
              what, (int)pass, at, span);
        for (int32_t j = 0; j < nb; j++)
            for (int l = 0; l < lines; l++) {
                const size_t line = at / 64 + avx2_few_ahead_line(j, l, nb);
                if (line < MAX_LINES)
                    named[line] = 1;
                first = line < first ? line : first;
                last = line > last ? line : last;
            }
    }
    if (span == 0) {
        CHECK(t, first == SIZE_MAX, "%s: lines named with no V to come", what);
        return;
    }
    const size_t span_lines = (span + 63) / 64, reach = (size_t)passes * step;
    CHECK(t, reach >= bytes, "%s: the passes reach %zu bytes of %zu V bytes", what, reach, bytes);
    CHECK(t, first == 0, "%s: the first line named is %zu, not the span's first", what, first);
    CHECK(t, last < (span + step + 63) / 64,
          "%s: line %zu named, more than a step past the span's %zu lines", what, last, span_lines);
    const size_t want = reach / 64 < span_lines ? reach / 64 : span_lines;
    for (size_t i = 0; i < want && i < MAX_LINES; i++)
        if (!named[i]) {
            CHECK(t, 0, "%s: line %zu of the span's %zu not named", what, i, span_lines);
            break;
        }
}

int main(void)
{
    check_tally t = {0};
    enum { MAX_KEYS = 700, MAX_D = 257 };
    tensors ts;
    /* One byte off a line: a row's start falls anywhere in its line. */
    char *k_mem = malloc((size_t)MAX_KEYS * MAX_D * 4 + 65);
    char *v_mem = malloc((size_t)MAX_KEYS * MAX_D * 4 + 65);
    ts.kbuf = malloc((size_t)MAX_KEYS * MAX_D * 4);
    ts.vbuf = malloc((size_t)MAX_KEYS * MAX_D * 4);
    if (!k_mem || !v_mem || !ts.kbuf || !ts.vbuf)
        return 2;
    const int32_t types[] = {ATTN_F32, ATTN_F16, ATTN_BF16};
    const int32_t dims[][2] = {{1, 1}, {3, 5}, {64, 64}, {80, 80}, {96, 64}, {128, 128}, {257, 3}};
    const int32_t blocks[] = {1, 6, 48, 64, 144};
    const int32_t ends[] = {1, 47, 48, 49, 333, 700};
    const size_t offsets[] = {0, 2, 4, 62};
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        uintptr_t k_line = ((uintptr_t)k_mem + 63) / 64 * 64,
                  v_line = ((uintptr_t)v_mem + 63) / 64 * 64;
        ts.k_src = k_mem + (k_line - (uintptr_t)k_mem) + offsets[o];
        ts.v_src = v_mem + (v_line - (uintptr_t)v_mem) + offsets[o];
        for (size_t ty = 0; ty < 3; ty++)
            for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
                for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
                    for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
                        if (types[ty] == ATTN_F32 && offsets[o] % 4)
                            continue; /* f32 rows are 4-byte aligned */
                        check_tile(&t, &ts, types[ty], dims[d][0], dims[d][1], blocks[b], ends[e]);
                    }
    }
    free(k_mem);
    free(v_mem);
    free(ts.kbuf);
    free(ts.vbuf);
    static char line_buf[128];
    const char *line = (const char *)(((uintptr_t)line_buf + 63) / 64 * 64);
    CHECK(&t, flash_prefetch_per_step(0, 8) == 0, "per step: lines for no bytes");
    for (int32_t steps = 1; steps <= 20; steps++)
        for (int64_t bytes = 1; bytes <= 2100; bytes += bytes < 200 ? 1 : 7)
            check_per_step(&t, line, bytes, steps);
    /* The kernel's own spans: 16/R keys of d_k elements, a step a 16-column slice. */
    for (int32_t kg = 1; kg <= 16; kg *= 2)
        for (int32_t d_k = 1; d_k <= 300; d_k++)
            for (int32_t size = 2; size <= 4; size += 2)
                check_per_step(&t, line, (int64_t)kg * d_k * size, (d_k + 15) / 16);
    /* avx2's decode: every type, row count and d_v up to 264, a range of
     * block lengths and next-block lengths, V rows off their lines. */
    const int32_t nbs[] = {1, 5, 64};
    for (size_t ty = 0; ty < 3; ty++)
        for (int rows = 1; rows <= 8; rows *= 2)
            for (int32_t d_v = 1; d_v <= 264; d_v++)
                for (size_t n = 0; n < sizeof nbs / sizeof nbs[0]; n++) {
                    /* None, a few, half, all but one, and a whole next block. */
                    const int32_t nb = nbs[n];
                    const int32_t nexts[] = {0, 1, 2, nb / 2, nb - 1, nb};
                    for (size_t x = 0; x < sizeof nexts / sizeof nexts[0]; x++)
                        for (size_t skew = 0; skew < 64; skew += types[ty] == ATTN_F32 ? 20 : 30)
                            if (nexts[x] >= 0 && nexts[x] <= nb)
                                check_avx2_ahead(&t, types[ty], rows, d_v, nb, nexts[x], skew);
                }
    return check_report("test_prefetch_plan", &t);
}
