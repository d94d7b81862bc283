/*
 * strata.h — the C contract of Strata.
 *
 * Strata is SwiftData's model of persistence — schemas written as data,
 * contexts with pending changes, upserts, delete rules, fetch descriptors —
 * on SQLite, for C programs. Every call takes and returns JSON text.
 *
 * This header is the reference: what is not declared here is not public,
 * and everything declared here is documented here. The JSON shapes are
 * specified field by field in docs/JSON.md (versioned by STRATA_JSON_VERSION);
 * the docs/ files this header cites are installed beside it, in
 * <prefix>/share/doc/strata/.
 *
 * OBJECTS AND THEIR LIFECYCLE
 *
 *   1. strata_config     — how to open a store: a schema (or migration plan)
 *                          and options. strata_config_new() ... strata_config_free().
 *   2. strata_container  — an open store (SwiftData's ModelContainer).
 *                          strata_open() ... strata_close(). Shared by threads.
 *   3. strata_context    — a unit of work (SwiftData's ModelContext): pending
 *                          inserts, updates and deletes, written by strata_save()
 *                          in one transaction. strata_context_new() ...
 *                          strata_context_free(). One thread at a time.
 *
 *   A typical program:
 *
 *     strata_config *cfg;    strata_config_new("{\"schema\": {...}}", &cfg);
 *     strata_container *db;  strata_open("trips.store", cfg, &db);
 *     strata_config_free(cfg);                  // the container keeps what it needs
 *     strata_context *ctx;   strata_context_new(db, &ctx);
 *     char *id;              strata_insert(ctx, "Trip", "{\"name\":\"Paris\", ...}", &id);
 *     strata_save(ctx);
 *     strata_free(id);
 *     strata_context_free(ctx);
 *     strata_close(db);
 *
 * OWNERSHIP
 *
 *   Every string the library returns through an out-parameter (out_json,
 *   out_id, out_ids) is a new NUL-terminated UTF-8 string that the caller
 *   frees with strata_free() — never with libc free(). On failure the
 *   out-parameter is set to NULL. Strata keeps no pointer the caller passes
 *   in after the call returns, except the callbacks and their userdata (the
 *   trace hook, stage hooks, the progress callback). A userdata passed with a
 *   free_userdata function belongs to Strata from the call on, whether the
 *   call succeeds or fails: free_userdata is called on it exactly once — at
 *   once when the call fails or installs nothing, otherwise when the last
 *   holder of the callback lets it go (on the thread of the call that lets
 *   go: a strata_config_free(), strata_close(), strata_context_free() or the
 *   call replacing the callback). free_userdata must not call Strata.
 *   The one borrowed return is
 *   strata_last_error(), valid until the next Strata call on the same thread;
 *   strata_version() and strata_errstr() return static text.
 *
 * THREADING
 *
 *   A container may be used from any number of threads at once. A context
 *   belongs to one thread at a time: its calls are serialized internally,
 *   so misuse from two threads cannot corrupt it, but they do not run in
 *   parallel. For parallel work give each thread its own context; contexts of
 *   one file store each have their own SQLite connection (WAL mode: readers
 *   never block, writers take turns, waiting up to 10 s before
 *   STRATA_ERR_BUSY). Reads never take the write lock, not even in a context
 *   with unsaved changes: only strata_save(), and strata_insert() when it
 *   reserves a new block of keys, wait for other writers. The last error is
 *   per thread.
 *
 * STRINGS
 *
 *   All text is UTF-8 and NUL-terminated. JSON input is strict: malformed
 *   JSON, invalid UTF-8, duplicate keys and unknown keys are errors that name
 *   the JSON path. JSON output may gain keys in later versions; readers must
 *   ignore keys they do not know. Identifiers are "Entity/key" strings such
 *   as "PersonalTrip/7", naming the concrete entity. Identifiers in input
 *   must be canonical: the concrete entity and the key without sign or
 *   leading zeros ("Trip/07", and "Trip/7" for the object "PersonalTrip/7",
 *   are STRATA_ERR_INVALID; a canonical identifier of no object is
 *   STRATA_ERR_NOT_FOUND). Dates are accepted for years 0000-9999 only.
 *
 * ERRORS
 *
 *   Every call that can fail returns a strata_status (STRATA_OK is 0). On
 *   failure, strata_last_error() returns a JSON object such as
 *     {"code":"constraint","status":5,"message":"...","entity":"Trip",
 *      "attribute":"name","path":"/bucketList/2/title"}
 *   where "code" is a stable string, "entity", "attribute", "path" (a JSON
 *   pointer into the input) and "sqliteCode" appear when they apply, and for
 *   a failed migration "stage" (the stage's name) and "hookStatus" (the
 *   status a stage hook returned, exactly as returned). "reason", when
 *   present, says what failed finer than "code", as a stable string:
 *     "malformed_json"    (STRATA_ERR_INVALID) the input is not well-formed
 *                         JSON; a well-formed value of the wrong kind is
 *                         STRATA_ERR_VALIDATION, without this reason
 *     "unique_violation"  (STRATA_ERR_CONSTRAINT) an object with the same
 *                         values of a unique attribute or constraint exists
 *     "hook_failed"       (STRATA_ERR_CALLBACK) a stage hook failed
 *   Decide on "code" and "reason", never on "message" (English, may change);
 *   ignore reasons you do not know (more may come). Errors
 *   never contain the values the caller bound. A failed call leaves the
 *   store and the context's pending changes exactly as they were.
 *
 *   Each function's "Fails with" list names every status it returns except
 *   STRATA_ERR_INTERNAL (a bug in Strata, possible from any call that can
 *   fail). A call that reads or writes the store file can fail with
 *   STRATA_ERR_BUSY (the database stayed locked too long), STRATA_ERR_IO,
 *   STRATA_ERR_CORRUPT (SQLite found the file damaged) and STRATA_ERR_NOMEM,
 *   and its list says so; so does every call that returns a string
 *   (STRATA_ERR_NOMEM).
 *
 * CAVEATS
 *
 *   - WAL side files. A file store is accompanied by "<store>-wal" and
 *     "<store>-shm" while open, and by the folder "<store>.strata/" when
 *     external storage is used. Copy or move all of them together, or close
 *     every container first (a clean close folds the WAL back into the file).
 *   - One container per file per process. Open a store once and share the
 *     container between threads; two containers on one file work but contend
 *     for the write lock.
 *   - Never open the store file itself (open/fopen, then close) in a process
 *     that has it open: closing any descriptor of a file drops every POSIX
 *     lock the process holds on it, SQLite's included, and another process
 *     may then take the store for unused, checkpoint and remove its WAL
 *     under the open container (sqlite.org/howtocorrupt.html, 2.2). Strata
 *     itself touches the file only through SQLite; copy a store with the
 *     containers closed.
 *   - Another container or process migrating the store (an app and its
 *     extension at two versions). A container works with the version it
 *     opened. Once another container or process migrated the file to another
 *     version, every strata_save() of the first (checked under the write
 *     lock, before anything is written: one metadata read per save), each
 *     key reservation of strata_insert(), and each read the new layout no
 *     longer answers fail with STRATA_ERR_INCOMPATIBLE_STORE, naming the
 *     stored and the container's versions; reads the new layout still
 *     answers (such as counts) answer as before. Close that container and
 *     open the store again with the new version's configuration.
 *   - Long-lived contexts. Pending changes live in memory until strata_save();
 *     a read that includes them replays them, delete rules included, on a
 *     private overlay of temporary tables that shadow the changed tables for
 *     that read only (the store file is not written and no lock is taken
 *     beyond the read's snapshot). So one unsaved change already makes each
 *     such read cost far more: the temporary tables are made and dropped,
 *     and the read's statements prepared again, per read (about 0.2 ms with
 *     one changed table, 0.5 to 1 ms with three, against 10 to 20 us
 *     without, on a 2-core x86-64 VM); very many unsaved changes cost more
 *     still, and queries over a changed table no longer use its indexes for
 *     joins. Save often; use strata_rollback() to discard, or read with
 *     "includePendingChanges": false. Pending changes that collide on a
 *     unique constraint show as they are; strata_save() refuses them.
 *   - Killed processes. A process killed at any moment leaves the store at
 *     its last completed save, or during a migration at its last completed
 *     stage (the next open resumes): each save, and each migration stage, is
 *     one SQLite transaction, and
 *     external-storage files are written and synced before it commits.
 *     A killed save can leave an orphaned file in "<store>.strata/" (never a
 *     missing one); the next open for writing removes such files.
 *   - A store file is untrusted input. Someone may hand a user a crafted
 *     store (a document, a restored backup). Strata reads and removes only
 *     external-storage files whose names it generates (canonical UUIDs),
 *     relative to "<store>.strata/", never through a symbolic link (nor a
 *     linked folder); a store naming anything else fails with
 *     STRATA_ERR_CORRUPT and nothing outside the folder is opened or removed.
 *     Nothing a store's SQLite schema carries runs inside Strata's calls:
 *     strata_open() refuses (STRATA_ERR_CORRUPT, the file left untouched) a
 *     store holding a view, a trigger, a table, index or column Strata did
 *     not make for its stored schema version, or lacking one it did; and
 *     every connection keeps the file's views and triggers off, distrusts
 *     functions in its schema (trusted_schema off) and is defensive, so a
 *     view or trigger another program adds after the open never runs (a
 *     read of a table replaced by a view fails at once). Tables changed
 *     after the open (a column or table dropped) make the calls that use
 *     them fail with STRATA_ERR_CORRUPT; the next open refuses the file.
 *     Every value a read writes out is first checked against its attribute's
 *     type, and every value a predicate compares against its storage class:
 *     a damaged one is STRATA_ERR_CORRUPT naming entity, attribute and object
 *     (docs/JSON.md, "Damaged stores").
 *   - One snapshot per read. Every read call (get, fetch, count,
 *     identifiers, explain, prefetching) runs in one read transaction: it
 *     sees one committed state plus the context's own pending changes, never
 *     half of another context's save.
 *   - Closing a container while contexts still exist keeps the store open
 *     until the last of its contexts is freed.
 */
#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                 */
/* ------------------------------------------------------------------------ */

/** The library version as text, "MAJOR.MINOR.PATCH". */
#define STRATA_VERSION "0.1.0"
/** The library version as a number: MAJOR * 1000000 + MINOR * 1000 + PATCH. */
#define STRATA_VERSION_NUMBER 1000
/** The version of the JSON shapes documented in docs/JSON.md. */
#define STRATA_JSON_VERSION 1

/** Status codes. The numbers never change; retired numbers stay reserved. */
typedef enum strata_status {
    STRATA_OK = 0,                   /* success */
    STRATA_ERR_MISUSE = 1,           /* NULL or stale handle, NULL argument */
    STRATA_ERR_INVALID = 2,          /* malformed JSON, unknown key/entity/attribute, bad argument */
    STRATA_ERR_SCHEMA = 3,           /* the schema is invalid */
    STRATA_ERR_NOT_FOUND = 4,        /* no object with that identifier */
    STRATA_ERR_CONSTRAINT = 5,       /* unique, deny rule, minimum/maximum count */
    STRATA_ERR_VALIDATION = 6,       /* required value missing, wrong type, not in enum */
    STRATA_ERR_INCOMPATIBLE_STORE = 7, /* not a Strata store, or a store of another schema */
    STRATA_ERR_MIGRATION = 8,        /* a migration failed */
    STRATA_ERR_CALLBACK = 9,         /* a user hook failed */
    STRATA_ERR_BUSY = 10,            /* the database stayed locked too long */
    STRATA_ERR_READONLY = 11,        /* write to a store opened read-only */
    STRATA_ERR_IO = 12,              /* file system error */
    STRATA_ERR_CORRUPT = 13,         /* the store file is damaged */
    STRATA_ERR_NOMEM = 14,           /* out of memory */
    STRATA_ERR_INTERNAL = 15,        /* a bug in Strata; please report it */
    STRATA_ERR_HISTORY_EXPIRED = 16  /* a history token older than the kept history, or of another store */
} strata_status;

/**
 * The runtime library version, e.g. "0.1.0".
 *
 * Returns static text. Cannot fail. Thread-safe.
 */
const char *strata_version(void);

/**
 * A short static English description of a status code ("constraint violated").
 *
 * @param[in] status  any value; unknown values give "unknown status".
 * Returns static text. Cannot fail. Thread-safe.
 */
const char *strata_errstr(int status);

/**
 * The last error of the calling thread as a JSON object.
 *
 * After a successful call it is {"code":"ok","status":0,"message":"not an error"}.
 * The returned text is borrowed: valid until the next Strata call on this
 * thread; do not free it. Cannot fail. Thread-safe (per-thread state).
 */
const char *strata_last_error(void);

/**
 * Frees a string returned by Strata. NULL is ignored.
 *
 * Cannot fail. Thread-safe.
 */
void strata_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Configuration                                                            */
/* ------------------------------------------------------------------------ */

/** Open options and schema for strata_open(). */
typedef struct strata_config strata_config;

/**
 * Creates a configuration from JSON.
 *
 *   {"schema": {...}}                 one schema version (docs/JSON.md)
 *   {"migrationPlan": {"schemas": [...], "stages": [...]}}   versions oldest
 *                                     first; the last one is current; each
 *                                     stage goes from one version to the next
 *                                     (docs/JSON.md §1). strata_open() runs
 *                                     the stages a store of an older version
 *                                     needs (see there). A stage is
 *                                     {"name": "migrateV1toV2", "kind":
 *                                     "lightweight" | "custom", "from": "1.0.0",
 *                                     "to": "2.0.0"}; a custom stage may add
 *                                     "willMigrate": [{"op": "deduplicate",
 *                                     "entity": "Trip", "by": ["name"],
 *                                     "keep": "first" | "last",
 *                                     "mergeRelationships": false}] (run on the
 *                                     old schema before the storage change),
 *                                     and any stage "onDuplicates": "error" |
 *                                     "keepFirst" | "keepLast" (default "error":
 *                                     what adopting a unique constraint does
 *                                     with objects already sharing its values;
 *                                     first and last by identifier order). C
 *                                     hooks of custom stages:
 *                                     strata_config_set_stage_hooks()
 *   options: "inMemory": false        a private in-memory store (path ignored)
 *            "readOnly": false        open an existing store read-only
 *            "history": true          record every save in the store's
 *                                     persistent history (see History below);
 *                                     false records nothing and marks the
 *                                     history incomplete from then on (tokens
 *                                     older than such a save expire). The store
 *                                     stays writable either way
 *            "author": "app"          the author history records with each
 *                                     save (1-256 bytes; none by default); a
 *                                     context may set its own with
 *                                     strata_context_set_author()
 *            "externalStorageThreshold": 131072   bytes from which
 *                                     externalStorage data goes to files
 *            "automaticMigration": true   a store whose schema differs from
 *                                     the current one and is not a version of
 *                                     the plan (or there is no plan) migrates
 *                                     when the change is inferable
 *                                     (lightweight migration); false refuses it
 *                                     with STRATA_ERR_INCOMPATIBLE_STORE
 *            "postgresSchema": "trips"   for a PostgreSQL store: the schema
 *                                     (namespace) of the database it lives in
 *                                     (1-63 bytes; default: the connection's
 *                                     search_path, else "public"; see
 *                                     strata_open); ignored for store files
 *
 * The schema is validated here: every error names its JSON path.
 *
 * @param[in]  config_json  the configuration (not retained).
 * @param[out] out_config   the new configuration; NULL on failure.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL argument), STRATA_ERR_INVALID
 * (malformed JSON, unknown option, an option of the wrong type, neither or
 * both of schema and migrationPlan, a plan with duplicate versions or stage
 * names or a stage that does not go from one version to the next, an
 * unknown stage kind, operation, "keep" or "onDuplicates", operations in a
 * lightweight stage, a deduplicate naming an entity or property the stage's
 * old schema does not have, "didMigrate" in JSON (a didMigrate is a C hook),
 * an empty or over-long "author", a negative externalStorageThreshold,
 * inMemory with readOnly), STRATA_ERR_SCHEMA (invalid schema: unknown key
 * or type, duplicate name, bad identifier, unknown destination, inverse
 * mismatch, inheritance cycle, transient without default, default outside
 * enum, unique on a to-many, unique or index on an externalStorage
 * attribute, "searchable" on anything but a stored string attribute (a
 * composite's string fields may be searchable, the composite itself not),
 * a composite attribute without fields or with an option it
 * does not take (unique, index, default, ...: its fields take them), a
 * composite field that is itself composite, more columns than SQLite
 * allows: at most 1997 per entity hierarchy, each stored attribute and each
 * composite field counting 1, a composite itself 1, and each to-one link
 * held in the row 2, ...).
 * Thread-safe.
 */
strata_status strata_config_new(const char *config_json, strata_config **out_config);

/**
 * Frees a configuration. NULL is ignored. Containers opened with it are not
 * affected: they keep the stage hooks and progress callback they were opened
 * with, whose userdata is freed when the last of them is closed (and its
 * contexts freed).
 *
 * Cannot fail. Thread-safe, but not concurrently with other uses of the same config.
 */
void strata_config_free(strata_config *config);

/* ------------------------------------------------------------------------ */
/* Container                                                                */
/* ------------------------------------------------------------------------ */

/** An open store (ModelContainer). */
typedef struct strata_container strata_container;

/**
 * Opens or creates the store at `path`.
 *
 * A missing or empty file becomes a new store (tables named after the root
 * entities, WAL mode). An existing store opens when its stored schema has
 * the same version hash as the configured one. A file that is not a Strata
 * store is never modified, and an open that fails leaves no file it created.
 * A store opened for writing removes orphaned external-storage files (see
 * Caveats).
 *
 * Otherwise the store is migrated before the call returns (SwiftData's
 * SchemaMigrationPlan, Core Data's lightweight migration):
 *   - The stored schema is looked up in the migration plan by its version
 *     hash (not only its version string, so a store made before the program
 *     adopted a plan is found); the stages from there to the current version
 *     run in order. A custom stage runs its "willMigrate" operations and
 *     willMigrate hook on the old schema, the storage change, then its
 *     didMigrate hook on the new schema (strata_config_set_stage_hooks()).
 *     Each stage is one SQLite transaction, committed with the store's new
 *     version: a failing stage, or a killed process, leaves the store at the
 *     last completed stage, and the next open resumes from there.
 *   - Without a plan, or for a store older than the plan's first schema, an
 *     inferable change migrates as one lightweight stage, unless the
 *     configuration says "automaticMigration": false (then
 *     STRATA_ERR_INCOMPATIBLE_STORE, the file untouched).
 *   - A stored version the plan does not know, or one newer than the current
 *     schema, fails with STRATA_ERR_INCOMPATIBLE_STORE naming the stored
 *     version, the plan's versions and what differs; the file is untouched.
 * strata_infer_migration() and strata_check_store() tell in advance what an
 * open would do. The progress callback (strata_config_set_progress()) hears
 * each step; STRATA_MIGRATION_DEBUG=1 in the environment prints each step and
 * its SQL to stderr.
 *
 * `path` is a plain file name, relative or absolute, used byte for byte: never
 * a SQLite URI, whatever the SQLite build's URI setting. ":memory:", names
 * starting with "file:" (write "./file:..." for a file really named so), a
 * name ending in '/' or naming a directory, and invalid UTF-8 are refused
 * with STRATA_ERR_INVALID; for an in-memory store set "inMemory": true.
 *
 * PostgreSQL stores. A `path` that is a PostgreSQL connection URI
 * ("postgresql://…" or "postgres://…", libpq's syntax: user, password, host or
 * socket folder, port, database, parameters) opens a store kept in a schema
 * (namespace) of that database, which any number of processes on any number
 * of hosts share: the same schemas, JSON, queries and semantics as a store
 * file. The schema is the configuration's "postgresSchema", else the first
 * schema of the connection's search_path (`options=-csearch_path%3Dname` in
 * the URI), else "public"; it is created when missing (unless "readOnly").
 * libpq (libpq.so.5, Debian's libpq5) is loaded on first use: libstrata does
 * not link it, and a program that opens only store files runs without it.
 *   - A missing libpq, an unreachable server, a refused password, a missing
 *     database: STRATA_ERR_IO naming the problem (libpq's or the server's
 *     message). The location's password never appears in an error, a
 *     message or a trace; the location itself is never repeated.
 *   - Keys come from one sequence per entity hierarchy, so processes on any
 *     host never collide; a save is one transaction, retried up to 8 times
 *     when the server reports a serialization failure or a deadlock, then
 *     STRATA_ERR_BUSY; a lost connection is STRATA_ERR_IO, and nothing of the
 *     save is kept.
 *   - Strata installs its functions in the store's schema and updates them
 *     when a newer Strata opens the store writable. A read-only container
 *     on a store whose functions an older Strata installed runs what needs a
 *     newer one (arithmetic in a predicate) only after such an open: until
 *     then those reads fail with STRATA_ERR_INCOMPATIBLE_STORE saying so.
 *   - Text cannot hold U+0000 (PostgreSQL's text type excludes it): a save
 *     of such a value fails with STRATA_ERR_INVALID. "externalStorage" data
 *     stays in its row (bytea; the server moves large values out of line
 *     itself); "externalStorageThreshold" has no effect.
 *   - A read that includes pending changes writes them inside a transaction
 *     that it rolls back: other connections never see them, but the read may
 *     wait for a concurrent save of the same rows.
 *   - Migrations run as on a store file, each stage one PostgreSQL
 *     transaction, under an advisory lock of the store: two processes opening
 *     an old store at once migrate it once, and the second opens the result.
 *     A didMigrate hook reads the previous version ("fromVersion") as on a
 *     store file: the stage copies the old version's tables into temporary
 *     tables of its own transaction when it begins (the stage's DDL holds the
 *     tables until it commits, so no other connection could read them), which
 *     costs one pass over the store in each stage that has a didMigrate hook.
 *   - Persistent history is kept as in a store file; tokens follow commit
 *     order (a save takes its token last, holding the history's counter row
 *     until it commits), so a reader of the changes after a token never
 *     misses a transaction that commits after a later-numbered one.
 *
 * @param[in]  path           the store file; may be NULL for an in-memory store.
 * @param[in]  config         the configuration (not retained; may be freed after).
 * @param[out] out_container  the open container; NULL on failure.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL config/out, NULL path for a file
 * store; a file this thread is migrating: a stage hook opening the store
 * its stage migrates), STRATA_ERR_INVALID (an empty path, ":memory:", a "file:" URI, a
 * directory, invalid UTF-8), STRATA_ERR_INCOMPATIBLE_STORE (not a SQLite
 * database; a SQLite database, or a PostgreSQL schema holding tables, that is not a Strata store; a store written
 * by a newer Strata; a store of another schema that is neither a version of
 * the plan nor inferable, or with "automaticMigration": false — the message
 * names the stored version, the known versions and what changed; the file is
 * left untouched), STRATA_ERR_MIGRATION (a change that cannot be inferred —
 * the message names the entity, the attribute and the change, and for a
 * unique constraint over existing duplicates one duplicated value and how to
 * resolve it: a custom stage, or "onDuplicates"; "stage" in the error JSON
 * names the stage; the store stays at its last completed stage),
 * STRATA_ERR_CALLBACK (a stage hook returned a status other than STRATA_OK:
 * "reason" is "hook_failed", "stage" names the stage, "hookStatus" holds the
 * status as returned; the store stays at the stage's previous version),
 * STRATA_ERR_IO (cannot open or create; a read-only open of a missing
 * file; for a PostgreSQL URI: libpq missing, the server unreachable, the
 * password refused, no such database), STRATA_ERR_BUSY, STRATA_ERR_CORRUPT (a
 * damaged file; a Strata store whose stored schema is missing or cannot be
 * read, or whose stored version hash is not its stored schema's; tables,
 * columns or indexes that are not what Strata makes for the stored schema
 * version; a view, trigger or other schema object Strata did not make —
 * see "A store file is untrusted input" above; the file is left untouched),
 * STRATA_ERR_READONLY (a file the process may not write, opened
 * without "readOnly", when the open must write: a new store in an empty file,
 * a store that needs migrating, or a declaration differing from the stored
 * one only where the version hash does not look, such as defaults, which the
 * open records; a store that needs migrating opened with "readOnly"),
 * STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_open(const char *path, const strata_config *config, strata_container **out_container);

/**
 * Closes a container. NULL is ignored. Contexts created from it keep the
 * store open until they are freed. Its observers end here: none is called
 * after this returns (saves of its contexts still open are not delivered; a
 * callback running on another thread is waited for, so do not close a
 * container inside one of its callbacks), and their userdata is freed.
 *
 * Cannot fail. Do not use the handle afterwards (a stale handle is reported
 * as STRATA_ERR_MISUSE by the calls that take it).
 */
void strata_close(strata_container *container);

/**
 * The container's current schema as JSON (as declared).
 *
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL or stale handle, NULL out_json),
 * STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_container_schema(strata_container *container, char **out_json);

/* ------------------------------------------------------------------------ */
/* Export and import                                                        */
/* ------------------------------------------------------------------------ */

/**
 * Receives the next piece of an export: `length` bytes of UTF-8 JSON lines
 * (not NUL-terminated; each piece ends with a line's end; about 64 KiB). The
 * bytes are valid during the call only. Return 0 to go on; any other value
 * stops the export (STRATA_ERR_CALLBACK). It must not call Strata on the
 * same container.
 */
typedef int (*strata_write_fn)(const char *data, size_t length, void *userdata);

/**
 * Fills `buffer` (room for `capacity` bytes, not NUL-terminated) with the
 * next bytes of an export and returns how many it wrote: 0 at the end of the
 * input, a negative value for an error (STRATA_ERR_CALLBACK). Any number of
 * bytes per call (lines may be split anywhere). It must not call Strata on
 * the same container.
 */
typedef long (*strata_read_fn)(char *buffer, size_t capacity, void *userdata);

/**
 * Writes the whole store as JSON lines (docs/JSON.md section 9) to `write`:
 * a header line with the schema the container opened (and its version and
 * version hash), one line per object with its identifier, entity and every
 * stored attribute (external-storage values inline, base64), a
 * {"strata": "links"} line, one line per object that keeps links (to-one
 * links held in its row, and the pairs of a many-to-many or inverse-less
 * to-many from one end, as identifiers), and an end line counting both.
 *
 * Everything is read on one snapshot (one read transaction on SQLite, one
 * REPEATABLE READ transaction on PostgreSQL) on a connection of its own:
 * writers go on and are not seen, and are not blocked (on an in-memory store
 * the other contexts wait). Each hierarchy is read in pages of 1,000 objects
 * by key, so memory stays bounded whatever the size of the store. Transient
 * attributes and history are not exported.
 *
 * Fails with: STRATA_ERR_MISUSE (NULL or stale container, NULL write),
 * STRATA_ERR_CALLBACK (write returned non-zero: what it received is
 * incomplete), STRATA_ERR_INCOMPATIBLE_STORE (migrated by another container
 * or process since this one opened it), STRATA_ERR_CORRUPT, STRATA_ERR_IO
 * (an external-storage file, or one replaced by a save after the export's
 * snapshot), STRATA_ERR_BUSY, STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_export(strata_container *container, strata_write_fn write, void *userdata);

/**
 * Imports an export (strata_export()) read through `read` into this store,
 * which must hold no object and the export's schema: every object keeps its
 * identifier ("Trip/3" stays "Trip/3"), its links and values, so fetches
 * answer as in the exported store; the key counters move past the imported
 * keys, so later inserts get new keys (contexts made before the import may
 * hold keys reserved before it: make contexts after importing).
 *
 * All or nothing: one transaction, committed after the end line; on any
 * failure nothing is written. Only one line at a time is held (a line may be
 * up to 1 GiB). The import records no history and observers are not told of
 * it. Unlike a save, minimumModelCount and maximumModelCount are not checked
 * (required to-one links are). A link left dangling by the noAction delete
 * rule is exported but refused here (a dangling identifier).
 *
 * @param[out] out_count  the number of objects imported; may be NULL.
 * Fails with (each message starting with the line, "line 7: ..."):
 * STRATA_ERR_MISUSE (NULL or stale container, NULL read),
 * STRATA_ERR_INCOMPATIBLE_STORE (an export of another schema: the message
 * names the entities that differ; or the store holds objects),
 * STRATA_ERR_INVALID (not an export, another format version, malformed JSON,
 * a line out of place, an unknown entity, attribute or relationship, an
 * identifier that names no imported object, a missing end line or one whose
 * counts differ: a truncated export), STRATA_ERR_VALIDATION (a bad value, a
 * required value or to-one link missing), STRATA_ERR_CONSTRAINT (a unique
 * value or an identifier given twice), STRATA_ERR_CALLBACK (read returned a
 * negative value or more than capacity), STRATA_ERR_READONLY, STRATA_ERR_BUSY,
 * STRATA_ERR_IO, STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_import(strata_container *container, strata_read_fn read, void *userdata, int64_t *out_count);

/* ------------------------------------------------------------------------ */
/* Contexts                                                                 */
/* ------------------------------------------------------------------------ */

/** A unit of work with pending changes (ModelContext). */
typedef struct strata_context strata_context;

/**
 * Creates a context on a container. A context of a file store has its own
 * SQLite connection.
 *
 * @param[out] out_context  the new context; NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL or stale container, NULL out),
 * STRATA_ERR_IO (cannot open a connection), STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_context_new(strata_container *container, strata_context **out_context);

/**
 * Frees a context, discarding unsaved changes. NULL is ignored. A prepared
 * fetch made on the context keeps reading the store through it, without the
 * discarded changes.
 *
 * Cannot fail.
 */
void strata_context_free(strata_context *ctx);

/**
 * Whether the context has unsaved changes.
 *
 * Returns 1 if it has, 0 if not or if `ctx` is NULL or stale (then the last
 * error is STRATA_ERR_MISUSE).
 */
int strata_has_changes(strata_context *ctx);

/* ------------------------------------------------------------------------ */
/* Objects                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Inserts an object (and any related objects nested in it) as a pending change.
 *
 * `object_json` holds attribute values by name. A relationship takes an
 * identifier string (link an existing object), an object (insert a related
 * object, which may name a subentity with "_entity"), null (to-one: no
 * object) or, for to-many, an array of identifiers and objects. Missing
 * attributes take their default; a required attribute without default must
 * be given. "_entity" may name a subentity of `entity` to insert. A
 * composite attribute takes an object of its fields (a field left out takes
 * its default) or null; in an update it replaces the whole composite.
 *
 * Unique constraints are checked against saved objects and against this
 * context's pending inserts. On a collision the "_onConflict" key decides:
 * "upsert" (default, as SwiftData) updates the existing object with the given
 * values and returns its identifier; "error" fails with STRATA_ERR_CONSTRAINT;
 * "ignore" returns the existing identifier and changes nothing.
 * Another context or process may save an object with the same unique values
 * after this insert looked and before strata_save(): the save then resolves
 * the insert again, under the write lock, as the insert would have — "upsert"
 * updates that object with the values given, "ignore" keeps it, "error" (or
 * that object being of another entity) fails the save with
 * STRATA_ERR_CONSTRAINT. The identifier this call returned then names no
 * object; the save's later changes naming it (nested objects, links, updates)
 * apply to that object, and its to-many arrays add to that object's sets
 * instead of replacing them.
 * "_id" may be given only where the insert upserts (or ignores) into
 * exactly the object it names, so an object read back can be inserted
 * again; a new object gets its identifier from Strata. A nested object's
 * link back to its owner may be given only if it names that owner.
 *
 * Related objects nest at most 48 levels deep, a `json` value at most 100
 * levels by itself, JSON input at most 128 levels: whatever strata_get and
 * strata_fetch return can be fed back.
 *
 * Nothing is written until strata_save(). On failure no change is recorded.
 *
 * @param[in]  entity       entity name, e.g. "Trip".
 * @param[in]  object_json  a JSON object.
 * @param[out] out_id       may be NULL; else the identifier ("Trip/42"), free
 *                          with strata_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx, NULL entity or json),
 * STRATA_ERR_INVALID (malformed JSON, unknown entity, unknown attribute or
 * relationship, bad "_onConflict", "_entity" or "_id", a key given twice,
 * objects nested too deeply, a link back to the owner naming another object),
 * STRATA_ERR_VALIDATION (wrong value type, required value missing or null,
 * value not in enum, a link to an object of the wrong entity),
 * STRATA_ERR_NOT_FOUND (a linked identifier does not exist, or is deleted in
 * this context), STRATA_ERR_CONSTRAINT (unique collision with
 * "_onConflict":"error", or an upsert onto an object of another entity),
 * STRATA_ERR_READONLY (a store opened read-only, or a store file that cannot
 * be written when keys are reserved), STRATA_ERR_BUSY, STRATA_ERR_IO and
 * STRATA_ERR_CORRUPT (the store is read to resolve linked identifiers and
 * unique keys, and written to reserve keys), STRATA_ERR_INCOMPATIBLE_STORE
 * (another container or process migrated the store, see Caveats),
 * STRATA_ERR_NOMEM.
 */
strata_status strata_insert(strata_context *ctx, const char *entity, const char *object_json, char **out_id);

/**
 * Inserts every object of a JSON array, all or nothing (one parse, one call).
 *
 * @param[out] out_ids  may be NULL; else a JSON array of identifiers in input
 *                      order (an upserted element gives the existing object's
 *                      identifier), free with strata_free().
 * Fails with: as strata_insert(); the error path starts with the element's
 * index ("/3/name"). On failure no element is inserted.
 */
strata_status strata_insert_many(strata_context *ctx, const char *entity, const char *array_json, char **out_ids);

/**
 * Changes attributes and relationships of an object (a pending change).
 *
 * `patch_json` holds the values to change by name, as in strata_insert();
 * null clears an optional value; a to-many array replaces the related set.
 *
 * Fails with: STRATA_ERR_MISUSE, STRATA_ERR_INVALID (malformed JSON, bad
 * identifier, unknown attribute, "_id" or "_entity" not the object's; for
 * related objects inserted by the patch, as strata_insert()),
 * STRATA_ERR_NOT_FOUND (no such object, or deleted in this context; a linked
 * identifier that does not exist), STRATA_ERR_VALIDATION (as strata_insert();
 * a link of the object to itself), STRATA_ERR_CONSTRAINT (a related object
 * the patch inserts, as strata_insert()), STRATA_ERR_READONLY,
 * STRATA_ERR_BUSY, STRATA_ERR_IO and STRATA_ERR_CORRUPT (the store is read to
 * find the object, linked identifiers and saved unique keys, and written to
 * reserve keys for inserted related objects), STRATA_ERR_INCOMPATIBLE_STORE
 * (as strata_insert()), STRATA_ERR_NOMEM.
 * A unique collision caused by an update is reported by strata_save().
 */
strata_status strata_update(strata_context *ctx, const char *id, const char *patch_json);

/**
 * Deletes an object (a pending change). Delete rules apply when saved:
 * nullify clears the other side, cascade deletes related objects, deny
 * makes strata_save() fail while related objects exist, noAction leaves
 * the other side as it is.
 *
 * Fails with: STRATA_ERR_MISUSE, STRATA_ERR_INVALID (bad identifier, unknown
 * entity), STRATA_ERR_NOT_FOUND (no such object, or already deleted in this
 * context), STRATA_ERR_READONLY, STRATA_ERR_BUSY, STRATA_ERR_IO and
 * STRATA_ERR_CORRUPT (the store is read to find the object),
 * STRATA_ERR_INCOMPATIBLE_STORE (as strata_insert()), STRATA_ERR_NOMEM.
 */
strata_status strata_delete(strata_context *ctx, const char *id);

/**
 * One object as JSON, with this context's pending changes applied:
 *   {"_id":"PersonalTrip/7","_entity":"PersonalTrip","name":"...",
 *    "livingAccommodation":"LivingAccommodation/3",
 *    "bucketList":["BucketListItem/9"]}
 * Dates are ISO-8601 UTC text, data base64, uuid canonical text, decimal
 * canonical text ("1.50" is stored and returned as "1.5", so equal decimals
 * collide on unique constraints); transient attributes show their default.
 *
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE, STRATA_ERR_INVALID (bad identifier, unknown
 * entity), STRATA_ERR_NOT_FOUND, STRATA_ERR_CORRUPT (the store file is
 * damaged, or names an external-storage file Strata did not generate, or one
 * behind a symbolic link), STRATA_ERR_IO (reading the store; an
 * external-storage file is missing or unreadable),
 * STRATA_ERR_INCOMPATIBLE_STORE (another container or process migrated the
 * store to another version, see Caveats), STRATA_ERR_BUSY, STRATA_ERR_NOMEM.
 */
strata_status strata_get(strata_context *ctx, const char *id, char **out_json);

/* ------------------------------------------------------------------------ */
/* Fetching                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * Fetches the objects a fetch descriptor matches, as a JSON array (objects
 * shaped as by strata_get()).
 *
 * The descriptor (docs/predicates.md, docs/JSON.md):
 *   {"entity": "Trip",
 *    "predicate": {"and": [{"is": "PersonalTrip"},
 *                          {">=": [{"key": "endDate"}, {"var": "now"}]}]},
 *    "bindings": {"now": "2026-11-22T00:00:00Z"},
 *    "sortBy": [{"key": "startDate", "order": "forward"}],
 *    "fetchLimit": 10, "fetchOffset": 0,
 *    "propertiesToFetch": ["name"],
 *    "relationshipKeyPathsForPrefetching": ["livingAccommodation"],
 *    "includeRelationshipIdentifiers": true,
 *    "includeSubentities": true, "includePendingChanges": true}
 *   Prefetching takes key paths ("bucketList.trip"): each related object
 *   carries the objects of the rest of the path, at most 8 deep, 32 in all.
 *   "includeRelationshipIdentifiers": false leaves out the relationships that
 *   are not prefetched (not read, keys absent), without listing every
 *   attribute in "propertiesToFetch".
 *   "sectionBy": "destination" (SwiftData's sectioned query) returns sections
 *   instead of a plain array:
 *     [{"section": "Paris", "objects": [{…}, {…}]}, {"section": "Rome", …}]
 *   — each object exactly as without sectionBy; [] when nothing matches. The
 *   key path names a string (url, uuid), int or date attribute, through
 *   to-one relationships ("trip.destination") or a composite's field
 *   ("address.city"); a section's key is the value as an object shows it (a
 *   string, a number, a date's text), and nil keys (a nil attribute, a nil
 *   relationship on the way, an object of another subentity) and "" share the
 *   section "". Sections are contiguous and in order: the key is the first
 *   order — direction and comparator those of sortBy's first descriptor when
 *   it names the same key path, else forward with localizedStandard — with nil
 *   first forward and last in reverse, as sortBy orders nil; then the stored
 *   value, so that values the comparator ties (the composed and decomposed
 *   "Café" under localizedStandard) are two sections, each contiguous; then
 *   sortBy orders the objects within a section. fetchLimit and fetchOffset
 *   count objects across sections, not sections. strata_fetch_count ignores
 *   sectionBy; strata_fetch_identifiers refuses it (STRATA_ERR_INVALID), as
 *   strata_prepared_fetch_identifiers() does. Cursors give each batch as
 *   sections: batch_size counts objects, and a section that continues past a
 *   batch starts the next batch again with the same key (callers merge
 *   consecutive sections of equal keys). Refused with STRATA_ERR_INVALID at
 *   "/sectionBy": a key path that is not a string, unknown, a relationship,
 *   through a to-many relationship, a json, composite itself, externalStorage,
 *   bool, double, decimal or data attribute.
 *   In a didMigrate hook, "fromVersion": "<the stage's old version>" reads the
 *   objects as the old version laid them out (same identifiers, as committed
 *   before the stage began), so values can move between shapes in one stage.
 * "predicate" may also be SwiftData #Predicate text, e.g.
 *   "$0.endDate >= now && $0.name.localizedStandardContains(q)".
 * Full-text search: an attribute declared "searchable": true (a string) has
 * a full-text index (SQLite: an FTS5 table; PostgreSQL: a GIN index), and
 * "$0.title.matches(q)" (JSON {"matches": [{"key": "title"}, {"var": "q"}]})
 * holds when every token of the search text is a token of the value, a
 * token followed by '*' matching the tokens it begins ("trav*"); tokens are
 * runs of letters, digits and marks after case, diacritic and width folding
 * (as localizedStandardContains folds), each CJK ideograph, kana and Hangul
 * syllable a token of its own; a search text without a token matches
 * nothing (docs/predicates.md, "Full-text search"). With exactly one matches
 * in the predicate, {"key": "$relevance"} in sortBy puts the most relevant
 * objects first ("order": "reverse": least relevant first). Pending changes
 * are searched too, and strata_explain shows the index.
 * Only "entity" is required. Without sortBy, objects come in primary-key
 * order (insertion order within one context; keys are reserved in blocks
 * per context, see docs/JSON.md). The fetch is one SQL query with every
 * value bound as a parameter, which also reads the identifiers of
 * relationships whose links live in another table (to-many, and to-one whose
 * link the other side holds); each prefetched relationship adds one prepared
 * query of one owner's related objects (at each depth of a key path), run
 * for each owner row as it is written (on a PostgreSQL store: of the related
 * objects of a batch of up to 1,000 owner rows, run once per batch); all in
 * one read transaction (the trace hook reports every run: 1 + N statements
 * for N owners and one prefetched relationship, 1 + ceil(N / 1000) on
 * PostgreSQL; not the BEGIN/ROLLBACK around them). The result is written once, into the buffer
 * returned.
 *
 * Aggregations (Core Data's dictionary results): a descriptor with
 * "groupBy", "aggregates", "having" or "distinct" returns an array of
 * dictionaries instead of objects, one per group:
 *   {"entity": "Trip", "groupBy": ["destination"],
 *    "aggregates": [{"name": "trips", "function": "count"},
 *                   {"name": "items", "function": "count", "keyPath": "bucketList"},
 *                   {"name": "spent", "function": "sum", "keyPath": "bucketList.cost"}],
 *    "having": "$0.trips > 1", "sortBy": [{"key": "spent", "order": "reverse"}]}
 *   -> [{"destination": "Paris", "trips": 3, "items": 7, "spent": "1250.5"}, …]
 * - "groupBy": key paths to attributes (through to-one relationships and
 *   composite fields), or {"name": "guide", "keyPath": "guide.name"}; the
 *   result key is the name, else the key path. Values group when their stored
 *   values are equal (text byte for byte); nil is a group of its own.
 * - "aggregates": {"name", "function", "keyPath"}: count (without keyPath: the
 *   objects; of an attribute: its non-nil values; of a to-many relationship:
 *   its related objects), sum and avg (ints, doubles, decimals), min and max
 *   (ints, doubles, decimals, dates). The key path may pass one to-many
 *   relationship ("bucketList.cost": every related object's value). Sums are
 *   exact: ints in 128 bits (a total outside Int64 fails the fetch with
 *   STRATA_ERR_INVALID), doubles rounded once, decimals exactly (a decimal
 *   mean is rounded half to even to 20 places); a sum over nothing is 0; an
 *   average, min or max over nothing is null. Through a to-many relationship,
 *   a double sum adds each object's exact sum, and an average is that sum over
 *   the number of values. Names are identifiers, unique among the results.
 * - "having": a predicate (JSON or #Predicate text, with "bindings") over the
 *   results, by name: $0.trips > 1, $0.destination != nil.
 * - "distinct": true with "propertiesToFetch" (attributes): the distinct
 *   combinations of those properties.
 * - "sortBy" names results (default: the group keys, ascending);
 *   "fetchLimit"/"fetchOffset" page the results. Without "groupBy", one
 *   dictionary over every matching object. The predicate, inheritance
 *   ("includeSubentities") and pending changes apply as for objects.
 * strata_fetch_count() counts the results and strata_explain() shows the
 * query; strata_fetch_identifiers(), strata_prepare() and strata_fetch_cursor()
 * refuse an aggregation (STRATA_ERR_INVALID).
 *
 * Repeated descriptors: a context keeps what strata_fetch() and
 * strata_fetch_count() compiled, keyed by the descriptor's text with its
 * top-level "bindings" value left out, so the same text again with other
 * bindings (a widget polling) runs the compiled plan with its values, as
 * strata_prepared_fetch() does. Answers and errors are exactly those of
 * compiling the text again (docs/JSON.md §5, "Repeated descriptors"); at
 * most 128 descriptors and about 1 MiB per context are kept.
 *
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx, NULL descriptor or out),
 * STRATA_ERR_INVALID (malformed descriptor, unknown key, entity or key path,
 * type mismatch, operator not valid for a type, transient attribute in a
 * predicate, unknown variable, a value outside an enum attribute's values,
 * matches on an attribute that is not searchable or with a search text
 * read from the object, $relevance without exactly one matches,
 * the value of an externalStorage attribute compared or sorted by (only
 * == nil / != nil), nesting deeper than SQLite can parse — about 34 levels
 * of alternating !, && and ||, 6 of contains/allSatisfy closures, 11 of
 * conditionals; more than 32 joined to-one relationships or 30,000 bound
 * values; see docs/predicates.md §6 — predicate text that does not
 * parse — the error names the JSON path, e.g. "/predicate/and/1/==/0/key",
 * or the text position), STRATA_ERR_CORRUPT, STRATA_ERR_IO and
 * STRATA_ERR_INCOMPATIBLE_STORE (as strata_get(): the store file,
 * external-storage values, a store migrated meanwhile), STRATA_ERR_BUSY,
 * STRATA_ERR_NOMEM.
 */
strata_status strata_fetch(strata_context *ctx, const char *descriptor_json, char **out_json);

/**
 * Counts the objects a descriptor matches (as strata_fetch(), honouring
 * fetchLimit and fetchOffset), without reading them.
 *
 * @param[out] out_count  the count; 0 on failure.
 * Fails with: as strata_fetch().
 */
strata_status strata_fetch_count(strata_context *ctx, const char *descriptor_json, int64_t *out_count);

/**
 * The identifiers of the objects a descriptor matches, as a JSON array of
 * strings, in the descriptor's order (as strata_fetch(), reading no attributes).
 *
 * Fails with: as strata_fetch(); STRATA_ERR_INVALID for a descriptor with
 * "sectionBy" (path "/sectionBy").
 */
strata_status strata_fetch_identifiers(strata_context *ctx, const char *descriptor_json, char **out_json);

/**
 * Explains a fetch: {"sql": "SELECT …", "parameterCount": 2,
 * "queryPlan": [{"id": 7, "parent": 0, "detail": "SEARCH t USING INDEX …"}]}
 * — the objects query strata_fetch() would run, how many values it binds,
 * and SQLite's EXPLAIN QUERY PLAN (to check that an index serves a query).
 *
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Fails with: as strata_fetch().
 */
strata_status strata_explain(strata_context *ctx, const char *descriptor_json, char **out_json);

/**
 * Deletes every object of `entity` (and its subentities) that a predicate
 * matches, as pending changes: delete rules apply when strata_save() writes
 * them, as for strata_delete(). All or nothing. The same as
 * strata_delete_where_count() without the count.
 *
 * @param[in] predicate_json  a predicate (JSON tree, or #Predicate text as a
 *            JSON string), or {"predicate": …, "bindings": {…},
 *            "includeSubentities": true}; NULL deletes every object of the entity.
 * Fails with: STRATA_ERR_MISUSE, STRATA_ERR_INVALID (as strata_fetch()),
 * STRATA_ERR_READONLY, STRATA_ERR_BUSY, STRATA_ERR_IO and STRATA_ERR_CORRUPT
 * (the store is read to find the matching objects), STRATA_ERR_NOMEM.
 */
strata_status strata_delete_where(strata_context *ctx, const char *entity, const char *predicate_json);

/**
 * strata_delete_where(), counting: `*out_count` receives the number of
 * objects the predicate matched (the objects marked for deletion, as Core
 * Data's batch delete counts them: objects their cascades reach at save are
 * not counted; objects already marked for deletion do not match).
 *
 * The matched set is decided now, on the store's latest state plus this
 * context's pending changes (an unsaved insert that matches is deleted too);
 * the deletion is one pending change that reads of the context see at once,
 * strata_rollback() undoes, and strata_save() writes with one DELETE per
 * table (and per step of a cascade), recording each deleted object in
 * history with its tombstone.
 *
 * @param[out] out_count  may be NULL; 0 on failure.
 * Fails with: as strata_delete_where(); a deny rule is enforced by
 * strata_save() (STRATA_ERR_CONSTRAINT).
 */
strata_status strata_delete_where_count(strata_context *ctx, const char *entity, const char *predicate_json, int64_t *out_count);

/**
 * Gives the same values to every object of `entity` (and, unless
 * "includeSubentities" is false, its subentities) that a predicate matches,
 * as one pending change: Core Data's batch update, kept pending like every
 * change (reads of the context see it at once, strata_rollback() undoes it),
 * and written by strata_save() with one UPDATE per table.
 *
 * @param[in] request_json  {"predicate": …, "bindings": {…},
 *            "includeSubentities": true, "set": {"attribute": value, …}}:
 *            predicate, bindings and includeSubentities as in a fetch
 *            descriptor (a predicate absent or null matches every object);
 *            "set" (required, not empty) takes values as strata_update()
 *            takes a patch: attributes (a composite replaced whole) and
 *            to-one relationships whose link the object's row holds (an
 *            identifier, a new object to insert, or null). A to-many
 *            relationship, or a to-one whose link the related object's row
 *            holds, is refused (set them per object with strata_update()).
 * @param[out] out_count  may be NULL; receives the number of objects matched
 *            and updated (0 on failure).
 *
 * The matched set is decided now, on the store's latest state plus this
 * context's pending changes (an unsaved insert that matches is updated too).
 * Each object is validated and recorded as by strata_update(): history and
 * change observers see one update per object, naming the attributes set.
 * All or nothing: on failure the context is as it was.
 *
 * Fails with: STRATA_ERR_MISUSE (NULL ctx, entity or request_json),
 * STRATA_ERR_INVALID (malformed JSON, an unknown entity, an unknown key of
 * the request (path "/key"), a predicate or bindings as strata_fetch() with
 * paths under "/predicate" and "/bindings", "set" missing, empty or not an
 * object, an unknown attribute or a refused relationship in it (path
 * "/set/name")), STRATA_ERR_VALIDATION (a value of the wrong type, null for
 * a required attribute, not one of an enum's values, a composite's required
 * field missing (path "/set/name…"); a link of an object to itself),
 * STRATA_ERR_NOT_FOUND (a linked identifier that does not exist),
 * STRATA_ERR_READONLY, STRATA_ERR_BUSY, STRATA_ERR_IO and STRATA_ERR_CORRUPT
 * (the store is read to find the matching objects and saved unique keys),
 * STRATA_ERR_INCOMPATIBLE_STORE (as strata_insert()), STRATA_ERR_NOMEM.
 * As with strata_update(), a unique collision (a "set" giving the same
 * unique values to two or more objects) is reported by strata_save()
 * (STRATA_ERR_CONSTRAINT), as are relationship counts.
 */
strata_status strata_update_where(strata_context *ctx, const char *entity, const char *request_json, int64_t *out_count);

/* ------------------------------------------------------------------------ */
/* Prepared fetches and cursors                                             */
/* ------------------------------------------------------------------------ */

/** A fetch descriptor decoded, checked, planned and compiled once (strata_prepare()). */
typedef struct strata_prepared strata_prepared;
/** The objects of one fetch, read in batches on one snapshot (strata_fetch_cursor()). */
typedef struct strata_cursor strata_cursor;

/**
 * Prepares a fetch descriptor (as strata_fetch() takes it) to run many times
 * with new values of its variables, as sqlite3_prepare() is to sqlite3_exec():
 * parsing, checking, planning and SQL happen here, once; a run converts and
 * binds its values and reads.
 *
 * Each variable the predicate compares with something typed (a key path, a
 * string it searches: "$0.startDate >= now", "$0.name.contains(q)") becomes a
 * parameter of the compiled query, typed by what it is compared with; its
 * value need not be known yet. Where only a value can decide the check —
 * two variables compared with each other, "names.contains($0.name)" (an array
 * or a string), "q.count" — and for a run that binds null or an array to a
 * parameter, that run checks the descriptor with its values as strata_fetch()
 * does (same answer, no speed-up). The descriptor's own "bindings" are the
 * values a run does not give.
 *
 * A prepared fetch reads through its context (its pending changes, as they
 * are at each run, when includePendingChanges is true) and keeps the context
 * alive; use it from one thread at a time, as the context.
 *
 * @param[out] out_prepared  free with strata_prepared_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx, NULL descriptor or out),
 * STRATA_ERR_INVALID (as strata_fetch(), except that a variable without a
 * value is not an error until a run), STRATA_ERR_NOMEM.
 */
strata_status strata_prepare(strata_context *ctx, const char *descriptor_json, strata_prepared **out_prepared);

/**
 * Runs a prepared fetch: the objects matching, as strata_fetch() returns them.
 *
 * @param[in] bindings_json  {"now": "2026-11-24T00:00:00Z", "q": "Paris"}: the
 *            variables' values (as a descriptor's "bindings"); NULL or {} for
 *            the descriptor's own.
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale prepared, NULL out),
 * STRATA_ERR_INVALID (bindings not an object; a variable without a value or
 * with a value of the wrong type, outside an enum attribute's values — the
 * error path is "/<variable>"), and as strata_fetch().
 */
strata_status strata_prepared_fetch(strata_prepared *prepared, const char *bindings_json, char **out_json);

/** Runs a prepared fetch as strata_fetch_count(). Fails with: as strata_prepared_fetch(). */
strata_status strata_prepared_fetch_count(strata_prepared *prepared, const char *bindings_json, int64_t *out_count);

/** Runs a prepared fetch as strata_fetch_identifiers(). Fails with: as strata_prepared_fetch(). */
strata_status strata_prepared_fetch_identifiers(strata_prepared *prepared, const char *bindings_json, char **out_json);

/** Frees a prepared fetch (NULL is a no-op). */
void strata_prepared_free(strata_prepared *prepared);

/**
 * Opens a cursor over the objects a descriptor matches (SwiftData's
 * fetch(_:batchSize:) / enumerate): strata_cursor_next() returns them in
 * order, a batch at a time, so that on a store file a result of any size is
 * read in the memory of one batch (see below for the other stores).
 *
 * Every batch sees the one committed snapshot taken when
 * strata_fetch_cursor() returns (not at the first batch: a save made in
 * between is not in it), plus the context's pending changes as they were
 * then (includePendingChanges). On a
 * store file the cursor reads on its own connection and holds a read
 * transaction until its last batch or strata_cursor_free(): the context stays
 * free to fetch, change and save meanwhile (what it saves is not in the
 * cursor's batches), and the WAL cannot be checkpointed past the cursor's
 * snapshot until then. On a PostgreSQL store likewise: its own connection
 * and REPEATABLE READ transaction, the rows fetched from a server-side cursor
 * a batch at a time (a migration of the store waits until it ends). On an
 * in-memory store, on a PostgreSQL store with pending changes included or
 * inside a transaction, and in a migration stage's hook, the objects are read when
 * the cursor opens (on one snapshot; no transaction is held afterwards) and
 * handed out in batches: there the memory of the whole result is held until
 * the cursor is freed.
 *
 * @param[out] out_cursor  free with strata_cursor_free(); NULL on failure.
 * Fails with: as strata_fetch().
 */
strata_status strata_fetch_cursor(strata_context *ctx, const char *descriptor_json, strata_cursor **out_cursor);

/**
 * The next objects of a cursor (at most batch_size), as a JSON array shaped
 * as strata_fetch()'s; "[]" once every object was read (and on every later
 * call). After the last object, or an error, the cursor's read has ended.
 * With "sectionBy", a batch is an array of sections holding at most
 * batch_size objects in all; a section split by a batch ends it and starts
 * the next one again with the same key (merge consecutive equal keys).
 *
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale cursor, NULL out),
 * STRATA_ERR_INVALID (batch_size < 1), STRATA_ERR_CORRUPT, STRATA_ERR_IO,
 * STRATA_ERR_INCOMPATIBLE_STORE (as strata_fetch()), STRATA_ERR_NOMEM.
 */
strata_status strata_cursor_next(strata_cursor *cursor, int64_t batch_size, char **out_json);

/** Ends a cursor's read and frees it (NULL is a no-op). */
void strata_cursor_free(strata_cursor *cursor);

/* ------------------------------------------------------------------------ */
/* Saving                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Writes every pending change in one SQLite transaction, applying delete
 * rules and checking required relationships and minimum/maximum counts.
 *
 * On failure nothing is written and the pending changes stay, so the caller
 * may fix them and save again, or roll back. Saving with no changes succeeds.
 *
 * Memory: on SQLite, a save that inserts or updates 1,024 rows or more
 * holds a page cache of up to 16 MiB (SQLite's own default is 2,000 KiB)
 * until it ends, committed or not; the pages above the connection's own
 * limit are then freed. A large save's index pages then stay in memory
 * instead of going to the write-ahead log and being read back.
 *
 * Fails with: STRATA_ERR_MISUSE, STRATA_ERR_CONSTRAINT (deny rule, count
 * outside minimumModelCount/maximumModelCount, an update's unique collision
 * with an object saved meanwhile, an insert's with "_onConflict":"error" or
 * with an object of another entity — see strata_insert()), STRATA_ERR_VALIDATION (required relationship not
 * set), STRATA_ERR_INCOMPATIBLE_STORE (another container or process
 * migrated the store to another version since this container opened it: the
 * message names both versions; nothing is written, see Caveats),
 * STRATA_ERR_BUSY, STRATA_ERR_IO (writing the store or an
 * external-storage file), STRATA_ERR_READONLY, STRATA_ERR_CORRUPT (the store
 * file is damaged; a deleted or replaced value names an external-storage file
 * Strata did not generate: nothing is removed), STRATA_ERR_NOMEM.
 */
strata_status strata_save(strata_context *ctx);

/**
 * Discards every pending change of the context.
 *
 * Fails with: STRATA_ERR_MISUSE (NULL or stale ctx).
 */
strata_status strata_rollback(strata_context *ctx);

/* ------------------------------------------------------------------------ */
/* Tracing                                                                  */
/* ------------------------------------------------------------------------ */

/** Called with the text of each SQL statement a container's connections run. */
typedef void (*strata_trace_fn)(const char *sql, void *userdata);
/** Frees a callback's userdata; may be NULL. */
typedef void (*strata_free_fn)(void *userdata);

/**
 * Installs (or with fn NULL, removes) a hook that sees every SQL statement
 * the container's connections execute, each time it runs (a cached statement
 * run again is seen again; a prefetch's statement once per owner row, on
 * PostgreSQL once per batch of owner rows) — for
 * counting queries in tests and for debugging. Not seen: the BEGIN/ROLLBACK
 * and SAVEPOINT/RELEASE that wrap each read, and the CREATE of the temporary
 * tables that hold a context's unsaved changes while it reads (the statements
 * filling them are seen). STRATA_SQL_DEBUG=1 in the environment prints all of
 * them to stderr. Without a hook, tracing costs one atomic load per run.
 *
 * The hook is called on the thread that runs the statement, possibly from
 * several threads at once; it must not call back into Strata. The previous
 * hook's free_userdata is called when it is replaced or removed, and the
 * current one's when the container and all its contexts are gone. When fn
 * is NULL, or the call fails, free_userdata (if any) is called on userdata
 * at once: userdata belongs to Strata from the call on (see Ownership).
 *
 * Fails with: STRATA_ERR_MISUSE (NULL or stale container).
 */
strata_status strata_set_trace(strata_container *container, strata_trace_fn fn, void *userdata,
                               strata_free_fn free_userdata);

/* ------------------------------------------------------------------------ */
/* Migration                                                                */
/* ------------------------------------------------------------------------ */

/*
 * A store of an older schema is migrated by strata_open() (see there). The
 * calls below attach C code to a configuration's custom stages, report
 * progress, and tell in advance — without writing — what an open would do.
 */

/**
 * A custom stage's hook (SwiftData's willMigrate / didMigrate closures).
 *
 * `ctx` is a context bound to the stage's old schema (willMigrate, before the
 * storage change) or new schema (didMigrate, after it), inside the stage's
 * transaction: use the ordinary calls on it (strata_fetch() with
 * propertiesToFetch and prefetching, strata_insert(), strata_update(),
 * strata_delete(), strata_save()); changes left unsaved are saved when the
 * hook returns. Its saves are recorded in history with the configuration's
 * "author" (unless the hook sets another with strata_context_set_author())
 * and the stage's name as context name. `ctx` is lent for the call only: do
 * not keep it (afterwards every call with it fails with STRATA_ERR_MISUSE,
 * and so does every run of a prepared fetch made on it; a cursor made on it
 * was read when it opened) and do not free it (strata_context_free() ignores
 * it). The hook runs on the thread that called strata_open(); a
 * strata_open() of the store being migrated on that thread fails at once
 * with STRATA_ERR_MISUSE (it would wait for the stage's own write lock): work
 * through `ctx`.
 *
 * Return STRATA_OK to go on. Any other value aborts the stage: strata_open()
 * fails with STRATA_ERR_CALLBACK, the error JSON's "reason" is "hook_failed",
 * "stage" names the stage, "hookStatus" holds the returned value exactly as
 * returned (also a value that is not a strata_status), and the store stays at
 * the stage's previous version.
 */
typedef strata_status (*strata_stage_fn)(strata_context *ctx, void *userdata);

/**
 * Sets (or, with both hooks NULL, removes) the C hooks of the custom stage
 * named `stage_name` of the configuration's migration plan. Either hook may be
 * NULL. Setting hooks again replaces the stage's previous ones.
 *
 * The hooks and userdata are copied into every container strata_open() opens
 * with the configuration afterwards: a container keeps the hooks it was
 * opened with, whatever later happens to the configuration.
 *
 * Ownership: `userdata` belongs to Strata from this call on, whether it
 * succeeds or fails. free_userdata (may be NULL) is called on it exactly once:
 * at once when the call fails or both hooks are NULL; otherwise when the
 * hooks are replaced or removed, or the configuration is freed, and every
 * container opened with the configuration while they were set is closed (and
 * its contexts freed) — whichever comes last. Both hooks share the one
 * userdata.
 *
 * @param[in] config        the configuration (made with a "migrationPlan").
 * @param[in] stage_name    the name of a stage of "kind": "custom".
 * @param[in] will_migrate  called before the stage's storage change; may be NULL.
 * @param[in] did_migrate   called after the stage's storage change; may be NULL.
 * @param[in] userdata      passed to both hooks.
 * @param[in] free_userdata frees userdata; may be NULL.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL or stale config, NULL stage_name),
 * STRATA_ERR_INVALID (a configuration without a migration plan; no stage of
 * that name — the message lists the plan's stages; a lightweight stage).
 * On failure the configuration is unchanged.
 * Not concurrently with other uses of the same config.
 */
strata_status strata_config_set_stage_hooks(strata_config *config, const char *stage_name,
                                            strata_stage_fn will_migrate, strata_stage_fn did_migrate,
                                            void *userdata, strata_free_fn free_userdata);

/**
 * Called with each migration progress event, a JSON object (docs/JSON.md §7)
 * such as {"stage": "migrateV1toV2", "step": "copy", "entity": "Trip",
 * "done": 120000, "total": 1000000}. `event_json` is valid during the call
 * only. Called on the thread that called strata_open(), inside the stage's
 * transaction: it must not call Strata.
 */
typedef void (*strata_progress_fn)(const char *event_json, void *userdata);

/**
 * Sets (or, with fn NULL, removes) the callback that hears the progress of
 * migrations run by strata_open() with this configuration. Setting it again
 * replaces the previous one. Containers keep the callback they were opened
 * with, as for strata_config_set_stage_hooks().
 *
 * Ownership: as strata_config_set_stage_hooks(): userdata belongs to Strata
 * from this call on; free_userdata (may be NULL) is called exactly once — at
 * once when the call fails or fn is NULL, otherwise when the callback is
 * replaced, removed or the configuration freed, and the containers opened
 * with it are closed.
 *
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL or stale config).
 * Not concurrently with other uses of the same config.
 */
strata_status strata_config_set_progress(strata_config *config, strata_progress_fn fn, void *userdata,
                                         strata_free_fn free_userdata);

/**
 * The lightweight migration from one schema to another, as strata_open()
 * would infer it, without touching any store (Core Data's inferred mapping
 * model): {"steps": [{"kind": "renameAttribute", "entity": "Trip",
 * "from": "start_date", "to": "startDate", "sql": ["ALTER TABLE …"]}, …]}
 * (docs/JSON.md §7). Version strings are labels, not part of the comparison;
 * an entity renamed through "originalName" keeps its objects' keys
 * ("Voyage/4" becomes "Trip/4").
 *
 * @param[in]  from_schema_json  the old schema (docs/JSON.md §2).
 * @param[in]  to_schema_json    the new schema; its "originalName"s may name
 *                               properties and entities of the old one.
 * @param[out] out_json          new string, free with strata_free(); NULL on failure.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL argument), STRATA_ERR_INVALID
 * (malformed JSON or invalid UTF-8 — the path starts with "/from" or "/to"
 * to say which schema), STRATA_ERR_SCHEMA (an invalid schema, the path
 * likewise), STRATA_ERR_MIGRATION (a change that cannot be inferred: the
 * message names the entity, the attribute and the change), STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_infer_migration(const char *from_schema_json, const char *to_schema_json, char **out_json);

/**
 * What strata_open() would do with the store at `path` and this
 * configuration, without doing it: the file is opened read-only and never
 * written (a missing file is not created; SQLite may leave the empty -wal
 * and -shm side files any WAL reader makes). Returns
 *   {"status": "compatible" | "migratable" | "incompatible",
 *    "storedVersion": "1.0.0", "currentVersion": "4.0.0",
 *    "stages": [{"name": "migrateV1toV2", "kind": "custom",
 *                "from": "1.0.0", "to": "2.0.0"}, …], "reason": "…"}
 * (docs/JSON.md §7): "compatible" opens as it is, "migratable" would run the
 * listed stages, "incompatible" would be refused and "reason" says why
 * (a Strata store of a version the plan does not know, a change that cannot
 * be inferred, "automaticMigration": false: described, not an error).
 * What depends on the data (duplicates under a new unique constraint, a
 * required value missing) shows only when migrating.
 *
 * `path` is handled as by strata_open(): a plain file name (invalid UTF-8
 * refused) or a PostgreSQL URI, whose schema is read without writing (a
 * missing schema is "compatible": opening creates the store).
 *
 * @param[in]  path      the store file.
 * @param[in]  config    the configuration to check against (not retained).
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL path, NULL or stale config, NULL
 * out_json), STRATA_ERR_INVALID (an empty path, ":memory:", a "file:" URI, a
 * directory, invalid UTF-8, an in-memory configuration), STRATA_ERR_IO (no
 * file at `path`, or it cannot be read; a PostgreSQL server that cannot be
 * reached), STRATA_ERR_INCOMPATIBLE_STORE (not
 * a SQLite database, or a SQLite database that is not a Strata store),
 * STRATA_ERR_BUSY, STRATA_ERR_CORRUPT, STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_check_store(const char *path, const strata_config *config, char **out_json);

/* ---------------------------------------------------------------------------
 * History and change observation
 *
 * Every save of a container opened with "history": true (the default) is
 * recorded in the store, in the save's own SQLite transaction: a rolled-back
 * or failed save records nothing. A transaction holds
 *   "token"        opaque text, "42@5f0c9a1e": increasing within a store,
 *                  never given twice (not even after pruning), and tied to
 *                  the store (a token of another store is refused)
 *   "timestamp"    ISO-8601 UTC to the microsecond, written as other dates
 *                  (.uuuuuu, .mmm for a whole millisecond; exactly: a transaction's
 *                  timestamp given back in a predicate selects it)
 *   "author"       the context's author, else the configuration's (left out
 *                  when there is none)
 *   "contextName"  the context's name (strata_context_set_name), if any
 *   "changes"      [{"kind": "insert" | "update" | "delete", "id": "Trip/4",
 *                    "entity": "Trip", "attributes": [changed names] (update),
 *                    "tombstone": {preserveValueOnDeletion values} (delete),
 *                    "old": {...}, "new": {...} (update of attributes
 *                    declared with "historyValues": true)}]
 *   "unrecorded"   true for the mark a save of a container with
 *                  "history": false leaves when the store keeps history:
 *                  "changes" is empty (what changed is not known) and the
 *                  tokens before it expire; left out otherwise
 * Changes include what delete rules did (cascaded deletes, nullified links:
 * both ends of a changed link are updates naming the relationship). Keys
 * that do not apply are left out.
 *
 * Cost and growth: a save writes one transaction row plus one change row per
 * changed object, where objects changed one after another with the same
 * entity, kind and changed attributes and nothing else to record share a row
 * (up to 4096 objects to a row: a bulk insert of 100,000 objects is 25). Values
 * ("tombstone", "old", "new") make a row per object, and "historyValues"
 * reads each updated object's old values before writing. History grows
 * until pruned with strata_delete_history(); prune what every reader has
 * consumed.
 *
 * Migrations keep every history row; entity and attribute renames apply to
 * older history, which then reads under the new names. Saves of migration
 * stage hooks (and their deduplications) are recorded like any other, with
 * the stage's name as "contextName".
 * ------------------------------------------------------------------------ */

/**
 * Fetches history transactions, as a JSON array of the objects above.
 *
 * The descriptor (docs/JSON.md §8) is a JSON object, every key optional:
 *   "predicate"  over transactions, JSON or #Predicate text: "token" (or
 *                "transactionIdentifier") compared with a token string,
 *                "timestamp" with a date, "author" and "contextName" with a
 *                string or nil, and "$0.changes.contains { entityNames.contains(
 *                $0.changedPersistentIdentifier.entityName) }" (also
 *                allSatisfy, isEmpty, == and != on entityName). An entity
 *                name matches the entity and its subentities.
 *   "bindings"   values of the predicate's variables ("lastToken": "41@…")
 *   "sortBy"     [{"key": "transactionIdentifier" | "token" | "timestamp" |
 *                "author" | "contextName", "order": "forward" | "reverse"}];
 *                default: by token, oldest first
 *   "fetchLimit" at most this many transactions
 * NULL or "{}" fetches every transaction. The latest token:
 * {"sortBy": [{"key": "transactionIdentifier", "order": "reverse"}],
 *  "fetchLimit": 1}, served by the primary key (strata_explain_history()).
 *
 * A predicate asking for the transactions after a token ("token > t",
 * "token >= t") fails with STRATA_ERR_HISTORY_EXPIRED (code
 * "history_token_expired") when the history no longer holds every change
 * after it: transactions after it were deleted, a container with
 * "history": false saved after it, the token is newer than the store's
 * history (a replaced or restored store), or it belongs to another store.
 * Refetch everything, then continue from the latest token.
 *
 * Reads one committed snapshot; the context's pending changes are not history.
 *
 * @param[in]  ctx              the context.
 * @param[in]  descriptor_json  the history descriptor, or NULL.
 * @param[out] out_json         new string, free with strata_free(); NULL on failure.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx, NULL out_json),
 * STRATA_ERR_INVALID (malformed descriptor, unknown key, an unsupported
 * predicate form or field, a value of the wrong type, a malformed token, a
 * missing binding: the message names the JSON path or text position; a
 * predicate nested deeper than SQLite parses or comparing with more than
 * 30,000 values: path "/predicate"), STRATA_ERR_HISTORY_EXPIRED,
 * STRATA_ERR_CORRUPT (damaged history tables: missing, not as Strata made
 * them, or holding rows Strata never writes; a healthy store never),
 * STRATA_ERR_BUSY, STRATA_ERR_IO, STRATA_ERR_NOMEM. An error about a token
 * names where it is ("path": "/bindings/lastToken"), never the token.
 * Not thread-safe for one ctx.
 */
strata_status strata_fetch_history(strata_context *ctx, const char *descriptor_json, char **out_json);

/**
 * How strata_fetch_history() would run a descriptor:
 * {"sql": "…", "parameterCount": n, "queryPlan": [{"id", "parent", "detail"}]}
 * ("sql": null, "parameterCount": 0 and an empty plan when the store has no
 * history yet).
 * Fails as strata_fetch_history(), never with STRATA_ERR_HISTORY_EXPIRED.
 */
strata_status strata_explain_history(strata_context *ctx, const char *descriptor_json, char **out_json);

/**
 * Deletes history transactions and their changes, in one transaction:
 * those the descriptor's "predicate" (with its "bindings") selects, or all
 * of them for "{}". Everything before a token:
 * {"predicate": "$0.token <= t", "bindings": {"t": "41@5f0c9a1e"}}.
 * Fetching after a token older than the newest deleted transaction then
 * fails with STRATA_ERR_HISTORY_EXPIRED; tokens are never reused. In a
 * migration stage hook, the delete is part of the migration's transaction
 * (undone if the migration fails).
 *
 * @param[in] ctx              the context (its pending changes are untouched).
 * @param[in] descriptor_json  {"predicate": …, "bindings": …} or "{}".
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx, NULL descriptor_json),
 * STRATA_ERR_INVALID (as strata_fetch_history(); "sortBy" and "fetchLimit"
 * are refused, even empty), STRATA_ERR_HISTORY_EXPIRED (a token of another store),
 * STRATA_ERR_READONLY, STRATA_ERR_BUSY, STRATA_ERR_IO, STRATA_ERR_CORRUPT,
 * STRATA_ERR_NOMEM.
 * Not thread-safe for one ctx.
 */
strata_status strata_delete_history(strata_context *ctx, const char *descriptor_json);

/**
 * Sets the author history records with this context's saves (NULL: none),
 * instead of the configuration's "author". 1-256 bytes of UTF-8.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx), STRATA_ERR_INVALID (empty,
 * too long, invalid UTF-8).
 */
strata_status strata_context_set_author(strata_context *ctx, const char *author);

/**
 * Sets the context name history records with this context's saves (NULL:
 * none). 1-256 bytes of UTF-8.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale ctx), STRATA_ERR_INVALID.
 */
strata_status strata_context_set_name(strata_context *ctx, const char *name);

/** An observer of a container's changes (strata_observe()). */
typedef struct strata_observer strata_observer;

/**
 * A change callback: `changes_json` (valid during the call only) is
 *   {"token": "42@5f0c9a1e",
 *    "inserted": {"Trip": ["Trip/1", …], …},
 *    "updated":  {"Trip": [{"id": "Trip/2", "attributes": ["name"]}], …},
 *    "deleted":  {"Trip": [{"id": "Trip/3", "tombstone": {"name": "Paris"}}], …}}
 * with only the entities the observer asked for, and always all three keys
 * ("token" is left out for a store that keeps no history: a container with
 * "history": false on a store no container recorded history in). When the
 * history no longer covers everything since the last delivered transaction
 * (transactions deleted, or an unrecorded save of another container), a
 * poll delivers {"token": <latest>, "expired": true} once instead: refetch
 * everything.
 */
typedef void (*strata_change_fn)(const char *changes_json, void *userdata);

/**
 * Observes changes to the store.
 *
 * - Saves of this container: delivered after each save commits, on the
 *   thread that called strata_save() (before it returns), once per save.
 * - Saves of other processes and of other containers (even in this process)
 *   on the same file: found in the history after the last transaction this
 *   container delivered, and delivered by strata_poll_changes() on the
 *   thread that calls it, one callback per transaction, oldest first.
 *
 * The filter is NULL, "{}" (every entity) or {"entityNames": ["Trip",
 * "LivingAccommodation"]}: a name covers its subentities; a callback fires
 * only for a save or transaction that changed one of them, with only their
 * changes. The first observer of a container starts polling from the
 * store's latest transaction.
 *
 * The userdata belongs to Strata from this call on: free_userdata (if not
 * NULL) is called once, when the observer is removed, when the container
 * is closed (by strata_close(), before it returns; no callback runs after
 * that), or at once if this call fails. A callback must not close its
 * container; it may call any other function, strata_observer_remove() of
 * its own observer included.
 *
 * @param[in]  container      the container.
 * @param[in]  filter_json    the filter, or NULL.
 * @param[in]  callback       called with each change set.
 * @param[in]  userdata       passed to the callback.
 * @param[in]  free_userdata  frees the userdata, or NULL.
 * @param[out] out_observer   the observer; NULL on failure.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale container, NULL callback, NULL
 * out_observer), STRATA_ERR_INVALID (malformed filter, unknown key, an
 * entity the schema does not have), STRATA_ERR_BUSY, STRATA_ERR_IO,
 * STRATA_ERR_CORRUPT (reading the latest token), STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_observe(strata_container *container, const char *filter_json, strata_change_fn callback,
                             void *userdata, strata_free_fn free_userdata, strata_observer **out_observer);

/**
 * Delivers, to this container's observers, the transactions other writers
 * recorded since the last one delivered (see strata_observe()). Does nothing
 * before the first observer. Polls are serialized.
 *
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL/stale container), STRATA_ERR_CORRUPT
 * (damaged history tables), STRATA_ERR_BUSY, STRATA_ERR_IO,
 * STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_poll_changes(strata_container *container);

/**
 * Stops an observer and frees its userdata. Safe inside the observer's own
 * callback (the userdata is freed when that callback returns). A callback
 * already running on another thread may finish after this returns; no new
 * one starts. After strata_close() of its container, only frees the handle.
 * NULL and stale handles are ignored.
 */
void strata_observer_remove(strata_observer *observer);

/* ---------------------------------------------------------------------------
 * Backup, integrity and vacuum
 *
 * Library calls for a program that must copy its store while it runs, check
 * it after a crash, or give space back; the `strata` command runs the same.
 * ------------------------------------------------------------------------- */

/**
 * Copies a SQLite store file, online, to `destination`, with the
 * external-storage files its rows name: one consistent snapshot while this
 * and other processes write. The copy opens as a store of the same schema
 * and passes strata_check_integrity() when the store did.
 *
 * The copy reads one WAL snapshot on a connection of its own, through
 * SQLite's online backup API (256 pages per step, retried while busy):
 * writers are never blocked (readers do not block writers in WAL mode), the
 * copy never restarts, and it holds the pages as they were when it started.
 * The external-storage files that snapshot's rows name are then copied (a
 * file written after the snapshot is not; a file a later save removed makes
 * the copy start over on a newer snapshot). Blocks the caller for as long as
 * the copy takes; blocks no other thread or process. The copy is written
 * beside `destination` under a temporary name and renamed into place when
 * complete: a failed backup leaves no destination behind.
 *
 * A PostgreSQL store is refused (STRATA_ERR_INVALID, naming pg_dump): its
 * server's own tools copy it consistently while it is written (pg_dump of
 * the store's schema), with its types, sequences and permissions, which a
 * copy into a SQLite file would not keep. An in-memory store is refused too.
 *
 * @param[in] db            the container.
 * @param[in] destination   a plain file name (as strata_open() takes one);
 *                          its "<destination>.strata" folder receives the files.
 * @param[in] options_json  NULL (no options) or {"overwrite": true|false}:
 *                          with true, an existing destination (its file,
 *                          -wal/-shm side files and .strata folder) is
 *                          replaced once the copy is complete (docs/JSON.md,
 *                          "Backup and integrity").
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL db or destination, a stale handle),
 * STRATA_ERR_INVALID (the destination exists and "overwrite" is not true,
 * the destination is the store itself, a bad path, malformed options or an
 * unknown key, a PostgreSQL or in-memory store), STRATA_ERR_IO (the
 * destination cannot be written), STRATA_ERR_BUSY, STRATA_ERR_CORRUPT,
 * STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_backup(strata_container *db, const char *destination, const char *options_json);

/**
 * Checks the store and reports what is damaged, as
 *   {"ok": true|false,
 *    "problems": [{"kind": "link", "message": "…", "entity": "Item",
 *                  "attribute": "trip", "id": "Item/3"}, …],
 *    "truncated": false}
 * (docs/JSON.md, "Backup and integrity"; "entity", "attribute" and "id" are
 * present where they apply). The kinds:
 *   "sqlite"    SQLite's PRAGMA integrity_check (pages, records, indexes);
 *   "table"     the tables, columns or indexes do not match the stored schema
 *               (the checks below then do not run: they would only repeat it);
 *   "link"      a link held in a row points at no object, or at an object
 *               outside the relationship's destination (and its subentities);
 *   "pair"      a join-table row whose owner or target is missing, or of the
 *               wrong entity ("id" names the owner);
 *   "external"  a name whose file is missing from the store's .strata folder,
 *               or a file there that no row names (an orphan);
 *   "history"   a history row that does not parse (the first one: rows after
 *               it are not read);
 *   "value"     a stored value of the wrong storage class or content, or an
 *               unknown entity name: what a fetch of the object refuses.
 * At most 1000 problems are listed ("truncated": true when there were more).
 * On PostgreSQL every check but "sqlite" and "external" runs (data lives in
 * the rows). Damage is reported, never returned as a status: a store so
 * damaged that it does not open fails strata_open() as before.
 *
 * The checks read one snapshot (SQLite: a read transaction of a connection
 * of the check's own; PostgreSQL: one REPEATABLE READ transaction), in pages
 * of rows: memory does not grow with the store (but for the names of the
 * external-storage files, one set of them). History is read on a snapshot of
 * its own. Writers are not blocked, with one exception on a writable SQLite
 * file: a file that looks orphaned is confirmed under the write lock, held
 * while the columns are searched for its name (saves wait meanwhile). Blocks
 * the caller for a full read of the store.
 *
 * @param[in]  db        the container.
 * @param[out] out_json  new string, free with strata_free(); NULL on failure.
 * Returns STRATA_OK, whatever the report says.
 * Fails with: STRATA_ERR_MISUSE (NULL argument, a stale handle), STRATA_ERR_IO,
 * STRATA_ERR_BUSY (the write lock stayed taken past the busy timeout),
 * STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_check_integrity(strata_container *db, char **out_json);

/**
 * Gives space back and refreshes statistics: SQLite's VACUUM of the store
 * file (an in-memory store: of its database), PostgreSQL's VACUUM (ANALYZE)
 * of every table of the store's schema.
 *
 * SQLite: runs on a connection of its own and holds the store's write lock
 * for the whole rebuild: saves of every process wait (and fail with
 * STRATA_ERR_BUSY after the busy timeout, 10 s). Readers are not blocked:
 * cursors and reads on their snapshots go on and return what they would
 * have. It waits, like any writer, for a save in progress. PostgreSQL: reads
 * and writes of rows go on; only schema changes wait.
 *
 * @param[in] db  the container.
 * Returns STRATA_OK.
 * Fails with: STRATA_ERR_MISUSE (NULL db, a stale handle), STRATA_ERR_READONLY
 * (a read-only container), STRATA_ERR_BUSY (the write lock stayed taken past
 * the busy timeout; an in-memory store inside a transaction of its
 * connection), STRATA_ERR_IO, STRATA_ERR_CORRUPT, STRATA_ERR_NOMEM.
 * Thread-safe.
 */
strata_status strata_vacuum(strata_container *db);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_H */
