/* trace_jsonl.c -- traces in JSON lines (Mooncake format), parsed with jansson.
 *
 * One JSON object per line:
 *   {"timestamp": MS, "input_length": N, "output_length": M, "hash_ids": [ ... ]}
 * timestamp in milliseconds (shifted so the first row arrives at 0, never
 * decreasing), token counts whole numbers >= 0, hash_ids (optional) integers
 * >= 0 naming the prompt's blocks.  Every row's ids go into one flat array with
 * an offset per row, so a request can point at its row's ids without a copy.
 * Optional named fields: the class (a string), the complexity score (a number
 * in [0, 1], or null for none) and the LoRA adapter (a whole number >= 0, 0 the
 * base model, or null for none), on every line when asked for.
 * Empty lines are skipped.  Errors name the line: "PATH:LINE: message".
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "engine/errmsg.h"
#include "latsim/infile.h"
#include "engine/simtime.h"
#include "workload/trace.h"

#define JL_MAX_LINE (1 << 20)   /* longest line accepted, bytes (a Mooncake row is a few hundred) */

static int jl_fail(char *err, size_t errlen, const char *path, long line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int jl_fail(char *err, size_t errlen, const char *path, long line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0) snprintf(err, errlen, "%s:%ld: %s", path, line, msg);
    else snprintf(err, errlen, "%s: %s", path, msg);
    return -1;
}

/* A whole number in [0, INT32_MAX] from field KEY of O.  Returns 0, or -1 with ERR. */
static int jl_tokens(json_t *o, const char *key, int32_t *out, char *err, size_t errlen, const char *path, long line)
{
    json_t *v = json_object_get(o, key);
    if (!v) return jl_fail(err, errlen, path, line, "no field \"%s\"", key);
    if (!json_is_integer(v)) return jl_fail(err, errlen, path, line, "\"%s\" is not a whole number", key);
    json_int_t x = json_integer_value(v);
    if (x < 0 || x > INT32_MAX)
        return jl_fail(err, errlen, path, line, "\"%s\" = %lld is out of range 0..%ld", key, (long long) x, (long) INT32_MAX);
    *out = (int32_t) x;
    return 0;
}

/* Grows *P (elements of SIZE bytes, capacity *CAP) to hold NEED.  Returns 0 or -1. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

int trace_load_jsonl(trace *t, const trace_opts *o, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *path = o->path ? o->path : "(no path)";
    /* Regular files only: a FIFO with no writer would block, a device may never end. */
    if (!o->path) return jl_fail(err, errlen, path, 0, "cannot open: no file given");
    FILE *f = infile_open(o->path, INFILE_MAX_TRACE, err, errlen);
    if (!f) return -1;
    size_t cap = 0, hcap = 0, nh = 0;
    double t0 = 0;
    int has_hash = -1;           /* unknown until the first row */
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t len;
    long line = 0, aline = 0;    /* aline: the first line naming adapter_max */
    int rc = -1;
    t->adapter_max = -1;
    json_t *root = NULL;
    while ((len = getline(&buf, &bufcap, f)) >= 0) {
        line++;
        if (len > JL_MAX_LINE) { jl_fail(err, errlen, path, line, "line longer than %d bytes", JL_MAX_LINE); goto done; }
        if (strlen(buf) != (size_t) len) { jl_fail(err, errlen, path, line, "a NUL byte: not text"); goto done; }
        size_t k = strspn(buf, " \t\r\n");
        if (buf[k] == '\0') continue;
        json_error_t je;
        root = json_loadb(buf, (size_t) len, 0, &je);
        if (!root) {
            char t[96];
            jl_fail(err, errlen, path, line, "not JSON: %s", errmsg_field(je.text, t, sizeof t));
            goto done;
        }
        if (!json_is_object(root)) { jl_fail(err, errlen, path, line, "not a JSON object"); goto done; }
        if (t->n == cap) {
            size_t nc = cap ? 2 * cap : 1024;
            void *p0 = realloc(t->t, nc * sizeof *t->t);
            if (p0) t->t = p0;
            void *p1 = realloc(t->prompt, nc * sizeof *t->prompt);
            if (p1) t->prompt = p1;
            void *p2 = realloc(t->output, nc * sizeof *t->output);
            if (p2) t->output = p2;
            void *p3 = realloc(t->hash_off, (nc + 1) * sizeof *t->hash_off);
            if (p3) t->hash_off = p3;
            void *p4 = o->class_column ? realloc(t->label, nc * sizeof *t->label) : t;
            if (p4 && o->class_column) t->label = p4;
            void *p5 = o->complexity_column ? realloc(t->score, nc * sizeof *t->score) : t;
            if (p5 && o->complexity_column) t->score = p5;
            void *p6 = o->adapter_column ? realloc(t->adapter, nc * sizeof *t->adapter) : t;
            if (p6 && o->adapter_column) t->adapter = p6;
            if (!p0 || !p1 || !p2 || !p3 || !p4 || !p5 || !p6) {
                jl_fail(err, errlen, path, 0, "out of memory");
                goto done;
            }
            cap = nc;
        }
        json_t *ts = json_object_get(root, "timestamp");
        if (!ts) { jl_fail(err, errlen, path, line, "no field \"timestamp\""); goto done; }
        if (!json_is_number(ts) || !isfinite(json_number_value(ts))) {
            jl_fail(err, errlen, path, line, "\"timestamp\" is not a number (milliseconds)");
            goto done;
        }
        double ms = json_number_value(ts);
        if (t->n == 0) t0 = ms;
        double sec = (ms - t0) / 1000.0;
        if (fabs(sec) > SIMTIME_HORIZON_S) {
            jl_fail(err, errlen, path, line, "\"timestamp\" is %.3g s from the first row, beyond the simulated clock's range (%.3g s)",
                    sec, SIMTIME_HORIZON_S);
            goto done;
        }
        if (t->n > 0 && sec < t->t[t->n - 1]) {
            jl_fail(err, errlen, path, line, "time goes backwards (%.9g s after the first row, previous row %.9g s)",
                    sec, t->t[t->n - 1]);
            goto done;
        }
        t->t[t->n] = sec;
        if (jl_tokens(root, "input_length", &t->prompt[t->n], err, errlen, path, line) ||
            jl_tokens(root, "output_length", &t->output[t->n], err, errlen, path, line))
            goto done;
        if (o->class_column) {
            json_t *c = json_object_get(root, o->class_column);
            char fn[64];
            errmsg_field(o->class_column, fn, sizeof fn);
            if (!c) { jl_fail(err, errlen, path, line, "no field \"%s\" (class_column)", fn); goto done; }
            if (!json_is_string(c)) { jl_fail(err, errlen, path, line, "\"%s\" is not a string", fn); goto done; }
            int32_t li = trace_intern_label(t, json_string_value(c));
            if (li < 0) { jl_fail(err, errlen, path, 0, "out of memory"); goto done; }
            t->label[t->n] = li;
        }
        if (o->complexity_column) {
            json_t *c = json_object_get(root, o->complexity_column);
            char fn[64];
            errmsg_field(o->complexity_column, fn, sizeof fn);
            if (!c) { jl_fail(err, errlen, path, line, "no field \"%s\" (complexity_column)", fn); goto done; }
            if (json_is_null(c)) t->score[t->n] = NAN;     /* no score: drawn as without the field */
            else if (!json_is_number(c)) {
                jl_fail(err, errlen, path, line, "\"%s\" is not a number (complexity_column)", fn);
                goto done;
            } else {
                double v = json_number_value(c);
                if (!(v >= 0 && v <= 1)) {
                    jl_fail(err, errlen, path, line, "\"%s\" = %g is outside [0, 1] (complexity_column)", fn, v);
                    goto done;
                }
                t->score[t->n] = v;
            }
        }
        if (o->adapter_column) {
            json_t *c = json_object_get(root, o->adapter_column);
            char fn[64];
            errmsg_field(o->adapter_column, fn, sizeof fn);
            if (!c) { jl_fail(err, errlen, path, line, "no field \"%s\" (adapter_column)", fn); goto done; }
            if (json_is_null(c)) t->adapter[t->n] = -1;   /* none: the class's or a draw */
            else if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) > INT32_MAX - 2) {
                jl_fail(err, errlen, path, line, "column '%s': not an adapter number (0: the base model, 1..adapters)", fn);
                goto done;
            } else {
                t->adapter[t->n] = (int32_t) json_integer_value(c);
                if (t->adapter[t->n] > t->adapter_max) {
                    t->adapter_max = t->adapter[t->n];
                    aline = line;
                }
            }
        }
        json_t *h = json_object_get(root, "hash_ids");
        if (has_hash < 0) has_hash = h != NULL;
        if ((h != NULL) != has_hash) {
            jl_fail(err, errlen, path, line, has_hash ? "no field \"hash_ids\" (earlier rows have it)"
                                                       : "\"hash_ids\" appears, but the first row had none");
            goto done;
        }
        if (h) {
            if (!json_is_array(h)) { jl_fail(err, errlen, path, line, "\"hash_ids\" is not an array"); goto done; }
            size_t m = json_array_size(h);
            if (grow((void **) &t->hash, &hcap, nh + m, sizeof *t->hash)) {
                jl_fail(err, errlen, path, 0, "out of memory");
                goto done;
            }
            for (size_t i = 0; i < m; i++) {
                json_t *e = json_array_get(h, i);
                if (!json_is_integer(e) || json_integer_value(e) < 0) {
                    jl_fail(err, errlen, path, line, "\"hash_ids\"[%zu] is not an integer >= 0", i);
                    goto done;
                }
                t->hash[nh++] = (int64_t) json_integer_value(e);
            }
            t->hash_off[t->n + 1] = nh;
        }
        t->n++;
        json_decref(root);
        root = NULL;
    }
    if (ferror(f)) { jl_fail(err, errlen, path, 0, "cannot read: %s", strerror(errno)); goto done; }
    if (t->n == 0) { jl_fail(err, errlen, path, 0, "no rows"); goto done; }
    if (has_hash) t->hash_off[0] = 0;
    else { free(t->hash_off); t->hash_off = NULL; }
    if (t->adapter_max >= 0 && trace_note_adapter(t, path, aline, o->adapter_column) != 0) {
        jl_fail(err, errlen, path, 0, "out of memory");
        goto done;
    }
    rc = 0;
done:
    json_decref(root);
    free(buf);
    fclose(f);
    if (rc != 0) trace_free(t);
    return rc;
}
