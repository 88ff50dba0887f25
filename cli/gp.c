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

char *gp_svg(const char *cmds, size_t len, const char *dir, const char *script, int w, int h, int k,
             char *err, size_t errlen)
{
    char out[64];
    snprintf(out, sizeof out, "/tmp/latsim-gp-XXXXXX");
    int fd = mkstemp(out);
    if (fd < 0) { snprintf(err, errlen, "gnuplot: temporary file: %s", strerror(errno)); return NULL; }
    close(fd);
    FILE *elog = tmpfile();
    int p[2];
    if (pipe(p) != 0) {
        snprintf(err, errlen, "gnuplot: pipe: %s", strerror(errno));
        unlink(out);
        if (elog) fclose(elog);
        return NULL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "gnuplot: fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        unlink(out);
        if (elog) fclose(elog);
        return NULL;
    }
    if (pid == 0) {
        dup2(p[0], 0);
        if (elog) dup2(fileno(elog), 2);
        close(p[0]);
        close(p[1]);
        execlp("gnuplot", "gnuplot", (char *) NULL);
        _exit(127);
    }
    close(p[0]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    FILE *in = fdopen(p[1], "w");
    if (in) {
        fprintf(in, "set terminal svg size %d,%d dynamic font 'Sans,12' background rgb 'white'\nset output ", w, h);
        gp_quote(in, out);
        fputs("\nset encoding utf8\n", in);
        fwrite(cmds, 1, len, in);
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, script);
        fputs("\nload ", in);
        gp_quote(in, path);
        fputs("\nunset output\nexit\n", in);
        fclose(in);
    } else close(p[1]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    signal(SIGPIPE, old);
    char last[512] = "";
    if (elog) {
        char line[512];
        rewind(elog);
        while (fgets(line, sizeof line, elog)) {
            line[strcspn(line, "\r\n")] = '\0';
            const char *t = line + strspn(line, " \t^");
            if (*t) snprintf(last, sizeof last, "%s", t);
        }
        fclose(elog);
    }
    char *svg = NULL;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "gnuplot failed (exit %d) drawing %s%s%s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, script,
                 last[0] ? ": " : "", last);
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
