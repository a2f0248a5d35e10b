/* The few-rows (decode) kernel's body (flash_driver.h, "Few rows"): a
 * (batch, K/V head) with at most ATTN_AVX512_DECODE_ROWS query rows in
 * all, as one row-major tile; its layout, keys as lanes, has nothing in
 * common with the prefill block kernel's. Included by the files that
 * instantiate it: flash_avx512_decode.c (avx512: P in f32, -mavx512f) and
 * flash_avx512_bf16_decode.c (avx512_bf16: the same softmax, P·V on
 * vdpbf16ps with P rounded to bf16, and Q·Kᵀ on vdpbf16ps when Q came in
 * bf16; it defines ATTN_DECODE_PAIRS and is built with AVX512BW and
 * AVX512_BF16). */
#ifndef ATTN_FLASH_AVX512_DECODE_BODY_H
#define ATTN_FLASH_AVX512_DECODE_BODY_H

#include <immintrin.h>
#include <math.h>

#include "flash_avx512_decode.h"
#include "simd_avx512.h"

enum { LANES = 16, FEW_ROWS = ATTN_AVX512_DECODE_ROWS };

/* How a block's weights reach P·V: f32 FMAs on P in f32, or (the files
 * that define ATTN_DECODE_PAIRS) vdpbf16ps on P rounded to bf16. */
enum { FEW_PV_F32 = 0, FEW_PV_BF16 = 1 };

static inline int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* Few rows (decode). A head with at most FEW_ROWS query rows in all comes
 * as one row-major tile (flash_driver.h), rows padded to R = 1, 2, 4 or 8.
 * Rows as lanes would leave 16 - R lanes idle and read K column by column;
 * here a vector holds 16/R keys x R rows instead, lane i·R + r:
 *   scores  16 dot products per vector, K rows loaded whole and in order
 *           (the R query rows come from L1), then attn_hsum16_avx512;
 *   softmax vertical as in the tiles; a row's block max and sum are folded
 *           across its 16/R lanes with XOR shuffles, so every lane of a row
 *           holds the same m and l;
 *   P·V     V rows streamed in order into an RP-row x NZ-vector tile of acc
 *           held in registers, the weight broadcast from the block's scores.
 * So K and V are each read front to back, once, as two plain streams: the
 * hardware prefetchers keep them coming at memory speed, and the arithmetic
 * (about 2 FMAs per key element) hides under the transfer. flash_avx512.c's KV_BLOCK
 * is a multiple of 16, so every key group 16/R divides it. An f16/bf16 KV
 * cache is read as it is, 16 elements per 32-byte load widened in registers
 * (vcvtph2ps; a zero-extension and a 16-bit shift for bf16, both AVX512F),
 * so it moves half the bytes (flash_avx512.c's few_reads: every type). */
/* Prefetch: K and V lines are also prefetched ahead of the loads,
 * in address order, into L2 (prefetcht1): a prefetch into L1 holds one of
 * the core's few L1 miss buffers for the whole trip to DRAM, so the
 * stream a core could keep in flight was bounded by them; the loads then
 * find the lines in L2. Measured on a Zen 4 (Hq 32 / Hkv 8, n_kv 32768,
 * d 128, alternating rounds of one process), 8 KiB ahead: into L2 instead
 * of L1 1.13x (f16) and 1.25-1.28x (f32) at 1 thread, 1.14x and 1.10x at
 * 2; 4, 16 or 32 KiB ahead within +-5 % of 8.
 * How far ahead: K's span 3 KiB for an f32 cache; for f16 / bf16 6 KiB
 * with 1 or 2 query rows a K/V head, else 8 KiB (few_k_ahead); V 3 KiB for
 * f32 where one P·V pass reads the rows whole, else 8 KiB (few_v_ahead). A
 * decode reads K and V in turn, a key block of each, and a core reading
 * two arrays that way pulls less from DRAM than reading one, by how far
 * ahead it prefetches: on a Sapphire Rapids, a stand-alone loop (2
 * threads, each its own two arrays in turn 256 KiB at a time, no
 * arithmetic) read 24.9 GB/s with 8 KiB ahead, 27.6 with 4, 29.8 with 3,
 * 29.2 with 2, 28.2 with no prefetch, against 30-31 for one array read
 * through. In the kernel, f32, Hq 32 / Hkv 8, n_kv 32768, d 128,
 * alternating rounds of one process over rotated copies on huge pages (as
 * bench times decode), against 8 KiB: 3 KiB 1.07-1.08x at 2 threads (1.07x
 * at 1), V's prefetch alone at 3 KiB 1.05x and K's alone 1.01x; 2, 2.5,
 * 3.5, 5 or 6 KiB 1.00-1.045x; Hq 32 / Hkv 32 1.01-1.09x, Hq 64 / Hkv 8
 * 1.03-1.04x, Hq 16 / Hkv 8 1.06x, n_kv 4096 1.04x, batch 2 1.08x, 4
 * causal rows a head 1.07x, d 32 1.07x, d_k 64 / d_v 128 1.06x. An f16 /
 * bf16 cache, against 8 KiB for both: K and V at 3 KiB 0.99x / 1.01x, at 4
 * KiB 0.98x (f16), at 6 KiB 0.97-0.99x at Hq 32 / Hkv 8 but 1.03-1.08x at
 * Hq 32 / Hkv 32 and d 256; K's alone at 6 KiB 1.05x / 1.04x at Hq 32 /
 * Hkv 32, 1.06x / 1.09x at d 256 (Hq 16 / Hkv 8), 0.99-1.01x at Hq 32 / 64
 * over Hkv 8, d 64 and d 96 (4 and 8 rows a K/V head: they keep 8 KiB);
 * K's alone at 4 KiB 0.99-1.00x, and at 6 KiB 0.98-0.99x with 2 rows at
 * d 128 (Hq 16 / Hkv 8). The unchanged f16 kernel against itself (the
 * build before as A) read 0.984x in one such series: +-2 % is the floor
 * of these comparisons on this VM.
 * Where the rest of this comment says "prefetch", it was measured into L1
 * on a Zen 5. A key group's 16/R rows are read side by side, 16 columns of
 * each at a time; prefetching each load's own line ahead asked for the
 * group's lines in that interleaved order too (rows d_k·size bytes apart),
 * and DRAM served that stream at ~2/3 of a plain read while the FMAs ran.
 * So the group's rows are prefetched as one contiguous span, a few lines a
 * step (flash_prefetch_per_step). Measured on a Zen 5, Hq 32 / Hkv 8, n_kv
 * 32768, d 128, alternating rounds in one process: 1.03-1.13x at 4 KiB
 * ahead, 1.03-1.34x at 8 KiB (with V held in registers, below), 16 KiB no
 * better. A stand-alone loop that reads two streams the same way (1
 * thread, 4 FMAs a line): 23-24 GB/s with per-row prefetches, 32-34 GB/s
 * with the span's (37-38 and 30 without the FMAs). */
enum { MAX_NZ = 8, FEW_PREFETCH = 8192, FEW_PREFETCH_F32 = 3072, FEW_PREFETCH_K_NARROW = 6144 };

/* Bytes from a key group's K rows (R query rows a K/V head) to the span
 * its steps prefetch. */
static inline int32_t few_k_ahead(const int T, const int R)
{
    if (T == ATTN_F32)
        return FEW_PREFETCH_F32;
    return R <= 2 ? FEW_PREFETCH_K_NARROW : FEW_PREFETCH;
}

/* P·V prefetches V at every 16-element vector, so an f16/bf16 line (two
 * such vectors) is asked for twice. Asking once a line measured 1.06x
 * faster (f16, 2 threads) in rounds that called one copy of the inputs
 * over and over, partly from the L3. In rounds rotating 8 copies on huge
 * pages, as bench and the matrix time decode, asking twice was the
 * faster: 1.03-1.06x at 1 thread, 0.99-1.04x at 2 (f16; bf16 1.02x), on
 * a Sapphire Rapids (Hq 32 / Hkv 8, n_kv 32768, d 128). */
static inline __m512i lane_index(void)
{
    return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* Each lane gets the max (or sum) of the lanes of its row, n % R. Both
 * partners compute a op b and b op a, which are equal: lanes stay identical. */
FLASH_INLINE __m512 fold_rows_max(__m512 x, const int R)
{
    for (int sh = 8; sh >= R; sh >>= 1)
        x = _mm512_max_ps(
            x, _mm512_permutexvar_ps(_mm512_xor_si512(lane_index(), _mm512_set1_epi32(sh)), x));
    return x;
}

FLASH_INLINE __m512 fold_rows_sum(__m512 x, const int R)
{
    for (int sh = 8; sh >= R; sh >>= 1)
        x = _mm512_add_ps(
            x, _mm512_permutexvar_ps(_mm512_xor_si512(lane_index(), _mm512_set1_epi32(sh)), x));
    return x;
}

/* 16 f16 or bf16 elements widened to f32 (exact). */
FLASH_INLINE __m512 widen16(__m256i h, const int T)
{
    if (T == ATTN_F16)
        return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* 16 elements of K or V (type T) from element e, widened to f32 (exact). */
FLASH_INLINE __m512 load16(const void *base, size_t e, const int T)
{
    if (T == ATTN_F32)
        return _mm512_loadu_ps((const float *)base + e);
    return widen16(_mm256_loadu_si256((const __m256i *)((const uint16_t *)base + e)), T);
}

/* 16-bit elements [0, n) of p in the low half, zero past, nothing read
 * past element n - 1. 16-bit masked loads would need AVX512BW, so the
 * pairs come by a 32-bit masked load and an odd last element by itself.
 * Not a memcpy into a buffer: that was a call in the key loop, and the
 * call made GCC keep the 16 score accumulators in memory across it (the
 * f16 / bf16 instances stored and reloaded them every key group even at
 * d_k 128, where the tail never runs): 1.23-1.36x on a Zen 4 at 1 thread,
 * 1.18-1.31x at 2 with the prefetch hint below (Hq 32 / Hkv 8, n_kv
 * 32768, d 128, alternating rounds of one process). */
FLASH_INLINE __m256i load_u16_tail(const uint16_t *p, int n)
{
    __m512i w = _mm512_maskz_loadu_epi32((__mmask16)((1u << (n / 2)) - 1), p);
    if (n & 1)
        w = _mm512_mask_set1_epi32(w, (__mmask16)(1u << (n / 2)), p[n - 1]);
    return _mm512_castsi512_si256(w);
}

/* The lanes of `tail` (the first n), zero past: what lies beyond is the
 * next row. */
FLASH_INLINE __m512 load16_tail(const void *base, size_t e, __mmask16 tail, const int T)
{
    if (T == ATTN_F32)
        return _mm512_maskz_loadu_ps(tail, (const float *)base + e);
    return widen16(load_u16_tail((const uint16_t *)base + e, __builtin_popcount(tail)), T);
}

/* acc[i·R + r] += q_r[c..c+16) · k_i[c..c+16) (key i's row from element
 * k[i] of kb), lanes past `tail` zero. */
FLASH_INLINE void few_dot_step(const flash_tile *t, const void *kb, const size_t *k, int32_t c,
                               __mmask16 tail, const int R, const int T, __m512 *acc,
                               flash_prefetch *pf, int32_t per)
{
    const int kg = LANES / R;
    __m512 q[FEW_ROWS];
    for (int r = 0; r < R; r++)
        q[r] = _mm512_load_ps(t->q + (size_t)r * t->ld + c); /* zero past d_k */
    for (int32_t n = 0; n < per; n++)
        flash_prefetch_step(pf);
    for (int i = 0; i < kg; i++) {
        __m512 kv = tail == 0xffff ? load16(kb, k[i] + (size_t)c, T)
                                   : load16_tail(kb, k[i] + (size_t)c, tail, T);
        for (int r = 0; r < R; r++)
            acc[i * R + r] = _mm512_fmadd_ps(q[r], kv, acc[i * R + r]);
    }
}

/* One query row a K/V head (MHA decode) with d_k up to 256, its query
 * vectors all in KEY_MAJOR_Q registers: the group's keys one after
 * another, each key's row read front to back against q, instead of a
 * column step across all the group's rows at a time. Every lane gets the
 * same FMAs in the same order either way (bitwise the same scores); what
 * changes is the order of the loads, and a row read in address order is
 * what the prefetchers follow best. Hq 32 / Hkv 32, n_kv 32768 on a
 * Zen 4, alternating rounds of one process: d 128 f32 1.08-1.13x at
 * 1 thread, 0.99-1.06x at 2, f16 1.19-1.24x / 1.15-1.20x; d 256 f32
 * 1.22x / 1.18x (Hq 16). Not for more rows: 2 rows (Hq 16 / Hkv 8, d 128)
 * were 0.84x / 0.93x and 4 rows at d 64 0.65-0.77x (q, acc and K one
 * register too many, and the FMAs, not the loads, set their pace). The
 * key loop unrolled as well (acc in registers, not L1) added 370 KB of
 * code and nothing measurable. The prefetch: the group's span as in the
 * column order, its lines spread over the keys. */
enum { KEY_MAJOR_Q = 16 };

FLASH_INLINE __m512 few_group_scores_key_major(const flash_tile *t, const void *kb, const size_t *k,
                                               const int T, __m512 *acc, flash_prefetch *pf)
{
    const int32_t nzk = (t->d_k + LANES - 1) / LANES;
    const __mmask16 tail = attn_tail_mask_avx512(t->d_k - LANES * (nzk - 1));
    /* Loops to the constant KEY_MAJOR_Q, guarded by nzk: the indices of q
     * are constants, so it lives in registers (a loop to nzk left it on
     * the stack and gave back the gain). */
    __m512 q[KEY_MAJOR_Q];
#pragma GCC unroll 16
    for (int z = 0; z < KEY_MAJOR_Q; z++)
        q[z] = z < nzk ? _mm512_load_ps(t->q + LANES * z) : _mm512_setzero_ps();
    const int32_t per_key = (pf->lines + LANES - 1) / LANES;
    for (int i = 0; i < LANES; i++) {
        for (int32_t n = 0; n < per_key; n++)
            flash_prefetch_step(pf);
#pragma GCC unroll 16
        for (int z = 0; z < KEY_MAJOR_Q; z++) {
            if (z >= nzk)
                break;
            __m512 kv = z < nzk - 1 || tail == 0xffff
                            ? load16(kb, k[i] + (size_t)LANES * z, T)
                            : load16_tail(kb, k[i] + (size_t)LANES * z, tail, T);
            acc[i] = _mm512_fmadd_ps(q[z], kv, acc[i]);
        }
    }
    return attn_hsum16_avx512(acc);
}

#ifdef ATTN_DECODE_PAIRS
#include "flash_avx512_decode_pv_bf16.h"
#include "flash_avx512_decode_qk_bf16.h"
#endif

/* Q packed as bf16 for Q·Kᵀ on pairs (flash_avx512_decode_qk_bf16.h), or
 * NULL: f32 FMAs. */
typedef struct few_q_pairs {
    const uint16_t *rows;
    int32_t ld;
} few_q_pairs;

/* Unscaled scores of the 16/R keys from key j (nk of them are real: the
 * rest repeat the last, so reads stay in the block) with the R rows, lane
 * i·R + r; the lines few_k_ahead(T, R) bytes past the group's rows are prefetched,
 * `per` a step (of 16 columns, or of 32 on pairs: qp.rows set, T bf16). */
FLASH_INLINE __m512 few_group_scores(const flash_tile *t, few_q_pairs qp, int32_t j, int32_t nk,
                                     const int R, const int T, int32_t per)
{
    const int kg = LANES / R;
    const int32_t d_k = t->d_k;
    const void *kb = flash_kv_base(t, 0, T);
    size_t k[LANES];
    __m512 acc[LANES];
    for (int i = 0; i < kg; i++)
        k[i] = (size_t)(j - t->kv_row0 + min32(i, nk - 1)) * d_k;
    for (int n = 0; n < LANES; n++)
        acc[n] = _mm512_setzero_ps();
    flash_prefetch pf = flash_prefetch_bytes(flash_byte_at(kb, k[0], T) + few_k_ahead(T, R),
                                             (int64_t)kg * d_k * (int64_t)attn_dtype_size(T));
    int32_t c = 0;
#ifdef ATTN_DECODE_PAIRS
    if (qp.rows) {
        for (; c + QK_PAIRS_COLS <= d_k; c += QK_PAIRS_COLS)
            pairs_dot_step(qp.rows, qp.ld, kb, k, c, 0xffffffffu, R, acc, &pf, per);
        if (c < d_k)
            pairs_dot_step(qp.rows, qp.ld, kb, k, c, (__mmask32)((1u << (d_k - c)) - 1), R, acc,
                           &pf, per);
        return attn_hsum16_avx512(acc);
    }
#else
    (void)qp;
#endif
    if (R == 1 && (d_k + LANES - 1) / LANES <= KEY_MAJOR_Q)
        return few_group_scores_key_major(t, kb, k, T, acc, &pf);
    for (; c + LANES <= d_k; c += LANES)
        few_dot_step(t, kb, k, c, 0xffff, R, T, acc, &pf, per);
    if (c < d_k)
        few_dot_step(t, kb, k, c, attn_tail_mask_avx512(d_k - c), R, T, acc, &pf, per);
    return attn_hsum16_avx512(acc);
}

/* x, kept in a register: GCC otherwise folds a V load into each row's
 * FMA, loading every vector rp times (in cache, 8 rows of a head: 1.34x
 * with the V row held; the load ports were the bound). */
FLASH_INLINE __m512 in_register(__m512 x)
{
#ifdef __AVX512F__ /* not under the emulation of tests/emu512 */
    __asm__("" : "+v"(x));
#endif
    return x;
}

/* acc + v · p[0], p broadcast from memory into the FMA (no register for
 * it), on the lanes of `keep` (acc elsewhere): the same rounding as
 * _mm512_mask3_fmadd_ps(set1(p[0]), v, acc, keep). */
FLASH_INLINE __m512 fma_broadcast(__m512 acc, __m512 v, const float *p, __mmask16 keep)
{
#ifdef __AVX512F__ /* not under the emulation of tests/emu512 */
    if (keep == 0xffff)
        __asm__("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(v), "m"(*p));
    else
        __asm__("vfmadd231ps %2%{1to16%}, %1, %0%{%3%}" : "+v"(acc) : "v"(v), "m"(*p), "Yk"(keep));
    return acc;
#else
    return _mm512_mask3_fmadd_ps(_mm512_set1_ps(*p), v, acc, keep);
#endif
}

/* How far ahead (in elements) a P·V pass over nz column vectors of the V
 * rows prefetches: for an f32 cache FEW_PREFETCH_F32 bytes when the pass
 * reads the rows whole, FEW_PREFETCH when they take several (few_pv: d_v
 * past 128, or a count of 16-column vectors not 1, 2, 4 or 8); an f16 /
 * bf16 cache FEW_PREFETCH (above). A pass reads only its columns of each
 * row, so the same distance puts fewer of its lines in flight, and
 * strided passes wanted more of them than one pass's stream: f32, Hq 32 /
 * Hkv 8, n_kv 32768, 2 threads, alternating rounds as above, against
 * 8 KiB for every pass: 3 KiB 0.91x at d 96 (passes of 4 and 2 vectors),
 * 0.98x at d 256; 3 KiB of each pass's own bytes (4.5 and 9 KiB of
 * address at d 96) 0.96x and 0.98x; as here (8 KiB for those passes,
 * 3 KiB for K) d 96 0.99-1.01x, d 112 1.00x, d 256 1.00x. */
FLASH_INLINE size_t few_v_ahead(const flash_tile *t, const int nz, const int T)
{
    const int whole = nz * LANES >= t->d_v;
    const int32_t bytes = T == ATTN_F32 && whole ? FEW_PREFETCH_F32 : FEW_PREFETCH;
    return (size_t)bytes / attn_dtype_size(T);
}

/* acc rows [r0, r0 + rp), column vectors [z0, z0 + nz) (the last one masked
 * by `last`): alpha, then the block's weighted V rows, each row's V
 * vectors held in registers for the rp rows' FMAs. */
FLASH_INLINE void few_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int32_t r0,
                                 const int rp, int32_t z0, const int nz, __mmask16 last,
                                 const int R, const int T, const int masked, const float *alpha,
                                 int rescale)
{
    const int32_t d_v = t->d_v;
    __m512 a[FEW_ROWS][MAX_NZ];
    int32_t seen[FEW_ROWS];
    for (int r = 0; r < rp; r++) {
        const float *src = t->acc_rm + (size_t)(r0 + r) * t->ld + LANES * z0;
        seen[r] = t->seen[r0 + r];
        for (int z = 0; z < nz; z++) {
            a[r][z] = _mm512_load_ps(src + LANES * z);
            if (rescale)
                a[r][z] = _mm512_mul_ps(a[r][z], _mm512_set1_ps(alpha[r0 + r]));
        }
    }
    const void *vb = flash_kv_base(t, 1, T);
    size_t vr = (size_t)(j0 - t->kv_row0) * d_v + LANES * (size_t)z0;
    const size_t ahead = few_v_ahead(t, nz, T);
    const float *p = t->scores + r0;
    for (int32_t j = 0; j < nb; j++, vr += (size_t)d_v, p += R) {
        __m512 v[MAX_NZ];
        if (r0 == 0)
            for (int z = 0; z < nz; z++)
                _mm_prefetch(flash_byte_at(vb, vr + ahead + LANES * z, T), _MM_HINT_T1);
        for (int z = 0; z < nz; z++)
            v[z] = in_register(z == nz - 1 && (T == ATTN_F32 || last != 0xffff)
                                   ? load16_tail(vb, vr + LANES * z, last, T)
                                   : load16(vb, vr + LANES * z, T));
        for (int r = 0; r < rp; r++) {
            __m512 pb = _mm512_set1_ps(p[r]);
            __mmask16 vis = (__mmask16) - (int)(j0 + j < seen[r]);
            for (int z = 0; z < nz; z++)
                a[r][z] = masked ? _mm512_mask3_fmadd_ps(pb, v[z], a[r][z], vis)
                                 : _mm512_fmadd_ps(pb, v[z], a[r][z]);
        }
    }
    for (int r = 0; r < rp; r++) {
        float *dst = t->acc_rm + (size_t)(r0 + r) * t->ld + LANES * z0;
        for (int z = 0; z < nz; z++)
            _mm512_store_ps(dst + LANES * z, a[r][z]);
    }
}

/* The same for 4 rows x 8 column vectors [z0, z0 + 8) in one pass, the
 * 8th masked by `last` in f32 (narrow types: whole vectors only): each V
 * vector in one register for the 4 rows' FMAs in turn, the weight
 * broadcast from memory into the FMA, so 32 accumulators and the V
 * vector nearly fit the 32 zmm (GCC spills 2). Its own function with its
 * own 4 x 8 array: inside few_accumulate, GCC kept the f16/bf16
 * instances' accumulators in memory. */
FLASH_INLINE void few_accumulate_wide(const flash_tile *t, int32_t j0, int32_t nb, int32_t z0,
                                      __mmask16 last, const int T, const int masked,
                                      const float *alpha, int rescale)
{
    enum { RW = 4, NW = 8 };
    const int32_t d_v = t->d_v;
    __m512 a[RW][NW];
    int32_t seen[RW];
    for (int r = 0; r < RW; r++) {
        const float *src = t->acc_rm + (size_t)r * t->ld + LANES * z0;
        seen[r] = t->seen[r];
        for (int z = 0; z < NW; z++) {
            a[r][z] = _mm512_load_ps(src + LANES * z);
            if (rescale)
                a[r][z] = _mm512_mul_ps(a[r][z], _mm512_set1_ps(alpha[r]));
        }
    }
    const void *vb = flash_kv_base(t, 1, T);
    size_t vr = (size_t)(j0 - t->kv_row0) * d_v + LANES * (size_t)z0;
    const size_t ahead = few_v_ahead(t, NW, T);
    const float *p = t->scores;
    for (int32_t j = 0; j < nb; j++, vr += (size_t)d_v, p += RW) {
        for (int z = 0; z < NW; z++)
            _mm_prefetch(flash_byte_at(vb, vr + ahead + LANES * z, T), _MM_HINT_T1);
        __mmask16 vis[RW];
        for (int r = 0; r < RW; r++)
            vis[r] = masked ? (__mmask16) - (int)(j0 + j < seen[r]) : 0xffff;
        for (int z = 0; z < NW; z++) {
            __m512 vz = T == ATTN_F32 && z == NW - 1
                            ? _mm512_maskz_loadu_ps(last, (const float *)vb + vr + LANES * z)
                            : load16(vb, vr + LANES * z, T);
            for (int r = 0; r < RW; r++)
                a[r][z] = fma_broadcast(a[r][z], vz, p + r, vis[r]);
        }
    }
    for (int r = 0; r < RW; r++) {
        float *dst = t->acc_rm + (size_t)r * t->ld + LANES * z0;
        for (int z = 0; z < NW; z++)
            _mm512_store_ps(dst + LANES * z, a[r][z]);
    }
}

/* All R rows for column vectors [z0, z0 + nz), in passes of rp rows: a
 * tile of at most 16 accumulators, the rest of the 32 zmm for the V row;
 * or, for 4 rows of 8 vectors, all 4 in one pass of 32
 * (few_accumulate_wide). Why: each pass after the first reads the block's
 * V rows again from cache, core time that the memory stream does not
 * hide. Measured on a Zen 5 (Hq 32 / Hkv 8, alternating rounds of one
 * process on the same inputs, n_kv 4096-32768, d 128 and 256, and causal
 * 2 rows x 2 heads): in f32 one pass instead of two 1.07-1.35x at
 * 1 thread and 1.04-1.27x at 2; f16 / bf16 1.01-1.18x over that. A
 * loads-only kernel (FMAs removed) gained as much from one pass, while
 * the FMAs, the exp and the prefetches each cost 1-5 %. Not for 8 rows:
 * two passes of 4 instead of four of 2 left GCC spilling most of the
 * accumulators (0.75-0.91x in f32, 0.81-0.97x in bf16; as a non-inlined
 * function per type 0.94-0.96x and 0.79-0.81x). */
FLASH_INLINE void few_rows_pass(const flash_tile *t, int32_t j0, int32_t nb, int32_t z0,
                                const int nz, __mmask16 last, const int R, const int T,
                                const int masked, const float *alpha, int rescale)
{
    if (R == 4 && nz == 8 && (T == ATTN_F32 || last == 0xffff)) {
        few_accumulate_wide(t, j0, nb, z0, last, T, masked, alpha, rescale);
        return;
    }
    const int rp_max = attn_avx512_decode_rows_per_pass(nz);
    const int rp = R < rp_max ? R : rp_max;
    for (int32_t r0 = 0; r0 < R; r0 += rp)
        few_accumulate(t, j0, nb, r0, rp, z0, nz, last, R, T, masked, alpha, rescale);
}

FLASH_INLINE void few_pv(const flash_tile *t, int32_t j0, int32_t nb, const int R, const int T,
                         const int masked, const float *alpha, int rescale)
{
    const int32_t nzv = (t->d_v + LANES - 1) / LANES;
    const __mmask16 lastm = attn_tail_mask_avx512(t->d_v - LANES * (nzv - 1));
    int32_t z0 = 0;
    for (; z0 + 8 <= nzv; z0 += 8)
        few_rows_pass(t, j0, nb, z0, 8, z0 + 8 == nzv ? lastm : 0xffff, R, T, masked, alpha,
                      rescale);
    if (z0 + 4 <= nzv) {
        few_rows_pass(t, j0, nb, z0, 4, z0 + 4 == nzv ? lastm : 0xffff, R, T, masked, alpha,
                      rescale);
        z0 += 4;
    }
    if (z0 + 2 <= nzv) {
        few_rows_pass(t, j0, nb, z0, 2, z0 + 2 == nzv ? lastm : 0xffff, R, T, masked, alpha,
                      rescale);
        z0 += 2;
    }
    if (z0 < nzv)
        few_rows_pass(t, j0, nb, z0, 1, lastm, R, T, masked, alpha, rescale);
}

/* One key block: scores, softmax (m and l in the lane pattern), P·V. */
FLASH_INLINE void few_block(const flash_tile *t, int32_t j0, int32_t nb, const int R, const int T,
                            const int pv, few_q_pairs qp, const int masked, int32_t per, __m512 *m,
                            __m512 *l)
{
    const int kg = LANES / R;
    const int log2r = R == 1 ? 0 : R == 2 ? 1 : R == 4 ? 2 : 3;
    const __m512i key = _mm512_srli_epi32(lane_index(), log2r);
    const __m512 scale = _mm512_set1_ps(t->scale), minus_inf = _mm512_set1_ps(-INFINITY);
    __m512i seen =
        _mm512_permutexvar_epi32(_mm512_and_si512(lane_index(), _mm512_set1_epi32(R - 1)),
                                 _mm512_maskz_loadu_epi32(attn_tail_mask_avx512(R), t->seen));
    __m512 bmax = minus_inf;
    for (int32_t jj = 0; jj < nb; jj += kg) {
        __m512 s = few_group_scores(t, qp, j0 + jj, nb - jj, R, T, per);
        __m512i jv = _mm512_add_epi32(key, _mm512_set1_epi32(j0 + jj));
        __mmask16 keep = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(j0 + nb), jv);
        if (masked)
            keep &= _mm512_cmpgt_epi32_mask(seen, jv);
        s = _mm512_mask_mov_ps(minus_inf, keep, s);
        /* NaN scores skipped as in block_scores: they reach O through exp. */
        bmax = _mm512_max_ps(_mm512_mul_ps(s, scale), bmax);
        _mm512_store_ps(t->scores + (size_t)jj * R, s);
    }
    __m512 m_new = _mm512_max_ps(fold_rows_max(bmax, R), *m);
    __m512 shift = _mm512_mask_mov_ps(m_new, _mm512_cmp_ps_mask(m_new, minus_inf, _CMP_EQ_OQ),
                                      _mm512_setzero_ps());
    __m512 alpha = attn_exp_avx512(_mm512_sub_ps(*m, shift));
    int rescale = _mm512_cmp_ps_mask(alpha, _mm512_set1_ps(1.0f), _CMP_NEQ_UQ) != 0;
    *m = m_new;
    __m512 sum = _mm512_setzero_ps();
#ifdef ATTN_DECODE_PAIRS
    if (pv == FEW_PV_BF16)
        sum = few_weights_bf16(t, nb, R, masked, scale, shift);
    else
#endif
        for (int32_t jj = 0; jj < nb; jj += kg) {
            float *s = t->scores + (size_t)jj * R;
            __m512 p = attn_exp_avx512(_mm512_fmsub_ps(_mm512_load_ps(s), scale, shift));
            sum = _mm512_add_ps(sum, p);
            _mm512_store_ps(s, p);
        }
    *l = _mm512_fmadd_ps(*l, alpha, fold_rows_sum(sum, R));
    float alpha_r[LANES] __attribute__((aligned(64)));
    _mm512_store_ps(alpha_r, alpha); /* lane r (key 0) is row r's */
#ifdef ATTN_DECODE_PAIRS
    if (pv == FEW_PV_BF16 && !masked) {
        few_pv_bf16(t, j0, nb, R, alpha_r, rescale);
        return;
    }
#endif
    (void)pv;
    few_pv(t, j0, nb, R, T, masked, alpha_r, rescale);
}

FLASH_INLINE void few_blocks(const flash_tile *t, const int R, const int T, const int pv,
                             few_q_pairs qp)
{
    const __m512i row = _mm512_and_si512(lane_index(), _mm512_set1_epi32(R - 1));
    const __mmask16 rows = attn_tail_mask_avx512(R);
    __m512 m = _mm512_permutexvar_ps(row, _mm512_maskz_loadu_ps(rows, t->m));
    __m512 l = _mm512_permutexvar_ps(row, _mm512_maskz_loadu_ps(rows, t->l));
    /* K prefetch lines a column step of a key group (few_group_scores: 16
     * columns a step, 32 on pairs). */
    const int32_t step = qp.rows ? 2 * LANES : LANES;
    const int32_t per = flash_prefetch_per_step(
        (int64_t)(LANES / R) * t->d_k * (int64_t)attn_dtype_size(T), (t->d_k + step - 1) / step);
    for (int32_t j0 = t->kv_begin; j0 < t->kv_end; j0 += t->kv_block) {
        int32_t nb = min32(t->kv_block, t->kv_end - j0);
        if (t->seen_min >= j0 + nb)
            few_block(t, j0, nb, R, T, pv, qp, 0, per, &m, &l);
        else
            few_block(t, j0, nb, R, T, pv, qp, 1, per, &m, &l);
    }
    _mm512_mask_storeu_ps(t->m, rows, m);
    _mm512_mask_storeu_ps(t->l, rows, l);
}

#endif
