/*
 * test_server_loss.c — a PostgreSQL server stopped in the middle of a save (PostgreSQL only:
 * on store files it exits 77, skipped). The save fails with STRATA_ERR_IO; once the server is
 * back, the store holds the last completed state (every object of the earlier save, none of
 * the interrupted one), the context that lost its connection saves again on a new one, and a
 * new container opens the store.
 *
 * The server is stopped and started through scripts/postgres-test.sh's
 * STRATA_TEST_POSTGRES_PGCTL (pg_ctl as the cluster's user).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#define SCHEMA                                                                                        \
    "{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"Row\", \"attributes\": ["          \
    "{\"name\": \"n\", \"type\": \"int\"}, {\"name\": \"label\", \"type\": \"string\"}]}]}, \"history\": false}"

typedef struct {
    strata_context *ctx;
    volatile int saving;
    strata_status status;
    char error[1024]; /* the save's last error (errors are per thread) */
} big_save;

static void *save_thread(void *arg) {
    big_save *b = arg;
    b->saving = 1;
    b->status = strata_save(b->ctx);
    snprintf(b->error, sizeof b->error, "%s", strata_last_error());
    return NULL;
}

static void server(const char *action) {
    const char *pgctl = getenv("STRATA_TEST_POSTGRES_PGCTL");
    const char *data = getenv("STRATA_TEST_POSTGRES_DATA");
    const char *log = getenv("STRATA_TEST_POSTGRES_LOG");
    CHECK(pgctl && data && log);
    char *cmd = strcmp(action, "stop") == 0
                    ? check_strf("%s stop -m immediate -D '%s' >/dev/null 2>&1", pgctl, data)
                    : check_strf("%s start -w -D '%s' -l '%s' >/dev/null 2>&1", pgctl, data, log);
    CHECK(system(cmd) == 0);
    free(cmd);
}

static int64_t rows(strata_context *ctx) {
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Row\"}", &n));
    return n;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(void) {
    if (!check_postgres()) {
        fprintf(stderr, "SKIP: a PostgreSQL server's loss (ctest runs it as postgres_test_server_loss)\n");
        return 77;
    }
    char *path = test_store_path("server_loss.store");
    strata_container *db = check_open(SCHEMA, path);
    strata_context *ctx = check_context(db);
    check_buf small = {0};
    check_buf_add(&small, "[");
    for (int i = 0; i < 100; i++) {
        char one[64];
        snprintf(one, sizeof one, "%s{\"n\": %d, \"label\": \"kept\"}", i ? "," : "", i);
        check_buf_add(&small, one);
    }
    check_buf_add(&small, "]");
    CHECK_STATUS(strata_insert_many(ctx, "Row", small.s, NULL));
    CHECK_STATUS(strata_save(ctx));
    free(small.s);

    /* A save big enough to be stopped in the middle: the server goes away while it runs. */
    int interrupted = 0;
    for (int size = 100000; size <= 400000 && !interrupted; size *= 2) {
        check_buf big = {0};
        check_buf_add(&big, "[");
        for (int i = 0; i < size; i++) {
            char one[64];
            snprintf(one, sizeof one, "%s{\"n\": %d, \"label\": \"lost\"}", i ? "," : "", i);
            check_buf_add(&big, one);
        }
        check_buf_add(&big, "]");
        CHECK_STATUS(strata_insert_many(ctx, "Row", big.s, NULL));
        free(big.s);
        big_save b = {ctx, 0, STRATA_OK, ""};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, save_thread, &b) == 0);
        while (!b.saving) sleep_ms(1);
        sleep_ms(150);
        server("stop");
        CHECK(pthread_join(t, NULL) == 0);
        server("start");
        if (b.status == STRATA_OK) {
            /* Saved before the server went away: the rows are there; try a bigger save. */
            printf("a save of %d objects ended before the server stopped: trying a bigger one\n", size);
            CHECK(rows(ctx) == 100 + size);
            strata_context *wipe = check_context(db);
            CHECK_STATUS(strata_delete_where(wipe, "Row", "{\"predicate\": \"$0.label == \\\"lost\\\"\"}"));
            CHECK_STATUS(strata_save(wipe));
            strata_context_free(wipe);
            continue;
        }
        printf("a save of %d objects, server stopped after 150 ms: %s\n", size, b.error);
        CHECK(b.status == STRATA_ERR_IO);
        CHECK(strstr(b.error, "\"io\"") != NULL && strstr(b.error, "PostgreSQL") != NULL);
        interrupted = 1;
        CHECK_STATUS(strata_rollback(ctx));
    }
    CHECK(interrupted);

    /* The context connects again: the store holds the earlier save only. */
    CHECK(rows(ctx) == 100);
    CHECK_STATUS(strata_insert(ctx, "Row", "{\"n\": 1000, \"label\": \"after\"}", NULL));
    CHECK_STATUS(strata_save(ctx));
    CHECK(rows(ctx) == 101);
    strata_context_free(ctx);
    strata_close(db);

    /* A new container opens the store as it was last committed. */
    db = check_open(SCHEMA, path);
    ctx = check_context(db);
    CHECK(rows(ctx) == 101);
    int64_t lost = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Row\", \"predicate\": \"$0.label == \\\"lost\\\"\"}", &lost));
    CHECK(lost == 0);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
    return 0;
}
