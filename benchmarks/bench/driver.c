/*
 * driver.c — bench: Strata against hand-written SQLite, workload by workload
 * (benchmarks/bench/README.md); with --postgres, Strata's PostgreSQL store against
 * hand-written libpq on the same server.
 *
 *   bench [--trips N] [--repeat R] [--workloads "insert prefetch"] [--work DIR] [--postgres URI]
 *
 * Environment (the options win): BENCH_TRIPS (default 100000), REPEAT (default 5),
 * WORKLOADS (default all; a name picks one row, "count" or "widget" every row of that name),
 * BENCH_POSTGRES (a libpq URI: the PostgreSQL run).
 *
 * On PostgreSQL the store lives in schemas of the URI's database made for this run (named
 * strata_bench_<pid>, dropped at the end): the data, built through Strata; one each side's
 * insert starts from empty. Each side connects with the URI plus options=-csearch_path%3D<schema>;
 * the raw side is bench_raw_pg (libpq and json-c only), which also empties the schemas, dumps
 * the inserted rows for the check and names the server's version.
 *
 * The driver builds the store once (bench_strata setup, untimed), then for each workload
 * runs both sides once untimed and checks they return the same data (byte-identical JSON,
 * else equal once parsed with json-c; insert: the same rows in both stores): a difference
 * fails the run. Then REPEAT timed pairs, interleaved (Strata, raw, Strata, raw, ...), each
 * side a fresh process (bench_strata / bench_raw next to this program) timing its own work
 * and reporting through a pipe; peak RSS from wait4(). Prints a Markdown table of medians.
 * The driver itself links neither libstrata nor the data, so the children's peak RSS is theirs.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "common.h"

static const char *const PROG = "bench";

typedef struct {
    const char *name, *label;
    int needs; /* 1: strata_prepare, 2: strata_fetch_cursor */
    int whole_process;
    long calls; /* > 1: also per call */
    int postgres_only;       /* a row of the PostgreSQL run only */
    const char *strata_name; /* what bench_strata runs, when not the row's name */
    int sqlite_only;         /* a row of the SQLite run only */
} workload_t;

static const workload_t WORKLOADS[] = {
    {"open", "open + one tiny query (whole process)", 0, 1, 1, 0, NULL, 0},
    {"insert", "insert from one JSON array, one save", 0, 0, 1, 0, NULL, 0},
    {"insert-copy", "insert, the raw side through `COPY`", 0, 0, 1, 1, "insert", 0},
    {"contains", "contains \"a\" (case-insensitive) + sort → JSON", 0, 0, 1, 0, NULL, 0},
    {"all", "all trips → JSON (relationship identifiers)", 0, 0, 1, 0, NULL, 0},
    {"prefetch", "all trips, both relationships prefetched → nested JSON", 0, 0, 1, 0, NULL, 0},
    {"properties", "`propertiesToFetch: [\"name\"]`", 0, 0, 1, 0, NULL, 0},
    {"widget", "widget query (`fetchLimit` 1) ×10,000, prepared", 1, 0, BENCH_WIDGET_CALLS, 0, NULL, 0},
    {"widget-fetch", "widget query (`fetchLimit` 1) ×10,000, `strata_fetch`", 0, 0, BENCH_WIDGET_CALLS, 0, NULL, 0},
    {"aggregate", "trips per destination: `groupBy`, count, count of `bucketList`, min date", 0, 0, 1, 0, NULL, 0},
    {"count-ci", "`fetchCount`, contains \"a\" case-insensitive", 0, 0, 1, 0, NULL, 0},
    {"count-cs", "`fetchCount`, contains \"a\" case-sensitive", 0, 0, 1, 0, NULL, 0},
    {"cursor", "cursor over all trips, batches of 1,000", 2, 0, 1, 0, NULL, 0},
    {"search", "`fetchCount`, full-text `matches` \"old bridge\" over the bucket-list items (raw: FTS5 `MATCH`)", 0, 0, 1, 0, NULL, 1},
    {"search-fetch", "full-text `matches` \"old bridge\" → the items as JSON (raw: FTS5 `MATCH`, then the rows)", 0, 0, 1, 0, NULL, 1},
    /* Last: it writes the store the rows above read (the same value on every run). */
    {"update_where", "update 10% of the trips (`strata_update_where` + save)", 0, 0, 1, 0, NULL, 0},
};
#define NWORKLOADS (sizeof WORKLOADS / sizeof WORKLOADS[0])

static char bin_dir[PATH_MAX], work_dir[PATH_MAX + 32];
/* The PostgreSQL run: the server's URI (else NULL) and the raw side's program. */
static const char *pg_uri;
static const char *raw_prog = "bench_raw";

typedef struct {
    double seconds;
    long rss_kb;
} run_t;

/* Runs PROG_NAME ARGS... as a fresh process; its report (fd 3) gives the seconds, or the whole
 * process's wall time when whole is set. Fails the benchmark when the child fails. */
static run_t spawn(const char *prog_name, char *const args[], int whole) {
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s", bin_dir, prog_name);
    int fds[2];
    if (pipe(fds) != 0) bench_die(PROG, "pipe: %s", strerror(errno));
    fflush(NULL);
    double start = bench_now();
    pid_t pid = fork();
    if (pid < 0) bench_die(PROG, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        if (fds[1] != 3) {
            dup2(fds[1], 3);
            close(fds[1]);
        }
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDOUT_FILENO);
        char *argv[12];
        int n = 0;
        argv[n++] = path;
        for (int i = 0; args[i] && n < 11; i++) argv[n++] = args[i];
        argv[n] = NULL;
        execv(path, argv);
        fprintf(stderr, "%s: cannot run %s: %s\n", PROG, path, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    char report[128] = {0};
    size_t got = 0;
    ssize_t r;
    while ((r = read(fds[0], report + got, sizeof report - 1 - got)) > 0) got += (size_t)r;
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) bench_die(PROG, "wait4: %s", strerror(errno));
    double end = bench_now();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die(PROG, "%s %s failed (status %d)", prog_name, args[0], status);
    run_t out = {whole ? end - start : atof(report), ru.ru_maxrss};
    if (!whole && got == 0) bench_die(PROG, "%s %s reported nothing", prog_name, args[0]);
    return out;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- checks (in a child process, so the driver's own RSS stays small) ---------- */

static void dump_store(const char *path, buf_t *b) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        bench_die(PROG, "cannot open %s", path);
    static const char *const queries[] = {
        "SELECT _pk, _entity, name, destination, startDate, endDate, photo, perdiem, reason FROM Trip ORDER BY _pk",
        "SELECT _pk, _entity, address, placeName, trip FROM LivingAccommodation ORDER BY _pk",
        "SELECT _pk, _entity, title, details, hasReservation, isInPlan, trip FROM BucketListItem ORDER BY _pk"};
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK)
            bench_die(PROG, "%s: %s", path, sqlite3_errmsg(db));
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                char tmp[64];
                switch (sqlite3_column_type(st, c)) {
                case SQLITE_NULL: buf_puts(b, "NULL"); break;
                case SQLITE_INTEGER:
                case SQLITE_FLOAT: /* REAL columns may hold integers: compare as numbers */
                    snprintf(tmp, sizeof tmp, "%.17g", sqlite3_column_double(st, c));
                    buf_puts(b, tmp);
                    break;
                default: buf_puts(b, (const char *)sqlite3_column_text(st, c)); break;
                }
                buf_putc(b, '|');
            }
            buf_putc(b, '\n');
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static void show_difference(const char *a, size_t na, const char *b, size_t nb) {
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    size_t from = i > 120 ? i - 120 : 0;
    fprintf(stderr, "  first difference at byte %zu\n  Strata: %.240s\n  raw:    %.240s\n", i, a + from, b + from);
}

/* Exit status: 0 byte-identical, 3 equal once parsed, 1 different. insert compares every row
 * of the two stores (on PostgreSQL, the row dumps bench_raw_pg wrote). */
static int check_child(const char *workload, const char *strata_out, const char *raw_out) {
    size_t na = 0, nb = 0;
    char *a, *b;
    if (strncmp(workload, "insert", 6) == 0) {
        buf_t x = {0}, y = {0};
        if (pg_uri) {
            x.p = bench_read_file(strata_out, &x.n);
            y.p = bench_read_file(raw_out, &y.n);
            if (x.p == NULL || y.p == NULL) bench_die(PROG, "%s: no rows to check", workload);
        } else {
            dump_store(strata_out, &x);
            dump_store(raw_out, &y);
        }
        if (x.n == 0) bench_die(PROG, "insert: the Strata store is empty");
        if (x.n == y.n && memcmp(x.p, y.p, x.n) == 0) return 0;
        fprintf(stderr, "%s: insert: the two stores hold different rows\n", PROG);
        show_difference(x.p, x.n, y.p, y.n);
        return 1;
    }
    a = bench_read_file(strata_out, &na);
    b = bench_read_file(raw_out, &nb);
    if (a == NULL || b == NULL) bench_die(PROG, "%s: no output to check", workload);
    if (na == nb && memcmp(a, b, na) == 0) return 0;
    json_object *ja = json_tokener_parse(a), *jb = json_tokener_parse(b);
    if (ja && jb && json_object_equal(ja, jb)) return 3;
    fprintf(stderr, "%s: %s: Strata and raw %s return different data%s\n", PROG, workload, pg_uri ? "libpq" : "SQLite",
            ja == NULL ? " (Strata's output does not parse)" : jb == NULL ? " (raw output does not parse)" : "");
    show_difference(a, na, b, nb);
    return 1;
}

static const char *check(const char *workload, const char *strata_out, const char *raw_out) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) bench_die(PROG, "fork: %s", strerror(errno));
    if (pid == 0) _exit(check_child(workload, strata_out, raw_out));
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) bench_die(PROG, "waitpid: %s", strerror(errno));
    if (!WIFEXITED(status)) bench_die(PROG, "%s: the check crashed", workload);
    switch (WEXITSTATUS(status)) {
    case 0: return "identical";
    case 3: return "equal (parsed)";
    default: fprintf(stderr, "%s: %s: check FAILED\n", PROG, workload); exit(1);
    }
}

/* ---- main --------------------------------------------------------------------------- */

static void fmt_time(char *out, size_t size, double s) {
    if (s >= 1) snprintf(out, size, "%.2f s", s);
    else if (s >= 0.001) snprintf(out, size, "%.1f ms", s * 1e3);
    else snprintf(out, size, "%.1f µs", s * 1e6);
}

static int selected(const char *name, const char *list) {
    if (list == NULL || *list == '\0') return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *end = p;
        while (*end && *end != ' ' && *end != ',') end++;
        size_t len = (size_t)(end - p);
        if (len > 0 && ((len == n && strncmp(p, name, n) == 0) ||
                        (len < n && strncmp(p, name, len) == 0 && name[len] == '-')))
            return 1;
        p = end;
    }
    return 0;
}

static long env_long(const char *name, long fallback) {
    const char *v = getenv(name);
    return v && *v ? atol(v) : fallback;
}

/* ---- the PostgreSQL run's schemas ---------------------------------------------------- */

static char pg_schemas[3][64]; /* the data, Strata's insert, the raw insert */

/* The location of schema on the server: the URI with its search_path set by libpq's options. */
static void pg_location(char *out, size_t size, const char *schema) {
    int uri = strncmp(pg_uri, "postgresql://", 13) == 0 || strncmp(pg_uri, "postgres://", 11) == 0;
    if (uri) snprintf(out, size, "%s%soptions=-csearch_path%%3D%s", pg_uri, strchr(pg_uri, '?') ? "&" : "?", schema);
    else snprintf(out, size, "%s options='-csearch_path=%s'", pg_uri, schema);
}

/* bench_raw_pg's housekeeping: reset or drop a schema, dump a store's rows, the version. */
static void pg_admin(const char *what, const char *target, const char *arg) {
    char *args[] = {(char *)what, (char *)target, (char *)arg, NULL};
    spawn(raw_prog, args, 1);
}

/* At exit (also after a failure): the run's schemas dropped, quietly. */
static void pg_drop_schemas(void) {
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s", bin_dir, raw_prog);
    for (int i = 0; i < 3; i++) {
        if (pg_schemas[i][0] == '\0') continue;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            execl(path, path, "drop", pg_uri, pg_schemas[i], (char *)NULL);
            _exit(127);
        }
        if (pid > 0) waitpid(pid, NULL, 0);
    }
}

int main(int argc, char **argv) {
    long trips = env_long("BENCH_TRIPS", 100000);
    int repeat = (int)env_long("REPEAT", 5);
    const char *list = getenv("WORKLOADS");
    pg_uri = getenv("BENCH_POSTGRES");
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(bin_dir, sizeof bin_dir, "%s", dirname(self));
    snprintf(work_dir, sizeof work_dir, "%s/bench", bin_dir);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--trips") == 0 && i + 1 < argc) trips = atol(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--workloads") == 0 && i + 1 < argc) list = argv[++i];
        else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc) snprintf(work_dir, sizeof work_dir, "%s", argv[++i]);
        else if (strcmp(argv[i], "--postgres") == 0 && i + 1 < argc) pg_uri = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--trips N] [--repeat R] [--workloads \"a b\"] [--work DIR] [--postgres URI]\n",
                    PROG);
            return 2;
        }
    }
    if (pg_uri && *pg_uri == '\0') pg_uri = NULL;
    if (pg_uri) raw_prog = "bench_raw_pg";
    if (trips < 1 || repeat < 1) bench_die(PROG, "trips and repeat must be at least 1");
    if (list && *list) { /* every word must name a workload */
        char copy[512];
        snprintf(copy, sizeof copy, "%s", list);
        for (char *tok = strtok(copy, " ,"); tok; tok = strtok(NULL, " ,")) {
            int found = 0;
            for (size_t k = 0; k < NWORKLOADS; k++) found |= selected(WORKLOADS[k].name, tok);
            if (!found) bench_die(PROG, "unknown workload '%s' in WORKLOADS", tok);
        }
    }
    for (char *p = work_dir + 1;; p++) { /* mkdir -p */
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(work_dir, 0777) != 0 && errno != EEXIST) bench_die(PROG, "mkdir %s: %s", work_dir, strerror(errno));
            *p = c;
            if (c == '\0') break;
        }
    }

    char store[PATH_MAX + 1024], json[PATH_MAX + 128], nbuf[32], versions[160];
    char insert_s[PATH_MAX + 1024], insert_r[PATH_MAX + 1024];
    snprintf(json, sizeof json, "%s/trips-%ld.json", work_dir, trips);
    snprintf(nbuf, sizeof nbuf, "%ld", trips);
    if (pg_uri) {
        long pid = (long)getpid();
        snprintf(pg_schemas[0], sizeof pg_schemas[0], "strata_bench_%ld", pid);
        snprintf(pg_schemas[1], sizeof pg_schemas[1], "strata_bench_%ld_insert_strata", pid);
        snprintf(pg_schemas[2], sizeof pg_schemas[2], "strata_bench_%ld_insert_raw", pid);
        atexit(pg_drop_schemas);
        pg_location(store, sizeof store, pg_schemas[0]);
        pg_location(insert_s, sizeof insert_s, pg_schemas[1]);
        pg_location(insert_r, sizeof insert_r, pg_schemas[2]);
        char version_file[PATH_MAX + 128];
        snprintf(version_file, sizeof version_file, "%s/postgres-version.txt", work_dir);
        pg_admin("version", pg_uri, version_file);
        char *v = bench_read_file(version_file, NULL);
        snprintf(versions, sizeof versions, "%s", v ? v : "PostgreSQL");
        free(v);
        remove(version_file);
        pg_admin("reset", pg_uri, pg_schemas[0]);
        fprintf(stderr, "bench: generating %ld trips and building the PostgreSQL schema %s (untimed)...\n", trips,
                pg_schemas[0]);
    } else {
        snprintf(store, sizeof store, "%s/trips-%ld.store", work_dir, trips);
        snprintf(insert_s, sizeof insert_s, "%s/insert-strata.store", work_dir);
        snprintf(insert_r, sizeof insert_r, "%s/insert-raw.store", work_dir);
        snprintf(versions, sizeof versions, "SQLite %s", sqlite3_libversion());
        fprintf(stderr, "bench: generating %ld trips and building %s (untimed)...\n", trips, store);
    }
    double t = bench_now();
    char *setup_args[] = {"setup", store, json, nbuf, NULL};
    spawn("bench_strata", setup_args, 1);
    if (pg_uri) { /* statistics and the visibility map, as autovacuum would leave them in time */
        char *vacuum_args[] = {"vacuum", store, NULL};
        spawn(raw_prog, vacuum_args, 1);
    }
    fprintf(stderr, "bench: built in %.1f s\n", bench_now() - t);

    buf_t table = {0};
    char line[1024];
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    snprintf(line, sizeof line,
             "%ld trips (each with 1 LivingAccommodation and 3 BucketListItems), median of %d, %s, %s\n\n"
             "| workload | Strata | raw %s | Strata / raw | peak RSS Strata | peak RSS raw | RSS ratio | check |\n"
             "|---|---:|---:|---:|---:|---:|---:|---|\n",
             trips, repeat, date, versions, pg_uri ? "libpq" : "SQLite");
    buf_puts(&table, line);
    long all_rss = 0, cursor_rss = 0;

    for (size_t w = 0; w < NWORKLOADS; w++) {
        const workload_t *wl = &WORKLOADS[w];
        if (!selected(wl->name, list) || (wl->postgres_only && !pg_uri) || (wl->sqlite_only && pg_uri)) continue;
        int missing = 0;
#ifndef BENCH_HAVE_PREPARED
        missing |= wl->needs == 1;
#endif
#ifndef BENCH_HAVE_CURSOR
        missing |= wl->needs == 2;
#endif
        if (missing) {
            snprintf(line, sizeof line, "| %s | n/a | | | | | | not in this build's strata.h |\n", wl->label);
            buf_puts(&table, line);
            continue;
        }
        fprintf(stderr, "bench: %s...\n", wl->name);
        int insert = strncmp(wl->name, "insert", 6) == 0;
        char *s_store = insert ? insert_s : store, *r_store = insert ? insert_r : store;
        char s_out[PATH_MAX + 128], r_out[PATH_MAX + 128];
        snprintf(s_out, sizeof s_out, "%s/check-%s-strata.json", work_dir, wl->name);
        snprintf(r_out, sizeof r_out, "%s/check-%s-raw.json", work_dir, wl->name);
        char name[64], s_name[64];
        snprintf(name, sizeof name, "%s", wl->name);
        snprintf(s_name, sizeof s_name, "%s", wl->strata_name ? wl->strata_name : wl->name);
        /* The check: one untimed run of each side with its output kept (insert: the stores). */
        char *s_check[] = {s_name, s_store, nbuf, json, s_out, NULL};
        char *r_check[] = {name, r_store, nbuf, json, r_out, NULL};
        if (insert && pg_uri) pg_admin("reset", pg_uri, pg_schemas[1]);
        spawn("bench_strata", s_check, 1);
        if (insert && pg_uri) pg_admin("reset", pg_uri, pg_schemas[2]);
        spawn(raw_prog, r_check, 1);
        if (insert && pg_uri) { /* the rows of both schemas, dumped by the raw side's program */
            pg_admin("dump", s_store, s_out);
            pg_admin("dump", r_store, r_out);
        }
        const char *verdict = check(wl->name, insert && !pg_uri ? s_store : s_out, insert && !pg_uri ? r_store : r_out);
        remove(s_out);
        remove(r_out);

        double *ts = calloc((size_t)repeat, sizeof *ts), *tr = calloc((size_t)repeat, sizeof *tr);
        double *ratio = calloc((size_t)repeat, sizeof *ratio);
        long rss_s = 0, rss_r = 0;
        char *s_args[] = {s_name, s_store, nbuf, json, NULL};
        char *r_args[] = {name, r_store, nbuf, json, NULL};
        for (int i = 0; i < repeat; i++) {
            if (insert && pg_uri) pg_admin("reset", pg_uri, pg_schemas[1]);
            run_t a = spawn("bench_strata", s_args, wl->whole_process);
            if (insert && pg_uri) pg_admin("reset", pg_uri, pg_schemas[2]);
            run_t b = spawn(raw_prog, r_args, wl->whole_process);
            ts[i] = a.seconds;
            tr[i] = b.seconds;
            ratio[i] = b.seconds > 0 ? a.seconds / b.seconds : 0;
            if (a.rss_kb > rss_s) rss_s = a.rss_kb;
            if (b.rss_kb > rss_r) rss_r = b.rss_kb;
        }
        double ms = median(ts, repeat), mr = median(tr, repeat), mratio = median(ratio, repeat);
        char fs[32], fr[32], note[160];
        fmt_time(fs, sizeof fs, ms);
        fmt_time(fr, sizeof fr, mr);
        snprintf(note, sizeof note, "%s", verdict);
        if (wl->calls > 1) {
            char ps[32], pr[32];
            fmt_time(ps, sizeof ps, ms / (double)wl->calls);
            fmt_time(pr, sizeof pr, mr / (double)wl->calls);
            snprintf(note, sizeof note, "%s; %s vs %s per call", verdict, ps, pr);
        }
        if (strcmp(wl->name, "all") == 0) all_rss = rss_s;
        if (strcmp(wl->name, "cursor") == 0) cursor_rss = rss_s;
        snprintf(line, sizeof line, "| %s | %s | %s | %.2f× | %.1f MB | %.1f MB | %.2f× | %s |\n", wl->label, fs, fr,
                 mratio, rss_s / 1024.0, rss_r / 1024.0, rss_r > 0 ? (double)rss_s / (double)rss_r : 0, note);
        buf_puts(&table, line);
        fprintf(stderr, "%s", line);
        free(ts);
        free(tr);
        free(ratio);
    }
    printf("\n%s", table.p);
    if (all_rss && cursor_rss)
        printf("\nCursor peak RSS %.1f MB against %.1f MB for the same trips in one strata_fetch.\n",
               cursor_rss / 1024.0, all_rss / 1024.0);
    buf_free(&table);
    return 0;
}
