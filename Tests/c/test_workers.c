/*
 * test_workers.c — one store, four processes of two threads each, for a bounded time:
 * every thread inserts notes (unique text), upserts counters (ten unique keys, so the
 * processes keep colliding on them) and deletes some of its own notes, saving after each
 * change. At the end, in a fresh process: no counter twice, every note a thread saved and
 * did not delete is there, no other, each text once. A fifth process observes the store
 * all along (strata_observe, strata_poll_changes): it is handed every saved transaction
 * exactly once, in token order, none missed however the saves interleaved.
 *
 * On SQLite one file; on PostgreSQL (STRATA_TEST_STORE=postgres) one schema of the server,
 * the multi-host case. A save refused with STRATA_ERR_BUSY is dropped (and counted).
 *
 * The workers are this program run again ("--child N PATH"); each prints its tallies. The
 * poller is "--poller PATH": it prints "ready", then reads the number of saves to expect.
 */
#include <pthread.h>
#include <sys/select.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#define PROCESSES 4
#define THREADS 2
#define SECONDS 3
#define COUNTERS 10

#define SCHEMA                                                                                         \
    "{\"schema\": {\"version\": \"1\", \"entities\": ["                                                \
    "{\"name\": \"Note\", \"attributes\": [{\"name\": \"text\", \"type\": \"string\", \"unique\": true},"  \
    " {\"name\": \"owner\", \"type\": \"string\"}]},"                                                   \
    "{\"name\": \"Counter\", \"attributes\": [{\"name\": \"key\", \"type\": \"string\", \"unique\": true}," \
    " {\"name\": \"hits\", \"type\": \"int\", \"default\": 0}]}]}}"

typedef struct {
    strata_container *db;
    int process, thread;
    long inserted, deleted, upserts, busy;
} worker;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Saves; a save the store refuses as busy is rolled back (the change is dropped and not
 * counted). Returns 1 when saved. */
static int save(strata_context *ctx, worker *w) {
    strata_status s = strata_save(ctx);
    if (s == STRATA_OK) return 1;
    if (s != STRATA_ERR_BUSY) {
        fprintf(stderr, "worker %d.%d: save failed: %s\n", w->process, w->thread, strata_last_error());
        exit(1);
    }
    w->busy++;
    CHECK_STATUS(strata_rollback(ctx));
    return 0;
}

static void *run(void *arg) {
    worker *w = arg;
    strata_context *ctx = check_context(w->db);
    char **mine = NULL;
    size_t count = 0, cap = 0;
    double end = now() + SECONDS;
    unsigned seed = (unsigned)(w->process * 131 + w->thread * 17 + 1);
    for (long n = 0; now() < end; n++) {
        /* A note of this thread's own. */
        char text[64], *id = NULL;
        snprintf(text, sizeof text, "{\"text\": \"p%d-t%d-n%ld\", \"owner\": \"p%d-t%d\"}", w->process, w->thread, n,
                 w->process, w->thread);
        CHECK_STATUS(strata_insert(ctx, "Note", text, &id));
        if (save(ctx, w)) {
            w->inserted++;
            if (count == cap) {
                cap = cap ? cap * 2 : 64;
                mine = realloc(mine, cap * sizeof *mine);
                CHECK(mine != NULL);
            }
            mine[count++] = id;
        } else {
            strata_free(id);
        }
        /* A counter every process touches: an upsert by its unique key. */
        char counter[96];
        /* A value no other upsert writes: every saved upsert changes its counter (one transaction). */
        snprintf(counter, sizeof counter, "{\"key\": \"k%d\", \"hits\": %ld}", (int)(rand_r(&seed) % COUNTERS),
                 ((long)w->process * 4 + w->thread) * 100000000L + n);
        CHECK_STATUS(strata_insert(ctx, "Counter", counter, NULL));
        if (save(ctx, w)) w->upserts++;
        /* Now and then, one of this thread's notes goes. */
        if (count > 0 && rand_r(&seed) % 3 == 0) {
            size_t k = (size_t)rand_r(&seed) % count;
            CHECK_STATUS(strata_delete(ctx, mine[k]));
            if (save(ctx, w)) {
                w->deleted++;
                strata_free(mine[k]);
                mine[k] = mine[--count];
            }
        }
    }
    for (size_t i = 0; i < count; i++) strata_free(mine[i]);
    free(mine);
    strata_context_free(ctx);
    return NULL;
}

static int child(int process, const char *path) {
    strata_container *db = check_open(SCHEMA, path);
    worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){db, process, i, 0, 0, 0, 0};
        CHECK(pthread_create(&t[i], NULL, run, &w[i]) == 0);
    }
    long inserted = 0, deleted = 0, upserts = 0, busy = 0;
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        inserted += w[i].inserted;
        deleted += w[i].deleted;
        upserts += w[i].upserts;
        busy += w[i].busy;
    }
    strata_close(db);
    printf("%ld %ld %ld %ld\n", inserted, deleted, upserts, busy);
    return 0;
}

/* ---- the poller -------------------------------------------------------------------- */

typedef struct {
    long seen, last, disorder;
} poll_state;

static void on_change(const char *changes_json, void *userdata) {
    poll_state *p = userdata;
    json_object *c = parse_json_or_die(changes_json);
    const char *token = check_str_member(c, "token");
    long n = token ? atol(token) : -1; /* "42@5f0c9a1e": the sequence number first */
    if (n <= p->last) p->disorder++;
    p->last = n;
    p->seen++;
    json_object_put(c);
}

static int poller(const char *path) {
    strata_container *db = check_open(SCHEMA, path);
    poll_state state = {0, 0, 0};
    strata_observer *o = NULL;
    CHECK_STATUS(strata_observe(db, NULL, on_change, &state, NULL, &o));
    printf("ready\n");
    fflush(stdout);
    /* Poll while the workers save; then until every save they report has been seen. */
    long expected = -1;
    fd_set fds;
    for (int idle = 0; expected < 0 || (state.seen < expected && idle < 3000); idle++) {
        CHECK_STATUS(strata_poll_changes(db));
        if (expected < 0) {
            FD_ZERO(&fds);
            FD_SET(0, &fds);
            struct timeval tv = {0, 10000};
            if (select(1, &fds, NULL, NULL, &tv) > 0) CHECK(scanf("%ld", &expected) == 1);
            idle = 0;
        } else {
            struct timespec t = {0, 10000000L};
            nanosleep(&t, NULL);
        }
    }
    CHECK_STATUS(strata_poll_changes(db));
    printf("%ld %ld\n", state.seen, state.disorder);
    strata_observer_remove(o);
    strata_close(db);
    return 0;
}

static int64_t count_of(strata_context *ctx, const char *descriptor) {
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, descriptor, &n));
    return n;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(atoi(argv[2]), argv[3]);
    if (argc == 3 && strcmp(argv[1], "--poller") == 0) return poller(argv[2]);
    char *path = test_store_path("workers.store");
    strata_close(check_open(SCHEMA, path)); /* made once, before the workers race */

    /* The observer in a fifth process, ready before the first save. */
    int to_poller[2], from_poller[2];
    CHECK(pipe(to_poller) == 0 && pipe(from_poller) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t poller_pid = fork();
    CHECK(poller_pid >= 0);
    if (poller_pid == 0) {
        CHECK(dup2(to_poller[0], 0) == 0 && dup2(from_poller[1], 1) == 1);
        close(to_poller[1]);
        close(from_poller[0]);
        execl(argv[0], argv[0], "--poller", path, (char *)NULL);
        _exit(127);
    }
    close(to_poller[0]);
    close(from_poller[1]);
    FILE *poll_in = fdopen(from_poller[0], "r");
    CHECK(poll_in != NULL);
    char ready[16] = {0};
    CHECK(fgets(ready, sizeof ready, poll_in) != NULL && strncmp(ready, "ready", 5) == 0);

    FILE *out[PROCESSES];
    pid_t pids[PROCESSES];
    for (int p = 0; p < PROCESSES; p++) {
        int fd[2];
        CHECK(pipe(fd) == 0);
        fflush(stdout);
        fflush(stderr);
        pids[p] = fork();
        CHECK(pids[p] >= 0);
        if (pids[p] == 0) {
            close(fd[0]);
            CHECK(dup2(fd[1], 1) == 1);
            char n[16];
            snprintf(n, sizeof n, "%d", p);
            execl(argv[0], argv[0], "--child", n, path, (char *)NULL);
            _exit(127);
        }
        close(fd[1]);
        out[p] = fdopen(fd[0], "r");
        CHECK(out[p] != NULL);
    }
    long inserted = 0, deleted = 0, upserts = 0, busy = 0;
    for (int p = 0; p < PROCESSES; p++) {
        long i = 0, d = 0, u = 0, b = 0;
        CHECK(fscanf(out[p], "%ld %ld %ld %ld", &i, &d, &u, &b) == 4);
        fclose(out[p]);
        int status = 0;
        CHECK(waitpid(pids[p], &status, 0) == pids[p]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        inserted += i, deleted += d, upserts += u, busy += b;
    }
    printf("%d processes x %d threads, %d s: %ld notes saved, %ld deleted, %ld counter upserts, %ld busy saves dropped\n",
           PROCESSES, THREADS, SECONDS, inserted, deleted, upserts, busy);
    CHECK(inserted > 0 && upserts > 0);

    /* Every saved transaction reached the observer once, in token order. */
    char expected[32];
    int len = snprintf(expected, sizeof expected, "%ld\n", inserted + deleted + upserts);
    CHECK(write(to_poller[1], expected, (size_t)len) == len);
    close(to_poller[1]);
    long seen = -1, disorder = -1;
    CHECK(fscanf(poll_in, "%ld %ld", &seen, &disorder) == 2);
    fclose(poll_in);
    int poll_status = 0;
    CHECK(waitpid(poller_pid, &poll_status, 0) == poller_pid);
    CHECK(WIFEXITED(poll_status) && WEXITSTATUS(poll_status) == 0);
    printf("the observer in a fifth process was handed %ld transactions (%ld saved), %ld out of order\n", seen,
           inserted + deleted + upserts, disorder);
    CHECK(seen == inserted + deleted + upserts);
    CHECK(disorder == 0);

    strata_container *db = check_open(SCHEMA, path);
    strata_context *ctx = check_context(db);
    /* Every saved note that was not deleted, and no other; each text once. */
    CHECK(count_of(ctx, "{\"entity\": \"Note\"}") == inserted - deleted);
    /* No counter key twice, however the processes raced. */
    int64_t counters = count_of(ctx, "{\"entity\": \"Counter\"}");
    CHECK(counters > 0 && counters <= COUNTERS);
    for (int k = 0; k < COUNTERS; k++) {
        char d[128];
        snprintf(d, sizeof d, "{\"entity\": \"Counter\", \"predicate\": \"$0.key == \\\"k%d\\\"\"}", k);
        CHECK(count_of(ctx, d) <= 1);
    }
    /* Each process's notes: as many as it kept. */
    char *all = NULL;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Note\", \"sortBy\": [{\"key\": \"text\", \"comparator\": \"binary\"}]}", &all));
    json_object *notes = parse_json_or_die(all);
    for (size_t i = 1; i < json_object_array_length(notes); i++) {
        const char *a = check_str_member(json_object_array_get_idx(notes, i - 1), "text");
        const char *b = check_str_member(json_object_array_get_idx(notes, i), "text");
        CHECK(a && b && strcmp(a, b) < 0);
    }
    json_object_put(notes);
    strata_free(all);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
    return 0;
}
