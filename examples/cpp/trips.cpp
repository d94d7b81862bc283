// trips.cpp — SampleTrips in C++ through strata.hpp: a store of schema version 4,
// business and personal trips, the app's #Predicate queries, a cursor, a
// prepared fetch, an observer, history since a token, and errors as exceptions.
//
//   usage: trips_cpp STORE   (a file name, or a PostgreSQL URI; a new store)
//
// Every answer is Strata's JSON text, printed as it is: the fetches name the
// properties they want, so the output is the same on every run (ctest compares
// it with examples/cpp/trips.expected); tokens and times, which differ, are not
// printed.
#include <cstdio>
#include <string>

#include <strata.hpp>

#include "cpp_trips_schema.h"   // TRIPS_SCHEMA_V4_JSON, examples/trips/schema-v4.json compiled in

static const char *const TRIPS = R"j([
  {"_entity": "BusinessTrip", "name": "WWDC26", "destination": "Cupertino",
   "startDate": "2026-06-08T00:00:00Z", "endDate": "2026-06-12T00:00:00Z", "perdiem": 120.5,
   "livingAccommodation": {"placeName": "Hotel Nia", "address": "200 Independence Dr"},
   "bucketList": [{"title": "Keynote", "hasReservation": true, "isInPlan": true}]},
  {"_entity": "BusinessTrip", "name": "Client Workshop", "destination": "Berlin",
   "startDate": "2026-11-30T00:00:00Z", "endDate": "2026-12-02T00:00:00Z", "perdiem": 95},
  {"_entity": "PersonalTrip", "name": "Family Visit", "destination": "Zürich",
   "startDate": "2026-12-20T00:00:00Z", "endDate": "2026-12-28T00:00:00Z", "reason": "family",
   "bucketList": [{"title": "Christmas market", "isInPlan": true}]},
  {"_entity": "PersonalTrip", "name": "Yoga Retreat", "destination": "Ubud",
   "startDate": "2027-01-10T00:00:00Z", "endDate": "2027-01-20T00:00:00Z", "reason": "wellness"},
  {"name": "Lisbon Long Weekend", "destination": "Lisbon",
   "startDate": "2026-10-09T00:00:00Z", "endDate": "2026-10-12T00:00:00Z"}
])j";

// A change set without its token (which differs from store to store).
static std::string_view without_token(std::string_view changes) {
    size_t at = changes.find("\"inserted\"");
    return at == std::string_view::npos ? changes : changes.substr(at);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s STORE\n", argv[0]);
        return 2;
    }
    try {
        strata::Store store = strata::Store::open(argv[1], std::string("{\"schema\": ") + TRIPS_SCHEMA_V4_JSON + "}");
        strata::Context ctx = store.context();

        strata::String ids = ctx.insert_many("Trip", TRIPS);
        ctx.save();
        std::printf("1. inserted %s\n", ids.c_str());

        std::printf("2. personal trips, search \"\": %s\n",
                    ctx.fetch(R"j({"entity": "Trip", "propertiesToFetch": ["name"],
                                  "includeRelationshipIdentifiers": false,
                                  "predicate": "$0 is PersonalTrip && (q.isEmpty ? true : $0.name.localizedStandardContains(q))",
                                  "bindings": {"q": ""}, "sortBy": [{"key": "startDate"}]})j").c_str());
        std::printf("   trips to a destination containing \"zur\": %lld\n",
                    static_cast<long long>(ctx.count(R"j({"entity": "Trip",
                        "predicate": "$0.destination.localizedStandardContains(q)", "bindings": {"q": "zur"}})j")));

        strata::Cursor cursor = ctx.cursor(R"j({"entity": "Trip", "sortBy": [{"key": "name"}]})j");
        int batches = 0;
        strata::String batch;
        while (cursor.next(2, batch)) batches++;
        std::printf("3. a cursor read %d batches of at most 2 trips\n", batches);

        strata::Prepared widget = ctx.prepare(R"j({"entity": "Trip", "predicate": "$0.endDate >= now",
            "sortBy": [{"key": "startDate"}], "fetchLimit": 1, "propertiesToFetch": ["name"],
            "includeRelationshipIdentifiers": false})j");
        std::printf("4. the widget's next trip, prepared once:\n");
        for (const char *now : {"2026-11-22T00:00:00Z", "2026-12-05T00:00:00Z", "2027-02-01T00:00:00Z"})
            std::printf("   on %.10s: %s\n", now, widget.fetch(std::string("{\"now\": \"") + now + "\"}").c_str());

        strata::String latest = ctx.history(R"j({"sortBy": [{"key": "transactionIdentifier", "order": "reverse"}],
                                               "fetchLimit": 1})j");
        std::string token(latest.view().substr(11, latest.view().find('"', 11) - 11));   // [{"token":"…"
        {
            strata::Observer observer = store.observe(
                [](std::string_view changes) { std::printf("   [observer] %.*s\n", static_cast<int>(without_token(changes).size()),
                                                           without_token(changes).data()); },
                R"j({"entityNames": ["Trip"]})j");
            std::printf("5. Client Workshop moves to Munich, Yoga Retreat is cancelled:\n");
            strata::String workshop = ctx.identifiers(R"j({"entity": "Trip", "predicate": "$0.name == \"Client Workshop\""})j");
            std::string id(workshop.view().substr(2, workshop.view().size() - 4));   // ["BusinessTrip/2"]
            ctx.update(id, R"j({"destination": "Munich"})j");
            ctx.save();
            ctx.delete_where("Trip", R"j("$0.name == \"Yoga Retreat\"")j");
            ctx.save();
        }   // the observer is removed here
        strata::String since = ctx.history("{\"predicate\": \"$0.token > t\", \"bindings\": {\"t\": \"" + token + "\"}}");
        size_t transactions = 0;
        for (size_t at = since.view().find("\"token\""); at != std::string_view::npos;
             at = since.view().find("\"token\"", at + 1))
            transactions++;
        std::printf("6. history since the kept token: %zu transactions\n", transactions);

        try {
            ctx.insert("Trip", R"j({"name": "WWDC26", "destination": "Cupertino", "startDate": "2026-06-08T00:00:00Z",
                                   "endDate": "2026-06-12T00:00:00Z", "_onConflict": "error"})j");
        } catch (const strata::Error &error) {
            std::printf("7. a second WWDC26: strata::Error %s, reason %s, entity %s\n", error.code().c_str(),
                        error.reason().c_str(), error.entity().c_str());
        }
        try {
            ctx.insert("Trip", R"j({"name": "Bad", "destination": "X", "startDate": "soon", "endDate": "later"})j");
        } catch (const strata::Error &error) {
            std::printf("   a date that is not one: strata::Error %s at %s\n", error.code().c_str(), error.path().c_str());
        }
        std::printf("8. %lld trips remain\n", static_cast<long long>(ctx.count(R"j({"entity": "Trip"})j")));
    } catch (const strata::Error &error) {
        std::fprintf(stderr, "trips_cpp: %s\n%s\n", error.what(), error.json().c_str());
        return 1;
    }
    return 0;
}
