"""What every Python object owning a handle of the library shares."""

from .errors import closed_error


class Owner:
    """An object that owns one handle of the library: :meth:`close` frees it
    (idempotent), the object is a context manager (closed at exit), and a
    collected object is closed. Subclasses name what they are (``_what``, for
    the error of a use after close) and free the handle in ``_release``."""

    _what = "handle"
    _handle = None

    def _h(self):
        if self._handle is None:
            raise closed_error(self._what)
        return self._handle

    def _release(self, handle):
        raise NotImplementedError

    def close(self):
        """Frees the handle. Idempotent."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._release(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
