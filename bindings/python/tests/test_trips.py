"""The SampleTrips story through the Python binding (unittest, no other dependency).

A version-1 store of trips (two entered twice), fetched with #Predicate text
and bindings, read through a cursor; migrated to version 4 with the demo's
plan (examples/trips/plan.json) in its declarative form, the custom stages
de-duplicating with "deduplicate" operations (trips.c --json-ops), or with
Python hooks; business and personal trips; a prepared fetch; history since a
token; observers (their callables kept alive while registered, let go after);
errors raised as the right exception with their path; and the package
installed with pip into a fresh virtual environment.

Runs on SQLite files by default; with STRATA_TEST_STORE=postgres (ctest's
postgres_python_trips, under scripts/postgres-test.sh) every store is a new
schema of the database at STRATA_TEST_POSTGRES.

    STRATA_LIBRARY=build/libstrata.so python3 bindings/python/tests/test_trips.py
"""

import copy
import gc
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import weakref

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent                                   # bindings/python
SOURCE_DIR = pathlib.Path(os.environ.get("STRATA_SOURCE_DIR", HERE.parents[2]))
sys.path.insert(0, str(PACKAGE_ROOT))

import strata  # noqa: E402
from strata import _library  # noqa: E402

TRIPS = SOURCE_DIR / "examples" / "trips"
PLAN = json.loads((TRIPS / "plan.json").read_text(encoding="utf-8"))
SCHEMA_V1 = PLAN["schemas"][0]

# Version 1 holds these trips; "Paris Getaway" and "Tokyo Spring" were
# entered twice, each copy holding part of the bucket list (as trips.c).
V1_TRIPS = [
    ("Paris Getaway", "Paris", "2026-04-10", "2026-04-17", ("Hôtel du Louvre", "Place André Malraux"),
     ["Eiffel Tower at night", "Musée d'Orsay"]),
    ("Tokyo Spring", "Tokyo", "2026-03-28", "2026-04-06", None, ["Cherry blossoms in Ueno"]),
    ("Iceland Ring Road", "Reykjavík", "2026-08-01", "2026-08-14", ("Camper van", "Route 1"),
     ["Jökulsárlón", "Blue Lagoon"]),
    ("Paris Getaway", "Paris", "2026-04-10", "2026-04-17", None, ["Seine cruise"]),
    ("Tokyo Spring", "Tokyo", "2026-03-28", "2026-04-06", ("Ryokan Sawanoya", "Yanaka 2-3-11"),
     ["Tsukiji breakfast"]),
    ("Lisbon Long Weekend", "Lisbon", "2026-10-09", "2026-10-12", None, []),
]

V4_TRIPS = [
    {"_entity": "BusinessTrip", "name": "WWDC26", "destination": "Cupertino",
     "startDate": "2026-06-08T00:00:00Z", "endDate": "2026-06-12T00:00:00Z", "perdiem": 120.5,
     "livingAccommodation": {"placeName": "Hotel Nia", "address": "200 Independence Dr"},
     "bucketList": [{"title": "Keynote", "hasReservation": True, "isInPlan": True}]},
    {"_entity": "BusinessTrip", "name": "Client Workshop", "destination": "Berlin",
     "startDate": "2026-11-30T00:00:00Z", "endDate": "2026-12-02T00:00:00Z", "perdiem": 95},
    {"_entity": "PersonalTrip", "name": "Family Visit", "destination": "Zürich",
     "startDate": "2026-12-20T00:00:00Z", "endDate": "2026-12-28T00:00:00Z", "reason": "family",
     "livingAccommodation": {"placeName": "Grandma's", "address": "Seefeldstrasse 12"},
     "bucketList": [{"title": "Christmas market", "isInPlan": True}]},
    {"_entity": "PersonalTrip", "name": "Yoga Retreat", "destination": "Ubud",
     "startDate": "2027-01-10T00:00:00Z", "endDate": "2027-01-20T00:00:00Z", "reason": "wellness"},
]


def plan_with_operations():
    """The demo's plan in its declarative form (trips.c plan_with_operations):
    each custom stage de-duplicates trips with a "deduplicate" operation."""
    plan = copy.deepcopy(PLAN)
    keys = {"migrateV1toV2": ["name"], "migrateV2toV3": ["name", "start_date", "end_date"]}
    for stage in plan["stages"]:
        if stage["name"] in keys:
            stage["willMigrate"] = [{"op": "deduplicate", "entity": "Trip", "by": keys[stage["name"]],
                                     "keep": "first", "mergeRelationships": True}]
    return plan


def on_postgres():
    store = os.environ.get("STRATA_TEST_STORE", "sqlite")
    if store not in ("sqlite", "postgres"):
        raise SystemExit(f"STRATA_TEST_STORE={store}: expected postgres or sqlite (or unset)")
    return store == "postgres"


class StoreTestCase(unittest.TestCase):
    """Gives each test new stores: files in a temporary folder, or new schemas
    of the PostgreSQL database of STRATA_TEST_POSTGRES."""

    counter = 0

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="strata-py-", dir=os.environ.get("STRATA_TEST_DIR"))
        self.addCleanup(shutil.rmtree, self.folder, True)

    def location(self, name):
        """(path, options) of a new, empty store."""
        StoreTestCase.counter += 1
        if on_postgres():
            uri = os.environ.get("STRATA_TEST_POSTGRES")
            if not uri:
                self.fail("STRATA_TEST_STORE=postgres, but STRATA_TEST_POSTGRES is not set: "
                          "run the test under scripts/postgres-test.sh")
            return uri, {"postgres_schema": f"py_{name}_{os.getpid()}_{StoreTestCase.counter}"}
        return os.path.join(self.folder, f"{name}-{StoreTestCase.counter}.store"), {}

    def create_v1_store(self):
        """A store at version 1 holding V1_TRIPS; returns (path, options)."""
        path, options = self.location("trips")
        with strata.open(path, SCHEMA_V1, **options) as store, store.context() as ctx:
            for name, destination, start, end, stay, items in V1_TRIPS:
                trip = {"name": name, "destination": destination,
                        "start_date": f"{start}T00:00:00Z", "end_date": f"{end}T00:00:00Z",
                        "bucketList": [{"title": title} for title in items]}
                if stay:
                    trip["livingAccommodation"] = {"placeName": stay[0], "address": stay[1]}
                self.assertRegex(ctx.insert("Trip", trip), r"^Trip/[1-9][0-9]*$")
            self.assertTrue(ctx.has_changes)
            ctx.save()
            self.assertFalse(ctx.has_changes)
        return path, options

    @staticmethod
    def counts(ctx):
        return tuple(ctx.count(entity) for entity in ("Trip", "BucketListItem", "LivingAccommodation"))


class TripsStoryTests(StoreTestCase):

    def test_version_1_fetch_cursor_and_errors(self):
        path, options = self.create_v1_store()
        with strata.open(path, SCHEMA_V1, **options) as store, store.context() as ctx:
            self.assertEqual(self.counts(ctx), (6, 7, 3))
            # #Predicate text with a binding, keyword options merged into the descriptor.
            paris = ctx.fetch("Trip", predicate="$0.destination == d", bindings={"d": "Paris"},
                              relationship_key_paths_for_prefetching=["livingAccommodation"])
            self.assertEqual([t["name"] for t in paris], ["Paris Getaway", "Paris Getaway"])
            self.assertEqual([t["livingAccommodation"] and t["livingAccommodation"]["placeName"] for t in paris],
                             ["Hôtel du Louvre", None])
            # The same descriptor as a dict and as JSON text.
            descriptor = {"entity": "Trip", "predicate": "$0.name.localizedStandardContains(q)",
                          "bindings": {"q": "ICE"}, "sortBy": [{"key": "start_date"}]}
            self.assertEqual([t["name"] for t in ctx.fetch(descriptor)], ["Iceland Ring Road"])
            self.assertEqual(ctx.count(json.dumps(descriptor)), 1)
            ids = ctx.identifiers("Trip", sort_by=[{"key": "start_date"}, {"key": "name"}])
            self.assertEqual(len(ids), 6)
            self.assertEqual(ctx.get(ids[0])["name"], "Tokyo Spring")
            self.assertIn("queryPlan", ctx.explain(descriptor))

            # A cursor: batches of 4 on one snapshot, then the objects one by one.
            with ctx.cursor({"entity": "Trip", "sortBy": [{"key": "name"}]}, batch=4) as cursor:
                batches = list(cursor)
            self.assertEqual([len(b) for b in batches], [4, 2])
            names = [t["name"] for t in ctx.cursor("Trip", batch=1, sort_by=[{"key": "name"}]).objects()]
            self.assertEqual(names, sorted(t[0] for t in V1_TRIPS))

            # Errors: the class of the status, with code, path, entity and the whole JSON.
            with self.assertRaises(strata.ValidationError) as caught:
                ctx.insert("Trip", {"name": "Bad", "destination": "X", "start_date": "yesterday", "end_date": "2026-01-01"})
            self.assertEqual((caught.exception.code, caught.exception.path, caught.exception.entity),
                             ("validation", "/start_date", "Trip"))
            self.assertEqual(caught.exception.json["status"], 6)
            with self.assertRaises(strata.InvalidError) as caught:
                ctx.fetch({"entity": "Trip", "predicate": {"==": [{"key": "nope"}, "x"]}})
            self.assertTrue(caught.exception.path.startswith("/predicate"), caught.exception.path)
            with self.assertRaises(strata.InvalidError) as caught:
                ctx.fetch('{"entity": "Trip",')
            self.assertEqual(caught.exception.reason, "malformed_json")
            with self.assertRaises(strata.NotFoundError) as caught:
                ctx.get("Trip/999")
            self.assertEqual(caught.exception.code, "not_found")
            with self.assertRaises(strata.InvalidError) as caught:
                ctx.fetch("Trip", predicate="$0.name == missing")
            self.assertIsInstance(caught.exception, strata.StrataError)
            self.assertFalse(ctx.has_changes, "a failed call leaves no pending change")
        with self.assertRaises(strata.InvalidError) as caught:
            strata.open(path, SCHEMA_V1, no_such_option=True, **options)
        self.assertEqual(caught.exception.path, "/noSuchOption")
        with self.assertRaises(strata.MisuseError):
            ctx.count("Trip")   # the context is closed

    def test_migration_with_the_demos_plan_then_version_4(self):
        path, options = self.create_v1_store()
        plan = plan_with_operations()
        check = strata.check_store(path, plan=plan, **options)
        self.assertEqual((check["status"], check["storedVersion"], check["currentVersion"]),
                         ("migratable", "1.0.0", "4.0.0"))
        self.assertEqual([s["name"] for s in check["stages"]], ["migrateV1toV2", "migrateV2toV3", "migrateV3toV4"])

        events = []
        with strata.open(path, plan=plan, progress=events.append, **options) as store:
            committed = [e["stage"] for e in events if e["step"] == "commit"]
            self.assertEqual(committed, ["migrateV1toV2", "migrateV2toV3", "migrateV3toV4"])
            self.assertEqual(store.schema["version"], "4.0.0")
            with store.context() as ctx:
                # The duplicates are gone, their bucket lists and stays moved to the kept trips.
                self.assertEqual(self.counts(ctx), (4, 7, 3))
                paris = ctx.fetch("Trip", predicate="$0.name == n", bindings={"n": "Paris Getaway"},
                                  relationship_key_paths_for_prefetching=["bucketList"])
                self.assertEqual(sorted(i["title"] for i in paris[0]["bucketList"]),
                                 ["Eiffel Tower at night", "Musée d'Orsay", "Seine cruise"])

                ids = ctx.insert_many("Trip", V4_TRIPS)
                self.assertEqual([i.split("/")[0] for i in ids],
                                 ["BusinessTrip", "BusinessTrip", "PersonalTrip", "PersonalTrip"])
                ctx.save()
                self.assertEqual(ctx.count("Trip"), 8)

                # The app's segments: #Predicate text with the search text bound.
                segment = ("$0 is PersonalTrip && (searchText.isEmpty ? true : "
                           "$0.name.localizedStandardContains(searchText) || "
                           "$0.destination.localizedStandardContains(searchText))")
                personal = ctx.fetch("Trip", predicate=segment, bindings={"searchText": ""},
                                     sort_by=[{"key": "startDate"}])
                self.assertEqual([(t["_entity"], t["name"]) for t in personal],
                                 [("PersonalTrip", "Family Visit"), ("PersonalTrip", "Yoga Retreat")])
                self.assertEqual(ctx.count("Trip", predicate=segment, bindings={"searchText": "zur"}), 1)

                # A unique violation (version 3's name+dates) with "_onConflict": "error".
                with self.assertRaises(strata.ConstraintError) as caught:
                    ctx.insert("Trip", dict(V4_TRIPS[1]), on_conflict="error")
                self.assertEqual(caught.exception.reason, "unique_violation")

                # The widget's query, prepared once and run as time passes.
                with ctx.prepare({"entity": "Trip", "predicate": "$0.endDate >= now",
                                  "sortBy": [{"key": "startDate"}], "fetchLimit": 1}) as widget:
                    nexts = [widget.fetch(now=now)[0]["name"] if widget.count(now=now) else None
                             for now in ("2026-11-22T00:00:00Z", "2026-12-05T00:00:00Z", "2027-02-01T00:00:00Z")]
                    self.assertEqual(nexts, ["Client Workshop", "Family Visit", None])
                    with self.assertRaises(strata.InvalidError) as caught:
                        widget.fetch(now="soon")
                    self.assertEqual(caught.exception.path, "/now")
        # Reopening at version 4 is compatible.
        self.assertEqual(strata.check_store(path, plan=plan, **options)["status"], "compatible")

    def test_migration_with_python_hooks(self):
        path, options = self.create_v1_store()
        seen = {}

        def dedupe(ctx):
            # Keep the first trip of each name; move the others' bucket lists,
            # and their stay when the kept trip has none, to it (as trips.c's hook).
            kept = {}
            for trip in ctx.fetch("Trip", relationship_key_paths_for_prefetching=["bucketList"]):
                first = kept.setdefault(trip["name"], trip)
                if first is trip:
                    continue
                for item in trip["bucketList"]:
                    ctx.update(item["_id"], {"trip": first["_id"]})
                if trip["livingAccommodation"] and not first["livingAccommodation"]:
                    ctx.update(trip["livingAccommodation"], {"trip": first["_id"]})
                    first["livingAccommodation"] = trip["livingAccommodation"]
                ctx.delete(trip["_id"])
            ctx.save()

        def after(ctx):
            seen["trips at version 2"] = ctx.count("Trip")

        def fail(ctx):
            raise RuntimeError("this stage refuses")

        # A hook that raises aborts the open; the store stays at version 1.
        with self.assertRaises(strata.CallbackError) as caught:
            strata.open(path, plan=PLAN, hooks={"migrateV1toV2": fail}, **options)
        self.assertEqual((caught.exception.stage, caught.exception.reason), ("migrateV1toV2", "hook_failed"))
        self.assertIsInstance(caught.exception.__cause__, RuntimeError)
        self.assertEqual(strata.check_store(path, plan=PLAN, **options)["storedVersion"], "1.0.0")

        # A plan whose custom stage has neither hook nor operation meets the duplicates.
        with self.assertRaises(strata.MigrationError) as caught:
            strata.open(path, plan=PLAN, **options)
        self.assertEqual(caught.exception.stage, "migrateV1toV2")

        hooks = {"migrateV1toV2": {"will_migrate": dedupe, "did_migrate": after}}
        with strata.open(path, plan=PLAN, hooks=hooks, **options) as store, store.context() as ctx:
            self.assertEqual(seen, {"trips at version 2": 4})
            self.assertEqual(self.counts(ctx), (4, 7, 3))
            stage_saves = store.history(predicate='$0.contextName == "migrateV1toV2"')
            self.assertEqual(len(stage_saves), 1)
        del hooks, dedupe, after
        gc.collect()
        self.assertEqual(_library.retained_count(), 0, "the hooks were let go with the container")

    def test_history_and_observers(self):
        path, options = self.create_v1_store()
        with strata.open(path, plan=plan_with_operations(), **options) as store:
            token = store.latest_token()
            self.assertRegex(token, r"^[0-9]+@[0-9a-f]+$")

            class Recorder:
                def __init__(self):
                    self.changes = []

                def __call__(self, changes):
                    self.changes.append(changes)

            recorder = Recorder()
            alive = weakref.ref(recorder)
            observer = store.observe(recorder, entities=["Trip", "LivingAccommodation"])
            del recorder
            gc.collect()
            self.assertIsNotNone(alive(), "the observer keeps its callable alive")

            with store.context(author="py-test", name="editor") as ctx:
                workshop = ctx.insert("Trip", V4_TRIPS[1])
                ctx.save()
                item = ctx.identifiers("BucketListItem", fetch_limit=1)[0]
                ctx.update(item, {"title": "renamed"})   # not a watched entity
                ctx.save()
                ctx.update(workshop, {"destination": "Munich"})
                ctx.save()
                ctx.delete(workshop)
                ctx.save()

            changes = alive().changes
            self.assertEqual(len(changes), 3, changes)
            self.assertEqual(changes[0]["inserted"], {"BusinessTrip": [workshop]})
            self.assertEqual(changes[1]["updated"], {"BusinessTrip": [{"id": workshop, "attributes": ["destination"]}]})
            self.assertIn(workshop, [d["id"] for d in changes[2]["deleted"]["BusinessTrip"]])

            since = store.history(after=token, entities=["Trip"])
            self.assertEqual([t["token"] for t in since], [c["token"] for c in changes])
            self.assertEqual({(t["author"], t["contextName"]) for t in since}, {("py-test", "editor")})
            self.assertEqual([[c["kind"] for c in t["changes"] if c["entity"] == "BusinessTrip"] for t in since],
                             [["insert"], ["update"], ["delete"]])
            self.assertEqual(len(store.history(after=token)), 4)

            # Another container's save reaches the observer on poll_changes().
            with strata.open(path, plan=plan_with_operations(), **options) as other, other.context() as ctx:
                ctx.insert("Trip", V4_TRIPS[3])
                ctx.save()
            store.poll_changes()
            self.assertEqual(list(changes[-1]["inserted"]), ["PersonalTrip"])

            observer.cancel()
            self.assertFalse(observer.active)
            gc.collect()
            self.assertIsNone(alive(), "cancel lets the callable go")

            # Pruned history: asking after an old token raises HistoryExpiredError with its path.
            latest = store.latest_token()
            with store.context() as ctx:
                ctx.delete_history(predicate="$0.token <= t", bindings={"t": latest})
            with self.assertRaises(strata.HistoryExpiredError) as caught:
                store.history(after=token)
            self.assertEqual((caught.exception.code, caught.exception.path),
                             ("history_token_expired", "/bindings/afterToken"))

            # An observer left registered is let go when the store closes.
            calls = []
            store.observe(lambda c: calls.append(c))
            gc.collect()
            with store.context() as ctx:
                ctx.insert("Trip", V4_TRIPS[2])
                ctx.save()
            self.assertEqual(len(calls), 1, "a lambda kept only by the observer still runs")
            self.assertEqual(_library.retained_count(), 1)
        self.assertEqual(_library.retained_count(), 0, "close lets every observer's callable go")

    def test_observer_across_threads_and_trace(self):
        path, options = self.location("threads")
        schema = {"version": "1.0.0", "entities": [{"name": "Note", "attributes": [{"name": "text", "type": "string"}]}]}
        statements = []
        with strata.open(path, schema, **options) as store:
            store.trace(statements.append)
            seen, threads = [], []
            store.observe(lambda c: seen.append(threading.get_ident()))

            def writer(n):
                with store.context() as ctx:
                    ctx.insert("Note", {"text": f"note {n}"})
                    ctx.save()
            for n in range(4):
                threads.append(threading.Thread(target=writer, args=(n,)))
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(sorted(seen), sorted(t.ident for t in threads), "one callback per save, on its thread")
            store.trace(None)
            self.assertTrue(any("INSERT" in s.upper() for s in statements))
            with store.context() as ctx:
                self.assertEqual(ctx.count("Note"), 4)
                self.assertEqual(ctx.delete_where("Note", predicate="$0.text == t", bindings={"t": "note 1"}), 1)
                self.assertEqual(ctx.update_where("Note", {"text": "same"}), 3)
                ctx.rollback()
                self.assertEqual(ctx.count("Note", predicate='$0.text == "same"'), 0)


class PackageTests(unittest.TestCase):

    def test_pip_installs_the_package_offline(self):
        """`pip install` of bindings/python into a new virtual environment, with
        no index and the setuptools and wheel of the interpreter running the
        test (--system-site-packages, --no-build-isolation)."""
        with tempfile.TemporaryDirectory(prefix="strata-pip-", dir=os.environ.get("STRATA_TEST_DIR")) as folder:
            source = pathlib.Path(folder) / "source"   # pip builds in the tree: keep the checkout clean
            shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                                                 "*.egg-info"))
            venv = pathlib.Path(folder) / "venv"
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
            python = venv / "bin" / "python"
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            env.pop("PYTHONPATH", None)
            installed = subprocess.run(
                [str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", str(source)],
                env=env, capture_output=True, text=True)
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)
            probe = subprocess.run(
                [str(python), "-c", "import strata, json; print(json.dumps([strata.__file__, strata.version()]))"],
                env=env, capture_output=True, text=True, cwd=folder)
            self.assertEqual(probe.returncode, 0, probe.stderr)
            where, version = json.loads(probe.stdout)
            self.assertTrue(pathlib.Path(where).resolve().is_relative_to(venv.resolve()), where)
            self.assertEqual(version, strata.version())


if __name__ == "__main__":
    unittest.main(verbosity=2)
