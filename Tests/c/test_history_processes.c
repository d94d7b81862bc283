/*
 * test_history_processes.c — two processes on one store file: process A
 * observes {"entityNames": ["Trip", "LivingAccommodation"]}; process B (a
 * child) writes; A's strata_poll_changes delivers exactly B's transactions
 * that touch those entities, once, after A's last token:
 *
 *   round 1: B saves a Trip with its accommodation, then a BucketListItem
 *            alone: one callback (the Trip transaction), nothing for the
 *            item; a second poll delivers nothing; A's own saves are
 *            delivered as they commit and never again by a poll;
 *   round 2: B deletes A's trip: one callback, with the tombstone;
 *   round 3: B saves with "history": false: one {"token", "expired": true}
 *            callback, then nothing.
 *
 * The child is this program run again (fork, then exec with "--child"):
 * the child starts from a clean process (no state copied from A's threads),
 * and under valgrind it runs natively while A stays checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"
#include "history_check.h"

#define SCHEMA                                                                                              \
    "{\"version\": \"1.0.0\", \"entities\": ["                                                              \
    " {\"name\": \"Trip\", \"attributes\": ["                                                               \
    "   {\"name\": \"name\", \"type\": \"string\", \"preserveValueOnDeletion\": true},"                     \
    "   {\"name\": \"destination\", \"type\": \"string\", \"historyValues\": true}],"                       \
    "  \"relationships\": ["                                                                                \
    "   {\"name\": \"bucketList\", \"destination\": \"BucketListItem\", \"toMany\": true,"                  \
    "    \"deleteRule\": \"cascade\", \"inverse\": \"trip\"},"                                              \
    "   {\"name\": \"livingAccommodation\", \"destination\": \"LivingAccommodation\", \"optional\": true,"  \
    "    \"deleteRule\": \"cascade\"}]},"                                                                   \
    " {\"name\": \"BusinessTrip\", \"superentity\": \"Trip\","                                              \
    "  \"attributes\": [{\"name\": \"perdiem\", \"type\": \"double\", \"default\": 0}]},"                   \
    " {\"name\": \"BucketListItem\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}],"        \
    "  \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]},"          \
    " {\"name\": \"LivingAccommodation\", \"attributes\": [{\"name\": \"placeName\", \"type\": \"string\"}]}]}"

static strata_container *open_store(const char *path, const char *extra) {
    char *config = check_strf("{\"schema\": " SCHEMA "%s}", extra);
    strata_container *db = check_open(config, path);
    free(config);
    return db;
}

/* ---- process B ------------------------------------------------------------ */

static int child(const char *round, const char *path) {
    strata_container *db = open_store(path, strcmp(round, "3") == 0 ? ", \"history\": false" : ", \"author\": \"B\"");
    strata_context *ctx = check_context(db);
    char *id = NULL;
    if (strcmp(round, "1") == 0) {
        CHECK_STATUS(strata_insert(ctx, "BusinessTrip", "{\"name\": \"B trip\", \"destination\": \"Oslo\","
                                   " \"livingAccommodation\": {\"placeName\": \"B hotel\"}}", &id));
        strata_free(id);
        CHECK_STATUS(strata_save(ctx));
        CHECK_STATUS(strata_insert(ctx, "BucketListItem", "{\"title\": \"B item\"}", &id));
        strata_free(id);
        CHECK_STATUS(strata_save(ctx));
    } else if (strcmp(round, "2") == 0) {
        CHECK_STATUS(strata_delete(ctx, "Trip/1"));
        CHECK_STATUS(strata_save(ctx));
    } else {
        CHECK_STATUS(strata_insert(ctx, "BucketListItem", "{\"title\": \"unrecorded\"}", &id));
        strata_free(id);
        CHECK_STATUS(strata_save(ctx));
    }
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}

/* ---- process A ------------------------------------------------------------ */

typedef struct {
    int calls;
    int freed;
    char *last;
} recorder;

static void on_change(const char *json, void *userdata) {
    recorder *r = userdata;
    r->calls++;
    free(r->last);
    r->last = strdup(json);
    CHECK(r->last != NULL);
}

static void free_recorder(void *userdata) { ((recorder *)userdata)->freed++; }

/* The transactions after `token` (json_object_put it). */
static json_object *history_after(strata_context *ctx, const char *token) {
    char *d = check_strf("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"%s\"}}", token);
    json_object *h = history(ctx, d);
    free(d);
    return h;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3]);

    char *path = test_store_path("processes.store");
    strata_container *db = open_store(path, ", \"author\": \"A\"");
    strata_context *ctx = check_context(db);
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"A trip\", \"destination\": \"Rome\"}", &id));
    CHECK_STR_EQ(id, "Trip/1");
    strata_free(id);
    CHECK_STATUS(strata_save(ctx));  /* before any observer: never delivered */

    recorder a = {0};
    strata_observer *observer = NULL;
    CHECK_STATUS(strata_observe(db, "{\"entityNames\": [\"Trip\", \"LivingAccommodation\"]}", on_change, &a,
                                free_recorder, &observer));
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 0);

    /* A's own save: delivered once, as it commits. */
    CHECK_STATUS(strata_update(ctx, "Trip/1", "{\"destination\": \"Milan\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *own = latest_token(ctx);
    CHECK(a.calls == 1);
    char *want = check_strf("{\"token\": \"%s\", \"inserted\": {}, \"updated\": {\"Trip\": [{\"id\": \"Trip/1\","
                            " \"attributes\": [\"destination\"]}]}, \"deleted\": {}}", own);
    CHECK_TEXT_JSON(a.last, want);
    free(want);

    /* Round 1: B saves a trip, then an item alone. */
    printf("round 1\n");
    check_run_child(argv[0], "1", path);
    json_object *h = history_after(ctx, own);
    printf("  B wrote: %s\n", json_object_to_json_string(h));
    CHECK(json_object_array_length(h) == 2);
    json_object *trip_tx = json_object_array_get_idx(h, 0), *item_tx = json_object_array_get_idx(h, 1);
    CHECK_STR_EQ(check_str_member(trip_tx, "author"), "B");
    json_object *changes = check_member(trip_tx, "changes");
    CHECK(json_object_array_length(changes) == 2);
    const char *la = check_str_member(json_object_array_get_idx(changes, 0), "id");
    const char *bt = check_str_member(json_object_array_get_idx(changes, 1), "id");
    CHECK(la && strncmp(la, "LivingAccommodation/", 20) == 0);
    CHECK(bt && strncmp(bt, "BusinessTrip/", 13) == 0);
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(check_member(item_tx, "changes"), 0), "entity"), "BucketListItem");

    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 2);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {\"LivingAccommodation\": [\"%s\"], \"BusinessTrip\": [\"%s\"]},"
                      " \"updated\": {}, \"deleted\": {}}", check_str_member(trip_tx, "token"), la, bt);
    CHECK_TEXT_JSON(a.last, want);
    free(want);
    json_object_put(h);
    /* Nothing new: nothing delivered. */
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 2);

    /* A saves again: delivered once on save, not again by the poll. */
    CHECK_STATUS(strata_update(ctx, "Trip/1", "{\"name\": \"A trip 2\"}"));
    CHECK_STATUS(strata_save(ctx));
    CHECK(a.calls == 3);
    free(own);
    own = latest_token(ctx);
    CHECK(strstr(a.last, own) != NULL);
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 3);

    /* Round 2: B deletes A's trip: the tombstone arrives through the poll. */
    printf("round 2\n");
    check_run_child(argv[0], "2", path);
    char *b_delete = latest_token(ctx);
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 4);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {}, \"updated\": {},"
                      " \"deleted\": {\"Trip\": [{\"id\": \"Trip/1\", \"tombstone\": {\"name\": \"A trip 2\"}}]}}", b_delete);
    CHECK_TEXT_JSON(a.last, want);
    free(want);
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 4);

    /* Round 3: B saves without history: A hears once that its history expired. */
    printf("round 3\n");
    check_run_child(argv[0], "3", path);
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 5);
    /* The latest token is the mark B's unrecorded save left, right after b_delete. */
    char *mark = latest_token(ctx);
    CHECK(token_sequence(mark) == token_sequence(b_delete) + 1);
    want = check_strf("{\"token\": \"%s\", \"expired\": true}", mark);
    CHECK_TEXT_JSON(a.last, want);
    free(want);
    free(mark);
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(a.calls == 5);

    /* A second container starting to observe this store (whose history is incomplete
       since round 3) is not told of an expiry it did not live through; it hears A's next
       save through its poll, and A hears it as it commits. */
    strata_container *db2 = open_store(path, "");
    recorder c = {0};
    strata_observer *observer2 = NULL;
    CHECK_STATUS(strata_observe(db2, NULL, on_change, &c, free_recorder, &observer2));
    CHECK_STATUS(strata_poll_changes(db2));
    CHECK(c.calls == 0);
    CHECK_STATUS(strata_insert(ctx, "LivingAccommodation", "{\"placeName\": \"A hotel\"}", &id));
    CHECK_STATUS(strata_save(ctx));
    char *last = latest_token(ctx);
    CHECK(a.calls == 6);
    CHECK_STATUS(strata_poll_changes(db2));
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(c.calls == 1 && a.calls == 6);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {\"LivingAccommodation\": [\"%s\"]}, \"updated\": {}, \"deleted\": {}}",
                      last, id);
    CHECK_TEXT_JSON(c.last, want);
    CHECK_TEXT_JSON(a.last, want);
    free(want);
    strata_free(id);
    free(last);
    strata_close(db2);  /* frees the observer's userdata */
    CHECK(c.freed == 1);
    strata_observer_remove(observer2);
    CHECK(c.freed == 1);
    free(c.last);

    strata_observer_remove(observer);
    CHECK(a.freed == 1);
    CHECK_ERROR_CODE(strata_poll_changes(NULL), STRATA_ERR_MISUSE);
    strata_context_free(ctx);
    strata_close(db);
    CHECK(a.freed == 1);
    free(a.last);
    free(own);
    free(b_delete);
    free(path);
    printf("ok\n");
    return 0;
}
