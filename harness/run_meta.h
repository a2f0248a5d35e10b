/* The sidecar FILE.meta.json of a results CSV (docs/results-format.md):
 * the machine, the build, library versions, the date, the preset and the
 * peak figures the rows' pct_peak is relative to. */
#ifndef ATTN_RUN_META_H
#define ATTN_RUN_META_H

#include <stddef.h>

#include "peak.h"

/* FILE.csv -> FILE.meta.json (any other name gets .meta.json appended). */
void attn_meta_path(const char *csv_path, char *out, size_t cap);

/* Writes the sidecar. `rows` (n of them, may be 0) are the rows of the
 * CSV so far: those above 100 % of their roof are listed under
 * "roof_exceeded" (the roof under-measures the CPU; the page says so).
 * Returns 0, or -1 with `err` naming the path. */
struct attn_result_row;
/* `peers` (may be NULL) is a JSON object of the peers' library versions,
 * {"torch": "2.15.0", ...}, written as "peers". */
int attn_meta_write(const char *path, const char *preset, const attn_peak *pk,
                    const struct attn_result_row *rows, int n, const char *peers, char *err,
                    size_t cap);

/* "GNU 12.2.0" etc., for reports. */
const char *attn_meta_compiler(void);

#endif
