/* gp.c -- gnuplot pictures as SVG text (see gp.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gp.h"

void gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("''", f);
        else if ((unsigned char) *s >= 0x20) fputc(*s, f);
    }
    fputc('\'', f);
}

/* The whole of F from its start (malloc'd), NULL when out of memory. */
static char *slurp(FILE *f)
{
    if (fseek(f, 0, SEEK_END) != 0) return NULL;
    long n = ftell(f);
    if (n < 0) return NULL;
    rewind(f);
    char *b = malloc((size_t) n + 1);
    if (!b) return NULL;
    size_t got = fread(b, 1, (size_t) n, f);
    b[got] = '\0';
    return b;
}

/* SVG with each id prefix of gnuplot's ("gpPt", "gpDot", "gpPat",
 * "gnuplot_canvas") renamed for picture K; malloc'd, NULL out of memory. */
static char *unique_ids(const char *svg, int k)
{
    static const char *const IDS[] = { "gpPt", "gpDot", "gpPat", "gnuplot_canvas" };
    size_t n = strlen(svg), cap = n + n / 4 + 64, o = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    for (const char *p = svg; *p;) {
        if (o + 64 >= cap) {
            char *x = realloc(out, cap *= 2);
            if (!x) { free(out); return NULL; }
            out = x;
        }
        size_t m = 0;
        for (size_t i = 0; i < sizeof IDS / sizeof IDS[0] && !m; i++)
            if (!strncmp(p, IDS[i], strlen(IDS[i]))) m = strlen(IDS[i]);
        if (m) {
            o += (size_t) snprintf(out + o, cap - o, "%.*s_%d_", (int) m, p, k);
            p += m;
        } else out[o++] = *p++;
    }
    out[o] = '\0';
    return out;
}

int gp_on_path(void)
{
    const char *path = getenv("PATH");
    char buf[4200];
    while (path && *path) {
        size_t k = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int) (k < 4000 ? k : 4000), path);
        if (k && access(buf, X_OK) == 0) return 1;
        path += k + (path[k] == ':');
    }
    return 0;
}

int gp_open(gp_proc *g, char *err, size_t errlen)
{
    *g = (gp_proc) { .pid = -1 };
    int p[2];
    if (pipe(p) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    g->log = tmpfile();   /* gnuplot's messages are kept, not shown */
    fflush(NULL);
    g->pid = fork();
    if (g->pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        if (g->log) fclose(g->log);
        g->log = NULL;
        return -1;
    }
    if (g->pid == 0) {
        dup2(p[0], 0);
        if (g->log) dup2(fileno(g->log), 2);
        close(p[0]);
        close(p[1]);
        execlp("gnuplot", "gnuplot", (char *) NULL);
        _exit(127);
    }
    close(p[0]);
    g->old_pipe = signal(SIGPIPE, SIG_IGN);   /* a gnuplot that dies early must not kill latsim */
    g->in = fdopen(p[1], "w");
    if (!g->in) {
        snprintf(err, errlen, "fdopen: %s", strerror(errno));
        close(p[1]);
        char last[8];
        gp_close(g, last, sizeof last);
        return -1;
    }
    return 0;
}

int gp_close(gp_proc *g, char *last, size_t lastlen)
{
    if (lastlen) last[0] = '\0';
    if (g->in) fclose(g->in);
    g->in = NULL;
    int st = 0;
    while (waitpid(g->pid, &st, 0) < 0 && errno == EINTR) {}
    signal(SIGPIPE, g->old_pipe == SIG_ERR ? SIG_DFL : g->old_pipe);
    if (g->log) {
        char line[512];
        rewind(g->log);
        while (fgets(line, sizeof line, g->log)) {
            line[strcspn(line, "\r\n")] = '\0';
            const char *t = line + strspn(line, " \t^");
            if (*t && lastlen) snprintf(last, lastlen, "%s", t);
        }
        fclose(g->log);
        g->log = NULL;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *gp_svg(const char *cmds, size_t len, const char *dir, const char *script, int w, int h, int k,
             char *err, size_t errlen)
{
    char out[64];
    snprintf(out, sizeof out, "/tmp/latsim-gp-XXXXXX");
    int fd = mkstemp(out);
    if (fd < 0) { snprintf(err, errlen, "gnuplot: temporary file: %s", strerror(errno)); return NULL; }
    close(fd);
    gp_proc g;
    char m[256];
    if (gp_open(&g, m, sizeof m) != 0) {
        snprintf(err, errlen, "gnuplot: %s", m);
        unlink(out);
        return NULL;
    }
    fprintf(g.in, "set terminal svg size %d,%d dynamic font 'Sans,12' background rgb 'white'\nset output ", w, h);
    gp_quote(g.in, out);
    fputs("\nset encoding utf8\n", g.in);
    fwrite(cmds, 1, len, g.in);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, script);
    fputs("\nload ", g.in);
    gp_quote(g.in, path);
    fputs("\nunset output\nexit\n", g.in);
    char last[512];
    int st = gp_close(&g, last, sizeof last);
    char *svg = NULL;
    if (st != 0) {
        snprintf(err, errlen, "gnuplot failed (exit %d) drawing %s%s%s", st, script, last[0] ? ": " : "", last);
    } else {
        FILE *f = fopen(out, "rb");
        char *all = f ? slurp(f) : NULL;
        if (f) fclose(f);
        const char *s = all ? strstr(all, "<svg") : NULL;
        if (!s) snprintf(err, errlen, "gnuplot wrote no SVG drawing %s", script);
        else if (!(svg = unique_ids(s, k))) snprintf(err, errlen, "out of memory");
        free(all);
    }
    unlink(out);
    return svg;
}
