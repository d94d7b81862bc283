/*
 * test_integrity.c — strata_check_integrity, strata_backup and strata_vacuum.
 *
 *   integrity: a clean store reports {"ok": true}; then damage made by hand
 *              (the sqlite3 shell on a file, psql on PostgreSQL) — a dangling
 *              link, a link to an object of the wrong entity, an orphaned join
 *              row, an unknown entity name, a value of the wrong storage class,
 *              a missing external-storage file and an orphaned one, a history
 *              row that does not parse — is each found, of its kind, naming the
 *              entity and the object;
 *   backup:    taken while a second process (this program run again with
 *              "--child") inserts and saves trip-00001, trip-00002, … each with
 *              an external-storage photo: the copy opens, passes the check, and
 *              holds trip-00001..k for some k, no gap, every photo readable; an
 *              existing destination is refused unless {"overwrite": true}; on
 *              PostgreSQL the call is refused naming pg_dump;
 *   vacuum:    after deleting most objects, the store reads the same; a cursor
 *              open across the vacuum reads on.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#define SCHEMA                                                                                          \
    "{\"version\": \"1.0.0\", \"entities\": ["                                                          \
    " {\"name\": \"Trip\", \"attributes\": ["                                                           \
    "   {\"name\": \"name\", \"type\": \"string\"},"                                                    \
    "   {\"name\": \"photo\", \"type\": \"data\", \"optional\": true, \"externalStorage\": true}],"     \
    "  \"relationships\": [{\"name\": \"tags\", \"destination\": \"Tag\", \"toMany\": true,"            \
    "                       \"inverse\": \"trips\"}]},"                                                 \
    " {\"name\": \"BusinessTrip\", \"superentity\": \"Trip\","                                          \
    "  \"attributes\": [{\"name\": \"perdiem\", \"type\": \"double\", \"default\": 0}]},"               \
    " {\"name\": \"Tag\", \"attributes\": [{\"name\": \"label\", \"type\": \"string\"}],"               \
    "  \"relationships\": [{\"name\": \"trips\", \"destination\": \"Trip\", \"toMany\": true,"          \
    "                       \"inverse\": \"tags\"}]},"                                                  \
    " {\"name\": \"Item\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}],"              \
    "  \"relationships\": [{\"name\": \"trip\", \"destination\": \"BusinessTrip\", \"optional\": true}]}]}"

/* 48 bytes, over the threshold below: kept as a file on SQLite. */
#define PHOTO "\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v\""

static strata_container *open_store(const char *path) {
    return check_open("{\"schema\": " SCHEMA ", \"externalStorageThreshold\": 16}", path);
}

/* Runs SQL on the store outside Strata (sqlite3 or psql, triggers and foreign keys off on
 * PostgreSQL) and returns the first line it prints (malloc'd, maybe empty). */
static char *run_sql(const char *path, const char *sql) {
    char *cmd = check_postgres()
        ? check_strf("psql -X -q -At -v ON_ERROR_STOP=1 '%s' -c \"SET session_replication_role = replica\" -c \"%s\" 2>&1", path, sql)
        : check_strf("sqlite3 '%s' \"%s\" 2>&1", path, sql);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    char line[512] = "";
    if (fgets(line, sizeof line, p) == NULL) line[0] = '\0';
    char rest[512];
    while (fgets(rest, sizeof rest, p) != NULL) {}
    int status = pclose(p);
    if (status != 0) {
        fprintf(stderr, "%s failed: %s\n", cmd, line);
        exit(1);
    }
    free(cmd);
    line[strcspn(line, "\n")] = '\0';
    return strdup(line);
}

static struct json_object *check_report(strata_container *db) {
    char *json = NULL;
    CHECK_STATUS(strata_check_integrity(db, &json));
    struct json_object *report = parse_json_or_die(json);
    strata_free(json);
    return report;
}

/* The problem of `kind` naming `entity` and `id` (NULL: any), or NULL. */
static struct json_object *find_problem(struct json_object *report, const char *kind, const char *entity, const char *id) {
    struct json_object *problems = check_member(report, "problems");
    for (size_t i = 0; i < json_object_array_length(problems); i++) {
        struct json_object *p = json_object_array_get_idx(problems, i), *v;
        if (strcmp(check_str_member(p, "kind"), kind) != 0) continue;
        if (entity && (!json_object_object_get_ex(p, "entity", &v) || strcmp(json_object_get_string(v), entity) != 0)) continue;
        if (id && (!json_object_object_get_ex(p, "id", &v) || strcmp(json_object_get_string(v), id) != 0)) continue;
        return p;
    }
    return NULL;
}

static void expect_problem(struct json_object *report, const char *kind, const char *entity, const char *id) {
    if (find_problem(report, kind, entity, id) == NULL) {
        fprintf(stderr, "no '%s' problem of %s %s in %s\n", kind, entity ? entity : "-", id ? id : "-",
                json_object_to_json_string(report));
        exit(1);
    }
}

static char *insert(strata_context *ctx, const char *entity, const char *json) {
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, entity, json, &id));
    return id;
}

/* "Trip/12" -> "12" (a pointer into id). */
static const char *key_of(const char *id) { return strchr(id, '/') + 1; }

static void test_integrity(void) {
    char *path = test_store_path("integrity.store");
    strata_container *db = open_store(path);
    strata_context *ctx = check_context(db);
    char *t1 = insert(ctx, "Trip", "{\"name\": \"t1\", \"photo\": " PHOTO "}");
    char *t2 = insert(ctx, "Trip", "{\"name\": \"t2\"}");
    char *b1 = insert(ctx, "BusinessTrip", "{\"name\": \"b1\"}");
    char *tag = insert(ctx, "Tag", "{\"label\": \"red\"}");
    char *u1 = check_strf("{\"title\": \"i1\", \"trip\": \"%s\"}", b1);
    char *i1 = insert(ctx, "Item", u1);
    char *i2 = insert(ctx, "Item", "{\"title\": \"i2\"}");
    char *link = check_strf("{\"tags\": [\"%s\"]}", tag);
    CHECK_STATUS(strata_update(ctx, t2, link));
    CHECK_STATUS(strata_save(ctx));

    struct json_object *report = check_report(db);
    if (!json_object_get_boolean(check_member(report, "ok"))) {
        fprintf(stderr, "a clean store is not ok: %s\n", json_object_to_json_string(report));
        exit(1);
    }
    CHECK(json_object_array_length(check_member(report, "problems")) == 0);
    json_object_put(report);

    /* The damage, by hand. */
    char *sql;
    sql = check_strf("UPDATE \\\"Item\\\" SET trip = 999999 WHERE _pk = %s", key_of(i1));
    free(run_sql(path, sql)); free(sql);
    sql = check_strf("UPDATE \\\"Item\\\" SET trip = %s WHERE _pk = %s", key_of(t2), key_of(i2));
    free(run_sql(path, sql)); free(sql);
    char *pairs = run_sql(path, check_postgres()
        ? "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ('Trip_tags', 'Tag_trips')"
        : "SELECT name FROM sqlite_master WHERE name IN ('Trip_tags', 'Tag_trips')");
    CHECK(pairs[0] != '\0');
    sql = check_strf("INSERT INTO \\\"%s\\\" (_source, _target) VALUES (888888, 888888)", pairs);
    free(run_sql(path, sql)); free(sql);
    /* PostgreSQL refuses the name while the table holds its entity check. */
    sql = check_strf("%sUPDATE \\\"Trip\\\" SET _entity = 'Nothing' WHERE _pk = %s",
                     check_postgres() ? "ALTER TABLE \\\"Trip\\\" DROP CONSTRAINT strata_entities; " : "", key_of(b1));
    free(run_sql(path, sql)); free(sql);
    free(run_sql(path, "UPDATE strata_history_change SET kind = 9 WHERE token = (SELECT min(token) FROM strata_history_change)"));
    char *photo = NULL;
    if (!check_skip_part_on_postgres("values of the wrong storage class and external-storage files are SQLite's")) {
        sql = check_strf("UPDATE Trip SET name = x'00ff' WHERE _pk = %s", key_of(t2));
        free(run_sql(path, sql)); free(sql);
        sql = check_strf("SELECT photo FROM Trip WHERE _pk = %s", key_of(t1));
        photo = run_sql(path, sql); free(sql);
        CHECK(strlen(photo) == 36);
        char *file = check_strf("%s.strata/%s", path, photo);
        CHECK(unlink(file) == 0);
        free(file);
        char *orphan = check_strf("%s.strata/0E4C3E7A-5B51-4B8B-9A52-6D6B4C9F2A11", path);
        FILE *f = fopen(orphan, "w");
        CHECK(f != NULL);
        fputs("left behind", f);
        fclose(f);
        free(orphan);
    }

    report = check_report(db);
    CHECK(!json_object_get_boolean(check_member(report, "ok")));
    expect_problem(report, "link", "Item", i1);
    expect_problem(report, "link", "Item", i2);
    char *pair_id = check_strf("%s/888888", strcmp(pairs, "Trip_tags") == 0 ? "Trip" : "Tag");
    expect_problem(report, "pair", NULL, pair_id);
    char *b1_damaged = check_strf("Nothing/%s", key_of(b1));
    expect_problem(report, "value", "Trip", b1_damaged);
    expect_problem(report, "history", NULL, NULL);
    if (!check_postgres()) {
        expect_problem(report, "value", "Trip", t2);
        expect_problem(report, "external", "Trip", t1);
        struct json_object *orphan = find_problem(report, "external", NULL, NULL);
        CHECK(orphan != NULL);
        int found = 0;
        struct json_object *problems = check_member(report, "problems");
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
            const char *m = check_str_member(json_object_array_get_idx(problems, i), "message");
            if (strstr(m, "0E4C3E7A-5B51-4B8B-9A52-6D6B4C9F2A11") && strstr(m, "orphan")) found = 1;
        }
        CHECK(found);
        /* SQLite's own check is clean: the damage is Strata's to find. */
        CHECK(find_problem(report, "sqlite", NULL, NULL) == NULL);
    }
    CHECK(find_problem(report, "table", NULL, NULL) == NULL);
    json_object_put(report);

    /* A table that no longer matches the schema is reported as such. */
    if (!check_postgres()) {
        free(run_sql(path, "DROP INDEX \\\"Item.fk(trip)\\\""));
        report = check_report(db);
        expect_problem(report, "table", NULL, NULL);
        json_object_put(report);
    }

    CHECK_ERROR_CODE(strata_check_integrity(NULL, &sql), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_check_integrity(db, NULL), STRATA_ERR_MISUSE);
    free(pair_id); free(b1_damaged); free(photo); free(pairs); free(link); free(u1);
    strata_free(t1); strata_free(t2); strata_free(b1); strata_free(tag); strata_free(i1); strata_free(i2);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
    printf("integrity: ok\n");
}

/* ---- backup ---------------------------------------------------------------- */

/* The writer: saves trip-00001, trip-00002, … one per save, until killed or `count` saved. */
static int child_writer(const char *path) {
    strata_container *db = open_store(path);
    strata_context *ctx = check_context(db);
    for (int i = 1; i <= 100000; i++) {
        char *json = check_strf("{\"name\": \"trip-%05d\", \"photo\": " PHOTO "}", i);
        char *id = insert(ctx, "Trip", json);
        CHECK_STATUS(strata_save(ctx));
        strata_free(id);
        free(json);
    }
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}

static int64_t count_trips(strata_context *ctx) {
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n));
    return n;
}

static void test_backup(const char *self) {
    char *path = test_store_path("backup.store");
    strata_container *db = open_store(path);
    if (check_postgres()) {
        CHECK_ERROR_CODE(strata_backup(db, "backup.copy", NULL), STRATA_ERR_INVALID);
        CHECK(strstr(strata_last_error(), "pg_dump") != NULL);
        strata_close(db);
        free(path);
        printf("backup: refused on PostgreSQL\n");
        return;
    }
    strata_context *ctx = check_context(db);
    char *copy = test_store_path("backup.copy");

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl(self, self, "--child", "writer", path, (char *)NULL);
        perror("execl");
        _exit(127);
    }
    /* Some saves first, so that the copy holds some and the writer goes on during it. */
    while (count_trips(ctx) < 50) usleep(10000);
    CHECK_STATUS(strata_backup(db, copy, NULL));
    int64_t at_backup = count_trips(ctx);
    /* A second backup while the writer goes on: refused (it exists), then overwritten. */
    CHECK_ERROR_CODE(strata_backup(db, copy, "{}"), STRATA_ERR_INVALID);
    CHECK(strstr(strata_last_error(), "backup.copy") != NULL);
    CHECK_ERROR_CODE(strata_backup(db, copy, "{\"overwrite\": 1}"), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_backup(db, copy, "{\"replace\": true}"), STRATA_ERR_INVALID);
    CHECK_STATUS(strata_backup(db, copy, "{\"overwrite\": true}"));
    kill(pid, SIGKILL);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(at_backup >= 50);

    strata_container *backup = open_store(copy);
    struct json_object *report = check_report(backup);
    if (!json_object_get_boolean(check_member(report, "ok"))) {
        fprintf(stderr, "the backup is damaged: %s\n", json_object_to_json_string(report));
        exit(1);
    }
    json_object_put(report);
    strata_context *bctx = check_context(backup);
    char *json = NULL;
    CHECK_STATUS(strata_fetch(bctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\"}]}", &json));
    struct json_object *trips = parse_json_or_die(json);
    strata_free(json);
    size_t k = json_object_array_length(trips);
    CHECK(k >= 50);
    for (size_t i = 0; i < k; i++) {
        struct json_object *t = json_object_array_get_idx(trips, i);
        char want[32];
        snprintf(want, sizeof want, "trip-%05zu", i + 1);
        CHECK_STR_EQ(check_str_member(t, "name"), want);
        CHECK_STR_EQ(check_str_member(t, "photo"), "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v");
    }
    /* Every photo is a file of the copy's own folder. */
    char *folder = check_strf("%s.strata", copy);
    struct stat st;
    CHECK(stat(folder, &st) == 0 && S_ISDIR(st.st_mode));
    json_object_put(trips);

    CHECK_ERROR_CODE(strata_backup(NULL, copy, NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_backup(db, NULL, NULL), STRATA_ERR_MISUSE);
    /* The store itself is no destination. */
    CHECK_ERROR_CODE(strata_backup(db, path, "{\"overwrite\": true}"), STRATA_ERR_INVALID);
    /* A destination that cannot be written leaves nothing behind. */
    char *nowhere = check_strf("%s.missing-dir/copy", path);
    CHECK(strata_backup(db, nowhere, NULL) != STRATA_OK);
    CHECK(stat(nowhere, &st) != 0);
    free(nowhere);
    printf("backup: %zu of the writer's saves, integrity ok\n", k);

    free(folder);
    strata_context_free(bctx);
    strata_close(backup);
    strata_context_free(ctx);
    strata_close(db);
    free(copy);
    free(path);
}

/* ---- vacuum ---------------------------------------------------------------- */

static void test_vacuum(void) {
    char *path = test_store_path("vacuum.store");
    strata_container *db = open_store(path);
    strata_context *ctx = check_context(db);
    for (int i = 0; i < 300; i++) {
        char *json = check_strf("{\"name\": \"v%03d\", \"photo\": " PHOTO "}", i);
        char *id = insert(ctx, "Trip", json);
        strata_free(id);
        free(json);
    }
    CHECK_STATUS(strata_save(ctx));
    int64_t deleted = 0;
    CHECK_STATUS(strata_delete_where_count(ctx, "Trip", "\"$0.name >= \\\"v010\\\"\"", &deleted));
    CHECK(deleted == 290);
    CHECK_STATUS(strata_save(ctx));
    char *before = NULL, *after = NULL;
    const char *all = "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\"}]}";
    CHECK_STATUS(strata_fetch(ctx, all, &before));

    /* A cursor open across the vacuum reads on. */
    strata_cursor *cursor = NULL;
    CHECK_STATUS(strata_fetch_cursor(ctx, all, &cursor));
    char *batch = NULL;
    CHECK_STATUS(strata_cursor_next(cursor, 4, &batch));
    strata_free(batch);
    CHECK_STATUS(strata_vacuum(db));
    CHECK_STATUS(strata_cursor_next(cursor, 100, &batch));
    struct json_object *rest = parse_json_or_die(batch);
    CHECK(json_object_array_length(rest) == 6);
    json_object_put(rest);
    strata_free(batch);
    strata_cursor_free(cursor);

    CHECK_STATUS(strata_vacuum(db));
    CHECK_STATUS(strata_fetch(ctx, all, &after));
    CHECK_STR_EQ(after, before);
    struct json_object *report = check_report(db);
    CHECK(json_object_get_boolean(check_member(report, "ok")));
    json_object_put(report);
    CHECK_ERROR_CODE(strata_vacuum(NULL), STRATA_ERR_MISUSE);
    strata_free(before);
    strata_free(after);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
    printf("vacuum: ok\n");
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "writer") == 0) return child_writer(argv[3]);
    test_integrity();
    test_backup(argv[0]);
    test_vacuum();
    printf("test_integrity: all passed\n");
    return 0;
}
