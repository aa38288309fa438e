"""The one name for an object's plain data: ``to_dict()`` (dicts, lists, numbers, strings: what JSON, a table row
or a DataFrame takes). ``PlainData`` is the base of the package's result and data classes. The names some of them
had first, ``as_dict()`` (most) and ``summary()`` (a ``Config``'s and a ``Plan``'s), still answer, made by
``earlier_name``: the same data, with a DeprecationWarning naming ``to_dict``. ``LiveObject`` is the base of those
that hold cuDNN objects of this process: pickling or copying one is refused, naming the plain form to use."""
from __future__ import annotations

import math
import warnings

from cudnn_backend.core.names import with_article

__all__ = ["PlainData", "LiveObject", "earlier_name", "json_ready"]


def json_ready(value):
    """Plain data as standard JSON takes it: NaN and infinity as None (null), tuples and sets as lists; anything
    else as it is (``json.dumps(json_ready(d), allow_nan=False)`` then never fails on a float, nor writes a NaN that
    another JSON reader refuses)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_ready(v) for v in value]
    return value


def earlier_name(name: str):
    """A method ``name`` that gives ``to_dict()``, warning that ``name`` is deprecated."""
    def earlier(self) -> dict:
        warnings.warn(f"{type(self).__name__}.{name}() is deprecated: use to_dict() (the same data)",
                      DeprecationWarning, stacklevel=2)
        return self.to_dict()

    earlier.__name__ = earlier.__qualname__ = name
    earlier.__doc__ = "``to_dict()`` under its earlier name (deprecated)."
    return earlier


class PlainData:
    """An object whose plain data is ``to_dict()``."""

    __slots__ = ()

    def to_dict(self) -> dict:
        raise NotImplementedError

    as_dict = earlier_name("as_dict")


class LiveObject:
    """An object holding live cuDNN objects of this process (``_LIVE``): pickle, copy and deepcopy raise a TypeError
    saying so (a copy in its own words, not pickle's) and what to use instead (``_INSTEAD``: plain data that makes
    another)."""

    __slots__ = ()
    _LIVE = "it holds live cuDNN descriptors"
    _INSTEAD = ""

    def _refusal(self, doing: str) -> TypeError:
        return TypeError(f"cannot {doing} {with_article(type(self).__name__)}: {self._LIVE}; {self._INSTEAD}")

    def __reduce__(self):
        raise self._refusal("pickle")

    def __copy__(self):
        raise self._refusal("copy")

    def __deepcopy__(self, memo):
        raise self._refusal("copy")
