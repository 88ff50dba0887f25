/* test_trace.c -- tests of sim/workload/trace.c: loading arrival traces and numeric CSV
 * columns with libcsv, and the error messages for bad files.
 *
 * Real data: tests/data/ holds the first 300 requests of the Azure LLM inference
 * traces (2023, conversation and code; CC-BY-4.0, licence beside them) and the
 * first 1000 rows of ShareGPT length statistics (Apache-2.0).  The expected sums
 * and times below were computed from those files with Python's csv and datetime.
 * Bad files are written by the tests into unique temporary files.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload/trace.h"
#include "core/csvread.h"

#define CONV "tests/data/AzureLLMInferenceTrace_conv.csv"
#define CODE "tests/data/AzureLLMInferenceTrace_code.csv"
#define SHAREGPT "tests/data/sharegpt_lengths.csv"

/* Writes TEXT to a new temporary file and puts its name in PATH (>= 64 bytes). */
static void write_temp(char *path, const char *text)
{
    strcpy(path, "/tmp/latsim_test_trace_XXXXXX.csv");
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0, "mkstemps failed");
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Loads TEXT as a trace with time column "t" in FORMAT and token column "p" when
 * WITH_P.  Returns trace_load's result; ERR gets the message with PATH's name. */
static int load_text(const char *text, trace_time_format format, int with_p, trace *t,
                     char *path, char *err, size_t errlen)
{
    write_temp(path, text);
    trace_opts o = {.path = path, .time_column = "t", .format = format, .prompt_column = with_p ? "p" : NULL, .output_column = NULL};
    int rc = trace_load(t, &o, err, errlen);
    unlink(path);
    return rc;
}

/* Asserts that ERR starts with "PATH:LINE: " and contains WANT. */
static void assert_error_at(const char *err, const char *path, int line, const char *want)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
    cr_assert(strncmp(err, prefix, strlen(prefix)) == 0, "\"%s\" should start with \"%s\"", err, prefix);
    cr_assert_not_null(strstr(err, want), "\"%s\" should contain \"%s\"", err, want);
}

Test(trace, azure_conv_slice)
{
    trace t;
    char err[256];
    trace_opts o = {.path = CONV, .time_column = "TIMESTAMP", .format = TRACE_DATETIME, .prompt_column = "ContextTokens", .output_column = "GeneratedTokens"};
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, 300);
    cr_assert_eq(t.t[0], 0);
    long sp = 0, so = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (i > 0)
            cr_assert_geq(t.t[i], t.t[i - 1], "row %zu goes back in time", i);
        sp += t.prompt[i];
        so += t.output[i];
    }
    cr_assert_eq(sp, 270000);   /* mean ContextTokens 900 */
    cr_assert_eq(so, 76870);
    cr_assert_eq(t.prompt[0], 374);
    cr_assert_eq(t.output[0], 44);
    /* 18:15:50.9951690 - 18:15:46.6805900 and 18:17:10.7096920 - 18:15:46.6805900 */
    cr_assert_float_eq(t.t[1], 4.314579, 1e-9);
    cr_assert_float_eq(t.t[299], 84.029102, 1e-9);
    trace_free(&t);
    cr_assert_null(t.t);
    cr_assert_eq(t.n, 0);
}

Test(trace, azure_code_slice_time_only)
{
    trace t;
    char err[256];
    trace_opts o = {.path = CODE, .time_column = "TIMESTAMP", .format = TRACE_DATETIME, .prompt_column = NULL, .output_column = NULL};
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, 300);
    cr_assert_null(t.prompt);
    cr_assert_null(t.output);
    cr_assert_eq(t.t[0], 0);
    cr_assert_float_eq(t.t[299], 216.838239, 1e-9);   /* 18:20:40.8181990 - 18:17:03.9799600 */
    trace_free(&t);

    o.prompt_column = "ContextTokens";
    o.output_column = "GeneratedTokens";
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), 0, "%s", err);
    long sp = 0, so = 0;
    for (size_t i = 0; i < t.n; i++) {
        sp += t.prompt[i];
        so += t.output[i];
    }
    cr_assert_eq(sp, 627529);
    cr_assert_eq(so, 7126);
    trace_free(&t);
}

/* Datetimes keep sub-microsecond differences across a year boundary: the whole
 * seconds are subtracted as integers before the fraction is added. */
Test(trace, datetime_precision)
{
    trace t;
    char path[64], err[256];
    const char *text = "t\n"
                       "2023-12-31 23:59:59.9999999\n"
                       "2024-01-01 00:00:00.0000001\n"
                       "2024-01-01T00:00:00.123456789012Z\n"
                       "2024-03-01 00:00:00\n";
    cr_assert_eq(load_text(text, TRACE_DATETIME, 0, &t, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, 4);
    cr_assert_eq(t.t[0], 0);
    cr_assert_float_eq(t.t[1], 2e-7, 1e-15);
    cr_assert_float_eq(t.t[2], 0.123456789012 + 1e-7, 1e-15);
    /* 2024 is a leap year: Jan 31 + Feb 29 days after midnight of Jan 1. */
    cr_assert_float_eq(t.t[3], 60 * 86400.0 + 1e-7, 1e-9);
    trace_free(&t);
}

Test(trace, seconds_milliseconds_and_crlf)
{
    trace t;
    char path[64], err[256];
    cr_assert_eq(load_text("t,p\r\n100.5,10\r\n101,20\r\n101,0\r\n", TRACE_SECONDS, 1, &t, path, err,
                           sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.t[0], 0);
    cr_assert_eq(t.t[1], 0.5);
    cr_assert_eq(t.t[2], 0.5);   /* equal times are allowed */
    cr_assert_eq(t.prompt[1], 20);
    cr_assert_eq(t.prompt[2], 0);
    trace_free(&t);
    /* Quoted fields, spaces around fields, no final newline. */
    cr_assert_eq(load_text("x, \"t\"\n1, 1000\n2, \"1500\"", TRACE_MILLISECONDS, 0, &t, path, err,
                           sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, 2);
    cr_assert_eq(t.t[1], 0.5);
    trace_free(&t);
}

Test(trace, errors_name_file_and_line)
{
    trace t;
    char path[64], err[256];
    cr_assert_eq(load_text("t,p\n1,5\n2,abc\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 3, "p 'abc' is not a whole number");
    cr_assert_null(t.t);
    cr_assert_eq(t.n, 0);

    cr_assert_eq(load_text("t,p\n1,5\n\n2x,6\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 4, "t '2x' is not a number");   /* the blank line still counts */

    cr_assert_eq(load_text("t\n1\n3\n2\n", TRACE_SECONDS, 0, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 4, "time goes backwards");

    cr_assert_eq(load_text("t,p\n1,2\n2\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 3, "1 field, but the header has 2 columns");

    cr_assert_eq(load_text("t,p\n1,2\n2,3,4\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 3, "3 fields");

    cr_assert_eq(load_text("t,p\n1,-5\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 2, "p -5 is negative");

    cr_assert_eq(load_text("t,p\n1,2.5\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 2, "not a whole number");

    cr_assert_eq(load_text("t,p\n1,99999999999\n", TRACE_SECONDS, 1, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 2, "too large");

    cr_assert_eq(load_text("t\n2023-11-16 18:15:46\n2023-13-16 18:15:47\n", TRACE_DATETIME, 0, &t, path,
                           err, sizeof err), -1);
    assert_error_at(err, path, 3, "is not a datetime");

    cr_assert_eq(load_text("t\n2023-02-30 00:00:00\n", TRACE_DATETIME, 0, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 2, "is not a datetime");

    cr_assert_eq(load_text("t\n1.5\n", TRACE_DATETIME, 0, &t, path, err, sizeof err), -1);
    assert_error_at(err, path, 2, "is not a datetime");
}

Test(trace, adapter_column)
{
    /* tests/data/lora_adapters.csv: adapters 1, 1, 2, (empty), 0, 2; the largest
     * first named on line 4.  The JSON-lines twin has null for the empty one. */
    const char *files[] = { "tests/data/lora_adapters.csv", "tests/data/lora_adapters.jsonl" };
    for (int i = 0; i < 2; i++) {
        trace t;
        char err[512], want[128];
        trace_opts o = {.path = files[i], .time_column = "t", .format = TRACE_SECONDS, .adapter_column = "adapter",
                        .jsonl = i};
        cr_assert_eq(trace_load(&t, &o, err, sizeof err), 0, "%s", err);
        cr_assert_eq(t.n, 6);
        cr_assert_not_null(t.adapter);
        const int32_t a[] = { 1, 1, 2, -1, 0, 2 };
        for (int k = 0; k < 6; k++) cr_expect_eq(t.adapter[k], a[k], "%s row %d: %d", files[i], k, t.adapter[k]);
        cr_expect_eq(t.adapter_max, 2);
        snprintf(want, sizeof want, "%s:%d: column 'adapter'", files[i], i ? 3 : 4);
        cr_expect_str_eq(t.adapter_at, want);
        trace_free(&t);
    }
    trace t;
    char path[64], err[256];
    write_temp(path, "t,a\n1,2\n2,b3\n");
    trace_opts o = {.path = path, .time_column = "t", .format = TRACE_SECONDS, .adapter_column = "a"};
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), -1);
    assert_error_at(err, path, 3, "column 'a': 'b3' is not an adapter number");
    unlink(path);
    write_temp(path, "t,a\n1,-1\n");
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), -1);
    assert_error_at(err, path, 2, "'-1' is not an adapter number");
    unlink(path);
}

Test(trace, file_level_errors)
{
    trace t;
    char path[64], err[512], want[256];
    cr_assert_eq(load_text("a,b,c\n1,2,3\n", TRACE_SECONDS, 0, &t, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: no column 't' (columns: a, b, c)", path);
    cr_assert_str_eq(err, want);

    cr_assert_eq(load_text("t\n", TRACE_SECONDS, 0, &t, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: no data rows", path);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);

    cr_assert_eq(load_text("", TRACE_SECONDS, 0, &t, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: empty file", path);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);

    trace_opts o = {.path = "tests/data/no_such_trace.csv", .time_column = "t", .format = TRACE_SECONDS, .prompt_column = NULL, .output_column = NULL};
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), -1);
    cr_assert_str_eq(err, "tests/data/no_such_trace.csv: cannot open: No such file or directory");
    cr_assert_null(t.t);

    o.path = "tests/data";   /* a directory opens but cannot be read */
    cr_assert_eq(trace_load(&t, &o, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "tests/data: "), "%s", err);

    /* The Azure header, asked for a column it lacks. */
    trace_opts a = {.path = CONV, .time_column = "timestamp", .format = TRACE_DATETIME, .prompt_column = NULL, .output_column = NULL};
    cr_assert_eq(trace_load(&t, &a, err, sizeof err), -1);
    cr_assert_str_eq(err, CONV ": no column 'timestamp' (columns: TIMESTAMP, ContextTokens, "
                     "GeneratedTokens)");
}

Test(trace, format_names)
{
    trace_time_format f;
    cr_assert_eq(trace_format_parse("seconds", &f), 0);
    cr_assert_eq(f, TRACE_SECONDS);
    cr_assert_eq(trace_format_parse("milliseconds", &f), 0);
    cr_assert_eq(f, TRACE_MILLISECONDS);
    cr_assert_eq(trace_format_parse("datetime", &f), 0);
    cr_assert_eq(f, TRACE_DATETIME);
    cr_assert_eq(trace_format_parse("ms", &f), -1);
    cr_assert_eq(trace_format_parse("", &f), -1);
    cr_assert_eq(trace_format_parse(NULL, &f), -1);
}

Test(csv_column, sharegpt_lengths)
{
    double *v;
    size_t n;
    char err[256];
    cr_assert_eq(csv_read_column(SHAREGPT, "num_prefill_tokens", &v, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 1000);
    double sum = 0, max = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        max = v[i] > max ? v[i] : max;
    }
    cr_assert_eq(sum, 2388078);
    cr_assert_eq(max, 8014);
    cr_assert_eq(v[0], 74);
    free(v);
    cr_assert_eq(csv_read_column(SHAREGPT, "pd_ratio", &v, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 1000);
    cr_assert_float_eq(v[0], 0.0806100217864923, 1e-16);
    free(v);
}

Test(csv_column, errors)
{
    double *v;
    size_t n;
    char path[64], err[256];
    write_temp(path, "a,b\n1,2\n3,-4\n");
    cr_assert_eq(csv_read_column(path, "b", &v, &n, err, sizeof err), -1);
    assert_error_at(err, path, 3, "b -4 is negative");
    cr_assert_null(v);
    cr_assert_eq(n, 0);
    cr_assert_eq(csv_read_column(path, "a", &v, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 2);
    free(v);
    unlink(path);

    write_temp(path, "a\n1\nnan\n");
    cr_assert_eq(csv_read_column(path, "a", &v, &n, err, sizeof err), -1);
    assert_error_at(err, path, 3, "a 'nan' is not a number");
    unlink(path);

    write_temp(path, "a\n1\n\"\"\n");
    cr_assert_eq(csv_read_column(path, "a", &v, &n, err, sizeof err), -1);
    assert_error_at(err, path, 3, "a '' is not a number");
    unlink(path);

    cr_assert_eq(csv_read_column(SHAREGPT, "tokens", &v, &n, err, sizeof err), -1);
    cr_assert_str_eq(err, SHAREGPT ": no column 'tokens' (columns: num_prefill_tokens, "
                     "num_decode_tokens, num_total_tokens, pd_ratio)");
}
