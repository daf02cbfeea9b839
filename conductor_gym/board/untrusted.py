"""Reading files and text that strangers wrote: bounded JSON, safe URLs, escaped Markdown.

Contract. :func:`read_json_file` reads at most :data:`MAX_FILE_BYTES` and accepts JSON
nested at most :data:`MAX_JSON_DEPTH` deep whose integers have at most
:data:`MAX_INT_DIGITS` digits (checked on the digits, before any is converted);
anything else raises :class:`UntrustedInputError` with a one-line reason (never a
``RecursionError``, Python's own integer-length ``ValueError`` or a traceback).
:func:`validate_strictly` validates parsed JSON against a pydantic model as JSON, in
strict mode: a float is never an integer (``5e7`` is not ``repeats``), a string never a
number. :func:`reading_error` words the errors a reader that is not bounded (the viewer,
``rescore``) lets out of ``json`` for a hostile file. :func:`http_url` accepts only
``http://`` and ``https://`` URLs with a host.
:func:`markdown_text` makes any text inert in Markdown and in the HTML that Markdown
renderers pass through: it stays one line, and no character of it opens a tag, a link,
an emphasis, a code span or a table cell.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from typing import TYPE_CHECKING, Any, TypeVar

from conductor_gym.errors import ConfigurationError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "MAX_CACHE_BYTES",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "UntrustedInputError",
    "check_depth",
    "http_url",
    "json_depth",
    "markdown_text",
    "parse_json",
    "read_json_file",
    "reading_error",
    "validate_strictly",
]

MAX_FILE_BYTES = 64 * 2**20
"""Largest submission file read (64 MiB: a full ``offline`` run of the 8-step MoA
baseline with 3 repeats is about 16 MiB)."""

MAX_JSON_DEPTH = 32
"""Deepest JSON nesting accepted (a genuine submission nests about 6 deep)."""

MAX_INT_DIGITS = 20
"""Most digits of a JSON integer accepted (``2**64`` has 20: every seed, count and token
total a run records fits; Python itself refuses to read more than 4,300)."""

MAX_CACHE_BYTES = 2**30
"""Largest response cache a submission may ship (1 GiB: a paper-sized real-pool run of
``offline-160`` with 3 repeats records about 2,400 calls, some tens of MiB)."""

_Model = TypeVar("_Model", bound="BaseModel")


class UntrustedInputError(ConfigurationError):
    """A file or value was refused; the message is one line saying why."""


def json_depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _too_deep(max_depth: int) -> UntrustedInputError:
    return UntrustedInputError(f"JSON nested deeper than {max_depth} levels")


def _bounded_int(max_digits: int) -> Any:
    def parse(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise UntrustedInputError(
                f"an integer of {len(digits.lstrip('-')):,} digits: at most {max_digits} are read"
            )
        return int(digits)

    return parse


def parse_json(
    text: str | bytes,
    *,
    max_depth: int = MAX_JSON_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
) -> Any:
    """The JSON value of ``text`` (UTF-8 when bytes), nested at most ``max_depth`` deep,
    with integers of at most ``max_int_digits`` digits; :class:`UntrustedInputError`
    with a one-line reason otherwise."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = json.loads(text, parse_int=_bounded_int(max_int_digits))
    except UnicodeDecodeError as exc:
        raise UntrustedInputError(f"not UTF-8 text: {exc}") from None
    except RecursionError:
        raise _too_deep(max_depth) from None
    except json.JSONDecodeError as exc:
        raise UntrustedInputError(f"not JSON: {exc}") from None
    check_depth(value, max_depth)
    return value


def read_json_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_FILE_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
) -> Any:
    """The JSON value in ``path`` (limits in the module docstring; :func:`parse_json`)."""
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            raise UntrustedInputError(
                f"the file is {size:,} bytes, over the {max_bytes:,}-byte limit"
            )
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UntrustedInputError(f"cannot read the file: {exc}") from None
    if len(data) > max_bytes:  # it grew after the stat
        raise UntrustedInputError(f"the file is over the {max_bytes:,}-byte limit")
    return parse_json(data, max_depth=max_depth, max_int_digits=max_int_digits)


def check_depth(value: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`UntrustedInputError` when ``value`` nests deeper than ``max_depth``."""
    if json_depth(value) > max_depth:
        raise _too_deep(max_depth)


def validate_strictly(model: type[_Model], value: Any) -> _Model:
    """``value`` (parsed JSON) validated against ``model`` as the JSON text it came from,
    in pydantic's strict mode: an ``int`` field takes only a JSON integer (never ``5e7``
    or ``5.0``), a number never a string, a ``date`` its ISO string.

    Raises:
        pydantic.ValidationError: ``value`` does not fit ``model``.
        UntrustedInputError: ``value`` is not JSON data (an object JSON cannot write).
    """
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise UntrustedInputError(f"not JSON data: {exc}") from None
    return model.model_validate_json(text, strict=True)


_INT_LIMIT = re.compile(r"Exceeds the limit \((\d+) digits\) for integer string conversion")


def reading_error(exc: BaseException) -> str | None:
    """A one-line reason for an error that reading a hostile JSON file with ``json``
    raises, or ``None`` for any other error: JSON nested too deep for the parser
    (``RecursionError``), an integer too long for Python to read (its ``ValueError``)."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deep to read"
    if isinstance(exc, ValueError) and (match := _INT_LIMIT.search(str(exc))):
        return f"an integer of more than {match[1]} digits: not read"
    return None


def http_url(url: str) -> bool:
    """Whether ``url`` is an ``http`` or ``https`` URL with a host and no whitespace or
    control characters."""
    if re.search(r"[\s\x00-\x1f\x7f]", url):
        return False
    parsed = urllib.parse.urlsplit(url)
    return parsed.scheme in ("http", "https") and bool(parsed.hostname)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_AUTOLINK = re.compile(r"(?i)(?<=:)//|(?<=www)\.")


def markdown_text(text: str) -> str:
    """``text`` as inert Markdown (module docstring): line breaks and control characters
    as spaces; Markdown's inline punctuation (``\\ ` * _ [ ] | ~``) backslash-escaped;
    ``& < >`` as entities; the slashes of ``://`` and the dot of ``www.`` escaped, so no
    autolink starts."""
    text = re.sub(r"[\x00-\x1f\x7f\u2028\u2029]", " ", text)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    text = "".join(_HTML.get(ch, ch) for ch in text)
    return _AUTOLINK.sub(lambda m: "".join("\\" + ch for ch in m.group(0)), text)
