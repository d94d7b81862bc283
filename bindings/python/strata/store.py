"""Opening stores: configurations, containers, observers, migration hooks."""

import ctypes
import json
import os
import threading

from . import _json
from ._library import (FREE_CALLBACK, STAGE_CALLBACK, TEXT_CALLBACK, lib, release_userdata, retain,
                       retained, take_string)
from ._owner import Owner
from .context import Context
from .errors import CallbackError, StrataError, check, error_for

_c_void_p = ctypes.c_void_p
_byref = ctypes.byref

_STRATA_ERR_CALLBACK = 9

# ---------------------------------------------------------------------------
# The C callbacks: one ctypes thunk each, alive as long as the module. The
# userdata is a registry key (see _library.retain) naming the Python callable,
# which the registry keeps alive until the library lets the userdata go.
# ---------------------------------------------------------------------------


def _on_change(changes_json, key):
    callback = retained(key)
    if callback is not None:
        callback(json.loads(changes_json.decode("utf-8")))


def _on_progress(event_json, key):
    callback = retained(key)
    if callback is not None:
        callback(json.loads(event_json.decode("utf-8")))


def _on_trace(sql, key):
    callback = retained(key)
    if callback is not None:
        callback(sql.decode("utf-8"))


class _StageHooks:
    """A stage's Python hooks and the exception one raised (chained to the
    CallbackError the open raises)."""

    def __init__(self, stage, will_migrate, did_migrate):
        self.stage = stage
        self.will_migrate = will_migrate
        self.did_migrate = did_migrate
        self.raised = None

    def run(self, hook, ctx_handle):
        context = Context(ctx_handle, None, borrowed=True)
        try:
            hook(context)
            return 0
        except StrataError as error:
            self.raised = error
            return error.status or _STRATA_ERR_CALLBACK
        except BaseException as error:   # noqa: B036 - any failure aborts the stage
            self.raised = error
            return _STRATA_ERR_CALLBACK
        finally:
            context._handle = None   # lent for the call only


def _on_will_migrate(ctx_handle, key):
    hooks = retained(key)
    return 0 if hooks is None or hooks.will_migrate is None else hooks.run(hooks.will_migrate, ctx_handle)


def _on_did_migrate(ctx_handle, key):
    hooks = retained(key)
    return 0 if hooks is None or hooks.did_migrate is None else hooks.run(hooks.did_migrate, ctx_handle)


_change_thunk = TEXT_CALLBACK(_on_change)
_progress_thunk = TEXT_CALLBACK(_on_progress)
_trace_thunk = TEXT_CALLBACK(_on_trace)
_will_thunk = STAGE_CALLBACK(_on_will_migrate)
_did_thunk = STAGE_CALLBACK(_on_did_migrate)
_NO_STAGE = ctypes.cast(None, STAGE_CALLBACK)
_NO_TEXT = ctypes.cast(None, TEXT_CALLBACK)


def _document(value, what):
    """A schema or plan: a dict, JSON text, or a path (os.PathLike) to a JSON file."""
    if isinstance(value, os.PathLike):
        with open(value, encoding="utf-8") as handle:
            return json.load(handle)
    if isinstance(value, str):
        return json.loads(value)
    if isinstance(value, dict):
        return value
    raise TypeError(f"{what} is a dict, JSON text or a path (pathlib.Path), not a {type(value).__name__}")


class _Config:
    """A strata_config with its Python hooks and progress callback; freed by close()."""

    def __init__(self, schema, plan, hooks, progress, options):
        if (schema is None) == (plan is None):
            raise TypeError("give exactly one of schema= and plan=")
        document = _json.options(options)
        if schema is not None:
            document["schema"] = _document(schema, "schema")
        else:
            document["migrationPlan"] = _document(plan, "plan")
        handle = _c_void_p()
        check(lib.strata_config_new(_json.dumps(document), _byref(handle)))
        self.handle = handle.value
        self.stage_hooks = []
        try:
            for stage, pair in (hooks or {}).items():
                self._set_hooks(stage, pair)
            if progress is not None:
                check(lib.strata_config_set_progress(self.handle, _progress_thunk, retain(progress),
                                                     release_userdata))
        except BaseException:
            self.close()
            raise

    def _set_hooks(self, stage, pair):
        if callable(pair):
            will_migrate, did_migrate = pair, None
        elif isinstance(pair, dict):
            unknown = set(pair) - {"will_migrate", "did_migrate"}
            if unknown:
                raise TypeError(f"hooks of stage {stage!r}: unknown key {sorted(unknown)[0]!r} "
                                "(will_migrate, did_migrate)")
            will_migrate, did_migrate = pair.get("will_migrate"), pair.get("did_migrate")
        else:
            will_migrate, did_migrate = pair
        hooks = _StageHooks(stage, will_migrate, did_migrate)
        self.stage_hooks.append(hooks)
        check(lib.strata_config_set_stage_hooks(
            self.handle, stage.encode("utf-8"),
            _will_thunk if will_migrate is not None else _NO_STAGE,
            _did_thunk if did_migrate is not None else _NO_STAGE,
            retain(hooks), release_userdata))

    def raise_from_hooks(self, error):
        """Raises ``error``, chained to the exception a Python stage hook raised."""
        for hooks in self.stage_hooks:
            if hooks.raised is not None and isinstance(error, CallbackError):
                raise error from hooks.raised
        raise error

    def close(self):
        handle, self.handle = self.handle, None
        if handle is not None:
            lib.strata_config_free(handle)


def _path(path):
    """A store's path or URI as bytes for the library (None stays None)."""
    if path is None:
        return None
    path = os.fspath(path)
    return path if isinstance(path, bytes) else path.encode("utf-8")


def open(path=None, schema=None, *, plan=None, hooks=None, progress=None, **options):  # noqa: A001
    """Opens (creating or migrating) the store at ``path`` and returns a
    :class:`Store`, a context manager that closes it at exit.

    ``path``      a file name, a PostgreSQL URI ("postgresql://…"), or None
                  with ``in_memory=True``.
    ``schema``    one schema version (docs/JSON.md §2): a dict, JSON text or
                  a pathlib.Path of a JSON file; or
    ``plan``      a migration plan ({"schemas": […], "stages": […]}), likewise.
    ``hooks``     {"stageName": {"will_migrate": f, "did_migrate": g}} (or a
                  (f, g) pair, or f alone for willMigrate): Python callables
                  run as the custom stage's hooks, each given a Context lent
                  for the call; an exception aborts the stage and the open
                  raises CallbackError from it.
    ``progress``  called with each migration progress event (a dict); it must
                  not call Strata.
    ``**options`` the configuration's options, snake_case or camelCase:
                  read_only, in_memory, history, author,
                  external_storage_threshold, automatic_migration,
                  postgres_schema (an unknown one raises InvalidError).
    """
    config = _Config(schema, plan, hooks, progress, options)
    try:
        handle = _c_void_p()
        status = lib.strata_open(_path(path), config.handle, _byref(handle))
        if status != 0:
            config.raise_from_hooks(error_for(status))
        return Store(handle.value)
    finally:
        config.close()


def check_store(path, schema=None, *, plan=None, **options):
    """What opening the store at ``path`` would do, without writing:
    {"status": "compatible" | "migratable" | "incompatible", "storedVersion",
    "currentVersion", "stages", "reason"} (docs/JSON.md §7)."""
    config = _Config(schema, plan, None, None, options)
    try:
        out = _c_void_p()
        check(lib.strata_check_store(_path(path), config.handle, _byref(out)))
        return _json.loads(take_string(out))
    finally:
        config.close()


def infer_migration(from_schema, to_schema):
    """The lightweight migration from one schema to another, as opening would
    infer it: {"steps": [{"kind", "entity", …, "sql": […]}, …]}."""
    out = _c_void_p()
    check(lib.strata_infer_migration(_json.dumps(_document(from_schema, "from_schema")),
                                     _json.dumps(_document(to_schema, "to_schema")), _byref(out)))
    return _json.loads(take_string(out))


class Observer:
    """A registered change observer (``strata_observe``). The callable stays
    alive while the observer is registered; :meth:`cancel` (or closing the
    store) lets it go. A context manager: cancelled at exit."""

    def __init__(self, handle, store):
        self._handle = handle
        self._store = store

    @property
    def active(self):
        """Whether the observer is still registered (not cancelled, store open)."""
        return self._handle is not None and self._store._handle is not None

    def cancel(self):
        """Stops the observer and lets its callable go. Idempotent; safe inside
        its own callback."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._store._observers.discard(self)
            lib.strata_observer_remove(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()


class Store(Owner):
    """An open store (SwiftData's ModelContainer, ``strata_container``), made
    by :func:`strata.open`. Shared by threads. A context manager: closed at
    exit (contexts still open keep the store open until they are freed; its
    observers end at the close)."""

    def __init__(self, handle):
        self._handle = handle
        self._observers = set()
        self._lock = threading.Lock()

    _what = "store"

    def close(self):
        """Closes the container; observers end here and their callables are
        let go. Idempotent."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            self._release(handle)

    def _release(self, handle):
        lib.strata_close(handle)
        for observer in list(self._observers):
            observer.cancel()   # after the close: only frees the handle

    @property
    def closed(self):
        return self._handle is None

    @property
    def schema(self):
        """The container's current schema as a dict (as declared)."""
        out = _c_void_p()
        check(lib.strata_container_schema(self._h(), _byref(out)))
        return _json.loads(take_string(out))

    def context(self, author=None, name=None):
        """A new :class:`Context` (a context manager); ``author`` and ``name``
        are what history records with its saves."""
        out = _c_void_p()
        check(lib.strata_context_new(self._h(), _byref(out)))
        context = Context(out.value, self)
        try:
            if author is not None:
                context.set_author(author)
            if name is not None:
                context.set_name(name)
        except BaseException:
            context.close()
            raise
        return context

    # -- history ------------------------------------------------------------

    def history(self, after=None, entities=None, limit=None, reverse=False, **options):
        """History transactions as dicts (docs/JSON.md §8), oldest first:
        ``after`` a token (those after it; HistoryExpiredError when the
        history no longer covers them), ``entities`` the entity names whose
        changes count (a name covers its subentities), ``limit`` at most so
        many, ``reverse`` newest first. Other keyword options (predicate,
        bindings, sort_by) go into the descriptor."""
        terms, bindings = [], dict(options.pop("bindings", None) or {})
        if options.get("predicate") is not None:
            terms.append(f"({options.pop('predicate')})")
        if after is not None:
            terms.append("$0.token > afterToken")
            bindings["afterToken"] = after
        if entities is not None:
            terms.append("$0.changes.contains { entityNames.contains($0.changedPersistentIdentifier.entityName) }")
            bindings["entityNames"] = list(entities)
        descriptor = _json.options(options)
        if terms:
            descriptor["predicate"] = " && ".join(terms)
        if bindings:
            descriptor["bindings"] = bindings
        if limit is not None:
            descriptor["fetchLimit"] = limit
        if reverse:
            descriptor["sortBy"] = [{"key": "transactionIdentifier", "order": "reverse"}]
        with self.context() as context:
            return context.history(descriptor)

    def latest_token(self):
        """The token of the latest history transaction, or None when there is none."""
        latest = self.history(limit=1, reverse=True)
        return latest[0]["token"] if latest else None

    def observe(self, callback, entities=None):
        """Calls ``callback(changes)`` (a dict: {"token", "inserted", "updated",
        "deleted"}, or {"token", "expired": True}) after each save of this
        container that changed one of ``entities`` (all when None), on the
        saving thread, and for other writers' saves on :meth:`poll_changes`.
        Returns an :class:`Observer`. An exception the callback raises is
        reported through sys.unraisablehook and does not undo the save."""
        if not callable(callback):
            raise TypeError("callback is not callable")
        filter_json = None if entities is None else _json.dumps({"entityNames": list(entities)})
        out = _c_void_p()
        # The registry keeps `callback` alive until the library frees its userdata:
        # on Observer.cancel(), on close(), or at once if strata_observe fails.
        check(lib.strata_observe(self._h(), filter_json, _change_thunk, retain(callback),
                                 release_userdata, _byref(out)))
        observer = Observer(out.value, self)
        self._observers.add(observer)
        return observer

    def poll_changes(self):
        """Delivers to this store's observers what other writers recorded since
        the last delivered transaction."""
        check(lib.strata_poll_changes(self._h()))

    def trace(self, callback):
        """Calls ``callback(sql)`` with every SQL statement the container's
        connections run (None removes it). It may run on any thread and must
        not call Strata."""
        if callback is None:
            check(lib.strata_set_trace(self._h(), _NO_TEXT, None, ctypes.cast(None, FREE_CALLBACK)))
        else:
            check(lib.strata_set_trace(self._h(), _trace_thunk, retain(callback), release_userdata))
