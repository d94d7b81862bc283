/* The processes of the open floor (README.md). One source, built several ways by run.sh:
 *
 *   floor             main returns; linked with nothing, with libsqlite3 (or libpq), with the
 *                     minimal Swift library (and that), or with libstrata, depending on the link line
 *   floor call        the same, and calls the minimal Swift library's one function once
 *   floor_steps K STORE
 *                     libstrata: K = 0 nothing, 1 strata_config_new, 2 and strata_open (then
 *                     strata_close), 3 and a context's first strata_fetch (the bench's open row)
 *   timer RUNS PROG [ARG...]
 *                     runs PROG RUNS times (its output to /dev/null) and prints the median whole
 *                     process, fork to reaped, in microseconds
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(FLOOR_TIMER)
static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: timer RUNS PROG [ARG...]\n");
        return 2;
    }
    int runs = atoi(argv[1]);
    if (runs < 1) runs = 1;
    double *t = malloc(sizeof *t * (size_t)runs);
    if (t == NULL) return 1;
    for (int i = 0; i < runs; i++) {
        double t0 = now_us();
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) dup2(null, 1);
            execv(argv[2], argv + 2);
            _exit(127);
        }
        int status = 0;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "timer: %s failed (status %d)\n", argv[2], status);
            return 1;
        }
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, by_value);
    printf("%.1f\n", t[runs / 2]);
    free(t);
    return 0;
}

#elif defined(FLOOR_STEPS)
#include "strata.h"
#include "bench_schema.h"
#include "strata_config.h"

/* The bench's open row (benchmarks/bench/strata_side.c), step by step. */
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int steps = atoi(argv[1]);
    if (steps == 0) return 0;
    char *json = bench_strata_config_json();
    if (json == NULL) return 3;
    strata_config *cfg = NULL;
    if (strata_config_new(json, &cfg) != STRATA_OK) return 4;
    free(json);
    if (steps == 1) {
        strata_config_free(cfg);
        return 0;
    }
    strata_container *db = NULL;
    if (strata_open(argv[2], cfg, &db) != STRATA_OK) return 5;
    strata_config_free(cfg);
    if (steps >= 3) {
        strata_context *ctx = NULL;
        char *result = NULL;
        if (strata_context_new(db, &ctx) != STRATA_OK) return 6;
        if (strata_fetch(ctx, BENCH_OPEN_DESCRIPTOR, &result) != STRATA_OK) return 7;
        fputs(result, stdout);
        strata_free(result);
        strata_context_free(ctx);
    }
    strata_close(db);
    return 0;
}

#else
#ifdef FLOOR_SWIFT
int floor_minimal(int);
#endif

int main(int argc, char **argv) {
    (void)argv;
#ifdef FLOOR_SWIFT
    if (argc > 1) return floor_minimal(argc) == 1 ? 0 : 1;
#else
    (void)argc;
#endif
    return 0;
}
#endif
