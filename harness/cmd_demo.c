/* attnbench demo: the seed article's worked examples, step by step, with the
 * attention itself computed by the library (attn_run). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "cli.h"

static void demo_help(void)
{
    printf("usage: attnbench demo [--variant NAME]\n\n"
           "Walks two worked examples: the softmax of [3.2, 4.0, 1.0, 6.2, 8.0]\n"
           "(exps, sum, weights) and the 'cat eats fish' head from X through W_Q, W_K,\n"
           "W_V to the output, printing every intermediate matrix. The attention is\n"
           "computed by attn_run with the chosen variant (default naive).\n");
}

static void print_matrix(const char *title, const float *m, int rows, int cols,
                         const char *const *labels)
{
    if (title[0])
        printf("%s\n", title);
    for (int i = 0; i < rows; i++) {
        printf("  %-5s [", labels ? labels[i] : "");
        for (int j = 0; j < cols; j++)
            printf("%s%10.6f", j ? ", " : "", (double)m[i * cols + j]);
        printf("]\n");
    }
}

/* softmax(scores) through the library: one query row with q = [1] against
 * five one-dimensional keys holding the scores, scale 1, and V the identity,
 * so O is exactly the weight vector. */
static int demo_softmax(const char *variant)
{
    enum { N = 5 };
    const float scores[N] = {3.2f, 4.0f, 1.0f, 6.2f, 8.0f};
    float q[1] = {1.0f}, v[N * N] = {0}, o[N];
    for (int i = 0; i < N; i++)
        v[i * N + i] = 1.0f;
    attn_shape s = {1, 1, 1, 1, N, 1, N, 0, 1.0f};
    /* The article's decimal scores in double: 3.2f is not 3.2, so the exact
     * weights come from these, the library's from the float32 scores. */
    const double decimal[N] = {3.2, 4.0, 1.0, 6.2, 8.0};
    double exact[N], exact_sum = 0.0;
    for (int i = 0; i < N; i++)
        exact_sum += exact[i] = exp(decimal[i] - 8.0);
    for (int i = 0; i < N; i++)
        exact[i] /= exact_sum;
    int rc = attn_run(variant, &s, q, scores, v, o);
    if (rc != ATTN_OK) {
        fprintf(stderr, "demo: attn_run(%s) failed: %s\n", variant, attn_strerror(rc));
        return -1;
    }
    double sum = 0.0;
    printf("== softmax, worked ==\n");
    printf("scores:  ");
    for (int i = 0; i < N; i++)
        printf(" %8.2f", (double)scores[i]);
    printf("\nexp:     ");
    for (int i = 0; i < N; i++) {
        sum += exp((double)scores[i]);
        printf(" %8.2f", exp((double)scores[i]));
    }
    printf("\nsum of exps: %.2f\n", sum);
    printf("stable form: exp(x - max) with max = 8.0 gives the same weights:\n  ");
    for (int i = 0; i < N; i++)
        printf(" %.6f", exp((double)scores[i] - 8.0));
    printf("\nweights, exact (double):");
    for (int i = 0; i < N; i++)
        printf(" %.5f%%", 100.0 * exact[i]);
    printf("\nweights, float32 (%s):", variant);
    for (int i = 0; i < N; i++)
        printf(" %.5f%%", 100.0 * o[i]);
    printf("\n(float32 carries ~7 significant digits: the last printed digit may differ)\n\n");
    return 0;
}

static int demo_cat_eats_fish(const char *variant)
{
    static const char *const words[3] = {"cat", "eats", "fish"};
    const float x[3 * 2] = {1, 2, 3, 1, 2, 4};
    const float w_qk[2 * 2] = {1, 0, 0, 1}; /* W_Q = W_K = identity */
    const float w_v[2 * 2] = {0, 1, 1, 0};  /* W_V swaps the two dimensions */
    float q[6], k[6], v[6], scores[9], weights[9], o[6];
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 2; c++) {
            q[i * 2 + c] = x[i * 2] * w_qk[c] + x[i * 2 + 1] * w_qk[2 + c];
            k[i * 2 + c] = q[i * 2 + c];
            v[i * 2 + c] = x[i * 2] * w_v[c] + x[i * 2 + 1] * w_v[2 + c];
        }
    printf("== one attention head: \"cat eats fish\" (d_model = d_k = d_v = 2) ==\n");
    print_matrix("X (one row per token):", x, 3, 2, words);
    print_matrix("W_Q = W_K (identity):", w_qk, 2, 2, NULL);
    print_matrix("W_V (swaps the dimensions):", w_v, 2, 2, NULL);
    print_matrix("Q = X.W_Q:", q, 3, 2, words);
    print_matrix("K = X.W_K:", k, 3, 2, words);
    print_matrix("V = X.W_V:", v, 3, 2, words);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            scores[i * 3 + j] = q[i * 2] * k[j * 2] + q[i * 2 + 1] * k[j * 2 + 1];
    print_matrix("scores Q.K^T:", scores, 3, 3, words);
    const float scale = 1.0f / sqrtf(2.0f);
    for (int i = 0; i < 9; i++)
        scores[i] *= scale;
    print_matrix("scaled by 1/sqrt(d_k) = 1/sqrt(2):", scores, 3, 3, words);
    /* The weights, through the library: V = identity makes O the weights. */
    float eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    attn_shape sw = {1, 1, 1, 3, 3, 2, 3, 0, 0.0f};
    attn_shape so = {1, 1, 1, 3, 3, 2, 2, 0, 0.0f};
    int rc = attn_run(variant, &sw, q, k, eye, weights);
    if (rc == ATTN_OK)
        rc = attn_run(variant, &so, q, k, v, o);
    if (rc != ATTN_OK) {
        fprintf(stderr, "demo: attn_run(%s) failed: %s\n", variant, attn_strerror(rc));
        return -1;
    }
    double exact[6];
    attn_reference(&so, q, k, v, exact);
    print_matrix("softmax weights (row by row):", weights, 3, 3, words);
    printf("output = softmax(Q.K^T/sqrt(2)).V, float32 (%s):\n", variant);
    print_matrix("", o, 3, 2, words);
    printf("output, double reference:\n");
    for (int i = 0; i < 3; i++)
        printf("  %-5s [%10.6f, %10.6f]\n", words[i], exact[2 * i], exact[2 * i + 1]);
    printf("\"fish\" attends to itself with weight %.6f; its output [%.6f, %.6f] is close to\n"
           "V(\"fish\") = [4, 2] (the article rounds it to [3.997, 2.001]).\n",
           (double)weights[8], exact[4], exact[5]);
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    const char *variant = "naive", *value;
    int r;
    for (int i = 1; i < argc; i++) {
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            demo_help();
            return EXIT_OK;
        } else if ((r = cli_flag_value(argc, argv, &i, "--variant", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            variant = value;
        } else {
            return cli_unknown("demo", argv[i]);
        }
    }
    if (cli_check_cpu_mask("demo") != 0)
        return EXIT_USAGE;
    int supported = attn_variant_supported(variant);
    if (supported == ATTN_ENOTFOUND) {
        fprintf(stderr, "demo: --variant '%s' is not a variant (attnbench list)\n", variant);
        return EXIT_USAGE;
    }
    if (supported == 0) {
        fprintf(stderr, "demo: variant '%s' is skipped on this CPU (attnbench list says why)\n",
                variant);
        return EXIT_FAILED;
    }
    if (demo_softmax(variant) != 0 || demo_cat_eats_fish(variant) != 0)
        return EXIT_FAILED;
    return EXIT_OK;
}
