/* test_docs.c -- the documents cannot drift from the program and the tree:
 * docs/scenarios.md is exactly `latsim keys --markdown`, the Layout table of
 * docs/architecture.md lists every source file of sim/X/, calib/ and cli/ (and
 * nothing else) with the text tests/layout.sh makes of its first comment, README.md's map names every source folder, every relative
 * link of README.md and docs/ pages reaches an existing file (and heading),
 * every path of the tree those pages name exists, every section a source
 * comment cites (`docs/x.md, "Heading"`) is a heading of that page, and no
 * test logs a warning (Criterion 2.4 exits 1 then: skip with a reason instead).
 *
 * Run from the repository root, as `make test` does. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_docs_", NULL); }
static void teardown(void) { tcli_teardown(); }

/* A growing list of strings (paths, keys, anchors). */
typedef struct strs {
    char **v;     /* the strings, malloc'd */
    int n;        /* how many */
    int cap;      /* room in v */
} strs;

static void strs_add(strs *s, const char *p, size_t len)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = realloc(s->v, (size_t) s->cap * sizeof *s->v);
        cr_assert_not_null(s->v);
    }
    s->v[s->n] = strndup(p, len);
    cr_assert_not_null(s->v[s->n]);
    s->n++;
}

static int strs_has(const strs *s, const char *p)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], p)) return 1;
    return 0;
}

static void strs_free(strs *s)
{
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* 1 when PATH is a directory, 0 when it is something else, -1 when it does not exist. */
static int is_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return S_ISDIR(st.st_mode) ? 1 : 0;
}

/* ---- docs/scenarios.md ----------------------------------------------------------- */

/* The number of the first line at which A and B differ (1-based). */
static int first_diff_line(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++)
        if (*a == '\n') line++;
    return line;
}

Test(docs, scenarios_md_is_latsim_keys_markdown, .init = setup, .fini = teardown)
{
    result r = run(30, "keys", "--markdown", NULL);
    cr_assert_eq(r.rc, 0, "latsim keys --markdown: exit %d: %s", r.rc, r.err);
    size_t n = 0;
    char *page = slurp_or_fail("docs/scenarios.md", &n);
    cr_expect(n == r.nout && memcmp(page, r.out, n) == 0,
              "docs/scenarios.md differs from `latsim keys --markdown` from line %d on: "
              "regenerate it with ./latsim keys --markdown > docs/scenarios.md",
              first_diff_line(page, r.out));
    free(page);
    result_free(&r);
}

/* Every key of every section of the plain list is a row of the Markdown page,
 * the sections match one for one, and the plain list has no Markdown in it. */
Test(docs, markdown_holds_every_key_of_the_plain_list, .init = setup, .fini = teardown)
{
    result plain = run(30, "keys", NULL), md = run(30, "keys", "--markdown", NULL);
    cr_assert_eq(plain.rc, 0);
    cr_assert_eq(md.rc, 0);
    cr_expect(!strncmp(plain.out, "[sim]\n  requests ", 17), "plain list begins '%.30s'", plain.out);
    cr_expect(strstr(plain.out, "| `") == NULL, "the plain list has table rows");
    int sections = 0, keys = 0;
    char *save = NULL;
    for (char *l = strtok_r(plain.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (l[0] != ' ') { sections++; continue; }
        char key[64], row[80];
        cr_assert_eq(sscanf(l, " %63s", key), 1);
        snprintf(row, sizeof row, "\n| `%s` | ", key);
        cr_expect(strstr(md.out, row) != NULL, "key '%s' of `latsim keys` is not a row of `latsim keys --markdown`", key);
        keys++;
    }
    int headings = 0;
    for (const char *p = md.out; (p = strstr(p, "\n## ")); p++) headings++;
    cr_expect_eq(headings, sections, "%d Markdown sections for %d in the list", headings, sections);
    cr_expect_gt(keys, 150, "only %d keys", keys);
    result_free(&plain);
    result_free(&md);
}

Test(docs, keys_takes_only_markdown, .init = setup, .fini = teardown)
{
    static const char *bad[][3] = { { "--markdown", "x", "keys: unexpected argument 'x'" },
                                    { "--md", NULL, "keys: unknown option '--md'" },
                                    { "markdown", NULL, "keys: unexpected argument 'markdown'" } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        result r = run(30, "keys", bad[i][0], bad[i][1], NULL);
        expect_one_line(&r, 2, bad[i][2], "keys");
        result_free(&r);
    }
}

/* ---- the Layout table -------------------------------------------------------------- */

/* The source folders the Layout lists: every folder of sim/, then calib/ and cli/. */
static void source_folders(strs *out)
{
    DIR *d = opendir("sim");
    cr_assert_not_null(d, "cannot open sim/ (run the tests from the repository root)");
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[300];
        snprintf(p, sizeof p, "sim/%s/", e->d_name);
        if (is_dir(p) == 1) strs_add(out, p, strlen(p));
    }
    closedir(d);
    strs_add(out, "calib/", 6);
    strs_add(out, "cli/", 4);
}

/* The files of the FOLDERS (not their subfolders, dot files or *.md). */
static void source_files(const strs *folders, strs *out)
{
    for (int i = 0; i < folders->n; i++) {
        DIR *d = opendir(folders->v[i]);
        cr_assert_not_null(d, "cannot open %s", folders->v[i]);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (e->d_name[0] == '.' || (len > 3 && !strcmp(e->d_name + len - 3, ".md"))) continue;
            char p[600];
            snprintf(p, sizeof p, "%s%s", folders->v[i], e->d_name);
            if (is_dir(p) == 0) strs_add(out, p, strlen(p));
        }
        closedir(d);
    }
}

/* The paths in the first cells of the table rows of TEXT ("| `PATH` | ..."),
 * "X.[ch]" counted as X.c and X.h. */
static void table_paths(const char *text, strs *out)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "| `", 3)) continue;
        const char *p = l + 3, *e = strchr(p, '`');
        const char *nl = strchr(p, '\n');
        if (!e || (nl && e > nl)) continue;
        size_t len = (size_t) (e - p);
        if (len > 5 && !strncmp(e - 5, ".[ch]", 5)) {
            char buf[300];
            snprintf(buf, sizeof buf, "%.*s.c", (int) (len - 5), p);
            strs_add(out, buf, strlen(buf));
            buf[strlen(buf) - 1] = 'h';
            strs_add(out, buf, strlen(buf));
        } else strs_add(out, p, len);
    }
}

/* The text of the section of TEXT that starts with the heading line HEADING
 * ("## Layout"), up to the next heading of that level; NULL when there is none. */
static char *section_of(const char *text, const char *heading)
{
    size_t hl = strlen(heading);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, heading, hl) || (l[hl] != '\n' && l[hl] != ' ')) continue;
        const char *end = l + hl;
        while ((end = strstr(end, "\n## ")) && end[1] == '#' && end[3] == '#') end++;
        return strndup(l, end ? (size_t) (end - l) : strlen(l));
    }
    return NULL;
}

Test(docs, layout_table_lists_every_source_file_and_nothing_else)
{
    char *arch = slurp_or_fail("docs/architecture.md", NULL);
    char *layout = section_of(arch, "## Layout");
    cr_assert_not_null(layout, "docs/architecture.md has no '## Layout' section");
    strs listed = { 0 }, folders = { 0 }, files = { 0 };
    table_paths(layout, &listed);
    source_folders(&folders);
    source_files(&folders, &files);
    cr_assert_gt(files.n, 100, "only %d source files found", files.n);
    for (int i = 0; i < folders.n; i++)
        cr_expect(strs_has(&listed, folders.v[i]), "folder %s is missing from the Layout table of docs/architecture.md "
                  "(add a row: | `%s` | what the layer is for |)", folders.v[i], folders.v[i]);
    for (int i = 0; i < files.n; i++)
        cr_expect(strs_has(&listed, files.v[i]), "source file %s is missing from the Layout table of docs/architecture.md "
                  "(add a row: | `%s` | one line from its opening comment |)", files.v[i], files.v[i]);
    for (int i = 0; i < listed.n; i++) {
        const char *p = listed.v[i];
        if (strncmp(p, "sim/", 4) && strncmp(p, "calib/", 6) && strncmp(p, "cli/", 4)) continue;
        int d = is_dir(p);
        cr_expect(d >= 0, "the Layout table of docs/architecture.md lists %s, which does not exist", p);
        if (d >= 0) cr_expect_eq(d, p[strlen(p) - 1] == '/', "the Layout table of docs/architecture.md lists %s as a %s",
                                 p, d ? "file, but it is a folder" : "folder, but it is a file");
    }
    strs_free(&listed);
    strs_free(&folders);
    strs_free(&files);
    free(layout);
    free(arch);
}

/* The Layout table's file rows are what tests/layout.sh makes of the sources'
 * first comments: a changed first sentence, a new or removed file shows here
 * (make docs-update rewrites the rows); a mangled table too (a row's text
 * replaced, a row gone). */
Test(docs, layout_table_is_generated_from_first_comments)
{
    FILE *p = popen("tests/layout.sh --check 2>&1", "r");
    cr_assert_not_null(p);
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "rows, as the sources say") != NULL, "%s", out);

    /* The check fails on a copy whose row for rowtab says something else. */
    cr_assert_eq(system("rm -rf /tmp/latsim_layout && mkdir -p /tmp/latsim_layout/docs && "
                        "cp -r sim calib cli include /tmp/latsim_layout/ && "
                        "sed 's/^| `sim\\/engine\\/rowtab.\\[ch\\]` | .*/| `sim\\/engine\\/rowtab.[ch]` | edited by hand |/' "
                        "docs/architecture.md > /tmp/latsim_layout/docs/architecture.md"), 0);
    cr_expect_eq(system("grep -q 'edited by hand' /tmp/latsim_layout/docs/architecture.md"), 0, "the copy has the edited row");
    cr_expect_neq(system("tests/layout.sh --check /tmp/latsim_layout > /dev/null 2>&1"), 0,
                  "a row that is not the file's first comment fails the check");
    cr_expect_eq(system("tests/layout.sh --write /tmp/latsim_layout > /dev/null 2>&1 && "
                        "tests/layout.sh --check /tmp/latsim_layout > /dev/null 2>&1"), 0, "--write makes it pass again");
    cr_expect_eq(system("cmp -s docs/architecture.md /tmp/latsim_layout/docs/architecture.md"), 0,
                 "--write gives back this tree's table");
    system("rm -rf /tmp/latsim_layout");
}

/* README.md's short map names every source folder, and only existing ones. */
Test(docs, readme_map_names_every_source_folder)
{
    char *readme = slurp_or_fail("README.md", NULL);
    strs folders = { 0 }, listed = { 0 };
    source_folders(&folders);
    table_paths(readme, &listed);
    for (int i = 0; i < folders.n; i++)
        cr_expect(strs_has(&listed, folders.v[i]), "folder %s is missing from the map (Layout) table of README.md",
                  folders.v[i]);
    for (int i = 0; i < listed.n; i++) {
        const char *p = listed.v[i];
        if (strncmp(p, "sim/", 4) && strncmp(p, "calib/", 6) && strncmp(p, "cli/", 4)) continue;
        cr_expect(is_dir(p) == 1, "README.md's map lists %s, which is not a folder of the tree", p);
    }
    strs_free(&folders);
    strs_free(&listed);
    free(readme);
}

/* ---- links -------------------------------------------------------------------------- */

/* GitHub's anchor of a heading's TEXT (LEN bytes): lower case, spaces to '-',
 * letters, digits, '-', '_' and non-ASCII bytes kept, the rest dropped. */
static void anchor_of(const char *text, size_t len, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++) {
        unsigned char c = (unsigned char) text[i];
        if (c == ' ') out[k++] = '-';
        else if (isalnum(c) || c == '-' || c == '_' || c >= 0x80) out[k++] = (char) tolower(c);
    }
    out[k] = 0;
}

/* The anchors of the headings of the Markdown TEXT (outside code fences), with
 * GitHub's "-1", "-2" suffixes for repeated ones. */
static void anchors(const char *text, strs *out)
{
    int fence = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!strncmp(l, "```", 3)) { fence = !fence; continue; }
        if (fence || l[0] != '#') continue;
        const char *t = l;
        while (*t == '#') t++;
        if (*t != ' ') continue;
        t++;
        const char *e = strchr(t, '\n');
        size_t len = e ? (size_t) (e - t) : strlen(t);
        char a[512], b[540];
        anchor_of(t, len, a, sizeof a);
        snprintf(b, sizeof b, "%s", a);
        for (int k = 1; strs_has(out, b); k++) snprintf(b, sizeof b, "%s-%d", a, k);
        strs_add(out, b, strlen(b));
    }
}

/* Checks every relative link "](TARGET)" of the Markdown file PATH outside code
 * (fences and `spans`): its file exists (relative to PATH's folder) and, with
 * "#ANCHOR" into a Markdown file, that file has such a heading.  Each broken link
 * adds a message to PROBLEMS.  Returns the number of links checked. */
static int check_links(const char *path, strs *problems)
{
    char *text = slurp_or_fail(path, NULL);
    char folder[256];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash) slash[1] = 0;
    else folder[0] = 0;
    int fence = 0, checked = 0, lineno = 0;
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        lineno++;
        if (!strncmp(l, "```", 3)) { fence = !fence; continue; }
        if (fence) continue;
        int code = 0;
        for (char *c = l; *c && *c != '\n'; c++) {
            if (*c == '`') code = !code;
            if (code || c[0] != ']' || c[1] != '(') continue;
            char *t = c + 2, *e = strchr(t, ')');
            char *nl = strchr(t, '\n');
            if (!e || (nl && e > nl)) continue;
            char target[512], msg[2600];
            snprintf(target, sizeof target, "%.*s", (int) (e - t), t);
            c = e;
            if (strstr(target, "://") || !strncmp(target, "mailto:", 7)) continue;
            char *hash = strchr(target, '#');
            char anchor[512] = "";
            if (hash) { snprintf(anchor, sizeof anchor, "%s", hash + 1); *hash = 0; }
            char file[800];
            snprintf(file, sizeof file, "%s%s", target[0] ? folder : "", target[0] ? target : path);
            checked++;
            int d = is_dir(file);
            if (d < 0) {
                snprintf(msg, sizeof msg, "%s:%d: the link to '%s' points to %s, which does not exist", path, lineno,
                         target, file);
                strs_add(problems, msg, strlen(msg));
            }
            size_t fl = strlen(file);
            if (d != 0 || !anchor[0] || fl < 3 || strcmp(file + fl - 3, ".md")) continue;
            char *to = slurp_or_fail(file, NULL);
            strs a = { 0 };
            anchors(to, &a);
            if (!strs_has(&a, anchor)) {
                snprintf(msg, sizeof msg, "%s:%d: the link to '%s#%s': %s has no heading with that anchor", path,
                         lineno, target, anchor, file);
                strs_add(problems, msg, strlen(msg));
            }
            strs_free(&a);
            free(to);
        }
    }
    free(text);
    return checked;
}

Test(docs, relative_links_reach_existing_files_and_headings)
{
    strs problems = { 0 };
    int checked = check_links("README.md", &problems);
    DIR *d = opendir("docs");
    cr_assert_not_null(d, "cannot open docs/");
    struct dirent *e;
    int pages = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
        char p[300];
        snprintf(p, sizeof p, "docs/%s", e->d_name);
        checked += check_links(p, &problems);
        pages++;
    }
    closedir(d);
    for (int i = 0; i < problems.n; i++) cr_expect_fail("%s", problems.v[i]);
    cr_expect_gt(pages, 8, "only %d pages in docs/", pages);
    cr_expect_gt(checked, 20, "only %d links checked", checked);
    strs_free(&problems);
}

/* The checker itself: a link to a missing file and one to a missing heading are
 * found, links in code do not count, anchors follow GitHub's rule. */
Test(docs, link_checker_finds_broken_links, .init = setup, .fini = teardown)
{
    char p[256], q[256];
    write_file("a.md", "# Top\n\n## Two words\n\n[ok](b.md#the-end) [self](#two-words) `[code](nowhere.md)`\n"
               "[gone](c.md) [bad anchor](b.md#the-start) [web](https://example.com/x.md)\n"
               "```\n[fenced](nowhere.md)\n```\n", p, sizeof p);
    write_file("b.md", "# The end\n", q, sizeof q);
    strs a = { 0 }, problems = { 0 };
    anchors("# A `b` c\n# A b c\n```\n# not\n```\n## x_y-z!\n", &a);
    cr_assert_eq(a.n, 3);
    cr_expect_str_eq(a.v[0], "a-b-c");
    cr_expect_str_eq(a.v[1], "a-b-c-1");
    cr_expect_str_eq(a.v[2], "x_y-z");
    strs_free(&a);
    cr_expect_eq(check_links(p, &problems), 4, "relative links outside code: 4");
    cr_assert_eq(problems.n, 2, "%d problems", problems.n);
    cr_expect(strstr(problems.v[0], "c.md, which does not exist") != NULL, "%s", problems.v[0]);
    cr_expect(strstr(problems.v[1], "no heading with that anchor") != NULL, "%s", problems.v[1]);
    strs_free(&problems);
}

/* ---- paths the pages name, sections the sources cite -------------------------------- */

/* 1 when the path P (LEN bytes) is a placeholder rather than a file: a part in
 * capitals (X, NAME, TARGET) or one continued by '<' (calib/profiles/<gpu>.csv). */
static int placeholder(const char *p, size_t len, char next)
{
    if (next == '<') return 1;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && p[j] != '/' && p[j] != '.') j++;
        int caps = j > i;
        for (size_t k = i; k < j; k++) caps &= isupper((unsigned char) p[k]) || p[k] == '_';
        if (caps) return 1;
        i = j + 1;
    }
    return 0;
}

/* Adds to PROBLEMS each path under a folder of the tree (sim/, calib/, cli/,
 * include/, tests/, scenarios/, docs/, plots/, .ci/) that the page PATH names
 * and that does not exist (relative to the root or to the page's folder; X.[ch]
 * as X.c).  Returns the number of paths checked. */
static int check_paths(const char *path, strs *problems)
{
    static const char *roots[] = { "sim/", "calib/", "cli/", "include/", "tests/", "scenarios/", "docs/", "plots/", ".ci/" };
    char *text = slurp_or_fail(path, NULL);
    int checked = 0, lineno = 1;
    for (const char *c = text; *c; c++) {
        if (*c == '\n') { lineno++; continue; }
        if (c > text && (isalnum((unsigned char) c[-1]) || strchr("_/.-", c[-1]))) continue;
        size_t r = 0;
        for (; r < sizeof roots / sizeof roots[0]; r++)
            if (!strncmp(c, roots[r], strlen(roots[r]))) break;
        if (r == sizeof roots / sizeof roots[0]) continue;
        size_t len = 0;
        while (c[len] && (isalnum((unsigned char) c[len]) || strchr("_./-+", c[len]) || !strncmp(c + len, "[ch]", 4)))
            len += c[len] == '[' ? 4 : 1;
        while (len && strchr(".-", c[len - 1])) len--;   /* a sentence's full stop */
        const char *dot = NULL;
        for (size_t i = 0; i < len; i++)
            if (c[i] == '.' && i > 0) dot = c + i;
        int file = dot && dot > c + strlen(roots[r]) - 1, folder = c[len - 1] == '/';
        if ((!file && !folder) || c[len] == '*' || c[len] == '{' || placeholder(c, len, c[len])) { c += len - 1; continue; }
        char p[512], rel[800];
        snprintf(p, sizeof p, "%.*s", (int) len, c);
        size_t pl = strlen(p);
        if (pl > 5 && !strcmp(p + pl - 5, ".[ch]")) strcpy(p + pl - 5, ".c");
        snprintf(rel, sizeof rel, "%.*s%s", (int) (strrchr(path, '/') ? strrchr(path, '/') - path + 1 : 0), path, p);
        checked++;
        if (is_dir(p) < 0 && is_dir(rel) < 0) {
            char msg[800];
            snprintf(msg, sizeof msg, "%s:%d: names %s, which does not exist (a placeholder is written in capitals: X.c)",
                     path, lineno, p);
            strs_add(problems, msg, strlen(msg));
        }
        c += len - 1;
    }
    free(text);
    return checked;
}

Test(docs, every_path_the_pages_name_exists)
{
    strs problems = { 0 };
    int checked = check_paths("README.md", &problems) + check_paths("scenarios/README.md", &problems);
    DIR *d = opendir("docs");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
        char p[300];
        snprintf(p, sizeof p, "docs/%s", e->d_name);
        checked += check_paths(p, &problems);
    }
    closedir(d);
    for (int i = 0; i < problems.n; i++) cr_expect_fail("%s", problems.v[i]);
    cr_expect_gt(checked, 200, "only %d paths checked", checked);
    strs_free(&problems);
}

/* The checker: a missing file is found, placeholders and existing paths are not. */
Test(docs, path_checker_finds_missing_files, .init = setup, .fini = teardown)
{
    char p[256];
    write_file("a.md", "`sim/engine/evq.[ch]`, sim/llm/X.c, calib/profiles/<gpu>.csv, tests/fuzz/TARGET/,\n"
               "sim/gateway/ratelimit.c and cli/ and docs/none.md.\n", p, sizeof p);
    strs problems = { 0 };
    cr_expect_eq(check_paths(p, &problems), 4, "evq.[ch], ratelimit.c, cli/ and none.md");
    cr_assert_eq(problems.n, 2, "%d problems", problems.n);
    cr_expect(strstr(problems.v[0], ":2: names sim/gateway/ratelimit.c, which does not exist") != NULL, "%s", problems.v[0]);
    cr_expect(strstr(problems.v[1], "names docs/none.md,") != NULL, "%s", problems.v[1]);
    strs_free(&problems);
}

/* The Markdown headings of PATH, text only ("## A b" -> "A b"), into OUT. */
static void headings(const char *path, strs *out)
{
    char *text = slurp_or_fail(path, NULL);
    int fence = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!strncmp(l, "```", 3)) { fence = !fence; continue; }
        if (fence || l[0] != '#') continue;
        const char *t = l;
        while (*t == '#') t++;
        if (*t != ' ') continue;
        t++;
        const char *e = strchr(t, '\n');
        strs_add(out, t, e ? (size_t) (e - t) : strlen(t));
    }
    free(text);
}

/* Checks the citations of FILE's text: every `PAGE.md, "HEADING"` (or without
 * the comma; line breaks and comment stars between them allowed) names a page
 * with a heading that starts with HEADING, and a bare README is not a
 * citation (name the page and the section).  Adds to PROBLEMS; returns the
 * number checked. */
static int check_citations(const char *file, strs *problems)
{
    char *text = slurp_or_fail(file, NULL);
    int checked = 0;
    for (const char *c = text; (c = strstr(c, "README")); c += 6) {
        int line = 1;
        for (const char *x = text; x < c; x++) line += *x == '\n';
        if (c > text && c[-1] == '/') continue;   /* plots/README.md: a page, cited by path */
        if (!strncmp(c, "README.md", 9)) continue;
        char msg[600];
        snprintf(msg, sizeof msg, "%s:%d: cites README without its page and section: write README.md, \"Heading\" "
                 "or docs/PAGE.md, \"Heading\"", file, line);
        strs_add(problems, msg, strlen(msg));
    }
    for (const char *c = text; (c = strstr(c, ".md")); c += 3) {
        const char *s = c;
        while (s > text && (isalnum((unsigned char) s[-1]) || strchr("_/-", s[-1]))) s--;
        const char *q = c + 3;
        if (*q == ',') q++;
        while (*q == ' ' || *q == '\n' || *q == '*') q++;
        if (*q != '"') continue;
        const char *qe = strchr(q + 1, '"');
        if (!qe) continue;
        char page[300], want[300];
        snprintf(page, sizeof page, "%.*s.md", (int) (c - s), s);
        snprintf(want, sizeof want, "%.*s", (int) (qe - q - 1), q + 1);
        for (char *w = want; *w; w++)   /* a heading cited across a comment's lines */
            if (*w == '\n') {
                char *x = w + 1;
                while (*x == ' ' || *x == '*') x++;
                *w = ' ';
                memmove(w + 1, x, strlen(x) + 1);
            }
        int line = 1;
        for (const char *x = text; x < c; x++) line += *x == '\n';
        checked++;
        char msg[900];
        if (is_dir(page) != 0) {
            snprintf(msg, sizeof msg, "%s:%d: cites %s, which does not exist", file, line, page);
            strs_add(problems, msg, strlen(msg));
            continue;
        }
        strs h = { 0 };
        headings(page, &h);
        int found = 0;
        for (int i = 0; i < h.n; i++) found |= !strncmp(h.v[i], want, strlen(want));
        if (!found) {
            snprintf(msg, sizeof msg, "%s:%d: cites %s, \"%s\": %s has no such heading", file, line, page, want, page);
            strs_add(problems, msg, strlen(msg));
        }
        strs_free(&h);
    }
    free(text);
    return checked;
}

/* The sources (.c, .h, .cu of sim/X/, calib/, cli/, include/latsim/) into OUT. */
static void all_sources(strs *out)
{
    strs folders = { 0 };
    source_folders(&folders);
    strs_add(&folders, "include/latsim/", 15);
    strs files = { 0 };
    source_files(&folders, &files);
    for (int i = 0; i < files.n; i++) {
        size_t l = strlen(files.v[i]);
        if ((l > 2 && (!strcmp(files.v[i] + l - 2, ".c") || !strcmp(files.v[i] + l - 2, ".h"))) ||
            (l > 3 && !strcmp(files.v[i] + l - 3, ".cu")))
            strs_add(out, files.v[i], l);
    }
    strs_free(&files);
    strs_free(&folders);
}

Test(docs, sections_the_sources_cite_exist)
{
    strs files = { 0 }, problems = { 0 };
    all_sources(&files);
    cr_assert_gt(files.n, 100);
    int checked = 0;
    for (int i = 0; i < files.n; i++) checked += check_citations(files.v[i], &problems);
    for (int i = 0; i < problems.n; i++) cr_expect_fail("%s", problems.v[i]);
    cr_expect_gt(checked, 10, "only %d citations", checked);
    strs_free(&files);
    strs_free(&problems);
}

Test(docs, citation_checker_finds_moved_sections, .init = setup, .fini = teardown)
{
    char p[256];
    write_file("a.c", "/* (README, \"Finite workloads\") docs/workloads.md, \"Finite workloads\"\n"
               " * docs/metrics.md, \"Cost per 1000 requests,\n * overall and per class\" docs/metrics.md \"Gone\"\n"
               " * plots/README.md */\n", p, sizeof p);
    strs problems = { 0 };
    cr_expect_eq(check_citations(p, &problems), 3);
    cr_assert_eq(problems.n, 2, "%d problems", problems.n);
    cr_expect(strstr(problems.v[0], ":1: cites README without") != NULL, "%s", problems.v[0]);
    cr_expect(strstr(problems.v[1], ":3: cites docs/metrics.md, \"Gone\"") != NULL, "%s", problems.v[1]);
    strs_free(&problems);
}

/* Criterion 2.4 exits 1 when a test logs a warning, so that `make test` fails
 * although every test passed: a test that cannot run a part says so with
 * cr_skip_test (a reason, no warning). */
Test(docs, no_test_logs_a_warning)
{
    DIR *d = opendir("tests");
    cr_assert_not_null(d);
    struct dirent *e;
    char needle[32];
    snprintf(needle, sizeof needle, "cr_log_%s(", "warn");
    int files = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".c")) continue;
        char p[300];
        snprintf(p, sizeof p, "tests/%s", e->d_name);
        char *t = slurp_or_fail(p, NULL);
        cr_expect(strstr(t, needle) == NULL, "%s logs a warning (%s...): Criterion 2.4 then exits 1; use cr_skip_test", p,
                  needle);
        free(t);
        files++;
    }
    closedir(d);
    cr_expect_gt(files, 50);
}
