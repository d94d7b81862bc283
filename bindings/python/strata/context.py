"""Contexts (units of work), cursors and prepared fetches."""

import ctypes

from . import _json
from ._library import lib, take_string
from ._owner import Owner
from .errors import check

_c_void_p = ctypes.c_void_p
_c_int64 = ctypes.c_int64
_byref = ctypes.byref


def _text(value):
    return None if value is None else value.encode("utf-8")


class Context(Owner):
    """A unit of work (SwiftData's ModelContext, ``strata_context``): pending
    inserts, updates and deletes that :meth:`save` writes in one transaction.

    Made by :meth:`strata.Store.context`; a context manager (freed at exit,
    unsaved changes discarded). Use it from one thread at a time; give each
    thread its own. Objects are dicts as docs/JSON.md §4 shows them
    (``"_id"``, ``"_entity"``, attributes by name, dates as ISO-8601 text).
    """

    def __init__(self, handle, store, borrowed=False):
        self._handle = handle
        self._store = store          # keeps the Store (and its observers) alive
        self._borrowed = borrowed    # a stage hook's context: the library frees it

    # -- lifetime (close() discards unsaved changes) ---------------------------

    _what = "context"

    def _release(self, handle):
        if not self._borrowed:
            lib.strata_context_free(handle)

    # -- objects ------------------------------------------------------------

    def insert(self, entity, obj, on_conflict=None):
        """Inserts an object (and the related objects nested in it); returns its
        identifier ("Trip/4"). ``on_conflict``: "upsert" (default), "error", "ignore"."""
        if on_conflict is not None:
            if isinstance(obj, str):
                obj = _json.loads(obj)
            obj = dict(obj, _onConflict=on_conflict)
        out = _c_void_p()
        check(lib.strata_insert(self._h(), _text(entity), _json.dumps(obj), _byref(out)))
        return take_string(out)

    def insert_many(self, entity, objects):
        """Inserts every object of a list, all or nothing; returns their identifiers."""
        payload = objects if isinstance(objects, str) else list(objects)
        out = _c_void_p()
        check(lib.strata_insert_many(self._h(), _text(entity), _json.dumps(payload), _byref(out)))
        return _json.loads(take_string(out))

    def update(self, identifier, patch):
        """Changes attributes and relationships of an object (a pending change)."""
        check(lib.strata_update(self._h(), _text(identifier), _json.dumps(patch)))

    def delete(self, identifier):
        """Deletes an object (a pending change; delete rules apply at save)."""
        check(lib.strata_delete(self._h(), _text(identifier)))

    def get(self, identifier):
        """One object as a dict, with this context's pending changes applied."""
        out = _c_void_p()
        check(lib.strata_get(self._h(), _text(identifier), _byref(out)))
        return _json.loads(take_string(out))

    # -- fetching -----------------------------------------------------------

    def fetch(self, descriptor, **options):
        """The objects a fetch descriptor matches, as a list of dicts (a list of
        sections with ``section_by``, of dictionaries for an aggregation).

        ``descriptor`` is a dict, JSON text or an entity name; keyword options
        are merged into it, snake_case as camelCase:
        ``ctx.fetch("Trip", predicate="$0.name == n", bindings={"n": "Paris"},
        sort_by=[{"key": "startDate"}], fetch_limit=5)``."""
        out = _c_void_p()
        check(lib.strata_fetch(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return _json.loads(take_string(out))

    def count(self, descriptor, **options):
        """How many objects a descriptor matches (as :meth:`fetch` takes it)."""
        out = _c_int64()
        check(lib.strata_fetch_count(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return out.value

    def identifiers(self, descriptor, **options):
        """The identifiers of the objects a descriptor matches, in its order."""
        out = _c_void_p()
        check(lib.strata_fetch_identifiers(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return _json.loads(take_string(out))

    def explain(self, descriptor, **options):
        """How a fetch runs: {"sql", "parameterCount", "queryPlan"}."""
        out = _c_void_p()
        check(lib.strata_explain(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return _json.loads(take_string(out))

    def cursor(self, descriptor, batch=1000, **options):
        """A :class:`Cursor` over the objects a descriptor matches, read ``batch``
        objects at a time on one snapshot: ``for objects in ctx.cursor(d): …``."""
        if not isinstance(batch, int) or isinstance(batch, bool):
            raise TypeError("batch is an int")
        out = _c_void_p()
        check(lib.strata_fetch_cursor(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return Cursor(out.value, self, batch)

    def prepare(self, descriptor, **options):
        """A :class:`Prepared` fetch: the descriptor decoded, checked and compiled
        once, run many times with new values of its variables."""
        out = _c_void_p()
        check(lib.strata_prepare(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return Prepared(out.value, self)

    # -- set-based writes ---------------------------------------------------

    def delete_where(self, entity, predicate=None, bindings=None, **options):
        """Deletes every object of ``entity`` a predicate matches (pending);
        returns how many it matched. No predicate: every object of the entity."""
        request = None
        if predicate is not None or bindings is not None or options:
            request = dict(_json.options(options))
            if predicate is not None:
                request["predicate"] = predicate
            if bindings is not None:
                request["bindings"] = bindings
            request = _json.dumps(request)
        out = _c_int64()
        check(lib.strata_delete_where_count(self._h(), _text(entity), request, _byref(out)))
        return out.value

    def update_where(self, entity, values, predicate=None, bindings=None, **options):
        """Gives ``values`` (a dict, as :meth:`update` takes a patch) to every
        object of ``entity`` a predicate matches (pending); returns how many."""
        request = dict(_json.options(options), set=values)
        if predicate is not None:
            request["predicate"] = predicate
        if bindings is not None:
            request["bindings"] = bindings
        out = _c_int64()
        check(lib.strata_update_where(self._h(), _text(entity), _json.dumps(request), _byref(out)))
        return out.value

    # -- saving -------------------------------------------------------------

    def save(self):
        """Writes every pending change in one transaction."""
        check(lib.strata_save(self._h()))

    def rollback(self):
        """Discards every pending change."""
        check(lib.strata_rollback(self._h()))

    @property
    def has_changes(self):
        """Whether the context has unsaved changes."""
        return lib.strata_has_changes(self._h()) == 1

    # -- history ------------------------------------------------------------

    def history(self, descriptor=None, **options):
        """History transactions (docs/JSON.md §8) as a list of dicts; the
        descriptor is a dict or JSON text, keyword options merged in."""
        out = _c_void_p()
        check(lib.strata_fetch_history(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return _json.loads(take_string(out))

    def explain_history(self, descriptor=None, **options):
        """How :meth:`history` would run a descriptor."""
        out = _c_void_p()
        check(lib.strata_explain_history(self._h(), _json.descriptor(descriptor, options), _byref(out)))
        return _json.loads(take_string(out))

    def delete_history(self, descriptor=None, **options):
        """Deletes the history transactions a descriptor's predicate selects
        (``{}``, the default: all of them)."""
        text = _json.descriptor(descriptor, options)
        check(lib.strata_delete_history(self._h(), b"{}" if text is None else text))

    def set_author(self, author):
        """The author history records with this context's saves (None: none)."""
        check(lib.strata_context_set_author(self._h(), _text(author)))

    def set_name(self, name):
        """The context name history records with this context's saves (None: none)."""
        check(lib.strata_context_set_name(self._h(), _text(name)))


class Cursor(Owner):
    """The objects of one fetch, read in batches on one committed snapshot
    (``strata_fetch_cursor``). Iterating gives each batch, a list; iterating
    :meth:`objects` gives the objects one by one. The cursor's read ends (its
    snapshot and, on a store file, its connection's read transaction are let
    go) after the last batch, on :meth:`close`, or at the end of a ``with``."""

    def __init__(self, handle, context, batch):
        self._handle = handle
        self._context = context
        self.batch = batch

    def next_batch(self, batch=None):
        """The next objects (at most ``batch``, default the cursor's); [] at the end."""
        if self._handle is None:
            return []
        out = _c_void_p()
        check(lib.strata_cursor_next(self._handle, self.batch if batch is None else batch, _byref(out)))
        objects = _json.loads(take_string(out))
        if not objects:
            self.close()
        return objects

    def __iter__(self):
        return self

    def __next__(self):
        objects = self.next_batch()
        if not objects:
            raise StopIteration
        return objects

    def objects(self):
        """A generator of the cursor's objects, one by one."""
        for objects in self:
            yield from objects

    _what = "cursor"

    def _release(self, handle):
        lib.strata_cursor_free(handle)   # ends the cursor's read


class Prepared(Owner):
    """A prepared fetch (``strata_prepare``): run it with bindings as keyword
    arguments or a dict, ``prepared.fetch(now="2026-11-22T00:00:00Z")``."""

    def __init__(self, handle, context):
        self._handle = handle
        self._context = context

    _what = "prepared fetch"

    def _release(self, handle):
        lib.strata_prepared_free(handle)

    @staticmethod
    def _bindings(bindings, keywords):
        if bindings is None and not keywords:
            return None
        values = dict(bindings or {})
        values.update(keywords)
        return _json.dumps(values)

    def fetch(self, bindings=None, **values):
        """The objects matching with these values of the variables."""
        out = _c_void_p()
        check(lib.strata_prepared_fetch(self._h(), self._bindings(bindings, values), _byref(out)))
        return _json.loads(take_string(out))

    def count(self, bindings=None, **values):
        """How many objects match with these values."""
        out = _c_int64()
        check(lib.strata_prepared_fetch_count(self._h(), self._bindings(bindings, values), _byref(out)))
        return out.value

    def identifiers(self, bindings=None, **values):
        """The identifiers of the objects matching with these values."""
        out = _c_void_p()
        check(lib.strata_prepared_fetch_identifiers(self._h(), self._bindings(bindings, values), _byref(out)))
        return _json.loads(take_string(out))
