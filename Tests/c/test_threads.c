/*
 * test_threads.c — strata.h "THREADING": one container shared by threads,
 * one context per thread, per-thread last errors; a file store and an
 * in-memory store; and one context used by two threads in turn.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#ifndef STRATA_SOURCE_DIR
#define STRATA_SOURCE_DIR "."
#endif
#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"

#define N_THREADS 4
#define PER_THREAD 500
#define BATCH 50 /* objects per save: 25 by strata_insert, 25 by one strata_insert_many */

#define open_trips(path) check_open_schema(FIXTURES "trips.json", (path))

/* Whether the calling thread's last error has this code. */
static int last_error_is(const char *code) {
    json_object *err = parse_json_or_die(strata_last_error());
    json_object *c = NULL;
    int same = json_object_object_get_ex(err, "code", &c) && strcmp(json_object_get_string(c), code) == 0;
    json_object_put(err);
    return same;
}

static const char *const kinds[] = {"Trip", "PersonalTrip", "BusinessTrip"};

/* One trip's JSON: unique name per thread and index; entity by index. */
static void trip_json(char *buf, size_t n, int thread, int i) {
    snprintf(buf, n,
             "{\"_entity\": \"%s\", \"name\": \"t%d-%d\", \"destination\": \"d%d\","
             " \"startDate\": %d, \"endDate\": \"2026-01-01T00:00:00Z\"%s}",
             kinds[i % 3], thread, i, i, i * 60,
             i % 10 == 0 ? ", \"bucketList\": [{\"title\": \"item\"}]" : "");
}

typedef struct {
    strata_container *db;
    int index;
    char *ids[PER_THREAD]; /* the identifiers this thread's inserts returned */
} worker;

static void *insert_trips(void *arg) {
    worker *wk = arg;
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(wk->db, &ctx));
    char json[512];
    for (int start = 0; start < PER_THREAD; start += BATCH) {
        for (int i = start; i < start + BATCH / 2; i++) {
            trip_json(json, sizeof json, wk->index, i);
            CHECK_STATUS(strata_insert(ctx, "Trip", json, &wk->ids[i]));
        }
        /* The second half of the batch in one call. */
        size_t cap = (size_t)(BATCH / 2) * 512 + 4;
        char *array = malloc(cap);
        if (!array) exit(1);
        size_t len = 0;
        array[len++] = '[';
        for (int i = start + BATCH / 2; i < start + BATCH; i++) {
            trip_json(json, sizeof json, wk->index, i);
            len += (size_t)snprintf(array + len, cap - len, "%s%s", i > start + BATCH / 2 ? "," : "", json);
        }
        snprintf(array + len, cap - len, "]");
        char *ids = NULL;
        CHECK_STATUS(strata_insert_many(ctx, "Trip", array, &ids));
        free(array);
        json_object *arr = parse_json_or_die(ids);
        strata_free(ids);
        CHECK(json_object_array_length(arr) == BATCH / 2);
        for (int k = 0; k < BATCH / 2; k++)
            wk->ids[start + BATCH / 2 + k] = strdup(json_object_get_string(json_object_array_get_idx(arr, (size_t)k)));
        json_object_put(arr);

        /* The last error is this thread's: provoke a thread-specific failure and read it back. */
        if (wk->index % 2 == 0) {
            CHECK(strata_insert(ctx, "NoSuchEntity", "{}", NULL) == STRATA_ERR_INVALID);
            CHECK(last_error_is("invalid"));
        } else {
            char *out = NULL;
            CHECK(strata_get(ctx, "Trip/999999999", &out) == STRATA_ERR_NOT_FOUND);
            CHECK(last_error_is("not_found"));
        }
        CHECK(strata_has_changes(ctx) == 1);
        CHECK_STATUS(strata_save(ctx));
        CHECK(last_error_is("ok"));
        CHECK(strata_has_changes(ctx) == 0);

        /* Saved objects are visible: at least this thread's so far. */
        int64_t n = -1;
        CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n));
        CHECK(n >= start + BATCH && n <= (int64_t)N_THREADS * PER_THREAD);
    }
    strata_context_free(ctx);
    return NULL;
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int compare_longs(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* 4 threads × 500 trips on one container; then the totals and the identifiers. */
static void run_workers(strata_container *db) {
    static worker workers[N_THREADS];
    pthread_t threads[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        memset(&workers[t], 0, sizeof workers[t]);
        workers[t].db = db;
        workers[t].index = t;
        CHECK(pthread_create(&threads[t], NULL, insert_trips, &workers[t]) == 0);
    }
    for (int t = 0; t < N_THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);

    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n));
    CHECK(n == N_THREADS * PER_THREAD);
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"BucketListItem\"}", &n));
    CHECK(n == N_THREADS * PER_THREAD / 10);
    int64_t by_kind = 0;
    for (int k = 0; k < 3; k++) {
        char d[96];
        snprintf(d, sizeof d, "{\"entity\": \"%s\", \"includeSubentities\": false}", kinds[k]);
        CHECK_STATUS(strata_fetch_count(ctx, d, &n));
        by_kind += n;
    }
    CHECK(by_kind == N_THREADS * PER_THREAD);

    /* The stored identifiers: distinct, with distinct keys across the hierarchy... */
    char *text = NULL;
    CHECK_STATUS(strata_fetch_identifiers(ctx, "{\"entity\": \"Trip\"}", &text));
    json_object *arr = parse_json_or_die(text);
    strata_free(text);
    size_t total = (size_t)N_THREADS * PER_THREAD;
    CHECK(json_object_array_length(arr) == total);
    const char **stored = malloc(total * sizeof *stored);
    long *keys = malloc(total * sizeof *keys);
    if (!stored || !keys) exit(1);
    for (size_t i = 0; i < total; i++) {
        stored[i] = json_object_get_string(json_object_array_get_idx(arr, i));
        const char *slash = strchr(stored[i], '/');
        CHECK(slash != NULL);
        keys[i] = strtol(slash + 1, NULL, 10);
    }
    qsort(stored, total, sizeof *stored, compare_strings);
    qsort(keys, total, sizeof *keys, compare_longs);
    for (size_t i = 1; i < total; i++) {
        CHECK(strcmp(stored[i - 1], stored[i]) != 0);
        CHECK(keys[i - 1] != keys[i]);
    }

    /* ...and exactly the ones the threads' inserts returned. */
    const char **returned = malloc(total * sizeof *returned);
    if (!returned) exit(1);
    for (int t = 0; t < N_THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) {
            CHECK(workers[t].ids[i] != NULL);
            returned[(size_t)t * PER_THREAD + (size_t)i] = workers[t].ids[i];
        }
    qsort(returned, total, sizeof *returned, compare_strings);
    for (size_t i = 0; i < total; i++) CHECK_STR_EQ(returned[i], stored[i]);

    /* Each thread's trip has its own values (spot check one per thread). */
    for (int t = 0; t < N_THREADS; t++) {
        CHECK_STATUS(strata_get(ctx, workers[t].ids[PER_THREAD - 1], &text));
        json_object *o = parse_json_or_die(text);
        strata_free(text);
        json_object *name = NULL;
        CHECK(json_object_object_get_ex(o, "name", &name));
        char want[32];
        snprintf(want, sizeof want, "t%d-%d", t, PER_THREAD - 1);
        CHECK_STR_EQ(json_object_get_string(name), want);
        json_object_put(o);
    }

    for (int t = 0; t < N_THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) free(workers[t].ids[i]);
    free(returned);
    free(keys);
    free(stored);
    json_object_put(arr);
    strata_context_free(ctx);
}

static void test_file_store(void) {
    char *path = test_store_path("threads.store");
    strata_container *db = open_trips(path);
    run_workers(db);
    strata_close(db);

    /* Everything was saved to the file. */
    db = open_trips(path);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n));
    CHECK(n == N_THREADS * PER_THREAD);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

static void test_in_memory(void) {
    strata_container *db = open_trips(NULL);
    run_workers(db);
    strata_close(db);
}

/* One context, two threads in turn: calls are serialized, nothing is lost. */
typedef struct {
    strata_context *ctx;
    int index;
} sharer;

static void *share_context(void *arg) {
    sharer *s = arg;
    char json[512];
    for (int i = 0; i < 100; i++) {
        trip_json(json, sizeof json, 10 + s->index, i);
        CHECK_STATUS(strata_insert(s->ctx, "Trip", json, NULL));
        int64_t n = -1;
        CHECK_STATUS(strata_fetch_count(s->ctx, "{\"entity\": \"Trip\"}", &n));
        CHECK(n >= i + 1 && n <= 200);
        if (i % 25 == 24) CHECK_STATUS(strata_save(s->ctx));
    }
    return NULL;
}

static void test_shared_context(void) {
    char *path = test_store_path("threads_shared_context.store");
    strata_container *db = open_trips(path);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    sharer s[2] = {{ctx, 0}, {ctx, 1}};
    pthread_t threads[2];
    for (int t = 0; t < 2; t++) CHECK(pthread_create(&threads[t], NULL, share_context, &s[t]) == 0);
    for (int t = 0; t < 2; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK(strata_has_changes(ctx) == 0);
    strata_context_free(ctx);
    strata_close(db);

    db = open_trips(path);
    CHECK_STATUS(strata_context_new(db, &ctx));
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n));
    CHECK(n == 200);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* A handle freed on one thread while another uses it: the call on the stale
 * handle fails with STRATA_ERR_MISUSE or runs on a live object, never on a
 * freed one (run under AddressSanitizer by `make asan`, which reports a use
 * after free). */
typedef struct {
    pthread_mutex_t lock;
    strata_context *published;
    int done;
} handle_race;

static void *use_published(void *arg) {
    handle_race *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        strata_context *ctx = r->published;
        int done = r->done;
        pthread_mutex_unlock(&r->lock);
        if (done) return NULL;
        CHECK(strata_has_changes(ctx) == 0);  /* no changes, or a stale handle */
    }
}

static void test_free_while_in_use(void) {
    strata_container *db = open_trips(NULL);
    handle_race r = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};
    pthread_t users[2];
    for (int t = 0; t < 2; t++) CHECK(pthread_create(&users[t], NULL, use_published, &r) == 0);
    for (int i = 0; i < 5000; i++) {
        strata_context *ctx = NULL;
        CHECK_STATUS(strata_context_new(db, &ctx));
        pthread_mutex_lock(&r.lock);
        r.published = ctx;
        pthread_mutex_unlock(&r.lock);
        strata_context_free(ctx);  /* the users may still be calling with it */
    }
    pthread_mutex_lock(&r.lock);
    r.done = 1;
    pthread_mutex_unlock(&r.lock);
    for (int t = 0; t < 2; t++) CHECK(pthread_join(users[t], NULL) == 0);
    strata_close(db);
}

int main(void) {
    test_file_store();
    test_in_memory();
    test_shared_context();
    test_free_while_in_use();
    return 0;
}
