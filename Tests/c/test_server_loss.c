/*
 * test_server_loss.c — a PostgreSQL server stopped in the middle of a save, and in the middle of
 * a migration stage (PostgreSQL only: on store files it exits 77, skipped).
 *
 * A save: it fails with STRATA_ERR_IO; once the server is back, the store holds the last
 * completed state (every object of the earlier save, none of the interrupted one), the context
 * that lost its connection saves again on a new one, and a new container opens the store.
 *
 * A migration: a store of version 1 opened with a plan to a later version, the server stopped
 * by the stage itself (deterministic: a C willMigrate or didMigrate hook that stops it, with the
 * hook's changes saved or left for Strata to save, or the progress callback of a lightweight
 * stage stopping it in the middle of a table's copy). The open fails with STRATA_ERR_IO naming
 * the lost connection and the stage; once the server is back, the store holds the last
 * completed version (strata_check_store's storedVersion) with every row as it was, and opening
 * it again with the plan migrates it fully.
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

/*
 * A new store's URI (check.h), its connections committing with synchronous_commit on: the test
 * cluster runs with it off, where a commit's WAL may still be in the server's buffers when
 * `pg_ctl stop -m immediate` kills it, and a committed save be lost with the server.
 */
static char *durable_store_path(const char *name) {
    char *uri = test_store_path(name);
    CHECK(strstr(uri, "options=-csearch_path%3D") != NULL && strchr(strstr(uri, "options="), '&') == NULL);
    char *durable = check_strf("%s%%20-csynchronous_commit%%3Don", uri);   /* the options' last word */
    free(uri);
    return durable;
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

static void test_save_loss(void) {
    char *path = durable_store_path("server_loss.store");
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
}

/* ---- the server lost in the middle of a migration stage ---------------------------------- */

/*
 * Row {n, label, tags: to-many Tag (kept in pairs)} and Tag at version 1; version 2 adds an
 * optional note (in place); version 3 (from 1 or 2) has the note and makes the pairs a to-one
 * Row.tag (originalName "tags"): Row's table is rebuilt, its rows copied in batches.
 */
#define TAG_ENTITY "{\"name\": \"Tag\", \"attributes\": [{\"name\": \"label\", \"type\": \"string\"}]}"
#define ROW_ATTRS "{\"name\": \"n\", \"type\": \"int\"}, {\"name\": \"label\", \"type\": \"string\"}"
#define NOTE_ATTR ", {\"name\": \"note\", \"type\": \"string\", \"optional\": true}"
#define TAGS_REL "{\"name\": \"tags\", \"destination\": \"Tag\", \"toMany\": true}"
#define TAG_REL "{\"name\": \"tag\", \"originalName\": \"tags\", \"destination\": \"Tag\", \"optional\": true}"
#define MIG_SCHEMA(version, attrs, rel)                                                                 \
    "{\"version\": \"" version "\", \"entities\": [{\"name\": \"Row\", \"attributes\": [" attrs "],"   \
    " \"relationships\": [" rel "]}, " TAG_ENTITY "]}"
#define MIG_V1 MIG_SCHEMA("1", ROW_ATTRS, TAGS_REL)
#define MIG_V2 MIG_SCHEMA("2", ROW_ATTRS NOTE_ATTR, TAGS_REL)
#define MIG_V3 MIG_SCHEMA("3", ROW_ATTRS NOTE_ATTR, TAG_REL)

#define STAGE_ADD_NOTE "{\"name\": \"addNote\", \"kind\": \"custom\", \"from\": \"1\", \"to\": \"2\"}"

/* A plan's configuration: {"migrationPlan": {"schemas": [...], "stages": [...]}, "history": false}. */
static const char *const PLAN_ADD_NOTE =
    "{\"migrationPlan\": {\"schemas\": [" MIG_V1 ", " MIG_V2 "], \"stages\": [" STAGE_ADD_NOTE "]}, \"history\": false}";
static const char *const PLAN_TAGS_TO_ONE =
    "{\"migrationPlan\": {\"schemas\": [" MIG_V1 ", " MIG_V3 "], \"stages\": ["
    "{\"name\": \"tagsToOne\", \"kind\": \"lightweight\", \"from\": \"1\", \"to\": \"3\"}]}, \"history\": false}";
static const char *const PLAN_TWO_STAGES =
    "{\"migrationPlan\": {\"schemas\": [" MIG_V1 ", " MIG_V2 ", " MIG_V3 "], \"stages\": [" STAGE_ADD_NOTE ","
    " {\"name\": \"tagsToOne\", \"kind\": \"lightweight\", \"from\": \"2\", \"to\": \"3\"}]}, \"history\": false}";

typedef enum { STOP_NEVER, STOP_IN_WILL, STOP_IN_WILL_UNSAVED, STOP_IN_DID, STOP_IN_DID_UNSAVED, STOP_IN_COPY } stop_point;

typedef struct {
    stop_point stop;        /* where this open stops the server (once) */
    int copy_total;         /* the rows a copy of Row copies */
    int stopped;            /* the server was stopped */
    int will_calls, did_calls;
    int copy_events;
} migration_run;

static int under_memcheck(void) {
    const char *m = getenv("STRATA_MEMCHECK");
    return m != NULL && m[0] != '\0' && strcmp(m, "0") != 0;
}

static void stop_server_once(migration_run *r) {
    CHECK(!r->stopped);
    server("stop");
    r->stopped = 1;
}

/* willMigrate (version 1): deletes the rows n < 10, saved or left for Strata to save; then maybe stops the server. */
static strata_status will_delete(strata_context *ctx, void *userdata) {
    migration_run *r = userdata;
    r->will_calls++;
    CHECK_STATUS(strata_delete_where(ctx, "Row", "{\"predicate\": \"$0.n < 10\"}"));
    if (r->stop != STOP_IN_WILL_UNSAVED) CHECK_STATUS(strata_save(ctx));
    if (r->stop == STOP_IN_WILL || r->stop == STOP_IN_WILL_UNSAVED) stop_server_once(r);
    return STRATA_OK;
}

/* didMigrate (version 2): notes the rows n < 100, saved or left for Strata to save; then maybe stops the server. */
static strata_status did_note(strata_context *ctx, void *userdata) {
    migration_run *r = userdata;
    r->did_calls++;
    char *text = NULL;
    CHECK_STATUS(strata_fetch_identifiers(ctx, "{\"entity\": \"Row\", \"predicate\": \"$0.n < 100\"}", &text));
    struct json_object *ids = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_array_length(ids) == 90);   /* willMigrate deleted n < 10 */
    for (size_t i = 0; i < json_object_array_length(ids); i++)
        CHECK_STATUS(strata_update(ctx, json_object_get_string(json_object_array_get_idx(ids, i)), "{\"note\": \"noted\"}"));
    json_object_put(ids);
    if (r->stop != STOP_IN_DID_UNSAVED) CHECK_STATUS(strata_save(ctx));
    if (r->stop == STOP_IN_DID || r->stop == STOP_IN_DID_UNSAVED) stop_server_once(r);
    return STRATA_OK;
}

/*
 * Progress: stops the server at a copy event of Row in the middle of the copy (some rows copied,
 * not all; under valgrind's smaller store, at the copy's first event, none copied yet).
 */
static void progress_stop(const char *event_json, void *userdata) {
    migration_run *r = userdata;
    struct json_object *e = parse_json_or_die(event_json);
    const char *step = check_str_member(e, "step"), *entity = check_str_member(e, "entity");
    if (step != NULL && strcmp(step, "copy") == 0 && entity != NULL && strcmp(entity, "Row") == 0) {
        r->copy_events++;
        int64_t done = json_object_get_int64(check_member(e, "done"));
        int64_t total = json_object_get_int64(check_member(e, "total"));
        CHECK(total == r->copy_total);
        if (r->stop == STOP_IN_COPY && !r->stopped && done < total && (under_memcheck() || done > 0)) {
            printf("  stopping the server at %s\n", event_json);
            stop_server_once(r);
        }
    }
    json_object_put(e);
}

/* A new store of version 1 with `rows` rows {n: i, label: "row i"}. */
static char *seed_v1(const char *name, int rows) {
    char *path = durable_store_path(name);
    strata_container *db = check_open("{\"schema\": " MIG_V1 ", \"history\": false}", path);
    strata_context *ctx = check_context(db);
    for (int done = 0; done < rows;) {
        int n = rows - done < 20000 ? rows - done : 20000;
        check_buf b = {0};
        check_buf_add(&b, "[");
        for (int i = 0; i < n; i++) {
            char one[80];
            snprintf(one, sizeof one, "%s{\"n\": %d, \"label\": \"row %d\"}", i ? "," : "", done + i, done + i);
            check_buf_add(&b, one);
        }
        check_buf_add(&b, "]");
        CHECK_STATUS(strata_insert_many(ctx, "Row", b.s, NULL));
        CHECK_STATUS(strata_save(ctx));
        free(b.s);
        done += n;
    }
    strata_context_free(ctx);
    strata_close(db);
    return path;
}

/* strata_check_store's storedVersion of the store, as the plan `plan_json` sees it; also its status. */
static void check_stored(const char *path, const char *plan_json, const char *version, const char *status) {
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(plan_json, &cfg));
    char *out = NULL;
    CHECK_STATUS(strata_check_store(path, cfg, &out));
    struct json_object *o = parse_json_or_die(out);
    if (check_str_member(o, "storedVersion") == NULL || strcmp(check_str_member(o, "storedVersion"), version) != 0 ||
            strcmp(check_nonnull_(check_str_member(o, "status")), status) != 0) {
        fprintf(stderr, "expected version %s, %s; strata_check_store: %s\n", version, status, out);
        exit(1);
    }
    json_object_put(o);
    strata_free(out);
    strata_config_free(cfg);
}

/*
 * Every row of the store, read with the configuration of its version `schema_json`: the rows
 * n = first .. rows-1, each once, with its label; the note "noted" on n < 100 when `noted`, else
 * none (the note is not read at version 1).
 */
static void check_rows(const char *path, const char *schema_json, int first, int rows, int noted) {
    char *config = check_strf("{\"schema\": %s, \"history\": false, \"automaticMigration\": false}", schema_json);
    strata_container *db = check_open(config, path);
    strata_context *ctx = check_context(db);
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Row\"}", &text));
    struct json_object *all = parse_json_or_die(text);
    strata_free(text);
    size_t count = json_object_array_length(all);
    if (count != (size_t)(rows - first)) {
        fprintf(stderr, "expected %d rows, found %zu\n", rows - first, count);
        exit(1);
    }
    char *seen = calloc((size_t)rows, 1);
    CHECK(seen != NULL);
    for (size_t i = 0; i < count; i++) {
        struct json_object *row = json_object_array_get_idx(all, i);
        int n = json_object_get_int(check_member(row, "n"));
        CHECK(n >= first && n < rows && !seen[n]);
        seen[n] = 1;
        char label[32];
        snprintf(label, sizeof label, "row %d", n);
        CHECK_STR_EQ(check_str_member(row, "label"), label);
        CHECK_STR_EQ(check_str_member(row, "note"), noted && n < 100 ? "noted" : NULL);
    }
    free(seen);
    json_object_put(all);
    strata_context_free(ctx);
    strata_close(db);
    free(config);
}

/* The configuration of `plan_json` with the run's hooks (on addNote, when the plan has it) and progress. */
static strata_config *run_config(const char *plan_json, migration_run *r) {
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(plan_json, &cfg));
    if (strstr(plan_json, "\"addNote\"") != NULL)
        CHECK_STATUS(strata_config_set_stage_hooks(cfg, "addNote", will_delete, did_note, r, NULL));
    CHECK_STATUS(strata_config_set_progress(cfg, progress_stop, r, NULL));
    return cfg;
}

/*
 * Seeds a store of version 1, opens it with `plan_json` and the server stopped at `stop` in stage
 * `stage`: STRATA_ERR_IO. Then, the server back: the store at `kept_version` (`kept_schema`),
 * every row as it was; and an open with the plan migrates it to `final_version`.
 */
static int migration_loss(const char *what, const char *plan_json, stop_point stop, int rows, const char *stage,
                           const char *kept_version, const char *kept_schema, int kept_noted,
                           const char *final_version, const char *final_schema) {
    printf("the server stopped %s\n", what);
    char *path = seed_v1("server_loss_migration", rows);
    check_stored(path, plan_json, "1", "migratable");

    /* addNote's willMigrate deletes the rows n < 10 before a later stage copies the rest. */
    int add_note = strstr(plan_json, "\"addNote\"") != NULL;
    migration_run r = {stop, add_note ? rows - 10 : rows, 0, 0, 0, 0};
    strata_config *cfg = run_config(plan_json, &r);
    strata_container *db = (strata_container *)&db;
    strata_status st = strata_open(path, cfg, &db);
    char *error = strdup(check_nonnull_(strata_last_error()));
    CHECK(error != NULL);
    CHECK(r.stopped);
    server("start");
    /* Stopped where meant: in willMigrate, in didMigrate (after willMigrate), in a copy. */
    CHECK(r.will_calls == (add_note ? 1 : 0));
    CHECK(r.did_calls == (add_note && stop != STOP_IN_WILL && stop != STOP_IN_WILL_UNSAVED ? 1 : 0));
    CHECK((r.copy_events > 0) == (stop == STOP_IN_COPY));
    printf("  strata_open: %d (%s): %s\n", (int)st, strata_errstr(st), error);
    if (st == STRATA_OK) {
        fprintf(stderr, "%s: the open succeeded although the server was stopped during stage %s\n", what, stage);
        exit(1);
    }
    CHECK(db == NULL);
    struct json_object *e = parse_json_or_die(error);
    CHECK_STR_EQ(check_str_member(e, "stage"), stage);
    const char *message = check_str_member(e, "message");
    CHECK(message != NULL && strstr(message, "PostgreSQL") != NULL && strstr(message, stage) != NULL);
    int failed = 0;
    if (st != STRATA_ERR_IO) {
        /* Reported at the end; the store's checks below still run. */
        fprintf(stderr, "FAILED: the server stopped %s: expected STRATA_ERR_IO (the connection lost, the hook returned "
                "STRATA_OK), got %d (%s): %s\n", what, (int)st, strata_errstr(st), error);
        failed = 1;
    } else {
        CHECK_STR_EQ(check_str_member(e, "code"), "io");
    }
    json_object_put(e);
    free(error);
    strata_config_free(cfg);

    /* The server back: the last completed version, every row as it was. */
    check_stored(path, plan_json, kept_version, strcmp(kept_version, final_version) == 0 ? "compatible" : "migratable");
    check_rows(path, kept_schema, kept_noted ? 10 : 0, rows, kept_noted);   /* a committed addNote: n < 10 deleted */

    /* Opening again with the plan migrates the store fully (the server stays up). */
    migration_run again = {STOP_NEVER, add_note ? rows - 10 : rows, 0, 0, 0, 0};
    cfg = run_config(plan_json, &again);
    db = NULL;
    CHECK_STATUS(strata_open(path, cfg, &db));
    CHECK(!again.stopped);
    /* addNote runs again unless it had committed. */
    CHECK(again.will_calls == (add_note && strcmp(kept_version, "1") == 0 ? 1 : 0));
    CHECK(again.did_calls == again.will_calls);
    strata_close(db);
    strata_config_free(cfg);
    check_stored(path, plan_json, final_version, "compatible");
    /* addNote's hooks (in this open or the committed first stage of the failed one): n < 10 deleted, n < 100 noted. */
    check_rows(path, final_schema, add_note ? 10 : 0, rows, add_note);
    free(path);
    return failed;
}

/* Returns how many checks failed (reported on stderr) of those that let the test go on. */
static int test_migration_loss(void) {
    int rows = under_memcheck() ? 3000 : 60000;   /* a copy of 60,000 rows: two batches */
    int failed = 0;
    failed += migration_loss("by a willMigrate hook (its changes saved)", PLAN_ADD_NOTE, STOP_IN_WILL, 2000, "addNote",
                             "1", MIG_V1, 0, "2", MIG_V2);
    failed += migration_loss("by a willMigrate hook (its changes left for Strata to save)", PLAN_ADD_NOTE,
                             STOP_IN_WILL_UNSAVED, 2000, "addNote", "1", MIG_V1, 0, "2", MIG_V2);
    failed += migration_loss("by a didMigrate hook (its changes saved)", PLAN_ADD_NOTE, STOP_IN_DID, 2000, "addNote",
                             "1", MIG_V1, 0, "2", MIG_V2);
    failed += migration_loss("by a didMigrate hook (its changes left for Strata to save)", PLAN_ADD_NOTE,
                             STOP_IN_DID_UNSAVED, 2000, "addNote", "1", MIG_V1, 0, "2", MIG_V2);
    failed += migration_loss("in a lightweight stage's copy of the rows", PLAN_TAGS_TO_ONE, STOP_IN_COPY, rows,
                             "tagsToOne", "1", MIG_V1, 0, "3", MIG_V3);
    failed += migration_loss("in the copy of a second stage, the first committed", PLAN_TWO_STAGES, STOP_IN_COPY, rows,
                             "tagsToOne", "2", MIG_V2, 1, "3", MIG_V3);
    return failed;
}

int main(void) {
    if (!check_postgres()) {
        fprintf(stderr, "SKIP: a PostgreSQL server's loss (ctest runs it as postgres_test_server_loss)\n");
        return 77;
    }
    test_save_loss();
    int failed = test_migration_loss();
    if (failed) {
        fprintf(stderr, "test_server_loss: %d check(s) FAILED\n", failed);
        return 1;
    }
    printf("test_server_loss: ok\n");
    return 0;
}
