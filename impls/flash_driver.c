/* flash_driver.c — tiles, threads, the state's start and finish, and the
 * flash-decoding merge for the online-softmax variants (see flash_driver.h).
 * Portable C: the vectorised work is the kernel's, and the tiles'
 * transposes and type conversions are chosen at run time (transpose.h,
 * dtype.h). */
#include "flash_driver.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "cpu_features.h"
#include "transpose.h"

typedef struct flash_plan {
    int64_t rows_per_head;  /* n_q · group: tile rows of one (batch, K/V head) */
    int64_t tiles_per_head; /* ceil(rows_per_head / rows) */
    int64_t tasks;          /* batch · heads_kv · tiles_per_head */
    int32_t rows;           /* rows per tile, padded to lanes */
    int32_t kv_block;       /* keys per block (flash_key_block, or the geometry's) */
    int32_t splits;         /* key-range chunks per tile (1: no split) */
    /* Tiles of one head that share each staged key block (1: none share):
     * a unit is `group` consecutive tiles, or a (tile, chunk) when split. */
    int32_t group;
    int64_t groups_per_head, units;
    int few;    /* the geometry's few_kernel and row-major layout */
    int32_t ld; /* few: row stride of q and acc */
    /* Element (r, t) of q is at r·q_rs + t·q_ts, (r, c) of acc at r·acc_rs + c·acc_cs. */
    size_t q_rs, q_ts, acc_rs, acc_cs;
    /* Per-thread slice, in floats from its start (each 64-byte aligned);
     * qt, seen and state once per tile of a group, *_step floats apart. */
    size_t qt_at, seen_at, scores_at, state_at, slice_floats;
    size_t qt_step, seen_step;
    /* f16/bf16 K/V: one key block of each, widened (stage_keys rows). */
    size_t kstage_at, vstage_at;
    int32_t stage_keys;  /* 0: K/V are f32, read in place */
    size_t scratch_at;   /* the geometry's block_scratch_v: kv_block·d_v floats */
    size_t state_floats; /* m, l, acc of one tile */
    size_t acc_at;       /* acc's offset in a tile's state */
    size_t partials_at;  /* where the split partial states start (splits > 1) */
    size_t total_bytes;
} flash_plan;

/* Adds n floats (64-byte aligned) at *end; returns where they start, or
 * SIZE_MAX on overflow. */
static size_t carve(size_t *end, size_t n)
{
    size_t at = *end, r = attn_line_floats(n);
    if (r < n || at + r < at) {
        *end = SIZE_MAX;
        return SIZE_MAX;
    }
    *end = at + r;
    return at;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Splits only when the tiles alone cannot keep every thread busy, into at
 * most 2 × threads chunks and never more than there are key blocks. */
static int32_t choose_splits(const attn_problem *p, int32_t kv_block, int64_t tasks)
{
    int64_t threads = p->threads > 0 ? p->threads : 1;
    if (threads == 1 || tasks >= 2 * threads)
        return 1;
    int64_t s = ceil_div(2 * threads, tasks);
    int64_t blocks = ceil_div(p->shape.n_kv, kv_block);
    return (int32_t)(s < blocks ? s : blocks);
}

/* The most multiples of step whose keys take at most budget bytes at
 * bytes_per_key, capped at max; at least one step. */
static int32_t keys_within(int64_t budget, int64_t bytes_per_key, int32_t step, int32_t max)
{
    int64_t keys = bytes_per_key > 0 ? budget / bytes_per_key : max;
    keys = keys / step * step;
    keys = keys < max ? keys : max;
    return (int32_t)(keys > step ? keys : step);
}

int32_t flash_key_block(const flash_block_rule *r, int32_t step, int64_t l1d, int64_t l2,
                        int32_t rows, int32_t d_k, int32_t d_v, int few)
{
    const int64_t kv_row = ((int64_t)d_k + d_v) * (int64_t)sizeof(float);
    if (few && r->few_one_pass && r->few_one_pass(rows, d_v)) {
        const int32_t kv_in_l2 = keys_within(l2, kv_row, step, r->few_one_pass_max);
        const int32_t scores_in_l1 =
            keys_within(l1d * 2 / 3, (int64_t)rows * 4, step, r->few_one_pass_max);
        return kv_in_l2 < scores_in_l1 ? kv_in_l2 : scores_in_l1;
    }
    const int32_t in_l2 = keys_within(l2 / 4, kv_row, step, few ? r->few_max : r->tile_max);
    if (few)
        return in_l2;
    const int32_t in_l1 = keys_within(l1d / 2, (int64_t)rows * 4, step, r->tile_max);
    return in_l1 < in_l2 ? in_l1 : in_l2;
}

/* Narrow K/V in the block kernels: each staged (widened) key block serves
 * a group of query tiles of its head before the next block is widened, so
 * the widening costs 1/group of what a block per tile would (a 32-row
 * tile at d = 128 spent ~7 % of its time widening). A geometry with
 * f32_groups shares f32 blocks (read in place) the same way. The group is
 * what fits beside the block in L2 (flash_group_tiles), and groups only
 * while there are units enough for every thread (4 per thread: the
 * schedule's balance); the rows' results are the same bits whatever the
 * group (test_threads: 1 thread against 16). */
int32_t flash_group_tiles(int64_t l2, int32_t rows, int32_t d_k, int32_t d_v)
{
    const int64_t tile_bytes = ((int64_t)d_k + d_v) * rows * (int64_t)sizeof(float);
    int32_t group = FLASH_GROUP_TILES_MAX;
    while (group > 1 && group * tile_bytes > l2 / 2)
        group /= 2;
    return group;
}

static int32_t choose_group(const attn_problem *p, int64_t heads, int64_t tiles_per_head,
                            int32_t rows)
{
    const int64_t threads = p->threads > 0 ? p->threads : 1;
    int32_t group = flash_group_tiles(attn_cpu()->l2_bytes, rows, p->shape.d_k, p->shape.d_v);
    while (group > 1 &&
           (group > tiles_per_head || heads * ceil_div(tiles_per_head, group) < 4 * threads))
        group /= 2;
    return group;
}

static int make_plan(const attn_problem *p, const flash_geometry *g, flash_plan *pl)
{
    const attn_shape *s = &p->shape;
    memset(pl, 0, sizeof *pl);
    pl->rows_per_head = (int64_t)s->n_q * p->group;
    pl->few = g->few_kernel && pl->rows_per_head <= g->few_rows;
    if (pl->few) {
        pl->tiles_per_head = 1;
        int32_t rows = 1;
        while (rows < pl->rows_per_head)
            rows *= 2;
        pl->rows = rows;
        /* A head of 2^31 - 15 floats or more pads past int32: its rows
         * could not be a workspace anyway. */
        const size_t ld = attn_line_floats((size_t)(s->d_k > s->d_v ? s->d_k : s->d_v));
        if (ld > INT32_MAX)
            return ATTN_ENOMEM;
        pl->ld = (int32_t)ld;
    } else {
        pl->tiles_per_head = ceil_div(pl->rows_per_head, g->max_rows);
        /* Rows shared out evenly among the tiles, then padded to whole
         * vectors: 70 rows become two tiles of 48, not 64 + 6. */
        int64_t rows =
            ceil_div(ceil_div(pl->rows_per_head, pl->tiles_per_head), g->lanes) * g->lanes;
        pl->rows = (int32_t)rows;
    }
    pl->tasks = (int64_t)s->batch * s->heads_kv * pl->tiles_per_head;
    pl->kv_block = g->kv_block;
    if (g->long_kv_block && !pl->few && s->n_kv >= g->long_kv_from)
        pl->kv_block = g->long_kv_block;
    else if (g->block_rule) {
        const attn_cpu_info *cpu = attn_cpu();
        pl->kv_block = flash_key_block(g->block_rule, g->kv_block, cpu->l1d_bytes, cpu->l2_bytes,
                                       pl->rows, s->d_k, s->d_v, pl->few);
    }
    pl->splits = choose_splits(p, pl->kv_block, pl->tasks);
    /* Narrow K/V are staged a block at a time, except for a few kernel
     * that reads them itself. */
    const int direct = pl->few && g->few_reads && g->few_reads(p->types.kv);
    const int staged = p->types.kv != ATTN_F32 && !direct;
    pl->group = (staged || g->f32_groups) && !pl->few && pl->splits == 1
                    ? choose_group(p, (int64_t)s->batch * s->heads_kv, pl->tiles_per_head, pl->rows)
                    : 1;
    pl->groups_per_head = ceil_div(pl->tiles_per_head, pl->group);
    pl->units = pl->group > 1 ? (int64_t)s->batch * s->heads_kv * pl->groups_per_head
                              : pl->tasks * pl->splits;

    size_t r = (size_t)pl->rows, end = 0, n, acc_floats;
    pl->q_rs = pl->few ? (size_t)pl->ld : 1;
    pl->q_ts = pl->few ? 1 : r;
    pl->acc_rs = pl->q_rs;
    pl->acc_cs = pl->q_ts;
    pl->acc_at = attn_line_floats(2 * r);
    if (__builtin_mul_overflow(pl->few ? (size_t)pl->ld : (size_t)s->d_v, r, &acc_floats) ||
        __builtin_add_overflow(pl->acc_at, acc_floats, &pl->state_floats))
        return ATTN_ENOMEM;
    /* Split partial states lie back to back: each starts 64-byte aligned. */
    pl->state_floats = attn_line_floats(pl->state_floats);
    if (pl->state_floats < acc_floats)
        return ATTN_ENOMEM;
    if (__builtin_mul_overflow(pl->few ? (size_t)pl->ld : (size_t)s->d_k, r, &n))
        return ATTN_ENOMEM;
    pl->qt_step = attn_line_floats(n);
    pl->seen_step = attn_line_floats(r); /* int32 and float are both 4 bytes */
    if (pl->qt_step < n || __builtin_mul_overflow(pl->qt_step, (size_t)pl->group, &n))
        return ATTN_ENOMEM;
    pl->qt_at = carve(&end, n);
    pl->seen_at = carve(&end, pl->seen_step * (size_t)pl->group);
    pl->scores_at = carve(&end, (size_t)pl->kv_block * r);
    if (__builtin_mul_overflow(pl->state_floats, (size_t)pl->group, &n))
        return ATTN_ENOMEM;
    pl->state_at = carve(&end, n);
    if (staged) {
        pl->stage_keys = pl->kv_block;
        pl->kstage_at = carve(&end, (size_t)pl->kv_block * (size_t)s->d_k);
        pl->vstage_at = carve(&end, (size_t)pl->kv_block * (size_t)s->d_v);
    }
    if (g->block_scratch_v && !pl->few)
        pl->scratch_at = carve(&end, (size_t)pl->kv_block * (size_t)s->d_v);
    pl->slice_floats = end;
    if (end == SIZE_MAX || __builtin_mul_overflow(end, (size_t)p->threads, &end))
        return ATTN_ENOMEM;
    pl->partials_at = end;
    if (pl->splits > 1) {
        /* tasks < 2 × threads here, so this stays small. */
        if (__builtin_mul_overflow(pl->state_floats, (size_t)pl->tasks * (size_t)pl->splits, &n))
            return ATTN_ENOMEM;
        carve(&end, n);
    }
    if (end == SIZE_MAX || __builtin_mul_overflow(end, sizeof(float), &pl->total_bytes))
        return ATTN_ENOMEM;
    return ATTN_OK;
}

int flash_workspace_size(const attn_problem *p, const flash_geometry *g, size_t *bytes)
{
    flash_plan pl;
    int rc = make_plan(p, g, &pl);
    if (rc == ATTN_OK)
        *bytes = pl.total_bytes;
    return rc;
}

/* Which rows a task covers. */
typedef struct task_rows {
    int32_t b, kv_head;
    int64_t row0;   /* first tile row, in i·group + g numbering */
    int32_t nvalid; /* rows that exist (the rest is padding) */
} task_rows;

static task_rows locate(const attn_problem *p, const flash_plan *pl, int64_t task)
{
    task_rows t;
    int64_t tile = task % pl->tiles_per_head, head = task / pl->tiles_per_head;
    t.kv_head = (int32_t)(head % p->shape.heads_kv);
    t.b = (int32_t)(head / p->shape.heads_kv);
    t.row0 = tile * pl->rows;
    int64_t left = pl->rows_per_head - t.row0;
    t.nvalid = (int32_t)(left < pl->rows ? left : pl->rows);
    return t;
}

/* Query index and query head of tile row r. */
static void row_source(const attn_problem *p, const task_rows *t, int32_t r, int32_t *i, int32_t *h)
{
    int64_t gi = t->row0 + r;
    *i = (int32_t)(gi / p->group);
    *h = t->kv_head * p->group + (int32_t)(gi % p->group);
}

/* Rows are converted in chunks of this many elements through a buffer on
 * the stack: the vector widening and narrowing (dtype.h) instead of one
 * scalar conversion per element, which for f16 Q and O cost ~20
 * instructions an element (callgrind, n = 512: pack and finish 6x f32's). */
enum { ROW_CHUNK = 256 };

/* Rows of a tile moved through the vector transposes at once (transpose.h). */
enum { ROW_BLOCK = 16 };

/* The tile's queries transposed, qt[c][r] = Q row r's element c: up to
 * ROW_BLOCK rows at a time widened into a buffer, then transposed in the
 * ISA's vectors (f32 rows of one head, MHA, straight from Q); the sign of
 * a negative scale folded in afterwards (the same multiplication by -1 of
 * each element as one at a time). */
static void pack_transposed(const attn_problem *p, const flash_plan *pl, const task_rows *t,
                            float sign, float *qt)
{
    const int32_t d_k = p->shape.d_k, rows = pl->rows;
    const attn_widen_fn widen = attn_widen_best();
    const attn_transpose_fn transpose = attn_transpose_best();
    const int direct = p->group == 1 && p->types.q == ATTN_F32;
    if (t->nvalid < rows) /* padding rows are zero */
        memset(qt, 0, sizeof(float) * (size_t)d_k * rows);
    for (int32_t r0 = 0; r0 < t->nvalid; r0 += ROW_BLOCK) {
        const int32_t n_r = t->nvalid - r0 < ROW_BLOCK ? t->nvalid - r0 : ROW_BLOCK;
        for (int32_t c0 = 0; c0 < d_k; c0 += ROW_CHUNK) {
            float buf[ROW_BLOCK][ROW_CHUNK];
            const int32_t n_c = d_k - c0 < ROW_CHUNK ? d_k - c0 : ROW_CHUNK;
            float *dst = qt + (size_t)c0 * rows + r0;
            if (direct) { /* consecutive f32 rows of one head: no copy */
                int32_t i, h;
                row_source(p, t, r0, &i, &h);
                const float *q = (const float *)attn_q_head(p, t->b, h) + (size_t)i * d_k + c0;
                transpose(q, (size_t)d_k, dst, (size_t)rows, n_r, n_c, NULL);
                continue;
            }
            for (int32_t r = 0; r < n_r; r++) {
                int32_t i, h;
                row_source(p, t, r0 + r, &i, &h);
                const void *q = attn_q_head(p, t->b, h);
                widen(attn_elem_at(q, p->types.q, (size_t)i * d_k + c0), p->types.q, buf[r],
                      (size_t)n_c);
            }
            transpose(&buf[0][0], ROW_CHUNK, dst, (size_t)rows, n_r, n_c, NULL);
        }
    }
    if (sign < 0.0f)
        for (size_t e = 0; e < (size_t)d_k * rows; e++)
            qt[e] = sign * qt[e];
}

/* Packs the tile's queries (transposed, or row-major for few; qt NULL:
 * not at all) and the keys each row sees; returns the most keys any row
 * sees. */
static int32_t pack_tile(const attn_problem *p, const flash_plan *pl, const task_rows *t, float *qt,
                         int32_t *seen, int32_t *seen_min)
{
    const int32_t d_k = p->shape.d_k, rows = pl->rows;
    const float sign = p->scale < 0.0f ? -1.0f : 1.0f;
    int32_t hi = 0, lo = INT32_MAX;
    if (pl->few) {
        const attn_widen_fn widen = attn_widen_best();
        /* Padding rows and a row's columns past d_k are zero. */
        memset(qt, 0, sizeof(float) * (size_t)pl->ld * rows);
        for (int32_t r = 0; r < t->nvalid; r++) {
            int32_t i, h;
            row_source(p, t, r, &i, &h);
            float *row = qt + (size_t)r * pl->q_rs;
            widen(attn_elem_at(attn_q_head(p, t->b, h), p->types.q, (size_t)i * d_k), p->types.q,
                  row, (size_t)d_k);
            for (int32_t c = 0; c < d_k; c++)
                row[c] = sign * row[c];
        }
    } else if (qt) {
        pack_transposed(p, pl, t, sign, qt);
    }
    for (int32_t r = 0; r < t->nvalid; r++) {
        int32_t i, h;
        row_source(p, t, r, &i, &h);
        seen[r] = attn_keys_seen(&p->shape, i);
        hi = seen[r] > hi ? seen[r] : hi;
        lo = seen[r] < lo ? seen[r] : lo;
    }
    for (int32_t r = t->nvalid; r < rows; r++)
        seen[r] = hi;
    *seen_min = lo;
    return hi;
}

static void init_state(const flash_plan *pl, float *state)
{
    for (int32_t r = 0; r < pl->rows; r++) {
        state[r] = -INFINITY;       /* m */
        state[pl->rows + r] = 0.0f; /* l */
    }
    memset(state + pl->acc_at, 0, sizeof(float) * (pl->state_floats - pl->acc_at)); /* acc */
}

/* O row = acc / l; a row that sees no key is exactly +0. Up to ROW_BLOCK
 * rows at a time: divided (and transposed, in the ISA's vectors,
 * transpose.h) into a buffer, then narrowed into O; f32 rows of one head
 * (MHA) straight into O. The same division of each element either way. */
static void finish_tile(const attn_problem *p, const flash_plan *pl, const task_rows *t,
                        const int32_t *seen, float *state)
{
    const int32_t d_v = p->shape.d_v;
    const float *l = state + pl->rows;
    float *acc = state + pl->acc_at;
    const attn_narrow_fn narrow = attn_narrow_best();
    const attn_transpose_fn transpose = attn_transpose_best();
    const int direct = pl->acc_cs != 1 && p->group == 1 && p->types.o == ATTN_F32;
    for (int32_t r0 = 0; r0 < t->nvalid; r0 += ROW_BLOCK) {
        const int32_t n_r = t->nvalid - r0 < ROW_BLOCK ? t->nvalid - r0 : ROW_BLOCK;
        for (int32_t c0 = 0; c0 < d_v; c0 += ROW_CHUNK) {
            float buf[ROW_BLOCK][ROW_CHUNK];
            const int32_t n_c = d_v - c0 < ROW_CHUNK ? d_v - c0 : ROW_CHUNK;
            if (direct) { /* consecutive f32 rows of one head: no copy */
                int32_t i, h;
                row_source(p, t, r0, &i, &h);
                float *o = (float *)attn_o_head(p, t->b, h) + (size_t)i * d_v + c0;
                transpose(acc + (size_t)c0 * pl->acc_cs + r0, pl->acc_cs, o, (size_t)d_v, n_c, n_r,
                          l + r0);
                for (int32_t r = 0; r < n_r; r++)
                    if (seen[r0 + r] == 0) /* 0 / 0 above: +0 instead */
                        memset(o + (size_t)r * d_v, 0, sizeof(float) * (size_t)n_c);
                continue;
            }
            if (pl->acc_cs == 1) { /* row-major (few) */
                for (int32_t r = 0; r < n_r; r++)
                    for (int32_t c = 0; c < n_c; c++)
                        buf[r][c] =
                            acc[(size_t)(r0 + r) * pl->acc_rs + (size_t)(c0 + c)] / l[r0 + r];
            } else {
                transpose(acc + (size_t)c0 * pl->acc_cs + r0, pl->acc_cs, &buf[0][0], ROW_CHUNK,
                          n_c, n_r, l + r0);
            }
            for (int32_t r = 0; r < n_r; r++) {
                int32_t i, h;
                row_source(p, t, r0 + r, &i, &h);
                void *o =
                    attn_elem_at_mut(attn_o_head(p, t->b, h), p->types.o, (size_t)i * d_v + c0);
                if (seen[r0 + r] == 0) /* +0 in any type */
                    memset(o, 0, attn_dtype_size(p->types.o) * (size_t)n_c);
                else
                    narrow(buf[r], p->types.o, o, (size_t)n_c);
            }
        }
    }
}

/* Where a tile's narrow K/V come from and the blocks they are staged
 * into (stage_keys rows each): widened to f32, or in the layout of the
 * geometry's stage function. */
typedef struct kv_stage {
    const void *k, *v; /* the head's f16/bf16 K and V */
    int32_t type;
    attn_widen_fn widen;
    void (*custom)(const flash_tile *t, int32_t j0, int32_t nb, float *kbuf, float *vbuf);
    float *kbuf, *vbuf;
} kv_stage;

/* Stages keys [j0, j0 + nb) of the head of tile t. */
static void fill_stage(const kv_stage *st, const flash_tile *t, int32_t j0, int32_t nb)
{
    if (st->custom) {
        st->custom(t, j0, nb, st->kbuf, st->vbuf);
        return;
    }
    st->widen(attn_elem_at(st->k, st->type, (size_t)j0 * t->d_k), st->type, st->kbuf,
              (size_t)nb * t->d_k);
    st->widen(attn_elem_at(st->v, st->type, (size_t)j0 * t->d_v), st->type, st->vbuf,
              (size_t)nb * t->d_v);
}

/* A copy of t that reads the block staged from key j0 on. */
static flash_tile staged_view(const flash_tile *t, const kv_stage *st, int32_t j0)
{
    flash_tile b = *t;
    b.k = st->kbuf;
    b.v = st->vbuf;
    b.kv_row0 = j0;
    b.staged = 1;
    return b;
}

/* A copy of t that holds keys [j0, j0 + nb) widened into the stage. */
static flash_tile stage_block(const flash_tile *t, const kv_stage *st, int32_t j0, int32_t nb)
{
    fill_stage(st, t, j0, nb);
    return staged_view(t, st, j0);
}

/* The geometry's block kernels for tiles of `rows` rows. */
static const flash_block_fn *block_fns(const flash_geometry *g, int32_t rows)
{
    int32_t nv = rows / g->lanes;
    return g->blocks ? g->blocks[(nv < FLASH_MAX_VECTORS ? nv : FLASH_MAX_VECTORS) - 1]
                     : g->any_rows;
}

/* The tile's key blocks through the geometry's block kernels: the mask
 * only where some row of the tile stops seeing keys inside the block.
 * Narrow K/V (st non-NULL): each block widened first. */
static void fold_blocks(const flash_geometry *g, const flash_tile *t, const kv_stage *st)
{
    const flash_block_fn *fn = block_fns(g, t->rows);
    for (int32_t j0 = t->kv_begin; j0 < t->kv_end; j0 += t->kv_block) {
        int32_t nb = t->kv_end - j0 < t->kv_block ? t->kv_end - j0 : t->kv_block;
        if (st) {
            flash_tile b = stage_block(t, st, j0, nb);
            fn[t->seen_min < j0 + nb](&b, j0, nb);
        } else {
            fn[t->seen_min < j0 + nb](t, j0, nb);
        }
    }
}

/* The few-rows kernel over the tile's range, one widened block per call
 * for narrow K/V (its state carries over from call to call). */
static void fold_few(const flash_geometry *g, const flash_tile *t, const kv_stage *st)
{
    if (!st) {
        g->few_kernel(t);
        return;
    }
    for (int32_t j0 = t->kv_begin; j0 < t->kv_end; j0 += t->kv_block) {
        int32_t nb = t->kv_end - j0 < t->kv_block ? t->kv_end - j0 : t->kv_block;
        flash_tile b = stage_block(t, st, j0, nb);
        b.kv_begin = j0;
        b.kv_end = j0 + nb;
        g->few_kernel(&b);
    }
}

/* Packs task `task` (its `chunk` of `splits`) into qt, seen and state and
 * returns its tile: the key blocks it folds are those its rows can see
 * (causal skipping: blocks no row sees are never visited). */
static flash_tile start_tile(const attn_problem *p, const flash_geometry *g, const flash_plan *pl,
                             float *slice, task_rows *t, int64_t task, int32_t chunk, float *qt,
                             int32_t *seen, float *state)
{
    *t = locate(p, pl, task);
    const int rows_direct = g->pack_q_rows && p->types.q == ATTN_BF16 && !pl->few;
    int32_t seen_min;
    int32_t seen_max = pack_tile(p, pl, t, rows_direct ? NULL : qt, seen, &seen_min);
    init_state(pl, state);
    const int32_t kv_block = pl->kv_block;
    int64_t blocks = ceil_div(seen_max, kv_block);
    int64_t b0 = blocks * chunk / pl->splits, b1 = blocks * (chunk + 1) / pl->splits;
    int64_t end = b1 * kv_block < seen_max ? b1 * kv_block : seen_max;
    flash_tile tile = {
        .rows = pl->rows,
        .d_k = p->shape.d_k,
        .d_v = p->shape.d_v,
        .kv_block = kv_block,
        .scale = fabsf(p->scale),
        .kv_begin = (int32_t)(b0 * kv_block),
        .kv_end = (int32_t)end,
        .seen_min = seen_min,
        .seen = seen,
        .qt = pl->few ? NULL : qt,
        .k = p->types.kv != ATTN_F32 ? NULL : attn_k_head(p, t->b, t->kv_head * p->group),
        .v = p->types.kv != ATTN_F32 ? NULL : attn_v_head(p, t->b, t->kv_head * p->group),
        .k_src = attn_k_head(p, t->b, t->kv_head * p->group),
        .v_src = attn_v_head(p, t->b, t->kv_head * p->group),
        .kv_type = p->types.kv,
        .q_type = p->types.q,
        .m = state,
        .l = state + pl->rows,
        .acc = pl->few ? NULL : state + pl->acc_at,
        .scores = slice + pl->scores_at,
        .scratch = g->block_scratch_v && !pl->few ? slice + pl->scratch_at : NULL,
        .ld = pl->ld,
        .q = pl->few ? qt : NULL,
        .acc_rm = pl->few ? state + pl->acc_at : NULL,
    };
    if (rows_direct) {
        const uint16_t *rows[FLASH_MAX_VECTORS * 16];
        assert(t->nvalid <= FLASH_MAX_VECTORS * 16); /* lanes <= 16 (flash_driver.h) */
        for (int32_t r = 0; r < t->nvalid; r++) {
            int32_t i, h;
            row_source(p, t, r, &i, &h);
            rows[r] = (const uint16_t *)attn_q_head(p, t->b, h) + (size_t)i * p->shape.d_k;
        }
        g->pack_q_rows(&tile, rows, t->nvalid, p->scale < 0.0f, qt);
    }
    return tile;
}

static kv_stage make_stage(const attn_problem *p, const flash_geometry *g, const flash_plan *pl,
                           float *slice, const task_rows *t)
{
    kv_stage stage = {0};
    stage.k = attn_k_head(p, t->b, t->kv_head * p->group);
    stage.v = attn_v_head(p, t->b, t->kv_head * p->group);
    stage.type = p->types.kv;
    stage.widen = g->widen ? g->widen : attn_widen_best();
    stage.custom = pl->few ? NULL : g->stage; /* few kernels read f32 */
    stage.kbuf = slice + pl->kstage_at;
    stage.vbuf = slice + pl->vstage_at;
    return stage;
}

/* One (tile, chunk) unit: pack, fold the chunk's key blocks in, and either
 * finish into O (no split) or leave the partial state for the merge. */
static void run_unit(const attn_problem *p, const flash_geometry *g, const flash_plan *pl,
                     float *slice, float *partials, int64_t unit)
{
    int64_t task = unit / pl->splits;
    int32_t chunk = (int32_t)(unit % pl->splits);
    int32_t *seen = (int32_t *)(slice + pl->seen_at);
    float *state =
        pl->splits > 1 ? partials + (size_t)unit * pl->state_floats : slice + pl->state_at;
    task_rows t;
    flash_tile tile = start_tile(p, g, pl, slice, &t, task, chunk, slice + pl->qt_at, seen, state);
    kv_stage stage = pl->stage_keys ? make_stage(p, g, pl, slice, &t) : (kv_stage){0};
    const kv_stage *st = pl->stage_keys ? &stage : NULL;
    if (!pl->few)
        fold_blocks(g, &tile, st);
    else if (tile.kv_begin < tile.kv_end)
        fold_few(g, &tile, st);
    if (pl->splits == 1)
        finish_tile(p, pl, &t, seen, state);
}

/* A group of consecutive tiles of one head (narrow K/V, no split): each
 * key block is widened once and folded into every tile that sees it, in
 * the same block order as a tile alone, so each row gets the same bits. */
static void run_group(const attn_problem *p, const flash_geometry *g, const flash_plan *pl,
                      float *slice, int64_t unit)
{
    const int64_t head = unit / pl->groups_per_head;
    const int64_t first = head * pl->tiles_per_head + (unit % pl->groups_per_head) * pl->group;
    const int64_t left = (head + 1) * pl->tiles_per_head - first;
    const int32_t n = (int32_t)(left < pl->group ? left : pl->group);
    task_rows t[FLASH_GROUP_TILES_MAX];
    flash_tile tile[FLASH_GROUP_TILES_MAX];
    int32_t kv_end = 0;
    for (int32_t i = 0; i < n; i++) {
        tile[i] =
            start_tile(p, g, pl, slice, &t[i], first + i, 0, slice + pl->qt_at + i * pl->qt_step,
                       (int32_t *)(slice + pl->seen_at + i * pl->seen_step),
                       slice + pl->state_at + i * pl->state_floats);
        kv_end = tile[i].kv_end > kv_end ? tile[i].kv_end : kv_end;
    }
    /* Every tile of the group is of one head: the first names its K/V. */
    const task_rows head_rows = locate(p, pl, first);
    const int staged = pl->stage_keys > 0; /* the plan carved a stage: narrow K/V */
    const kv_stage stage = staged ? make_stage(p, g, pl, slice, &head_rows) : (kv_stage){0};
    const flash_block_fn *fn = block_fns(g, pl->rows);
    for (int32_t j0 = 0; j0 < kv_end; j0 += pl->kv_block) {
        int32_t nb = kv_end - j0 < pl->kv_block ? kv_end - j0 : pl->kv_block;
        if (staged)
            fill_stage(&stage, &tile[0], j0, nb);
        for (int32_t i = 0; i < n; i++) {
            if (j0 >= tile[i].kv_end)
                continue;
            /* The tile's own block: the same keys, its rows' end. */
            int32_t nbi = tile[i].kv_end - j0 < nb ? tile[i].kv_end - j0 : nb;
            flash_tile bi = staged ? staged_view(&tile[i], &stage, j0) : tile[i];
            fn[bi.seen_min < j0 + nbi](&bi, j0, nbi);
        }
    }
    for (int32_t i = 0; i < n; i++)
        finish_tile(p, pl, &t[i], tile[i].seen, tile[i].m);
}

/* Merges a task's chunk states in chunk order and writes its O rows:
 * O = Σ_c w_c·acc_c / Σ_c w_c·l_c with w_c = exp(m_c - max_c m_c). */
static void merge_task(const attn_problem *p, const flash_plan *pl, float *partials, int64_t task)
{
    const int32_t rows = pl->rows, d_v = p->shape.d_v;
    float *first = partials + (size_t)task * pl->splits * pl->state_floats;
    task_rows t = locate(p, pl, task);
    for (int32_t r = 0; r < t.nvalid; r++) {
        int32_t i, h;
        row_source(p, &t, r, &i, &h);
        void *out = attn_elem_at_mut(attn_o_head(p, t.b, h), p->types.o, (size_t)i * d_v);
        memset(out, 0, attn_dtype_size(p->types.o) * (size_t)d_v); /* +0 in any type */
        if (attn_keys_seen(&p->shape, i) == 0)
            continue;
        float mmax = -INFINITY;
        for (int32_t c = 0; c < pl->splits; c++) {
            float m = first[(size_t)c * pl->state_floats + r];
            mmax = m > mmax ? m : mmax;
        }
        float shift = mmax == -INFINITY ? 0.0f : mmax;
        /* Each chunk's weight replaces its max in the chunk's state (the
         * partials are this merge's scratch), so the columns below need no
         * row buffer (d_v may be large) and no exp of their own. */
        float l = 0.0f;
        for (int32_t c = 0; c < pl->splits; c++) {
            float *st = first + (size_t)c * pl->state_floats;
            st[r] = expf(st[r] - shift);
            l += st[r] * st[rows + r];
        }
        for (int32_t col = 0; col < d_v; col++) {
            float o = 0.0f;
            for (int32_t c = 0; c < pl->splits; c++) {
                const float *st = first + (size_t)c * pl->state_floats;
                o += st[r] * st[pl->acc_at + r * pl->acc_rs + col * pl->acc_cs];
            }
            attn_store_elem(out, p->types.o, (size_t)col, o / l);
        }
    }
}

int64_t flash_unit_at(int causal, int64_t units, int64_t heads, int64_t i)
{
    if (!causal || heads < 1 || units % heads != 0)
        return i;
    const int64_t per_head = units / heads, at = i % per_head;
    return i - at + (per_head - 1 - at);
}

/* Unit i of the run's order, on the calling thread's slice. */
static void run_index(const attn_problem *p, const flash_geometry *g, const flash_plan *pl,
                      float *slice, float *partials, int64_t heads, int64_t i)
{
    const int64_t u = flash_unit_at(p->shape.causal, pl->units, heads, i);
    if (pl->group > 1)
        run_group(p, g, pl, slice, u);
    else
        run_unit(p, g, pl, slice, partials, u);
}

int flash_run(const attn_problem *p, const flash_geometry *g, void *workspace)
{
    flash_plan pl;
    int rc = make_plan(p, g, &pl);
    if (rc != ATTN_OK)
        return rc;
    float *ws = workspace;
    float *partials = ws + pl.partials_at;
    const int64_t units = pl.units, heads = (int64_t)p->shape.batch * p->shape.heads_kv;
    /* No more threads than units, and no team for one: libgomp ends every
     * team, even one of a single thread, with a futex syscall, and a second
     * thread woken for a single unit only waits. Zen 3, avx2, 1 head,
     * n_kv 16, d 16, alternating rounds of a loop of calls: 2.1x at 1
     * thread, 2.5x at 2 (0.55-0.83 us a call after, from 1.3-4.0). */
    const int team = units < p->threads ? (int)units : p->threads;
    if (team <= 1) {
        /* Nothing to merge: keys are split only at 2 threads or more, and
         * then into 2 units at least (choose_splits), so a team. */
        for (int64_t i = 0; i < units; i++)
            run_index(p, g, &pl, ws, partials, heads, i);
        return ATTN_OK;
    }
#pragma omp parallel num_threads(team)
    {
        const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
        float *slice = ws + (size_t)tid * pl.slice_floats;
        /* Units handed out one at a time as threads free up, not dealt
         * round-robin: a core the machine shares with other work (or a
         * causal tile's extra keys) no longer holds the others up at the
         * end. A unit's rows come out the same bits on any thread. Zen 4,
         * 2 threads, alternating rounds: with a busy loop sharing one core,
         * prefill (n 2048, 8 heads, d 64) 1.09x, causal 1.33x, decode (Hq
         * 32 / Hkv 8, n_kv 32768) 1.18x; alone on the cores, causal n 4096
         * d 128 1.04x, the rest 1.00-1.02x, a 1 ms decode (8 heads, n_kv
         * 4096) 0.93-1.01x (noise). Causal: longest first within each
         * head (flash_unit_at). */
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t i = 0; i < units; i++)
            run_index(p, g, &pl, slice, partials, heads, i);
        if (pl.splits > 1) {
#pragma omp barrier
            for (int64_t task = tid; task < pl.tasks; task += nth)
                merge_task(p, &pl, partials, task);
        }
    }
    return ATTN_OK;
}
