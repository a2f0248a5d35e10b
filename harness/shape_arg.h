/* --shape: one attention shape from the command line, spelled as the shape
 * fields of a case name (verify, bench and the matrix CSV print them), so
 * a row of a results file can be re-run on its own:
 *     Hq=32,Hkv=8,nq=1,nkv=32768,dk=128            (decode, GQA)
 *     B=2,Hq=28,Hkv=4,nq=3000,nkv=3000,dk=128,dv=128,causal=1,scale=0.05
 * Fields in any order, each once: B, Hq, Hkv, nq, nkv, dk, dv, causal,
 * scale, and (where the command takes input kinds) data. Hq, nq and dk are
 * required; the rest default to B=1, Hkv=Hq, nkv=nq, dv=dk, causal=0,
 * scale=0 (1/sqrt(d_k)), data=normal. */
#ifndef ATTN_SHAPE_ARG_H
#define ATTN_SHAPE_ARG_H

#include <stddef.h>

#include "attn.h"
#include "cases.h"

/* Parses `text` into *shape (and *data when `data` is non-NULL; NULL: a
 * data= field is refused). Returns 0, or -1 with `msg` naming the field and
 * its value ("Hkv = 3 does not divide Hq = 8", "'impl=avx2' names a
 * variant: give it with --variant"); *shape and *data are then untouched.
 * The shape is checked as attn_run checks it. */
int attn_shape_arg_parse(const char *text, attn_shape *shape, attn_data_kind *data, char *msg,
                         size_t cap);

/* A shape's scale= value, the whole of `value`: a finite number within a
 * float's range that does not round to 0 (which means 1/sqrt(d_k)), read
 * through a double as case names spell it. Returns 0 with *scale set, or -1
 * with `msg` naming the value. The CSV reader takes a row's scale from its
 * case name with this too, so a file and --shape agree on every cell. */
int attn_scale_parse(const char *value, float *scale, char *msg, size_t cap);

/* A command's --shape VALUE appended to shapes[*n] (and data[*n] when `data`
 * is non-NULL: verify), at most `cap`; prints "<cmd>: --shape: <why>" and
 * returns -1 when refused, full, or a shape already in the list (the same
 * cell, scale included; with `data`, of the same input kind too). */
int attn_shape_arg_add(const char *cmd, const char *value, attn_shape *shapes, attn_data_kind *data,
                       int *n, int cap);

/* The grammar's lines for a command's --help, each indented by `indent`
 * spaces; `takes_data` adds the data= field. */
void attn_shape_arg_help(int indent, int takes_data);

#endif
