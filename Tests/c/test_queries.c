/*
 * test_queries.c — strata.h section "Fetching" (strata_fetch, strata_fetch_count,
 * strata_fetch_identifiers, strata_explain, strata_delete_where, strata_set_trace)
 * on the SampleTrips schema (examples/trips/schema.json), through strata.h only.
 *
 *   - the predicates of Apple's SwiftData sessions, as #Predicate text and as
 *     JSON trees, with exact identifier lists;
 *   - the segmented control (All / Personal / Business with search text);
 *   - the widget query (endDate >= now, sorted, fetchLimit 1) and its plan;
 *   - propertiesToFetch; prefetching for 10,000 trips in 3 SQL statements;
 *   - includeSubentities; sortBy; paging; sectionBy (fetch, prepared, cursor);
 *     includePendingChanges;
 *   - strata_delete_where in its three forms;
 *   - key paths, count, isEmpty, in, between, nil, string options; every
 *     value type (fixture queries_values.json).
 *
 * Every query runs three ways — strata_fetch, strata_fetch_identifiers and
 * strata_fetch_count — which must agree with each other and with the expected
 * identifiers, in order. Results are compared as parsed JSON (json-c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#ifndef STRATA_SOURCE_DIR
#define STRATA_SOURCE_DIR "."
#endif
#define TRIPS_SCHEMA STRATA_SOURCE_DIR "/examples/trips/schema.json"
#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"

/* ---- helpers ------------------------------------------------------------ */

/*
 * EXPECT(cond): like CHECK, but the test goes on (and fails at the end), so
 * that one library defect does not hide the others.
 */
static int failures;
#define EXPECT(cond)                                                               \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                            \
        }                                                                          \
    } while (0)

/* A growable string. */
typedef struct { char *s; size_t n, cap; } sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    CHECK(n >= 0);
    if (b->n + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->n + (size_t)n + 1 > cap) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) exit(1);
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* `text` as a JSON string literal (malloc'd): for #Predicate text in descriptors. */
static char *json_quote(const char *text) {
    json_object *s = json_object_new_string(text);
    char *out = strdup(json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(s);
    if (!out) exit(1);
    return out;
}

#define open_store(schema_path, path) check_open_schema((schema_path), (path))

static int has_prefix(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static json_object *fetch(strata_context *ctx, const char *descriptor) {
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, descriptor, &text));
    CHECK(text != NULL);
    json_object *arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_is_type(arr, json_type_array));
    return arr;
}

static json_object *fetch_ids(strata_context *ctx, const char *descriptor) {
    char *text = NULL;
    CHECK_STATUS(strata_fetch_identifiers(ctx, descriptor, &text));
    CHECK(text != NULL);
    json_object *arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_is_type(arr, json_type_array));
    return arr;
}

static int64_t fetch_count(strata_context *ctx, const char *descriptor) {
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, descriptor, &n));
    return n;
}

static int64_t count_of(strata_context *ctx, const char *entity) {
    char *d = check_strf("{\"entity\": \"%s\"}", entity);
    int64_t n = fetch_count(ctx, d);
    free(d);
    return n;
}

static json_object *explain(strata_context *ctx, const char *descriptor) {
    char *text = NULL;
    CHECK_STATUS(strata_explain(ctx, descriptor, &text));
    CHECK(text != NULL);
    json_object *e = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_is_type(e, json_type_object));
    CHECK(check_str_member(e, "sql") != NULL);
    CHECK(json_object_is_type(check_member(e, "parameterCount"), json_type_int));
    CHECK(json_object_is_type(check_member(e, "queryPlan"), json_type_array));
    return e;
}

/* The SELECT list of an explained query: the text between "SELECT " and the first " FROM ". */
static char *select_list(json_object *e) {
    const char *sql = check_str_member(e, "sql");
    CHECK(has_prefix(sql, "SELECT "));
    const char *from = strstr(sql, " FROM ");
    CHECK(from != NULL);
    size_t n = (size_t)(from - (sql + 7));
    char *s = malloc(n + 1);
    if (!s) exit(1);
    memcpy(s, sql + 7, n);
    s[n] = '\0';
    return s;
}

/*
 * The parameters of the explained SQL: numbered placeholders 1..k ("?N" on SQLite,
 * "$N" on PostgreSQL), each used, and k equal to parameterCount. Returns k.
 */
static int64_t check_parameters(json_object *e) {
    const char *sql = check_str_member(e, "sql");
    int seen[128] = {0};
    int highest = 0;
    char mark = check_postgres() ? '$' : '?';
    for (const char *p = sql; (p = strchr(p, mark)) != NULL; p++) {
        int n = 0;
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9') n = n * 10 + (*q++ - '0');
        CHECK(n >= 1 && n < 128);   /* numbered placeholders only */
        seen[n] = 1;
        if (n > highest) highest = n;
    }
    for (int i = 1; i <= highest; i++) CHECK(seen[i]);
    int64_t count = json_object_get_int64(check_member(e, "parameterCount"));
    if (count != highest)
        fprintf(stderr, "parameterCount %lld but the SQL uses %d placeholders: %s\n", (long long)count, highest, sql);
    CHECK(count == highest);
    return count;
}

/* Some queryPlan detail contains `needle`. */
static int plan_mentions(json_object *e, const char *needle) {
    json_object *plan = check_member(e, "queryPlan");
    for (size_t i = 0; i < json_object_array_length(plan); i++) {
        const char *detail = check_str_member(json_object_array_get_idx(plan, i), "detail");
        if (detail && strstr(detail, needle)) return 1;
    }
    return 0;
}

/* ---- SampleTrips -------------------------------------------------------- */

/*
 * Seven trips, A to G in insertion (primary key) order. "now" is 2026-11-22.
 *
 *      entity        name              destination  start       end         accommodation  bucket list (isInPlan)
 *   A  PersonalTrip  Family Visit      Zürich       2026-12-20  2026-12-28  Grandma's      market (yes), hike
 *   B  BusinessTrip  WWDC              Cupertino    2026-06-08  2026-06-12  Hotel          keynote (yes, reserved); has a photo
 *   C  Trip          Road Trip         Route 66     2027-05-01  2027-05-20  —              —
 *   D  PersonalTrip  Wellness Retreat  Kyōto        2026-11-15  2026-11-25  Ryokan         onsen, temple walk
 *   E  BusinessTrip  Sales Summit      Berlin       2026-10-01  2026-10-03  Hotel          —
 *   F  PersonalTrip  Reunion           São Paulo    2027-02-10  2027-02-20  —              beach (yes)
 *   G  Trip          Ski Weekend       Zermatt      2027-01-08  2027-01-10  —              —
 */
#define N_TRIPS 7
static const char *const trip_json[N_TRIPS] = {
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Z\\u00fcrich\","
    " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
    " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
    " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true},"
    "                  {\"title\": \"Uetliberg hike\", \"details\": \"if it snows\"}]}",
    "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC\", \"destination\": \"Cupertino\","
    " \"startDate\": \"2026-06-08T00:00:00Z\", \"endDate\": \"2026-06-12T00:00:00Z\", \"perdiem\": 120.5,"
    " \"photo\": \"aGVsbG8=\","
    " \"livingAccommodation\": {\"placeName\": \"Hotel\", \"address\": \"1 Infinite Loop\"},"
    " \"bucketList\": [{\"title\": \"Keynote\", \"hasReservation\": true, \"isInPlan\": true}]}",
    "{\"name\": \"Road Trip\", \"destination\": \"Route 66\","
    " \"startDate\": \"2027-05-01T00:00:00Z\", \"endDate\": \"2027-05-20T00:00:00Z\"}",
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Wellness Retreat\", \"destination\": \"Ky\\u014dto\","
    " \"startDate\": \"2026-11-15T00:00:00Z\", \"endDate\": \"2026-11-25T00:00:00Z\", \"reason\": \"wellness\","
    " \"livingAccommodation\": {\"placeName\": \"Ryokan\", \"address\": \"Gion\"},"
    " \"bucketList\": [{\"title\": \"Onsen\"}, {\"title\": \"Temple walk\"}]}",
    "{\"_entity\": \"BusinessTrip\", \"name\": \"Sales Summit\", \"destination\": \"Berlin\","
    " \"startDate\": \"2026-10-01T00:00:00Z\", \"endDate\": \"2026-10-03T00:00:00Z\", \"perdiem\": 80,"
    " \"livingAccommodation\": {\"placeName\": \"Hotel\", \"address\": \"Alexanderplatz\"}}",
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Reunion\", \"destination\": \"S\\u00e3o Paulo\","
    " \"startDate\": \"2027-02-10T00:00:00Z\", \"endDate\": \"2027-02-20T00:00:00Z\", \"reason\": \"reunion\","
    " \"bucketList\": [{\"title\": \"Beach\", \"isInPlan\": true}]}",
    "{\"name\": \"Ski Weekend\", \"destination\": \"Zermatt\","
    " \"startDate\": \"2027-01-08T00:00:00Z\", \"endDate\": \"2027-01-10T00:00:00Z\"}",
};

#define NOW "2026-11-22T00:00:00Z"

/* The identifiers of A..G, and of their accommodations and bucket list items. */
static char *trip[N_TRIPS];
static char *place[N_TRIPS];        /* NULL when none */
static char *items[N_TRIPS][2];     /* NULL when fewer */

static void forget_trips(void) {
    for (int i = 0; i < N_TRIPS; i++) {
        strata_free(trip[i]);
        free(place[i]);
        free(items[i][0]);
        free(items[i][1]);
        trip[i] = place[i] = items[i][0] = items[i][1] = NULL;
    }
}

/* Inserts A..G and saves; records their identifiers. */
static void seed_trips(strata_context *ctx) {
    forget_trips();
    for (int i = 0; i < N_TRIPS; i++) {
        CHECK_STATUS(strata_insert(ctx, "Trip", trip_json[i], &trip[i]));
        char *text = NULL;
        CHECK_STATUS(strata_get(ctx, trip[i], &text));
        json_object *o = parse_json_or_die(text);
        strata_free(text);
        const char *p = check_str_member(o, "livingAccommodation");
        place[i] = p ? strdup(p) : NULL;
        json_object *list = check_member(o, "bucketList");
        CHECK(list && json_object_array_length(list) <= 2);
        for (size_t k = 0; k < json_object_array_length(list); k++)
            items[i][k] = strdup(json_object_get_string(json_object_array_get_idx(list, k)));
        json_object_put(o);
    }
    CHECK(has_prefix(trip[0], "PersonalTrip/") && has_prefix(trip[1], "BusinessTrip/") && has_prefix(trip[2], "Trip/"));
    CHECK(place[0] && place[1] && !place[2] && place[3] && place[4] && !place[5] && !place[6]);
    CHECK(items[0][1] && items[1][0] && !items[1][1] && !items[2][0] && items[3][1] && !items[4][0] && items[5][0]);
    CHECK_STATUS(strata_save(ctx));
    CHECK(strata_has_changes(ctx) == 0);
}

/* The letter of a trip identifier ('?' if none). */
static char letter_of(const char *id) {
    for (int i = 0; i < N_TRIPS; i++)
        if (trip[i] && id && strcmp(trip[i], id) == 0) return (char)('A' + i);
    return '?';
}

/* An identifier array as letters, for messages; malloc'd. */
static char *letters_of(json_object *ids) {
    size_t n = json_object_array_length(ids);
    char *s = malloc(n + 1);
    if (!s) exit(1);
    for (size_t i = 0; i < n; i++) s[i] = letter_of(json_object_get_string(json_object_array_get_idx(ids, i)));
    s[n] = '\0';
    return s;
}

static int queries_run;

/*
 * The descriptor matches exactly the identifiers `ids` (n of them), in this
 * order, by strata_fetch, strata_fetch_identifiers and strata_fetch_count.
 */
static void expect_result_ids(strata_context *ctx, const char *descriptor, const char *const *ids, size_t n,
                              const char *what) {
    json_object *objects = fetch(ctx, descriptor);
    json_object *idarr = fetch_ids(ctx, descriptor);
    int64_t count = fetch_count(ctx, descriptor);
    int ok = json_object_array_length(objects) == n && json_object_array_length(idarr) == n && count == (int64_t)n;
    for (size_t i = 0; ok && i < n; i++) {
        json_object *o = json_object_array_get_idx(objects, i);
        ok = json_object_is_type(o, json_type_object) && check_str_member(o, "_id") && strcmp(check_str_member(o, "_id"), ids[i]) == 0
             && strcmp(json_object_get_string(json_object_array_get_idx(idarr, i)), ids[i]) == 0;
    }
    if (!ok) {
        char *got = letters_of(idarr);
        fprintf(stderr, "query %s\n  expected %s (%zu)\n  identifiers: %s [%s]\n  fetch: %zu objects, count %lld\n",
                descriptor, what, n, json_object_to_json_string(idarr), got, json_object_array_length(objects),
                (long long)count);
        free(got);
        fprintf(stderr, "%s:%d: query result mismatch\n", __FILE__, __LINE__);
        failures++;   /* go on: one wrong result must not hide the others */
    }
    json_object_put(objects);
    json_object_put(idarr);
    queries_run++;
}

/* The descriptor matches exactly the trips named by `letters` ("ADF"), in this order. */
static void expect_trips(strata_context *ctx, const char *descriptor, const char *letters) {
    const char *ids[N_TRIPS * 2];
    size_t n = strlen(letters);
    CHECK(n <= N_TRIPS * 2);
    for (size_t i = 0; i < n; i++) {
        CHECK(letters[i] >= 'A' && letters[i] < 'A' + N_TRIPS);
        ids[i] = trip[letters[i] - 'A'];
        CHECK(ids[i] != NULL);
    }
    expect_result_ids(ctx, descriptor, ids, n, *letters ? letters : "(none)");
}

/*
 * The same query as #Predicate text and as a JSON tree: both match `letters`.
 * `bindings` is a JSON object or NULL; `extra` more descriptor members
 * (", \"sortBy\": [...]") or "".
 */
static void expect_both(strata_context *ctx, const char *entity, const char *text, const char *tree,
                        const char *bindings, const char *extra, const char *letters) {
    char *b = bindings ? check_strf(", \"bindings\": %s", bindings) : strdup("");
    if (text) {
        char *quoted = json_quote(text);
        char *d = check_strf("{\"entity\": \"%s\", \"predicate\": %s%s%s}", entity, quoted, b, extra);
        expect_trips(ctx, d, letters);
        free(d);
        free(quoted);
    }
    if (tree) {
        char *d = check_strf("{\"entity\": \"%s\", \"predicate\": %s%s%s}", entity, tree, b, extra);
        expect_trips(ctx, d, letters);
        free(d);
    }
    free(b);
}

/* ---- Apple's examples ----------------------------------------------------- */

#define SEARCH_TEXT \
    "searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText) || " \
    "$0.destination.localizedStandardContains(searchText)"
#define SEARCH_TREE \
    "{\"cond\": [{\"isEmpty\": {\"var\": \"searchText\"}}, true," \
    " {\"or\": [{\"localizedStandardContains\": [{\"key\": \"name\"}, {\"var\": \"searchText\"}]}," \
    "          {\"localizedStandardContains\": [{\"key\": \"destination\"}, {\"var\": \"searchText\"}]}]}]}"

static void test_session_examples(strata_context *ctx) {
    /* $0 is PersonalTrip (and the other two entities of the hierarchy). */
    expect_both(ctx, "Trip", "$0 is PersonalTrip", "{\"is\": \"PersonalTrip\"}", NULL, "", "ADF");
    expect_both(ctx, "Trip", "{ trip in trip is BusinessTrip }", "{\"is\": \"BusinessTrip\"}", NULL, "", "BE");
    expect_both(ctx, "Trip", "$0 is Trip", "{\"is\": \"Trip\"}", NULL, "", "ABCDEFG");
    expect_both(ctx, "Trip", "!($0 is PersonalTrip)", "{\"not\": {\"is\": \"PersonalTrip\"}}", NULL, "", "BCEG");

    /* $0.endDate >= currentDate: bound as text, as seconds, with an offset, as a typed literal. */
    expect_both(ctx, "Trip", "$0.endDate >= currentDate", "{\">=\": [{\"key\": \"endDate\"}, {\"var\": \"currentDate\"}]}",
                "{\"currentDate\": \"" NOW "\"}", "", "ACDFG");
    expect_both(ctx, "Trip", "$0.endDate >= currentDate", "{\">=\": [{\"key\": \"endDate\"}, {\"var\": \"currentDate\"}]}",
                "{\"currentDate\": 1795305600}", "", "ACDFG");
    expect_both(ctx, "Trip", "$0.endDate >= $currentDate", "{\">=\": [{\"key\": \"endDate\"}, {\"var\": \"currentDate\"}]}",
                "{\"currentDate\": \"2026-11-22T01:00:00+01:00\"}", "", "ACDFG");
    expect_both(ctx, "Trip", NULL, "{\">=\": [{\"key\": \"endDate\"}, {\"date\": \"" NOW "\"}]}", NULL, "", "ACDFG");
    expect_both(ctx, "Trip", "#Predicate<Trip> { trip in trip.endDate < currentDate }",
                "{\"<\": [{\"key\": \"endDate\"}, {\"var\": \"currentDate\"}]}", "{\"currentDate\": {\"date\": \"" NOW "\"}}",
                "", "BE");

    /* The search predicate: "" → every trip; "zur" → the Zürich trip, whatever the case and diacritics. */
    static const struct { const char *search, *letters; } searches[] = {
        {"", "ABCDEFG"}, {"zur", "A"}, {"ZUR", "A"}, {"Z\xc3\xbc" "r", "A"}, {"Z\xc3\x9c" "R", "A"},
        {"sa", "EF"}, {"SAO", "F"}, {"ky\xc5\x8d" "to", "D"}, {"kyoto", "D"}, {"66", "C"}, {"trip", "C"},
        {"e", "BCDEFG"}, {"xyz", ""},
    };
    for (size_t i = 0; i < sizeof searches / sizeof searches[0]; i++) {
        char *q = json_quote(searches[i].search);
        char *bindings = check_strf("{\"searchText\": %s}", q);
        expect_both(ctx, "Trip", SEARCH_TEXT, SEARCH_TREE, bindings, "", searches[i].letters);
        /* The same closure with a named parameter and the macro wrapper. */
        expect_both(ctx, "Trip",
                    "#Predicate<Trip> { trip in searchText.isEmpty ? true : trip.name.localizedStandardContains(searchText)"
                    " || trip.destination.localizedStandardContains(searchText) }",
                    NULL, bindings, "", searches[i].letters);
        free(bindings);
        free(q);
    }

    /* Constant folding: with "" the search is `true` and the SQL has no condition and no parameter. */
    {
        char *q = json_quote(SEARCH_TEXT);
        char *d = check_strf("{\"entity\": \"Trip\", \"predicate\": %s, \"bindings\": {\"searchText\": \"\"}}", q);
        json_object *e = explain(ctx, d);
        /* docs/predicates.md §3: "the SQL has no condition of its own": no column of the trip is
           tested (the WHERE of the relationship-identifier subqueries in the select list is theirs,
           and the whole hierarchy's entity check reads no column of t). */
        const char *where = strstr(check_str_member(e, "sql"), "FROM \"Trip\" t WHERE");
        /* The entity check is the search, or on SQLite the search behind the connection's note
           that it found the rows clean at the file's version. */
        const char *first = where ? strstr(where, "strata_") : NULL;
        int check_first = first == NULL || first == strstr(where, "strata_damaged('Trip', '_entity'")
                          || first == strstr(where, "strata_entities_known(");
        if (where && (strstr(where, "t.\"name\"") || strstr(where, "t.\"destination\"") || !check_first))
            fprintf(stderr, "folded search: %s\n", check_str_member(e, "sql"));
        EXPECT(where == NULL || (!strstr(where, "t.\"name\"") && !strstr(where, "t.\"destination\"") && check_first));
        CHECK(check_parameters(e) == 0);
        json_object_put(e);
        free(d);
        d = check_strf("{\"entity\": \"Trip\", \"predicate\": %s, \"bindings\": {\"searchText\": \"zur\"}}", q);
        e = explain(ctx, d);
        CHECK(strstr(check_str_member(e, "sql"), "WHERE") != NULL);
        CHECK(strstr(check_str_member(e, "sql"), "zur") == NULL);   /* bound, not in the text */
        CHECK(check_parameters(e) >= 1);
        json_object_put(e);
        free(d);
        free(q);
    }

    /* Composition: upcoming trips that match the search. */
    static const struct { const char *search, *letters; } upcoming[] = {
        {"", "ACDFG"}, {"zur", "A"}, {"sa", "F"}, {"wwdc", ""}, {"o", "CDF"},
    };
    for (size_t i = 0; i < sizeof upcoming / sizeof upcoming[0]; i++) {
        char *bindings = check_strf("{\"searchText\": \"%s\", \"currentDate\": \"" NOW "\"}", upcoming[i].search);
        expect_both(ctx, "Trip", "$0.endDate >= currentDate && (" SEARCH_TEXT ")",
                    "{\"and\": [{\">=\": [{\"key\": \"endDate\"}, {\"var\": \"currentDate\"}]}, " SEARCH_TREE "]}",
                    bindings, "", upcoming[i].letters);
        free(bindings);
    }

    /* The trips list as Apple's sample composes it: a search predicate and a filter, each bound to a variable. */
    expect_both(ctx, "Trip", "searchPredicate.evaluate($0) && tripFilter.evaluate($0)",
                "{\"and\": [{\"evaluate\": \"searchPredicate\"}, {\"evaluate\": \"tripFilter\"}]}",
                "{\"searchPredicate\": {\"predicate\": \"" SEARCH_TEXT "\"}, \"searchText\": \"o\","
                " \"tripFilter\": {\"predicate\": {\">=\": [{\"key\": \"endDate\"}, {\"var\": \"currentDate\"}]}},"
                " \"currentDate\": \"" NOW "\"}", "", "CDF");
    /* Unplanned bucket-list items. */
    expect_both(ctx, "Trip", "$0.bucketList.filter { !$0.isInPlan }.count > 0",
                "{\">\": [{\"count\": {\"filter\": [{\"key\": \"bucketList\"}, {\"not\": {\"key\": \"isInPlan\"}}]}}, 0]}", NULL, "", "AD");
    /* Sums and averages of the bucket list's titles' lengths (A 16+14, B 7, D 5+11, F 5). */
    expect_both(ctx, "Trip", "$0.bucketList.map { $0.title.count }.reduce(0, +) > 10",
                "{\">\": [{\"@sum\": [{\"key\": \"bucketList\"}, {\"count\": {\"key\": \"title\"}}]}, 10]}", NULL, "", "AD");
    expect_both(ctx, "Trip", "($0.bucketList.filter { $0.title.count > 5 }.map { $0.title.count }.average() ?? 0) >= 7",
                "{\">=\": [{\"??\": [{\"@avg\": [{\"filter\": [{\"key\": \"bucketList\"}, {\">\": [{\"count\": {\"key\": \"title\"}}, 5]}]},"
                " {\"count\": {\"key\": \"title\"}}]}, 0]}, 7]}", NULL, "", "ABD");
    /* Segments by subclass: a cast, if let, and a subentity's attribute on a Trip fetch. */
    expect_both(ctx, "Trip", "($0 as? BusinessTrip)?.perdiem ?? 0 > 100",
                "{\">\": [{\"??\": [{\"key\": \"as:BusinessTrip.perdiem\"}, 0]}, 100]}", NULL, "", "B");
    expect_both(ctx, "Trip", "if let b = $0 as? BusinessTrip { b.perdiem > 50 } else { false }",
                "{\">\": [{\"key\": \"perdiem\"}, 50]}", NULL, "", "BE");
    expect_both(ctx, "Trip", NULL, "{\"==\": [{\"key\": \"reason\"}, \"family\"]}", NULL, "", "A");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"perdiem\", \"order\": \"reverse\"}], \"fetchLimit\": 3}", "BEA");
    /* Trips longer than a week: arithmetic on dates. */
    expect_both(ctx, "Trip", "$0.endDate > $0.startDate + 7 * 86400",
                "{\">\": [{\"key\": \"endDate\"}, {\"+\": [{\"key\": \"startDate\"}, {\"*\": [7, 86400]}]}]}", NULL, "", "ACDF");
    /* An int times a fractional literal is computed in doubles (2 items * 2.5 > 4), on either side. */
    expect_both(ctx, "Trip", "$0.bucketList.count * 2.5 > 4",
                "{\">\": [{\"*\": [{\"count\": {\"key\": \"bucketList\"}}, 2.5]}, 4]}", NULL, "", "AD");
    expect_both(ctx, "Trip", "2.5 * $0.bucketList.count >= 2.5",
                "{\">=\": [{\"*\": [2.5, {\"count\": {\"key\": \"bucketList\"}}]}, 2.5]}", NULL, "", "ABDF");
    /* An optional chain as Swift forces it. */
    expect_both(ctx, "Trip", "$0.livingAccommodation?.address.localizedStandardContains(\"loop\") ?? false",
                "{\"??\": [{\"localizedStandardContains\": [{\"key\": \"livingAccommodation.address\"}, \"loop\"]}, false]}", NULL, "", "B");

    /* Trips with something planned. */
    expect_both(ctx, "Trip", "$0.bucketList.contains { $0.isInPlan }",
                "{\"any\": [{\"key\": \"bucketList\"}, {\"key\": \"isInPlan\"}]}", NULL, "", "ABF");
    expect_both(ctx, "Trip", "{ trip in trip.bucketList.contains(where: { item in item.isInPlan == true }) }",
                "{\"any\": [{\"key\": \"bucketList\"}, {\"==\": [{\"key\": \"isInPlan\"}, true]}]}", NULL, "", "ABF");
    expect_both(ctx, "Trip", "$0.bucketList.contains { !$0.isInPlan }",
                "{\"any\": [{\"key\": \"bucketList\"}, {\"not\": {\"key\": \"isInPlan\"}}]}", NULL, "", "AD");
    expect_both(ctx, "PersonalTrip", "$0.bucketList.contains { $0.isInPlan }",
                "{\"any\": [{\"key\": \"bucketList\"}, {\"key\": \"isInPlan\"}]}", NULL, "", "AF");
}

/* ---- the segmented control ------------------------------------------------ */

static void test_segmented_control(strata_context *ctx) {
    static const char *const segments[] = {"Trip", "PersonalTrip", "BusinessTrip"};
    static const struct { const char *search; const char *letters[3]; } rows[] = {
        /* sorted by startDate: B E D A G F C */
        {"", {"BEDAGFC", "DAF", "BE"}},
        {"zur", {"A", "A", ""}},
        {"Z\xc3\x9c" "RICH", {"A", "A", ""}},
        {"sa", {"EF", "F", "E"}},
        {"s", {"EDAGF", "DAF", "E"}},
        {"cupertino", {"B", "", "B"}},
        {"nowhere", {"", "", ""}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        for (int s = 0; s < 3; s++) {
            char *bindings = check_strf("{\"searchText\": \"%s\"}", rows[r].search);
            const char *sort = ", \"sortBy\": [{\"key\": \"startDate\", \"order\": \"forward\"}]";
            /* The segment as `is` in the predicate of a Trip fetch... */
            char *text = check_strf("$0 is %s && (" SEARCH_TEXT ")", segments[s]);
            char *tree = check_strf("{\"and\": [{\"is\": \"%s\"}, " SEARCH_TREE "]}", segments[s]);
            expect_both(ctx, "Trip", text, tree, bindings, sort, rows[r].letters[s]);
            /* ...and as the fetched entity. */
            expect_both(ctx, segments[s], SEARCH_TEXT, SEARCH_TREE, bindings, sort, rows[r].letters[s]);
            free(text);
            free(tree);
            free(bindings);
        }
    }
}

/* ---- the widget ------------------------------------------------------------ */

/* SQLite's plan uses an index (on PostgreSQL: any plan, see test_widget). */
static int uses_index(json_object *e) {
    return check_postgres() || plan_mentions(e, "USING INDEX") || plan_mentions(e, "USING COVERING INDEX");
}

static void test_widget(strata_context *ctx) {
    static const struct { const char *sort, *letters; } cases[] = {
        {"[{\"key\": \"startDate\"}]", "D"},
        {"[{\"key\": \"endDate\"}]", "D"},
        {"[{\"key\": \"startDate\", \"order\": \"reverse\"}]", "C"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *d = check_strf("{\"entity\": \"Trip\", \"predicate\": \"$0.endDate >= now\", \"bindings\": {\"now\": \"" NOW "\"},"
                       " \"sortBy\": %s, \"fetchLimit\": 1}", cases[i].sort);
        expect_trips(ctx, d, cases[i].letters);
        json_object *e = explain(ctx, d);
        /* SQLite's plan searches the date's index; PostgreSQL's planner weighs costs and scans
         * tables this small, so only the SQL and its parameters are checked there. */
        if (!uses_index(e)) fprintf(stderr, "no index in the plan: %s\n", json_object_to_json_string(e));
        CHECK(uses_index(e));
        /* The value of now is bound, never in the SQL text. The fetchLimit, an integer of the
         * descriptor, is bound on SQLite and written as a number on PostgreSQL, whose planner
         * plans a bound LIMIT for many rows and would plan the statement again at every run. */
        const char *sql = check_str_member(e, "sql");
        CHECK(check_parameters(e) == (check_postgres() ? 1 : 2));
        CHECK(!check_postgres() || strstr(sql, " LIMIT 1") != NULL);
        CHECK(strstr(sql, "2026") == NULL && strstr(sql, "1795305600") == NULL);
        json_object_put(e);
        free(d);
    }
    /* The same as a JSON tree; without fetchLimit one value is bound. */
    const char *d = "{\"entity\": \"Trip\", \"predicate\": {\">=\": [{\"key\": \"endDate\"}, {\"var\": \"now\"}]},"
                    " \"bindings\": {\"now\": \"" NOW "\"}, \"sortBy\": [{\"key\": \"endDate\"}]}";
    expect_trips(ctx, d, "DAGFC");
    json_object *e = explain(ctx, d);
    CHECK(uses_index(e));
    CHECK(check_parameters(e) == 1);
    json_object_put(e);
}

/* ---- propertiesToFetch -------------------------------------------------- */

static void test_properties_to_fetch(strata_context *ctx) {
    static const char *const keys[] = {"_id", "_entity", "name"};
    static const char *const names[N_TRIPS] = {"Family Visit", "WWDC", "Road Trip", "Wellness Retreat", "Sales Summit",
                                               "Reunion", "Ski Weekend"};
    static const char *const descriptors[] = {
        "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\"]}",
        "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\"], \"predicate\": \"$0.endDate >= now\","
        " \"bindings\": {\"now\": \"" NOW "\"}, \"sortBy\": [{\"key\": \"startDate\"}]}",
    };
    static const char *const expected[] = {"ABCDEFG", "DAGFC"};
    static const char *const other_columns[] = {"destination", "startDate", "endDate", "photo", "perdiem", "reason",
                                                "tripViews", "livingAccommodation", "bucketList", "trip"};
    for (size_t k = 0; k < 2; k++) {
        expect_trips(ctx, descriptors[k], expected[k]);
        json_object *arr = fetch(ctx, descriptors[k]);
        CHECK(json_object_array_length(arr) == strlen(expected[k]));
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
            json_object *o = json_object_array_get_idx(arr, i);
            int t = expected[k][i] - 'A';
            expect_keys(o, keys, 3);
            CHECK_STR_EQ(check_str_member(o, "_id"), trip[t]);
            CHECK_STR_EQ(check_str_member(o, "name"), names[t]);
            const char *entity = check_str_member(o, "_entity");
            CHECK(entity != NULL && has_prefix(trip[t], entity) && trip[t][strlen(entity)] == '/');
        }
        json_object_put(arr);

        json_object *e = explain(ctx, descriptors[k]);
        char *select = select_list(e);
        CHECK(strstr(select, "\"name\"") != NULL);
        for (size_t c = 0; c < sizeof other_columns / sizeof other_columns[0]; c++) {
            if (strstr(select, other_columns[c]) != NULL)
                fprintf(stderr, "propertiesToFetch [name] selects %s: %s\n", other_columns[c], check_str_member(e, "sql"));
            CHECK(strstr(select, other_columns[c]) == NULL);
        }
        free(select);
        json_object_put(e);
    }
}

/* ---- subentities, sorting, paging ---------------------------------------- */

static void test_subentities(strata_context *ctx) {
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "ABCDEFG");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": true}", "ABCDEFG");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false}", "CG");
    expect_trips(ctx, "{\"entity\": \"PersonalTrip\", \"includeSubentities\": false}", "ADF");
    expect_trips(ctx, "{\"entity\": \"BusinessTrip\"}", "BE");
    /* With a predicate, sorting and limits. */
    expect_both(ctx, "Trip", "$0.endDate >= now", NULL, "{\"now\": \"" NOW "\"}", ", \"includeSubentities\": false", "CG");
    expect_both(ctx, "Trip", "$0.endDate >= now", NULL, "{\"now\": \"" NOW "\"}",
                ", \"includeSubentities\": false, \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1", "G");
    expect_both(ctx, "Trip", "$0.endDate >= now", NULL, "{\"now\": \"" NOW "\"}", ", \"includeSubentities\": true", "ACDFG");
    /* The shallow fetch reads only Trip objects; the deep one all three entities. */
    json_object *arr = fetch(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false}");
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        CHECK_STR_EQ(check_str_member(json_object_array_get_idx(arr, i), "_entity"), "Trip");
    json_object_put(arr);
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false}") == 2);
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": true}") == 7);
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false, \"fetchOffset\": 1}") == 1);
}

static void test_sorting(strata_context *ctx) {
    /* One key, both orders, both comparators. */
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}]}", "BEDAGFC");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\", \"order\": \"reverse\"}]}", "CFGADEB");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\"}]}", "AFCEGDB");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\", \"comparator\": \"localizedStandard\"}]}", "AFCEGDB");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\", \"comparator\": \"binary\"}]}", "AFCEGBD");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\", \"order\": \"reverse\"}]}", "BDGECFA");
    /* Two keys through a to-one relationship: nil first when forward, last when reverse; ties by the second key. */
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"livingAccommodation.placeName\"},"
                      " {\"key\": \"startDate\", \"order\": \"reverse\"}]}", "CFGAEBD");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"livingAccommodation.placeName\", \"order\": \"reverse\"},"
                      " {\"key\": \"startDate\"}]}", "DBEAGFC");
    /* Ties without a second key keep insertion order. */
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"livingAccommodation.placeName\"}]}", "CFGABED");
    /* With a predicate. */
    expect_both(ctx, "Trip", "$0.endDate >= now", NULL, "{\"now\": \"" NOW "\"}",
                ", \"sortBy\": [{\"key\": \"endDate\", \"order\": \"reverse\"}, {\"key\": \"name\"}]", "CFGAD");
}

static void test_paging(strata_context *ctx) {
    const char *order = "BEDAGFC";
    for (int size = 1; size <= 8; size++) {
        char seen[N_TRIPS * 2 + 1];
        size_t n = 0;
        for (int offset = 0; offset <= N_TRIPS + size; offset += size) {
            char *d = check_strf("{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": %d,"
                           " \"fetchOffset\": %d}", size, offset);
            json_object *ids = fetch_ids(ctx, d);
            size_t got = json_object_array_length(ids);
            int expected = N_TRIPS - offset < 0 ? 0 : (N_TRIPS - offset < size ? N_TRIPS - offset : size);
            CHECK(got == (size_t)expected);
            CHECK(fetch_count(ctx, d) == expected);
            json_object *objects = fetch(ctx, d);
            CHECK(json_object_array_length(objects) == got);
            for (size_t i = 0; i < got; i++) {
                const char *id = json_object_get_string(json_object_array_get_idx(ids, i));
                CHECK_STR_EQ(check_str_member(json_object_array_get_idx(objects, i), "_id"), id);
                CHECK(n < sizeof seen - 1);
                seen[n++] = letter_of(id);
            }
            json_object_put(objects);
            json_object_put(ids);
            free(d);
        }
        seen[n] = '\0';
        /* Every trip exactly once, in order. */
        CHECK_STR_EQ(seen, order);
    }
    /* Offset without limit; limit 0; limit past the end; count honours both. */
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}], \"fetchOffset\": 5}", "FC");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 0}", "");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"fetchLimit\": 100}", "ABCDEFG");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"fetchOffset\": 100}", "");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"fetchLimit\": 2, \"fetchOffset\": 1}", "BC");
    expect_both(ctx, "Trip", "$0 is PersonalTrip", NULL, NULL,
                ", \"sortBy\": [{\"key\": \"startDate\", \"order\": \"reverse\"}], \"fetchLimit\": 2, \"fetchOffset\": 1", "AD");
}

/* ---- key paths, count, isEmpty, in, between, nil, options ---------------- */

static void test_expressions(strata_context *ctx) {
    /* Key paths through a to-one relationship. */
    expect_both(ctx, "Trip", "$0.livingAccommodation?.placeName == \"Hotel\"",
                "{\"==\": [{\"key\": \"livingAccommodation.placeName\"}, \"Hotel\"]}", NULL, "", "BE");
    expect_both(ctx, "Trip", "$0.livingAccommodation!.address.hasPrefix(\"1 \")",
                "{\"hasPrefix\": [{\"key\": \"livingAccommodation.address\"}, \"1 \"]}", NULL, "", "B");
    /* A force unwrap of nil fails the evaluation: the object is left out, under ! too (as Foundation
       throws for it), while ?. gives nil, which is != "Hotel". */
    expect_both(ctx, "Trip", "$0.livingAccommodation!.placeName != \"Hotel\"",
                "{\"!=\": [{\"key\": \"livingAccommodation!.placeName\"}, \"Hotel\"]}", NULL, "", "AD");
    expect_both(ctx, "Trip", "!($0.livingAccommodation!.placeName == \"Hotel\")",
                "{\"not\": {\"==\": [{\"key\": \"livingAccommodation!.placeName\"}, \"Hotel\"]}}", NULL, "", "AD");
    expect_both(ctx, "Trip", "$0.livingAccommodation?.placeName != \"Hotel\"",
                "{\"!=\": [{\"key\": \"livingAccommodation.placeName\"}, \"Hotel\"]}", NULL, "", "ACDFG");
    expect_both(ctx, "Trip", "$0.livingAccommodation == nil || $0.livingAccommodation!.placeName != \"Hotel\"",
                NULL, NULL, "", "ACDFG");
    expect_both(ctx, "Trip", "$0.livingAccommodation?.placeName < \"Z\"",
                "{\"<\": [{\"key\": \"livingAccommodation.placeName\"}, \"Z\"]}", NULL, "", "ABDE");
    expect_both(ctx, "BucketListItem", NULL, "{\"==\": [{\"key\": \"trip.name\"}, \"Nobody\"]}", NULL, "", "");
    /* Nil tests: a to-one, an attribute through it, an optional attribute, ??. */
    expect_both(ctx, "Trip", "$0.livingAccommodation == nil", "{\"==\": [{\"key\": \"livingAccommodation\"}, null]}",
                NULL, "", "CFG");
    expect_both(ctx, "Trip", "$0.livingAccommodation != nil", "{\"!=\": [{\"key\": \"livingAccommodation\"}, null]}",
                NULL, "", "ABDE");
    expect_both(ctx, "Trip", "$0.livingAccommodation?.placeName == nil",
                "{\"==\": [{\"key\": \"livingAccommodation.placeName\"}, null]}", NULL, "", "CFG");
    expect_both(ctx, "Trip", "$0.photo == nil", "{\"==\": [{\"key\": \"photo\"}, null]}", NULL, "", "ACDEFG");
    expect_both(ctx, "Trip", "$0.photo != nil", "{\"not\": {\"==\": [{\"key\": \"photo\"}, null]}}", NULL, "", "B");
    expect_both(ctx, "Trip", "($0.livingAccommodation?.placeName ?? \"none\") == \"none\"",
                "{\"==\": [{\"??\": [{\"key\": \"livingAccommodation.placeName\"}, \"none\"]}, \"none\"]}", NULL, "", "CFG");
    /* A to-one compared by identity. */
    {
        char *bindings = check_strf("{\"place\": \"%s\"}", place[3]);
        expect_both(ctx, "Trip", "$0.livingAccommodation == place",
                    "{\"==\": [{\"key\": \"livingAccommodation\"}, {\"var\": \"place\"}]}", bindings, "", "D");
        free(bindings);
        char *tree = check_strf("{\"==\": [{\"key\": \"trip\"}, \"%s\"]}", trip[0]);
        char *d = check_strf("{\"entity\": \"BucketListItem\", \"predicate\": %s}", tree);
        const char *want[] = {items[0][0], items[0][1]};
        expect_result_ids(ctx, d, want, 2, "the items of A");
        free(d);
        free(tree);
    }

    /* count and isEmpty of a to-many relationship. */
    expect_both(ctx, "Trip", "$0.bucketList.count > 1", "{\">\": [{\"count\": {\"key\": \"bucketList\"}}, 1]}", NULL, "", "AD");
    expect_both(ctx, "Trip", "$0.bucketList.count == 1", "{\"==\": [{\"count\": {\"key\": \"bucketList\"}}, 1]}", NULL, "", "BF");
    expect_both(ctx, "Trip", "$0.bucketList.isEmpty", "{\"isEmpty\": {\"key\": \"bucketList\"}}", NULL, "", "CEG");
    expect_both(ctx, "Trip", "!$0.bucketList.isEmpty", "{\"not\": {\"isEmpty\": {\"key\": \"bucketList\"}}}", NULL, "", "ABDF");
    expect_both(ctx, "Trip", "$0.bucketList.allSatisfy { $0.isInPlan }",
                "{\"all\": [{\"key\": \"bucketList\"}, {\"key\": \"isInPlan\"}]}", NULL, "", "BCEFG");
    /* The enclosing object inside `any` (scope 1). */
    expect_both(ctx, "Trip", "{ trip in trip.bucketList.contains { $0.hasReservation == false && trip.endDate >= now } }",
                "{\"any\": [{\"key\": \"bucketList\"}, {\"and\": [{\"==\": [{\"key\": \"hasReservation\"}, false]},"
                " {\">=\": [{\"key\": \"endDate\", \"scope\": 1}, {\"var\": \"now\"}]}]}]}",
                "{\"now\": \"" NOW "\"}", "", "ADF");
    /* String length. */
    expect_both(ctx, "Trip", "$0.name.count == 4", "{\"==\": [{\"count\": {\"key\": \"name\"}}, 4]}", NULL, "", "B");

    /* in: a bound array, a literal array, past 16 values (one bound JSON array). */
    const char *names3 = "{\"names\": [\"Berlin\", \"Ky\\u014dto\", \"Nowhere\"]}";
    expect_both(ctx, "Trip", "names.contains($0.destination)", "{\"in\": [{\"key\": \"destination\"}, {\"var\": \"names\"}]}",
                names3, "", "DE");
    expect_both(ctx, "Trip", "[\"Berlin\", \"Zermatt\"].contains($0.destination)",
                "{\"in\": [{\"key\": \"destination\"}, [\"Berlin\", \"Zermatt\"]]}", NULL, "", "EG");
    expect_both(ctx, "Trip", "!names.contains($0.destination)",
                "{\"not\": {\"in\": [{\"key\": \"destination\"}, {\"var\": \"names\"}]}}", names3, "", "ABCFG");
    expect_both(ctx, "Trip", "names.contains($0.destination)", NULL, "{\"names\": []}", "", "");
    {
        sbuf b = {0};
        sb_add(&b, "{\"names\": [");
        for (int i = 0; i < 20; i++) sb_add(&b, "\"City %d\", ", i);
        sb_add(&b, "\"Route 66\", \"Cupertino\"]}");
        expect_both(ctx, "Trip", "names.contains($0.destination)",
                    "{\"in\": [{\"key\": \"destination\"}, {\"var\": \"names\"}]}", b.s, "", "BC");
        char *d = check_strf("{\"entity\": \"Trip\", \"predicate\": {\"in\": [{\"key\": \"destination\"}, {\"var\": \"names\"}]},"
                       " \"bindings\": %s}", b.s);
        json_object *e = explain(ctx, d);
        CHECK(check_parameters(e) == 1);
        CHECK(strstr(check_str_member(e, "sql"), "City") == NULL);
        json_object_put(e);
        free(d);
        d = check_strf("{\"entity\": \"Trip\", \"predicate\": {\"in\": [{\"key\": \"destination\"}, {\"var\": \"names\"}]},"
                 " \"bindings\": %s}", names3);
        e = explain(ctx, d);
        CHECK(check_parameters(e) == 3);
        json_object_put(e);
        free(d);
        free(b.s);
    }

    /* between on dates, inclusive at both ends; the half-open range. */
    const char *range = "{\"lo\": \"2026-11-15T00:00:00Z\", \"hi\": \"2027-01-08T00:00:00Z\"}";
    expect_both(ctx, "Trip", "(lo...hi).contains($0.startDate)",
                "{\"between\": [{\"key\": \"startDate\"}, {\"var\": \"lo\"}, {\"var\": \"hi\"}]}", range, "", "ADG");
    expect_both(ctx, "Trip", "(lo..<hi).contains($0.startDate)",
                "{\"and\": [{\">=\": [{\"key\": \"startDate\"}, {\"var\": \"lo\"}]}, {\"<\": [{\"key\": \"startDate\"}, {\"var\": \"hi\"}]}]}",
                range, "", "AD");
    expect_both(ctx, "Trip", NULL,
                "{\"between\": [{\"key\": \"endDate\"}, {\"date\": \"2026-06-12T00:00:00Z\"}, \"2026-10-03T00:00:00Z\"]}",
                NULL, "", "BE");

    /* Enum raw values. */
    expect_both(ctx, "PersonalTrip", "$0.reason == .family", "{\"==\": [{\"key\": \"reason\"}, \"family\"]}", NULL, "", "A");
    expect_both(ctx, "PersonalTrip", "$0.reason != .family.rawValue", "{\"!=\": [{\"key\": \"reason\"}, \"family\"]}", NULL, "", "DF");
    expect_both(ctx, "BusinessTrip", "$0.perdiem > 100", "{\">\": [{\"key\": \"perdiem\"}, 100]}", NULL, "", "B");
    expect_both(ctx, "BusinessTrip", "$0.perdiem <= 80.0", "{\"<=\": [{\"key\": \"perdiem\"}, 80.0]}", NULL, "", "E");

    /* String comparisons with options. */
    static const struct { const char *op, *value, *options, *letters; } options[] = {
        {"==", "Z\\u00fcrich", "", "A"},
        {"==", "z\\u00fcrich", "", ""},
        {"==", "z\\u00fcrich", "c", "A"},
        {"==", "zurich", "c", ""},
        {"==", "Zurich", "d", "A"},
        {"==", "zurich", "d", ""},
        {"==", "ZURICH", "cd", "A"},
        {"!=", "ZURICH", "cd", "BCDEFG"},
        {"<", "c", "", "ABCDEFG"},       /* binary: every capital sorts before "c" */
        {"<", "c", "c", "E"},            /* folded: only "berlin" */
        {"contains", "\\u00fcr", "", "A"},
        {"contains", "UR", "c", ""},
        {"contains", "UR", "cd", "A"},
        {"contains", "ur", "d", "A"},
        {"contains", "", "", "ABCDEFG"},
        {"hasPrefix", "sao", "cd", "F"},
        {"hasPrefix", "sao", "c", ""},
        {"hasPrefix", "Sao", "d", "F"},
        {"hasSuffix", "KYOTO", "cd", "D"},
        {"hasSuffix", "TO", "c", "D"},
        {"localizedStandardContains", "", "", ""},
        {"localizedStandardContains", "\\uff3a\\uff55\\uff32", "", "A"},   /* fullwidth ＺｕＲ */
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const char *letters = options[i].letters;
        char *tree = check_strf("{\"%s\": [{\"key\": \"destination\"}, \"%s\"]%s%s%s}", options[i].op, options[i].value,
                          *options[i].options ? ", \"options\": \"" : "", options[i].options, *options[i].options ? "\"" : "");
        expect_both(ctx, "Trip", NULL, tree, NULL, "", letters);
        free(tree);
    }
    /* The same in #Predicate text: options: arguments and Foundation's compare. */
    expect_both(ctx, "Trip", "$0.name.contains(\"VISIT\", options: .caseInsensitive)",
                "{\"contains\": [{\"key\": \"name\"}, \"VISIT\"], \"options\": \"c\"}", NULL, "", "A");
    expect_both(ctx, "Trip", "$0.name.contains(\"VISIT\")", "{\"contains\": [{\"key\": \"name\"}, \"VISIT\"]}", NULL, "", "");
    expect_both(ctx, "Trip", "$0.destination.hasPrefix(\"sao\", options: [.caseInsensitive, .diacriticInsensitive])",
                NULL, NULL, "", "F");
    expect_both(ctx, "Trip", "$0.destination.hasSuffix(\"KYOTO\", options: \"cd\")", NULL, NULL, "", "D");
    expect_both(ctx, "Trip", "$0.destination.compare(\"Zurich\", options: .diacriticInsensitive) == .orderedSame",
                NULL, NULL, "", "A");
    expect_both(ctx, "Trip", "$0.destination.caseInsensitiveCompare(\"BERLIN\") == .orderedSame", NULL, NULL, "", "E");
    expect_both(ctx, "Trip", "$0.destination.localizedCaseInsensitiveContains(\"MATT\")", NULL, NULL, "", "G");
    expect_both(ctx, "Trip", "$0.name.starts(with: \"Re\")", "{\"hasPrefix\": [{\"key\": \"name\"}, \"Re\"]}", NULL, "", "F");
    /* A value that is a variable holding the needle, and a bool variable as a condition. */
    expect_both(ctx, "Trip", "flag && $0.name.hasSuffix(s)",
                "{\"and\": [{\"var\": \"flag\"}, {\"hasSuffix\": [{\"key\": \"name\"}, {\"var\": \"s\"}]}]}",
                "{\"flag\": true, \"s\": \"Trip\"}", "", "C");
    expect_both(ctx, "Trip", "flag && $0.name.hasSuffix(s)", NULL, "{\"flag\": false, \"s\": \"Trip\"}", "", "");

    /* Negated tests with a nil operand (through a nil to-one) are true: two-valued logic. */
    expect_both(ctx, "Trip", "!$0.livingAccommodation?.placeName.localizedStandardContains(\"o\")",
                "{\"not\": {\"localizedStandardContains\": [{\"key\": \"livingAccommodation.placeName\"}, \"o\"]}}",
                NULL, "", "ACFG");
    expect_both(ctx, "Trip", "!($0.livingAccommodation?.placeName < \"Z\")",
                "{\"not\": {\"<\": [{\"key\": \"livingAccommodation.placeName\"}, \"Z\"]}}", NULL, "", "CFG");
    expect_both(ctx, "Trip", "!$0.livingAccommodation?.placeName.contains(\"o\")",
                "{\"not\": {\"contains\": [{\"key\": \"livingAccommodation.placeName\"}, \"o\"]}}", NULL, "", "ACFG");
    expect_both(ctx, "Trip", "!$0.livingAccommodation?.placeName.hasPrefix(\"H\", options: \"c\")", NULL, NULL, "", "ACDFG");
    expect_both(ctx, "Trip", "$0.livingAccommodation?.placeName != \"Hotel\"",
                "{\"!=\": [{\"key\": \"livingAccommodation.placeName\"}, \"Hotel\"]}", NULL, "", "ACDFG");
    expect_both(ctx, "Trip", "!names.contains($0.livingAccommodation?.placeName)", NULL, "{\"names\": [\"Hotel\"]}", "", "ACDFG");
    expect_both(ctx, "Trip", "[\"Hotel\", nil].contains($0.livingAccommodation?.placeName)",
                "{\"in\": [{\"key\": \"livingAccommodation.placeName\"}, [\"Hotel\", null]]}", NULL, "", "BCEFG");
    expect_both(ctx, "Trip", "$0.bucketList.allSatisfy { $0.details.localizedStandardContains(\"snow\") }", NULL, NULL, "", "CEG");
    /* A text operand bound to nil. */
    expect_both(ctx, "Trip", "$0.name.contains(q)", "{\"contains\": [{\"key\": \"name\"}, {\"var\": \"q\"}]}",
                "{\"q\": null}", "", "");

    /* Precedence: && binds tighter than ||; ?: is loosest. */
    expect_both(ctx, "Trip", "$0.name == \"WWDC\" || $0 is PersonalTrip && $0.endDate >= now", NULL,
                "{\"now\": \"" NOW "\"}", "", "ABDF");
    expect_both(ctx, "Trip", "($0.name == \"WWDC\" || $0 is PersonalTrip) && $0.endDate >= now", NULL,
                "{\"now\": \"" NOW "\"}", "", "ADF");
    expect_both(ctx, "Trip", "/* planned */ $0.bucketList.isEmpty ? false : $0.bucketList.allSatisfy { $0.isInPlan } // all in plan",
                "{\"cond\": [{\"isEmpty\": {\"key\": \"bucketList\"}}, false, {\"all\": [{\"key\": \"bucketList\"}, {\"key\": \"isInPlan\"}]}]}",
                NULL, "", "BF");
    /* A conditional value. */
    expect_both(ctx, "Trip", "($0.bucketList.isEmpty ? \"none\" : $0.name) == \"none\"",
                "{\"==\": [{\"cond\": [{\"isEmpty\": {\"key\": \"bucketList\"}}, \"none\", {\"key\": \"name\"}]}, \"none\"]}",
                NULL, "", "CEG");

    /* Two to-one hops, and to-many through a to-one inside a closure. */
    {
        const char *keynote[] = {items[1][0]};
        expect_result_ids(ctx, "{\"entity\": \"BucketListItem\", \"predicate\": \"$0.trip?.livingAccommodation?.placeName == \\\"Hotel\\\"\"}",
                          keynote, 1, "the keynote");
        expect_result_ids(ctx, "{\"entity\": \"BucketListItem\", \"predicate\": {\"==\": [{\"key\": \"trip.livingAccommodation.placeName\"}, \"Hotel\"]}}",
                          keynote, 1, "the keynote");
        const char *by_trip_start[] = {items[1][0], items[3][0], items[3][1], items[0][0], items[0][1], items[5][0]};
        expect_result_ids(ctx, "{\"entity\": \"BucketListItem\", \"sortBy\": [{\"key\": \"trip.startDate\"}]}",
                          by_trip_start, 6, "items by their trip's start");
        const char *in_plan_trips[] = {items[0][0], items[0][1], items[1][0], items[5][0]};
        expect_result_ids(ctx, "{\"entity\": \"BucketListItem\", \"predicate\": \"$0.trip?.bucketList.contains { $0.isInPlan }\"}",
                          in_plan_trips, 4, "items of trips with a planned item");
        expect_result_ids(ctx, "{\"entity\": \"BucketListItem\", \"predicate\": {\"any\": [{\"key\": \"trip.bucketList\"}, {\"key\": \"isInPlan\"}]}}",
                          in_plan_trips, 4, "items of trips with a planned item");
        const char *personal_items[] = {items[0][0], items[0][1], items[3][0], items[3][1], items[5][0]};
        char *d = check_strf("{\"entity\": \"BucketListItem\", \"predicate\": {\"in\": [{\"key\": \"trip\"}, {\"var\": \"t\"}]},"
                       " \"bindings\": {\"t\": [\"%s\", \"%s\", \"%s\"]}}", trip[0], trip[3], trip[5]);
        expect_result_ids(ctx, d, personal_items, 5, "items of A, D, F");
        free(d);
    }
    expect_both(ctx, "Trip", NULL,
                "{\"any\": [{\"key\": \"bucketList\"}, {\"any\": [{\"key\": \"trip.bucketList\"}, {\"key\": \"isInPlan\"}]}]}",
                NULL, "", "ABF");
}

/* ---- more about fetching ------------------------------------------------------ */

static int trace_statements;
static void count_trace(const char *sql, void *userdata) { (void)sql; (void)userdata; trace_statements++; }

static void test_more_fetching(strata_container *db, strata_context *ctx) {
    /* Prefetching a to-one into a hierarchy: each item's trip inline, as strata_get returns it. */
    json_object *arr = fetch(ctx, "{\"entity\": \"BucketListItem\", \"relationshipKeyPathsForPrefetching\": [\"trip\"]}");
    CHECK(json_object_array_length(arr) == 6);
    for (size_t i = 0; i < 6; i++) {
        json_object *t = check_member(json_object_array_get_idx(arr, i), "trip");
        CHECK(json_object_is_type(t, json_type_object));
        char *text = NULL;
        CHECK_STATUS(strata_get(ctx, check_str_member(t, "_id"), &text));
        json_object *g = parse_json_or_die(text);
        strata_free(text);
        if (!json_object_equal(g, t)) fprintf(stderr, "inline %s\n  get    %s\n", json_object_to_json_string(t), json_object_to_json_string(g));
        CHECK(json_object_equal(g, t));
        json_object_put(g);
    }
    CHECK_STR_EQ(check_str_member(check_member(json_object_array_get_idx(arr, 0), "trip"), "reason"), "family");
    json_object_put(arr);

    /* propertiesToFetch: none, a subentity attribute, a relationship, a transient attribute, with prefetching. */
    static const char *const ids_only[] = {"_id", "_entity"};
    static const char *const with_reason[] = {"_id", "_entity", "reason"};
    static const char *const with_list[] = {"_id", "_entity", "name", "bucketList"};
    static const char *const with_views[] = {"_id", "_entity", "tripViews"};
    static const char *const with_place[] = {"_id", "_entity", "name", "livingAccommodation"};
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"propertiesToFetch\": []}");
    CHECK(json_object_array_length(arr) == N_TRIPS);
    for (size_t i = 0; i < N_TRIPS; i++) expect_keys(json_object_array_get_idx(arr, i), ids_only, 2);
    json_object_put(arr);
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"reason\"]}");
    for (size_t i = 0; i < N_TRIPS; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        int personal = strcmp(check_str_member(o, "_entity"), "PersonalTrip") == 0;
        expect_keys(o, personal ? with_reason : ids_only, personal ? 3 : 2);
    }
    json_object_put(arr);
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\", \"bucketList\"]}");
    for (size_t i = 0; i < N_TRIPS; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        expect_keys(o, with_list, 4);
        json_object *list = check_member(o, "bucketList");
        CHECK(json_object_array_length(list) == (size_t)(items[i][1] ? 2 : items[i][0] ? 1 : 0));
        if (items[i][0]) CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(list, 0)), items[i][0]);
    }
    json_object_put(arr);
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"tripViews\"]}");
    for (size_t i = 0; i < N_TRIPS; i++) {
        expect_keys(json_object_array_get_idx(arr, i), with_views, 3);
        expect_fields(json_object_array_get_idx(arr, i), "{\"tripViews\": 0}");
    }
    json_object_put(arr);
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\"], \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\"]}");
    for (size_t i = 0; i < N_TRIPS; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        expect_keys(o, with_place, 4);
        json_object *p = check_member(o, "livingAccommodation");
        if (place[i]) CHECK_STR_EQ(check_str_member(p, "_id"), place[i]);
        else CHECK(p == NULL);
    }
    json_object_put(arr);

    /* explain's queryPlan rows. */
    json_object *e = explain(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.bucketList.count > 1\"}");
    json_object *plan = check_member(e, "queryPlan");
    CHECK(json_object_array_length(plan) >= 1);
    for (size_t i = 0; i < json_object_array_length(plan); i++) {
        json_object *row = json_object_array_get_idx(plan, i);
        CHECK(json_object_is_type(check_member(row, "id"), json_type_int));
        CHECK(json_object_is_type(check_member(row, "parent"), json_type_int));
        CHECK(check_str_member(row, "detail") != NULL && *check_str_member(row, "detail"));
    }
    json_object_put(e);

    /*
     * strata.h: one SQL query, which reads the identifiers of relationships whose links
     * live in another table too (a Trip's bucketList, and livingAccommodation, whose
     * link LivingAccommodation.trip holds): 1 statement, as for a BucketListItem.
     */
    trace_statements = 0;
    CHECK_STATUS(strata_set_trace(db, count_trace, NULL, NULL));
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"BucketListItem\"}", &text));
    strata_free(text);
    EXPECT(trace_statements == 1);
    trace_statements = 0;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Trip\"}", &text));
    strata_free(text);
    if (trace_statements != 1)
        fprintf(stderr, "a Trip fetch ran %d statements; strata.h says 1\n", trace_statements);
    EXPECT(trace_statements == 1);
    /* A prefetched relationship adds one statement, prepared once and run (and reported) per owner row;
       on PostgreSQL once per batch of up to 1,000 owner rows. */
    trace_statements = 0;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"bucketList\"]}", &text));
    json_object *owners = parse_json_or_die(text);
    strata_free(text);
    EXPECT(trace_statements == 1 + (check_postgres() ? 1 : (int)json_object_array_length(owners)));
    json_object_put(owners);
    /* fetch_count and fetch_identifiers read one statement; explain one. */
    trace_statements = 0;
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.bucketList.count > 1\", \"fetchLimit\": 1}") == 1);
    CHECK(trace_statements == 1);
    trace_statements = 0;
    json_object_put(fetch_ids(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.bucketList.count > 1\"}"));
    CHECK(trace_statements == 1);
    CHECK_STATUS(strata_set_trace(db, NULL, NULL, NULL));

    /* Prefetching sees pending changes: a new item inline, a deleted one gone, an updated one changed. */
    char *patch = check_strf("{\"bucketList\": [\"%s\", {\"title\": \"Lake swim\", \"isInPlan\": true}]}", items[0][1]);
    CHECK_STATUS(strata_update(ctx, trip[0], patch));
    free(patch);
    CHECK_STATUS(strata_update(ctx, items[0][1], "{\"details\": \"in the sun\"}"));
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"predicate\": {\"is\": \"PersonalTrip\"}, \"fetchLimit\": 1,"
                     " \"relationshipKeyPathsForPrefetching\": [\"bucketList\"]}");
    CHECK(json_object_array_length(arr) == 1);
    json_object *list = check_member(json_object_array_get_idx(arr, 0), "bucketList");
    CHECK(json_object_array_length(list) == 2);
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 0), "_id"), items[0][1]);
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 0), "details"), "in the sun");
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 1), "title"), "Lake swim");
    json_object_put(arr);
    expect_both(ctx, "Trip", "$0.bucketList.contains { $0.title == \"Lake swim\" }", NULL, NULL, "", "A");
    expect_both(ctx, "Trip", "$0.bucketList.contains { $0.title == \"Lake swim\" }", NULL, NULL,
                ", \"includePendingChanges\": false", "");
    CHECK_STATUS(strata_rollback(ctx));

    /* strata_delete_where on a pending insert: it is gone from reads and never saved. */
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"Ghost\", \"destination\": \"Nowhere\", \"startDate\": 0, \"endDate\": 0}", NULL));
    CHECK(count_of(ctx, "Trip") == N_TRIPS + 1);
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "\"$0.name == \\\"Ghost\\\"\""));
    CHECK(count_of(ctx, "Trip") == N_TRIPS);
    CHECK_STATUS(strata_save(ctx));
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "ABCDEFG");
    CHECK(strata_has_changes(ctx) == 0);
}

/* ---- every value type (queries_values.json) -------------------------------- */

/* A Record query: #Predicate text and/or JSON tree, bindings, the expected records ("14": r1 then r4). */
typedef struct { const char *text, *tree, *bindings, *expected; } record_case;

#define MAX_RECORDS 9
static char *rid[MAX_RECORDS];

static void expect_records(strata_context *ctx, const char *descriptor, const char *expected) {
    const char *ids[MAX_RECORDS];
    size_t n = strlen(expected);
    CHECK(n <= MAX_RECORDS);
    for (size_t k = 0; k < n; k++) {
        CHECK(expected[k] >= '1' && expected[k] < '1' + MAX_RECORDS && rid[expected[k] - '1'] != NULL);
        ids[k] = rid[expected[k] - '1'];
    }
    expect_result_ids(ctx, descriptor, ids, n, *expected ? expected : "(none)");
}

static void run_record_cases(strata_context *ctx, const record_case *cases, size_t count) {
    for (size_t i = 0; i < count; i++) {
        char *b = cases[i].bindings ? check_strf(", \"bindings\": %s", cases[i].bindings) : strdup("");
        if (cases[i].text) {
            char *q = json_quote(cases[i].text);
            char *d = check_strf("{\"entity\": \"Record\", \"predicate\": %s%s}", q, b);
            expect_records(ctx, d, cases[i].expected);
            free(d);
            free(q);
        }
        if (cases[i].tree) {
            char *d = check_strf("{\"entity\": \"Record\", \"predicate\": %s%s}", cases[i].tree, b);
            expect_records(ctx, d, cases[i].expected);
            free(d);
        }
        free(b);
    }
}

static const char *const records[MAX_RECORDS] = {
    "{\"code\": \"r1\", \"count\": 3, \"ratio\": 0.5, \"flag\": true, \"when\": \"2026-01-01T00:00:00Z\","
    " \"blob\": \"AAEC\", \"uid\": \"123e4567-e89b-12d3-a456-426614174000\", \"link\": \"https://example.com/a\","
    " \"amount\": \"1.50\", \"extra\": {\"k\": 1}, \"note\": \"Stra\\u00dfe\", \"kind\": \"beta\"}",
    "{\"code\": \"r2\", \"count\": 10, \"ratio\": 2.25, \"when\": \"2026-06-01T12:00:00.250Z\","
    " \"uid\": \"00000000-0000-0000-0000-000000000001\", \"link\": \"https://example.com/b\","
    " \"amount\": \"10.0\", \"note\": \"Cr\\u00e8me br\\u00fbl\\u00e9e\"}",
    "{\"code\": \"r3\", \"count\": -1}",
    "{\"code\": \"r4\", \"count\": 3, \"amount\": 1.5, \"uid\": \"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF\","
    " \"when\": \"2026-01-01T02:00:00+02:00\", \"note\": \"x\"}",
    /* phase 2: extremes */
    "{\"code\": \"item 2\", \"count\": 9223372036854775807, \"amount\": \"-10\", \"note\": \"a_b\"}",
    "{\"code\": \"Item 10\", \"count\": -9223372036854775808, \"amount\": \"-2.5\", \"note\": \"100%\"}",
    "{\"code\": \"item 1\", \"amount\": \"1000\", \"ratio\": 1e300}",
    "{\"code\": \"r10\", \"amount\": \"999.999\", \"note\": \"Zu\\u0308rich\"}",
    "{\"code\": \"r9\", \"amount\": \"0.0000000000000000000001\", \"note\": \"\\ud83d\\udc4d\\ud83c\\udffd\"}",
};

static const record_case phase1[] = {
    /* decimal: exact ("1.50" == "1.5", 10.0 > 2 — not text order), and nil */
    {"$0.amount == 1.5", "{\"==\": [{\"key\": \"amount\"}, {\"decimal\": \"1.5\"}]}", NULL, "14"},
    {"$0.amount == d", "{\"==\": [{\"key\": \"amount\"}, {\"var\": \"d\"}]}", "{\"d\": \"1.500\"}", "14"},
    {"$0.amount > 2", "{\">\": [{\"key\": \"amount\"}, {\"decimal\": \"2\"}]}", NULL, "2"},
    {"$0.amount >= 1.5", "{\">=\": [{\"key\": \"amount\"}, 1.5]}", NULL, "124"},
    {"$0.amount < 1.5000000000000000001", "{\"<\": [{\"key\": \"amount\"}, {\"decimal\": \"1.5000000000000000001\"}]}",
     NULL, "14"},
    {"$0.amount > 1.4999999999999999999", NULL, NULL, "124"},
    {"$0.amount == nil", "{\"==\": [{\"key\": \"amount\"}, null]}", NULL, "3"},
    {"$0.amount != 1.5", "{\"not\": {\"==\": [{\"key\": \"amount\"}, {\"decimal\": \"1.50\"}]}}", NULL, "23"},
    {"[1.5, 7].contains($0.amount)", "{\"in\": [{\"key\": \"amount\"}, [{\"decimal\": \"1.500\"}, 7]]}", NULL, "14"},
    /* uuid: any case; != treats nil as a value */
    {"$0.uid == u", "{\"==\": [{\"key\": \"uid\"}, {\"uuid\": \"123E4567-E89B-12D3-A456-426614174000\"}]}",
     "{\"u\": \"123E4567-e89b-12D3-a456-426614174000\"}", "1"},
    {"$0.uid != u", "{\"!=\": [{\"key\": \"uid\"}, {\"var\": \"u\"}]}", "{\"u\": {\"uuid\": \"123e4567-e89b-12d3-a456-426614174000\"}}", "234"},
    {"$0.uid == nil", NULL, NULL, "3"},
    {"us.contains($0.uid)", "{\"in\": [{\"key\": \"uid\"}, {\"var\": \"us\"}]}",
     "{\"us\": [\"ffffffff-ffff-ffff-ffff-ffffffffffff\", \"00000000-0000-0000-0000-000000000001\"]}", "24"},
    /* int, double, bool */
    {"$0.count == 3", "{\"==\": [{\"key\": \"count\"}, 3]}", NULL, "14"},
    {"$0.count < 0", "{\"<\": [{\"key\": \"count\"}, 0]}", NULL, "3"},
    {"[10, -1].contains($0.count)", "{\"in\": [{\"key\": \"count\"}, [10, -1]]}", NULL, "23"},
    {"$0.ratio < 1", "{\"<\": [{\"key\": \"ratio\"}, 1]}", NULL, "134"},
    {"$0.ratio > 0.5", "{\">\": [{\"key\": \"ratio\"}, 0.5]}", NULL, "2"},
    {"$0.flag", "{\"key\": \"flag\"}", NULL, "1"},
    {"!$0.flag", "{\"==\": [{\"key\": \"flag\"}, false]}", NULL, "234"},
    {"$0.flag == b", "{\"value\": {\"key\": \"flag\"}}", "{\"b\": true}", "1"},
    /* dates: instants (an offset, fractions), nil */
    {"$0.when == d", "{\"==\": [{\"key\": \"when\"}, {\"date\": \"2026-01-01T00:00:00Z\"}]}", "{\"d\": \"2026-01-01T00:00:00.000Z\"}", "14"},
    {"$0.when > d", "{\">\": [{\"key\": \"when\"}, \"2026-06-01T12:00:00.249Z\"]}", "{\"d\": \"2026-06-01T12:00:00.249Z\"}", "2"},
    {"$0.when == nil", "{\"==\": [{\"key\": \"when\"}, null]}", NULL, "3"},
    {"!($0.when > d)", "{\"not\": {\">\": [{\"key\": \"when\"}, {\"var\": \"d\"}]}}", "{\"d\": \"2026-01-01T00:00:00Z\"}", "134"},
    /* a force unwrap of nil leaves the object out, under ! too */
    {"!($0.when! > d)", "{\"not\": {\">\": [{\"key\": \"when!\"}, {\"var\": \"d\"}]}}", "{\"d\": \"2026-01-01T00:00:00Z\"}", "14"},
    /* data, url */
    {"$0.blob == b", "{\"==\": [{\"key\": \"blob\"}, {\"data\": \"AAEC\"}]}", "{\"b\": {\"data\": \"AAEC\"}}", "1"},
    {"$0.blob != nil", NULL, NULL, "1"},
    {"$0.link == l", "{\"==\": [{\"key\": \"link\"}, {\"url\": \"https://example.com/b\"}]}", "{\"l\": \"https://example.com/b\"}", "2"},
    {"$0.link == nil", NULL, NULL, "34"},
    {"$0.link.hasSuffix(\"/a\")", NULL, NULL, "1"},
    /* strings: ß folds to ss; diacritics; length in scalars; isEmpty (nil or ""); enum */
    {"$0.note.compare(\"STRASSE\", options: .caseInsensitive) == .orderedSame",
     "{\"==\": [{\"key\": \"note\"}, \"STRASSE\"], \"options\": \"c\"}", NULL, "1"},
    {"$0.note == \"STRASSE\"", NULL, NULL, ""},
    {"$0.note.hasPrefix(\"STRASS\", options: .caseInsensitive)", NULL, NULL, "1"},
    {"$0.note.localizedStandardContains(\"strasse\")", NULL, NULL, "1"},
    {"$0.note.contains(\"brulee\", options: \"d\")", "{\"contains\": [{\"key\": \"note\"}, \"brulee\"], \"options\": \"d\"}", NULL, "2"},
    {"$0.note.localizedStandardContains(\"CREME\")", NULL, NULL, "2"},
    {"$0.note.count == 6", "{\"==\": [{\"count\": {\"key\": \"note\"}}, 6]}", NULL, "1"},
    {"$0.note.isEmpty", "{\"isEmpty\": {\"key\": \"note\"}}", NULL, "3"},
    {"$0.kind == .beta", "{\"==\": [{\"key\": \"kind\"}, \"beta\"]}", NULL, "1"},
};

static const record_case phase2[] = {
    /* 64-bit integers compare exactly (no rounding through double) */
    {"$0.count == 9223372036854775806", "{\"==\": [{\"key\": \"count\"}, 9223372036854775806]}", NULL, ""},
    {"$0.count > 9223372036854775806", "{\">\": [{\"key\": \"count\"}, 9223372036854775806]}", NULL, "5"},
    {"$0.count == n", "{\"==\": [{\"key\": \"count\"}, {\"var\": \"n\"}]}", "{\"n\": 9223372036854775807}", "5"},
    {"$0.count < -9223372036854775807", NULL, NULL, "6"},
    {"$0.count > 2.5", "{\">\": [{\"key\": \"count\"}, 2.5]}", NULL, "1245"},
    {"$0.ratio > 1e299", "{\">\": [{\"key\": \"ratio\"}, 1e299]}", NULL, "7"},
    /* decimals of every sign and size */
    {"$0.amount > 0", "{\">\": [{\"key\": \"amount\"}, 0]}", NULL, "124789"},
    {"$0.amount < -3", "{\"<\": [{\"key\": \"amount\"}, {\"decimal\": \"-3\"}]}", NULL, "5"},
    {"$0.amount > 999.9989999999999999999", NULL, NULL, "78"},
    {"(-2.5...0.0000000000000000000001).contains($0.amount)", NULL, NULL, "69"},
    /* LIKE and GLOB characters are plain characters */
    {"$0.note.contains(\"_\")", "{\"contains\": [{\"key\": \"note\"}, \"_\"]}", NULL, "5"},
    {"$0.note.contains(\"%\")", "{\"contains\": [{\"key\": \"note\"}, \"%\"], \"options\": \"cd\"}", NULL, "6"},
    {"$0.note.hasPrefix(\"a_\")", NULL, NULL, "5"},
    {"$0.note.hasPrefix(\"_\")", NULL, NULL, ""},
    {"$0.note.hasSuffix(\"%\")", NULL, NULL, "6"},
    {"$0.code.hasPrefix(\"item%\")", NULL, NULL, ""},
    {"$0.code.localizedStandardContains(\"*\")", NULL, NULL, ""},
    {"$0.code.localizedStandardContains(\"_\")", NULL, NULL, ""},
    {"$0.code.contains(\"?\")", NULL, NULL, ""},
    /* decomposed text: scalars count, d folds, lsc matches */
    {"$0.note.count == 7", NULL, NULL, "8"},
    {"$0.note.compare(\"Zurich\", options: .diacriticInsensitive) == .orderedSame", NULL, NULL, "8"},
    {"$0.note.localizedStandardContains(\"Z\\u{FC}r\")", NULL, NULL, "8"},
    /* an emoji with a skin tone: two scalars */
    {"$0.note.count == 2", NULL, NULL, "9"},
    /* negations of tests with nil operands are true (not SQL's unknown) */
    {"!($0.amount > 0)", "{\"not\": {\">\": [{\"key\": \"amount\"}, 0]}}", NULL, "356"},
    {"!$0.link.hasPrefix(\"https\")", "{\"not\": {\"hasPrefix\": [{\"key\": \"link\"}, \"https\"]}}", NULL, "3456789"},
    {"!$0.link.localizedStandardContains(\"example\")",
     "{\"not\": {\"localizedStandardContains\": [{\"key\": \"link\"}, \"example\"]}}", NULL, "3456789"},
    {"!$0.link.contains(\"example\")", NULL, NULL, "3456789"},
};

static void test_values(void) {
    strata_container *db = open_store(FIXTURES "queries_values.json", NULL);
    strata_context *ctx = check_context(db);
    memset(rid, 0, sizeof rid);
    for (int i = 0; i < 4; i++) CHECK_STATUS(strata_insert(ctx, "Record", records[i], &rid[i]));
    CHECK_STATUS(strata_save(ctx));

    run_record_cases(ctx, phase1, sizeof phase1 / sizeof phase1[0]);
    /* Sorting decimals exactly (nil first; "1.50" and "1.5" tie: insertion order), uuids, dates. */
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"amount\"}]}", "3142");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"amount\", \"order\": \"reverse\"}]}", "2143");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"uid\"}]}", "3214");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"when\"}, {\"key\": \"code\", \"order\": \"reverse\"}]}", "3412");

    for (int i = 4; i < MAX_RECORDS; i++) CHECK_STATUS(strata_insert(ctx, "Record", records[i], &rid[i]));
    CHECK_STATUS(strata_save(ctx));
    run_record_cases(ctx, phase2, sizeof phase2 / sizeof phase2[0]);
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"amount\"}]}", "356914287");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"amount\", \"order\": \"reverse\"}]}", "782149653");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"count\"}, {\"key\": \"code\"}]}", "637981425");
    /* Finder order: case-insensitive, numbers by value; binary: by scalar. */
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"code\"}]}", "756123498");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"code\", \"comparator\": \"binary\"}]}", "675182349");
    expect_records(ctx, "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"code\", \"order\": \"reverse\"}]}", "894321657");

    /* `in` past 16 values, for each type that binds differently. */
    {
        sbuf b = {0};
        sb_add(&b, "{\"entity\": \"Record\", \"predicate\": {\"in\": [{\"key\": \"amount\"}, [");
        for (int i = 0; i < 20; i++) sb_add(&b, "{\"decimal\": \"%d.25\"}, ", i + 100);
        sb_add(&b, "{\"decimal\": \"-10.000\"}, 1000]]}}");
        expect_records(ctx, b.s, "57");
        free(b.s);
        b = (sbuf){0};
        sb_add(&b, "{\"entity\": \"Record\", \"predicate\": {\"in\": [{\"key\": \"count\"}, [");
        for (int i = 0; i < 20; i++) sb_add(&b, "%d, ", i + 100);
        sb_add(&b, "9223372036854775807, -1]]}}");
        expect_records(ctx, b.s, "35");
        free(b.s);
        b = (sbuf){0};
        sb_add(&b, "{\"entity\": \"Record\", \"predicate\": {\"in\": [{\"key\": \"when\"}, [");
        for (int i = 0; i < 20; i++) sb_add(&b, "\"2020-01-%02dT00:00:00Z\", ", i + 1);
        sb_add(&b, "\"2026-06-01T12:00:00.250Z\"]]}}");
        expect_records(ctx, b.s, "2");
        free(b.s);
        b = (sbuf){0};
        sb_add(&b, "{\"entity\": \"Record\", \"predicate\": {\"in\": [{\"key\": \"uid\"}, [");
        for (int i = 0; i < 20; i++) sb_add(&b, "\"00000000-0000-0000-0000-0000000001%02d\", ", i);
        sb_add(&b, "\"123e4567-e89b-12d3-a456-426614174000\"]]}}");
        expect_records(ctx, b.s, "1");
        free(b.s);
        b = (sbuf){0};
        sb_add(&b, "{\"entity\": \"Record\", \"predicate\": {\"in\": [{\"key\": \"flag\"}, [");
        for (int i = 0; i < 20; i++) sb_add(&b, "false, ");
        sb_add(&b, "true]]}}");
        expect_records(ctx, b.s, "123456789");
        free(b.s);
    }

    /* A many-to-many relationship: any, all, count, isEmpty, prefetching, and from the other side. */
    char *red = NULL, *blue = NULL, *green = NULL;
    CHECK_STATUS(strata_insert(ctx, "Tag", "{\"name\": \"red\"}", &red));
    CHECK_STATUS(strata_insert(ctx, "Tag", "{\"name\": \"blue\"}", &blue));
    CHECK_STATUS(strata_insert(ctx, "Tag", "{\"name\": \"green\"}", &green));
    char *patch = check_strf("{\"tags\": [\"%s\", \"%s\"]}", red, blue);
    CHECK_STATUS(strata_update(ctx, rid[0], patch));
    free(patch);
    patch = check_strf("{\"tags\": [\"%s\"]}", blue);
    CHECK_STATUS(strata_update(ctx, rid[1], patch));
    free(patch);
    patch = check_strf("{\"tags\": [\"%s\"]}", green);
    CHECK_STATUS(strata_update(ctx, rid[6], patch));
    free(patch);
    for (int pass = 0; pass < 2; pass++) {   /* pending, then saved */
        static const record_case tags[] = {
            {"$0.tags.contains { $0.name == \"blue\" }", "{\"any\": [{\"key\": \"tags\"}, {\"==\": [{\"key\": \"name\"}, \"blue\"]}]}", NULL, "12"},
            {"$0.tags.count == 2", "{\"==\": [{\"count\": {\"key\": \"tags\"}}, 2]}", NULL, "1"},
            {"$0.tags.count >= 1", NULL, NULL, "127"},
            {"$0.tags.isEmpty", "{\"isEmpty\": {\"key\": \"tags\"}}", NULL, "345689"},
            {"$0.tags.allSatisfy { $0.name != \"red\" }", "{\"all\": [{\"key\": \"tags\"}, {\"!=\": [{\"key\": \"name\"}, \"red\"]}]}", NULL, "23456789"},
            {"{ r in r.tags.contains { tag in tag.records.contains { $0.flag && $0 != r } } }", NULL, NULL, "2"},
        };
        run_record_cases(ctx, tags, sizeof tags / sizeof tags[0]);
        const char *d = "{\"entity\": \"Record\", \"predicate\": \"!$0.tags.isEmpty\", \"relationshipKeyPathsForPrefetching\": [\"tags\"]}";
        json_object *arr = fetch(ctx, d);
        CHECK(json_object_array_length(arr) == 3);
        json_object *list = check_member(json_object_array_get_idx(arr, 0), "tags");
        CHECK(json_object_array_length(list) == 2);
        CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 0), "_id"), red);
        CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 0), "name"), "red");
        CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 1), "name"), "blue");
        json_object *back = check_member(json_object_array_get_idx(list, 1), "records");
        CHECK(json_object_array_length(back) == 2);
        CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(back, 0)), rid[0]);
        CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(back, 1)), rid[1]);
        list = check_member(json_object_array_get_idx(arr, 2), "tags");
        CHECK(json_object_array_length(list) == 1);
        CHECK_STR_EQ(check_str_member(json_object_array_get_idx(list, 0), "name"), "green");
        json_object_put(arr);
        const char *blue_red[] = {red, blue};
        expect_result_ids(ctx, "{\"entity\": \"Tag\", \"predicate\": \"$0.records.contains { $0.flag }\"}", blue_red, 2, "red, blue");
        const char *by_name[] = {red, green, blue};
        expect_result_ids(ctx, "{\"entity\": \"Tag\", \"predicate\": \"$0.records.count > 0\", \"sortBy\": [{\"key\": \"name\", \"order\": \"reverse\"}]}",
                          by_name, 3, "red, green, blue");
        if (pass == 0) CHECK_STATUS(strata_save(ctx));
    }
    /* Deleting a tag (nullify) leaves the records. */
    CHECK_STATUS(strata_delete_where(ctx, "Tag", "\"$0.name == \\\"blue\\\"\""));
    CHECK_STATUS(strata_save(ctx));
    static const record_case after[] = {
        {"$0.tags.count == 1", NULL, NULL, "17"},
        {"$0.tags.isEmpty", NULL, NULL, "2345689"},
    };
    run_record_cases(ctx, after, sizeof after / sizeof after[0]);
    CHECK(count_of(ctx, "Record") == MAX_RECORDS);

    strata_free(red);
    strata_free(blue);
    strata_free(green);
    for (int i = 0; i < MAX_RECORDS; i++) strata_free(rid[i]);
    strata_context_free(ctx);
    strata_close(db);
}

/* ---- pending changes ------------------------------------------------------ */

static void test_pending_changes(strata_container *db) {
    strata_context *ctx = check_context(db);
    strata_context *other = check_context(db);
    const char *zur = "{\"entity\": \"Trip\", \"predicate\": \"$0.destination.localizedStandardContains(q)\","
                      " \"bindings\": {\"q\": \"zur\"}%s}";
    char *with = check_strf(zur, "");
    char *with_true = check_strf(zur, ", \"includePendingChanges\": true");
    char *without = check_strf(zur, ", \"includePendingChanges\": false");

    /* An unsaved insert, update and delete. */
    char *h = NULL;
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"Layover\", \"destination\": \"Zurich Airport\","
                                             " \"startDate\": \"2026-11-30T00:00:00Z\", \"endDate\": \"2026-12-01T00:00:00Z\"}", &h));
    CHECK_STATUS(strata_update(ctx, trip[6], "{\"destination\": \"Z\\u00fcrs\"}"));
    CHECK_STATUS(strata_delete(ctx, trip[0]));
    CHECK(strata_has_changes(ctx) == 1);

    const char *pending[] = {trip[6], h};
    expect_result_ids(ctx, with, pending, 2, "G and the new trip");
    expect_result_ids(ctx, with_true, pending, 2, "G and the new trip");
    expect_trips(ctx, without, "A");
    expect_trips(other, with, "A");
    /* Every entry point honours the flag. */
    const char *all_pending[] = {trip[1], trip[2], trip[3], trip[4], trip[5], trip[6], h};
    expect_result_ids(ctx, "{\"entity\": \"Trip\"}", all_pending, 7, "B..G and the new trip");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"includePendingChanges\": false}", "ABCDEFG");
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includePendingChanges\": false, \"fetchLimit\": 3}") == 3);
    /* The update is visible in the objects, sorting and the pending insert in order. */
    json_object *arr = fetch(ctx, "{\"entity\": \"Trip\", \"predicate\": {\"==\": [{\"key\": \"name\"}, \"Ski Weekend\"]}}");
    CHECK(json_object_array_length(arr) == 1);
    expect_fields(json_object_array_get_idx(arr, 0), "{\"destination\": \"Z\\u00fcrs\"}");
    json_object_put(arr);
    arr = fetch(ctx, "{\"entity\": \"Trip\", \"predicate\": {\"==\": [{\"key\": \"name\"}, \"Ski Weekend\"]},"
                     " \"includePendingChanges\": false}");
    CHECK(json_object_array_length(arr) == 1);
    expect_fields(json_object_array_get_idx(arr, 0), "{\"destination\": \"Zermatt\"}");
    json_object_put(arr);
    const char *by_start[] = {trip[1], trip[4], trip[3], h, trip[6], trip[5], trip[2]};
    expect_result_ids(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}]}", by_start, 7, "BED+GFC");
    /* Reads do not change the pending changes. */
    CHECK(strata_has_changes(ctx) == 1);

    /* Saved: both flags agree, and the other context sees it. */
    CHECK_STATUS(strata_save(ctx));
    expect_result_ids(ctx, with, pending, 2, "G and the new trip");
    expect_result_ids(ctx, without, pending, 2, "G and the new trip");
    expect_result_ids(other, with, pending, 2, "G and the new trip");

    free(with);
    free(with_true);
    free(without);
    strata_free(h);
    strata_context_free(other);
    strata_context_free(ctx);
}

/* ---- strata_delete_where ---------------------------------------------------- */

static void expect_items(strata_context *ctx, const char *const *ids, size_t n, const char *what) {
    expect_result_ids(ctx, "{\"entity\": \"BucketListItem\"}", ids, n, what);
}

static void test_delete_where(void) {
    char *path = test_store_path("queries_delete_where.store");
    strata_container *db = open_store(TRIPS_SCHEMA, path);
    strata_context *ctx = check_context(db);
    seed_trips(ctx);
    strata_context *other = check_context(db);
    const char *all_items[] = {items[0][0], items[0][1], items[1][0], items[3][0], items[3][1], items[5][0]};

    /* A #Predicate text: pending until saved, rolled back. */
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "\"$0.bucketList.contains { $0.isInPlan }\""));
    CHECK(strata_has_changes(ctx) == 1);
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "CDEG");
    expect_trips(ctx, "{\"entity\": \"Trip\", \"includePendingChanges\": false}", "ABCDEFG");
    expect_trips(other, "{\"entity\": \"Trip\"}", "ABCDEFG");
    CHECK_STATUS(strata_rollback(ctx));
    CHECK(strata_has_changes(ctx) == 0);
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "ABCDEFG");
    expect_items(ctx, all_items, 6, "all items");

    /* The same as a JSON tree, saved: the bucket lists and accommodations cascade. */
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "{\"any\": [{\"key\": \"bucketList\"}, {\"key\": \"isInPlan\"}]}"));
    expect_trips(other, "{\"entity\": \"Trip\"}", "ABCDEFG");
    CHECK_STATUS(strata_save(ctx));
    CHECK(strata_has_changes(ctx) == 0);
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "CDEG");
    expect_trips(other, "{\"entity\": \"Trip\"}", "CDEG");
    const char *left[] = {items[3][0], items[3][1]};
    expect_items(other, left, 2, "the items of D");
    const char *places[] = {place[3], place[4]};
    expect_result_ids(other, "{\"entity\": \"LivingAccommodation\"}", places, 2, "the places of D and E");

    /* A predicate that matches nothing changes nothing. */
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "{\"==\": [{\"key\": \"name\"}, \"Atlantis\"]}"));
    CHECK(strata_has_changes(ctx) == 0);
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "false"));
    CHECK(strata_has_changes(ctx) == 0);

    /* NULL: every object of the entity (and its subentities), pending until saved. */
    CHECK_STATUS(strata_delete_where(ctx, "BucketListItem", NULL));
    CHECK(count_of(ctx, "BucketListItem") == 0);
    CHECK(count_of(other, "BucketListItem") == 2);
    CHECK_STATUS(strata_rollback(ctx));
    CHECK(count_of(ctx, "BucketListItem") == 2);
    CHECK_STATUS(strata_delete_where(ctx, "PersonalTrip", NULL));
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "CEG");
    CHECK_STATUS(strata_rollback(ctx));

    /* {"predicate", "bindings", "includeSubentities"}. */
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "{\"predicate\": \"$0.endDate < now\", \"bindings\": {\"now\": \"" NOW "\"}}"));
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "CDG");
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "{\"predicate\": true, \"includeSubentities\": false}"));
    expect_trips(ctx, "{\"entity\": \"Trip\"}", "D");
    expect_trips(other, "{\"entity\": \"Trip\"}", "CDEG");
    CHECK_STATUS(strata_save(ctx));
    expect_trips(other, "{\"entity\": \"Trip\"}", "D");
    CHECK(count_of(other, "LivingAccommodation") == 1);   /* E's went with E */
    CHECK(count_of(other, "BucketListItem") == 2);

    /* The tree form with bindings, on a subentity; then everything. */
    CHECK_STATUS(strata_delete_where(ctx, "PersonalTrip", "{\"predicate\": {\"==\": [{\"key\": \"reason\"}, {\"var\": \"r\"}]},"
                                                         " \"bindings\": {\"r\": \"family\"}}"));
    CHECK(strata_has_changes(ctx) == 0);   /* D is a wellness trip */
    CHECK_STATUS(strata_delete_where(ctx, "Trip", NULL));
    CHECK(count_of(ctx, "Trip") == 0);
    CHECK_STATUS(strata_save(ctx));
    CHECK(count_of(other, "Trip") == 0);
    CHECK(count_of(other, "BucketListItem") == 0);
    CHECK(count_of(other, "LivingAccommodation") == 0);

    strata_context_free(other);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* ---- prefetching 10,000 trips ------------------------------------------------- */

#define MANY 10000
#define BATCH 500

typedef struct { int statements; int freed; } trace_counter;

static void count_statement(const char *sql, void *userdata) {
    trace_counter *c = userdata;
    CHECK(sql != NULL && *sql != '\0');
    c->statements++;
}

static void free_counter(void *userdata) { ((trace_counter *)userdata)->freed++; }

/* Object `o` is trip number i of the 10,000, with its relationships inline. */
static void check_many_trip(json_object *o, int i, strata_context *ctx, int compare_with_get) {
    char name[32];
    snprintf(name, sizeof name, "Trip %05d", i);
    CHECK_STR_EQ(check_str_member(o, "name"), name);
    const char *id = check_str_member(o, "_id");
    CHECK(id != NULL);
    static const char *const entities[] = {"PersonalTrip", "BusinessTrip", "Trip"};
    CHECK_STR_EQ(check_str_member(o, "_entity"), entities[i % 3]);

    json_object *p = check_member(o, "livingAccommodation");
    CHECK(p != NULL && json_object_is_type(p, json_type_object));
    char text[48];
    snprintf(text, sizeof text, "Place %05d", i);
    CHECK_STR_EQ(check_str_member(p, "placeName"), text);
    snprintf(text, sizeof text, "%d Main Street", i);
    CHECK_STR_EQ(check_str_member(p, "address"), text);
    CHECK_STR_EQ(check_str_member(p, "_entity"), "LivingAccommodation");
    CHECK(has_prefix(check_str_member(p, "_id"), "LivingAccommodation/"));
    CHECK_STR_EQ(check_str_member(p, "trip"), id);

    json_object *list = check_member(o, "bucketList");
    CHECK(list != NULL && json_object_is_type(list, json_type_array) && json_object_array_length(list) == 2);
    for (int k = 0; k < 2; k++) {
        json_object *item = json_object_array_get_idx(list, (size_t)k);
        CHECK(json_object_is_type(item, json_type_object));
        snprintf(text, sizeof text, "Item %05d-%c", i, 'a' + k);
        CHECK_STR_EQ(check_str_member(item, "title"), text);
        CHECK_STR_EQ(check_str_member(item, "_entity"), "BucketListItem");
        CHECK(has_prefix(check_str_member(item, "_id"), "BucketListItem/"));
        CHECK_STR_EQ(check_str_member(item, "trip"), id);
        CHECK(json_object_get_boolean(check_member(item, "isInPlan")) == (k == 0 && i % 2 == 0));
        snprintf(text, sizeof text, "d%d", i);
        CHECK_STR_EQ(check_str_member(item, "details"), k == 1 ? text : "");
    }

    if (compare_with_get) {
        /* The inline objects are what strata_get returns for them. */
        json_object *related[3] = {p, json_object_array_get_idx(list, 0), json_object_array_get_idx(list, 1)};
        for (int k = 0; k < 3; k++) {
            char *got = NULL;
            CHECK_STATUS(strata_get(ctx, check_str_member(related[k], "_id"), &got));
            json_object *g = parse_json_or_die(got);
            strata_free(got);
            if (!json_object_equal(g, related[k]))
                fprintf(stderr, "inline %s\n  get    %s\n", json_object_to_json_string(related[k]), json_object_to_json_string(g));
            CHECK(json_object_equal(g, related[k]));
            json_object_put(g);
        }
    }
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_prefetch_many(void) {
    char *path = test_store_path("queries_prefetch.store");
    strata_container *db = open_store(TRIPS_SCHEMA, path);
    strata_context *ctx = check_context(db);
    static const char *const entities[] = {"PersonalTrip", "BusinessTrip", "Trip"};
    for (int start = 0; start < MANY; start += BATCH) {
        sbuf b = {0};
        sb_add(&b, "[");
        for (int i = start; i < start + BATCH; i++) {
            sb_add(&b, "%s{\"_entity\": \"%s\", \"name\": \"Trip %05d\", \"destination\": \"City %d\","
                       " \"startDate\": %d, \"endDate\": %d,"
                       " \"livingAccommodation\": {\"placeName\": \"Place %05d\", \"address\": \"%d Main Street\"},"
                       " \"bucketList\": [{\"title\": \"Item %05d-a\", \"isInPlan\": %s},"
                       " {\"title\": \"Item %05d-b\", \"details\": \"d%d\"}]}",
                   i == start ? "" : ",", entities[i % 3], i, i % 97, 1790000000 + i * 3600, 1790000000 + i * 3600 + 259200,
                   i, i, i, i % 2 == 0 ? "true" : "false", i, i);
        }
        sb_add(&b, "]");
        char *ids = NULL;
        CHECK_STATUS(strata_insert_many(ctx, "Trip", b.s, &ids));
        json_object *arr = parse_json_or_die(ids);
        CHECK(json_object_array_length(arr) == BATCH);
        json_object_put(arr);
        strata_free(ids);
        free(b.s);
    }
    CHECK_STATUS(strata_save(ctx));
    CHECK(count_of(ctx, "Trip") == MANY);
    CHECK(count_of(ctx, "BucketListItem") == 2 * MANY);
    CHECK(count_of(ctx, "LivingAccommodation") == MANY);

    /* Three statements: the trips, the accommodations, the bucket list items; the last two
       run (and are reported) once per trip. */
    trace_counter counter = {0, 0};
    CHECK_STATUS(strata_set_trace(db, count_statement, &counter, free_counter));
    const char *d = "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\", \"bucketList\"]}";
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, d, &text));
    /* On PostgreSQL once for all trips (the trips' own query as a subquery). */
    int runs = check_postgres() ? 1 : MANY;
    if (counter.statements != 1 + 2 * runs)
        fprintf(stderr, "the prefetching fetch ran %d SQL statements, not 1 + 2 x %d\n", counter.statements, runs);
    CHECK(counter.statements == 1 + 2 * runs);
    json_object *arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_array_length(arr) == MANY);
    for (int i = 0; i < MANY; i++)
        check_many_trip(json_object_array_get_idx(arr, (size_t)i), i, ctx, i % 1111 == 0 || i == MANY - 1);
    json_object_put(arr);

    /* With a predicate, sort and limit: three statements, the last two run for those 5 trips only. */
    counter.statements = 0;
    d = "{\"entity\": \"Trip\", \"predicate\": \"$0.name.hasPrefix(p)\", \"bindings\": {\"p\": \"Trip 0999\"},"
        " \"sortBy\": [{\"key\": \"startDate\", \"order\": \"reverse\"}], \"fetchLimit\": 5,"
        " \"relationshipKeyPathsForPrefetching\": [\"bucketList\", \"livingAccommodation\"]}";
    CHECK_STATUS(strata_fetch(ctx, d, &text));
    CHECK(counter.statements == 1 + 2 * (check_postgres() ? 1 : 5));
    arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_array_length(arr) == 5);
    for (int i = 0; i < 5; i++) check_many_trip(json_object_array_get_idx(arr, (size_t)i), 9999 - i, ctx, 1);
    json_object_put(arr);

    /* One prefetched relationship (run per trip): the other is read as identifiers by the trips query. */
    counter.statements = 0;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Trip\", \"fetchLimit\": 50, \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\"]}", &text));
    CHECK(counter.statements == 1 + (check_postgres() ? 1 : 50));
    arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_array_length(arr) == 50);
    for (int i = 0; i < 50; i++) {
        json_object *o = json_object_array_get_idx(arr, (size_t)i);
        CHECK(json_object_is_type(check_member(o, "livingAccommodation"), json_type_object));
        json_object *list = check_member(o, "bucketList");
        CHECK(json_object_array_length(list) == 2);
        CHECK(json_object_is_type(json_object_array_get_idx(list, 0), json_type_string));
        CHECK(has_prefix(json_object_get_string(json_object_array_get_idx(list, 0)), "BucketListItem/"));
    }
    json_object_put(arr);

    /* Nested: 5 trips, each bucket-list item with its trip (one statement per item) and the
       accommodation with its trip's bucket list (one per accommodation): 1 + 5 x (1 + 2 + 1 + 1);
       on PostgreSQL one per relationship at each depth: 1 + 5. */
    counter.statements = 0;
    d = "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\"}], \"fetchLimit\": 5,"
        " \"relationshipKeyPathsForPrefetching\": [\"bucketList.trip\", \"livingAccommodation.trip.bucketList\"]}";
    CHECK_STATUS(strata_fetch(ctx, d, &text));
    int nested = check_postgres() ? 1 + 5 : 1 + 5 * 6;
    if (counter.statements != nested)
        fprintf(stderr, "the nested prefetching fetch ran %d SQL statements, not %d\n", counter.statements, nested);
    CHECK(counter.statements == nested);
    arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_array_length(arr) == 5);
    for (int i = 0; i < 5; i++) {
        json_object *o = json_object_array_get_idx(arr, (size_t)i);
        const char *id = check_str_member(o, "_id");
        json_object *list = check_member(o, "bucketList");
        CHECK(json_object_array_length(list) == 2);
        for (size_t k = 0; k < 2; k++) {
            json_object *owner = check_member(json_object_array_get_idx(list, k), "trip");
            CHECK_STR_EQ(check_str_member(owner, "_id"), id);
            /* The trip's own relationships, not prefetched at that depth, are identifiers. */
            CHECK(has_prefix(check_str_member(owner, "livingAccommodation"), "LivingAccommodation/"));
        }
        json_object *stayTrip = check_member(check_member(o, "livingAccommodation"), "trip");
        CHECK_STR_EQ(check_str_member(stayTrip, "_id"), id);
        json_object *again = check_member(stayTrip, "bucketList");
        CHECK(json_object_array_length(again) == 2);
        CHECK(json_object_is_type(json_object_array_get_idx(again, 0), json_type_object));
    }
    json_object_put(arr);

    /* Without prefetching the relationships are identifier strings. */
    counter.statements = 0;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Trip\", \"fetchLimit\": 3}", &text));
    CHECK(counter.statements <= 3);
    arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_array_length(arr) == 3);
    CHECK(has_prefix(check_str_member(json_object_array_get_idx(arr, 0), "livingAccommodation"), "LivingAccommodation/"));
    json_object_put(arr);

    /* Removing the hook frees its userdata once and stops the counting. */
    CHECK(counter.freed == 0);
    CHECK_STATUS(strata_set_trace(db, NULL, NULL, NULL));
    CHECK(counter.freed == 1);
    counter.statements = 0;
    CHECK(count_of(ctx, "Trip") == MANY);
    CHECK(counter.statements == 0);
    /* Replacing a hook frees the previous one's userdata. */
    trace_counter second = {0, 0};
    CHECK_STATUS(strata_set_trace(db, count_statement, &counter, free_counter));
    CHECK_STATUS(strata_set_trace(db, count_statement, &second, free_counter));
    CHECK(counter.freed == 2 && second.freed == 0);
    CHECK(count_of(ctx, "Trip") == MANY);
    CHECK(counter.statements == 0 && second.statements == 1);
    CHECK_STATUS(strata_set_trace(db, NULL, NULL, NULL));
    CHECK(second.freed == 1);

    /* Paging through 10,000 trips covers each exactly once. */
    const char *order = "\"sortBy\": [{\"key\": \"destination\"}, {\"key\": \"name\", \"order\": \"reverse\"}]";
    char *all_d = check_strf("{\"entity\": \"Trip\", %s}", order);
    json_object *all = fetch_ids(ctx, all_d);
    free(all_d);
    CHECK(json_object_array_length(all) == MANY);
    size_t next = 0;
    for (int offset = 0; offset < MANY + 997; offset += 997) {
        char *pd = check_strf("{\"entity\": \"Trip\", %s, \"fetchLimit\": 997, \"fetchOffset\": %d}", order, offset);
        json_object *page = fetch_ids(ctx, pd);
        int64_t expected = MANY - offset < 0 ? 0 : (MANY - offset < 997 ? MANY - offset : 997);
        CHECK((int64_t)json_object_array_length(page) == expected);
        CHECK(fetch_count(ctx, pd) == expected);
        for (size_t i = 0; i < json_object_array_length(page); i++)
            CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(page, i)),
                         json_object_get_string(json_object_array_get_idx(all, next++)));
        json_object_put(page);
        free(pd);
    }
    CHECK(next == MANY);
    /* ... and the full list has no duplicate. */
    {
        const char **ids = malloc(sizeof *ids * MANY);
        if (!ids) exit(1);
        for (size_t i = 0; i < MANY; i++) ids[i] = json_object_get_string(json_object_array_get_idx(all, i));
        qsort(ids, MANY, sizeof *ids, compare_strings);
        for (size_t i = 1; i < MANY; i++) CHECK(strcmp(ids[i - 1], ids[i]) != 0);
        free(ids);
    }
    json_object_put(all);

    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* ---- full-text search --------------------------------------------------------- */

/* The titles a descriptor fetches, joined with '|'. */
static char *titles_of(strata_context *ctx, const char *descriptor) {
    json_object *arr = fetch(ctx, descriptor);
    sbuf b = {0};
    sb_add(&b, "%s", "");
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        sb_add(&b, "%s%s", i ? "|" : "", check_str_member(json_object_array_get_idx(arr, i), "title"));
    json_object_put(arr);
    return b.s;
}

static void expect_titles(strata_context *ctx, const char *descriptor, const char *expected) {
    char *got = titles_of(ctx, descriptor);
    if (strcmp(got, expected) != 0) {
        fprintf(stderr, "%s\n  got      %s\n  expected %s\n", descriptor, got, expected);
        failures++;
    }
    free(got);
}

/* A searchable attribute through strata_fetch and strata_explain: accents and case folded,
   prefixes, CJK, relevance order, pending changes, and the full-text index in the plan. */
static void test_search(void) {
    char *path = test_store_path("queries_search.store");
    strata_container *db = open_store(FIXTURES "queries_search.json", path);
    strata_context *ctx = check_context(db);
    static const char *items[] = {
        "{\"title\": \"Z\\u00fcrich Old Town\", \"rank\": 1}", "{\"title\": \"ZURICH zurich airport\", \"rank\": 2}",
        "{\"title\": \"Caf\\u00e9 cr\\u00e8me\", \"rank\": 3}", "{\"title\": \"\\u6771\\u4eac\\u30bf\\u30ef\\u30fc\", \"rank\": 4}",
        "{\"title\": \"Travel light\", \"rank\": 5}", "{\"title\": \"travelling\", \"rank\": 6}",
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        char *id = NULL;
        CHECK_STATUS(strata_insert(ctx, "Item", items[i], &id));
        strata_free(id);
    }
    CHECK_STATUS(strata_save(ctx));
    const char *by_rank = "\"sortBy\": [{\"key\": \"rank\"}]";
    char *d = check_strf("{\"entity\": \"Item\", \"predicate\": \"$0.title.matches(q)\", \"bindings\": {\"q\": \"zurich\"}, %s}", by_rank);
    expect_titles(ctx, d, "Z\xc3\xbcrich Old Town|ZURICH zurich airport");
    free(d);
    d = check_strf("{\"entity\": \"Item\", \"predicate\": {\"matches\": [{\"key\": \"title\"}, \"TRAV* light\"]}, %s}", by_rank);
    expect_titles(ctx, d, "Travel light");
    free(d);
    d = check_strf("{\"entity\": \"Item\", \"predicate\": {\"matches\": [{\"key\": \"title\"}, \"\\u4eac creme\"]}, %s}", by_rank);
    expect_titles(ctx, d, "");
    free(d);
    expect_titles(ctx, "{\"entity\": \"Item\", \"predicate\": {\"matches\": [{\"key\": \"title\"}, \"\\u4eac\"]}}", "\xe6\x9d\xb1\xe4\xba\xac\xe3\x82\xbf\xe3\x83\xaf\xe3\x83\xbc");
    expect_titles(ctx, "{\"entity\": \"Item\", \"predicate\": {\"matches\": [{\"key\": \"title\"}, \"!!!\"]}}", "");
    /* Relevance: "ZURICH zurich airport" (2 of 3) before "Zürich Old Town" (1 of 3). */
    expect_titles(ctx, "{\"entity\": \"Item\", \"predicate\": \"$0.title.matches(\\\"zur*\\\")\", \"sortBy\": [{\"key\": \"$relevance\"}]}",
                  "ZURICH zurich airport|Z\xc3\xbcrich Old Town");
    /* Pending changes are searched. */
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Item", "{\"title\": \"zurich zoo\", \"rank\": 0}", &id));
    strata_free(id);
    d = check_strf("{\"entity\": \"Item\", \"predicate\": \"$0.title.matches(\\\"zurich\\\")\", %s}", by_rank);
    expect_titles(ctx, d, "zurich zoo|Z\xc3\xbcrich Old Town|ZURICH zurich airport");
    CHECK_STATUS(strata_save(ctx));
    expect_titles(ctx, d, "zurich zoo|Z\xc3\xbcrich Old Town|ZURICH zurich airport");
    /* strata_explain names the full-text index: SQLite's plan reads the FTS5 table; PostgreSQL's SQL
       tests the tokens the GIN index holds. */
    char *text = NULL;
    CHECK_STATUS(strata_explain(ctx, d, &text));
    json_object *e = parse_json_or_die(text);
    strata_free(text);
    const char *sql = check_str_member(e, "sql");
    if (check_postgres()) {
        EXPECT(strstr(sql, "strata_tokens(") != NULL);
    } else {
        EXPECT(strstr(sql, "\"Item.search(title)\" MATCH") != NULL);
        json_object *plan = check_member(e, "queryPlan");
        int found = 0;
        for (size_t i = 0; i < json_object_array_length(plan); i++) {
            const char *detail = check_str_member(json_object_array_get_idx(plan, i), "detail");
            if (detail && strstr(detail, "Item.search(title) VIRTUAL TABLE")) found = 1;
        }
        EXPECT(found);
    }
    json_object_put(e);
    free(d);
    /* matches on an attribute that is not searchable is refused by name. */
    char *out = NULL;
    CHECK_ERROR_CODE(strata_fetch(ctx, "{\"entity\": \"Item\", \"predicate\": {\"matches\": [{\"key\": \"rank\"}, \"1\"]}}", &out),
                     STRATA_ERR_INVALID);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* ---- main ---------------------------------------------------------------------- */

/* ---- sectionBy ------------------------------------------------------------ */

/* `{"_id":…,"_entity":…,"name":…}` of trip `i` (propertiesToFetch ["name"]). */
static void sb_trip(sbuf *b, int i, const char *entity, const char *name) {
    sb_add(b, "{\"_id\":\"%s\",\"_entity\":\"%s\",\"name\":\"%s\"}", trip[i], entity, name);
}

/* Trips sectioned by PersonalTrip's reason (nil for the others: the section ""), as one
 * fetch, a prepared fetch and a cursor whose batches of 3 split the "" section; the JSON
 * text exactly. Identifiers refuse sections. */
static void test_sections(strata_context *ctx) {
    const char *d = "{\"entity\": \"Trip\", \"sectionBy\": \"reason\", \"sortBy\": [{\"key\": \"name\"}],"
                    " \"propertiesToFetch\": [\"name\"], \"includeRelationshipIdentifiers\": false}";
    sbuf empty = {0}, family = {0}, reunion = {0}, wellness = {0};
    sb_trip(&empty, 2, "Trip", "Road Trip");
    sb_add(&empty, ",");
    sb_trip(&empty, 4, "BusinessTrip", "Sales Summit");
    sb_add(&empty, ",");
    sb_trip(&empty, 6, "Trip", "Ski Weekend");
    size_t first3 = empty.n;
    sb_add(&empty, ",");
    sb_trip(&empty, 1, "BusinessTrip", "WWDC");
    sb_trip(&family, 0, "PersonalTrip", "Family Visit");
    sb_trip(&reunion, 5, "PersonalTrip", "Reunion");
    sb_trip(&wellness, 3, "PersonalTrip", "Wellness Retreat");

    sbuf all = {0};
    sb_add(&all, "[{\"section\":\"\",\"objects\":[%s]},{\"section\":\"family\",\"objects\":[%s]},"
                 "{\"section\":\"reunion\",\"objects\":[%s]},{\"section\":\"wellness\",\"objects\":[%s]}]",
           empty.s, family.s, reunion.s, wellness.s);
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, d, &text));
    if (strcmp(text, all.s) != 0) fprintf(stderr, "sections:\n  got  %s\n  want %s\n", text, all.s);
    EXPECT(strcmp(text, all.s) == 0);
    strata_free(text);
    queries_run++;

    strata_prepared *prepared = NULL;
    CHECK_STATUS(strata_prepare(ctx, d, &prepared));
    CHECK_STATUS(strata_prepared_fetch(prepared, NULL, &text));
    EXPECT(strcmp(text, all.s) == 0);
    strata_free(text);
    EXPECT(strata_prepared_fetch_identifiers(prepared, NULL, &text) == STRATA_ERR_INVALID && text == NULL);
    EXPECT(strstr(strata_last_error(), "/sectionBy") != NULL);
    strata_prepared_free(prepared);
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, d, &n));
    EXPECT(n == N_TRIPS);
    EXPECT(strata_fetch_identifiers(ctx, d, &text) == STRATA_ERR_INVALID && text == NULL);
    EXPECT(strstr(strata_last_error(), "/sectionBy") != NULL);
    EXPECT(strata_fetch(ctx, "{\"entity\": \"Trip\", \"sectionBy\": \"photo\"}", &text) == STRATA_ERR_INVALID && text == NULL);
    EXPECT(strstr(strata_last_error(), "/sectionBy") != NULL);

    /* Batches of 3: the "" section continues into the second batch under its key again. */
    sbuf batch[4] = {{0}, {0}, {0}, {0}};
    sb_add(&batch[0], "[{\"section\":\"\",\"objects\":[%.*s]}]", (int)first3, empty.s);
    sb_add(&batch[1], "[{\"section\":\"\",\"objects\":[%s]},{\"section\":\"family\",\"objects\":[%s]},{\"section\":\"reunion\",\"objects\":[%s]}]",
           empty.s + first3 + 1, family.s, reunion.s);
    sb_add(&batch[2], "[{\"section\":\"wellness\",\"objects\":[%s]}]", wellness.s);
    sb_add(&batch[3], "[]");
    strata_cursor *cursor = NULL;
    CHECK_STATUS(strata_fetch_cursor(ctx, d, &cursor));
    for (int k = 0; k < 4; k++) {
        CHECK_STATUS(strata_cursor_next(cursor, 3, &text));
        if (strcmp(text, batch[k].s) != 0) fprintf(stderr, "batch %d:\n  got  %s\n  want %s\n", k, text, batch[k].s);
        EXPECT(strcmp(text, batch[k].s) == 0);
        strata_free(text);
        free(batch[k].s);
    }
    strata_cursor_free(cursor);
    free(empty.s); free(family.s); free(reunion.s); free(wellness.s); free(all.s);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* keep stdout and stderr in order */
    char *path = test_store_path("queries_trips.store");
    strata_container *db = open_store(TRIPS_SCHEMA, path);
    strata_context *ctx = check_context(db);
    seed_trips(ctx);

    test_session_examples(ctx);
    printf("ok   SwiftData session examples\n");
    test_segmented_control(ctx);
    printf("ok   segmented control\n");
    test_widget(ctx);
    printf("ok   widget\n");
    test_properties_to_fetch(ctx);
    printf("ok   propertiesToFetch\n");
    test_subentities(ctx);
    printf("ok   includeSubentities\n");
    test_sorting(ctx);
    printf("ok   sortBy\n");
    test_paging(ctx);
    printf("ok   paging\n");
    test_sections(ctx);
    printf("ok   sectionBy: fetch, prepared fetch, cursor batches\n");
    test_expressions(ctx);
    printf("ok   key paths, count, isEmpty, in, between, nil, options\n");
    test_more_fetching(db, ctx);
    printf("ok   prefetching a to-one, propertiesToFetch, statement counts, pending changes\n");
    CHECK(strata_has_changes(ctx) == 0);   /* reads changed nothing */
    test_pending_changes(db);
    printf("ok   includePendingChanges\n");
    strata_context_free(ctx);
    strata_close(db);
    free(path);
    forget_trips();

    test_values();
    printf("ok   value types\n");
    test_delete_where();
    printf("ok   strata_delete_where\n");
    forget_trips();
    test_prefetch_many();
    printf("ok   prefetching 10000 trips\n");
    test_search();
    printf("ok   full-text search\n");

    printf("test_queries: %d queries run, %d failed expectations\n", queries_run, failures);
    return failures ? 1 : 0;
}
