/* cnccl.c -- importer of nccl-tests output (all_reduce_perf, alltoall_perf,
 * sendrecv_perf; NVIDIA/nccl-tests src/common.cu).
 *
 * The text read: comment lines start with '#'; among them
 *   # Collective test starting: all_reduce_perf      (the collective)
 *   # nThread 1 nGpus 8 minBytes 8 maxBytes ...       (the GPUs of one process)
 * and each data line is
 *   size count type redop root  time algbw busbw #wrong  time algbw busbw #wrong
 * (bytes, elements, type, op, root, then out-of-place and in-place: us, GB/s,
 * GB/s, errors).  The out-of-place time is stored: what = allreduce, alltoall
 * or send_recv, source nccl, tp = the GPUs, bytes = size, time_ms = time / 1000,
 * with the file and line.  Anything else is refused with its file and line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdb.h"
#include "latsim/infile.h"
#include "latsim/catalog.h"
#include "llm/cost.h"

/* The collective stored for nccl-tests binary NAME, or NULL when not one read. */
static const char *coll_of(const char *name)
{
    if (!strncmp(name, "all_reduce_perf", 15)) return "allreduce";
    if (!strncmp(name, "alltoall_perf", 13)) return "alltoall";
    if (!strncmp(name, "sendrecv_perf", 13)) return "send_recv";
    return NULL;
}

/* How much faster than the GPU's datasheet link (link_gbs, per direction) a
 * collective's bus bandwidth may be before the row is refused: NVLink SHARP
 * (in-switch reduction) lifts an all-reduce's bus bandwidth above the link's
 * by up to about 1.5x; twice the link is beyond any measurement. */
#define NCCL_MAX_LINK_FACTOR 2.0

/* The bus bandwidth factor of collective COLL over N GPUs (nccl-tests'
 * PERFORMANCE.md): busbw = algbw x factor. */
static double bus_factor(const char *coll, int n)
{
    if (!strcmp(coll, "allreduce")) return 2.0 * (n - 1) / n;
    if (!strcmp(coll, "alltoall")) return (double) (n - 1) / n;
    return 1.0;
}

/* S as a finite number in *V; returns 0, or -1 when it is not one. */
static int num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return (end == s || *end || errno || !isfinite(*v)) ? -1 : 0;
}

int cimp_nccl(sqlite3 *db, const char *path, const cimp_opts *o, int gpus, long *n, char *err, size_t errlen)
{
    FILE *f = infile_open(path, INFILE_MAX_TABLE, err, errlen);
    if (!f) return -1;
    if (!o->gpu || !o->gpu[0]) {
        fclose(f);
        snprintf(err, errlen, "%s: --gpu G is required (the GPU the collectives ran on)", path);
        return -1;
    }
    /* The datasheet's link bandwidth, the ceiling of a plausible bus bandwidth
     * (0: the GPU is not in the catalog; the fit's own lookup refuses it later). */
    gpu_spec gs;
    char gerr[256];
    double link = catalog_gpu(db, o->gpu, &gs, gerr, sizeof gerr) == 0 ? gs.link_gbs : 0;
    cdb_writer w;
    if (cdb_writer_open(&w, db, err, errlen) != 0) {
        fclose(f);
        return -1;
    }
    double prev_size = 0;   /* the previous row's size in this collective's table (sizes increase) */
    char buf[4096];
    const char *coll = NULL;
    int ngpus = gpus;
    long line = 0, stored = 0;
    int rc = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        line++;
        if (!strchr(buf, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%ld: line longer than %zu characters", path, line, sizeof buf - 1);
            rc = -1;
            break;
        }
        char *p = buf + strspn(buf, " \t");
        if (*p == '\n' || *p == '\r' || !*p) continue;
        if (*p == '#') {
            char *c = strstr(p, "Collective test starting:");
            if (c) {
                c += strlen("Collective test starting:");
                c += strspn(c, " \t");
                prev_size = 0;
                if (!(coll = coll_of(c))) {
                    snprintf(err, errlen, "%s:%ld: collective '%.*s': expected all_reduce_perf, alltoall_perf "
                             "or sendrecv_perf", path, line, (int)strcspn(c, " \t\r\n"), c);
                    rc = -1;
                }
            }
            char *g = strstr(p, "nGpus ");
            if (g && gpus <= 0) {
                long v = strtol(g + 6, NULL, 10);
                if (v < 1 || v > 1024) {
                    snprintf(err, errlen, "%s:%ld: nGpus: expected 1 to 1024", path, line);
                    rc = -1;
                }
                /* nccl-tests prints the GPUs of one thread; nThread T gives T times as many */
                char *t = strstr(p, "nThread ");
                long th = t ? strtol(t + 8, NULL, 10) : 1;
                ngpus = (int)(v * (th >= 1 ? th : 1));
            }
            continue;
        }
        char *tok[16];
        int nt = 0;
        for (char *s = strtok(p, " \t\r\n"); s && nt < 16; s = strtok(NULL, " \t\r\n")) tok[nt++] = s;
        double size, t_us;
        if (nt < 9 || num(tok[0], &size) != 0 || num(tok[5], &t_us) != 0) {
            snprintf(err, errlen, "%s:%ld: expected 'size count type redop root time algbw busbw #wrong ...'",
                     path, line);
            rc = -1;
            break;
        }
        if (!coll) {
            snprintf(err, errlen, "%s:%ld: data before '# Collective test starting: NAME'", path, line);
            rc = -1;
            break;
        }
        if (ngpus < 1) {
            snprintf(err, errlen, "%s:%ld: the GPUs are unknown (no '# nThread T nGpus G' line; give --gpus N)",
                     path, line);
            rc = -1;
            break;
        }
        if (!(size >= 1) || size > 1e15 || size != floor(size)) {
            snprintf(err, errlen, "%s:%ld: size %s: expected a whole number of bytes >= 1", path, line, tok[0]);
            rc = -1;
            break;
        }
        if (!(t_us * 1e-3 >= CDB_MS_MIN && t_us * 1e-3 <= CDB_MS_MAX)) {
            snprintf(err, errlen, "%s:%ld: time %s: expected microseconds in [0.001, 1e10]", path, line, tok[5]);
            rc = -1;
            break;
        }
        if (!(size > prev_size)) {
            snprintf(err, errlen, "%s:%ld: size %s after %.0f: the sizes of one collective's table must increase (a curve "
                     "of time against size; a repeated size is two answers for one message)", path, line, tok[0], prev_size);
            rc = -1;
            break;
        }
        prev_size = size;
        double bus = ngpus > 1 || strcmp(coll, "allreduce") ? size / (t_us * 1e3) * bus_factor(coll, ngpus) : 0;  /* GB/s */
        if (link > 0 && bus > NCCL_MAX_LINK_FACTOR * link) {
            snprintf(err, errlen, "%s:%ld: %s bytes in %s us is a bus bandwidth of %.4g GB/s, more than %g x the %s's "
                     "%g GB/s link (datasheet): not a measurement", path, line, tok[0], tok[5], bus, NCCL_MAX_LINK_FACTOR,
                     o->gpu, link);
            rc = -1;
            break;
        }
        cdb_meas m = { .source = "nccl", .what = coll, .name = "", .model = "", .gpu = o->gpu, .weights = "",
                       .tp = ngpus, .batch = 0, .tokens = 0, .context = 0, .bytes = size,
                       .time_ms = t_us * 1e-3, .std_ms = NAN, .repeats = 0, .device = "", .driver = "",
                       .measured_at = "", .tool = o->tool, .file = path, .line = line };
        if (cdb_put(&w, &m, NULL, err, errlen) != 0) {
            rc = -1;
            break;
        }
        stored++;
    }
    cdb_writer_close(&w);
    fclose(f);
    if (rc == 0 && stored == 0) {
        snprintf(err, errlen, "%s: no data lines (nccl-tests output expected)", path);
        rc = -1;
    }
    if (rc == 0) {
        *n = stored;
        if (o->log) fprintf(o->log, "%s: %ld %s times on %d x %s\n", path, stored, coll, ngpus, o->gpu);
    }
    return rc;
}

/* Fills OUT from prepared ST (rows bytes, time_ms ascending); returns OUT->n > 0. */
static int read_prof(sqlite3_stmt *st, const char *source, cost_coll_prof *out)
{
    out->n = 0;
    while (out->n < COST_COLL_MAX && sqlite3_step(st) == SQLITE_ROW) {
        out->bytes[out->n] = sqlite3_column_double(st, 0);
        out->sec[out->n] = sqlite3_column_double(st, 1) * 1e-3;
        out->n++;
    }
    snprintf(out->source, sizeof out->source, "%s", source);
    return out->n > 0;
}

/* Vidur's send/recv of GPU between two GPUs on one node (DPN 2) or two (DPN 1):
 * the rows of the GPU's cluster "<gpu>_*" (DGX first, cprofile.c's choice for
 * the all-reduce), the latest at each size. */
static int load_vidur_sr(sqlite3 *db, const char *gpu, int dpn, cost_coll_prof *out)
{
    sqlite3_stmt *st = NULL;
    char like[80], name[16], cluster[128] = "";
    snprintf(like, sizeof like, "%.60s\\_%%", gpu);
    snprintf(name, sizeof name, "dpn%d", dpn);
    if (sqlite3_prepare_v2(db, "SELECT gpu FROM calib_meas WHERE source = 'vidur' AND what = 'send_recv' AND gpu LIKE ?1"
                           " ESCAPE '\\' AND name = ?2 AND tp = 2 GROUP BY gpu ORDER BY (gpu LIKE '%dgx') DESC, gpu"
                           " LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    sqlite3_bind_text(st, 1, like, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) snprintf(cluster, sizeof cluster, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!cluster[0]) return 0;
    if (sqlite3_prepare_v2(db,
            "SELECT bytes, time_ms FROM calib_meas WHERE id IN (SELECT max(id) FROM calib_meas"
            " WHERE source = 'vidur' AND what = 'send_recv' AND gpu = ?1 AND name = ?2 AND tp = 2 AND bytes > 0"
            " GROUP BY bytes) ORDER BY bytes", -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    sqlite3_bind_text(st, 1, cluster, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int ok = read_prof(st, "vidur", out);
    sqlite3_finalize(st);
    return ok;
}

/* The loader of stored collective profiles (llm/cost.h, cost_coll_fn): the
 * latest time at each size.  nccl-tests rows (of the catalog GPU, over NGPUS
 * GPUs) first; for send/recv, else Vidur's network profile of the GPU
 * (cimport.c: devices_per_node 2 is within a node, 1 across two nodes).  More
 * sizes than COST_COLL_MAX: the first ones. */
static int load_coll(sqlite3 *db, const char *coll, const char *gpu, int ngpus, cost_coll_prof *out)
{
    sqlite3_stmt *st = NULL;
    memset(out, 0, sizeof *out);
    if (!strcmp(coll, "send_recv_nodes")) return load_vidur_sr(db, gpu, 1, out);
    if (sqlite3_prepare_v2(db,
            "SELECT bytes, time_ms FROM calib_meas WHERE id IN (SELECT max(id) FROM calib_meas"
            " WHERE source = 'nccl' AND what = ?1 AND gpu = ?2 AND tp = ?3 AND bytes > 0 GROUP BY bytes)"
            " ORDER BY bytes", -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);   /* no calibration tables: no profile */
        return 0;
    }
    sqlite3_bind_text(st, 1, coll, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, gpu, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, ngpus);
    int ok = read_prof(st, "nccl", out);
    sqlite3_finalize(st);
    if (!ok && !strcmp(coll, "send_recv") && ngpus == 2) return load_vidur_sr(db, gpu, 2, out);
    return ok;
}

void cnccl_register(void) { cost_set_collective(load_coll); }
