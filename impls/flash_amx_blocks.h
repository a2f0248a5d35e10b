/* flash_amx_blocks.h — the amx variant's key blocks (flash_amx.c), in a
 * header of their own so that tests/test_key_blocks.c verifies the
 * variant at their edges.
 *
 * Keys per block: a multiple of a tile's 32 keys (P·V's chunks) and of 16
 * (the decode kernel's key groups). Each block loads, rescales and stores
 * every accumulator tile once (a tile store costs ~40 cycles here, 2.5
 * tdpbf16ps), so the longer the block the less that weighs; its scores
 * (64 rows x 4 bytes a key: 64 KiB at 256 keys, 128 KiB at 512) live in
 * L2. Measured against 128 keys (alternating rounds, Sapphire Rapids,
 * 2 threads, bf16): n 4096 8 heads d 128 1.11x, d 64 1.02x, causal d 128
 * 1.05x, GQA 32/8 n 1024 causal 1.07x, n_q 512 / n_kv 2048 d 80 1.04x;
 * 256 keys: 1.035x / 1.00x.
 *
 * AMX_KV_BLOCK (256) is the block of every shape verify sweeps: it builds
 * n and d from 2·keys + a prime, and at 512 its full set took 260 s (900 s
 * and a timeout under ASan), at 256 100 s. A head of AMX_LONG_KV_FROM keys
 * or more takes AMX_LONG_KV_BLOCK (512) instead, where a block's fixed
 * costs weigh and the last, shorter block is a small part of the row.
 * Against 256, the same rounds: n 4096 d 128 1.036-1.042x, d 64 1.020x,
 * causal d 128 1.035x, n 2048 d 128 1.030x, d 80 1.043x, GQA 32/8 causal
 * n_q 1024 / n_kv 4096 1.021x, f32 Q (a bf16 cache) 1.010x; 1024 keys
 * against 512 0.91x at d 128 (the block's scores, 256 KiB a tile, no
 * longer sit in L2 beside the group's queries and accumulators). */
#ifndef ATTN_FLASH_AMX_BLOCKS_H
#define ATTN_FLASH_AMX_BLOCKS_H

enum { AMX_KV_BLOCK = 256, AMX_LONG_KV_BLOCK = 512, AMX_LONG_KV_FROM = 2048 };

#endif
