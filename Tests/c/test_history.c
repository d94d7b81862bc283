/*
 * test_history.c — persistent history and change observation, from C, on a
 * SampleTrips-like schema (Trip with subentities BusinessTrip and
 * PersonalTrip, bucketList cascading to BucketListItem, livingAccommodation
 * cascading to LivingAccommodation; Trip.name preserveValueOnDeletion,
 * Trip.destination historyValues):
 *
 *   - insert / update / delete / cascade record exactly the expected
 *     transactions (token, timestamp, author of the configuration or of the
 *     context, context name) and changes; failed and rolled-back saves
 *     record nothing;
 *   - the two WWDC25 listings: the latest token (served by the primary key,
 *     no scan, no temporary b-tree) and "after this token, only Trip and
 *     LivingAccommodation changes", as #Predicate text and as JSON;
 *   - strata_delete_history and expired tokens (pruned, saved with
 *     "history": false, another store's token);
 *   - observers: once per save, filtered, removed inside their own callback,
 *     userdata freed exactly once (also on strata_close and on failure);
 *     strata_close ends them: no callback after it returns, even for saves
 *     of contexts still open, and one running on another thread is waited for;
 *   - malformed descriptors and filters: STRATA_ERR_INVALID with a path.
 *
 * Two processes on one store: test_history_processes.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    "    \"deleteRule\": \"cascade\"}],"                                                                    \
    "  \"uniqueConstraints\": [[\"name\"]]},"                                                               \
    " {\"name\": \"BusinessTrip\", \"superentity\": \"Trip\","                                              \
    "  \"attributes\": [{\"name\": \"perdiem\", \"type\": \"double\", \"default\": 0}]},"                   \
    " {\"name\": \"PersonalTrip\", \"superentity\": \"Trip\","                                              \
    "  \"attributes\": [{\"name\": \"reason\", \"type\": \"string\", \"default\": \"family\"}]},"            \
    " {\"name\": \"BucketListItem\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}],"        \
    "  \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]},"          \
    " {\"name\": \"LivingAccommodation\", \"attributes\": [{\"name\": \"placeName\", \"type\": \"string\"}]}]}"

/* ---- helpers -------------------------------------------------------------- */

static strata_container *open_store(const char *path, const char *extra) {
    char *config = check_strf("{\"schema\": " SCHEMA "%s}", extra ? extra : "");
    strata_container *db = check_open(config, path);
    free(config);
    return db;
}

static char *insert(strata_context *ctx, const char *entity, const char *json) {
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, entity, json, &id));
    return id;
}


/* "2026-11-24T00:03:14.123456Z": to the microsecond, written as every date is, with 6
   fraction digits, 3 for a whole millisecond, none for a whole second. */
static int is_timestamp(const char *s) {
    static const char *const shapes[] = {"dddd-dd-ddTdd:dd:dd.ddddddZ", "dddd-dd-ddTdd:dd:dd.dddZ", "dddd-dd-ddTdd:dd:ddZ"};
    if (s == NULL) return 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const char *shape = shapes[k];
        if (strlen(s) != strlen(shape)) continue;
        int ok = 1;
        for (size_t i = 0; shape[i] && ok; i++) {
            if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) ok = 0;
        }
        if (ok) return 1;
    }
    return 0;
}

/*
 * A transaction: its token (NULL: any), author and context name (NULL: the key is
 * absent), a timestamp, and exactly these changes; no other keys. Returns its token.
 */
#define CHECK_TX(tx, token, author, name, changes) check_tx_((tx), (token), (author), (name), (changes), __FILE__, __LINE__)
static const char *check_tx_(json_object *tx, const char *token, const char *author, const char *name,
                             const char *changes, const char *file, int line) {
    if (tx == NULL || !json_object_is_type(tx, json_type_object)) {
        fprintf(stderr, "%s:%d: no transaction\n", file, line);
        exit(1);
    }
    const char *t = check_str_member(tx, "token");
    int keys = 0;
    json_object_object_foreach(tx, k, v) { (void)k; (void)v; keys++; }
    int ok = t != NULL && (token == NULL || strcmp(t, token) == 0)
        && is_timestamp(check_str_member(tx, "timestamp"))
        && (author ? check_str_member(tx, "author") && strcmp(check_str_member(tx, "author"), author) == 0
                   : check_member(tx, "author") == NULL)
        && (name ? check_str_member(tx, "contextName") && strcmp(check_str_member(tx, "contextName"), name) == 0
                 : check_member(tx, "contextName") == NULL)
        && keys == 3 + (author != NULL) + (name != NULL);
    if (!ok) {
        fprintf(stderr, "%s:%d: transaction %s\n  expected token %s, author %s, contextName %s\n", file, line, plain(tx),
                token ? token : "(any)", author ? author : "(absent)", name ? name : "(absent)");
        exit(1);
    }
    check_json_(check_member(tx, "changes"), changes, file, line);
    return t;
}


/* The last error's "code" and "path" (either may be NULL), copied into the buffers. */
static void last_error_fields(char *code, char *path, size_t n) {
    json_object *e = parse_json_or_die(strata_last_error());
    const char *c = check_str_member(e, "code"), *p = check_str_member(e, "path");
    snprintf(code, n, "%s", c ? c : "");
    snprintf(path, n, "%s", p ? p : "");
    json_object_put(e);
}

static int count_of(strata_context *ctx, const char *entity) {
    char *descriptor = check_strf("{\"entity\": \"%s\"}", entity);
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, descriptor, &n));
    free(descriptor);
    return (int)n;
}

/* ---- 1. what saves record ------------------------------------------------- */

static void test_recording(void) {
    printf("recording\n");
    char *path = test_store_path("recording.store");
    strata_container *db = open_store(path, ", \"author\": \"app\"");
    strata_context *ctx = check_context(db);

    /* An empty store: no history, and an empty plan. */
    json_object *h = history(ctx, NULL);
    CHECK_JSON(h, "[]");
    json_object_put(h);

    /* Insert a trip with two bucket-list items and an accommodation (changes in the order the
       save wrote them: the accommodation before the trip that links to it). */
    char *trip = insert(ctx, "Trip", "{\"name\": \"Paris\", \"destination\": \"France\","
                        " \"bucketList\": [{\"title\": \"Louvre\"}, {\"title\": \"Eiffel\"}],"
                        " \"livingAccommodation\": {\"placeName\": \"Hotel A\"}}");
    CHECK_STR_EQ(trip, "Trip/1");
    strata_free(trip);
    char *other = insert(ctx, "PersonalTrip", "{\"name\": \"Oslo\", \"destination\": \"Norway\"}");
    CHECK_STR_EQ(other, "PersonalTrip/2");
    strata_free(other);
    CHECK_STATUS(strata_save(ctx));

    h = history(ctx, "{}");
    CHECK(json_object_array_length(h) == 1);
    const char *t1 = CHECK_TX(json_object_array_get_idx(h, 0), NULL, "app", NULL,
        "[{\"kind\": \"insert\", \"id\": \"LivingAccommodation/1\", \"entity\": \"LivingAccommodation\"},"
        " {\"kind\": \"insert\", \"id\": \"Trip/1\", \"entity\": \"Trip\"},"
        " {\"kind\": \"insert\", \"id\": \"BucketListItem/1\", \"entity\": \"BucketListItem\"},"
        " {\"kind\": \"insert\", \"id\": \"BucketListItem/2\", \"entity\": \"BucketListItem\"},"
        " {\"kind\": \"insert\", \"id\": \"PersonalTrip/2\", \"entity\": \"PersonalTrip\"}]");
    char *token1 = strdup(t1);
    json_object_put(h);
    CHECK(strchr(token1, '@') != NULL);

    /* An update of the context's author (over the configuration's) and name:
       destination (historyValues) gets old and new, name only its name. */
    CHECK_STATUS(strata_context_set_author(ctx, "alice"));
    CHECK_STATUS(strata_context_set_name(ctx, "editor"));
    CHECK_STATUS(strata_update(ctx, "Trip/1", "{\"destination\": \"Spain\", \"name\": \"Madrid\"}"));
    CHECK_STATUS(strata_save(ctx));
    /* Only the name: no old/new. */
    CHECK_STATUS(strata_update(ctx, "PersonalTrip/2", "{\"name\": \"Bergen\"}"));
    CHECK_STATUS(strata_save(ctx));

    /* Delete the trip: cascades to its items and accommodation; the tombstone holds its name. */
    CHECK_STATUS(strata_context_set_author(ctx, NULL));
    CHECK_STATUS(strata_context_set_name(ctx, NULL));
    CHECK_STATUS(strata_delete(ctx, "Trip/1"));
    CHECK_STATUS(strata_save(ctx));
    CHECK(count_of(ctx, "BucketListItem") == 0);
    CHECK(count_of(ctx, "LivingAccommodation") == 0);

    h = history(ctx, NULL);
    CHECK(json_object_array_length(h) == 4);
    CHECK_TX(json_object_array_get_idx(h, 0), token1, "app", NULL, plain(check_member(json_object_array_get_idx(h, 0), "changes")));
    const char *t2 = CHECK_TX(json_object_array_get_idx(h, 1), NULL, "alice", "editor",
        "[{\"kind\": \"update\", \"id\": \"Trip/1\", \"entity\": \"Trip\", \"attributes\": [\"destination\", \"name\"],"
        "  \"old\": {\"destination\": \"France\"}, \"new\": {\"destination\": \"Spain\"}}]");
    const char *t3 = CHECK_TX(json_object_array_get_idx(h, 2), NULL, "alice", "editor",
        "[{\"kind\": \"update\", \"id\": \"PersonalTrip/2\", \"entity\": \"PersonalTrip\", \"attributes\": [\"name\"]}]");
    /* strata_context_set_author(ctx, NULL) records no author at all (not the configuration's). */
    const char *t4 = CHECK_TX(json_object_array_get_idx(h, 3), NULL, NULL, NULL,
        "[{\"kind\": \"delete\", \"id\": \"Trip/1\", \"entity\": \"Trip\", \"tombstone\": {\"name\": \"Madrid\"}},"
        " {\"kind\": \"delete\", \"id\": \"BucketListItem/1\", \"entity\": \"BucketListItem\"},"
        " {\"kind\": \"delete\", \"id\": \"BucketListItem/2\", \"entity\": \"BucketListItem\"},"
        " {\"kind\": \"delete\", \"id\": \"LivingAccommodation/1\", \"entity\": \"LivingAccommodation\"}]");
    /* Tokens increase, all of one store. */
    CHECK(token_sequence(token1) < token_sequence(t2));
    CHECK(token_sequence(t2) < token_sequence(t3));
    CHECK(token_sequence(t3) < token_sequence(t4));
    CHECK_STR_EQ(strchr(t4, '@'), strchr(token1, '@'));
    char *token4 = strdup(t4);
    json_object_put(h);

    /* A save that fails records nothing: a unique name taken by another context's save. */
    strata_context *other_ctx = check_context(db);
    char *rome = insert(other_ctx, "Trip", "{\"name\": \"Rome\", \"destination\": \"Italy\"}");
    free(insert(ctx, "Trip", "{\"name\": \"Rome\", \"destination\": \"Italy again\", \"_onConflict\": \"error\"}"));
    CHECK_STATUS(strata_save(other_ctx));
    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_CONSTRAINT);
    CHECK_STATUS(strata_rollback(ctx));
    /* A rolled-back change records nothing either. */
    CHECK_STATUS(strata_update(ctx, "PersonalTrip/2", "{\"destination\": \"nowhere\"}"));
    CHECK_STATUS(strata_rollback(ctx));
    CHECK_STATUS(strata_save(ctx));  /* nothing to save: nothing recorded */
    char *since = check_strf("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"%s\"}}", token4);
    h = history(ctx, since);
    CHECK(json_object_array_length(h) == 1);
    char *only = check_strf("[{\"kind\": \"insert\", \"id\": \"%s\", \"entity\": \"Trip\"}]", rome);
    CHECK_TX(json_object_array_get_idx(h, 0), NULL, "app", NULL, only);
    free(only);
    strata_free(rome);
    json_object_put(h);
    free(since);

    /* Bad author and name: INVALID, the previous values kept. */
    CHECK_ERROR_CODE(strata_context_set_author(ctx, ""), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_context_set_name(ctx, ""), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_context_set_author(ctx, "\xff"), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_context_set_author(NULL, "x"), STRATA_ERR_MISUSE);

    strata_context_free(other_ctx);
    strata_context_free(ctx);
    strata_close(db);
    free(token1);
    free(token4);
    free(path);
}

/* Links: nullified and moved links are updates of both ends, naming the relationship;
   pending changes are not history. */
static void test_links(void) {
    printf("links\n");
    char *path = test_store_path("links.store");
    strata_container *db = open_store(path, NULL);
    strata_context *ctx = check_context(db);
    free(insert(ctx, "Trip", "{\"name\": \"A\", \"destination\": \"a\", \"bucketList\": [{\"title\": \"x\"}, {\"title\": \"y\"}]}"));
    free(insert(ctx, "Trip", "{\"name\": \"B\", \"destination\": \"b\"}"));
    CHECK_STATUS(strata_save(ctx));
    json_object *h = history(ctx, NULL);
    CHECK(json_object_array_length(h) == 1);
    const char *t0 = check_str_member(json_object_array_get_idx(h, 0), "token");
    char *since = check_strf("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"%s\"}}", t0);
    json_object_put(h);

    /* Pending changes are not history. */
    CHECK_STATUS(strata_delete(ctx, "BucketListItem/1"));
    h = history(ctx, since);
    CHECK_JSON(h, "[]");
    json_object_put(h);
    /* Deleting an item (nullify on its side): the trip's bucketList changed. */
    CHECK_STATUS(strata_save(ctx));
    /* Moving an item to another trip: the item and both trips. */
    CHECK_STATUS(strata_update(ctx, "BucketListItem/2", "{\"trip\": \"Trip/2\"}"));
    CHECK_STATUS(strata_save(ctx));
    h = history(ctx, since);
    CHECK(json_object_array_length(h) == 2);
    CHECK_TX(json_object_array_get_idx(h, 0), NULL, NULL, NULL,
        "[{\"kind\": \"update\", \"id\": \"Trip/1\", \"entity\": \"Trip\", \"attributes\": [\"bucketList\"]},"
        " {\"kind\": \"delete\", \"id\": \"BucketListItem/1\", \"entity\": \"BucketListItem\"}]");
    CHECK_TX(json_object_array_get_idx(h, 1), NULL, NULL, NULL,
        "[{\"kind\": \"update\", \"id\": \"Trip/1\", \"entity\": \"Trip\", \"attributes\": [\"bucketList\"]},"
        " {\"kind\": \"update\", \"id\": \"BucketListItem/2\", \"entity\": \"BucketListItem\", \"attributes\": [\"trip\"]},"
        " {\"kind\": \"update\", \"id\": \"Trip/2\", \"entity\": \"Trip\", \"attributes\": [\"bucketList\"]}]");
    json_object_put(h);
    free(since);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* ---- 2. the two WWDC25 listings ------------------------------------------ */

/* The tokens of a fetch, as one plain JSON array text (malloc'd). */
static char *tokens_of(strata_context *ctx, const char *descriptor) {
    json_object *h = history(ctx, descriptor);
    json_object *tokens = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(h); i++)
        json_object_array_add(tokens, json_object_get(check_member(json_object_array_get_idx(h, i), "token")));
    char *out = strdup(plain(tokens));
    json_object_put(tokens);
    json_object_put(h);
    return out;
}

static void test_listings(void) {
    printf("listings\n");
    char *path = test_store_path("listings.store");
    strata_container *db = open_store(path, NULL);
    strata_context *ctx = check_context(db);

    /* No history yet: the plan is empty, the latest token fetch returns nothing. */
    char *text = NULL;
    CHECK_STATUS(strata_explain_history(ctx, LATEST, &text));
    json_object *empty = parse_json_or_die(text);
    CHECK(check_member(empty, "sql") == NULL && json_object_object_get_ex(empty, "sql", NULL));
    CHECK_JSON(check_member(empty, "queryPlan"), "[]");
    json_object_put(empty);
    strata_free(text);
    json_object *h = history(ctx, LATEST);
    CHECK_JSON(h, "[]");
    json_object_put(h);

    /* tx1: a Trip; tx2: a BucketListItem only; tx3: a LivingAccommodation only;
       tx4: a BusinessTrip; tx5: a BucketListItem only. */
    free(insert(ctx, "Trip", "{\"name\": \"A\", \"destination\": \"a\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t1 = latest_token(ctx);
    free(insert(ctx, "BucketListItem", "{\"title\": \"b\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t2 = latest_token(ctx);
    free(insert(ctx, "LivingAccommodation", "{\"placeName\": \"c\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t3 = latest_token(ctx);
    free(insert(ctx, "BusinessTrip", "{\"name\": \"D\", \"destination\": \"d\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t4 = latest_token(ctx);
    free(insert(ctx, "BucketListItem", "{\"title\": \"e\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t5 = latest_token(ctx);
    CHECK(token_sequence(t1) < token_sequence(t2) && token_sequence(t4) < token_sequence(t5));

    /* The latest token is served by the primary key: no scan, no temporary b-tree. */
    CHECK_STATUS(strata_explain_history(ctx, LATEST, &text));
    json_object *plan = parse_json_or_die(text);
    strata_free(text);
    CHECK(check_str_member(plan, "sql") != NULL);
    json_object *steps = check_member(plan, "queryPlan");
    CHECK(steps != NULL && json_object_array_length(steps) >= 1);
    int by_key = 0;
    for (size_t i = 0; i < json_object_array_length(steps); i++) {
        const char *detail = check_str_member(json_object_array_get_idx(steps, i), "detail");
        CHECK(detail != NULL);
        printf("  plan: %s\n", detail);
        if (check_postgres()) {
            /* PostgreSQL's plan: an index scan backward on the token's key, no sort. */
            if (strstr(detail, "Index") != NULL) by_key = 1;
            CHECK(strstr(detail, "Sort") == NULL);
            continue;
        }
        if (strncmp(detail, "SCAN", 4) == 0 && strstr(detail, "USING") == NULL) {
            fprintf(stderr, "the latest token scans a table: %s\n", detail);
            exit(1);
        }
        CHECK(strstr(detail, "TEMP B-TREE") == NULL);
        if (strstr(detail, "PRIMARY KEY") || strstr(detail, "INDEX")) by_key = 1;
    }
    CHECK(by_key);
    json_object_put(plan);

    /* After t1, only Trip and LivingAccommodation changes: t3 and t4 (a BusinessTrip is a Trip). */
    char *d = check_strf("{\"predicate\": \"$0.token > lastToken && $0.changes.contains { "
                         "entityNames.contains($0.changedPersistentIdentifier.entityName) }\","
                         " \"bindings\": {\"lastToken\": \"%s\", \"entityNames\": [\"Trip\", \"LivingAccommodation\"]}}", t1);
    /* ... walks the primary key from the token on (no scan of every transaction, no sort). */
    CHECK_STATUS(strata_explain_history(ctx, d, &text));
    plan = parse_json_or_die(text);
    strata_free(text);
    steps = check_member(plan, "queryPlan");
    int range = 0;
    for (size_t i = 0; i < json_object_array_length(steps); i++) {
        const char *detail = check_str_member(json_object_array_get_idx(steps, i), "detail");
        printf("  plan: %s\n", detail);
        CHECK(strstr(detail, "TEMP B-TREE") == NULL);
        if (strstr(detail, "SEARCH t USING INTEGER PRIMARY KEY (rowid>?)")) range = 1;
        /* PostgreSQL: a range of the token's index (sorted after it or not, as its costs say). */
        if (check_postgres() && strstr(detail, "Index Cond: (token >")) range = 1;
    }
    CHECK(range);
    json_object_put(plan);
    free(d);
    d = check_strf("{\"predicate\": \"$0.token > lastToken && $0.changes.contains { "
                         "entityNames.contains($0.changedPersistentIdentifier.entityName) }\","
                         " \"bindings\": {\"lastToken\": \"%s\", \"entityNames\": [\"Trip\", \"LivingAccommodation\"]}}", t1);
    char *got = tokens_of(ctx, d);
    char *want = check_strf("[\"%s\",\"%s\"]", t3, t4);
    CHECK_STR_EQ(got, want);
    free(got);
    free(d);
    /* The same as a JSON predicate. */
    d = check_strf("{\"predicate\": {\"and\": [{\">\": [{\"key\": \"token\"}, {\"var\": \"lastToken\"}]},"
                   " {\"any\": [{\"key\": \"changes\"}, {\"in\": [{\"key\": \"changedPersistentIdentifier.entityName\"},"
                   " {\"var\": \"entityNames\"}]}]}]},"
                   " \"bindings\": {\"lastToken\": \"%s\", \"entityNames\": [\"Trip\", \"LivingAccommodation\"]}}", t1);
    got = tokens_of(ctx, d);
    CHECK_STR_EQ(got, want);
    free(got);
    free(d);
    free(want);
    /* The changes of BusinessTrip/PersonalTrip match "Trip"; "BusinessTrip" alone does not match a Trip. */
    got = tokens_of(ctx, "{\"predicate\": \"$0.changes.contains { $0.changedPersistentIdentifier.entityName == \\\"BusinessTrip\\\" }\"}");
    want = check_strf("[\"%s\"]", t4);
    CHECK_STR_EQ(got, want);
    free(got);
    free(want);
    /* Reverse order by token, limited. */
    got = tokens_of(ctx, "{\"sortBy\": [{\"key\": \"token\", \"order\": \"reverse\"}], \"fetchLimit\": 2}");
    want = check_strf("[\"%s\",\"%s\"]", t5, t4);
    CHECK_STR_EQ(got, want);
    free(got);
    free(want);
    /* After the newest token: nothing (not expired). */
    d = check_strf("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"%s\"}}", t5);
    got = tokens_of(ctx, d);
    CHECK_STR_EQ(got, "[]");
    free(got);
    free(d);

    strata_context_free(ctx);
    strata_close(db);
    free(t1); free(t2); free(t3); free(t4); free(t5);
    free(path);
}

/* ---- 4. pruning and expired tokens ---------------------------------------- */

static char *after(const char *token) {
    return check_strf("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"%s\"}}", token);
}

static void check_expired(strata_context *ctx, const char *descriptor) {
    char *text = NULL;
    CHECK_ERROR_CODE(strata_fetch_history(ctx, descriptor, &text), STRATA_ERR_HISTORY_EXPIRED);
    CHECK(text == NULL);
    json_object *e = parse_json_or_die(strata_last_error());
    CHECK_STR_EQ(check_str_member(e, "code"), "history_token_expired");
    json_object_put(e);
    /* explain never reports expiry */
    CHECK_STATUS(strata_explain_history(ctx, descriptor, &text));
    strata_free(text);
}

static void test_expiry(void) {
    printf("expiry\n");
    char *path = test_store_path("expiry.store");
    strata_container *db = open_store(path, NULL);
    strata_context *ctx = check_context(db);
    char *t[4];
    for (int i = 0; i < 4; i++) {
        char *json = check_strf("{\"name\": \"T%d\", \"destination\": \"d\"}", i);
        free(insert(ctx, "Trip", json));
        free(json);
        CHECK_STATUS(strata_save(ctx));
        t[i] = latest_token(ctx);
    }
    /* Delete everything up to t[1]. */
    char *d = check_strf("{\"predicate\": \"$0.token <= t\", \"bindings\": {\"t\": \"%s\"}}", t[1]);
    CHECK_STATUS(strata_delete_history(ctx, d));
    free(d);
    char *got = tokens_of(ctx, NULL);
    char *want = check_strf("[\"%s\",\"%s\"]", t[2], t[3]);
    CHECK_STR_EQ(got, want);
    free(got);
    free(want);
    /* After t[0] (older than the newest deleted): expired; >= t[1] too. After t[1]: the rest. */
    d = after(t[0]);
    check_expired(ctx, d);
    free(d);
    d = check_strf("{\"predicate\": \"$0.token >= t\", \"bindings\": {\"t\": \"%s\"}}", t[1]);
    check_expired(ctx, d);
    free(d);
    d = after(t[1]);
    got = tokens_of(ctx, d);
    want = check_strf("[\"%s\",\"%s\"]", t[2], t[3]);
    CHECK_STR_EQ(got, want);
    free(got);
    free(want);
    free(d);
    /* A token of another store: expired. */
    char *foreign = check_strf("%d@%s", token_sequence(t[3]), strcmp(strchr(t[3], '@') + 1, "0") == 0 ? "1" : "0");
    d = after(foreign);
    check_expired(ctx, d);
    free(d);
    d = check_strf("{\"predicate\": \"$0.token <= t\", \"bindings\": {\"t\": \"%s\"}}", foreign);
    CHECK_ERROR_CODE(strata_delete_history(ctx, d), STRATA_ERR_HISTORY_EXPIRED);
    free(d);
    free(foreign);
    /* A token newer than the history (a replaced store): expired. */
    char *future = check_strf("%d%s", token_sequence(t[3]) + 100, strchr(t[3], '@'));
    d = after(future);
    check_expired(ctx, d);
    free(d);
    free(future);
    strata_context_free(ctx);
    strata_close(db);

    /* A container without history saves: the tokens before expire; the store stays writable,
       and its saves are marks in the history, without their changes. */
    strata_container *off = open_store(path, ", \"history\": false");
    strata_context *octx = check_context(off);
    free(insert(octx, "Trip", "{\"name\": \"off\", \"destination\": \"d\"}"));
    CHECK_STATUS(strata_save(octx));
    CHECK_STATUS(strata_update(octx, "Trip/1", "{\"destination\": \"e\"}"));
    CHECK_STATUS(strata_save(octx));
    strata_context_free(octx);
    strata_close(off);

    db = open_store(path, NULL);
    ctx = check_context(db);
    d = after(t[3]);
    check_expired(ctx, d);
    free(d);
    /* Each unrecorded save left a mark: a transaction without changes, "unrecorded": true. */
    got = tokens_of(ctx, NULL);
    const char *tag = strchr(t[3], '@');
    want = check_strf("[\"%s\",\"%s\",\"%d%s\",\"%d%s\"]", t[2], t[3], token_sequence(t[3]) + 1, tag,
                      token_sequence(t[3]) + 2, tag);
    CHECK_STR_EQ(got, want);
    free(got);
    free(want);
    /* Saving with history again: after the new token works, and tokens keep increasing. */
    free(insert(ctx, "Trip", "{\"name\": \"on\", \"destination\": \"d\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t5 = latest_token(ctx);
    CHECK(token_sequence(t5) > token_sequence(t[3]));
    d = after(t5);
    got = tokens_of(ctx, d);
    CHECK_STR_EQ(got, "[]");
    free(got);
    free(d);
    /* Delete all: tokens are not reused. */
    CHECK_STATUS(strata_delete_history(ctx, "{}"));
    got = tokens_of(ctx, NULL);
    CHECK_STR_EQ(got, "[]");
    free(got);
    free(insert(ctx, "Trip", "{\"name\": \"again\", \"destination\": \"d\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t6 = latest_token(ctx);
    CHECK(token_sequence(t6) > token_sequence(t5));
    d = after(t5);
    got = tokens_of(ctx, d);
    want = check_strf("[\"%s\"]", t6);
    CHECK_STR_EQ(got, want);
    free(got);
    free(want);
    free(d);

    strata_context_free(ctx);
    strata_close(db);
    for (int i = 0; i < 4; i++) free(t[i]);
    free(t5);
    free(t6);
    free(path);
}

/* ---- 5. observers --------------------------------------------------------- */

typedef struct {
    int calls;
    int freed;
    int freed_during_call;
    int in_call;
    char *last;               /* the last changes_json */
    strata_observer *self;    /* removed inside its own callback when remove_in_call */
    int remove_in_call;
} recorder;

static void on_change(const char *json, void *userdata) {
    recorder *r = userdata;
    r->in_call = 1;
    r->calls++;
    free(r->last);
    r->last = strdup(json);
    if (r->remove_in_call && r->self) {
        strata_observer_remove(r->self);
        CHECK(r->freed == 0);  /* not while the callback runs */
        r->self = NULL;
    }
    r->in_call = 0;
}

static void free_recorder(void *userdata) {
    recorder *r = userdata;
    if (r->in_call) r->freed_during_call = 1;
    r->freed++;
}

static void test_observers(void) {
    printf("observers\n");
    char *path = test_store_path("observers.store");
    strata_container *db = open_store(path, NULL);
    strata_context *ctx = check_context(db);
    recorder all = {0}, trips = {0}, self = {0}, left = {0}, bad = {0}, nocb = {0};
    strata_observer *o_all = NULL, *o_trips = NULL, *o_self = NULL, *o_left = NULL, *o_bad = (strata_observer *)&bad;

    CHECK_STATUS(strata_observe(db, NULL, on_change, &all, free_recorder, &o_all));
    CHECK_STATUS(strata_observe(db, "{\"entityNames\": [\"Trip\", \"LivingAccommodation\"]}", on_change, &trips,
                                free_recorder, &o_trips));
    self.remove_in_call = 1;
    CHECK_STATUS(strata_observe(db, "{}", on_change, &self, free_recorder, &o_self));
    self.self = o_self;
    CHECK_STATUS(strata_observe(db, "{\"entityNames\": [\"BucketListItem\"]}", on_change, &left, free_recorder, &o_left));

    /* Failing observe calls free the userdata at once. */
    CHECK_ERROR_CODE(strata_observe(db, "{\"entityNames\": [\"Nope\"]}", on_change, &bad, free_recorder, &o_bad),
                     STRATA_ERR_INVALID);
    CHECK(o_bad == NULL && bad.freed == 1);
    {
        char code[256], at[256];
        last_error_fields(code, at, sizeof code);
        CHECK_STR_EQ(at, "/entityNames/0");
    }
    CHECK_ERROR_CODE(strata_observe(db, "{\"entities\": []}", on_change, &bad, free_recorder, &o_bad), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_observe(db, "{\"entityNames\": [3]}", on_change, &bad, free_recorder, &o_bad), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_observe(db, "[", on_change, &bad, free_recorder, &o_bad), STRATA_ERR_INVALID);
    CHECK(bad.freed == 4 && bad.calls == 0);
    CHECK_ERROR_CODE(strata_observe(db, NULL, NULL, &nocb, free_recorder, &o_bad), STRATA_ERR_MISUSE);
    CHECK(nocb.freed == 1);
    CHECK_ERROR_CODE(strata_observe(NULL, NULL, on_change, &nocb, free_recorder, &o_bad), STRATA_ERR_MISUSE);
    CHECK(nocb.freed == 2);
    CHECK_ERROR_CODE(strata_observe(db, NULL, on_change, &nocb, free_recorder, NULL), STRATA_ERR_MISUSE);
    CHECK(nocb.freed == 3 && nocb.calls == 0);

    /* Save 1: a trip with an item and an accommodation. */
    free(insert(ctx, "Trip", "{\"name\": \"Paris\", \"destination\": \"France\", \"bucketList\": [{\"title\": \"Louvre\"}],"
                             " \"livingAccommodation\": {\"placeName\": \"Hotel\"}}"));
    CHECK_STATUS(strata_save(ctx));
    char *t1 = latest_token(ctx);
    CHECK(all.calls == 1 && trips.calls == 1 && self.calls == 1 && left.calls == 1);
    char *want = check_strf("{\"token\": \"%s\", \"inserted\": {\"LivingAccommodation\": [\"LivingAccommodation/1\"],"
                            " \"Trip\": [\"Trip/1\"], \"BucketListItem\": [\"BucketListItem/1\"]}, \"updated\": {}, \"deleted\": {}}", t1);
    CHECK_TEXT_JSON(all.last, want);
    free(want);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {\"LivingAccommodation\": [\"LivingAccommodation/1\"],"
                      " \"Trip\": [\"Trip/1\"]}, \"updated\": {}, \"deleted\": {}}", t1);
    CHECK_TEXT_JSON(trips.last, want);
    free(want);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {\"BucketListItem\": [\"BucketListItem/1\"]}, \"updated\": {}, \"deleted\": {}}", t1);
    CHECK_TEXT_JSON(left.last, want);
    free(want);
    /* The observer that removed itself: freed once, after its callback. */
    CHECK(self.freed == 1 && self.freed_during_call == 0 && self.self == NULL);
    strata_observer_remove(o_self);  /* stale now: ignored */
    CHECK(self.freed == 1);

    /* Save 2: only a bucket-list item changes: the Trip observer hears nothing. */
    CHECK_STATUS(strata_update(ctx, "BucketListItem/1", "{\"title\": \"Louvre Museum\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t2 = latest_token(ctx);
    CHECK(all.calls == 2 && trips.calls == 1 && self.calls == 1 && left.calls == 2);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {}, \"updated\": {\"BucketListItem\": [{\"id\": \"BucketListItem/1\","
                      " \"attributes\": [\"title\"]}]}, \"deleted\": {}}", t2);
    CHECK_TEXT_JSON(all.last, want);
    free(want);

    /* A poll delivers nothing: these saves were delivered as they committed. */
    CHECK_STATUS(strata_poll_changes(db));
    CHECK(all.calls == 2 && trips.calls == 1 && left.calls == 2);

    /* Save 3: delete the trip (cascade); the tombstone carries the name. */
    strata_observer_remove(o_left);
    CHECK(left.freed == 1);
    CHECK_STATUS(strata_delete(ctx, "Trip/1"));
    CHECK_STATUS(strata_save(ctx));
    char *t3 = latest_token(ctx);
    CHECK(all.calls == 3 && trips.calls == 2 && left.calls == 2);
    want = check_strf("{\"token\": \"%s\", \"inserted\": {}, \"updated\": {}, \"deleted\": {"
                      "\"Trip\": [{\"id\": \"Trip/1\", \"tombstone\": {\"name\": \"Paris\"}}],"
                      " \"LivingAccommodation\": [{\"id\": \"LivingAccommodation/1\"}]}}", t3);
    CHECK_TEXT_JSON(trips.last, want);
    free(want);
    /* An empty save: no callback. */
    CHECK_STATUS(strata_save(ctx));
    CHECK(all.calls == 3);

    /* Close: the remaining observers' userdata freed once; removing them afterwards is harmless. */
    strata_context_free(ctx);
    strata_close(db);
    CHECK(all.freed == 1 && trips.freed == 1 && self.freed == 1 && left.freed == 1);
    strata_observer_remove(o_all);
    strata_observer_remove(o_trips);
    strata_observer_remove(NULL);
    CHECK(all.freed == 1 && trips.freed == 1);

    /* A container without history: its observers hear its saves, without a token. */
    strata_container *off = check_open("{\"schema\": " SCHEMA ", \"inMemory\": true, \"history\": false}", NULL);
    recorder quiet = {0};
    strata_observer *o_quiet = NULL;
    CHECK_STATUS(strata_observe(off, NULL, on_change, &quiet, free_recorder, &o_quiet));
    strata_context *octx = check_context(off);
    free(insert(octx, "LivingAccommodation", "{\"placeName\": \"p\"}"));
    CHECK_STATUS(strata_save(octx));
    CHECK(quiet.calls == 1);
    CHECK_TEXT_JSON(quiet.last, "{\"inserted\": {\"LivingAccommodation\": [\"LivingAccommodation/1\"]}, \"updated\": {}, \"deleted\": {}}");
    CHECK_STATUS(strata_poll_changes(off));
    CHECK(quiet.calls == 1);
    strata_context_free(octx);
    strata_observer_remove(o_quiet);
    CHECK(quiet.freed == 1);
    strata_close(off);
    CHECK(quiet.freed == 1);
    free(quiet.last);

    free(all.last); free(trips.last); free(self.last); free(left.last);
    free(t1); free(t2); free(t3);
    free(path);
}

/* Close ends observers: a context still open saves after strata_close(); no callback runs,
 * and the userdata was freed by the close (strata_observe: "when the container is closed"). */
static void test_close_ends_observers(void) {
    printf("close ends observers\n");
    char *path = test_store_path("close.store");
    strata_container *db = open_store(path, NULL);
    strata_context *ctx = check_context(db);
    recorder r = {0};
    strata_observer *o = NULL;
    CHECK_STATUS(strata_observe(db, NULL, on_change, &r, free_recorder, &o));
    free(insert(ctx, "LivingAccommodation", "{\"placeName\": \"p\"}"));
    CHECK_STATUS(strata_save(ctx));
    CHECK(r.calls == 1 && r.freed == 0);
    strata_close(db);
    CHECK(r.freed == 1);
    free(insert(ctx, "LivingAccommodation", "{\"placeName\": \"q\"}"));
    CHECK_STATUS(strata_save(ctx));
    CHECK(r.calls == 1);
    strata_observer_remove(o);  /* only frees the handle */
    strata_context_free(ctx);
    CHECK(r.calls == 1 && r.freed == 1);
    free(r.last);
    free(path);
}

/* A callback running on another thread when the container closes: strata_close() waits for it. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int entered, left, freed, left_when_freed;
} slow_observer;

static void slow_change(const char *json, void *userdata) {
    (void)json;
    slow_observer *s = userdata;
    pthread_mutex_lock(&s->lock);
    s->entered = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&s->lock);
    s->left = 1;
    pthread_mutex_unlock(&s->lock);
}

static void free_slow(void *userdata) {
    slow_observer *s = userdata;
    pthread_mutex_lock(&s->lock);
    s->freed++;
    s->left_when_freed = s->left;
    pthread_mutex_unlock(&s->lock);
}

static void *save_on_thread(void *ctx) {
    free(insert(ctx, "LivingAccommodation", "{\"placeName\": \"slow\"}"));
    CHECK_STATUS(strata_save(ctx));
    return NULL;
}

static void test_close_waits_for_callbacks(void) {
    printf("close waits for callbacks\n");
    char *path = test_store_path("close-wait.store");
    strata_container *db = open_store(path, NULL);
    strata_context *ctx = check_context(db);
    slow_observer s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0};
    strata_observer *o = NULL;
    CHECK_STATUS(strata_observe(db, NULL, slow_change, &s, free_slow, &o));
    pthread_t saver;
    CHECK(pthread_create(&saver, NULL, save_on_thread, ctx) == 0);
    pthread_mutex_lock(&s.lock);
    while (!s.entered) pthread_cond_wait(&s.cond, &s.lock);
    pthread_mutex_unlock(&s.lock);
    strata_close(db);
    pthread_mutex_lock(&s.lock);
    int left = s.left, freed = s.freed, left_when_freed = s.left_when_freed;
    pthread_mutex_unlock(&s.lock);
    CHECK(left == 1);                       /* the running callback finished first */
    CHECK(freed == 1 && left_when_freed == 1);
    CHECK(pthread_join(saver, NULL) == 0);
    strata_observer_remove(o);
    strata_context_free(ctx);
    CHECK(s.freed == 1);
    free(path);
}

/* ---- 6. bad input -------------------------------------------------------- */

/* A descriptor strata_fetch_history (and strata_explain_history) refuses with INVALID at `path`. */
static void check_bad(strata_context *ctx, const char *descriptor, const char *path) {
    char code[256], got_path[256];
    char *text = NULL;
    strata_status st = strata_fetch_history(ctx, descriptor, &text);
    if (st != STRATA_ERR_INVALID) {
        fprintf(stderr, "descriptor %s\n  returned %d, expected STRATA_ERR_INVALID: %s\n", descriptor, (int)st, strata_last_error());
        exit(1);
    }
    CHECK(text == NULL);
    last_error_fields(code, got_path, sizeof code);
    printf("  %s -> %s at %s\n", descriptor, code, got_path);
    CHECK_STR_EQ(got_path, path);
    CHECK_ERROR_CODE(strata_explain_history(ctx, descriptor, &text), STRATA_ERR_INVALID);
    CHECK(text == NULL);
}

static void test_bad_input(void) {
    printf("bad input\n");
    strata_container *db = check_open("{\"schema\": " SCHEMA ", \"inMemory\": true}", NULL);
    strata_context *ctx = check_context(db);
    free(insert(ctx, "Trip", "{\"name\": \"A\", \"destination\": \"a\"}"));
    CHECK_STATUS(strata_save(ctx));
    char *t = latest_token(ctx);
    char *text = NULL;

    check_bad(ctx, "{\"limit\": 1}", "/limit");
    check_bad(ctx, "[]", "");
    check_bad(ctx, "{\"sortBy\": [{\"key\": \"name\"}]}", "/sortBy/0/key");
    check_bad(ctx, "{\"sortBy\": [{\"key\": \"token\", \"order\": \"up\"}]}", "/sortBy/0/order");
    check_bad(ctx, "{\"sortBy\": {\"key\": \"token\"}}", "/sortBy");
    check_bad(ctx, "{\"fetchLimit\": -1}", "/fetchLimit");
    check_bad(ctx, "{\"fetchLimit\": \"1\"}", "/fetchLimit");
    check_bad(ctx, "{\"bindings\": 3}", "/bindings");
    /* A bound value that is not a token: the path is the binding's (its text stays out of the message). */
    check_bad(ctx, "{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"not a token\"}}", "/bindings/t");
    check_bad(ctx, "{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": 42}}", "/predicate");
    check_bad(ctx, "{\"predicate\": \"$0.token > t\"}", "/predicate");
    check_bad(ctx, "{\"predicate\": \"$0.foo == 1\"}", "/predicate");
    check_bad(ctx, "{\"predicate\": \"$0.changes.contains { $0.changedPersistentIdentifier.foo == \\\"Trip\\\" }\"}", "/predicate");
    check_bad(ctx, "{\"predicate\": \"$0.author > 3\"}", "/predicate");
    check_bad(ctx, "{\"predicate\": \"$0.timestamp > \\\"yesterday\\\"\"}", "/predicate");
    check_bad(ctx, "{\"predicate\": \"$0.token >\"}", "/predicate");
    check_bad(ctx, "{\"predicate\": {\">\": [{\"key\": \"foo\"}, 1]}}", "/predicate/>/0/key");
    check_bad(ctx, "{\"predicate\": {\">\": [{\"key\": \"token\"}, {\"var\": \"t\"}]}}", "/predicate/>/1/var");
    check_bad(ctx, "{", "");

    /* delete_history: the same checks, plus no sortBy or fetchLimit; NULL is misuse. */
    CHECK_ERROR_CODE(strata_delete_history(ctx, "{\"fetchLimit\": 1}"), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_delete_history(ctx, "{\"sortBy\": [{\"key\": \"token\"}]}"), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_delete_history(ctx, "{\"predicate\": \"$0.foo > 1\"}"), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_delete_history(ctx, NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_fetch_history(ctx, NULL, NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_fetch_history(NULL, NULL, &text), STRATA_ERR_MISUSE);
    CHECK(text == NULL);
    /* Nothing was deleted by the refused calls. */
    char *again = latest_token(ctx);
    CHECK_STR_EQ(again, t);
    free(again);

    strata_context_free(ctx);
    strata_close(db);
    free(t);
}

int main(void) {
    test_recording();
    test_links();
    test_listings();
    test_expiry();
    test_observers();
    test_close_ends_observers();
    test_close_waits_for_callbacks();
    test_bad_input();
    printf("ok\n");
    return 0;
}
