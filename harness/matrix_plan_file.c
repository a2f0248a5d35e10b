/* The planner's text around it: the --budget duration parser and the plan
 * file (FILE.plan) that lets --resume keep a plan's choices
 * (matrix_plan.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_plan.h"
#include "matrix_plan_internal.h"

enum { LINE_CAP = 2048 };

static const char plan_magic[] = "# attnbench matrix plan 1";

int matrix_plan_parse_budget(const char *what, const char *text, double *seconds, char *why,
                             size_t cap)
{
    static const char units[] = "hms";
    static const double unit_s[] = {3600, 60, 1};
    static const double most_s = 30 * 24 * 3600.0; /* a month: anything longer is a typo */
    if (!what)
        what = "budget";
    if (!text || !seconds) {
        set_msg(why, cap, "%s: no value", what);
        return MATRIX_PLAN_EINVAL;
    }
    const char *p = text;
    double total = 0;
    int next_unit = 0; /* units must come in the order h, m, s, each once */
    int parts = 0;
    while (*p) {
        /* A plain decimal: digits, at most one point; no sign, no exponent. */
        const char *start = p;
        int digits = 0, points = 0;
        while (isdigit((unsigned char)*p) || *p == '.') {
            if (*p == '.')
                points++;
            else
                digits++;
            p++;
        }
        if (digits == 0 || points > 1) {
            set_msg(why, cap,
                    "%s '%s' is not a duration: use numbers with units h, m, s, e.g. 90s, 30m, "
                    "1.5h, 2h30m",
                    what, text);
            return MATRIX_PLAN_EINVAL;
        }
        if (*p == '\0') {
            set_msg(why, cap, "%s '%s' needs a unit after %.*s: h, m or s (e.g. 30m, 90s)", what,
                    text, (int)(p - start), start);
            return MATRIX_PLAN_EINVAL;
        }
        const char *u = strchr(units, *p);
        if (!u) {
            set_msg(why, cap, "%s '%s': '%c' is not a unit (h, m or s; e.g. 30m, 2h30m)", what,
                    text, *p);
            return MATRIX_PLAN_EINVAL;
        }
        if ((int)(u - units) < next_unit) {
            set_msg(why, cap,
                    "%s '%s': '%c' out of order (h, then m, then s, each once; e.g. 2h30m)", what,
                    text, *p);
            return MATRIX_PLAN_EINVAL;
        }
        char number[64];
        size_t len = (size_t)(p - start);
        if (len >= sizeof number) {
            set_msg(why, cap, "%s '%s': number too long", what, text);
            return MATRIX_PLAN_EINVAL;
        }
        memcpy(number, start, len);
        number[len] = '\0';
        errno = 0;
        double value = strtod(number, NULL);
        if (errno != 0 || !isfinite(value)) {
            set_msg(why, cap, "%s '%s': %s is out of range", what, text, number);
            return MATRIX_PLAN_EINVAL;
        }
        total += value * unit_s[u - units];
        next_unit = (int)(u - units) + 1;
        parts++;
        p++;
    }
    if (parts == 0) {
        set_msg(why, cap, "%s '' is empty: give a duration such as 30m, 90s, 1.5h, 2h30m", what);
        return MATRIX_PLAN_EINVAL;
    }
    if (!(total >= 1) || total > most_s) {
        set_msg(why, cap, "%s '%s' must be from 1 s to 30 days", what, text);
        return MATRIX_PLAN_EINVAL;
    }
    *seconds = total;
    return MATRIX_PLAN_OK;
}

/* The plan file -------------------------------------------------------------- */

int matrix_plan_path(const char *csv_path, char *buf, size_t cap)
{
    if (!csv_path || !buf || cap == 0)
        return MATRIX_PLAN_EINVAL;
    size_t n = strlen(csv_path);
    if (n >= 4 && strcmp(csv_path + n - 4, ".csv") == 0)
        n -= 4;
    int w = snprintf(buf, cap, "%.*s.plan", (int)n, csv_path);
    return w < 0 || (size_t)w >= cap ? MATRIX_PLAN_EINVAL : MATRIX_PLAN_OK;
}

/* The shortest %g that reads back as exactly x. */
static void format_exact(double x, char *buf, size_t cap)
{
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* The state lines (matrix_plan_state) after the header. */
static void write_state(FILE *f, const matrix_plan_input *in, const matrix_plan_state *st)
{
    char e[32], o[32], sb[32];
    format_exact(st->elapsed_s, e, sizeof e);
    format_exact(st->overhead_s, o, sizeof o);
    format_exact(st->setup_per_byte, sb, sizeof sb);
    fprintf(f, "# state elapsed_s=%s overhead_s=%s setup_per_byte=%s\n", e, o, sb);
    for (int i = 0; i < in->n_rates; i++) {
        const matrix_plan_rate *r = &in->rates[i];
        char x[32];
        format_exact(r->rate, x, sizeof x);
        fprintf(f, "# rate variant=%s threads=%d bandwidth=%d rate=%s\n",
                in->variants[r->variant].name, r->threads, r->bandwidth_bound ? 1 : 0, x);
    }
    if (st->actual_s && st->model_s)
        for (int v = 0; v < in->n_variants; v++) {
            char a[32], m[32];
            format_exact(st->actual_s[v], a, sizeof a);
            format_exact(st->model_s[v], m, sizeof m);
            fprintf(f, "# record variant=%s actual_s=%s model_s=%s\n", in->variants[v].name, a, m);
        }
}

int matrix_plan_write(const char *path, const matrix_plan_input *in, const matrix_plan *p,
                      char *err, size_t cap)
{
    return matrix_plan_write_state(path, in, p, NULL, err, cap);
}

int matrix_plan_write_state(const char *path, const matrix_plan_input *in, const matrix_plan *p,
                            const matrix_plan_state *state, char *err, size_t cap)
{
    if (!path || !in || !p || p->n_cells != in->n_cells) {
        set_msg(err, cap, "plan and cells do not match");
        return MATRIX_PLAN_EINVAL;
    }
    /* Written beside and renamed over, so a kill never leaves half a plan
     * for --resume to trip over. */
    char tmp[1100];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        set_msg(err, cap, "%s: path too long", path);
        return MATRIX_PLAN_EINVAL;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        set_msg(err, cap, "cannot write '%s': %s", tmp, strerror(errno));
        return MATRIX_PLAN_EIO;
    }
    char b[32], ps[32];
    format_exact(p->budget_s, b, sizeof b);
    format_exact(p->planned_s, ps, sizeof ps);
    fprintf(f, "%s\n# budget_s=%s planned_s=%s cells=%d planned=%d skipped=%d\n", plan_magic, b, ps,
            p->n_cells, p->n_planned, p->n_skipped);
    if (state)
        write_state(f, in, state);
    for (int i = 0; i < p->n_cells; i++) {
        const matrix_plan_choice *ch = &p->choices[i];
        char est[32];
        format_exact(ch->est_s, est, sizeof est);
        if (ch->skipped) {
            fprintf(f, "%s threads=%d skip est_s=%s reason=%s\n", in->cells[i].case_name,
                    in->cells[i].threads, est, ch->reason);
        } else {
            char lo[32], hi[32];
            format_exact(ch->min_time_s, lo, sizeof lo);
            format_exact(ch->max_time_s, hi, sizeof hi);
            fprintf(f, "%s threads=%d reps=%d min_time=%s max_time=%s est_s=%s\n",
                    in->cells[i].case_name, in->cells[i].threads, ch->repetitions, lo, hi, est);
        }
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        set_msg(err, cap, "cannot write '%s'", tmp);
        remove(tmp);
        return MATRIX_PLAN_EIO;
    }
    if (rename(tmp, path) != 0) {
        set_msg(err, cap, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        remove(tmp);
        return MATRIX_PLAN_EIO;
    }
    return MATRIX_PLAN_OK;
}

/* "name=" at *p: moves *p past it. */
static int take_key(const char **p, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(*p, key, n) != 0)
        return 0;
    *p += n;
    return 1;
}

/* A number up to the next blank or the end; moves past one blank. */
static int take_number(const char **p, double *out)
{
    char *end;
    if (!**p || isspace((unsigned char)**p))
        return 0;
    errno = 0;
    *out = strtod(*p, &end);
    if (errno != 0 || end == *p || !isfinite(*out) || (*end && *end != ' '))
        return 0;
    *p = *end ? end + 1 : end;
    return 1;
}

static int take_int(const char **p, int *out)
{
    double x;
    if (!take_number(p, &x) || x != floor(x) || x < 1 || x > 1e9)
        return 0;
    *out = (int)x;
    return 1;
}

/* One cell line into *e (case_name allocated). 0, or -1 with `why`. */
static int parse_entry(const char *line, matrix_plan_saved_entry *e, const char **why)
{
    const char *sp = strchr(line, ' ');
    *e = (matrix_plan_saved_entry){0};
    if (!sp || sp == line) {
        *why = "expected 'CASE threads=N ...'";
        return -1;
    }
    const char *p = sp + 1;
    double est;
    matrix_plan_choice *ch = &e->choice;
    if (!take_key(&p, "threads=") || !take_int(&p, &e->threads)) {
        *why = "expected threads=N after the case";
        return -1;
    }
    if (take_key(&p, "skip ")) {
        if (!take_key(&p, "est_s=") || !take_number(&p, &est) || est < 0 ||
            !take_key(&p, "reason=") || strncmp(p, "skipped", 7) != 0 ||
            strlen(p) >= sizeof ch->reason) {
            *why = "expected 'skip est_s=S reason=skipped: ...'";
            return -1;
        }
        ch->skipped = 1;
        ch->repetitions = 1;
        snprintf(ch->reason, sizeof ch->reason, "%s", p);
    } else {
        if (!take_key(&p, "reps=") || !take_int(&p, &ch->repetitions) ||
            !take_key(&p, "min_time=") || !take_number(&p, &ch->min_time_s) || ch->min_time_s < 0 ||
            !take_key(&p, "max_time=") || !take_number(&p, &ch->max_time_s) || ch->max_time_s < 0 ||
            !take_key(&p, "est_s=") || !take_number(&p, &est) || est < 0 || *p) {
            *why = "expected 'reps=N min_time=S max_time=S est_s=S' or 'skip ...'";
            return -1;
        }
    }
    ch->est_s = est;
    size_t n = (size_t)(sp - line);
    e->case_name = malloc(n + 1);
    if (!e->case_name) {
        *why = "out of memory";
        return -1;
    }
    memcpy(e->case_name, line, n);
    e->case_name[n] = '\0';
    return 0;
}

/* A variant name up to the next blank into buf; moves past one blank. */
static int take_name(const char **p, char *buf, size_t cap)
{
    size_t n = strcspn(*p, " ");
    if (n == 0 || n >= cap)
        return 0;
    memcpy(buf, *p, n);
    buf[n] = '\0';
    *p += n;
    if (**p == ' ')
        (*p)++;
    return 1;
}

static int take_nonnegative(const char **p, double *out)
{
    return take_number(p, out) && *out >= 0;
}

/* grows *items (of `size` bytes each) to hold one more; 0 or -1 */
static int grow(void **items, int n, size_t size)
{
    if (n & (n - 1))
        return 0; /* capacity is the next power of two: room left */
    void *more = realloc(*items, size * (size_t)(n ? 2 * n : 1));
    if (!more)
        return -1;
    *items = more;
    return 0;
}

/* One '# state', '# rate' or '# record' line (without the "# "): 1 taken,
 * 0 not such a line, -1 malformed or out of memory (`why` says which). */
static int parse_state_line(const char *line, matrix_plan_saved *out, const char **why)
{
    const char *p = line;
    if (take_key(&p, "state ")) {
        if (!take_key(&p, "elapsed_s=") || !take_nonnegative(&p, &out->elapsed_s) ||
            !take_key(&p, "overhead_s=") || !take_nonnegative(&p, &out->overhead_s) ||
            !take_key(&p, "setup_per_byte=") || !take_nonnegative(&p, &out->setup_per_byte) || *p) {
            *why = "expected '# state elapsed_s=S overhead_s=S setup_per_byte=X'";
            return -1;
        }
        out->has_state = 1;
        return 1;
    }
    if (take_key(&p, "rate ")) {
        matrix_plan_saved_rate r = {0};
        double x;
        if (!take_key(&p, "variant=") || !take_name(&p, r.variant, sizeof r.variant) ||
            !take_key(&p, "threads=") || !take_int(&p, &r.threads) || !take_key(&p, "bandwidth=") ||
            !take_number(&p, &x) || (x != 0 && x != 1) || !take_key(&p, "rate=") ||
            !take_number(&p, &r.rate) || !(r.rate > 0) || *p) {
            *why = "expected '# rate variant=NAME threads=N bandwidth=0|1 rate=X'";
            return -1;
        }
        r.bandwidth_bound = (int)x;
        if (grow((void **)&out->rates, out->n_rates, sizeof *out->rates) != 0) {
            *why = "out of memory";
            return -1;
        }
        out->rates[out->n_rates++] = r;
        return 1;
    }
    if (take_key(&p, "record ")) {
        matrix_plan_saved_record r = {0};
        if (!take_key(&p, "variant=") || !take_name(&p, r.variant, sizeof r.variant) ||
            !take_key(&p, "actual_s=") || !take_nonnegative(&p, &r.actual_s) ||
            !take_key(&p, "model_s=") || !take_nonnegative(&p, &r.model_s) || *p) {
            *why = "expected '# record variant=NAME actual_s=S model_s=S'";
            return -1;
        }
        if (grow((void **)&out->records, out->n_records, sizeof *out->records) != 0) {
            *why = "out of memory";
            return -1;
        }
        out->records[out->n_records++] = r;
        return 1;
    }
    return 0;
}

static int compare_key(const char *case_a, int threads_a, const char *case_b, int threads_b)
{
    int c = strcmp(case_a, case_b);
    if (c)
        return c;
    return (threads_a > threads_b) - (threads_a < threads_b);
}

static int entry_order(const void *a, const void *b)
{
    const matrix_plan_saved_entry *x = a, *y = b;
    return compare_key(x->case_name, x->threads, y->case_name, y->threads);
}

int matrix_plan_read(const char *path, matrix_plan_saved *out, char *err, size_t cap)
{
    if (!path || !out) {
        set_msg(err, cap, "no plan file");
        return MATRIX_PLAN_EINVAL;
    }
    *out = (matrix_plan_saved){.budget_s = NAN};
    FILE *f = fopen(path, "r");
    if (!f) {
        set_msg(err, cap, "cannot read '%s': %s", path, strerror(errno));
        return MATRIX_PLAN_EIO;
    }
    char line[LINE_CAP];
    int lineno = 0, cap_entries = 0, rc = MATRIX_PLAN_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            set_msg(err, cap, "%s line %d: %s", path, lineno,
                    len + 1 >= sizeof line ? "line too long" : "no newline at the end (cut off?)");
            rc = MATRIX_PLAN_EFORMAT;
            break;
        }
        line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, plan_magic) != 0) {
                set_msg(err, cap, "%s line 1: not an attnbench plan (expected '%s')", path,
                        plan_magic);
                rc = MATRIX_PLAN_EFORMAT;
                break;
            }
            continue;
        }
        if (line[0] == '#') {
            const char *why = "";
            int taken = strncmp(line, "# ", 2) == 0 ? parse_state_line(line + 2, out, &why) : 0;
            if (taken < 0) {
                set_msg(err, cap, "%s line %d: %s", path, lineno, why);
                rc = MATRIX_PLAN_EFORMAT;
                break;
            }
            if (taken)
                continue;
            const char *b = strstr(line, "budget_s=");
            if (b) {
                b += strlen("budget_s=");
                double x;
                if (take_number(&b, &x))
                    out->budget_s = x;
            }
            continue;
        }
        if (out->n_entries == cap_entries) {
            int grow = cap_entries ? 2 * cap_entries : 256;
            void *more = realloc(out->entries, sizeof *out->entries * (size_t)grow);
            if (!more) {
                set_msg(err, cap, "out of memory reading '%s'", path);
                rc = MATRIX_PLAN_ENOMEM;
                break;
            }
            out->entries = more;
            cap_entries = grow;
        }
        const char *why = "";
        if (parse_entry(line, &out->entries[out->n_entries], &why) != 0) {
            set_msg(err, cap, "%s line %d: %s", path, lineno, why);
            rc = MATRIX_PLAN_EFORMAT;
            break;
        }
        out->n_entries++;
    }
    if (rc == MATRIX_PLAN_OK && ferror(f)) {
        set_msg(err, cap, "cannot read '%s'", path);
        rc = MATRIX_PLAN_EIO;
    }
    if (rc == MATRIX_PLAN_OK && lineno == 0) {
        set_msg(err, cap, "%s: empty file, not an attnbench plan", path);
        rc = MATRIX_PLAN_EFORMAT;
    }
    fclose(f);
    if (rc == MATRIX_PLAN_OK && out->n_entries > 1) {
        qsort(out->entries, (size_t)out->n_entries, sizeof *out->entries, entry_order);
        for (int i = 1; i < out->n_entries; i++)
            if (entry_order(&out->entries[i - 1], &out->entries[i]) == 0) {
                set_msg(err, cap, "%s: cell %s threads=%d appears twice", path,
                        out->entries[i].case_name, out->entries[i].threads);
                rc = MATRIX_PLAN_EFORMAT;
                break;
            }
    }
    if (rc != MATRIX_PLAN_OK)
        matrix_plan_saved_free(out);
    return rc;
}

int matrix_plan_saved_free(matrix_plan_saved *s)
{
    if (!s)
        return MATRIX_PLAN_EINVAL;
    for (int i = 0; i < s->n_entries; i++)
        free(s->entries[i].case_name);
    free(s->entries);
    free(s->rates);
    free(s->records);
    *s = (matrix_plan_saved){.budget_s = NAN};
    return MATRIX_PLAN_OK;
}

int matrix_plan_saved_find(const matrix_plan_saved *s, const char *case_name, int threads,
                           const matrix_plan_choice **out)
{
    if (!s || !case_name || !out)
        return MATRIX_PLAN_EINVAL;
    int lo = 0, hi = s->n_entries - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const matrix_plan_saved_entry *e = &s->entries[mid];
        int c = compare_key(case_name, threads, e->case_name, e->threads);
        if (c == 0) {
            *out = &e->choice;
            return MATRIX_PLAN_OK;
        }
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return MATRIX_PLAN_ENOTFOUND;
}

int matrix_plan_apply_saved(const matrix_plan_input *in, matrix_plan *p, const matrix_plan_saved *s,
                            int *n_not_found)
{
    if (!in || !p || !s || p->n_cells != in->n_cells)
        return MATRIX_PLAN_EINVAL;
    int missing = 0;
    for (int i = 0; i < in->n_cells; i++) {
        const matrix_plan_choice *saved;
        if (matrix_plan_saved_find(s, in->cells[i].case_name, in->cells[i].threads, &saved) ==
            MATRIX_PLAN_OK)
            p->choices[i] = *saved;
        else
            missing++;
    }
    if (n_not_found)
        *n_not_found = missing;
    return matrix_plan_update_totals(in, p);
}
