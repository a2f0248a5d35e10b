/* Writes FILE.meta.json. The build facts come from CMake as compile
 * definitions on this file (harness/sources.cmake); library versions from
 * the libraries actually linked where they can say so at run time. */
#include "run_meta.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_features.h"
#include "machine.h"
#include "results_csv.h"
#include "variant.h"

#ifndef ATTN_COMPILER
#define ATTN_COMPILER "unknown"
#endif
#ifndef ATTN_C_FLAGS
#define ATTN_C_FLAGS ""
#endif
#ifndef ATTN_BUILD_TYPE
#define ATTN_BUILD_TYPE ""
#endif
#ifndef ATTN_BENCHMARK_VERSION
#define ATTN_BENCHMARK_VERSION ""
#endif

/* OpenBLAS, when a variant linked it in: a weak reference, NULL otherwise,
 * so the harness needs no BLAS of its own. */
char *openblas_get_config(void) __attribute__((weak));

void attn_meta_add_peer(char *obj, size_t cap, size_t *used, const char *name, const char *version)
{
    if (*used == 0 && cap > 1)
        *used = (size_t)snprintf(obj, cap, "{");
    char key[64], value[160], entry[240];
    const size_t kl = (size_t)attn_json_quote(name, key, sizeof key);
    const size_t vl = (size_t)attn_json_quote(version, value, sizeof value);
    const size_t len =
        (size_t)snprintf(entry, sizeof entry, "%s%s: %s", *used > 1 ? ", " : "", key, value);
    if (kl < sizeof key && vl < sizeof value && len < sizeof entry && *used + len + 2 <= cap) {
        memcpy(obj + *used, entry, len + 1);
        *used += len;
    }
}

void attn_meta_close_peers(char *obj, size_t cap, size_t used)
{
    if (used == 0 && cap > 2)
        snprintf(obj, cap, "{}");
    else if (used + 2 <= cap)
        snprintf(obj + used, cap - used, "}");
}

enum { META_MAX_PEERS = 16 };
typedef struct peer_list {
    int depth;         /* the entries' depth: 1 in a peers object, 2 in a sidecar */
    const char *under; /* NULL, or the key they sit under ("peers") */
    int n;
    char name[META_MAX_PEERS][ATTN_JSON_MAX_KEY];
    char version[META_MAX_PEERS][160];
} peer_list;

static void take_peer(void *ctx, const char (*path)[ATTN_JSON_MAX_KEY], int depth,
                      const attn_json_value *v)
{
    peer_list *l = ctx;
    if (depth != l->depth || v->kind != ATTN_JSON_STRING || l->n == META_MAX_PEERS ||
        (l->under && strcmp(path[0], l->under) != 0))
        return;
    snprintf(l->name[l->n], sizeof l->name[0], "%s", path[depth - 1]);
    snprintf(l->version[l->n], sizeof l->version[0], "%s", v->text);
    l->n++;
}

static void read_peers(const char *text, peer_list *l)
{
    char err[128];
    if (!text || attn_json_walk(text, strlen(text), take_peer, l, err, sizeof err) != 0)
        l->n = 0;
}

static int listed(const peer_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->name[i], name) == 0)
            return 1;
    return 0;
}

static int has_peer_rows(const attn_result_row *rows, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (rows[i].kind == ATTN_ROW_PEER && strcmp(rows[i].variant, name) == 0)
            return 1;
    return 0;
}

void attn_meta_merge_peers(const char *old_meta, const attn_result_row *rows, int n, char *versions,
                           size_t cap)
{
    peer_list now = {.depth = 1}, old = {.depth = 2, .under = "peers"};
    const int had = versions[0] != '\0'; /* "": no peers object, unless old gives one */
    read_peers(had ? versions : NULL, &now);
    read_peers(old_meta, &old);
    size_t used = 0;
    for (int i = 0; i < now.n; i++)
        attn_meta_add_peer(versions, cap, &used, now.name[i], now.version[i]);
    for (int i = 0; i < old.n; i++)
        if (!listed(&now, old.name[i]) && has_peer_rows(rows, n, old.name[i]))
            attn_meta_add_peer(versions, cap, &used, old.name[i], old.version[i]);
    if (used || had)
        attn_meta_close_peers(versions, cap, used);
}

const char *attn_meta_compiler(void)
{
    return ATTN_COMPILER;
}

void attn_meta_path(const char *csv_path, char *out, size_t cap)
{
    size_t len = strlen(csv_path);
    if (len >= 4 && strcmp(csv_path + len - 4, ".csv") == 0)
        len -= 4;
    snprintf(out, cap, "%.*s.meta.json", (int)len, csv_path);
}

static void write_libraries(FILE *f)
{
    fprintf(f, "  \"libraries\": {");
    const char *sep = "";
    if (openblas_get_config) {
        const char *config = openblas_get_config();
        char version[32] = "";
        /* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64" */
        if (config && sscanf(config, "OpenBLAS %31s", version) == 1) {
            fprintf(f, "\"openblas\": ");
            attn_json_put_string(f, version);
            fprintf(f, ", \"openblas_config\": ");
            attn_json_put_string(f, config);
            sep = ", ";
        }
    }
    /* Every library a variant of the table says it is built on. */
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!v->library || !v->library_version || strcmp(v->library, "OpenBLAS") == 0)
            continue;
        fprintf(f, "%s\"%s\": ", sep, v->library);
        attn_json_put_string(f, v->library_version());
        sep = ", ";
    }
    fprintf(f, "%s\"benchmark\": ", sep);
    attn_json_put_string(f, ATTN_BENCHMARK_VERSION);
    fprintf(f, "},\n");
}

/* "roof_exceeded": [{"case": ..., "threads": 2, "limit": "fma", "pct_peak": 131, "roof": 58.5}] */
static void write_roof_exceeded(FILE *f, const attn_result_row *rows, int n)
{
    fprintf(f, ",\n  \"roof_exceeded\": [");
    int first = 1;
    for (int i = 0; i < n; i++) {
        const attn_result_row *r = &rows[i];
        if (!r->roof_exceeded)
            continue;
        int bw = strcmp(r->limit, "bandwidth") == 0;
        fprintf(f, "%s\n    {\"case\": ", first ? "" : ",");
        attn_json_put_string(f, r->case_name);
        fprintf(f, ", \"threads\": %d, \"limit\": ", r->threads);
        attn_json_put_string(f, r->limit);
        fprintf(f, ", \"pct_peak\": %.4g, \"roof\": %.6g}", r->pct_peak,
                bw ? r->peak_gbytes_per_s : r->peak_gflops);
        first = 0;
    }
    fprintf(f, "%s]", first ? "" : "\n  ");
}

int attn_meta_write(const char *path, const char *preset, const attn_peak *pk,
                    const attn_result_row *rows, int n, const char *peers, char *err, size_t cap)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, cap, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    attn_machine m;
    attn_machine_read(&m);
    const attn_cpu_info *cpu = attn_cpu();
    char detected[256], used[256], date[32];
    attn_cpu_format(cpu->detected, detected, sizeof detected);
    attn_cpu_format(cpu->features, used, sizeof used);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *mask = getenv("ATTN_CPU_MASK");

    fprintf(f, "{\n  \"cpu_model\": ");
    attn_json_put_string(f, m.model);
    fprintf(f, ", \"cpu_slug\": ");
    attn_json_put_string(f, m.slug);
    fprintf(f, ",\n  \"cpu_vendor\": ");
    attn_json_put_string(f, m.vendor);
    fprintf(f, ", \"cpu_family\": %d, \"cpu_model_id\": %d, \"cpu_stepping\": %d, \"cpu_uarch\": ",
            m.family, m.model_id, m.stepping);
    attn_json_put_string(f, m.uarch);
    fprintf(f, ", \"cpu_isa\": ");
    attn_json_put_string(f, m.isa);
    fprintf(f, ",\n  \"features_detected\": ");
    attn_json_put_string(f, detected);
    fprintf(f, ", \"features_used\": ");
    attn_json_put_string(f, used);
    fprintf(f, ", \"cpu_mask\": ");
    attn_json_put_string(f, mask ? mask : "");
    fprintf(f, ",\n  \"cores\": %d, \"threads_max\": %d,\n", m.cores, omp_get_num_procs());
    fprintf(f, "  \"cache\": {\"l1d_bytes\": %ld, \"l2_bytes\": %ld, \"l3_bytes\": %ld},\n",
            m.l1d_bytes, m.l2_bytes, m.l3_bytes);
    /* The pages the run asked for are the peak's "pages"; this is what
     * the kernel does with such a request. */
    char thp[16];
    attn_thp_policy(thp, sizeof thp);
    fprintf(f, "  \"thp_policy\": ");
    attn_json_put_string(f, thp);
    fprintf(f, ",\n");
    fprintf(f, "  \"compiler\": ");
    attn_json_put_string(f, ATTN_COMPILER);
    fprintf(f, ", \"c_flags\": ");
    attn_json_put_string(f, ATTN_C_FLAGS);
    fprintf(f, ", \"build_type\": ");
    attn_json_put_string(f, ATTN_BUILD_TYPE);
    fprintf(f, ",\n");
    write_libraries(f);
    fprintf(f, "  \"date\": ");
    attn_json_put_string(f, date);
    fprintf(f, ", \"preset\": ");
    attn_json_put_string(f, preset);
    fprintf(f, ",\n  \"peak\": ");
    attn_peak_write_json(f, pk, 2);
    write_roof_exceeded(f, rows, n);
    if (peers && peers[0])
        fprintf(f, ",\n  \"peers\": %s", peers);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) {
        snprintf(err, cap, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
