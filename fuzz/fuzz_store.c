/*
 * fuzz_store.c — libFuzzer harness whose input is a damaged store file.
 *
 * The other harnesses mutate JSON a caller passes; this one mutates the store
 * file itself (DESIGN §5: a store file is untrusted input). At start-up it
 * makes the store of Tests/c/hostile_fixture.h (every column kind, links,
 * a join table, a hierarchy, history rows) and keeps its bytes. Each input
 * then damages a copy, in one of two ways chosen by its first byte:
 *
 *   even: byte patches — the rest is a list of 4-byte records, a 3-byte
 *         little-endian offset into the file and a byte XORed in there
 *         (SQLite's own page structure, headers and records);
 *   odd:  value patches — the rest is a list of records: a table, a column
 *         and a row (each a byte, taken modulo what the store has), a type
 *         byte (integer, real, text, blob, NULL) and a length-prefixed value,
 *         written with SQLite (values of the wrong type, bad text, huge
 *         numbers, in every table: entities, join tables, history, key
 *         sequences, metadata).
 *
 * and runs the damaged file through open, get, fetch (with prefetching),
 * count, identifiers, fetch_history, an observer's poll and a save. Every
 * call must return OK or a status damage may cause (STRATA_ERR_CORRUPT
 * first of all; never STRATA_ERR_INTERNAL), and every successful read must
 * be valid JSON that invents nothing (a fetch has exactly strata_fetch_count
 * objects; every object's keys are its entity's; identifiers name entities
 * of the schema). A broken rule aborts with the input saved as an artifact.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOSTILE_FAIL FUZZ_FAIL
#include "../Tests/c/hostile_fixture.h"

static char store_path[256];
static unsigned char *template_bytes;
static size_t template_size;

/* The external-storage files of the template (<store>.strata/), written again for each input:
   an open sweeps the files its (damaged) rows no longer name. */
#define MAX_FILES 8
static char file_names[MAX_FILES][64];
static unsigned char *file_bytes[MAX_FILES];
static size_t file_sizes[MAX_FILES];
static int n_files;

static void folder_path(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s.strata%s%s", store_path, name ? "/" : "", name ? name : "");
}

static void keep_external_files(void) {
    char folder[300];
    folder_path(folder, sizeof folder, NULL);
    DIR *d = opendir(folder);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL && n_files < MAX_FILES;) {
        if (e->d_name[0] == '.') continue;
        char path[400];
        folder_path(path, sizeof path, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        file_bytes[n_files] = malloc(n > 0 ? (size_t)n : 1);
        if (!file_bytes[n_files] || fread(file_bytes[n_files], 1, (size_t)n, f) != (size_t)n) FUZZ_FAIL("cannot read %s", path);
        fclose(f);
        file_sizes[n_files] = (size_t)n;
        snprintf(file_names[n_files++], sizeof file_names[0], "%s", e->d_name);
    }
    closedir(d);
}

static void remove_external_files(void) {
    char folder[300];
    folder_path(folder, sizeof folder, NULL);
    DIR *d = opendir(folder);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[400];
        folder_path(path, sizeof path, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(folder);
}

static void write_external_files(void) {
    char folder[300];
    folder_path(folder, sizeof folder, NULL);
    mkdir(folder, 0755);
    for (int i = 0; i < n_files; i++) {
        char path[400];
        folder_path(path, sizeof path, file_names[i]);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(file_bytes[i], 1, file_sizes[i], f) != file_sizes[i] || fclose(f) != 0) FUZZ_FAIL("cannot write %s", path);
    }
}

static void remove_store(void) {
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    char name[300];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(name, sizeof name, "%s%s", store_path, suffixes[i]);
        unlink(name);
    }
    remove_external_files();
}

static void write_store(const unsigned char *bytes, size_t size) {
    remove_store();
    FILE *f = fopen(store_path, "wb");
    if (!f || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) FUZZ_FAIL("cannot write %s", store_path);
    write_external_files();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(store_path, sizeof store_path, "/tmp/strata-fuzz-store-%d.store", (int)getpid());
    remove_store();
    atexit(remove_store);
    strata_config *cfg = NULL;
    FUZZ_REQUIRE(strata_config_new(hostile_config_v1, &cfg));
    strata_container *db = NULL;
    FUZZ_REQUIRE(strata_open(store_path, cfg, &db));
    strata_context *ctx = NULL;
    FUZZ_REQUIRE(strata_context_new(db, &ctx));
    FUZZ_REQUIRE(hostile_fill(ctx));
    strata_context_free(ctx);
    strata_close(db);   /* the last connection: the WAL is checkpointed into the file */
    strata_config_free(cfg);
    keep_external_files();
    FILE *f = fopen(store_path, "rb");
    if (!f) FUZZ_FAIL("cannot read the template store");
    fseek(f, 0, SEEK_END);
    template_size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    template_bytes = malloc(template_size);
    if (!template_bytes || fread(template_bytes, 1, template_size, f) != template_size) FUZZ_FAIL("cannot read the template store");
    fclose(f);
    return 0;
}

/* Byte patches: 3-byte offsets, one XOR byte each. */
static void patch_bytes(const uint8_t *data, size_t size) {
    unsigned char *copy = malloc(template_size);
    if (!copy) abort();
    memcpy(copy, template_bytes, template_size);
    for (size_t i = 0; i + 4 <= size; i += 4) {
        size_t offset = ((size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16) % template_size;
        copy[offset] ^= data[i + 3];
    }
    write_store(copy, template_size);
    free(copy);
}

/* Value patches, written with SQLite as the sqlite3 shell would. */
static void patch_values(const uint8_t *data, size_t size) {
    write_store(template_bytes, template_size);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(store_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) FUZZ_FAIL("sqlite3_open_v2");
    /* Tables and their columns, as the store has them. */
    char tables[32][64];
    int n_tables = 0;
    sqlite3_stmt *s = NULL;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", -1, &s, NULL);
    while (s && sqlite3_step(s) == SQLITE_ROW && n_tables < 32)
        snprintf(tables[n_tables++], sizeof tables[0], "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    size_t i = 0;
    while (n_tables > 0 && i + 5 <= size) {
        const char *table = tables[data[i] % n_tables];
        char sql[512];
        char columns[32][64];
        int n_columns = 0;
        snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
        sqlite3_prepare_v2(db, sql, -1, &s, NULL);
        while (s && sqlite3_step(s) == SQLITE_ROW && n_columns < 32)
            snprintf(columns[n_columns++], sizeof columns[0], "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
        if (n_columns == 0) break;
        const char *column = columns[data[i + 1] % n_columns];
        int row = data[i + 2] % 4;
        int type = data[i + 3] % 5;
        size_t len = data[i + 4];
        i += 5;
        if (len > size - i) len = size - i;
        const uint8_t *value = data + i;
        i += len;
        /* The row-th row in storage order (rowid tables and WITHOUT ROWID tables alike). */
        snprintf(sql, sizeof sql, "UPDATE \"%s\" SET \"%s\" = ?1 WHERE \"%s\" IN (SELECT \"%s\" FROM \"%s\" LIMIT 1 OFFSET %d)",
                 table, column, columns[0], columns[0], table, row);
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) { sqlite3_finalize(s); continue; }
        switch (type) {
        case 0: {
            int64_t v = 0;
            memcpy(&v, value, len < 8 ? len : 8);
            sqlite3_bind_int64(s, 1, v);
            break;
        }
        case 1: {
            double v = 0;
            memcpy(&v, value, len < 8 ? len : 8);
            sqlite3_bind_double(s, 1, v);
            break;
        }
        case 2: sqlite3_bind_text(s, 1, (const char *)value, (int)len, SQLITE_TRANSIENT); break;
        case 3: sqlite3_bind_blob(s, 1, value, (int)len, SQLITE_TRANSIENT); break;
        default: sqlite3_bind_null(s, 1); break;
        }
        sqlite3_step(s);   /* a constraint may refuse it: the store keeps its value */
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
}

/* OK, or what damage may cause. */
static strata_status check(strata_status st, const char *call, int is_open) {
    fuzz_check_status(st, call);
    switch (st) {
    case STRATA_OK: case STRATA_ERR_CORRUPT: case STRATA_ERR_NOT_FOUND: case STRATA_ERR_HISTORY_EXPIRED:
        return st;
    case STRATA_ERR_INCOMPATIBLE_STORE:   /* not a store Strata can take for its own (damaged header, metadata) */
        return st;
    case STRATA_ERR_READONLY:   /* a header that asks for a newer SQLite to write the file: SQLite only reads it */
        return st;
    case STRATA_ERR_INVALID:   /* an identifier passed in names another entity than the (damaged) store says */
        if (!is_open && strcmp(call, "strata_save") != 0 && strcmp(call, "strata_poll_changes") != 0
            && strncmp(call, "strata_fetch", 12) != 0) return st;
        break;
    case STRATA_ERR_CONSTRAINT: case STRATA_ERR_VALIDATION:   /* a save's rules over damaged rows */
        if (!strcmp(call, "strata_save")) return st;
        break;
    default: break;
    }
    FUZZ_FAIL("%s returned %s on a damaged store: %s", call, strata_errstr(st), strata_last_error());
    return st;
}

static void on_change(const char *changes, void *userdata) {
    (void)userdata;
    json_object_put(parse_all(changes, "an observer's change set"));
}

static void fetch_checked(strata_context *ctx, const char *descriptor) {
    char *json = NULL;
    int64_t count = -1;
    strata_status a = check(strata_fetch(ctx, descriptor, &json), "strata_fetch", 0);
    strata_status b = check(strata_fetch_count(ctx, descriptor, &count), "strata_fetch_count", 0);
    if (a == STRATA_OK) {
        json_object *objects = parse_all(json, descriptor);
        if (!json_object_is_type(objects, json_type_array)) FUZZ_FAIL("%s: not an array", descriptor);
        size_t n = json_object_array_length(objects);
        for (size_t i = 0; i < n; i++) check_object(json_object_array_get_idx(objects, i), descriptor);
        if (b == STRATA_OK && (int64_t)n != count) FUZZ_FAIL("%s: %zu objects, count %lld", descriptor, n, (long long)count);
        json_object_put(objects);
    }
    strata_free(json);
    char *ids = NULL;
    if (check(strata_fetch_identifiers(ctx, descriptor, &ids), "strata_fetch_identifiers", 0) == STRATA_OK) {
        json_object *list = parse_all(ids, descriptor);
        for (size_t i = 0; i < json_object_array_length(list); i++)
            check_identifier(json_object_get_string(json_object_array_get_idx(list, i)), descriptor);
        json_object_put(list);
    }
    strata_free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (data[0] & 1) patch_values(data + 1, size - 1); else patch_bytes(data + 1, size - 1);
    strata_config *cfg = NULL;
    FUZZ_REQUIRE(strata_config_new(hostile_config_v1, &cfg));
    strata_container *db = NULL;
    if (check(strata_open(store_path, cfg, &db), "strata_open", 1) == STRATA_OK) {
        strata_observer *observer = NULL;
        check(strata_observe(db, NULL, on_change, NULL, NULL, &observer), "strata_observe", 0);
        strata_context *ctx = NULL;
        FUZZ_REQUIRE(strata_context_new(db, &ctx));
        static const char *const ids[] = {"BusinessTrip/1", "Trip/2", "Item/1", "Item/3", "Stay/1", "Tag/1", "Tag/2"};
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            char *json = NULL;
            if (check(strata_get(ctx, ids[i], &json), "strata_get", 0) == STRATA_OK) {
                json_object *o = parse_all(json, ids[i]);
                check_object(o, ids[i]);
                json_object_put(o);
            }
            strata_free(json);
        }
        fetch_checked(ctx, "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"items\", \"stay\", \"tags\"]}");
        fetch_checked(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.count > 0 || $0.name.localizedStandardContains(\\\"a\\\")\"}");
        fetch_checked(ctx, "{\"entity\": \"Item\", \"relationshipKeyPathsForPrefetching\": [\"trip\"]}");
        fetch_checked(ctx, "{\"entity\": \"Tag\"}");
        fetch_checked(ctx, "{\"entity\": \"Stay\"}");
        char *history = NULL;
        if (check(strata_fetch_history(ctx, "{}", &history), "strata_fetch_history", 0) == STRATA_OK)
            json_object_put(parse_all(history, "history"));
        strata_free(history);
        if (check(strata_insert(ctx, "Trip", "{\"name\": \"C\", \"startDate\": 5, \"items\": [{\"title\": \"i9\"}], \"tags\": [\"Tag/1\"]}", NULL),
                  "strata_insert", 0) == STRATA_OK
            && check(strata_update(ctx, "Trip/2", "{\"count\": 4}"), "strata_update", 0) == STRATA_OK
            && check(strata_delete(ctx, "Item/3"), "strata_delete", 0) == STRATA_OK) {
            if (check(strata_save(ctx), "strata_save", 0) != STRATA_OK) strata_rollback(ctx);
        } else {
            strata_rollback(ctx);
        }
        check(strata_poll_changes(db), "strata_poll_changes", 0);
        strata_context_free(ctx);
        strata_observer_remove(observer);
        strata_close(db);
    }
    strata_config_free(cfg);
    return 0;
}
