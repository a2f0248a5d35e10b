/* Key blocks from the caches and the head size (flash_key_block in
 * flash_driver.c, avx512's caps in flash_avx512_tiles.h), the groups of
 * tiles that share a staged block (flash_group_tiles), the order the
 * schedule hands units out in (flash_unit_at), the cache sizes
 * behind them (attn_cpu_decode_caches on CPUID descriptor tables of three
 * machines), and avx512's results at the edges of the blocks this machine
 * picks: a decode or prefill whose keys end one short of, at, and one past
 * a block, and past two, each judged as verify judges it; amx's the same
 * at its longer blocks, which no shape of verify's sets reaches. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cpu_features.h"
#include "flash_amx_blocks.h"
#include "flash_avx512_decode.h"
#include "flash_avx512_tiles.h"
#include "flash_driver.h"
#include "verify_case.h"

/* avx512's rule, as flash_avx512.c builds it; the table below is by hand
 * for caps of 192, 576 and 2304 keys in steps of 48. */
static const flash_block_rule avx512_rule = {.tile_max = KV_TILE_MAX,
                                             .few_max = KV_FEW_MAX,
                                             .few_one_pass_max = KV_FEW_ONE_PASS_MAX,
                                             .few_one_pass = attn_avx512_decode_one_pass};
enum { STEP = KV_BLOCK, KIB = 1024 };

typedef struct block_case {
    const char *machine;
    int64_t l1d, l2;
    int32_t rows, d_k, d_v, few;
    int32_t want;
} block_case;

/* By hand from the rule: tiles take min(L1D/2 / (rows·4), L2/4 / ((d_k +
 * d_v)·4)) keys, few-rows kernels L2/4 / ((d_k + d_v)·4) (f32 whatever
 * the cache's type), or, where the decode kernel's P·V reads V once (at
 * most 8 vectors of d_v, and 4 rows of whole vectors, 2 rows past 4
 * vectors, 4 past 2, 8 below), min(L2 / ((d_k + d_v)·4), L1D·2/3 /
 * (rows·4)); each rounded down to a multiple of 48 and clamped to [48,
 * cap]. */
static const block_case cases[] = {
    /* Zen 5: 48 KiB L1D, 1 MiB L2. 24576 / 256 = 96 keys of scores. */
    {"zen5", 48 * KIB, 1024 * KIB, 64, 128, 128, 0, 96},
    {"zen5", 48 * KIB, 1024 * KIB, 64, 64, 64, 0, 96},
    {"zen5", 48 * KIB, 1024 * KIB, 64, 256, 256, 0, 96},
    /* d 512: K and V rows 4 KiB a key, 256 KiB / 4 KiB = 64 -> 48. */
    {"zen5", 48 * KIB, 1024 * KIB, 64, 512, 512, 0, 48},
    /* 16-row tiles: 384 keys of scores, capped at 192. */
    {"zen5", 48 * KIB, 1024 * KIB, 16, 128, 128, 0, 192},
    /* Decode in one P·V pass: 1048576 / 1024 = 1024 -> 1008 (scores:
     * 32768 / 16 = 2048); d 256 takes two passes, the quarter: 262144 /
     * 2048 = 128 -> 96; d_k 192 / d_v 128 one pass, 1048576 / 1280 = 819
     * -> 816. */
    {"zen5", 48 * KIB, 1024 * KIB, 4, 128, 128, 1, 1008},
    {"zen5", 48 * KIB, 1024 * KIB, 1, 256, 256, 1, 96},
    {"zen5", 48 * KIB, 1024 * KIB, 1, 192, 128, 1, 816},
    /* d 64, 8 rows: two passes of 4, 262144 / 512 = 512 -> 480 (a
     * multiple of 48 under 576). */
    {"zen5", 48 * KIB, 1024 * KIB, 8, 64, 64, 1, 480},
    /* Zen 3: 32 KiB L1D, 512 KiB L2. 16384 / 256 = 64 -> 48; decode one
     * pass 524288 / 1024 = 512 -> 480 (scores 21845 / 16 -> 1344). */
    {"zen3", 32 * KIB, 512 * KIB, 64, 128, 128, 0, 48},
    {"zen3", 32 * KIB, 512 * KIB, 4, 128, 128, 1, 480},
    /* Sapphire Rapids: 48 KiB L1D, 2 MiB L2. */
    {"spr", 48 * KIB, 2048 * KIB, 64, 128, 128, 0, 96},
    /* One pass: 2048 keys of K and V -> 2016, and 2048 of scores. */
    {"spr", 48 * KIB, 2048 * KIB, 4, 128, 128, 1, 2016},
    /* 8 rows at d 128: four passes of 2, the quarter: 480. */
    {"spr", 48 * KIB, 2048 * KIB, 8, 128, 128, 1, 480},
    /* 4 rows, d_v 120 (not whole vectors): two passes, 524288 / 960 =
     * 546 -> 528. */
    {"spr", 48 * KIB, 2048 * KIB, 4, 120, 120, 1, 528},
    /* d 64: 8 rows two passes, 524288 / 512 = 1024 keys, capped at 576;
     * 1 row one pass, 4096 capped at 2304; d 32, 8 rows one pass: the
     * scores, 32768 / 32 = 1024 -> 1008. */
    {"spr", 48 * KIB, 2048 * KIB, 8, 64, 64, 1, 576},
    {"spr", 48 * KIB, 2048 * KIB, 1, 64, 64, 1, 2304},
    {"spr", 48 * KIB, 2048 * KIB, 8, 32, 32, 1, 1008},
    /* What detection falls back to (32 KiB, 256 KiB), and a head too wide
     * for any budget: one step, never 0. One pass: 262144 / 1024 = 256
     * -> 240. */
    {"default", ATTN_CPU_DEFAULT_L1D, ATTN_CPU_DEFAULT_L2, 4, 128, 128, 1, 240},
    {"default", ATTN_CPU_DEFAULT_L1D, ATTN_CPU_DEFAULT_L2, 8, 128, 128, 1, 48},
    {"default", ATTN_CPU_DEFAULT_L1D, ATTN_CPU_DEFAULT_L2, 64, 4096, 4096, 0, 48},
};

static void check_rule(check_tally *t)
{
    CHECK(t, STEP == 48 && KV_TILE_MAX == 192 && KV_FEW_MAX == 576 && KV_FEW_ONE_PASS_MAX == 2304,
          "avx512's step and caps changed (%d, %d, %d, %d): update this table", STEP, KV_TILE_MAX,
          KV_FEW_MAX, KV_FEW_ONE_PASS_MAX);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const block_case *c = &cases[i];
        int32_t got =
            flash_key_block(&avx512_rule, STEP, c->l1d, c->l2, c->rows, c->d_k, c->d_v, c->few);
        CHECK(t, got == c->want, "%s, %d rows, d_k %d d_v %d, %s: %d keys, want %d", c->machine,
              c->rows, c->d_k, c->d_v, c->few ? "few" : "tile", got, c->want);
    }
    /* Over a sweep: multiples of the step within the caps, never more
     * keys for a smaller cache, nor for a wider head whose decode P·V
     * takes as many passes (4 rows at d 128 take one, at d 112 two: the
     * wider head gets the longer blocks there). */
    const int64_t l2s[] = {256 * KIB, 512 * KIB, 1024 * KIB, 2048 * KIB};
    for (int few = 0; few <= 1; few++)
        for (size_t c = 0; c < 4; c++) {
            int32_t prev = 1 << 30;
            for (int32_t d = 16; d <= 1024; d += 16) {
                if (few &&
                    attn_avx512_decode_one_pass(4, d) != attn_avx512_decode_one_pass(4, d - 16))
                    prev = 1 << 30;
                int32_t k =
                    flash_key_block(&avx512_rule, STEP, 48 * KIB, l2s[c], few ? 4 : 64, d, d, few);
                const int32_t cap = few ? avx512_rule.few_one_pass_max : avx512_rule.tile_max;
                CHECK(t, k % STEP == 0 && k >= STEP && k <= cap && k <= prev,
                      "L2 %lld KiB, d %d, %s: %d keys (the d before: %d)",
                      (long long)(l2s[c] >> 10), d, few ? "few" : "tile", k, prev);
                if (c > 0) {
                    int32_t smaller = flash_key_block(&avx512_rule, STEP, 48 * KIB, l2s[c - 1],
                                                      few ? 4 : 64, d, d, few);
                    CHECK(t, smaller <= k, "d %d: %d keys on the smaller L2, %d on the larger", d,
                          smaller, k);
                }
                prev = k;
            }
        }
}

/* Tiles a staged key block is shared by (flash_group_tiles): by hand,
 * the largest power of two up to 16 whose (d_k + d_v) x rows floats a
 * tile fit half of L2. */
static void check_groups(check_tally *t)
{
    static const struct {
        const char *machine;
        int64_t l2;
        int32_t rows, d_k, d_v, want;
    } g[] = {
        /* 64 KiB a tile at d 128: 1 MiB / 64 KiB = 16. */
        {"spr", 2048 * KIB, 64, 128, 128, 16},
        {"spr", 2048 * KIB, 64, 64, 64, 16},
        /* 128 KiB a tile at d 256: 8. */
        {"spr", 2048 * KIB, 64, 256, 256, 8},
        {"zen4", 1024 * KIB, 64, 128, 128, 8},
        {"zen4", 1024 * KIB, 64, 64, 64, 16},
        /* d_k 192 / d_v 128 at 32 rows: 40 KiB a tile, 512 KiB / 40 KiB = 12.8 -> 8. */
        {"zen4", 1024 * KIB, 32, 192, 128, 8},
        {"zen3", 512 * KIB, 64, 128, 128, 4},
        /* A tile wider than half of L2: one tile, never 0. */
        {"default", ATTN_CPU_DEFAULT_L2, 64, 4096, 4096, 1},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        int32_t got = flash_group_tiles(g[i].l2, g[i].rows, g[i].d_k, g[i].d_v);
        CHECK(t, got == g[i].want, "%s, %d rows, d_k %d d_v %d: groups of %d tiles, want %d",
              g[i].machine, g[i].rows, g[i].d_k, g[i].d_v, got, g[i].want);
    }
    /* Over a sweep: a power of two in [1, 16] whose tiles fit half of L2
     * unless it is 1, never more for a wider head or a smaller cache. */
    const int64_t l2s[] = {256 * KIB, 512 * KIB, 1024 * KIB, 2048 * KIB};
    for (size_t c = 0; c < 4; c++) {
        int32_t prev = 1 << 30;
        for (int32_t d = 16; d <= 1024; d += 16) {
            int32_t n = flash_group_tiles(l2s[c], 64, d, d);
            const int64_t bytes = (int64_t)n * 64 * 2 * d * 4;
            CHECK(t,
                  n >= 1 && n <= FLASH_GROUP_TILES_MAX && (n & (n - 1)) == 0 &&
                      (n == 1 || bytes <= l2s[c] / 2) && n <= prev,
                  "L2 %lld KiB, d %d: groups of %d (the d before: %d)", (long long)(l2s[c] >> 10),
                  d, n, prev);
            if (c > 0)
                CHECK(t, flash_group_tiles(l2s[c - 1], 64, d, d) <= n,
                      "d %d: a larger group on the smaller L2", d);
            prev = n;
        }
    }
}

/* The schedule's order (flash_unit_at): a permutation of the units that
 * keeps heads in order and their units together; causal, each head's
 * units last row first (by hand for 3 heads of 4); otherwise row order. */
static void check_unit_order(check_tally *t)
{
    static const int64_t causal_3x4[12] = {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8};
    for (int64_t i = 0; i < 12; i++) {
        CHECK(t, flash_unit_at(1, 12, 3, i) == causal_3x4[i], "causal, 3 heads of 4: %lld -> %lld",
              (long long)i, (long long)flash_unit_at(1, 12, 3, i));
        CHECK(t, flash_unit_at(0, 12, 3, i) == i, "not causal: %lld -> %lld", (long long)i,
              (long long)flash_unit_at(0, 12, 3, i));
    }
    /* Units that do not come a whole number to a head (never planned so):
     * row order, each once. */
    for (int64_t i = 0; i < 7; i++)
        CHECK(t, flash_unit_at(1, 7, 2, i) == i, "7 units over 2 heads: %lld -> %lld", (long long)i,
              (long long)flash_unit_at(1, 7, 2, i));
    enum { MOST = 64 * 7 };
    for (int64_t heads = 1; heads <= 7; heads++)
        for (int64_t per = 1; per <= 64; per += 7) {
            const int64_t units = heads * per;
            unsigned char seen[MOST] = {0};
            int ok = 1;
            for (int64_t i = 0; i < units; i++) {
                const int64_t u = flash_unit_at(1, units, heads, i);
                ok &= u >= 0 && u < units && !seen[u] && u / per == i / per &&
                      (i % per == 0 || u == flash_unit_at(1, units, heads, i - 1) - 1);
                if (u >= 0 && u < units)
                    seen[u] = 1;
            }
            CHECK(t, ok, "causal, %lld heads of %lld units: not each head's units once, last first",
                  (long long)heads, (long long)per);
        }
}

/* A CPUID deterministic-cache table: EAX, EBX, ECX per subleaf, then type 0. */
typedef struct cache_table {
    const uint32_t (*rows)[3];
    int n;
} cache_table;

static void table_leaf(uint32_t subleaf, uint32_t regs[3], void *ctx)
{
    const cache_table *tb = ctx;
    if ((int)subleaf < tb->n)
        memcpy(regs, tb->rows[subleaf], 3 * sizeof(uint32_t));
    else
        memset(regs, 0, 3 * sizeof(uint32_t));
}

/* EAX: type | level << 5; EBX: (ways-1) << 22 | (partitions-1) << 12 | (line-1); ECX: sets-1. */
#define DESC(type, level, ways, line, sets)                                                        \
    {                                                                                              \
        (type) | (level) << 5, ((ways)-1u) << 22 | ((line)-1u), (sets)-1u                          \
    }

static void check_decode(check_tally *t)
{
    /* Zen 5 (leaf 0x8000001D): L1D 12-way 64 sets, L1I 8-way 64 sets,
     * L2 16-way 1024 sets, L3 16-way 32768 sets. */
    static const uint32_t zen5[][3] = {DESC(1, 1, 12, 64, 64), DESC(2, 1, 8, 64, 64),
                                       DESC(3, 2, 16, 64, 1024), DESC(3, 3, 16, 64, 32768)};
    /* Sapphire Rapids (leaf 4): L1D 12-way 64 sets, L1I 8-way 64, L2
     * 16-way 2048 sets, L3. */
    static const uint32_t spr[][3] = {DESC(1, 1, 12, 64, 64), DESC(2, 1, 8, 64, 64),
                                      DESC(3, 2, 16, 64, 2048), DESC(3, 3, 15, 64, 122880)};
    /* Only an instruction cache and an L3: neither size known. */
    static const uint32_t none[][3] = {DESC(2, 1, 8, 64, 64), DESC(3, 3, 16, 64, 8192)};
    const struct {
        const char *name;
        cache_table tb;
        int64_t l1d, l2;
    } m[] = {
        {"zen5", {zen5, 4}, 48 * KIB, 1024 * KIB},
        {"spr", {spr, 4}, 48 * KIB, 2048 * KIB},
        {"no L1D or L2", {none, 2}, 0, 0},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        int64_t l1d = -1, l2 = -1;
        attn_cpu_decode_caches(table_leaf, (void *)&m[i].tb, &l1d, &l2);
        CHECK(t, l1d == m[i].l1d && l2 == m[i].l2, "%s: L1D %lld, L2 %lld; want %lld, %lld",
              m[i].name, (long long)l1d, (long long)l2, (long long)m[i].l1d, (long long)m[i].l2);
    }
    const attn_cpu_info *cpu = attn_cpu();
    CHECK(t, cpu->l1d_bytes >= 16 * KIB && cpu->l1d_bytes <= 1024 * KIB,
          "this CPU's L1D: %lld bytes", (long long)cpu->l1d_bytes);
    CHECK(t, cpu->l2_bytes >= 128 * KIB && cpu->l2_bytes <= 64 * 1024 * KIB,
          "this CPU's L2: %lld bytes", (long long)cpu->l2_bytes);
}

static const attn_types F32 = {ATTN_F32, ATTN_F32, ATTN_F32};
static const attn_types BF16KV = {ATTN_F32, ATTN_BF16, ATTN_F32};

/* avx512 at n_kv one short of, at, one past this machine's block, and
 * past two blocks; decode shapes take the few-rows block, prefill the
 * tiles'. */
static void check_edges(check_tally *t)
{
    const attn_variant *v = attn_find_variant("avx512"), *naive = attn_find_variant("naive");
    if (!v || !attn_variant_runnable(v)) {
        printf("SKIP avx512 at this machine's block edges: the CPU lacks AVX-512F\n");
        return;
    }
    const attn_cpu_info *cpu = attn_cpu();
    const struct {
        int32_t hq, hkv, n_q, d_k, d_v, causal, rows;
        const attn_types *types;
        int few;
    } shapes[] = {
        {8, 2, 1, 128, 128, 0, 4, &F32, 1},    /* GQA decode: 4 rows a K/V head */
        {8, 2, 1, 128, 128, 0, 4, &BF16KV, 1}, /* a half-size cache: the same keys */
        {2, 2, 1, 256, 256, 0, 1, &F32, 1},    /* MHA, a wide head */
        {2, 1, 2, 192, 128, 1, 4, &F32, 1},    /* d_k != d_v, causal rows */
        {1, 1, 64, 128, 128, 1, 64, &F32, 0},  /* a 64-row tile, causal */
        {1, 1, 64, 80, 96, 0, 64, &BF16KV, 0}, /* staged blocks of the group */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int32_t kb =
            flash_key_block(&avx512_rule, STEP, cpu->l1d_bytes, cpu->l2_bytes, shapes[i].rows,
                            shapes[i].d_k, shapes[i].d_v, shapes[i].few);
        const int32_t n_kvs[] = {kb - 1, kb, kb + 1, 2 * kb + 1};
        for (int j = 0; j < 4; j++) {
            attn_case c = {.shape = {.batch = 1,
                                     .heads_q = shapes[i].hq,
                                     .heads_kv = shapes[i].hkv,
                                     .n_q = shapes[i].n_q,
                                     .n_kv = n_kvs[j],
                                     .d_k = shapes[i].d_k,
                                     .d_v = shapes[i].d_v,
                                     .causal = shapes[i].causal},
                           .data = DATA_NORMAL,
                           .types = *shapes[i].types};
            check_verify_case(t, v, naive, &c, 2);
        }
    }
}

/* amx where a head's keys switch it to its longer blocks
 * (flash_amx_blocks.h): n_kv one short of the switch (the usual blocks),
 * at it, one past, and past the next long block and a prime; 40 query
 * rows, causal (the diagonal in the last block) and not, GQA, a d_k with a
 * part of a 32-column chunk, an odd d_k under a negative scale; bf16, and
 * f32 queries on a bf16 cache; and once n_q = n_kv past the switch, causal,
 * where the head's 33 tiles share each staged block in groups. Each judged
 * as verify judges it, in the variant's class. */
static void check_amx_long_blocks(check_tally *t)
{
    const attn_variant *v = attn_find_variant("amx"), *naive = attn_find_variant("naive");
    if (!v) {
        printf("SKIP amx at its long key blocks: the variant is not built\n");
        return;
    }
    if (!attn_variant_runnable(v)) {
        char missing[200];
        attn_variant_missing(v, missing, sizeof missing);
        printf("SKIP amx at its long key blocks: the CPU lacks %s\n", missing);
        return;
    }
    static const attn_types BF16 = {ATTN_BF16, ATTN_BF16, ATTN_BF16};
    const int32_t from = AMX_LONG_KV_FROM, blk = AMX_LONG_KV_BLOCK;
    const struct {
        int32_t hq, hkv, n_q, d_k, d_v, causal;
        float scale;
        const attn_types *types;
        int one; /* only at n_kv = n_q */
    } shapes[] = {
        {2, 2, 40, 64, 64, 0, 0.0f, &BF16, 0},        {4, 2, 40, 80, 48, 1, 0.0f, &BF16, 0},
        {2, 1, 40, 128, 128, 1, 0.0f, &BF16KV, 0},    {2, 2, 40, 63, 33, 0, -0.3f, &BF16, 0},
        {1, 1, from + 37, 32, 32, 1, 0.0f, &BF16, 1},
    };
    const int32_t n_kvs[] = {from + blk + 37, from - 1, from, from + 1};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t j = 0; j < (shapes[i].one ? 1 : sizeof n_kvs / sizeof n_kvs[0]); j++) {
            attn_case c = {.shape = {.batch = 1,
                                     .heads_q = shapes[i].hq,
                                     .heads_kv = shapes[i].hkv,
                                     .n_q = shapes[i].n_q,
                                     .n_kv = shapes[i].one ? shapes[i].n_q : n_kvs[j],
                                     .d_k = shapes[i].d_k,
                                     .d_v = shapes[i].d_v,
                                     .causal = shapes[i].causal,
                                     .scale = shapes[i].scale},
                           .data = DATA_NORMAL,
                           .types = *shapes[i].types,
                           .p_round = attn_variant_default_p_round(v)};
            check_verify_case(t, v, naive, &c, 2);
        }
}

int main(void)
{
    check_tally t = {0};
    check_rule(&t);
    check_groups(&t);
    check_unit_order(&t);
    check_decode(&t);
    check_edges(&t);
    check_amx_long_blocks(&t);
    return check_report("key_blocks", &t);
}
