/*
 * A store file is untrusted input (strata.h, Caveats): names read from it
 * never reach outside <store>.strata/, and store paths are plain file names,
 * never SQLite URIs. The store is altered with the sqlite3 shell, as someone
 * handing a user a crafted document would.
 */
#include "check.h"

#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"

static char *config_json(const char *options) {
    char *schema = check_read_file(FIXTURES "trips.json");
    size_t n = strlen(schema) + strlen(options) + 32;
    char *json = malloc(n);
    if (!json) exit(1);
    snprintf(json, n, "{\"schema\": %s%s}", schema, options);
    free(schema);
    return json;
}

static strata_container *open_store(const char *path) {
    char *json = config_json(", \"externalStorageThreshold\": 8");
    strata_container *db = check_open(json, path);
    free(json);
    return db;
}

static void sql(const char *path, const char *statement) {
    char command[4096];
    snprintf(command, sizeof command, "sqlite3 '%s' \"%s\"", path, statement);
    CHECK(system(command) == 0);
}

static int file_holds(const char *path, const char *text) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[256] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void test_traversal_names(void) {
    char *path = test_store_path("untrusted.store");
    char *secret = test_store_path("secret.txt");
    FILE *f = fopen(secret, "wb");
    CHECK(f != NULL);
    fputs("top secret", f);
    fclose(f);

    strata_container *db = open_store(path);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Trip",
        "{\"name\": \"Doc\", \"destination\": \"X\", \"startDate\": 0, \"endDate\": 1, \"photo\": \"AAECAwQFBgcICQoLDA0ODw==\"}", &id));
    CHECK_STATUS(strata_save(ctx));

    /* The crafted store names a file outside its folder. */
    sql(path, "UPDATE Trip SET photo = '../secret.txt'");
    char *json = NULL;
    CHECK_ERROR_CODE(strata_get(ctx, id, &json), STRATA_ERR_CORRUPT);
    CHECK(json == NULL);
    CHECK(strstr(strata_last_error(), "Trip.photo") != NULL);
    CHECK_ERROR_CODE(strata_fetch(ctx, "{\"entity\": \"Trip\"}", &json), STRATA_ERR_CORRUPT);
    /* Deleting or replacing the value never unlinks the named file. */
    CHECK_STATUS(strata_delete(ctx, id));
    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_CORRUPT);
    CHECK_STATUS(strata_rollback(ctx));
    CHECK_STATUS(strata_update(ctx, id, "{\"photo\": null}"));
    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_CORRUPT);
    CHECK_STATUS(strata_rollback(ctx));
    CHECK(file_holds(secret, "top secret"));

    /* An absolute name. */
    char statement[1024];
    snprintf(statement, sizeof statement, "UPDATE Trip SET photo = '%s'", secret);
    sql(path, statement);
    CHECK_ERROR_CODE(strata_get(ctx, id, &json), STRATA_ERR_CORRUPT);
    CHECK_STATUS(strata_delete(ctx, id));
    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_CORRUPT);
    CHECK(file_holds(secret, "top secret"));

    strata_free(id);
    strata_context_free(ctx);
    strata_close(db);
    free(secret);
    free(path);
}

static void test_paths_are_file_names(void) {
    char *dir = test_store_path("paths");
    mkdir(dir, 0755);
    CHECK(chdir(dir) == 0);
    char *json = config_json("");
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    const char *bad[] = {":memory:", "file:x.store?nolock=1", "file:x.store?mode=rwc", "file::memory:", "x.store/", ".", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strata_container *db = (strata_container *)cfg;  /* must be reset to NULL */
        CHECK_ERROR_CODE(strata_open(bad[i], cfg, &db), STRATA_ERR_INVALID);
        CHECK(db == NULL);
    }
    strata_container *db = NULL;
    CHECK_ERROR_CODE(strata_open(":memory:", cfg, &db), STRATA_ERR_INVALID);
    CHECK(strstr(strata_last_error(), "inMemory") != NULL);
    DIR *d = opendir(".");
    CHECK(d != NULL);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) entries++;
    closedir(d);
    CHECK(entries == 0);  /* nothing was created */

    /* A file whose name starts with "file:" is opened as a plain file when written as a path. */
    CHECK_STATUS(strata_open("./file:x.store?nolock=1", cfg, &db));
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"A\", \"destination\": \"X\", \"startDate\": 0, \"endDate\": 1}", &id));
    CHECK_STATUS(strata_save(ctx));
    struct stat st;
    CHECK(stat("file:x.store?nolock=1", &st) == 0);
    strata_free(id);
    strata_context_free(ctx);
    strata_close(db);
    strata_config_free(cfg);
    free(json);
    free(dir);
}

int main(void) {
    test_traversal_names();
    test_paths_are_file_names();
    printf("test_untrusted: ok\n");
    return 0;
}
