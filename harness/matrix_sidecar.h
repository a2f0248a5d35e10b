/* A matrix run's sidecar FILE.meta.json, kept ready to write at any
 * moment: an interrupted run leaves one that names every peer library
 * that timed a row of its CSV and lists every row above its roof, as a
 * finished run's does. */
#ifndef ATTN_MATRIX_SIDECAR_H
#define ATTN_MATRIX_SIDECAR_H

#include <stddef.h>

#include "matrix_budget.h"
#include "peak.h"
#include "results_csv.h"

typedef struct matrix_sidecar {
    const char *path;            /* FILE.meta.json */
    const char *preset;          /* the run's name */
    const attn_peak *pk;         /* the peaks the rows are judged against */
    const attn_results_file *rf; /* the rows so far */
    const char *old_meta;        /* the sidecar's text before a resume; NULL: none */
    matrix_budget *budget;       /* set while the cells run under --budget */
    int peers_ran;      /* the peers' phase began: "peers" is written ({} if none started) */
    size_t used;        /* bytes of `versions` so far */
    char versions[512]; /* {"torch": "2.15.0", ... of the peers started, left open */
} matrix_sidecar;

/* Records a peer's version as its worker reports it. Called under the
 * interrupt lock, so the interrupt hook never sees half an entry. */
void matrix_sidecar_peer_started(matrix_sidecar *sc, const char *peer, const char *version);

/* Writes the sidecar from the run so far: 0, or -1 with `err`. */
int matrix_sidecar_write(const matrix_sidecar *sc, char *err, size_t cap);

/* attn_interrupt_before_exit's hook (ctx: the matrix_sidecar): saves the
 * budget's plan state while the cells run, then writes the sidecar. */
void matrix_sidecar_on_interrupt(void *sc);

#endif
