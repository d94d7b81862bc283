/*
 * check.h — a tiny header-only helper for Strata's C tests (C99 + POSIX 2008).
 *
 *   CHECK(cond)                      cond must be true
 *   CHECK_STATUS(expr)               expr must return STRATA_OK
 *   CHECK_ERROR_CODE(expr, STATUS)   expr must return exactly STATUS (not OK), and
 *                                    strata_last_error() must be a JSON object whose
 *                                    "code" is a non-empty string (and whose "status",
 *                                    if present, is STATUS)
 *   CHECK_STR_EQ(a, b)               two C strings (either may be NULL) are equal
 *   test_store_path(name)            malloc'd "$STRATA_TEST_DIR/<name>", with any old
 *                                    store and its -wal, -shm and .strata/ removed; on
 *                                    PostgreSQL (below) a URI of a new, empty schema
 *   check_postgres()                 1 when the tests run on PostgreSQL (below), else 0
 *   CHECK_SKIP_ON_POSTGRES(reason)   on PostgreSQL: prints "SKIP: reason" to stderr and
 *                                    exits 77 (ctest's skip code), for a test that needs files
 *   check_skip_part_on_postgres(reason)
 *                                    on PostgreSQL: prints "skipped on PostgreSQL: reason" and
 *                                    returns 1, for one part that needs a file:
 *                                    `if (check_skip_part_on_postgres("...")) return;`
 *   parse_json_or_die(text)          a json-c object (json_object_put() it), or exit 1
 *   check_open(config_json, path)    a container opened with this configuration, or exit 1
 *   check_open_schema(file, path)    a container of a schema file's JSON at path (NULL: in memory)
 *   check_context(db)                a new context of db, or exit 1
 *   check_strf(fmt, ...)             a new malloc'd string from a printf format
 *   check_member(obj, key)           obj's member key (a json-c object) or NULL
 *   check_str_member(obj, key)       obj's string member key or NULL
 *   check_run_child(self, round, path)
 *                                    runs this test program again as a second process
 *                                    (`self --child ROUND PATH`) and waits: exit 1 if it fails
 *   check_buf, check_buf_add(b, text), check_buf_repeat(b, text, n)
 *                                    a growing string (b.s, free() it), starting as {0}
 *
 * Every failed check prints file:line and what failed to stderr and exits 1.
 * Tests are built with -D_POSIX_C_SOURCE=200809L, -std=c99 -pedantic -Werror.
 *
 * The store under test: SQLite files by default. With STRATA_TEST_STORE=postgres (ctest's
 * postgres_* tests: scripts/postgres-test.sh env STRATA_TEST_STORE=postgres TEST) every
 * test_store_path(name) is instead $STRATA_TEST_POSTGRES (the throw-away cluster's URI, set by
 * postgres-test.sh) with "&options=-csearch_path%3D<ns>" appended: <ns> is a new schema name,
 * the name's ASCII letters and digits lowercased (anything else '_'; "s_" first when it would
 * start with a digit or "pg_"), cut so that all of <ns> fits PostgreSQL's 63 bytes, then
 * "_<pid>_<n>" (n counts the calls). The PostgreSQL store creates the first schema of the
 * search_path when it is missing, so each call gives a new, empty store, as a removed file does.
 * STRATA_TEST_STORE=sqlite or unset: files; any other value: exit 1.
 */
#ifndef STRATA_TEST_CHECK_H
#define STRATA_TEST_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json.h>
#include <strata.h>

#define CHECK_FAIL_(...)                                                       \
    do {                                                                       \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                        \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        exit(1);                                                               \
    } while (0)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) CHECK_FAIL_("CHECK failed: %s", #cond);                   \
    } while (0)

#define CHECK_STATUS(expr)                                                     \
    check_status_((int)(expr), #expr, __FILE__, __LINE__)

#define CHECK_ERROR_CODE(expr, status)                                         \
    check_error_code_((int)(expr), (int)(status), #expr, #status, __FILE__, __LINE__)

#define CHECK_STR_EQ(a, b)                                                     \
    do {                                                                       \
        const char *check_a_ = (a), *check_b_ = (b);                           \
        if (check_a_ == NULL || check_b_ == NULL                               \
                ? check_a_ != check_b_ : strcmp(check_a_, check_b_) != 0)      \
            CHECK_FAIL_("CHECK_STR_EQ(%s, %s) failed:\n  left:  %s\n  right: %s", \
                        #a, #b, check_a_ ? check_a_ : "(null)",                \
                        check_b_ ? check_b_ : "(null)");                       \
    } while (0)

static inline const char *check_nonnull_(const char *s) { return s ? s : "(null)"; }

static inline void check_status_(int got, const char *expr, const char *file, int line) {
    if (got == (int)STRATA_OK) return;
    /* The last error is borrowed until the next Strata call: print it first. */
    const char *error = strata_last_error();
    fprintf(stderr, "%s:%d: %s\n  returned %d, expected STRATA_OK\n  last error: %s\n",
            file, line, expr, got, check_nonnull_(error));
    fprintf(stderr, "  (%s)\n", strata_errstr(got));
    exit(1);
}

/* Parses JSON text (the whole text, trailing whitespace allowed) or exits 1. */
/* The whole file at `path` as a new NUL-terminated string (free with free()); exits on error. */
static inline char *check_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = (char *)malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    text[n] = '\0';
    fclose(f);
    return text;
}

static inline struct json_object *parse_json_or_die(const char *text) {
    if (text == NULL) {
        fprintf(stderr, "parse_json_or_die: NULL text\n");
        exit(1);
    }
    struct json_tokener *tok = json_tokener_new();
    if (tok == NULL) {
        fprintf(stderr, "parse_json_or_die: out of memory\n");
        exit(1);
    }
    size_t len = strlen(text);
    struct json_object *obj = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    while (used < len && strchr(" \t\r\n", text[used]) != NULL) used++;
    if (err != json_tokener_success || used != len) {
        fprintf(stderr, "parse_json_or_die: invalid JSON (%s at offset %zu):\n%s\n",
                err != json_tokener_success ? json_tokener_error_desc(err) : "trailing text",
                used, text);
        json_object_put(obj);
        exit(1);
    }
    return obj;
}

static inline void check_error_code_(int got, int want, const char *expr, const char *want_text,
                                     const char *file, int line) {
    /* The last error is borrowed until the next Strata call: copy it first. */
    const char *borrowed = strata_last_error();
    char *error = strdup(borrowed ? borrowed : "(null)");
    if (error == NULL) {
        fprintf(stderr, "%s:%d: out of memory\n", file, line);
        exit(1);
    }
    if (want == (int)STRATA_OK) {
        fprintf(stderr, "%s:%d: CHECK_ERROR_CODE(%s, %s): expected status must not be STRATA_OK\n",
                file, line, expr, want_text);
        exit(1);
    }
    if (got != want) {
        fprintf(stderr, "%s:%d: %s\n  returned %d (%s), expected %s (%d)\n  last error: %s\n",
                file, line, expr, got, strata_errstr(got), want_text, want, error);
        exit(1);
    }
    struct json_object *obj = parse_json_or_die(error);
    struct json_object *code = NULL, *status = NULL;
    if (!json_object_is_type(obj, json_type_object) ||
            !json_object_object_get_ex(obj, "code", &code) ||
            !json_object_is_type(code, json_type_string) ||
            json_object_get_string_len(code) == 0) {
        fprintf(stderr, "%s:%d: %s\n  last error is not an object with a non-empty \"code\" string: %s\n",
                file, line, expr, error);
        exit(1);
    }
    if (json_object_object_get_ex(obj, "status", &status) &&
            (!json_object_is_type(status, json_type_int) || json_object_get_int(status) != want)) {
        fprintf(stderr, "%s:%d: %s\n  last error \"status\" is not %d: %s\n", file, line, expr, want, error);
        exit(1);
    }
    printf("  %s -> %s: %s\n", want_text, json_object_get_string(code), error);
    json_object_put(obj);
    free(error);
}

/* Removes a file or a directory tree; a missing path is fine. */
static inline void check_remove_tree_(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return;
        fprintf(stderr, "cannot stat %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        if (dir == NULL) {
            fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
            exit(1);
        }
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
            size_t n = strlen(path) + strlen(entry->d_name) + 2;
            char *child = (char *)malloc(n);
            if (child == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
            snprintf(child, n, "%s/%s", path, entry->d_name);
            check_remove_tree_(child);
            free(child);
        }
        closedir(dir);
        if (rmdir(path) != 0) {
            fprintf(stderr, "cannot remove %s: %s\n", path, strerror(errno));
            exit(1);
        }
    } else if (unlink(path) != 0 && errno != ENOENT) {
        fprintf(stderr, "cannot remove %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

/* A container opened at `path` (NULL for "inMemory") with a configuration's JSON, or exit 1. */
#define check_open(config_json, path) check_open_((config_json), (path), __FILE__, __LINE__)
static inline strata_container *check_open_(const char *config_json, const char *path, const char *file, int line) {
    strata_config *cfg = NULL;
    check_status_((int)strata_config_new(config_json, &cfg), "strata_config_new", file, line);
    strata_container *db = NULL;
    check_status_((int)strata_open(path, cfg, &db), "strata_open", file, line);
    strata_config_free(cfg);
    return db;
}

/* A new malloc'd string from a printf format (free with free()). */
static inline char *check_strf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) { fprintf(stderr, "check_strf: bad format %s\n", fmt); exit(1); }
    char *s = (char *)malloc((size_t)n + 1);
    if (s == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A container of the schema in the file `schema_path` at `path` (NULL: in memory), or exit 1. */
#define check_open_schema(schema_path, path) check_open_schema_((schema_path), (path), __FILE__, __LINE__)
static inline strata_container *check_open_schema_(const char *schema_path, const char *path, const char *file, int line) {
    char *schema = check_read_file(schema_path);
    char *json = check_strf("{\"schema\": %s%s}", schema, path ? "" : ", \"inMemory\": true");
    strata_container *db = check_open_(json, path, file, line);
    free(json);
    free(schema);
    return db;
}

/* A new context of `db`, or exit 1. */
#define check_context(db) check_context_((db), __FILE__, __LINE__)
static inline strata_context *check_context_(strata_container *db, const char *file, int line) {
    strata_context *ctx = NULL;
    check_status_((int)strata_context_new(db, &ctx), "strata_context_new", file, line);
    return ctx;
}

/* obj's member `key`, or NULL (also when obj is NULL). */
static inline struct json_object *check_member(struct json_object *obj, const char *key) {
    struct json_object *v = NULL;
    if (obj == NULL || !json_object_object_get_ex(obj, key, &v)) return NULL;
    return v;
}

/* obj's string member `key`, or NULL. */
static inline const char *check_str_member(struct json_object *obj, const char *key) {
    struct json_object *v = check_member(obj, key);
    return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A growing NUL-terminated string: `check_buf b = {0};`, then free(b.s). */
typedef struct { char *s; size_t len, cap; } check_buf;

static inline void check_buf_add(check_buf *b, const char *text) {
    size_t n = strlen(text);
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = (char *)realloc(b->s, b->cap);
        if (b->s == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
    }
    memcpy(b->s + b->len, text, n + 1);
    b->len += n;
}

static inline void check_buf_repeat(check_buf *b, const char *text, int n) {
    for (int i = 0; i < n; i++) check_buf_add(b, text);
}

/* 1 when the tests run on PostgreSQL (STRATA_TEST_STORE=postgres), 0 on SQLite files. */
static inline int check_postgres(void) {
    const char *store = getenv("STRATA_TEST_STORE");
    if (store == NULL || store[0] == '\0' || strcmp(store, "sqlite") == 0) return 0;
    if (strcmp(store, "postgres") == 0) return 1;
    fprintf(stderr, "STRATA_TEST_STORE=%s: expected postgres or sqlite (or unset)\n", store);
    exit(1);
}

/* On PostgreSQL, skips the whole test: "SKIP: reason" and exit 77 (ctest's skip code). */
#define CHECK_SKIP_ON_POSTGRES(reason)                                         \
    do {                                                                       \
        if (check_postgres()) {                                                \
            fflush(stdout);                                                    \
            fprintf(stderr, "SKIP: %s\n", (reason));                           \
            exit(77);                                                          \
        }                                                                      \
    } while (0)

/* On PostgreSQL, says that one part is skipped and returns 1; else returns 0. */
static inline int check_skip_part_on_postgres(const char *reason) {
    if (!check_postgres()) return 0;
    fflush(stdout);
    fprintf(stderr, "skipped on PostgreSQL: %s\n", reason);
    return 1;
}

/* $STRATA_TEST_POSTGRES with options=-csearch_path%3D<a new schema named after name>. */
static inline char *check_postgres_store_uri_(const char *name) {
    static unsigned calls = 0;
    const char *base = getenv("STRATA_TEST_POSTGRES");
    if (base == NULL || base[0] == '\0') {
        fprintf(stderr, "STRATA_TEST_STORE=postgres, but STRATA_TEST_POSTGRES is not set: "
                "run the test under scripts/postgres-test.sh\n");
        exit(1);
    }
    char suffix[48];
    snprintf(suffix, sizeof suffix, "_%ld_%u", (long)getpid(), calls++);
    char mapped[64];
    size_t n = 0;
    for (const char *c = name; *c != '\0' && n < sizeof mapped - 1; c++) {
        char ch = *c;
        if (ch >= 'A' && ch <= 'Z') mapped[n++] = (char)(ch - 'A' + 'a');
        else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) mapped[n++] = ch;
        else mapped[n++] = '_';
    }
    mapped[n] = '\0';
    /* Unquoted names start with a letter; pg_ names are the system's. */
    const char *prefix = n == 0 ? "store"
        : (mapped[0] >= '0' && mapped[0] <= '9') || strncmp(mapped, "pg_", 3) == 0 ? "s_" : "";
    char ns[64];   /* PostgreSQL's names: at most 63 bytes */
    size_t room = sizeof ns - 1 - strlen(prefix) - strlen(suffix);
    if (n > room) n = room;
    memcpy(ns, prefix, strlen(prefix));
    memcpy(ns + strlen(prefix), mapped, n);
    memcpy(ns + strlen(prefix) + n, suffix, strlen(suffix) + 1);
    return check_strf("%s%coptions=-csearch_path%%3D%s", base, strchr(base, '?') ? '&' : '?', ns);
}

/*
 * "$STRATA_TEST_DIR/<name>" (or "./<name>" when STRATA_TEST_DIR is unset), as a
 * malloc'd string the caller frees, after removing any store left there: the
 * file, its "-wal" and "-shm" files and its ".strata/" folder. On PostgreSQL
 * (STRATA_TEST_STORE=postgres): the URI of a new, empty schema (see the top).
 */
static inline char *test_store_path(const char *name) {
    if (check_postgres()) return check_postgres_store_uri_(name);
    const char *dir = getenv("STRATA_TEST_DIR");
    if (dir == NULL || dir[0] == '\0') dir = ".";
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = (char *)malloc(n);
    if (path == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
    snprintf(path, n, "%s/%s", dir, name);

    static const char *const suffixes[] = { "", "-wal", "-shm", ".strata", "-journal" };
    size_t m = n + 16;
    char *side = (char *)malloc(m);
    if (side == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(side, m, "%s%s", path, suffixes[i]);
        check_remove_tree_(side);
    }
    free(side);
    return path;
}

/* ---- JSON comparison helpers shared by the C tests ---- */

/* Equal JSON values; numbers compare by value (0 and 0.0 are equal). */
static inline int same_value(struct json_object *a, struct json_object *b) {
    int a_num = json_object_is_type(a, json_type_int) || json_object_is_type(a, json_type_double);
    int b_num = json_object_is_type(b, json_type_int) || json_object_is_type(b, json_type_double);
    if (a_num && b_num) return json_object_get_double(a) == json_object_get_double(b);
    return json_object_equal(a, b);
}

/* Every key of the JSON object `fmt` (printf-formatted) is in `actual` with an equal value. */
static inline void expect_fields(struct json_object *actual, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = (char *)malloc((size_t)n + 1);   /* the cast: check.h compiles as C++ too (Tests/cpp) */
    if (!text) exit(1);
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    struct json_object *expected = parse_json_or_die(text);
    json_object_object_foreach(expected, key, want) {
        struct json_object *got = NULL;
        if (!json_object_object_get_ex(actual, key, &got) || !same_value(want, got)) {
            fprintf(stderr, "field \"%s\": expected %s, got %s\n  in %s\n", key, json_object_to_json_string(want),
                    got ? json_object_to_json_string(got) : "(missing)", json_object_to_json_string(actual));
            CHECK(!"field mismatch");
        }
    }
    json_object_put(expected);
    free(text);
}

/* The object has exactly these keys (in any order). */
static inline void expect_keys(struct json_object *obj, const char *const *keys, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int present = json_object_object_get_ex(obj, keys[i], NULL);
        if (!present) fprintf(stderr, "missing key \"%s\" in %s\n", keys[i], json_object_to_json_string(obj));
        CHECK(present);
    }
    if ((size_t)json_object_object_length(obj) != n)
        fprintf(stderr, "expected %zu keys: %s\n", n, json_object_to_json_string(obj));
    CHECK((size_t)json_object_object_length(obj) == n);
}

/* Every object of every entity as `ctx` reads them; a failed read is {"status": N}. */
static inline struct json_object *read_all(strata_context *ctx, const char *const *entities, size_t n) {
    struct json_object *all = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        char descriptor[128];
        snprintf(descriptor, sizeof descriptor, "{\"entity\": \"%s\", \"includeSubentities\": false}", entities[i]);
        char *text = NULL;
        strata_status st = strata_fetch(ctx, descriptor, &text);
        if (st == STRATA_OK) {
            json_object_array_add(all, parse_json_or_die(text));
        } else {
            struct json_object *failed = json_object_new_object();
            json_object_object_add(failed, "status", json_object_new_int((int)st));
            json_object_array_add(all, failed);
        }
        strata_free(text);
    }
    return all;
}

/* Runs `self --child round path` (this test program as a second process) and waits for it. */
static inline void check_run_child(const char *self, const char *round, const char *path) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl(self, self, "--child", round, path, (char *)NULL);
        perror("execl");
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "child round %s failed (status %d)\n", round, status);
        exit(1);
    }
}

#endif /* STRATA_TEST_CHECK_H */
