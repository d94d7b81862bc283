/*
 * test_hostile_store.c — a store file is untrusted input.
 *
 * Each case of the table below makes a fresh store (every column kind of a
 * Strata store: text, int, double, bool, date, blob, external data, uuid,
 * url, decimal, json, enum, a to-one link, a to-many held by the inverse, a
 * many-to-many join table, a hierarchy; history rows; key sequences;
 * metadata), changes it behind Strata's back with the sqlite3 shell, as an
 * attacker would, and runs it through every kind of call:
 *
 *   - while a container that opened it before the change is still open
 *     (observe + a second container's save + poll, get, fetch, count,
 *     identifiers, prefetch, predicates, save, fetch_history);
 *   - then through a fresh open, the same calls, and a migration to a
 *     version 2 schema followed by the reads again.
 *
 * The rules, for every call: no crash, no hang (each case runs in a child
 * process under alarm()), no STRATA_ERR_INTERNAL, no status outside the
 * enum; a successful read returns valid JSON in which nothing is invented
 * (a fetch has exactly strata_fetch_count() objects and the same identifiers
 * as strata_fetch_identifiers(), every object's keys are the entity's own,
 * every identifier names an entity of the schema); a failed call is one of
 * the statuses damage may cause, first of all STRATA_ERR_CORRUPT.
 *
 * Under valgrind (STRATA_MEMCHECK=1) every 24th case runs, not the whole table.
 * `test_hostile_store TEXT` runs the cases whose name contains TEXT.
 */
#include "check.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>


/* A tampering: SQL run by the sqlite3 shell on the store file. */
struct tampering {
    const char *name;
    const char *sql;
};

static const struct tampering cases[] = {
    /* json columns: text that would become JSON structure */
    {"json closes the array", "UPDATE Trip SET meta = '1],[{\"_id\":\"Trip/9\",\"_entity\":\"Trip\"}' WHERE name = 'A'"},
    {"json two values", "UPDATE Trip SET meta = '{\"a\":1}, \"b\"' WHERE name = 'A'"},
    {"json not json", "UPDATE Trip SET meta = 'not json' WHERE name = 'A'"},
    {"json unterminated", "UPDATE Trip SET meta = '{\"a\":[1,' WHERE name = 'A'"},
    {"json a blob", "UPDATE Trip SET meta = X'7B7D' WHERE name = 'A'"},
    {"json a number", "UPDATE Trip SET meta = 12 WHERE name = 'A'"},
    /* every other column kind, wrongly typed */
    {"int holds text", "UPDATE Trip SET count = 'abc' WHERE name = 'A'"},
    {"int holds real", "UPDATE Trip SET count = 1.5 WHERE name = 'A'"},
    {"int holds blob", "UPDATE Trip SET count = X'00' WHERE name = 'A'"},
    {"double holds text", "UPDATE Trip SET score = 'abc' WHERE name = 'A'"},
    {"bool holds 7", "UPDATE Trip SET done = 7 WHERE name = 'A'"},
    {"bool holds text", "UPDATE Trip SET done = 'yes' WHERE name = 'A'"},
    {"date holds text", "UPDATE Trip SET startDate = 'yesterday' WHERE name = 'A'"},
    {"date far future", "UPDATE Trip SET startDate = 1e300 WHERE name = 'A'"},
    {"date far past", "UPDATE Trip SET startDate = -1e300 WHERE name = 'A'"},
    {"data holds text", "UPDATE Trip SET photo = 'text' WHERE name = 'A'"},
    {"data holds int", "UPDATE Trip SET photo = 12 WHERE name = 'A'"},
    {"external data names a path", "UPDATE Trip SET album = '../../etc/passwd' WHERE name = 'A'"},
    {"external data holds int", "UPDATE Trip SET album = 12 WHERE name = 'A'"},
    {"uuid not a uuid", "UPDATE Trip SET uid = 'not-a-uuid\"}' WHERE name = 'A'"},
    {"url invalid utf-8", "UPDATE Trip SET site = CAST(X'68C328FF' AS TEXT) WHERE name = 'A'"},
    {"decimal not a number", "UPDATE Trip SET price = 'abc' WHERE name = 'A'"},
    {"decimal holds real", "UPDATE Trip SET price = 1.5 WHERE name = 'A'"},
    {"string invalid utf-8", "UPDATE Trip SET name = CAST(X'C328' AS TEXT) WHERE name = 'A'"},
    {"string quotes and controls", "UPDATE Trip SET name = 'a\"b\\' || char(1) || char(10) WHERE name = 'A'"},
    {"string a blob", "UPDATE Trip SET name = X'22414222' WHERE name = 'A'"},
    {"required string null", "UPDATE Trip SET name = NULL WHERE name = 'A'"},
    {"enum non-member", "UPDATE Trip SET kind = 'space' WHERE name = 'A'"},
    /* links and identities */
    {"link holds text", "UPDATE Trip SET stay = 'Stay/1' WHERE name = 'A'"},
    {"link dangles", "UPDATE Trip SET stay = 999 WHERE name = 'A'"},
    {"link negative", "UPDATE Trip SET stay = -1 WHERE name = 'A'"},
    {"link holds real", "UPDATE Trip SET stay = 1.5 WHERE name = 'A'"},
    {"inverse link holds text", "UPDATE Item SET trip = 'abc'"},
    {"inverse link dangles", "UPDATE Item SET trip = 999 WHERE title = 'i1'"},
    {"entity unknown", "UPDATE Trip SET _entity = 'Nope' WHERE name = 'B'"},
    {"entity breaks quotes", "UPDATE Trip SET _entity = 'Trip\",\"evil\":\"1' WHERE name = 'B'"},
    {"linked entity breaks quotes", "UPDATE Stay SET _entity = 'Stay\"],\"x\":[\"y'"},
    {"subentity of another root", "UPDATE Trip SET _entity = 'Item' WHERE name = 'B'"},
    {"join table dangles", "UPDATE Tag_trips SET _target = 999"},
    {"join table holds text", "UPDATE Tag_trips SET _source = 'x'"},
    {"key at the maximum", "UPDATE Trip SET _pk = 9223372036854775807 WHERE name = 'B'"},
    /* key sequences */
    {"key sequence at the maximum", "UPDATE strata_sequence SET next = 9223372036854775807"},
    {"key sequence negative", "UPDATE strata_sequence SET next = -5"},
    {"key sequence text", "UPDATE strata_sequence SET next = 'abc'"},
    {"key sequence gone", "DELETE FROM strata_sequence"},
    /* schema objects Strata did not create */
    {"view over an endless query",
     "DROP TABLE Item; CREATE VIEW Item AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
     "SELECT x AS _pk, 'Item' AS _entity, 'a' AS title, NULL AS trip FROM c"},
    {"trigger deletes other data", "CREATE TRIGGER t AFTER INSERT ON Trip BEGIN DELETE FROM Tag; END"},
    {"trigger that never ends",
     "CREATE TRIGGER t BEFORE UPDATE ON Trip BEGIN SELECT count(*) FROM (WITH RECURSIVE c(x) AS "
     "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c); END"},
    {"foreign table and index", "CREATE TABLE extra (x); CREATE INDEX odd ON Trip (count)"},
    {"column dropped", "ALTER TABLE Trip DROP COLUMN price"},
    {"table dropped", "DROP TABLE Stay"},
    {"join table dropped", "DROP TABLE Tag_trips"},
    /* history */
    {"history sequence at the maximum",
     "UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'strata_history_transaction'"},
    {"history sequence a real", "UPDATE sqlite_sequence SET seq = 2.5e301 WHERE name = 'strata_history_transaction'"},
    {"history sequence text", "UPDATE sqlite_sequence SET seq = 'x' WHERE name = 'strata_history_transaction'"},
    {"history token at the maximum",
     "UPDATE strata_history_transaction SET token = 9223372036854775807 WHERE token = (SELECT max(token) FROM strata_history_transaction)"},
    {"history change count huge", "UPDATE strata_history_change SET count = 2147483647"},
    {"history change count negative", "UPDATE strata_history_change SET count = -1"},
    {"history change kind unknown", "UPDATE strata_history_change SET kind = 99"},
    {"history change entity unknown", "UPDATE strata_history_change SET entity = 999"},
    {"history change keys garbage", "UPDATE strata_history_change SET keys = 'garbage\"]'"},
    {"history change attributes garbage", "UPDATE strata_history_change SET attributes = '[\"x'"},
    {"history names garbage", "UPDATE strata_history_name SET entity = 'Trip\",\"x' WHERE id = (SELECT min(id) FROM strata_history_name)"},
    {"history timestamp text", "UPDATE strata_history_transaction SET timestamp = 'x'"},
    {"history entities garbage", "UPDATE strata_history_transaction SET entities = '{'"},
    {"history change table dropped", "DROP TABLE strata_history_change"},
    /* metadata */
    {"version hash differs", "UPDATE strata_metadata SET value = 'x' WHERE key = 'versionHash'"},
    {"schema unreadable", "UPDATE strata_metadata SET value = '{' WHERE key = 'schema'"},
    {"schema empty", "UPDATE strata_metadata SET value = '{\"version\":\"1.0.0\",\"entities\":[]}' WHERE key = 'schema'"},
    {"version label quote", "UPDATE strata_metadata SET value = '1.0\"' WHERE key = 'version'"},
    {"format from the future", "UPDATE strata_metadata SET value = 99 WHERE key = 'formatVersion'"},
    {"store uuid empty", "UPDATE strata_metadata SET value = '' WHERE key = 'storeUUID'"},
    {"store uuid quote", "UPDATE strata_metadata SET value = 'x\"y' WHERE key = 'storeUUID'"},
    {"entity hashes not an object", "UPDATE strata_metadata SET value = '[]' WHERE key = 'entityHashes'"},
    {"schema row gone", "DELETE FROM strata_metadata WHERE key = 'schema'"},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static const char *case_name = "";
static const char *phase = "";

#define FAIL(...)                                                                       \
    do {                                                                                \
        fprintf(stderr, "%s:%d: [%s, %s] ", __FILE__, __LINE__, case_name, phase);      \
        fprintf(stderr, __VA_ARGS__);                                                   \
        fputc('\n', stderr);                                                            \
        exit(1);                                                                        \
    } while (0)

#define HOSTILE_FAIL FAIL
#include "hostile_fixture.h"

/* A status damage may cause, per kind of call. */
enum call_kind { READ, WRITE, BY_ID, OPEN };   /* BY_ID: a call given identifiers (get, insert, update, delete) */

static int allowed(strata_status st, enum call_kind kind) {
    switch (st) {
    case STRATA_OK: case STRATA_ERR_CORRUPT: return 1;
    case STRATA_ERR_INCOMPATIBLE_STORE: return 1;   /* not this container's version any more, or not a store it can take */
    case STRATA_ERR_NOT_FOUND: return kind != OPEN;            /* the object is gone (or never was) */
    case STRATA_ERR_INVALID: return kind == BY_ID;   /* the (damaged) store says the object is of another entity */
    case STRATA_ERR_CONSTRAINT: case STRATA_ERR_VALIDATION: return kind == WRITE || kind == BY_ID;   /* a save's rules */
    case STRATA_ERR_HISTORY_EXPIRED: return kind == READ;
    default: return 0;
    }
}

static strata_status checked(strata_status st, enum call_kind kind, const char *call) {
    const char *error = strata_last_error();
    if ((int)st < 0 || (int)st > (int)STRATA_ERR_HISTORY_EXPIRED) FAIL("%s returned %d, not a status", call, (int)st);
    if (!allowed(st, kind)) FAIL("%s returned %s: %s", call, strata_errstr(st), error ? error : "(null)");
    if (st != STRATA_OK) {
        json_object *e = json_tokener_parse(error ? error : "");
        if (!e || !json_object_is_type(e, json_type_object)) FAIL("%s: the last error is not a JSON object: %s", call, error);
        json_object_put(e);
    }
    return st;
}

#define CALL(kind, expr) checked((expr), (kind), #expr)

/* A fetch, its count and its identifiers: the same objects, nothing invented. */
static void check_fetch(strata_context *ctx, const char *descriptor) {
    char *json = NULL, *ids = NULL;
    int64_t count = -1;
    strata_status a = CALL(READ, strata_fetch(ctx, descriptor, &json));
    strata_status b = CALL(READ, strata_fetch_count(ctx, descriptor, &count));
    strata_status c = CALL(READ, strata_fetch_identifiers(ctx, descriptor, &ids));
    json_object *objects = NULL, *idv = NULL;
    if (a == STRATA_OK) {
        objects = parse_all(json, descriptor);
        if (!json_object_is_type(objects, json_type_array)) FAIL("%s: not an array", descriptor);
        for (size_t i = 0; i < json_object_array_length(objects); i++) check_object(json_object_array_get_idx(objects, i), descriptor);
    }
    if (c == STRATA_OK) {
        idv = parse_all(ids, descriptor);
        if (!json_object_is_type(idv, json_type_array)) FAIL("%s: identifiers not an array", descriptor);
        for (size_t i = 0; i < json_object_array_length(idv); i++) {
            json_object *s = json_object_array_get_idx(idv, i);
            if (!json_object_is_type(s, json_type_string)) FAIL("%s: an identifier that is not a string", descriptor);
            check_identifier(json_object_get_string(s), descriptor);
        }
    }
    if (a == STRATA_OK && b == STRATA_OK && (int64_t)json_object_array_length(objects) != count)
        FAIL("%s: strata_fetch returned %zu objects, strata_fetch_count says %lld: %.400s", descriptor,
             json_object_array_length(objects), (long long)count, json);
    if (a == STRATA_OK && c == STRATA_OK) {
        if (json_object_array_length(objects) != json_object_array_length(idv))
            FAIL("%s: %zu objects but %zu identifiers", descriptor, json_object_array_length(objects), json_object_array_length(idv));
        for (size_t i = 0; i < json_object_array_length(idv); i++) {
            const char *x = check_str_member(json_object_array_get_idx(objects, i), "_id");
            const char *y = json_object_get_string(json_object_array_get_idx(idv, i));
            if (!x || strcmp(x, y)) FAIL("%s: object %zu is %s, identifier %zu is %s", descriptor, i, x ? x : "?", i, y);
        }
    }
    if (objects) json_object_put(objects);
    if (idv) json_object_put(idv);
    strata_free(json);
    strata_free(ids);
}

static const char *const descriptors[] = {
    "{\"entity\": \"Trip\"}",
    "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\"}]}",
    "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"items\", \"stay\", \"tags\"]}",
    "{\"entity\": \"Trip\", \"includeSubentities\": false}",
    "{\"entity\": \"BusinessTrip\"}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.count > 0\"}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.score >= 1.0 || $0.done == true\"}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.name.localizedStandardContains(\\\"a\\\")\"}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.startDate > d\", \"bindings\": {\"d\": \"2025-01-01T00:00:00Z\"}}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.kind == \\\"work\\\"\"}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.items.count > 0\"}",
    "{\"entity\": \"Trip\", \"predicate\": \"$0.stay != nil\"}",
    "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\", \"meta\"]}",
    "{\"entity\": \"Item\", \"relationshipKeyPathsForPrefetching\": [\"trip\"]}",
    "{\"entity\": \"Item\", \"predicate\": \"$0.trip != nil\"}",
    "{\"entity\": \"Stay\"}",
    "{\"entity\": \"Tag\", \"relationshipKeyPathsForPrefetching\": [\"trips\"]}",
};

static const char *const ids[] = {"BusinessTrip/1", "Trip/2", "Item/1", "Item/3", "Stay/1", "Tag/1", "Tag/2"};

static void check_reads(strata_context *ctx) {
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *json = NULL;
        if (CALL(BY_ID, strata_get(ctx, ids[i], &json)) == STRATA_OK) {
            json_object *o = parse_all(json, ids[i]);
            check_object(o, ids[i]);
            json_object_put(o);
        }
        strata_free(json);
    }
    for (size_t i = 0; i < sizeof descriptors / sizeof descriptors[0]; i++) check_fetch(ctx, descriptors[i]);
    char *json = NULL;
    if (CALL(READ, strata_fetch_history(ctx, "{}", &json)) == STRATA_OK) json_object_put(parse_all(json, "history"));
    strata_free(json);
    json = NULL;
    if (CALL(READ, strata_fetch_history(ctx, "{\"predicate\": \"$0.changes.contains { $0.changedPersistentIdentifier.entityName == \\\"Trip\\\" }\"}", &json)) == STRATA_OK)
        json_object_put(parse_all(json, "history with a predicate"));
    strata_free(json);
    json = NULL;
    /* A cursor reads the same objects in batches. */
    strata_cursor *cursor = NULL;
    if (CALL(READ, strata_fetch_cursor(ctx, "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"items\"]}", &cursor)) == STRATA_OK) {
        for (int guard = 0; guard < 100; guard++) {
            json = NULL;
            if (CALL(READ, strata_cursor_next(cursor, 1, &json)) != STRATA_OK) break;
            json_object *batch = parse_all(json, "cursor batch");
            size_t n = json_object_array_length(batch);
            for (size_t i = 0; i < n; i++) check_object(json_object_array_get_idx(batch, i), "cursor batch");
            json_object_put(batch);
            strata_free(json);
            json = NULL;
            if (n == 0) break;
        }
        strata_free(json);
        strata_cursor_free(cursor);
    }
}

/* Changes of every kind, saved: the save either commits or fails leaving the store as it was. */
static void check_writes(strata_context *ctx) {
    char *id = NULL;
    CALL(BY_ID, strata_insert(ctx, "Trip", "{\"name\": \"C\", \"startDate\": 5, \"meta\": [1], \"items\": [{\"title\": \"i9\"}], "
                                           "\"stay\": {\"place\": \"Q\"}, \"tags\": [\"Tag/1\"]}", &id));
    strata_free(id);
    CALL(BY_ID, strata_insert(ctx, "Trip", "{\"name\": \"A\", \"startDate\": 7}", NULL));   /* an upsert of a saved trip */
    CALL(BY_ID, strata_update(ctx, "Trip/2", "{\"count\": 4, \"kind\": \"work\", \"stay\": \"Stay/1\"}"));
    CALL(BY_ID, strata_delete(ctx, "Item/3"));
    if (CALL(WRITE, strata_save(ctx)) != STRATA_OK) strata_rollback(ctx);
    CALL(WRITE, strata_delete_where(ctx, "Tag", "{\"predicate\": \"$0.trips.count == 0\"}"));
    if (CALL(WRITE, strata_save(ctx)) != STRATA_OK) strata_rollback(ctx);
}

static int delivered = 0;
static void on_change(const char *changes, void *userdata) {
    (void)userdata;
    json_object *v = parse_all(changes, "observer");
    if (!json_object_is_type(v, json_type_object)) FAIL("an observer's change set that is not an object: %s", changes);
    json_object_put(v);
    delivered++;
}

static strata_config *config_of(const char *json) {
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    return cfg;
}

/* The store every case starts from. */
static void make_store(const char *path) {
    strata_container *db = check_open(hostile_config_v1, path);
    strata_context *ctx = check_context(db);
    CHECK_STATUS(hostile_fill(ctx));
    strata_context_free(ctx);
    strata_close(db);
}

/* Another container of this process saves a new stay, and closes. */
static void save_from_another_container(const char *path) {
    strata_container *other = check_open(hostile_config_v1, path);
    strata_context *octx = check_context(other);
    CHECK_STATUS(strata_insert(octx, "Stay", "{\"place\": \"R\"}", NULL));
    CHECK_STATUS(strata_save(octx));
    strata_context_free(octx);
    strata_close(other);
}

/* Runs the sqlite3 shell on the store, as an attacker would. */
static void tamper(const char *path, const char *sql) {
    pid_t pid = fork();
    if (pid < 0) FAIL("fork: %s", strerror(errno));
    if (pid == 0) {
        int null = open("/dev/null", 0);
        if (null >= 0) dup2(null, 0);
        execlp("sqlite3", "sqlite3", "-bail", path, sql, (char *)NULL);
        fprintf(stderr, "sqlite3: %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) FAIL("the tampering itself failed (sqlite3 exit %d): %s", WEXITSTATUS(status), sql);
}

static void run_case(const struct tampering *t, const char *path) {
    case_name = t->name;
    make_store(path);

    /* A container that opened the store before the change, with an observer. */
    phase = "open container";
    strata_config *cfg = config_of(hostile_config_v1);
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(path, cfg, &db));
    strata_observer *observer = NULL;
    CHECK_STATUS(strata_observe(db, NULL, on_change, NULL, NULL, &observer));
    save_from_another_container(path);   /* the poll below has a transaction to deliver */
    tamper(path, t->sql);
    CALL(READ, strata_poll_changes(db));
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    check_reads(ctx);
    check_writes(ctx);
    check_reads(ctx);
    CALL(READ, strata_poll_changes(db));
    strata_context_free(ctx);
    strata_observer_remove(observer);
    strata_close(db);

    /* A fresh open of the changed file. */
    phase = "fresh open";
    db = NULL;
    if (CALL(OPEN, strata_open(path, cfg, &db)) == STRATA_OK) {
        if (!db) FAIL("strata_open returned OK and no container");
        CALL(READ, strata_observe(db, "{}", on_change, NULL, NULL, &observer));
        CHECK_STATUS(strata_context_new(db, &ctx));
        check_reads(ctx);
        check_writes(ctx);
        check_reads(ctx);
        strata_context_free(ctx);
        strata_close(db);
    } else if (db) {
        FAIL("a failed strata_open left a container");
    }
    strata_config_free(cfg);

    /* A migration of the changed file, then the reads on the new version. */
    phase = "migration";
    cfg = config_of(hostile_config_v2);
    db = NULL;
    if (CALL(OPEN, strata_open(path, cfg, &db)) == STRATA_OK) {
        CHECK_STATUS(strata_context_new(db, &ctx));
        check_reads(ctx);
        strata_context_free(ctx);
        strata_close(db);
    }
    strata_config_free(cfg);
}

/*
 * Opening a second container on a file must not drop the first one's locks (closing any
 * descriptor of a file releases every POSIX lock the process holds on it): else another
 * process takes the first container for gone, checkpoints and removes the WAL under it,
 * and its next read fails with a disk I/O error (or reads a stale page).
 */
static void second_container_keeps_the_first_ones_locks(void) {
    case_name = "a second container in the process";
    phase = "";
    char *path = test_store_path("locks.store");
    make_store(path);
    strata_container *a = check_open(hostile_config_v1, path);
    strata_observer *observer = NULL;
    CHECK_STATUS(strata_observe(a, NULL, on_change, NULL, NULL, &observer));
    save_from_another_container(path);
    /* Another process writes (and, thinking it alone, would checkpoint and remove the WAL). */
    tamper(path, "INSERT INTO Stay (_pk, _entity, place) VALUES (1000, 'Stay', 'S')");
    /* The shell saw a's locks: it left the WAL that a has open alone. */
    char *wal = check_strf("%s-wal", path);
    if (access(wal, F_OK) != 0) FAIL("another process removed the WAL of an open container: its locks were dropped");
    free(wal);
    CHECK_STATUS(strata_poll_changes(a));
    strata_context *ctx = check_context(a);
    int64_t after = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Stay\"}", &after));
    if (after != 3) FAIL("the first container reads %lld stays, expected 3", (long long)after);
    strata_context_free(ctx);
    strata_observer_remove(observer);
    strata_close(a);
    free(path);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    second_container_keeps_the_first_ones_locks();
    const char *only = argc > 1 ? argv[1] : NULL;
    int memcheck = getenv("STRATA_MEMCHECK") != NULL;
    int failed = 0, ran = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        if (only && !strstr(cases[i].name, only)) continue;
        if (memcheck && !only && i % 24 != 0) continue;   /* valgrind: every 24th case */
        char name[64];
        snprintf(name, sizeof name, "hostile%zu.store", i);
        char *path = test_store_path(name);
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            alarm(memcheck ? 600 : 60);   /* a hang is a failure, not a stuck test */
            run_case(&cases[i], path);
            free(path);   /* the child's copy: valgrind checks each child's memory at its exit */
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        ran++;
        if (WIFSIGNALED(status)) {
            fprintf(stderr, "FAIL [%s]: %s\n", cases[i].name,
                    WTERMSIG(status) == SIGALRM ? "hung (no answer within the time limit)" : strsignal(WTERMSIG(status)));
            failed++;
        } else if (WEXITSTATUS(status) != 0) {
            fprintf(stderr, "FAIL [%s]\n", cases[i].name);
            failed++;
        }
        free(path);
    }
    printf("hostile store: %d tamperings, %d failed\n", ran, failed);
    return failed ? 1 : 0;
}
