/*
 * driver.c — the Strata side of the migration benchmark (benchmarks/migration/run.sh).
 *
 *   driver build STORE N DUPLICATES   a V1 store of N trips, through Strata (insert_many in
 *                                     batches of 10,000); the last DUPLICATES trips reuse the
 *                                     name of an earlier trip (each a different one)
 *   driver open STORE CASE            opens STORE with the migration plan of CASE and closes it;
 *                                     prints the time strata_open took
 *
 * CASE is one of
 *   rename-index   V1 -> V2: start_date/end_date renamed to startDate/endDate (originalName),
 *                  an index on startDate (lightweight stage)
 *   dedup-unique   V1 -> V2: name becomes unique; a custom stage whose willMigrate
 *                  de-duplicates Trip by name, keeping the first
 *   rename-only    V1 -> V2: the two renames alone
 *   none           the V1 schema itself: an open without migration
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <strata.h>

#define BATCH 10000

#define CHILDREN                                                                             \
    "{\"name\": \"BucketListItem\", \"attributes\": ["                                        \
    "  {\"name\": \"title\", \"type\": \"string\"},"                                          \
    "  {\"name\": \"details\", \"type\": \"string\", \"default\": \"\"}],"                    \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]},"  \
    "{\"name\": \"LivingAccommodation\", \"attributes\": ["                                   \
    "  {\"name\": \"address\", \"type\": \"string\"},"                                        \
    "  {\"name\": \"placeName\", \"type\": \"string\"}],"                                     \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]}"

#define RELATIONSHIPS                                                                        \
    "\"relationships\": ["                                                                   \
    "  {\"name\": \"bucketList\", \"destination\": \"BucketListItem\", \"toMany\": true,"     \
    "   \"deleteRule\": \"cascade\", \"inverse\": \"trip\"},"                                 \
    "  {\"name\": \"livingAccommodation\", \"destination\": \"LivingAccommodation\","        \
    "   \"optional\": true, \"deleteRule\": \"cascade\"}]"

/* SampleTrips' version 1 shape. */
static const char *const V1 =
    "{\"version\": \"1.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\"},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"start_date\", \"type\": \"date\"},"
    "  {\"name\": \"end_date\", \"type\": \"date\"}], " RELATIONSHIPS "}, " CHILDREN "]}";

static const char *const V2_RENAME_INDEX =
    "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\"},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"startDate\", \"type\": \"date\", \"originalName\": \"start_date\"},"
    "  {\"name\": \"endDate\", \"type\": \"date\", \"originalName\": \"end_date\"}], " RELATIONSHIPS ","
    "  \"indexes\": [[\"startDate\"]]}, " CHILDREN "]}";

static const char *const V2_RENAME_ONLY =
    "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\"},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"startDate\", \"type\": \"date\", \"originalName\": \"start_date\"},"
    "  {\"name\": \"endDate\", \"type\": \"date\", \"originalName\": \"end_date\"}], " RELATIONSHIPS "}, "
    CHILDREN "]}";

static const char *const V2_UNIQUE =
    "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\", \"unique\": true},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"start_date\", \"type\": \"date\"},"
    "  {\"name\": \"end_date\", \"type\": \"date\"}], " RELATIONSHIPS "}, " CHILDREN "]}";

static void fail(const char *what) {
    fprintf(stderr, "driver: %s failed: %s\n", what, strata_last_error());
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static strata_container *open_store(const char *path, const char *config_json) {
    strata_config *cfg = NULL;
    if (strata_config_new(config_json, &cfg) != STRATA_OK) fail("strata_config_new");
    strata_container *db = NULL;
    if (strata_open(path, cfg, &db) != STRATA_OK) fail("strata_open");
    strata_config_free(cfg);
    return db;
}

static int build(const char *path, long n, long duplicates) {
    size_t need = 64 + strlen(V1);
    char *config = malloc(need);
    if (config == NULL) return 1;
    snprintf(config, need, "{\"schema\": %s}", V1);
    strata_container *db = open_store(path, config);
    free(config);
    strata_context *ctx = NULL;
    if (strata_context_new(db, &ctx) != STRATA_OK) fail("strata_context_new");
    size_t cap = (size_t)BATCH * 256;
    char *buf = malloc(cap);
    if (buf == NULL) return 1;
    long originals = n - duplicates;
    for (long first = 0; first < n; first += BATCH) {
        long last = first + BATCH < n ? first + BATCH : n;
        size_t len = 0;
        buf[len++] = '[';
        for (long i = first; i < last; i++) {
            /* A duplicate reuses the name of an earlier trip, a different one each time. */
            long name = i < originals ? i : ((i - originals) * 97) % originals;
            long start = 1577836800L + (i % 3000) * 86400L;
            len += (size_t)snprintf(buf + len, cap - len,
                                    "%s{\"name\": \"Trip %ld\", \"destination\": \"City %ld\","
                                    " \"start_date\": %ld, \"end_date\": %ld}",
                                    i > first ? "," : "", name, i % 997, start, start + 7 * 86400L);
        }
        buf[len++] = ']';
        buf[len] = '\0';
        if (strata_insert_many(ctx, "Trip", buf, NULL) != STRATA_OK) fail("strata_insert_many");
        if (strata_save(ctx) != STRATA_OK) fail("strata_save");
    }
    free(buf);
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}

static int open_case(const char *path, const char *name) {
    const char *to = NULL, *stage = NULL;
    if (strcmp(name, "rename-index") == 0) {
        to = V2_RENAME_INDEX;
        stage = "{\"name\": \"v1tov2\", \"kind\": \"lightweight\", \"from\": \"1.0.0\", \"to\": \"2.0.0\"}";
    } else if (strcmp(name, "rename-only") == 0) {
        to = V2_RENAME_ONLY;
        stage = "{\"name\": \"v1tov2\", \"kind\": \"lightweight\", \"from\": \"1.0.0\", \"to\": \"2.0.0\"}";
    } else if (strcmp(name, "dedup-unique") == 0) {
        to = V2_UNIQUE;
        stage = "{\"name\": \"v1tov2\", \"kind\": \"custom\", \"from\": \"1.0.0\", \"to\": \"2.0.0\","
                " \"willMigrate\": [{\"op\": \"deduplicate\", \"entity\": \"Trip\", \"by\": [\"name\"],"
                " \"keep\": \"first\"}]}";
    } else if (strcmp(name, "none") != 0) {
        fprintf(stderr, "driver: unknown case '%s'\n", name);
        return 2;
    }
    size_t need = 256 + strlen(V1) + (to ? strlen(to) + strlen(stage) : 0);
    char *config = malloc(need);
    if (config == NULL) return 1;
    if (to == NULL) snprintf(config, need, "{\"schema\": %s}", V1);
    else snprintf(config, need, "{\"migrationPlan\": {\"schemas\": [%s, %s], \"stages\": [%s]}}", V1, to, stage);
    double t0 = now();
    strata_container *db = open_store(path, config);
    double t1 = now();
    strata_close(db);
    double t2 = now();
    free(config);
    printf("strata_open %.1f ms, strata_close %.1f ms\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "build") == 0) return build(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 4 && strcmp(argv[1], "open") == 0) return open_case(argv[2], argv[3]);
    fprintf(stderr, "usage: %s build STORE N DUPLICATES | open STORE rename-index|dedup-unique|rename-only|none\n",
            argv[0]);
    return 2;
}
