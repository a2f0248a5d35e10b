/* avx2 decode — the few-rows kernel of the avx2 variant (flash_driver.h,
 * "Few rows"): a (batch, K/V head) with at most ATTN_AVX2_DECODE_ROWS query
 * rows in all, as one row-major tile, rows padded to R = 1, 2, 4 or 8. The
 * layout of flash_avx512_decode.c on 8 lanes: a vector holds 8/R keys x R
 * rows, lane i·R + r, so
 *   scores  8 dot products per vector, K rows loaded whole and in order
 *           against the R query rows (from L1), then attn_hsum8_avx2;
 *   softmax vertical; a row's block max and sum are folded across its 8/R
 *           lanes with XOR permutes, so every lane of a row holds its m, l;
 *   P·V     V rows streamed in order into a register tile of acc (rp rows
 *           x nz column vectors), the weight broadcast from the scores.
 * K and V are each read front to back, once. P·V walks V in column
 * passes, rows strided by d_v, which the hardware prefetchers do not
 * follow, so a block's V rows must be in L2 before its P·V starts: each
 * block's passes fetch the next block's V rows into L2, a line or two a
 * key (few_pv), and a tile's first block fetches its own while its scores
 * run. The scores read K in order, each line prefetched 4 KiB ahead into
 * L2 (without it 0.78x on a Sapphire Rapids, Hq 32 / Hkv 8, d 128, 2
 * threads): into L1 each line held one of the core's few L1 miss buffers
 * for its whole trip from DRAM (on a Zen 4, Hq 32 / Hkv 8, n_kv 32768,
 * d 128, alternating rounds of one process, into L2 was 1.38x / 1.25x
 * faster with an f16 / bf16 cache at 1 thread, 1.41x / 1.32x at 2).
 * So memory serves one stream at a time, in the order the kernel reads:
 * the next V while P·V runs, K while the scores run. Before, the passes
 * fetched the next block's K and each block's V was fetched while its
 * own scores ran, a burst of the whole block's V beside the K stream
 * that P·V's first pass then waited on. Against that, on a Sapphire
 * Rapids (n_kv 32768, d 128, alternating rounds of one process over
 * rotated copies on huge pages, as bench times decode): f32 Hq 32 /
 * Hkv 8 1.20x at 2 threads and 1.19x at 1, Hq 32 / Hkv 32 1.14x and
 * 1.14x, Hq 8 / 16 / 64 over Hkv 8 1.13x / 1.14x / 1.11x, d 256 1.18x,
 * d_k 64 / d_v 128 1.15x, d_k 128 / d_v 64 1.07x, n_kv 512 at 1 thread
 * 1.12x; an f16 cache 1.05x, bf16 1.00-1.08x; d 64 1.00x; one K/V head
 * for 8 query heads with d_k 128 / d_v 64 (n_kv 8192) 0.97x. The kernel
 * as it was had been tuned on a Zen 4, where this plan is unmeasured.
 * There, an f32 cache once fetched the next key block in place of both
 * of those (no V rows ahead of their P·V, no K line 4 KiB ahead), a few
 * lines per step of the scores and P·V through the driver's counted plan
 * (flash_prefetch_step: a count and a pointer updated every step), and
 * lost: without it 1.3-1.8x in cache (n_kv 1024, 1 and 2 threads),
 * 1.03-1.55x from DRAM at 1 thread and 1.07-1.22x at 2 (Hq 32 / Hkv 8,
 * d 64 and 128), d 256 0.85-1.18x at 1 thread and 1.10x at 2, only Hq 32
 * / Hkv 32 at 2 threads 0.95-0.98x. Prefetching each group's K rows as
 * one span (as avx512's decode does) and V 8 KiB ahead in P·V's first
 * pass: 0.65x / 0.74x with f16 / bf16, f32 within noise. Rows as lanes
 * (the block kernel) would leave 8 - R lanes idle and broadcast K element
 * by element: at GQA decode (R = 4) that ran at half the read roof. An
 * f16/bf16 KV cache is read as it is, 8 elements per 16-byte load widened
 * in registers (vcvtph2ps; a zero-extension and a 16-bit shift for bf16),
 * so it moves half the bytes.
 * -mavx2 -mfma -mf16c (the f16 copies run only where the CPU has F16C:
 * flash_avx2.c's few_reads). */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "flash_avx2_decode.h"
#include "flash_avx2_decode_plan.h"
#include "simd_avx2.h"

enum { LANES = AVX2_FEW_LANES, FEW_ROWS = ATTN_AVX2_DECODE_ROWS, FEW_PREFETCH = 4096 };

static inline int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

static inline __m256i lane_index(void)
{
    return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
}

/* Each lane gets the max (or sum) of the lanes of its row, n mod R. Both
 * partners compute a op b and b op a, which are equal: lanes stay identical. */
FLASH_INLINE __m256 fold_rows_max(__m256 x, const int R)
{
    for (int sh = 4; sh >= R; sh >>= 1)
        x = _mm256_max_ps(
            x, _mm256_permutevar8x32_ps(x, _mm256_xor_si256(lane_index(), _mm256_set1_epi32(sh))));
    return x;
}

FLASH_INLINE __m256 fold_rows_sum(__m256 x, const int R)
{
    for (int sh = 4; sh >= R; sh >>= 1)
        x = _mm256_add_ps(
            x, _mm256_permutevar8x32_ps(x, _mm256_xor_si256(lane_index(), _mm256_set1_epi32(sh))));
    return x;
}

/* 8 elements of K or V (type T) from element e, widened to f32 (exact). */
FLASH_INLINE __m256 load8(const void *base, size_t e, const int T)
{
    if (T == ATTN_F32)
        return _mm256_loadu_ps((const float *)base + e);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)base + e));
    if (T == ATTN_F16)
        return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* The first n < 8 of them, zero past: what lies beyond is the next row. */
FLASH_INLINE __m256 load_tail(const void *base, size_t e, int n, const int T)
{
    if (T == ATTN_F32)
        return _mm256_maskload_ps((const float *)base + e, attn_tail_mask_avx2(n));
    uint16_t h[LANES] = {0};
    memcpy(h, (const uint16_t *)base + e, sizeof h[0] * (size_t)n);
    return load8(h, 0, T);
}

/* acc[i·R + r] += q_r[c..c+8) · k_i[c..c+8) (key i's row from element
 * k[i] of kb); `tail` (n lanes) for the last columns of d_k: K past d_k is
 * the next key's row (maybe NaN), never read. */
FLASH_INLINE void few_dot_step(const flash_tile *t, const void *kb, const size_t *k, int32_t c,
                               int tail, const int R, const int T, __m256 *acc)
{
    const int kg = LANES / R;
    /* R <= 4: the q vectors stay in registers (R + 8 accumulators + K);
     * R = 8 would need 17 of the 16 ymm: q is reloaded from L1 per key. */
    __m256 q[4];
    for (int r = 0; r < R && R <= 4; r++)
        q[r] = _mm256_load_ps(t->q + (size_t)r * t->ld + c); /* zero past d_k */
    for (int i = 0; i < kg; i++) {
        __m256 kv = tail == LANES ? load8(kb, k[i] + (size_t)c, T)
                                  : load_tail(kb, k[i] + (size_t)c, tail, T);
        for (int r = 0; r < R; r++)
            acc[i * R + r] =
                _mm256_fmadd_ps(R <= 4 ? q[r & 3] : _mm256_load_ps(t->q + (size_t)r * t->ld + c),
                                kv, acc[i * R + r]);
    }
}

/* The line holding element c of each of the kg K rows, FEW_PREFETCH bytes
 * ahead, into L2 (see the top of the file). */
FLASH_INLINE void prefetch_k_line(const void *kb, const size_t *k, int kg, int32_t c, const int T)
{
    for (int i = 0; i < kg; i++)
        _mm_prefetch(flash_byte_at(kb, k[i] + (size_t)c, T) + FEW_PREFETCH, _MM_HINT_T1);
}

/* Unscaled scores of the 8/R keys from key j (nk of them real: the rest
 * repeat the last, so reads stay in the block) with the R rows, lane i·R + r.
 * fetch_v: the block is the tile's first, whose V rows no earlier P·V
 * fetched (few_pv): its keys' V rows are fetched here. */
FLASH_INLINE __m256 few_group_scores(const flash_tile *t, int32_t j, int32_t nk, const int R,
                                     const int T, int fetch_v)
{
    const int kg = LANES / R;
    const int32_t d_k = t->d_k;
    const void *kb = flash_kv_base(t, 0, T);
    size_t k[LANES];
    __m256 acc[LANES];
    for (int i = 0; i < kg; i++)
        k[i] = (size_t)(j - t->kv_row0 + min32(i, nk - 1)) * d_k;
    /* The first block's V rows, whole, into L2 while their scores run
     * (see the top of the file); a staged block is already in cache. */
    const int prefetch = !t->staged;
    if (prefetch && fetch_v) {
        const void *vb = flash_kv_base(t, 1, T);
        const size_t row_bytes = (size_t)t->d_v * attn_dtype_size(T);
        for (int i = 0; i < min32(kg, nk); i++) {
            const char *row = flash_byte_at(vb, (size_t)(j - t->kv_row0 + i) * t->d_v, T);
            for (size_t b = 0; b < row_bytes; b += 64)
                _mm_prefetch(row + b, _MM_HINT_T1);
        }
    }
    for (int n = 0; n < LANES; n++)
        acc[n] = _mm256_setzero_ps();
    /* K FEW_PREFETCH bytes ahead, one prefetch per 64-byte line of each
     * row (not per load: 2-4 fewer load-port slots a line, 1.04x in L2),
     * issued once per line with the line's 2 (f32) or 4 (f16, bf16) steps
     * unrolled under it, so that no step tests whether it starts a line:
     * Zen 4, n_kv 96 (L2), 1 thread, alternating rounds, against that
     * test in every step: f16 1.01-1.11x and bf16 1.06-1.15x at d 64,
     * 128, 256 (Hq 32 / Hkv 8), f16 1.14x with 2 rows and 1.05x with 8,
     * f32 0.98-1.01x; from DRAM (n_kv 32768, 2 threads) f16 1.06x, bf16
     * 1.11x. */
    const int line_steps = 64 / (LANES * (int)attn_dtype_size(T)); /* 2 or 4 */
    int32_t c = 0;
    for (; c + line_steps * LANES <= d_k; c += line_steps * LANES) {
        if (prefetch)
            prefetch_k_line(kb, k, kg, c, T);
        for (int s = 0; s < line_steps; s++)
            few_dot_step(t, kb, k, c + LANES * s, LANES, R, T, acc);
    }
    if (prefetch && c < d_k)
        prefetch_k_line(kb, k, kg, c, T);
    for (; c + LANES <= d_k; c += LANES)
        few_dot_step(t, kb, k, c, LANES, R, T, acc);
    if (c < d_k)
        few_dot_step(t, kb, k, c, d_k - c, R, T, acc);
    return attn_hsum8_avx2(acc);
}

/* The address of the 64-byte line `i` lines past line address `at`, as
 * an integer: the plan (few_pv) may name lines before the K tensor's first
 * byte (its line) and past its end. */
static inline const char *line_at(uintptr_t at, size_t i)
{
    return (const char *)(at + 64 * (uintptr_t)i);
}

/* acc rows [r0, r0 + rp), column vectors [z0, z0 + nz) (the last one has
 * `last` lanes): alpha, then the block's weighted V rows. With `ahead` set,
 * each key also prefetches `lines` lines from there into L2 (the next
 * block's V: few_pv). */
FLASH_INLINE void few_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int32_t r0,
                                 const int rp, int32_t z0, const int nz, int last, const int R,
                                 const int T, const int masked, const float *alpha, int rescale,
                                 uintptr_t ahead, const int lines)
{
    const int32_t d_v = t->d_v;
    __m256 a[FEW_ROWS][4];
    for (int r = 0; r < rp; r++) {
        const float *src = t->acc_rm + (size_t)(r0 + r) * t->ld + LANES * z0;
        for (int z = 0; z < nz; z++) {
            a[r][z] = _mm256_load_ps(src + LANES * z);
            if (rescale)
                a[r][z] = _mm256_mul_ps(a[r][z], _mm256_set1_ps(alpha[r0 + r]));
        }
    }
    const void *vb = flash_kv_base(t, 1, T);
    size_t vr = (size_t)(j0 - t->kv_row0) * d_v + LANES * (size_t)z0;
    const float *p = t->scores + r0;
    for (int32_t j = 0; j < nb; j++, vr += (size_t)d_v, p += R) {
        if (ahead) {
            _mm_prefetch(line_at(ahead, avx2_few_ahead_line(j, 0, nb)), _MM_HINT_T1);
            if (lines == 2)
                _mm_prefetch(line_at(ahead, avx2_few_ahead_line(j, 1, nb)), _MM_HINT_T1);
        }
        __m256 v[4];
        for (int z = 0; z < nz; z++)
            v[z] = z == nz - 1 && last < LANES ? load_tail(vb, vr + LANES * z, last, T)
                                               : load8(vb, vr + LANES * z, T);
        for (int r = 0; r < rp; r++) {
            /* A hidden key never touches the row (its V may be NaN). */
            if (masked && j0 + j >= t->seen[r0 + r])
                continue;
            __m256 pb = _mm256_broadcast_ss(p + r);
            for (int z = 0; z < nz; z++)
                a[r][z] = _mm256_fmadd_ps(pb, v[z], a[r][z]);
        }
    }
    for (int r = 0; r < rp; r++) {
        float *dst = t->acc_rm + (size_t)(r0 + r) * t->ld + LANES * z0;
        for (int z = 0; z < nz; z++)
            _mm256_store_ps(dst + LANES * z, a[r][z]);
    }
}

/* All R rows for column vectors [z0, z0 + nz), in passes of rp rows: at
 * most 8 accumulators, nz V vectors and a broadcast in the 16 ymm. */
static inline int few_rows_per_pass(int nz, int R)
{
    const int rp_max = nz > 2 ? 2 : nz > 1 ? 4 : 8;
    return R < rp_max ? R : rp_max;
}

FLASH_INLINE void few_rows_pass(const flash_tile *t, int32_t j0, int32_t nb, int32_t z0,
                                const int nz, int last, const int R, const int T, const int masked,
                                const float *alpha, int rescale, uintptr_t ahead, const int lines)
{
    const int rp = few_rows_per_pass(nz, R);
    for (int32_t r0 = 0; r0 < R; r0 += rp)
        few_accumulate(t, j0, nb, r0, rp, z0, nz, last, R, T, masked, alpha, rescale,
                       r0 == 0 ? ahead : 0, lines);
}

/* The line address where pass `pass` starts prefetching: 0 when it names
 * none. */
static inline uintptr_t pass_ahead(uintptr_t first_line, size_t span, size_t step, int32_t pass)
{
    const size_t at = avx2_few_ahead_start(span, step, pass);
    return at == SIZE_MAX ? 0 : first_line + at;
}

/* The next block's V rows, fetched into L2 while this block's P·V runs
 * (the plan: flash_avx2_decode_plan.h; why V: the top of the file), a
 * line or two a key, no count tested in the loop (a runtime count there
 * made GCC rebuild the loop: 0.87x with K/V in L3 on a Zen 4). Fetching
 * the next block's K here instead, with each block's V fetched during its
 * own scores, measured on a Zen 4 (d 128, alternating rounds of one
 * process against no fetch here at all, n_kv 32768, at 1 thread and at
 * 2): f32 Hq 32 / Hkv 8 1.20-1.33x and 1.16-1.23x, Hq 32 / Hkv 32
 * 1.11-1.27x and 1.05-1.20x, an f16 or bf16 cache at Hq 32 / Hkv 32
 * 1.38-1.60x and 1.23-1.56x; the next V, on a Sapphire Rapids, a further
 * 1.14-1.20x in f32. */
FLASH_INLINE void few_pv(const flash_tile *t, int32_t j0, int32_t nb, const int R, const int T,
                         const int masked, const float *alpha, int rescale)
{
    const avx2_few_passes np = avx2_few_column_passes(t->d_v, avx2_few_widest(R, T));
    const int lines = avx2_few_ahead_lines(R, T);
    const size_t step = avx2_few_ahead_step(R, T, nb);
    const int32_t nzv = np.vectors;
    const int lastn = t->d_v - LANES * (nzv - 1);
    /* The next block's V rows, their lines from the first's (the driver's
     * plan of them); none for a staged block. */
    flash_prefetch next = {0};
    if (!t->staged)
        next = flash_prefetch_next_source(t, j0, nb, 1);
    const uintptr_t first_line = (uintptr_t)next.at;
    const size_t span = 64 * (size_t)next.lines;
    int32_t z0 = 0, pass = 0;
    for (int32_t i = 0; i < np.of4; i++, z0 += 4, pass++)
        few_rows_pass(t, j0, nb, z0, 4, z0 + 4 == nzv ? lastn : LANES, R, T, masked, alpha, rescale,
                      pass_ahead(first_line, span, step, pass), lines);
    for (int32_t i = 0; i < np.of2; i++, z0 += 2, pass++)
        few_rows_pass(t, j0, nb, z0, 2, z0 + 2 == nzv ? lastn : LANES, R, T, masked, alpha, rescale,
                      pass_ahead(first_line, span, step, pass), lines);
    if (np.of1)
        few_rows_pass(t, j0, nb, z0, 1, lastn, R, T, masked, alpha, rescale,
                      pass_ahead(first_line, span, step, pass), lines);
}

/* One key block: scores, softmax (m and l in the lane pattern), P·V. */
FLASH_INLINE void few_block(const flash_tile *t, int32_t j0, int32_t nb, const int R, const int T,
                            const int masked, __m256 *m, __m256 *l)
{
    const int kg = LANES / R;
    const int log2r = R == 1 ? 0 : R == 2 ? 1 : R == 4 ? 2 : 3;
    const __m256i key = _mm256_srli_epi32(lane_index(), log2r);
    const __m256 scale = _mm256_set1_ps(t->scale), minus_inf = _mm256_set1_ps(-INFINITY);
    const __m256i seen =
        _mm256_permutevar8x32_epi32(_mm256_maskload_epi32(t->seen, attn_tail_mask_avx2(R)),
                                    _mm256_and_si256(lane_index(), _mm256_set1_epi32(R - 1)));
    __m256 bmax = minus_inf;
    for (int32_t jj = 0; jj < nb; jj += kg) {
        __m256 s = few_group_scores(t, j0 + jj, nb - jj, R, T, j0 == t->kv_begin);
        __m256i jv = _mm256_add_epi32(key, _mm256_set1_epi32(j0 + jj));
        __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(j0 + nb), jv);
        if (masked)
            keep = _mm256_and_si256(keep, _mm256_cmpgt_epi32(seen, jv));
        s = _mm256_blendv_ps(minus_inf, s, _mm256_castsi256_ps(keep));
        /* NaN scores skipped as in block_scores: they reach O through exp. */
        bmax = _mm256_max_ps(_mm256_mul_ps(s, scale), bmax);
        _mm256_store_ps(t->scores + (size_t)jj * R, s);
    }
    __m256 m_new = _mm256_max_ps(fold_rows_max(bmax, R), *m);
    __m256 shift =
        _mm256_andnot_ps(_mm256_cmp_ps(m_new, minus_inf, _CMP_EQ_OQ), m_new); /* -inf -> 0 */
    __m256 alpha = attn_exp_avx2(_mm256_sub_ps(*m, shift));
    int rescale = _mm256_movemask_ps(_mm256_cmp_ps(alpha, _mm256_set1_ps(1.0f), _CMP_NEQ_UQ)) != 0;
    *m = m_new;
    __m256 sum = _mm256_setzero_ps();
    for (int32_t jj = 0; jj < nb; jj += kg) {
        float *s = t->scores + (size_t)jj * R;
        __m256 p = attn_exp_avx2(_mm256_fmsub_ps(_mm256_load_ps(s), scale, shift));
        sum = _mm256_add_ps(sum, p);
        _mm256_store_ps(s, p);
    }
    *l = _mm256_fmadd_ps(*l, alpha, fold_rows_sum(sum, R));
    float alpha_r[LANES] __attribute__((aligned(32)));
    _mm256_store_ps(alpha_r, alpha); /* lane r (key 0) is row r's */
    few_pv(t, j0, nb, R, T, masked, alpha_r, rescale);
}

FLASH_INLINE void few_blocks(const flash_tile *t, const int R, const int T)
{
    const __m256i row = _mm256_and_si256(lane_index(), _mm256_set1_epi32(R - 1));
    const __m256i rows = attn_tail_mask_avx2(R);
    __m256 m = _mm256_permutevar8x32_ps(_mm256_maskload_ps(t->m, rows), row);
    __m256 l = _mm256_permutevar8x32_ps(_mm256_maskload_ps(t->l, rows), row);
    for (int32_t j0 = t->kv_begin; j0 < t->kv_end; j0 += t->kv_block) {
        int32_t nb = min32(t->kv_block, t->kv_end - j0);
        if (t->seen_min >= j0 + nb)
            few_block(t, j0, nb, R, T, 0, &m, &l);
        else
            few_block(t, j0, nb, R, T, 1, &m, &l);
    }
    _mm256_maskstore_ps(t->m, rows, m);
    _mm256_maskstore_ps(t->l, rows, l);
}

/* The instances: rows 1, 2, 4, 8 x K/V in f32 (or staged), f16, bf16. */
#define FEW_KERNEL(R, T, name)                                                                     \
    static void name(const flash_tile *t)                                                          \
    {                                                                                              \
        few_blocks(t, R, T);                                                                       \
    }
FEW_KERNEL(1, ATTN_F32, few_1_f32)
FEW_KERNEL(2, ATTN_F32, few_2_f32)
FEW_KERNEL(4, ATTN_F32, few_4_f32)
FEW_KERNEL(8, ATTN_F32, few_8_f32)
FEW_KERNEL(1, ATTN_F16, few_1_f16)
FEW_KERNEL(2, ATTN_F16, few_2_f16)
FEW_KERNEL(4, ATTN_F16, few_4_f16)
FEW_KERNEL(8, ATTN_F16, few_8_f16)
FEW_KERNEL(1, ATTN_BF16, few_1_bf16)
FEW_KERNEL(2, ATTN_BF16, few_2_bf16)
FEW_KERNEL(4, ATTN_BF16, few_4_bf16)
FEW_KERNEL(8, ATTN_BF16, few_8_bf16)

static const flash_kernel few_kernels[ATTN_DTYPE_COUNT][4] = {
    [ATTN_F32] = {few_1_f32, few_2_f32, few_4_f32, few_8_f32},
    [ATTN_F16] = {few_1_f16, few_2_f16, few_4_f16, few_8_f16},
    [ATTN_BF16] = {few_1_bf16, few_2_bf16, few_4_bf16, few_8_bf16},
};

void attn_avx2_decode_kernel(const flash_tile *t)
{
    /* A staged block is f32 whatever the tensors' type. */
    const int32_t type = t->staged ? ATTN_F32 : t->kv_type;
    const int rows = t->rows == 1 ? 0 : t->rows == 2 ? 1 : t->rows == 4 ? 2 : 3;
    few_kernels[type][rows](t);
}
