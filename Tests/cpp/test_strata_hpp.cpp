// test_strata_hpp.cpp — strata.hpp: ownership (move-only owners, strings freed,
// callbacks destroyed when the library lets them go), errors as strata::Error
// with the fields of the error JSON, and every call family through the wrappers.
//
// Built with -std=c++17 -Wall -Wextra -Werror (and under AddressSanitizer, ctest
// label asan, where a leaked String or callback fails the run). On SQLite files
// by default; STRATA_TEST_STORE=postgres (postgres_test_strata_hpp) runs it on
// the PostgreSQL server of scripts/postgres-test.sh, through check.h's stores.
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <strata.hpp>

#include "check.h"   // test_store_path(): a new store (file or PostgreSQL schema)

static int passed = 0, failed = 0;

#define EXPECT(cond)                                                                 \
    do {                                                                             \
        if (cond) {                                                                  \
            passed++;                                                                \
        } else {                                                                     \
            failed++;                                                                \
            std::fprintf(stderr, "%s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

// Runs `body`, which must throw strata::Error; returns it (status OK when it did not throw).
template <typename Body> static strata::Error expect_error(Body body) {
    try {
        body();
    } catch (const strata::Error &error) {
        return error;
    }
    return strata::Error(STRATA_OK, "{}");
}

static const char *const SCHEMA_V1 = R"j({"version": "1.0.0", "entities": [
  {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "destination", "type": "string"}],
   "relationships": [{"name": "stops", "destination": "Stop", "toMany": true, "deleteRule": "cascade", "inverse": "trip"}]},
  {"name": "Stop", "attributes": [{"name": "city", "type": "string"}],
   "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]}]})j";

static const char *const SCHEMA_V2 = R"j({"version": "2.0.0", "entities": [
  {"name": "Trip", "attributes": [{"name": "name", "type": "string", "unique": true}, {"name": "destination", "type": "string"}],
   "relationships": [{"name": "stops", "destination": "Stop", "toMany": true, "deleteRule": "cascade", "inverse": "trip"}]},
  {"name": "Stop", "attributes": [{"name": "city", "type": "string"}],
   "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]}]})j";

static std::string plan_config() {
    return std::string("{\"migrationPlan\": {\"schemas\": [") + SCHEMA_V1 + ", " + SCHEMA_V2 +
           "], \"stages\": [{\"name\": \"v1tov2\", \"kind\": \"custom\", \"from\": \"1.0.0\", \"to\": \"2.0.0\"}]}}";
}

static std::string path_of(const char *name) {
    char *path = test_store_path(name);
    std::string copy(path);
    std::free(path);
    return copy;
}

static void test_ownership_traits() {
    static_assert(!std::is_copy_constructible_v<strata::Store> && std::is_nothrow_move_constructible_v<strata::Store>);
    static_assert(!std::is_copy_assignable_v<strata::Context> && std::is_nothrow_move_assignable_v<strata::Context>);
    static_assert(!std::is_copy_constructible_v<strata::Cursor> && !std::is_copy_constructible_v<strata::Prepared>);
    static_assert(!std::is_copy_constructible_v<strata::String> && !std::is_copy_constructible_v<strata::Observer>);
    static_assert(!std::is_copy_constructible_v<strata::Config>);
    EXPECT(strata::version() == STRATA_VERSION);
}

static void test_error_json_reader() {
    strata::Error e(STRATA_ERR_VALIDATION,
                    R"j({"code":"validation","status":6,"message":"caf\u00e9 \"quoted\" \ud83d\ude00","nested":{"path":"/no"},)j"
                    R"j("list":[1,{"a":"]"}],"entity":"Trip","path":"/bucketList/2/title","stage":null})j");
    EXPECT(e.status() == STRATA_ERR_VALIDATION);
    EXPECT(e.code() == "validation");
    EXPECT(e.message() == "caf\xc3\xa9 \"quoted\" \xf0\x9f\x98\x80");
    EXPECT(e.path() == "/bucketList/2/title");   // the top-level member, not the nested one
    EXPECT(e.entity() == "Trip");
    EXPECT(e.stage().empty());
    EXPECT(std::string(e.what()).find("caf\xc3\xa9") != std::string::npos);
}

static void test_objects_errors_and_strings(const std::string &path) {
    strata::Store store = strata::Store::open(path, std::string("{\"schema\": ") + SCHEMA_V2 + "}");
    strata::Context ctx = store.context();
    strata::String id = ctx.insert("Trip", R"j({"name": "Paris", "destination": "Paris", "stops": [{"city": "Lyon"}]})j");
    EXPECT(id.view() == "Trip/1");
    EXPECT(ctx.has_changes());
    ctx.save();
    EXPECT(!ctx.has_changes());

    // A String is a unique owner: moved, the source is empty; released, the caller frees.
    strata::String moved = std::move(id);
    EXPECT(!id && id.view().empty() && moved.view() == "Trip/1");
    char *raw = moved.release();
    EXPECT(raw != nullptr && std::strcmp(raw, "Trip/1") == 0 && !moved);
    strata_free(raw);

    strata::String object = ctx.get("Trip/1");
    EXPECT(object.view().find("\"name\":\"Paris\"") != std::string_view::npos);
    ctx.update("Trip/1", R"j({"destination": "Lyon"})j");
    EXPECT(ctx.count(R"j({"entity": "Trip", "predicate": "$0.destination == d", "bindings": {"d": "Lyon"}})j") == 1);
    ctx.rollback();
    EXPECT(ctx.count(R"j({"entity": "Trip", "predicate": "$0.destination == \"Lyon\""})j") == 0);

    strata::String ids = ctx.insert_many("Trip", R"j([{"name": "Rome", "destination": "Rome"},
                                                      {"name": "Oslo", "destination": "Oslo"}])j");
    EXPECT(ids.view() == R"j(["Trip/2","Trip/3"])j");
    ctx.save();
    EXPECT(ctx.identifiers(R"j({"entity": "Trip", "sortBy": [{"key": "name"}]})j").view() ==
           R"j(["Trip/3","Trip/1","Trip/2"])j");
    EXPECT(ctx.explain(R"j({"entity": "Trip"})j").view().find("\"queryPlan\"") != std::string_view::npos);
    EXPECT(ctx.update_where("Trip", R"j({"predicate": "$0.name != \"Paris\"", "set": {"destination": "Elsewhere"}})j") == 2);
    EXPECT(ctx.delete_where("Trip", R"j("$0.name == \"Oslo\"")j") == 1);
    ctx.save();
    EXPECT(ctx.count(R"j({"entity": "Trip"})j") == 2);

    // Errors: the status and the error JSON's fields.
    strata::Error unique = expect_error([&] { ctx.insert("Trip", R"j({"name": "Paris", "destination": "X", "_onConflict": "error"})j"); });
    EXPECT(unique.status() == STRATA_ERR_CONSTRAINT);
    EXPECT(unique.code() == "constraint" && unique.reason() == "unique_violation" && unique.entity() == "Trip");
    strata::Error invalid = expect_error([&] { ctx.insert("Trip", R"j({"name": "X", "destination": "X", "nope": 1})j"); });
    EXPECT(invalid.status() == STRATA_ERR_INVALID && invalid.path() == "/nope" && invalid.json().find("\"status\":2") != std::string::npos);
    strata::Error missing = expect_error([&] { ctx.get("Trip/99"); });
    EXPECT(missing.status() == STRATA_ERR_NOT_FOUND && missing.code() == "not_found");
    strata::Error malformed = expect_error([&] { ctx.fetch("{\"entity\": "); });
    EXPECT(malformed.reason() == "malformed_json");
    EXPECT(!ctx.has_changes());

    // A moved-from owner throws STRATA_ERR_MISUSE rather than passing NULL on.
    strata::Context other = std::move(ctx);
    strata::Error misuse = expect_error([&] { ctx.save(); });
    EXPECT(misuse.status() == STRATA_ERR_MISUSE && misuse.code() == "misuse");
    EXPECT(other.count(R"j({"entity": "Stop"})j") == 1);
    strata::Store store2 = std::move(store);
    EXPECT(expect_error([&] { store.context(); }).status() == STRATA_ERR_MISUSE);
    EXPECT(store2.schema().view().find("\"2.0.0\"") != std::string_view::npos);
}

static void test_cursor_prepared_history_observer(const std::string &path) {
    strata::Store store = strata::Store::open(path, std::string("{\"schema\": ") + SCHEMA_V2 + "}");
    strata::Context ctx = store.context();
    for (const char *name : {"A", "B", "C", "D", "E"})
        ctx.insert("Trip", std::string("{\"name\": \"") + name + "\", \"destination\": \"" + name + "\"}");
    ctx.save();

    strata::Cursor cursor = ctx.cursor(R"j({"entity": "Trip", "sortBy": [{"key": "name"}]})j");
    std::vector<std::string> batches;
    strata::String batch;
    while (cursor.next(2, batch)) batches.push_back(batch.str());
    EXPECT(batches.size() == 3);
    EXPECT(batches.size() == 3 && batches[2].find("\"name\":\"E\"") != std::string::npos);
    EXPECT(expect_error([&] { cursor.next(2); }).status() == STRATA_ERR_MISUSE);   // ended at the end
    strata::Cursor bad = ctx.cursor(R"j({"entity": "Trip"})j");
    EXPECT(expect_error([&] { bad.next(0); }).status() == STRATA_ERR_INVALID);

    strata::Prepared named = ctx.prepare(R"j({"entity": "Trip", "predicate": "$0.name == n", "bindings": {"n": "A"}})j");
    EXPECT(named.count() == 1);
    EXPECT(named.identifiers(R"j({"n": "C"})j").view() == R"j(["Trip/3"])j");
    EXPECT(named.fetch(R"j({"n": "Z"})j").view() == "[]");
    EXPECT(expect_error([&] { named.fetch(R"j({"n": 5})j"); }).path() == "/n");

    // An observer's callback lives while it is registered, and is destroyed when removed.
    auto seen = std::make_shared<std::vector<std::string>>();
    {
        strata::Observer observer = store.observe([seen](std::string_view changes) { seen->emplace_back(changes); },
                                                  R"j({"entityNames": ["Trip"]})j");
        EXPECT(seen.use_count() == 2);
        ctx.update("Trip/1", R"j({"destination": "Paris"})j");
        ctx.save();
        ctx.insert("Stop", R"j({"city": "Nowhere"})j");   // not a Trip: no callback
        ctx.save();
        EXPECT(seen->size() == 1 && (*seen)[0].find("\"attributes\":[\"destination\"]") != std::string::npos);
    }
    EXPECT(seen.use_count() == 1);   // removed with the Observer
    // One left registered is destroyed by the store's close.
    strata::Observer kept = store.observe([seen](std::string_view) {});
    EXPECT(seen.use_count() == 2);

    std::string history = ctx.history().str();
    EXPECT(history.rfind("[{\"token\":", 0) == 0);
    std::string first_token = history.substr(11, history.find('"', 11) - 11);   // [{"token":"…"
    strata::String after = ctx.history("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"" + first_token + "\"}}");
    EXPECT(after.view().find("\"kind\":\"update\"") != std::string_view::npos);
    EXPECT(ctx.explain_history().view().find("\"sql\"") != std::string_view::npos);
    std::string latest = ctx.history(R"j({"sortBy": [{"key": "token", "order": "reverse"}], "fetchLimit": 1})j").str();
    latest = latest.substr(11, latest.find('"', 11) - 11);
    EXPECT(latest != first_token);
    ctx.delete_history("{\"predicate\": \"$0.token <= t\", \"bindings\": {\"t\": \"" + latest + "\"}}");
    EXPECT(ctx.history().view() == "[]");
    strata::Error expired = expect_error([&] {
        ctx.history("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"" + first_token + "\"}}");
    });
    EXPECT(expired.status() == STRATA_ERR_HISTORY_EXPIRED && expired.path() == "/bindings/t");
    ctx.set_author("cpp");
    ctx.set_name("tests");
    EXPECT(expect_error([&] { ctx.set_author(""); }).status() == STRATA_ERR_INVALID);

    int traced = 0;
    store.set_trace([&traced](std::string_view) { traced++; });
    ctx.count(R"j({"entity": "Trip"})j");
    store.set_trace(nullptr);
    EXPECT(traced > 0);

    store.close();
    EXPECT(seen.use_count() == 1);   // the close let the kept observer's callback go
    kept.reset();
}

static void test_migration_hooks(const std::string &path) {
    {
        strata::Store store = strata::Store::open(path, std::string("{\"schema\": ") + SCHEMA_V1 + "}");
        strata::Context ctx = store.context();
        ctx.insert_many("Trip", R"j([{"name": "Paris", "destination": "Paris", "stops": [{"city": "Lyon"}]},
                                     {"name": "Paris", "destination": "Paris", "stops": [{"city": "Dijon"}]},
                                     {"name": "Rome", "destination": "Rome"}])j");
        ctx.save();
    }
    EXPECT(strata::check_store(path, strata::Config(plan_config())).view().find("\"migratable\"") != std::string_view::npos);

    // A hook that throws aborts the stage: strata::Error callback, the store left at version 1.
    strata::Config failing(plan_config());
    failing.stage_hooks("v1tov2", [](strata::Context &) { throw std::runtime_error("refused"); });
    strata::Error error = expect_error([&] { strata::Store::open(path, failing); });
    EXPECT(error.status() == STRATA_ERR_CALLBACK && error.stage() == "v1tov2" && error.reason() == "hook_failed");
    EXPECT(error.json().find("\"hookStatus\":9") != std::string::npos);
    strata::Config thrower(plan_config());
    thrower.stage_hooks("v1tov2", [](strata::Context &ctx) { ctx.get("Trip/404"); });   // strata::Error not_found
    EXPECT(expect_error([&] { strata::Store::open(path, thrower); }).json().find("\"hookStatus\":4") != std::string::npos);

    EXPECT(expect_error([&] { strata::Config(plan_config()).stage_hooks("nope", [](strata::Context &) {}); }).status() ==
           STRATA_ERR_INVALID);

    // A hook that de-duplicates: willMigrate on version 1, didMigrate counts on version 2.
    int64_t after = -1;
    std::vector<std::string> steps;
    strata::Config config(plan_config());
    config.stage_hooks("v1tov2",
                       [](strata::Context &ctx) {
                           std::string ids = ctx.identifiers(R"j({"entity": "Trip", "predicate": "$0.name == \"Paris\""})j").str();
                           std::string second = ids.substr(ids.find(',') + 2, ids.rfind('"') - ids.find(',') - 2);
                           ctx.remove(second);
                           ctx.save();
                       },
                       [&after](strata::Context &ctx) { after = ctx.count(R"j({"entity": "Trip"})j"); })
          .on_progress([&steps](std::string_view event) { steps.emplace_back(event); });
    strata::Store store = strata::Store::open(path, config);
    EXPECT(after == 2);
    EXPECT(!steps.empty() && steps.back().find("\"step\":\"commit\"") != std::string::npos);
    strata::Context ctx = store.context();
    EXPECT(ctx.count(R"j({"entity": "Stop"})j") == 1);   // the removed duplicate's stop went with it (cascade)
    EXPECT(strata::infer_migration(SCHEMA_V1, SCHEMA_V2).view().find("addUniqueConstraint") != std::string_view::npos);
}

int main() {
    test_ownership_traits();
    test_error_json_reader();
    test_objects_errors_and_strings(path_of("hpp_objects.store"));
    test_cursor_prepared_history_observer(path_of("hpp_history.store"));
    test_migration_hooks(path_of("hpp_migration.store"));
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
