"""Finding and reading a dataset's files: a local copy, the Hugging Face cache, or the Hub.

Contract. A dataset is described by a :class:`HubFiles`: its Hub repository, the file
names or glob patterns (relative to the repository root) that hold the rows wanted, and
whether it is gated. :func:`resolve_files` turns that into local paths, in this order of
preference:

1. ``data_files``: explicit local paths, used as they are;
2. ``data_dir``: a local directory laid out like the Hub repository; every pattern is
   globbed inside it;
3. the Hub through ``huggingface_hub``: exact names with ``hf_hub_download``, globs with
   ``snapshot_download(allow_patterns=...)``, both with ``cache_dir``, ``revision`` and
   ``token`` (the argument, else the ``HF_TOKEN`` environment variable). When
   ``HF_HUB_OFFLINE`` is set (read at call time, so setting it after import works) only
   the local cache is consulted (``local_files_only=True``); nothing is downloaded.
   Otherwise one TCP connection to the Hub endpoint (or to the proxy the environment
   names for it) is tried first, for at most :data:`HUB_PROBE_TIMEOUT_S`
   (:func:`hub_unreachable`): when it fails, the machine is taken to be offline and only
   the cache is consulted, so an offline machine gets the offline error at once instead
   of after ``huggingface_hub``'s retries (five, about 23 s).

:func:`read_rows` reads the resolved files with ``datasets.load_dataset`` and its packaged
``json``/``parquet``/``csv`` builders, which never touch the network. ``datasets`` and
``huggingface_hub`` are imported inside these functions only, so importing this module is
cheap; missing packages are reported as :class:`TaskSourceError` with the pip command.

Every failure (offline with nothing cached, a gated dataset without a token, an unknown
repository, a file missing, an unreadable file) is raised as :class:`TaskSourceError`
naming the dataset, the problem and the fix. :func:`cached_locally` answers, without any
network access, whether every pattern is present in the local cache.
"""

from __future__ import annotations

import fnmatch
import glob
import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from conductor_gym.tasks.errors import TaskSourceError

__all__ = [
    "FileFormat",
    "HubFiles",
    "cached_locally",
    "hf_offline",
    "hf_token",
    "hub_unreachable",
    "read_rows",
    "resolve_files",
]

FileFormat = Literal["json", "parquet", "csv"]
"""A ``datasets`` packaged builder name."""

HUB_PROBE_TIMEOUT_S = 3.0
"""Seconds :func:`hub_unreachable` waits for its one TCP connection."""

_GLOB_CHARS = frozenset("*?[")
_TRUE = frozenset({"1", "on", "yes", "true"})


@dataclass(frozen=True)
class HubFiles:
    """Where one split of a Hub dataset lives.

    Attributes:
        repo_id: The dataset repository (``"cais/mmlu"``).
        patterns: File names or glob patterns relative to the repository root, read in
            this order (each glob's matches sorted by name).
        fmt: How to read them (``"json"`` for JSON Lines, ``"parquet"``, ``"csv"``).
        gated: Whether the repository requires accepting terms and a token.
    """

    repo_id: str
    patterns: tuple[str, ...]
    fmt: FileFormat
    gated: bool = False

    @property
    def url(self) -> str:
        """The dataset's page on the Hub."""
        return f"https://huggingface.co/datasets/{self.repo_id}"


def hf_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` is set to a true value now."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def hub_unreachable(
    endpoint: str | None = None, *, timeout_s: float = HUB_PROBE_TIMEOUT_S
) -> str | None:
    """Why the Hub cannot be reached from here, or ``None`` when it can.

    One TCP connection to ``endpoint`` (default: ``huggingface_hub``'s, ``HF_ENDPOINT``)
    or, when the environment names a proxy for its scheme (``HTTPS_PROXY``, ...) and
    ``NO_PROXY`` does not exempt it, to that proxy; it is closed at once, no request is
    sent and nothing is retried. Not reachable: a refused connection, an unknown host or
    no answer within ``timeout_s``; the reason names the address and the error.
    """
    import socket
    import urllib.request
    from urllib.parse import urlsplit

    if endpoint is None:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    parts = urlsplit(endpoint)
    if not parts.hostname:
        return f"the endpoint {endpoint!r} names no host"
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    target = f"{host}:{port}"
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        via = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if via.hostname:
            host, port = via.hostname, via.port or (443 if via.scheme == "https" else 80)
            target = f"the proxy {host}:{port} for {target}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        return f"no connection to {target}: {exc.strerror or exc}"
    return None


def hf_token(token: str | None = None) -> str | None:
    """``token`` if given, else the ``HF_TOKEN`` environment variable (``None`` if unset)."""
    if token:
        return token
    return os.environ.get("HF_TOKEN") or None


def _is_glob(pattern: str) -> bool:
    return any(char in _GLOB_CHARS for char in pattern)


def _install_hint(package: str) -> str:
    return f"Install it with `pip install {package}`."


def _gated_hint(files: HubFiles) -> str:
    return (
        f"This dataset is gated: accept its terms at {files.url} while logged in, create a "
        "read token at https://huggingface.co/settings/tokens and set HF_TOKEN=<token> "
        "(or pass token=...)."
    )


def _local_hint() -> str:
    return "Or pass data_dir=<a local copy laid out like the Hub repository>."


def _offline_error(
    files: HubFiles, cache_dir: str | None, exc: BaseException, unreachable: str | None = None
) -> TaskSourceError:
    where = cache_dir or "the default Hugging Face cache (HF_HUB_CACHE / HF_HOME)"
    if hf_offline():
        problem = (
            f"HF_HUB_OFFLINE is set and {', '.join(files.patterns)} is not in {where} "
            f"({type(exc).__name__})."
        )
        fix = "Download it once with network access (unset HF_HUB_OFFLINE), then retry."
    elif unreachable:
        problem = (
            f"this machine looks offline ({unreachable}; nothing was downloaded) and "
            f"{', '.join(files.patterns)} is not in {where}."
        )
        fix = (
            "Check the network connection (and HF_ENDPOINT or the proxy settings), or set "
            "HF_HUB_OFFLINE=1 to use only the cache."
        )
    else:
        problem = (
            f"the Hugging Face Hub could not be reached and {', '.join(files.patterns)} is "
            f"not in {where} ({type(exc).__name__})."
        )
        fix = "Check the network connection, or set HF_HUB_OFFLINE=1 to use only the cache."
    if files.gated:
        fix += " " + _gated_hint(files)
    return TaskSourceError(files.repo_id, problem, f"{fix} {_local_hint()}")


def _translate_hub_error(
    exc: Exception,
    files: HubFiles,
    pattern: str,
    cache_dir: str | None,
    unreachable: str | None = None,
) -> TaskSourceError:
    """Map a ``huggingface_hub`` exception to a :class:`TaskSourceError` with a fix."""
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return TaskSourceError(
            files.repo_id, "access to this gated dataset was refused.", _gated_hint(files)
        )
    if isinstance(exc, errors.RepositoryNotFoundError):
        return TaskSourceError(
            files.repo_id,
            "the dataset repository was not found on the Hub (or it is private).",
            f"Check the id ({files.url}); if it is private or gated, set HF_TOKEN=<token> "
            "with access to it.",
        )
    if isinstance(exc, errors.RevisionNotFoundError):
        return TaskSourceError(
            files.repo_id,
            "the requested revision does not exist.",
            "Pass revision=None for the main branch, or an existing branch, tag or commit.",
        )
    if isinstance(exc, errors.LocalEntryNotFoundError):
        return _offline_error(files, cache_dir, exc, unreachable)
    if isinstance(exc, errors.EntryNotFoundError):
        return TaskSourceError(
            files.repo_id,
            f"the file {pattern!r} is not in the repository: its layout may have changed.",
            f"Look at {files.url}/tree/main and pass data_files=... or data_dir=....",
        )
    if isinstance(exc, errors.OfflineModeIsEnabled | ConnectionError | TimeoutError):
        return _offline_error(files, cache_dir, exc)
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return TaskSourceError(
                files.repo_id,
                f"the Hub refused access (HTTP {status}).",
                "Set HF_TOKEN=<a valid read token> (https://huggingface.co/settings/tokens). "
                + (_gated_hint(files) if files.gated else ""),
            )
        return TaskSourceError(
            files.repo_id,
            f"the Hub answered with an error ({exc}).",
            "Retry later, or set HF_HUB_OFFLINE=1 to use a cached copy.",
        )
    return TaskSourceError(
        files.repo_id, f"downloading {pattern!r} failed ({type(exc).__name__}: {exc})."
    )


def _as_paths(data_files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    if isinstance(data_files, str | os.PathLike):
        return [Path(data_files)]
    return [Path(item) for item in data_files]


def _glob_in(root: Path, pattern: str) -> list[Path]:
    if not _is_glob(pattern):
        path = root / pattern
        return [path] if path.is_file() else []
    return sorted(Path(p) for p in glob.glob(str(root / pattern)) if Path(p).is_file())


def resolve_files(
    files: HubFiles,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    data_files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    cache_dir: str | None = None,
    revision: str | None = None,
    token: str | None = None,
) -> list[Path]:
    """Local paths of the files ``files`` names (see the module docstring for the order)."""
    if data_files is not None:
        paths = _as_paths(data_files)
        if not paths:
            raise TaskSourceError(files.repo_id, "data_files is empty.", "Give at least one path.")
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            raise TaskSourceError(
                files.repo_id, f"data_files not found: {missing}.", "Check the paths."
            )
        return paths
    if data_dir is not None:
        root = Path(data_dir)
        if not root.is_dir():
            raise TaskSourceError(
                files.repo_id, f"data_dir {str(root)!r} is not a directory.", "Check the path."
            )
        found: list[Path] = []
        for pattern in files.patterns:
            matches = _glob_in(root, pattern)
            if not matches:
                raise TaskSourceError(
                    files.repo_id,
                    f"no file matching {pattern!r} in data_dir {str(root)!r}.",
                    f"Lay the directory out like {files.url}/tree/main.",
                )
            found.extend(matches)
        return found
    return _download(files, cache_dir=cache_dir, revision=revision, token=token)


def _download(
    files: HubFiles, *, cache_dir: str | None, revision: str | None, token: str | None
) -> list[Path]:
    try:
        import huggingface_hub
    except ImportError as exc:
        raise TaskSourceError(
            files.repo_id,
            "the huggingface_hub package is not installed.",
            _install_hint("datasets"),
        ) from exc
    unreachable = None if hf_offline() else hub_unreachable()
    offline = hf_offline() or unreachable is not None  # then the cache only
    auth = hf_token(token)
    found: list[Path] = []
    for pattern in files.patterns:
        try:
            if _is_glob(pattern):
                folder = huggingface_hub.snapshot_download(
                    files.repo_id,
                    repo_type="dataset",
                    revision=revision,
                    cache_dir=cache_dir,
                    token=auth,
                    local_files_only=offline,
                    allow_patterns=[pattern],
                )
                matches = _glob_in(Path(folder), pattern)
                if not matches:
                    raise TaskSourceError(
                        files.repo_id,
                        f"no file in the repository matches {pattern!r}: its layout may "
                        "have changed.",
                        f"Look at {files.url}/tree/main and pass data_files=....",
                    )
                found.extend(matches)
            else:
                path = huggingface_hub.hf_hub_download(
                    files.repo_id,
                    pattern,
                    repo_type="dataset",
                    revision=revision,
                    cache_dir=cache_dir,
                    token=auth,
                    local_files_only=offline,
                )
                found.append(Path(str(path)))
        except TaskSourceError:
            raise
        except Exception as exc:
            raise _translate_hub_error(exc, files, pattern, cache_dir, unreachable) from exc
    return found


def read_rows(
    dataset: str,
    paths: Sequence[Path],
    fmt: FileFormat,
    *,
    cache_dir: str | None = None,
) -> list[dict[str, Any]]:
    """All rows of ``paths`` (in order) as dicts, read with ``datasets.load_dataset(fmt)``.

    ``cache_dir`` is where ``datasets`` keeps its Arrow cache. CSV cells are read as text
    (no ``NA`` guessing), so an answer such as ``"None"`` stays a string.
    """
    try:
        # Imported by name: ``datasets`` ships no type information (no py.typed).
        datasets = importlib.import_module("datasets")
    except ImportError as exc:
        raise TaskSourceError(
            dataset, "the datasets package is not installed.", _install_hint("datasets")
        ) from exc
    options: dict[str, Any] = {}
    if fmt == "csv":
        options = {"keep_default_na": False, "na_filter": False}
    try:
        table = datasets.load_dataset(
            fmt,
            data_files=[str(path) for path in paths],
            split="train",
            cache_dir=cache_dir,
            **options,
        )
    except Exception as exc:
        raise TaskSourceError(
            dataset,
            f"could not read {[str(p) for p in paths]} as {fmt} ({type(exc).__name__}: {exc}).",
            "The file may be truncated or not in the Hub's format; delete it from the cache "
            "and download it again.",
        ) from exc
    return [dict(row) for row in table]


def _snapshot_files(repo_id: str, cache_dir: str | None, revision: str | None) -> list[str] | None:
    """Repository-relative paths of the cached snapshot of ``revision`` (``None`` if absent)."""
    from huggingface_hub import constants, scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    try:
        info = scan_cache_dir(cache_dir or constants.HF_HUB_CACHE)
    except (CacheNotFound, OSError):
        return None
    wanted = revision or "main"
    for repo in info.repos:
        if repo.repo_id != repo_id or repo.repo_type != "dataset":
            continue
        for rev in repo.revisions:
            if wanted in rev.refs or rev.commit_hash == wanted:
                root = Path(rev.snapshot_path)
                return [f.file_path.relative_to(root).as_posix() for f in rev.files]
    return None


def cached_locally(
    files: HubFiles, *, cache_dir: str | None = None, revision: str | None = None
) -> bool:
    """Whether every pattern of ``files`` has a match in the local Hugging Face cache.

    Never touches the network: exact names are checked with ``try_to_load_from_cache``,
    globs against ``scan_cache_dir``'s listing of the cached snapshot. ``False`` when
    ``huggingface_hub`` is not installed.
    """
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    listing: list[str] | None = None
    for pattern in files.patterns:
        if not _is_glob(pattern):
            hit = try_to_load_from_cache(
                files.repo_id, pattern, cache_dir=cache_dir, revision=revision, repo_type="dataset"
            )
            if not isinstance(hit, str):
                return False
            continue
        if listing is None:
            listing = _snapshot_files(files.repo_id, cache_dir, revision)
        if listing is None or not fnmatch.filter(listing, pattern):
            return False
    return True
