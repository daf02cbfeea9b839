"""Reading files and text that strangers wrote: bounded JSON, safe URLs, escaped Markdown.

Contract. :func:`read_json_file` reads at most :data:`MAX_FILE_BYTES` and accepts JSON
nested at most :data:`MAX_JSON_DEPTH` deep; anything else raises
:class:`UntrustedInputError` with a one-line reason (never a ``RecursionError`` or a
traceback). :func:`http_url` accepts only ``http://`` and ``https://`` URLs with a host.
:func:`markdown_text` makes any text inert in Markdown and in the HTML that Markdown
renderers pass through: it stays one line, and no character of it opens a tag, a link,
an emphasis, a code span or a table cell.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from typing import Any

from conductor_gym.errors import ConfigurationError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_JSON_DEPTH",
    "UntrustedInputError",
    "http_url",
    "json_depth",
    "markdown_text",
    "read_json_file",
]

MAX_FILE_BYTES = 64 * 2**20
"""Largest submission file read (64 MiB: a full ``offline`` run of the 8-step MoA
baseline with 3 repeats is about 16 MiB)."""

MAX_JSON_DEPTH = 32
"""Deepest JSON nesting accepted (a genuine submission nests about 6 deep)."""


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


def read_json_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_FILE_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """The JSON value in ``path`` (limits in the module docstring)."""
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
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UntrustedInputError(f"not UTF-8 text: {exc}") from None
    except RecursionError:
        raise _too_deep(max_depth) from None
    except json.JSONDecodeError as exc:
        raise UntrustedInputError(f"not JSON: {exc}") from None
    check_depth(value, max_depth)
    return value


def check_depth(value: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`UntrustedInputError` when ``value`` nests deeper than ``max_depth``."""
    if json_depth(value) > max_depth:
        raise _too_deep(max_depth)


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
