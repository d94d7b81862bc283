"""Exceptions: one class per strata_status, carrying the library's error JSON.

Every failed call raises the subclass of :class:`StrataError` for its status,
built from ``strata_last_error()`` read on the same thread right after the
call. Decide on the class (or ``.code``) and ``.reason``, never on
``.message`` (English, may change).
"""

import json as _json

from ._library import lib


class StrataError(Exception):
    """A failed Strata call.

    Attributes (None when the error JSON does not have them):
      ``status``  the numeric strata_status;
      ``code``    the stable code ("invalid", "constraint", ...);
      ``message`` the library's English message;
      ``reason``  a finer stable reason ("unique_violation", "hook_failed", ...);
      ``path``    a JSON pointer into the failing call's input ("/bindings/lastToken");
      ``entity``, ``attribute``, ``stage``, ``hook_status``  as in docs/JSON.md §6;
      ``json``    the whole error object as a dict.
    """

    status = None

    def __init__(self, error):
        self.json = dict(error)
        self.status = error.get("status", self.status)
        self.code = error.get("code")
        self.message = error.get("message", "")
        self.reason = error.get("reason")
        self.path = error.get("path")
        self.entity = error.get("entity")
        self.attribute = error.get("attribute")
        self.stage = error.get("stage")
        self.hook_status = error.get("hookStatus")
        super().__init__(self.message)

    def __str__(self):
        where = f" (at {self.path})" if self.path else ""
        return f"{self.code}: {self.message}{where}"


class MisuseError(StrataError):
    """STRATA_ERR_MISUSE: a closed or stale handle, a missing argument."""
    status = 1


class InvalidError(StrataError):
    """STRATA_ERR_INVALID: malformed JSON, an unknown key, entity or attribute, a bad argument."""
    status = 2


class SchemaError(StrataError):
    """STRATA_ERR_SCHEMA: the schema is invalid."""
    status = 3


class NotFoundError(StrataError):
    """STRATA_ERR_NOT_FOUND: no object with that identifier."""
    status = 4


class ConstraintError(StrataError):
    """STRATA_ERR_CONSTRAINT: a unique constraint, a deny rule, a count."""
    status = 5


class ValidationError(StrataError):
    """STRATA_ERR_VALIDATION: a required value missing, a wrong type, a value not in an enum."""
    status = 6


class IncompatibleStoreError(StrataError):
    """STRATA_ERR_INCOMPATIBLE_STORE: not a Strata store, or a store of another schema."""
    status = 7


class MigrationError(StrataError):
    """STRATA_ERR_MIGRATION: a migration failed (``.stage`` names the stage)."""
    status = 8


class CallbackError(StrataError):
    """STRATA_ERR_CALLBACK: a migration stage hook failed (``.stage``, ``.hook_status``).

    When the hook was a Python callable that raised, the exception it raised
    is this one's ``__cause__``."""
    status = 9


class BusyError(StrataError):
    """STRATA_ERR_BUSY: the database stayed locked too long."""
    status = 10


class ReadOnlyError(StrataError):
    """STRATA_ERR_READONLY: a write to a store opened read-only."""
    status = 11


class StoreIOError(StrataError):
    """STRATA_ERR_IO: a file system error, or a PostgreSQL server that cannot be reached."""
    status = 12


class CorruptError(StrataError):
    """STRATA_ERR_CORRUPT: the store is damaged."""
    status = 13


class NoMemoryError(StrataError):
    """STRATA_ERR_NOMEM: out of memory."""
    status = 14


class InternalError(StrataError):
    """STRATA_ERR_INTERNAL: a bug in Strata; please report it."""
    status = 15


class HistoryExpiredError(StrataError):
    """STRATA_ERR_HISTORY_EXPIRED: the history no longer covers everything after a token."""
    status = 16


_BY_STATUS = {cls.status: cls for cls in (
    MisuseError, InvalidError, SchemaError, NotFoundError, ConstraintError, ValidationError,
    IncompatibleStoreError, MigrationError, CallbackError, BusyError, ReadOnlyError,
    StoreIOError, CorruptError, NoMemoryError, InternalError, HistoryExpiredError)}


def error_for(status):
    """The exception for a failed call's status, from the thread's last error."""
    text = lib.strata_last_error()
    try:
        error = _json.loads(text.decode("utf-8")) if text else {}
    except ValueError:
        error = {}
    if not isinstance(error, dict) or error.get("status") != status:
        # The last error always belongs to the call just made; this only guards
        # against a library that says otherwise.
        error = {"status": status, "code": None,
                 "message": lib.strata_errstr(status).decode("utf-8")}
    return _BY_STATUS.get(status, StrataError)(error)


def check(status):
    """Raises the exception for a non-OK status."""
    if status != 0:
        raise error_for(status)


def closed_error(what):
    """The MisuseError of a Python handle used after it was closed."""
    return MisuseError({"status": 1, "code": "misuse", "message": f"the {what} is closed"})
