/* test_cliopt.c -- Criterion tests of the command line as every command's
 * option table makes it (cli/cliopt.[ch]): each command's --help lists exactly
 * the options the command accepts (found by running it: every option some
 * command's help lists is tried on every command), an unknown option, an
 * abbreviation, a flag given a value and a missing value are one line and exit
 * 2, --set is taken before and after the scenario file, and `check --set`
 * overrides every scenario checked (its verdict changes).  Each case runs the
 * program in its own temporary directory (tests/tcli.h).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_cliopt_", "runs.db"); }

TestSuite(cliopt_help, .init = setup, .fini = tcli_teardown);
TestSuite(cliopt_errors, .init = setup, .fini = tcli_teardown);
TestSuite(cliopt_set, .init = setup, .fini = tcli_teardown);

/* Every command, as typed (a calib command is two words). */
static const char *const COMMANDS[][2] = {
    { "run", NULL }, { "runs", NULL }, { "show", NULL }, { "catalog", NULL }, { "keys", NULL },
    { "bench", NULL }, { "cost", NULL }, { "echo", NULL }, { "sweep", NULL }, { "plan", NULL },
    { "check", NULL }, { "baseline", NULL }, { "compare", NULL }, { "plot", NULL },
    { "calib", "list" }, { "calib", "show" }, { "calib", "import" }, { "calib", "fit" },
    { "calib", "export" }, { "calib", "cpu" }, { "calib", "gpu" }, { "calib", "net" },
};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

#define MAX_OPTS 64

/* An option as a command's help shows it. */
typedef struct hopt {
    char name[40];            /* without "--" */
    int value;                /* 1: the synopsis shows a value ("[--seed N]") */
} hopt;

/* The options of one command's help. */
typedef struct help {
    char cmd[32];             /* "run", "calib import" */
    hopt syn[MAX_OPTS];       /* in its synopsis (the usage lines) */
    int nsyn;
    char listed[MAX_OPTS][40];/* in its list of options ("  --seed N   ...") */
    int nlisted;
} help;

/* Runs COMMAND (one or two words) with the NULL-terminated further arguments. */
static result run_cmd(const char *const cmd[2], ...)
{
    char *args[16];
    int n = 0;
    args[n++] = (char *) cmd[0];
    if (cmd[1]) args[n++] = (char *) cmd[1];
    va_list ap;
    va_start(ap, cmd);
    for (char *a; n < 15 && (a = va_arg(ap, char *)) != NULL;) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return run_argv(30, args);
}

/* Reads an option name at P (just after "--") into NAME; returns its length. */
static size_t opt_name(const char *p, char *name, size_t n)
{
    size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-");
    snprintf(name, n, "%.*s", (int) k, p);
    return k;
}

/* Parses the --help output TEXT of command CMD into H: the synopsis runs from
 * "usage:" to the first empty line; the options list follows "options:". */
static void parse_help(const char *cmd, const char *text, help *h)
{
    memset(h, 0, sizeof *h);
    snprintf(h->cmd, sizeof h->cmd, "%s", cmd);
    const char *end = strstr(text, "\n\n");
    cr_assert(strncmp(text, "usage: latsim ", 14) == 0 && end, "%s --help: no synopsis: %s", cmd, text);
    for (const char *p = strstr(text, "--"); p && p < end; p = strstr(p, "--")) {
        hopt *o = &h->syn[h->nsyn];
        size_t k = opt_name(p + 2, o->name, sizeof o->name);
        /* "[--seed N]", "--vary SPEC [...]": a value; "[--json]", "--x [...]": a flag. */
        o->value = p[2 + k] == ' ' && p[3 + k] != '[' && p[3 + k] != '-' && p[3 + k] != '\n';
        if (k && strcmp(o->name, "help") && h->nsyn < MAX_OPTS - 1) h->nsyn++;
        p += 2 + k;
    }
    const char *list = strstr(text, "\noptions:\n");
    cr_assert_not_null(list, "%s --help: no options list", cmd);
    for (const char *p = list + 10; *p == ' '; p = strchr(p, '\n') + 1) {
        /* "  --seed N   help"; continuation lines are indented further. */
        if (!strncmp(p, "  --", 4) && h->nlisted < MAX_OPTS) opt_name(p + 4, h->listed[h->nlisted++], sizeof h->listed[0]);
        if (!strchr(p, '\n')) break;
    }
}

static int in_syn(const help *h, const char *name)
{
    for (int i = 0; i < h->nsyn; i++) if (!strcmp(h->syn[i].name, name)) return 1;
    return 0;
}

static int in_list(const help *h, const char *name)
{
    for (int i = 0; i < h->nlisted; i++) if (!strcmp(h->listed[i], name)) return 1;
    return 0;
}

/* Every command's help, parsed into HS (NCOMMANDS of them). */
static void all_helps(help *hs)
{
    for (size_t c = 0; c < NCOMMANDS; c++) {
        char cmd[32];
        snprintf(cmd, sizeof cmd, "%s%s%s", COMMANDS[c][0], COMMANDS[c][1] ? " " : "", COMMANDS[c][1] ? COMMANDS[c][1] : "");
        result r = run_cmd(COMMANDS[c], "--help", NULL);
        cr_assert_eq(r.rc, 0, "%s --help: exit %d: %s", cmd, r.rc, r.err);
        cr_expect_eq(r.err[0], '\0', "%s --help wrote to stderr: %s", cmd, r.err);
        char want[48];
        snprintf(want, sizeof want, "usage: latsim %s", cmd);
        cr_expect(strncmp(r.out, want, strlen(want)) == 0, "%s --help begins '%.60s'", cmd, r.out);
        parse_help(cmd, r.out, &hs[c]);
        result_free(&r);
    }
}

/* The synopsis and the list of options of each command's help name the same options. */
Test(cliopt_help, synopsis_and_list_agree)
{
    static help hs[NCOMMANDS];
    all_helps(hs);
    for (size_t c = 0; c < NCOMMANDS; c++) {
        const help *h = &hs[c];
        for (int i = 0; i < h->nsyn; i++)
            cr_expect(in_list(h, h->syn[i].name), "%s --help: --%s is in the synopsis, not in the options list", h->cmd, h->syn[i].name);
        for (int i = 0; i < h->nlisted; i++)
            cr_expect(in_syn(h, h->listed[i]), "%s --help: --%s is in the options list, not in the synopsis", h->cmd, h->listed[i]);
    }
    /* A few that are known: the shared options where they belong. */
    cr_expect(in_syn(&hs[0], "set") && in_syn(&hs[0], "db") && in_syn(&hs[0], "json") && in_syn(&hs[0], "seed"), "run");
    cr_expect(in_syn(&hs[10], "set") && in_syn(&hs[10], "junit") && !in_syn(&hs[10], "json"), "check");
    cr_expect(hs[4].nsyn == 1 && in_syn(&hs[4], "markdown"), "keys takes --markdown only");
}

/* What a command accepts is what its help lists: each option some help lists
 * is given to every command, followed by an option no command has.  A listed
 * one is taken (the error is then about the other option, or the value); one
 * not listed is refused as unknown. */
Test(cliopt_help, help_lists_every_option_accepted)
{
    static help hs[NCOMMANDS];
    all_helps(hs);
    hopt all[4 * MAX_OPTS];
    int nall = 0;
    for (size_t c = 0; c < NCOMMANDS; c++)
        for (int i = 0; i < hs[c].nsyn; i++) {
            int seen = 0;
            for (int k = 0; k < nall; k++) seen |= !strcmp(all[k].name, hs[c].syn[i].name);
            if (!seen && nall < 4 * MAX_OPTS) all[nall++] = hs[c].syn[i];
        }
    cr_assert_gt(nall, 30, "only %d distinct options in all the helps", nall);
    for (size_t c = 0; c < NCOMMANDS; c++) {
        const help *h = &hs[c];
        for (int k = 0; k < nall; k++) {
            char opt[48], unknown[200];
            snprintf(opt, sizeof opt, "--%s", all[k].name);
            int listed = -1;
            for (int i = 0; i < h->nsyn; i++) if (!strcmp(h->syn[i].name, all[k].name)) listed = i;
            if (listed >= 0) {
                /* The value as the command's own synopsis shows it. */
                result r = h->syn[listed].value ? run_cmd(COMMANDS[c], opt, "1", "--zz-no-such-option", NULL)
                                                : run_cmd(COMMANDS[c], opt, "--zz-no-such-option", NULL);
                snprintf(unknown, sizeof unknown, "unknown option '%s'", opt);
                cr_expect_eq(r.rc, 2, "%s %s: exit %d: %s", h->cmd, opt, r.rc, r.err);
                cr_expect_eq(lines(r.err), 1, "%s %s: %s", h->cmd, opt, r.err);
                cr_expect(!strstr(r.err, unknown) && !strstr(r.err, "needs a value") && !strstr(r.err, "takes no value"),
                          "%s --help lists %s, but: %s", h->cmd, opt, r.err);
                result_free(&r);
            } else {
                result r = run_cmd(COMMANDS[c], opt, "1", NULL);
                snprintf(unknown, sizeof unknown, "latsim: %s: unknown option '%s' (see latsim %s --help)\n", h->cmd, opt, h->cmd);
                cr_expect_eq(r.rc, 2, "%s %s: exit %d: %s", h->cmd, opt, r.rc, r.err);
                cr_expect_str_eq(r.err, unknown, "%s %s is not in its --help, yet: %s", h->cmd, opt, r.err);
                result_free(&r);
            }
        }
    }
}

/* Each command named in latsim --help has its own help, and latsim calib
 * --help names every calib command's synopsis. */
Test(cliopt_help, every_command_listed_has_its_help)
{
    result r = run(30, "--help", NULL);
    cr_assert_eq(r.rc, 0);
    const char *p = strstr(r.out, "commands");
    cr_assert_not_null(p);
    int n = 0;
    for (p = strchr(p, '\n') + 1; !strncmp(p, "  ", 2); p = strchr(p, '\n') + 1) {
        char name[32];
        if (p[2] != ' ' && opt_name(p + 2, name, sizeof name) > 0) {
            result h = run(30, name, "--help", NULL);
            char want[48];
            snprintf(want, sizeof want, "usage: latsim %s", name);
            cr_expect_eq(h.rc, 0, "%s --help: exit %d", name, h.rc);
            cr_expect(strncmp(h.out, want, strlen(want)) == 0, "%s --help begins '%.40s'", name, h.out);
            result_free(&h);
            n++;
        }
        if (!strchr(p, '\n')) break;
    }
    cr_expect_geq(n, 15, "latsim --help lists %d commands", n);
    result_free(&r);
    r = run(30, "calib", "--help", NULL);
    cr_assert_eq(r.rc, 0);
    for (size_t c = 0; c < NCOMMANDS; c++) {
        if (!COMMANDS[c][1]) continue;
        char want[48];
        snprintf(want, sizeof want, "  latsim calib %s", COMMANDS[c][1]);
        cr_expect(strstr(r.out, want) != NULL, "calib --help lacks '%s'", want);
    }
    result_free(&r);
}

/* ---- errors -------------------------------------------------------------------- */

/* RC, and stderr exactly the line "latsim: WANT\n". */
static void expect_line(const result *r, int rc, const char *want)
{
    char line[512];
    snprintf(line, sizeof line, "latsim: %s\n", want);
    cr_expect_eq(r->rc, rc, "exit %d, wanted %d: %s", r->rc, rc, r->err);
    cr_expect_str_eq(r->err, line);
    cr_expect_eq(r->out[0], '\0', "printed: %s", r->out);
}

Test(cliopt_errors, unknown_option_missing_value_one_line_exit_2)
{
    static const char *const cmds[][2] = { { "run", NULL }, { "sweep", NULL }, { "plan", NULL }, { "check", NULL },
                                           { "compare", NULL }, { "plot", NULL }, { "runs", NULL }, { "cost", NULL },
                                           { "calib", "fit" }, { "baseline", NULL } };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char name[32], want[200];
        snprintf(name, sizeof name, "%s%s%s", cmds[i][0], cmds[i][1] ? " " : "", cmds[i][1] ? cmds[i][1] : "");
        result r = run_cmd(cmds[i], "--frobnicate", NULL);
        snprintf(want, sizeof want, "%s: unknown option '--frobnicate' (see latsim %s --help)", name, name);
        expect_line(&r, 2, want);
        result_free(&r);
        /* baseline takes a word such as -1 as its RUN argument (refused as an ID). */
        if (strcmp(name, "baseline")) {
            r = run_cmd(cmds[i], "-q", NULL);
            snprintf(want, sizeof want, "%s: unknown option '-q' (see latsim %s --help)", name, name);
            expect_line(&r, 2, want);
            result_free(&r);
        }
        /* --db as the last word: its value is missing. */
        r = run_cmd(cmds[i], "--db", NULL);
        snprintf(want, sizeof want, "%s: --db needs a value (see latsim %s --help)", name, name);
        expect_line(&r, 2, want);
        result_free(&r);
    }
    cr_expect_neq(access(db, F_OK), 0, "a database was created");
}

/* getopt_long takes an unambiguous abbreviation and --name=value: the first is
 * refused (an option is typed in full), the second taken; a flag given a
 * value is refused. */
Test(cliopt_errors, abbreviations_refused_equals_taken)
{
    char s[256];
    write_file("s.ini", "[sim]\nrequests = 300\nwarmup = 0\n[workload]\nrate = 5\n[pool cpu]\nservers = 1\n"
               "service_ms = exp(mean=50)\n", s, sizeof s);
    result r = run(30, "run", s, "--jso", "--no-store", NULL);
    expect_line(&r, 2, "run: unknown option '--jso' (see latsim run --help)");
    result_free(&r);
    r = run(30, "run", s, "--repl", "2", "--no-store", NULL);
    expect_line(&r, 2, "run: unknown option '--repl' (see latsim run --help)");
    result_free(&r);
    r = run(30, "run", s, "--json=yes", "--no-store", NULL);
    expect_line(&r, 2, "run: --json takes no value, got '--json=yes' (see latsim run --help)");
    result_free(&r);
    /* plan has --seed and --seeds: --seed is not an abbreviation of --seeds. */
    r = run(30, "plan", s, "--seed", "x", NULL);
    expect_line(&r, 2, "plan: --seed: expected a whole number from 1 to 2147483647, got 'x'");
    result_free(&r);
    r = run(30, "run", s, "--seed=7", "--json", "--no-store", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"seed\": 7,") != NULL, "--seed=7 not taken: %.200s", r.out);
    result_free(&r);
    /* After "--" every word is an argument: a second scenario file. */
    r = run(30, "run", "--no-store", "--", s, "--json", NULL);
    char want[600];
    snprintf(want, sizeof want, "run: more than one scenario file ('%s', '--json')", s);
    expect_line(&r, 2, want);
    result_free(&r);
    /* Required options are named when missing. */
    r = run(30, "sweep", s, NULL);
    expect_line(&r, 2, "sweep: missing --vary SECTION.KEY=FROM:TO:STEP|a,b,c (see latsim sweep --help)");
    result_free(&r);
    cr_expect_neq(access(db, F_OK), 0, "a database was created");
}

/* ---- --set ---------------------------------------------------------------------- */

/* One server at 50 ms a request; rate 5 req/s (utilisation 0.25) meets the
 * SLO, as its check does at the 1.2 headroom. */
static const char *SCENARIO =
    "[sim]\nrequests = 3000\nwarmup = 300\n"
    "[workload]\nrate = 5\n"
    "[pool cpu]\nservers = 1\nservice_ms = exp(mean=50)\n"
    "[slo]\ne2e_p99_ms = 1000\nheadroom = 1.2\n";

/* --set is taken before and after the scenario file alike (options may follow
 * the arguments), by run and by sweep. */
Test(cliopt_set, set_before_and_after_the_file)
{
    char s[256];
    write_file("s.ini", SCENARIO, s, sizeof s);
    result a = run(60, "run", "--set", "sim.requests=700", s, "--json", "--no-store", NULL);
    result b = run(60, "run", s, "--json", "--no-store", "--set", "sim.requests=700", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect(strstr(a.out, "\"requests\": 700,") != NULL, "--set before FILE not applied: %.300s", a.out);
    cr_expect(strstr(b.out, "\"requests\": 700,") != NULL, "--set after FILE not applied: %.300s", b.out);
    result_free(&a);
    result_free(&b);
    a = run(60, "sweep", "--set", "sim.requests=500", s, "--vary", "workload.rate=2,4", "--json", "--no-store", NULL);
    b = run(60, "sweep", s, "--vary", "workload.rate=2,4", "--json", "--no-store", "--set", "sim.requests=500", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect_str_eq(a.out, b.out);
    result_free(&a);
    result_free(&b);
}

/* check --set overrides every scenario checked: the scenario passes as
 * written, fails when --set overloads its pool (saturated), and fails when
 * --set tightens its [slo]; --set before or after the files is the same. */
Test(cliopt_set, check_set_changes_the_verdict)
{
    char s[256], t[256];
    write_file("s.ini", SCENARIO, s, sizeof s);
    write_file("t.ini", SCENARIO, t, sizeof t);
    result r = run_db(120, "check", s, t, "--no-store", NULL);
    cr_expect_eq(r.rc, 0, "as written: exit %d: %s%s", r.rc, r.out, r.err);
    cr_expect(strstr(r.out, "FAIL") == NULL, "%s", r.out);
    result_free(&r);
    /* 30 req/s x 1.2 on one 50 ms server: utilisation 1.8. */
    r = run_db(120, "check", s, t, "--no-store", "--set", "workload.rate=30", NULL);
    cr_expect_eq(r.rc, 1, "overloaded: exit %d: %s%s", r.rc, r.out, r.err);
    cr_expect(strstr(r.out, "saturated at 36 req/s (rate x headroom)") != NULL, "%s", r.out);
    int fails = 0;
    for (const char *p = r.out; (p = strstr(p, " FAIL\n")); p++) fails++;
    cr_expect_eq(fails, 2, "both scenarios fail: %s", r.out);
    result_free(&r);
    r = run_db(120, "check", "--set", "slo.e2e_p99_ms=1", s, "--no-store", NULL);
    cr_expect_eq(r.rc, 1, "tight SLO: exit %d: %s%s", r.rc, r.out, r.err);
    cr_expect(strstr(r.out, "slo e2e_p99_ms <= 1:") != NULL, "the [slo] was not overridden: %s", r.out);
    result_free(&r);
    /* A bad --set is bad input, one line naming it, nothing stored. */
    r = run_db(120, "check", s, "--set", "pool cpu.sevrers=2", NULL);
    cr_expect_eq(r.rc, 2, "exit %d: %s", r.rc, r.err);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "--set") && strstr(r.err, "sevrers"), "%s", r.err);
    result_free(&r);
    cr_expect_neq(access(db, F_OK), 0, "a database was created");
    /* Stored, the run records the override. */
    r = run_db(120, "check", s, "--set", "workload.rate=4", NULL);
    cr_expect_eq(r.rc, 0, "exit %d: %s%s", r.rc, r.out, r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM run_config WHERE section = 'workload' AND key = 'rate' AND value = '4.8'"), 1,
                 "the stored run does not hold the rate 4 x 1.2");
}
