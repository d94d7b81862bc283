"""Strata for Python: SwiftData's model of persistence on SQLite and
PostgreSQL, through libstrata's C API (include/strata.h), in pure ctypes.

    import strata

    with strata.open("trips.store", schema=schema) as store:
        with store.context() as ctx:
            trip = ctx.insert("Trip", {"name": "Paris", ...})
            ctx.save()
            ctx.fetch("Trip", predicate="$0.name == n", bindings={"n": "Paris"})

Objects, descriptors, history and errors are the library's JSON as dicts
(docs/JSON.md); the guide is docs/python.md. Every string the library returns
is copied and freed with strata_free before a call returns.
"""

from ._library import lib as _lib
from .context import Context, Cursor, Prepared
from .errors import (BusyError, CallbackError, ConstraintError, CorruptError, HistoryExpiredError,
                     IncompatibleStoreError, InternalError, InvalidError, MigrationError, MisuseError,
                     NoMemoryError, NotFoundError, ReadOnlyError, SchemaError, StoreIOError, StrataError,
                     ValidationError)
from .store import Observer, Store, check_store, infer_migration, open  # noqa: A004

__all__ = [
    "open", "check_store", "infer_migration", "version", "library_path",
    "Store", "Context", "Cursor", "Prepared", "Observer",
    "StrataError", "MisuseError", "InvalidError", "SchemaError", "NotFoundError", "ConstraintError",
    "ValidationError", "IncompatibleStoreError", "MigrationError", "CallbackError", "BusyError",
    "ReadOnlyError", "StoreIOError", "CorruptError", "NoMemoryError", "InternalError",
    "HistoryExpiredError",
]


def version():
    """The version of the loaded libstrata ("0.1.0")."""
    return _lib.strata_version().decode("utf-8")


def library_path():
    """The file of the loaded libstrata."""
    return _lib._name
