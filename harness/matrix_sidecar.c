#include "matrix_sidecar.h"

#include <stdio.h>
#include <string.h>

#include "run_meta.h"

void matrix_sidecar_peer_started(matrix_sidecar *sc, const char *peer, const char *version)
{
    attn_meta_add_peer(sc->versions, sizeof sc->versions, &sc->used, peer, version);
}

int matrix_sidecar_write(const matrix_sidecar *sc, char *err, size_t cap)
{
    /* "" (no "peers" key) until the peers' phase, then the object closed
     * on a copy, so more peers can still be added; a resume keeps the
     * versions of the peers it did not restart. */
    char versions[sizeof sc->versions] = "";
    if (sc->peers_ran) {
        memcpy(versions, sc->versions, sc->used);
        versions[sc->used] = '\0';
        attn_meta_close_peers(versions, sizeof versions, sc->used);
    }
    attn_meta_merge_peers(sc->old_meta, sc->rf->rows, sc->rf->n_rows, versions, sizeof versions);
    return attn_meta_write(sc->path, sc->preset, sc->pk, sc->rf->rows, sc->rf->n_rows, versions,
                           err, cap);
}

void matrix_sidecar_on_interrupt(void *ctx)
{
    matrix_sidecar *sc = ctx;
    if (sc->budget)
        matrix_budget_save(sc->budget);
    char err[400];
    if (matrix_sidecar_write(sc, err, sizeof err) != 0)
        fprintf(stderr, "matrix: %s\n", err);
}
