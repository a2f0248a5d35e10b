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

/* The "peers" object of a sidecar, built an entry at a time: obj holds
 * `used` bytes (0 to start); attn_meta_add_peer appends "name": "version"
 * (whole entries only, so the object stays JSON when cap runs out),
 * attn_meta_close_peers ends it ({} when empty). */
void attn_meta_add_peer(char *obj, size_t cap, size_t *used, const char *name, const char *version);
void attn_meta_close_peers(char *obj, size_t cap, size_t used);

/* A resumed run's "peers": `versions` (a peers object, or "": none)
 * gains every peer the sidecar's text before the run (`old_meta`; NULL:
 * none) recorded that `versions` lacks and that has a row among `rows`
 * (n): a resume does not start a peer whose cells are all in the CSV, and
 * those rows came from the run that recorded its version. */
void attn_meta_merge_peers(const char *old_meta, const struct attn_result_row *rows, int n,
                           char *versions, size_t cap);

/* "GNU 12.2.0" etc., for reports. */
const char *attn_meta_compiler(void);

#endif
