"""JSON in and out of the library: Python values to Strata's JSON text, and
fetch descriptors and options written the Python way (snake_case keywords)."""

import base64
import datetime
import decimal
import json
import re
import uuid


def _default(value):
    """Encodes the Python values JSON has no type for as Strata takes them
    (docs/JSON.md §3): dates as ISO-8601 UTC text, bytes as base64, decimals
    and UUIDs as text. A naive datetime is refused: its time zone is unknown."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"a naive datetime ({value.isoformat()}) has no time zone: "
                             "give one (datetime.timezone.utc) or ISO-8601 text")
        utc = value.astimezone(datetime.timezone.utc)
        text = utc.strftime("%Y-%m-%dT%H:%M:%S")
        if utc.microsecond:
            text += f".{utc.microsecond:06d}"
        return text + "Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"a {type(value).__name__} cannot be written as Strata JSON")


def dumps(value):
    """JSON text for the library, as UTF-8 bytes. A ``str`` is taken to be JSON
    text already and passed as it is."""
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, default=_default, ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def loads(text):
    """Parses JSON text the library returned (None stays None)."""
    return None if text is None else json.loads(text)


_SNAKE = re.compile(r"_([a-z0-9])")


def camel(key):
    """``fetch_limit`` → ``fetchLimit``; a key already camelCase is unchanged."""
    return _SNAKE.sub(lambda match: match.group(1).upper(), key)


def options(keywords):
    """Keyword arguments as JSON keys (snake_case to camelCase). The library
    refuses a key it does not know, naming it."""
    return {camel(key): value for key, value in keywords.items()}


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def descriptor(value, keywords=None):
    """A fetch or history descriptor from a dict, JSON text or an entity name
    (``"Trip"`` is ``{"entity": "Trip"}``), with keyword options merged in
    (``predicate=…, bindings=…, sort_by=…``). Returns bytes for the library,
    or None for "no descriptor"."""
    extra = options(keywords or {})
    if value is None:
        if not extra:
            return None
        return dumps(extra)
    if isinstance(value, str):
        if _IDENTIFIER.match(value):
            value = {"entity": value}
        elif not extra:
            return value.encode("utf-8")
        else:
            value = json.loads(value)
            if not isinstance(value, dict):
                raise TypeError("a descriptor is a JSON object")
    elif not isinstance(value, dict):
        raise TypeError(f"a descriptor is a dict, JSON text or an entity name, not a {type(value).__name__}")
    merged = dict(value)
    merged.update(extra)
    return dumps(merged)
