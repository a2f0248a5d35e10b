/* flash_driver.h — the ISA-free half of the online-softmax (FlashAttention-2
 * forward) variants stream, flash_avx2 and flash_avx512: how the work is cut
 * into tiles and spread over threads, the running softmax state, and the
 * flash-decoding split and merge. A variant supplies a geometry and a kernel
 * that folds a range of key blocks into one tile's state.
 *
 * A tile is up to max_rows query rows that read the same K/V head: the rows
 * of the heads_q/heads_kv query heads of one group, query-index major
 * (tile row = i·group + g), so GQA/MQA decode fills a tile from several
 * heads and each K/V block is read once for all of them. Inside a tile, row
 * r is SIMD lane r: the queries are packed transposed (qt[t][r]) and so is
 * the state (m[r], l[r], acc[c][r]), which makes every softmax step — max,
 * exp, sum, rescale, causal mask — a vertical vector operation.
 *
 * Threads: OpenMP over (batch, K/V head, tile) units, each taken by the
 * next free thread (dynamic, one at a time); a row's result never depends
 * on which thread computed it. With f16/bf16
 * K/V a unit is a group of up to 4 consecutive tiles of one head, so each
 * widened key block serves them all (the same blocks in the same order per
 * tile: the same bits as tile by tile). When there are
 * fewer units than 2 × threads (decode: n_q = 1), each tile's key range is
 * also split into `splits` contiguous chunks whose partial (max, sum, acc)
 * are merged in chunk order (flash-decoding): splits depends only on the
 * shape and the thread count, so a fixed thread count is bitwise
 * reproducible. At most 2 × threads chunks, so rule A's r = ceil(n/kv_block)
 * + 2·threads covers the merges.
 *
 * Few rows (decode): when a (batch, K/V head) has at most few_rows query
 * rows in all, rows as lanes would leave most lanes padding and read K
 * column by column. Such a head is one tile for the geometry's few_kernel,
 * with the queries and acc row-major (q[r][t], acc[r][c]) and rows padded
 * only to a power of two: the kernel can stream K and V rows sequentially
 * with the keys as lanes. Tiles, splits and merges are the same. */
#ifndef ATTN_FLASH_DRIVER_H
#define ATTN_FLASH_DRIVER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "variant.h"

/* For the kernels' building blocks: each call with constant row-vector
 * count and mask flag must become its own copy, so that the register-tile
 * loops unroll completely and the tiles live in registers, not on the
 * stack (gcc inlines large static functions only when told). */
#define FLASH_INLINE static inline __attribute__((always_inline))

typedef struct flash_tile flash_tile;
/* A whole tile's key range [kv_begin, kv_end) (the few-rows kernels). */
typedef void (*flash_kernel)(const flash_tile *t);
/* One key block [j0, j0 + nb) of a tile (the register-blocked kernels). */
typedef void (*flash_block_fn)(const flash_tile *t, int32_t j0, int32_t nb);

/* Row vectors per tile at most, for the geometries whose block kernels
 * are indexed by row vectors (blocks): max_rows <= FLASH_MAX_VECTORS ·
 * lanes. Kernels that take any row count (any_rows) may have narrower
 * lanes (stream: 4), with at most FLASH_MAX_VECTORS · 16 rows. */
enum { FLASH_MAX_VECTORS = 4 };

/* Key blocks sized from the caches and the head size (flash_key_block).
 * Tile kernels: the block's scores (keys x rows floats) take at most half
 * of L1D, so they stay there through the softmax and P·V passes beside the
 * operand rows, and its K and V rows (f32, staged or in place) at most a
 * quarter of L2. Few-rows kernels (decode, scores a few KiB): the block's
 * K and V rows at most a quarter of L2; every block costs a reload and
 * store of the tile's accumulators, a max fold and an exp of the rescale,
 * and its K→V and V→K switches start streams the prefetch has not
 * reached, so the fewer blocks the better while the block's rows stay
 * within L2. K and V rows are counted as f32 whatever their type: the
 * blocks set the rounding, and a narrow cache must give the bits of f32
 * K/V of its values (tests/test_narrow_kv.c). Multiples of the geometry's
 * kv_block, at most tile_max / few_max keys.
 * A few-rows kernel whose P·V reads each V row of a block once
 * (few_one_pass says when) takes K and V rows up to the whole L2 instead,
 * its scores up to 2/3 of L1D, at most few_one_pass_max keys: nothing of
 * the block is read twice, so only the switches count. Where
 * P·V passes over the block's V rows again (more rows than one pass
 * holds) they must still be in L2, and the quarter stays. Sapphire
 * Rapids (2 MiB L2; 2016 keys at d 128 instead of 480), decode n_kv
 * 32768, alternating rounds of one process, 2 threads: Hq 32 / Hkv 8
 * f16 1.04-1.05x, bf16 1.05x, f32 1.02x, f16 at 1 thread 1.02x; Hq 32 /
 * Hkv 32 1.005-1.008x; n_kv 4096 1.01x. The same blocks for 8 rows in
 * passes re-reading V: 2 rows x Hq 32 / Hkv 8 causal 0.95x, Hq 64 / Hkv 8
 * d 64 0.94-0.96x; so those keep the quarter. Scores past 2/3 of L1D
 * (4032 keys at Hq 32 / Hkv 8, 64 KiB) 1.01x, against 1.05x at 2016. */
typedef struct flash_block_rule {
    int32_t tile_max, few_max, few_one_pass_max;
    /* 1 when the few-rows kernel's P·V reads a block's V rows once for
     * `rows` rows of d_v (NULL: never). */
    int (*few_one_pass)(int32_t rows, int32_t d_v);
} flash_block_rule;

/* Keys per block for `rows` tile rows (few: a few-rows kernel), d_k and
 * d_v, on caches of l1d and l2 bytes: a multiple of step in [step, max].
 * Pure: tests call it with other machines' caches. */
int32_t flash_key_block(const flash_block_rule *r, int32_t step, int64_t l1d, int64_t l2,
                        int32_t rows, int32_t d_k, int32_t d_v, int few);

/* Query tiles of a head that share each staged (or f32_groups) key block:
 * a power of two up to FLASH_GROUP_TILES_MAX whose packed queries and
 * accumulators ((d_k + d_v) x rows floats a tile) take at most half of an
 * L2 of l2 bytes, beside the block's K and V rows (a quarter: above),
 * since every tile of the group is visited once a block. Against groups
 * of 4 on a Sapphire Rapids (2 MiB L2: 16 tiles at d 128), n 4096, 8
 * heads, alternating rounds: avx512 bf16 1.019x / 1.016x (d 128 / 64,
 * 2 threads), 1.019x at 1 thread, f16 1.031x, xsmm f32 1.017x. On a Zen 4
 * (1 MiB: 8 at d 128) groups of 8 and 16 were 1.003-1.022x. Pure: tests
 * call it with other machines' caches. */
enum { FLASH_GROUP_TILES_MAX = 16 };
int32_t flash_group_tiles(int64_t l2, int32_t rows, int32_t d_k, int32_t d_v);

/* The unit (a tile, a tile's key chunk, or a group of tiles; units of a
 * head are consecutive, in query-row order) that the schedule's i-th
 * hand-out runs, of `units` over `heads` (batch x K/V heads) heads.
 * Causal: within each head the units in reverse, the last query rows
 * (which see the most keys: the longest units, but for a short last
 * group of tiles) first, so what is left when a
 * thread frees up near the end is short; in row order the last hand-out
 * was the longest unit of the last head. Heads stay in order, so a head's
 * units still run close together in time. Non-causal units cost the same:
 * i itself. Which unit runs on which thread never changes a bit of its
 * rows (test_threads). Causal n 4096, 8 heads, 2 threads, alternating
 * rounds on a Sapphire Rapids, against row order: xsmm 1.02x (d 128 and
 * 64), avx512_bf16 1.03x (d 64), amx 1.03x (d 128): their 16-tile groups
 * make 4 units a head, the last ~5 % of the call; avx2 1.00x (512 one-tile
 * units). Pure: tests call it. */
int64_t flash_unit_at(int causal, int64_t units, int64_t heads, int64_t i);

typedef struct flash_geometry {
    int32_t lanes;    /* floats per vector: tile rows are padded to a multiple */
    int32_t max_rows; /* most rows per tile, a multiple of lanes */
    /* Keys per online-softmax block: this, or with block_rule or
     * long_kv_block a multiple of it chosen per problem (the variant's
     * tiles.keys is this, so rule A's r from it stays an upper bound). */
    int32_t kv_block;
    /* 0, or keys per block (a multiple of kv_block) for block-kernel tiles
     * whose head has at least long_kv_from keys: longer blocks where a
     * block's fixed costs weigh, shapes long enough that the keys of the
     * last block are few beside the rest. Takes the place of block_rule
     * there (no geometry has both). */
    int32_t long_kv_block, long_kv_from;
    /* NULL, or the caps of flash_key_block: key blocks from the caches and
     * the head size instead of kv_block always. */
    const struct flash_block_rule *block_rule;
    /* The block kernels by [row vectors - 1][masked]: the driver walks the
     * key blocks and takes the unmasked one for blocks every row of the
     * tile sees in full, the masked one for the causal diagonal and tiles
     * whose rows see fewer keys. */
    const flash_block_fn (*blocks)[2];
    /* Or, for kernels whose loops take any row count, one pair
     * {unmasked, masked} for every tile (blocks NULL). */
    const flash_block_fn *any_rows;
    /* Heads with n_q·group <= few_rows (a power of two) go to few_kernel in
     * the row-major layout, rows padded to a power of two; 0: never. */
    int32_t few_rows;
    flash_kernel few_kernel;
    /* f16/bf16 K and V: the driver widens each key block into an f32 block
     * in the thread's slice with this (NULL: attn_widen_best(), F16C when
     * the CPU has it) and hands the kernel that block, so the kernels read
     * f32 only and a tensor is never converted whole. */
    attn_widen_fn widen;
    /* 1 when few_kernel reads K/V of this type itself (tile.k_src, kv_type)
     * on this CPU, converting in registers as it streams them: then the
     * driver does not stage them. NULL: the few kernel reads f32 only. */
    int (*few_reads)(int32_t kv_type);
    /* 1: f32 K/V blocks are shared by groups of query tiles too (read in
     * place, one block for up to FLASH_GROUP_TILES_MAX tiles of a head before
     * the next), as staged narrow blocks always are; 0: each f32 tile
     * walks K/V alone. For kernels without a software prefetch of their
     * own, which wait on every block a tile re-reads from L3 or DRAM. */
    int f32_groups;
    /* 1: the block functions get t->scratch, kv_block·d_v floats of the
     * thread's own for one block's V rows (xsmm's masked P·V over a
     * cleaned copy); 0: t->scratch is NULL. */
    int block_scratch_v;
    /* Narrow K/V in the block kernels' own layout (NULL: each key block
     * widened to f32 with `widen`). Stages keys [j0, j0 + nb) of the head
     * (t->k_src, t->v_src, t->kv_type) into kbuf and vbuf, at most
     * kv_block·d_k and kv_block·d_v floats; the block kernels then read
     * t->k and t->v in that layout. Once per block for a whole group of
     * tiles, as the widening is (t is then the group's first tile: it
     * names the head, the types and d_k, d_v; its own keys may end before
     * j0 + nb); never for few_kernel tiles. */
    void (*stage)(const flash_tile *t, int32_t j0, int32_t nb, float *kbuf, float *vbuf);
    /* NULL (the driver's f32 transpose, t->qt: [d_k][rows], padding rows
     * 0), or with bf16 Q the block kernels' own layout of the tile's
     * queries, packed into qt straight from the rows instead: rows[r] is
     * tile row r's bf16 query (r < nvalid; the rest are padding, 0),
     * negated when `negate` (a negative scale). Once per tile, before its
     * first block; for a geometry of at most 16 lanes (t->rows at most
     * FLASH_MAX_VECTORS x 16; qt 64-byte aligned, as every tile array is). */
    void (*pack_q_rows)(const flash_tile *t, const uint16_t *const *rows, int32_t nvalid,
                        int negate, float *qt);
} flash_geometry;

/* One tile's work for the kernel. Arrays indexed [..][rows] have row stride
 * `rows` floats and start 64-byte aligned. */
struct flash_tile {
    int32_t rows; /* tile rows including padding: a multiple of lanes */
    int32_t d_k, d_v;
    int32_t kv_block;
    /* |scale|: a negative scale's sign is folded into qt (exactly), so a
     * masked score of -inf stays -inf when scaled. */
    float scale;
    /* Keys to fold in: blocks [j0, min(j0 + kv_block, kv_end)) for j0 =
     * kv_begin, kv_begin + kv_block, ...; kv_begin < kv_end. Keys at or past
     * kv_end are never read. */
    int32_t kv_begin, kv_end;
    /* Row r sees keys j < seen[r]. A block ending at or below seen_min is
     * visible to every row and needs no mask. Padding rows have the tile's
     * largest seen (their lanes are computed and never output). seen is
     * nondecreasing in r: a tile's rows come in query order (a GQA tile's
     * heads of one query position side by side), and a later query sees
     * at least the keys an earlier one does (xsmm's masked P·V builds on
     * this). */
    int32_t seen_min;
    const int32_t *seen; /* [rows] */
    const float *qt;     /* [d_k][rows] queries, transposed; padding rows 0 */
    /* The tile's K and V rows from key kv_row0 on: the whole head
     * (kv_row0 = 0), or for f16/bf16 K/V one widened key block (staged;
     * kv_row0 = its first key). Read them with flash_k_row / flash_v_row. */
    const float *k; /* [n_kv - kv_row0][d_k] */
    const float *v; /* [n_kv - kv_row0][d_v] */
    int32_t kv_row0;
    int32_t staged; /* 1: k and v hold only the block being folded */
    /* The head's K and V as the caller gave them, elements of kv_type: a
     * few kernel whose geometry's few_reads says so reads these (k and v
     * are NULL then); others ignore them. */
    const void *k_src, *v_src;
    int32_t kv_type;
    int32_t q_type; /* the type Q came in (qt holds its values as f32) */
    /* Running state, updated in place. Starts m = -inf, l = 0, acc = 0. */
    float *m;       /* [rows] max of the scaled scores folded in so far */
    float *l;       /* [rows] sum of exp(s - m) */
    float *acc;     /* [d_v][rows] sum of exp(s - m)·v, transposed */
    float *scores;  /* [kv_block][rows] scratch for one block's scores */
    float *scratch; /* [kv_block][d_v] (the geometry's block_scratch_v), or NULL */
    /* few_kernel tiles only (qt and acc are NULL there): the same row-major,
     * rows ld floats apart, ld a multiple of 16 >= d_k, d_v, zero padded;
     * rows is a power of two <= few_rows. */
    int32_t ld;
    const float *q; /* [rows][ld] queries (sign folded in as for qt) */
    float *acc_rm;  /* [rows][ld] acc */
};

/* What a kernel computes for each block [j0, j0 + nb), every row r:
 *   s_j  = (q_r · k_j) · scale            for j < seen[r]
 *   m'   = max(m, max_j s_j)   (a NaN score is skipped here and reaches the
 *          output through exp(NaN) instead)
 *   ms   = m' == -inf ? 0 : m'  (no exp(-inf - -inf) for rows that saw nothing)
 *   l    = l·exp(m - ms) + Σ_j exp(s_j - ms)
 *   acc  = acc·exp(m - ms) + Σ_j exp(s_j - ms)·v_j ; m = m'
 * The exp argument is the float dot product, times scale, minus ms: at most
 * rule A's d_k + 2 roundings (d_k + 1 when scale and shift are one FMA).
 * Keys j >= seen[r] must not change row r: never 0·v_j with v_j NaN or Inf
 * (a key the row cannot see may hold them). A hidden key's weight is +0, so
 * a kernel may add 0·v_j for a finite v_j (±0: amx's tiles, xsmm's GEMM,
 * stream's and the vector block kernels' P·V over a masked block do, after
 * checking the block's V with flash_hidden_v_finite; a -0 sum may come out
 * +0, the same value). */

/* Key j's K and V rows (kv_row0 <= j, inside the rows the tile holds). */
static inline const float *flash_k_row(const flash_tile *t, int32_t j)
{
    return t->k + (size_t)(j - t->kv_row0) * t->d_k;
}
static inline const float *flash_v_row(const flash_tile *t, int32_t j)
{
    return t->v + (size_t)(j - t->kv_row0) * t->d_v;
}

/* 1 when the block's V rows that some row does not see (keys from
 * seen_min on) are all finite, so that its P·V may run as an open block's
 * (the contract above). One pass with no branch in the loop, so that it
 * vectorises. */
static inline int flash_hidden_v_finite(const flash_tile *t, int32_t j0, int32_t nb)
{
    const int32_t from = t->seen_min > j0 ? t->seen_min : j0;
    if (from >= j0 + nb)
        return 1;
    const float *v = flash_v_row(t, from);
    const size_t n = (size_t)(j0 + nb - from) * (size_t)t->d_v;
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= !isfinite(v[i]);
    return !any;
}

/* For few kernels that read K/V of type T themselves (few_reads): the
 * tile's K or V as elements of T (a staged block is f32, so T is ATTN_F32
 * for it), indexed like flash_k_row / flash_v_row from kv_row0; and the
 * byte address of element e, for prefetching. */
FLASH_INLINE const void *flash_kv_base(const flash_tile *t, int is_v, const int T)
{
    if (T == ATTN_F32)
        return is_v ? (const void *)t->v : (const void *)t->k;
    return is_v ? t->v_src : t->k_src;
}

FLASH_INLINE const char *flash_byte_at(const void *base, size_t e, const int T)
{
    return (const char *)base + e * (T == ATTN_F32 ? 4 : 2);
}

int flash_workspace_size(const attn_problem *p, const flash_geometry *g, size_t *bytes);
int flash_run(const attn_problem *p, const flash_geometry *g, void *workspace);

/* The prefetch plan, the same for every ISA. A head's K and V (4 MiB at
 * n_kv = 4096, d = 128) outgrow L2, so every tile rereads them from L3, and
 * the hardware prefetchers, which see K read a few rows at a time and V a
 * block at a time in short slices, leave the FMAs waiting: a block's V is
 * fetched into L2 during its Q·Kᵀ and the next block's K during its P·V,
 * one line per inner-loop step. Measured on avx512 (1 thread, n = 4096, 4
 * heads): 1.09x at d = 128 (157 -> 172 GFLOP/s), 1.04x at d = 64; into L1
 * instead of L2 was no better.
 *
 * A staged tile's block is already in L1/L2 (just widened); what waits on
 * memory there is the widening of the next block, which reads its narrow
 * K and V rows from L3 once per group of tiles. So a staged tile fetches
 * those instead: the next block's narrow K during its Q·Kᵀ, its narrow V
 * during its P·V. Measured on a Zen 5 (n = 4096, bf16 and f16 against f32
 * in alternating rounds of one process): avx512 1 thread d = 128 from
 * 0.95-0.97x of f32 to 1.00-1.01x; d = 64, causal d = 96 and avx2 +1-3 %.
 * (Not widening at all, which gives wrong results, was 1.02x: the rest is
 * the widening's own instructions.) */
typedef struct flash_prefetch {
    const char *at;
    int32_t lines;
} flash_prefetch;

/* Every 64-byte line that [first, first + bytes) touches, from the first. */
static inline flash_prefetch flash_prefetch_bytes(const void *first, int64_t bytes)
{
    const char *at = (const char *)first;
    if (bytes <= 0)
        return (flash_prefetch){at, 0};
    const uintptr_t skew = (uintptr_t)at % 64;
    return (flash_prefetch){at - skew, (int32_t)(((int64_t)skew + bytes + 63) / 64)};
}

/* Lines per step so that `steps` steps name every line of any `bytes`
 * bytes, wherever in a line they start: flash_prefetch_bytes' count at
 * the worst skew (63), one line more than at skew 0. */
static inline int32_t flash_prefetch_per_step(int64_t bytes, int32_t steps)
{
    if (bytes <= 0 || steps <= 0)
        return 0;
    const int64_t lines = (63 + bytes + 63) / 64;
    return (int32_t)((lines + steps - 1) / steps);
}

/* Keys of the block after [j0, j0 + nb) that the tile folds (0 past kv_end). */
static inline int32_t flash_next_block_keys(const flash_tile *t, int32_t j0, int32_t nb)
{
    int32_t left = t->kv_end - (j0 + nb);
    return left <= 0 ? 0 : left < t->kv_block ? left : t->kv_block;
}

/* This block's V rows and the next block's K rows, read in place. */
static inline flash_prefetch flash_prefetch_this_v(const flash_tile *t, int32_t j0, int32_t nb)
{
    return flash_prefetch_bytes(flash_v_row(t, j0), (int64_t)nb * t->d_v * 4);
}
static inline flash_prefetch flash_prefetch_next_k(const flash_tile *t, int32_t j0, int32_t nb)
{
    int32_t keys = flash_next_block_keys(t, j0, nb);
    return flash_prefetch_bytes(keys ? flash_k_row(t, j0 + nb) : t->k, (int64_t)keys * t->d_k * 4);
}

/* The next block's K (is_v 0) or V rows in the caller's element type. */
static inline flash_prefetch flash_prefetch_next_source(const flash_tile *t, int32_t j0, int32_t nb,
                                                        int is_v)
{
    const int32_t d = is_v ? t->d_v : t->d_k;
    const size_t elem = attn_dtype_size(t->kv_type);
    const char *base = (const char *)(is_v ? t->v_src : t->k_src);
    return flash_prefetch_bytes(base + (size_t)(j0 + nb) * d * elem,
                                (int64_t)flash_next_block_keys(t, j0, nb) * d * (int64_t)elem);
}

/* What to fetch during a block's Q·Kᵀ and during its P·V (above). */
static inline flash_prefetch flash_prefetch_during_scores(const flash_tile *t, int32_t j0,
                                                          int32_t nb)
{
    return t->staged ? flash_prefetch_next_source(t, j0, nb, 0) : flash_prefetch_this_v(t, j0, nb);
}
static inline flash_prefetch flash_prefetch_during_pv(const flash_tile *t, int32_t j0, int32_t nb)
{
    return t->staged ? flash_prefetch_next_source(t, j0, nb, 1) : flash_prefetch_next_k(t, j0, nb);
}

/* One line into L2 (prefetcht1), while any are left. */
FLASH_INLINE void flash_prefetch_step(flash_prefetch *r)
{
    if (r->lines > 0) {
        __builtin_prefetch(r->at, 0, 2);
        r->at += 64;
        r->lines--;
    }
}

#endif
