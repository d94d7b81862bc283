/*
 * common.h — what the benchmark's programs share (benchmarks/bench/README.md):
 * the workloads' names, a growing text buffer, the clock, the report to the
 * driver and reading a whole file. Header-only: each program includes it once.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The descriptors both sides answer (the raw side's SQL mirrors them). */
#define BENCH_CONTAINS_CI \
    "{\"entity\": \"Trip\", \"predicate\": {\"contains\": [{\"key\": \"name\"}, \"a\"], \"options\": \"c\"}," \
    " \"sortBy\": [{\"key\": \"name\"}]}"
#define BENCH_COUNT_CI \
    "{\"entity\": \"Trip\", \"predicate\": {\"contains\": [{\"key\": \"name\"}, \"a\"], \"options\": \"c\"}}"
#define BENCH_COUNT_CS \
    "{\"entity\": \"Trip\", \"predicate\": {\"contains\": [{\"key\": \"name\"}, \"a\"]}}"
#define BENCH_ALL "{\"entity\": \"Trip\"}"
#define BENCH_PREFETCH \
    "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\", \"bucketList\"]}"
#define BENCH_PROPERTIES "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\"]}"
#define BENCH_WIDGET \
    "{\"entity\": \"Trip\", \"predicate\": {\">=\": [{\"key\": \"startDate\"}, {\"var\": \"now\"}]}," \
    " \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1}"

/* Trips per destination, with their bucket-list counts and first day (an aggregation). */
#define BENCH_AGGREGATE \
    "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"]," \
    " \"aggregates\": [{\"name\": \"trips\", \"function\": \"count\"}," \
    " {\"name\": \"items\", \"function\": \"count\", \"keyPath\": \"bucketList\"}," \
    " {\"name\": \"firstDay\", \"function\": \"min\", \"keyPath\": \"startDate\"}]}"

/* update_where: the trips that start before $t (a tenth of them) get a new destination. */
#define BENCH_UPDATE_WHERE \
    "{\"predicate\": {\"<\": [{\"key\": \"startDate\"}, {\"var\": \"t\"}]}, \"bindings\": {\"t\": %ld}," \
    " \"set\": {\"destination\": \"" BENCH_UPDATE_DESTINATION "\"}}"
#define BENCH_UPDATE_DESTINATION "Atlantis"

/* Full-text search over the bucket-list items (their title is searchable in the bench's schema). */
#define BENCH_SEARCH \
    "{\"entity\": \"BucketListItem\", \"predicate\": {\"matches\": [{\"key\": \"title\"}, \"old bridge\"]}}"
#define BENCH_SEARCH_FTS "\"old\" \"bridge\""
/* The same search, the items written: what a search box shows. */
#define BENCH_SEARCH_FETCH \
    "{\"entity\": \"BucketListItem\", \"predicate\": {\"matches\": [{\"key\": \"title\"}, \"old bridge\"]}}"

#define BENCH_WIDGET_CALLS 10000L
#define BENCH_CURSOR_BATCH 1000
/* 2020-01-01T00:00:00Z: the first trip's start; trip i starts perm(i) hours later. */
#define BENCH_EPOCH 1577836800L

/* The widget query's $now for call k of n trips: between two trips' starts, all over the range. */
static inline long bench_widget_now(long k, long trips) {
    long span = trips > 0 ? trips : 1;
    return BENCH_EPOCH + ((k * 7919L) % (span + span / 20 + 1)) * 3600L + 1800L;
}

/* update_where's $t for n trips: starts are the whole hours 0 … n-1 after the epoch, so n/10 are before it. */
static inline long bench_update_before(long trips) { return BENCH_EPOCH + (trips / 10) * 3600L; }

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void bench_die(const char *prog, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* A growing buffer of text. */
typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static inline void buf_reserve(buf_t *b, size_t extra) {
    if (b->n + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) { fputs("out of memory\n", stderr); exit(1); }
    b->p = p;
    b->cap = cap;
}
static inline void buf_put(buf_t *b, const char *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
#define BUF_LIT(b, lit) buf_put((b), (lit), sizeof(lit) - 1)
static inline void buf_putc(buf_t *b, char c) {
    buf_reserve(b, 1);
    b->p[b->n++] = c;
    b->p[b->n] = '\0';
}
static inline void buf_puts(buf_t *b, const char *s) { buf_put(b, s, strlen(s)); }
static inline void buf_i64(buf_t *b, long long v) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", v);
    buf_put(b, tmp, (size_t)n);
}
static inline void buf_free(buf_t *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

static inline char *bench_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    buf_t b = {0};
    char tmp[1 << 16];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) buf_put(&b, tmp, n);
    fclose(f);
    if (b.p == NULL) buf_put(&b, "", 0);
    if (len) *len = b.n;
    return b.p;
}

static inline void bench_write_file(const char *prog, const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0)
        bench_die(prog, "cannot write %s: %s", path, strerror(errno));
}

/* The timed seconds to the driver (fd 3 when the driver runs us; else stdout). */
static inline void bench_report(double seconds) {
    char line[64];
    int n = snprintf(line, sizeof line, "%.9f\n", seconds);
    if (write(3, line, (size_t)n) != n) printf("%s", line);
}


/* ISO-8601 UTC text of seconds since 1970 as Strata writes dates: whole seconds
 * "2026-01-02T03:04:05Z", else milliseconds ".500Z" (days to civil date:
 * H. Hinnant's algorithm). Writes at most 25 bytes; returns the length. */
static inline int bench_iso(char *out, double seconds) {
    long long whole = (long long)seconds;
    if ((double)whole > seconds) whole -= 1;
    long long ms = (long long)((seconds - (double)whole) * 1000.0 + 0.5);
    if (ms >= 1000) { whole += 1; ms -= 1000; }
    long long days = whole >= 0 ? whole / 86400 : (whole - 86399) / 86400;
    long sod = (long)(whole - days * 86400);
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long y = yoe + era * 400;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    if (m <= 2) y += 1;
    char *p = out;
    int yy = (int)y;
    p[0] = (char)('0' + yy / 1000 % 10); p[1] = (char)('0' + yy / 100 % 10);
    p[2] = (char)('0' + yy / 10 % 10); p[3] = (char)('0' + yy % 10);
    p[4] = '-'; p[5] = (char)('0' + m / 10); p[6] = (char)('0' + m % 10);
    p[7] = '-'; p[8] = (char)('0' + d / 10); p[9] = (char)('0' + d % 10);
    p[10] = 'T';
    int hh = (int)(sod / 3600), mi = (int)(sod / 60 % 60), ss = (int)(sod % 60);
    p[11] = (char)('0' + hh / 10); p[12] = (char)('0' + hh % 10); p[13] = ':';
    p[14] = (char)('0' + mi / 10); p[15] = (char)('0' + mi % 10); p[16] = ':';
    p[17] = (char)('0' + ss / 10); p[18] = (char)('0' + ss % 10);
    int n = 19;
    if (ms != 0) {
        p[n++] = '.';
        p[n++] = (char)('0' + ms / 100); p[n++] = (char)('0' + ms / 10 % 10); p[n++] = (char)('0' + ms % 10);
    }
    p[n++] = 'Z';
    p[n] = '\0';
    return n;
}

/* The inverse for "YYYY-MM-DDTHH:MM:SS[.fff]Z"; -1 on other text (sets *ok to 0). */
static inline double bench_parse_iso(const char *s, int *ok) {
    int v[6] = {0};
    static const int at[6] = {0, 5, 8, 11, 14, 17}, len[6] = {4, 2, 2, 2, 2, 2};
    for (int f = 0; f < 6; f++) {
        for (int i = 0; i < len[f]; i++) {
            char c = s[at[f] + i];
            if (c < '0' || c > '9') { *ok = 0; return -1; }
            v[f] = v[f] * 10 + (c - '0');
        }
    }
    double frac = 0;
    const char *p = s + 19;
    if (*p == '.') {
        double scale = 0.1;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10) frac += (*p - '0') * scale;
    }
    if (*p != 'Z' || p[1] != '\0') { *ok = 0; return -1; }
    long long y = v[0], m = v[1], d = v[2];
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long long days = era * 146097 + doe - 719468;
    *ok = 1;
    return (double)(days * 86400 + v[3] * 3600 + v[4] * 60 + v[5]) + frac;
}

#endif
