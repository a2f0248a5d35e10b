/* Register lists for the hand-written chain kernels of test_peak_reference. */
#ifndef ATTN_PEAK_REFERENCE_CHAINS_H
#define ATTN_PEAK_REFERENCE_CHAINS_H

static const float m_const = 0.999999f, c_const = 1e-6f;

/* One instruction per chain register: `op` ends in the register prefix. */
#define CHAIN12(op)                                                                                \
    op "0\n" op "1\n" op "2\n" op "3\n" op "4\n" op "5\n" op "6\n" op "7\n" op "8\n" op "9\n" op   \
       "10\n" op "11\n"
#define CHAIN12_HIGH(op)                                                                           \
    op "12\n" op "13\n" op "14\n" op "15\n" op "16\n" op "17\n" op "18\n" op "19\n" op "20\n" op   \
       "21\n" op "22\n" op "23\n"

#endif
