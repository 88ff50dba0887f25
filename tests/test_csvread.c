/* test_csvread.c -- the one CSV reader (sim/core/csvread.h): rows and the lines
 * they start on, rows and lines across the reader's 64 KiB blocks, the header
 * callback, the refusals (NUL byte, line too long, field count, empty file, not a
 * regular file), and that traces (trace_load), empirical() columns
 * (csv_read_column) and the calibration tables (ccsv_read) give the same
 * message for the same bad file. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccsv.h"
#include "core/csvread.h"
#include "workload/trace.h"

static char tmpdir[64];

static void setup(void)
{
    strcpy(tmpdir, "/tmp/latsim_csvread_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(csvread, .init = setup, .fini = teardown);

/* Writes N bytes of DATA to tmpdir/NAME; PATH gets the name. */
static void write_bytes(const char *name, const char *data, size_t n, char *path, size_t pn)
{
    snprintf(path, pn, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* What the callbacks saw. */
typedef struct seen {
    int headers;              /* header calls */
    char first[32];           /* the header's first name */
    size_t rows;              /* data rows */
    long lines[16];           /* the first rows' lines */
    char cell[16][32];        /* their first cells */
    double sum;               /* sum of the first cells as numbers */
    int stop_at;              /* > 0: fail at this row (1-based) */
} seen;

static int hdr(void *ctx, const csvread_row *row, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    seen *s = ctx;
    s->headers++;
    cr_assert_eq(row->field, row->header, "the header row's cells are the header");
    cr_assert_eq(row->line, 1);
    snprintf(s->first, sizeof s->first, "%s", row->nheader ? row->header[0] : "");
    return 0;
}

static int row(void *ctx, const csvread_row *r, char *err, size_t errlen)
{
    seen *s = ctx;
    if (s->rows < 16) {
        s->lines[s->rows] = r->line;
        snprintf(s->cell[s->rows], sizeof s->cell[0], "%s", r->field[0]);
    }
    s->sum += atof(r->field[0]);
    s->rows++;
    if (s->stop_at > 0 && s->rows == (size_t) s->stop_at)
        return csvread_fail(r, r->line, err, errlen, "stopped at '%s'", r->field[1]);
    return 0;
}

static int read_text(const char *text, seen *s, char *err, size_t errlen)
{
    char path[128];
    write_bytes("t.csv", text, strlen(text), path, sizeof path);
    return csvread_file(path, hdr, row, s, err, errlen);
}

Test(csvread, rows_named_by_the_line_they_start_on)
{
    seen s = { 0 };
    char err[256];
    /* a BOM, a blank line, a quoted cell over two lines, CRLF, a "" row, no final newline */
    const char *text = "\xEF\xBB\xBF" "a,b\r\n1,x\r\n\n2,\"y\nz\"\n\"\"\n3,w";
    cr_assert_eq(read_text(text, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.headers, 1);
    cr_assert_str_eq(s.first, "a", "the byte order mark is not part of the name");
    cr_assert_eq(s.rows, 3);
    cr_assert(s.lines[0] == 2 && s.lines[1] == 4 && s.lines[2] == 7, "%ld %ld %ld", s.lines[0], s.lines[1], s.lines[2]);
    cr_assert_str_eq(s.cell[2], "3");
}

Test(csvread, callback_error_stops_and_is_one_line)
{
    seen s = { .stop_at = 2 };
    char err[256], want[256];
    cr_assert_eq(read_text("a,b\n1,x\n2,\"\x1b[31mred\"\n3,z\n", &s, err, sizeof err), -1);
    cr_assert_eq(s.rows, 2, "no row after the failing one");
    snprintf(want, sizeof want, "%s/t.csv:3: stopped at '\\x1b[31mred'", tmpdir);
    cr_assert_str_eq(err, want, "the message made printable");
}

Test(csvread, refusals)
{
    seen s = { 0 };
    char err[256], path[128];
    cr_assert_eq(read_text("a,b\n1,2\n3\n", &s, err, sizeof err), -1);
    cr_assert(strstr(err, "t.csv:3: 1 field, but the header has 2 columns"), "%s", err);
    s = (seen) { 0 };
    cr_assert_eq(read_text("a,b\n1,2,3\n", &s, err, sizeof err), -1);
    cr_assert(strstr(err, "t.csv:2: 3 fields, but the header has 2 columns"), "%s", err);
    s = (seen) { 0 };
    cr_assert_eq(read_text("", &s, err, sizeof err), -1);
    cr_assert(strstr(err, "t.csv: empty file (expected a header row)"), "%s", err);
    cr_assert_eq(s.headers, 0);

    static const char nul[] = "a,b\n1,2\n3,4\0" "5\n";
    write_bytes("n.csv", nul, sizeof nul - 1, path, sizeof path);
    s = (seen) { 0 };
    cr_assert_eq(csvread_file(path, hdr, row, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "n.csv:3: column b: a NUL byte (byte 2 of the cell, after '4'): not text"), "%s", err);

    cr_assert_eq(csvread_file(tmpdir, hdr, row, &s, err, sizeof err), -1);
    cr_assert(strstr(err, ": not a regular file (a directory)"), "%s", err);
    snprintf(path, sizeof path, "%s/fifo.csv", tmpdir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_assert_eq(csvread_file(path, hdr, row, &s, err, sizeof err), -1, "a FIFO without a writer does not block");
    cr_assert(strstr(err, "fifo.csv: not a regular file (a FIFO)"), "%s", err);
    snprintf(path, sizeof path, "%s/none.csv", tmpdir);
    cr_assert_eq(csvread_file(path, hdr, row, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "none.csv: cannot open: No such file or directory"), "%s", err);
}

/* Rows and a quoted cell straddling the 64 KiB blocks, a 200 KB line (several
 * blocks, under the limit) and a line over the limit. */
Test(csvread, lines_across_blocks_and_the_line_limit)
{
    size_t cap = 1 << 22, n = 0;
    char *buf = malloc(cap), path[128], err[256];
    cr_assert_not_null(buf);
    n += (size_t) sprintf(buf + n, "v,text\n");
    double want = 0;
    int rows = 0;
    for (int i = 0; i < 20000; i++, rows++) {
        n += (size_t) sprintf(buf + n, "%d,\"row %d\nsecond line\"\n", i, i);
        want += i;
    }
    n += (size_t) sprintf(buf + n, "7,");
    memset(buf + n, 'x', 200000);
    n += 200000;
    buf[n++] = '\n';
    want += 7;
    rows++;
    write_bytes("big.csv", buf, n, path, sizeof path);
    seen s = { 0 };
    cr_assert_eq(csvread_file(path, NULL, row, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.rows, (size_t) rows);
    cr_assert_eq(s.sum, want);
    cr_assert_eq(s.lines[3], 8, "row 3 starts on line 2 + 2 x 3");

    n = (size_t) sprintf(buf, "v,text\n1,a\n2,");
    memset(buf + n, 'y', CSVREAD_MAX_LINE + 10);
    n += CSVREAD_MAX_LINE + 10;
    write_bytes("long.csv", buf, n, path, sizeof path);
    s = (seen) { 0 };
    cr_assert_eq(csvread_file(path, NULL, row, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "long.csv:3: line longer than 1048576 bytes"), "%s", err);
    free(buf);
}

Test(csvread, column_lookup)
{
    char *names[] = { "t", "p", "t" };
    csvread_row r = { .path = "x.csv", .header = names, .nheader = 3 };
    char err[256];
    cr_assert_eq(csvread_col(&r, "p"), 1);
    cr_assert_eq(csvread_col(&r, "t"), 0, "the first of two");
    cr_assert_eq(csvread_col(&r, "q"), -1);
    cr_assert_eq(csvread_need_col(&r, "q", err, sizeof err), -1);
    cr_assert_str_eq(err, "x.csv: no column 'q' (columns: t, p, t)");
    double v;
    cr_assert_eq(csvread_real("2.5e3", &v), 0);
    cr_assert_eq(v, 2500);
    cr_assert_eq(csvread_real("", &v), -1);
    cr_assert_eq(csvread_real("1x", &v), -1);
    cr_assert_eq(csvread_real("1e999", &v), -1);
}

static int ccsv_count(void *ctx, const ccsv_row *r, char *err, size_t errlen)
{
    (void) r;
    (void) err;
    (void) errlen;
    (*(int *) ctx)++;
    return 0;
}

/* The same bad file gives the same message to the trace loader, csv_read_column
 * and the calibration reader: one reader behind all three. */
Test(csvread, one_reader_behind_traces_columns_and_calibration)
{
    static const char nul[] = "t,p\n0,1\n1,2\0" "3\n";
    const char *files[][2] = { { "short.csv", "t,p\n0,1\n1\n" }, { "nul.csv", NULL } };
    for (int f = 0; f < 2; f++) {
        char path[128], e1[256], e2[256], e3[256];
        if (files[f][1]) write_bytes(files[f][0], files[f][1], strlen(files[f][1]), path, sizeof path);
        else write_bytes(files[f][0], nul, sizeof nul - 1, path, sizeof path);
        trace t;
        trace_opts o = { .path = path, .time_column = "t", .format = TRACE_SECONDS, .prompt_column = "p" };
        cr_assert_eq(trace_load(&t, &o, e1, sizeof e1), -1);
        double *v;
        size_t n;
        cr_assert_eq(csv_read_column(path, "p", &v, &n, e2, sizeof e2), -1);
        int rows = 0;
        cr_assert_eq(ccsv_read(path, ccsv_count, &rows, e3, sizeof e3), -1);
        cr_assert_eq(rows, 1, "the good row was read first");
        cr_assert_str_eq(e1, e2);
        cr_assert_str_eq(e1, e3);
        cr_assert(strstr(e1, f ? ":3: column p: a NUL byte" : ":3: 1 field, but the header has 2 columns"), "%s", e1);
    }
    /* and a good file reads the same through both numeric paths */
    char path[128], err[256];
    write_bytes("ok.csv", "t,p\n0,5\n1.5,7\n", 14, path, sizeof path);
    trace t;
    trace_opts o = { .path = path, .time_column = "t", .format = TRACE_SECONDS, .prompt_column = "p" };
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), 0, "%s", err);
    double *v;
    size_t n;
    cr_assert_eq(csv_read_column(path, "p", &v, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, t.n);
    for (size_t i = 0; i < n; i++) cr_assert_eq(v[i], (double) t.prompt[i]);
    cr_assert_eq(t.t[1], 1.5);
    free(v);
    trace_free(&t);
}
