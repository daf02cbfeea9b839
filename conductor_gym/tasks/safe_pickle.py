"""Decoding of pickled *plain data*, refusing anything that could run code.

Contract: :func:`restricted_loads` unpickles ``data`` with an unpickler whose
``find_class`` and ``persistent_load`` always raise :class:`UnsafePickleError`, so no
global (class, function, module attribute such as ``os.system``) is ever looked up and no
``__reduce__`` payload can run. Only values the pickle opcodes build by themselves can
come out; the result is then checked to be a tree of ``None``, ``bool``, ``int``,
``float``, ``str``, ``bytes``, ``list``, ``tuple`` and ``dict`` (with ``str``/``int``
keys), and anything else (sets, bytearrays) raises :class:`UnsafePickleError` too.

:func:`decode_compressed_pickle` undoes LiveCodeBench's encoding of private tests,
``base64(zlib(pickle(value)))``, with a cap on the decompressed size, then unpickles with
:func:`restricted_loads`.
"""

from __future__ import annotations

import base64
import binascii
import io
import pickle
import zlib
from typing import Any, NoReturn

from conductor_gym.errors import ConfigurationError

__all__ = [
    "MAX_DECOMPRESSED_BYTES",
    "UnsafePickleError",
    "decode_compressed_pickle",
    "restricted_loads",
]

MAX_DECOMPRESSED_BYTES = 1 << 30
"""Largest decompressed payload :func:`decode_compressed_pickle` accepts (1 GiB)."""

_PLAIN_LEAVES = (type(None), bool, int, float, str, bytes)


class UnsafePickleError(ConfigurationError, pickle.UnpicklingError):
    """A pickle asked for something other than plain data (a class, a function, ...)."""


class _PlainDataUnpickler(pickle.Unpickler):
    """An unpickler that resolves no global and no persistent id."""

    def find_class(self, module: str, name: str) -> NoReturn:
        raise UnsafePickleError(
            f"refused to load {module}.{name}: only plain data (str, bytes, int, float, "
            "list, dict, tuple) may be unpickled, never a class or function"
        )

    def persistent_load(self, pid: Any) -> NoReturn:
        raise UnsafePickleError(f"refused persistent id {pid!r}: only plain data may be unpickled")


def _check_plain(value: Any) -> None:
    """Raise :class:`UnsafePickleError` unless ``value`` is plain data (see the module
    docstring), nested at most 200 levels deep and without cycles.

    Each container is checked once, however many times the pickle refers to it (its memo
    lets a few bytes build a value with exponentially many paths), so the check is linear
    in the number of distinct objects.
    """
    _PlainChecker().check(value, 0)


class _PlainChecker:
    """One walk of :func:`_check_plain`: ``done`` holds the ids of containers already
    found plain, ``path`` those being checked (a container met again on its own path is a
    cycle). Ids stay valid: every object walked is kept alive by the value itself."""

    def __init__(self) -> None:
        self.done: set[int] = set()
        self.path: set[int] = set()
        self.visits = 0

    def check(self, value: Any, depth: int) -> None:
        self.visits += 1
        if depth > 200:
            raise UnsafePickleError(
                "refused: the unpickled value is nested more than 200 levels deep"
            )
        if isinstance(value, _PLAIN_LEAVES):
            return
        if not isinstance(value, list | tuple | dict):
            raise UnsafePickleError(
                f"refused: unpickled a {type(value).__name__}, which is not plain data"
            )
        key = id(value)
        if key in self.done:
            return
        if key in self.path:
            raise UnsafePickleError(
                f"refused: the unpickled value contains a cycle (a {type(value).__name__} "
                "that contains itself)"
            )
        self.path.add(key)
        if isinstance(value, dict):
            for name, item in value.items():
                if not isinstance(name, str | int):
                    raise UnsafePickleError(f"refused: dict key of type {type(name).__name__}")
                self.check(item, depth + 1)
        else:
            for item in value:
                self.check(item, depth + 1)
        self.path.discard(key)
        self.done.add(key)


def restricted_loads(data: bytes) -> Any:
    """Unpickle ``data`` if it holds only plain data; else raise :class:`UnsafePickleError`.

    Malformed input raises ``pickle.UnpicklingError`` (or the parent of what ``pickle``
    raises for truncated data: ``EOFError``, ``ValueError``), never runs code.
    """
    value = _PlainDataUnpickler(io.BytesIO(data)).load()
    _check_plain(value)
    return value


def decode_compressed_pickle(text: str, max_bytes: int = MAX_DECOMPRESSED_BYTES) -> Any:
    """Decode ``base64(zlib(pickle(value)))`` to ``value`` with :func:`restricted_loads`.

    Raises ``ValueError`` when ``text`` is not base64, not zlib data or decompresses to
    more than ``max_bytes``; :class:`UnsafePickleError` when the pickle is not plain data.
    """
    try:
        compressed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError(f"not base64 text: {exc}") from exc
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(compressed, max_bytes)
    except zlib.error as exc:
        raise ValueError(f"not zlib data: {exc}") from exc
    if inflater.unconsumed_tail:
        raise ValueError(f"decompressed payload exceeds {max_bytes} bytes")
    return restricted_loads(raw)
