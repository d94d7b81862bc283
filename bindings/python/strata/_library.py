"""Loading libstrata.so and declaring the C signatures of include/strata.h.

The library is found, in this order, through:

1. ``STRATA_LIBRARY``, the path of a libstrata.so (an error if it cannot be
   loaded: a path given on purpose is never silently replaced);
2. the system's loader, ``ctypes.util.find_library("strata")`` (a library
   installed with ``cmake --install`` into a directory the loader knows);
3. ``build/libstrata.so`` of the source tree, when the package is imported
   from ``bindings/python`` of a Strata checkout built with ``make build``.

Every function's argument and result types are declared, so ctypes converts
and checks them. Strings the library returns through out-parameters are
received as raw pointers (``c_void_p``) and handed to :func:`take_string`,
which copies them into Python text and frees them with ``strata_free``.
"""

import ctypes
import ctypes.util
import os
import pathlib
import threading

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_int64 = ctypes.c_int64
POINTER = ctypes.POINTER

#: ``void (*)(const char *json, void *userdata)``: change, progress and trace callbacks.
TEXT_CALLBACK = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)
#: ``strata_status (*)(strata_context *ctx, void *userdata)``: a migration stage hook.
STAGE_CALLBACK = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p)
#: ``void (*)(void *userdata)``: frees a callback's userdata.
FREE_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p)


def _source_tree_library():
    """build/libstrata.so of the checkout this package lies in, if any."""
    root = pathlib.Path(__file__).resolve().parents[3]
    candidate = root / "build" / "libstrata.so"
    if (root / "include" / "strata.h").is_file() and candidate.exists():
        return str(candidate)
    return None


def _load():
    explicit = os.environ.get("STRATA_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit)
        except OSError as error:
            raise ImportError(f"STRATA_LIBRARY={explicit!r} cannot be loaded: {error}") from error
    name = ctypes.util.find_library("strata")
    if name:
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    local = _source_tree_library()
    if local:
        return ctypes.CDLL(local)
    raise ImportError(
        "libstrata.so was not found: set STRATA_LIBRARY to its path, install it where the "
        "system's loader finds it (cmake --install build), or build it with `make build` "
        "in the Strata checkout this package is imported from")


lib = _load()

# Signatures: (name, result type, argument types).
_SIGNATURES = [
    ("strata_version", c_char_p, []),
    ("strata_errstr", c_char_p, [c_int]),
    ("strata_last_error", c_char_p, []),
    ("strata_free", None, [c_void_p]),
    ("strata_config_new", c_int, [c_char_p, POINTER(c_void_p)]),
    ("strata_config_free", None, [c_void_p]),
    ("strata_config_set_stage_hooks", c_int,
     [c_void_p, c_char_p, STAGE_CALLBACK, STAGE_CALLBACK, c_void_p, FREE_CALLBACK]),
    ("strata_config_set_progress", c_int, [c_void_p, TEXT_CALLBACK, c_void_p, FREE_CALLBACK]),
    ("strata_open", c_int, [c_char_p, c_void_p, POINTER(c_void_p)]),
    ("strata_close", None, [c_void_p]),
    ("strata_container_schema", c_int, [c_void_p, POINTER(c_void_p)]),
    ("strata_context_new", c_int, [c_void_p, POINTER(c_void_p)]),
    ("strata_context_free", None, [c_void_p]),
    ("strata_has_changes", c_int, [c_void_p]),
    ("strata_insert", c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    ("strata_insert_many", c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    ("strata_update", c_int, [c_void_p, c_char_p, c_char_p]),
    ("strata_delete", c_int, [c_void_p, c_char_p]),
    ("strata_get", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_fetch", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_fetch_count", c_int, [c_void_p, c_char_p, POINTER(c_int64)]),
    ("strata_fetch_identifiers", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_explain", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_delete_where_count", c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_int64)]),
    ("strata_update_where", c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_int64)]),
    ("strata_prepare", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_prepared_fetch", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_prepared_fetch_count", c_int, [c_void_p, c_char_p, POINTER(c_int64)]),
    ("strata_prepared_fetch_identifiers", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_prepared_free", None, [c_void_p]),
    ("strata_fetch_cursor", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_cursor_next", c_int, [c_void_p, c_int64, POINTER(c_void_p)]),
    ("strata_cursor_free", None, [c_void_p]),
    ("strata_save", c_int, [c_void_p]),
    ("strata_rollback", c_int, [c_void_p]),
    ("strata_set_trace", c_int, [c_void_p, TEXT_CALLBACK, c_void_p, FREE_CALLBACK]),
    ("strata_infer_migration", c_int, [c_char_p, c_char_p, POINTER(c_void_p)]),
    ("strata_check_store", c_int, [c_char_p, c_void_p, POINTER(c_void_p)]),
    ("strata_fetch_history", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_explain_history", c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    ("strata_delete_history", c_int, [c_void_p, c_char_p]),
    ("strata_context_set_author", c_int, [c_void_p, c_char_p]),
    ("strata_context_set_name", c_int, [c_void_p, c_char_p]),
    ("strata_observe", c_int,
     [c_void_p, c_char_p, TEXT_CALLBACK, c_void_p, FREE_CALLBACK, POINTER(c_void_p)]),
    ("strata_poll_changes", c_int, [c_void_p]),
    ("strata_observer_remove", None, [c_void_p]),
]

for _name, _restype, _argtypes in _SIGNATURES:
    _function = getattr(lib, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes


def take_string(pointer):
    """Copies a string the library returned (a ``c_void_p`` out-parameter) into
    ``str`` and frees it with ``strata_free``; ``None`` for a NULL pointer."""
    address = pointer.value if isinstance(pointer, c_void_p) else pointer
    if not address:
        return None
    try:
        return ctypes.string_at(address).decode("utf-8")
    finally:
        lib.strata_free(address)


# ---------------------------------------------------------------------------
# Callback userdata: the Python objects a registered callback needs, kept
# alive by this registry from the registration until the library calls the
# free function (observer removed, container closed, hooks replaced, or a
# failed registration). The userdata passed to C is the registry key.
# ---------------------------------------------------------------------------

_registry = {}
_registry_lock = threading.Lock()
_next_key = 1


def retain(value):
    """Keeps ``value`` alive until :data:`release_userdata` is called with the
    returned key; returns the key as a ``c_void_p`` for the userdata argument."""
    global _next_key
    with _registry_lock:
        key = _next_key
        _next_key += 1
        _registry[key] = value
    return c_void_p(key)


def retained(key):
    """The value registered under ``key`` (an int from C), or None."""
    with _registry_lock:
        return _registry.get(key)


def retained_count():
    """How many callback userdata the library still holds (for tests)."""
    with _registry_lock:
        return len(_registry)


def _release(key):
    with _registry_lock:
        _registry.pop(key, None)


#: The free function passed with every userdata (module-level: lives as long as the library).
release_userdata = FREE_CALLBACK(_release)
