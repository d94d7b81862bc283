/*
 * make_store — makes a store for scripts/check-cli.sh: opens (creates) STORE with the
 * schema of SCHEMA_FILE, inserts each ENTITY's objects (a JSON array in OBJECTS_FILE,
 * strata_insert_many) in the order given, and saves once.
 *
 *   usage: make_store STORE SCHEMA_FILE [ENTITY OBJECTS_FILE]...
 *
 * Exits 0 when saved; 1 with the library's error JSON on stderr; 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strata.h>

/* The whole file as a NUL-terminated string (freed by the caller), or exits. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) { fprintf(stderr, "make_store: cannot read %s\n", path); exit(1); }
    size_t size = 0, capacity = 4096;
    char *text = malloc(capacity);
    size_t n;
    while (text != NULL && (n = fread(text + size, 1, capacity - size - 1, f)) > 0) {
        size += n;
        if (capacity - size < 2) {
            char *bigger = realloc(text, capacity * 2);
            if (bigger == NULL) { free(text); text = NULL; break; }
            text = bigger;
            capacity *= 2;
        }
    }
    fclose(f);
    if (text == NULL) { fprintf(stderr, "make_store: out of memory\n"); exit(1); }
    text[size] = '\0';
    return text;
}

static void check(strata_status status, const char *call) {
    if (status == STRATA_OK) return;
    fprintf(stderr, "make_store: %s failed: %s\n", call, strata_last_error());
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 3 || argc % 2 != 1) {
        fprintf(stderr, "usage: make_store STORE SCHEMA_FILE [ENTITY OBJECTS_FILE]...\n");
        return 2;
    }
    char *schema = read_file(argv[2]);
    size_t length = strlen(schema) + 32;
    char *config_json = malloc(length);
    if (config_json == NULL) { fprintf(stderr, "make_store: out of memory\n"); return 1; }
    snprintf(config_json, length, "{\"schema\": %s}", schema);
    free(schema);
    strata_config *config = NULL;
    check(strata_config_new(config_json, &config), "strata_config_new");
    free(config_json);
    strata_container *db = NULL;
    check(strata_open(argv[1], config, &db), "strata_open");
    strata_config_free(config);
    strata_context *ctx = NULL;
    check(strata_context_new(db, &ctx), "strata_context_new");
    for (int i = 3; i + 1 < argc; i += 2) {
        char *objects = read_file(argv[i + 1]);
        check(strata_insert_many(ctx, argv[i], objects, NULL), "strata_insert_many");
        free(objects);
    }
    check(strata_save(ctx), "strata_save");
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}
