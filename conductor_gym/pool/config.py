"""Pool files: worker pools as TOML data, validated at load with precise errors.

A pool file describes one :class:`~conductor_gym.pool.pool.WorkerPool` and the budgets meant
for it::

    name = "my-pool"                  # required, non-empty
    description = "what it is for"    # required
    k = 3                             # optional: workers per episode, 1..number of workers
    shuffle = false                   # optional: shuffle ordinal ids every episode

    [run_budget]                      # optional; same fields in [episode_budget]
    max_calls = 10000                 # int >= 1
    max_tokens = 5000000              # int >= 1
    max_usd = 25.0                    # number > 0

    [defaults]                        # optional: generation settings for every worker
    max_tokens = 4096
    temperature = 0.2

    [[workers]]                       # one table per worker, at least one
    name = "gpt-5"                    # required, unique in the file
    backend = "litellm"               # default "simulated"; must be a registered backend
    model = "openai/gpt-5"            # default: the name
    params = { reasoning_effort = "minimal" }
    backend_options = { api_key_env = "OPENAI_API_KEY" }
    system_prompt = "Answer briefly."  # optional: a system message for every call

A ``[[workers]]`` table takes exactly the fields of :class:`~conductor_gym.workers.spec.WorkerSpec`
(``name``, ``backend``, ``model``, ``max_tokens``, ``temperature``, ``params``,
``backend_options``, ``price_in_per_mtok``, ``price_out_per_mtok``, ``max_concurrency``,
``requests_per_minute``, ``tokens_per_minute``, ``system_prompt``). ``[defaults]`` takes
the generation fields among them (``max_tokens``, ``temperature``, ``params``,
``backend_options``, ``max_concurrency``, ``requests_per_minute``, ``tokens_per_minute``,
``system_prompt``) and is merged under
each worker: a value the worker sets wins; for ``params`` and ``backend_options`` the
merge is by top-level key (the worker's key wins, nested tables are not merged). A field
set nowhere takes WorkerSpec's default.

Validation is strict: unknown fields anywhere are errors, numbers must be TOML numbers
(never strings or booleans; an integer is accepted where a float is expected), floats
must be finite. A credential-looking key in ``backend_options`` (``api_key``,
``secret``, ``password``, ``authorization``) is rejected: files get shared, so name the
environment variable instead (``api_key_env``). Everything else WorkerSpec checks
(registered backend, credential-looking ``params`` names, ...) is checked by building
the specs.

Numbers are bounded before anything is built from them: a float (``5e7``) is never an
integer, every integer fits in 64 bits as TOML requires (a longer one is refused naming
its place, or its line when Python will not even convert it), and a file is at most
:data:`MAX_POOL_FILE_BYTES`.

Every problem raises :class:`PoolConfigError`, one line per problem, each naming the
file, the worker (``workers[i] (name='...')``) when it is inside one, and the field path,
e.g. ``paper-constrained.toml: workers[2] (name='gpt-5').temperature: Input should be
greater than or equal to 0``. TOML syntax errors give the line and column.

Presets are the ``*.toml`` files of :data:`PRESET_DIR` (the package folder
``conductor_gym/pool/presets/``); :func:`load_preset` loads one by its stem. A pool file
loaded from a path may not take a name that imitates a preset's
(:mod:`conductor_gym.pool.names`), so that its results cannot pass for the preset's.

Imports: this module imports pydantic at import time, so it is itself imported lazily
(``conductor_gym.pool.pool`` imports it inside ``make_pool``; ``conductor_gym/__init__`` does
not import it); ``import conductor_gym`` does not load pydantic. ``conductor_gym.pool.pool`` is
imported inside the functions that need it.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.names import check_pool_name
from conductor_gym.workers.budget import Budget

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "MAX_POOL_FILE_BYTES",
    "PRESET_DIR",
    "PoolConfig",
    "PoolConfigError",
    "load_pool_file",
    "load_preset",
    "preset_names",
]

PRESET_DIR = Path(__file__).parent / "presets"
"""The folder of the preset pool files (package data: ``presets/*.toml``)."""

MAX_POOL_FILE_BYTES = 2**20
"""Largest pool file read (1 MiB; a pool of a hundred workers is a few KiB)."""

_INT64 = (-(2**63), 2**63 - 1)
_LONG_INTEGER = re.compile(r"(?<![\w.])[+-]?\d(?:_?\d){19,}")

_DICT_FIELDS = ("params", "backend_options")
_CREDENTIAL_OPTION = re.compile(r"(api_?key|secret|password|authori[sz]ation)", re.I)
_REDACT_OPTION = re.compile(r"(api_?key|secret|password|token$|authori[sz]ation|headers)", re.I)
_TOML_POSITION = re.compile(r"^(?P<msg>.*) \(at line (?P<line>\d+), column (?P<col>\d+)\)$")
_CREDENTIAL_HINT = (
    "look like credentials; a pool file is shared, so name an environment variable "
    "instead (e.g. api_key_env)"
)
_SPEC_FIELD = re.compile(r"^\.(?P<field>\w+)(?::\s*|\s+)(?P<msg>.*)$", re.S)


class PoolConfigError(ConfigurationError):
    """A pool file (or preset name) is invalid.

    ``str(error)`` is one line per problem (``errors``), each starting with the file.
    """

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors: tuple[str, ...] = tuple(errors)
        super().__init__("\n".join(self.errors))


# ---------------------------------------------------------------- the schema (pydantic)

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Generation(BaseModel):
    """Generation settings: a ``[defaults]`` table, and part of every worker."""

    model_config = _STRICT

    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    params: dict[str, Any] | None = None
    backend_options: dict[str, Any] | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    tokens_per_minute: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    system_prompt: str | None = Field(default=None, min_length=1, max_length=20_000)


class _Worker(_Generation):
    """One ``[[workers]]`` table (WorkerSpec's fields)."""

    name: str = Field(min_length=1)
    backend: str | None = Field(default=None, min_length=1)
    model: str | None = Field(default=None, min_length=1)
    price_in_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    price_out_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class _Budget(BaseModel):
    """A ``[run_budget]`` or ``[episode_budget]`` table (Budget's fields)."""

    model_config = _STRICT

    max_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class _PoolFile(BaseModel):
    """The whole document."""

    model_config = _STRICT

    name: str = Field(min_length=1)
    description: str
    k: int | None = Field(default=None, ge=1)
    shuffle: bool = False
    run_budget: _Budget | None = None
    episode_budget: _Budget | None = None
    defaults: _Generation | None = None
    workers: list[_Worker] = Field(min_length=1)


# ---------------------------------------------------------------- the result


@dataclass(frozen=True)
class PoolConfig:
    """A validated pool file.

    Attributes:
        name: The pool's name (presets: the file's stem).
        description: What the pool is for.
        source: The file it was loaded from.
        specs: The workers, in file order, with ``[defaults]`` merged in.
        k: Workers per episode (``None``: all of them).
        shuffle: Shuffle the ordinal ids every episode.
        run_budget: Limits for the whole run, or ``None``.
        episode_budget: Limits per episode, or ``None``.
    """

    name: str
    description: str
    source: Path
    specs: tuple[WorkerSpec, ...]
    k: int | None = None
    shuffle: bool = False
    run_budget: Budget | None = None
    episode_budget: Budget | None = None

    @property
    def backends(self) -> frozenset[str]:
        """The backends the workers use (e.g. to check their extras are installed)."""
        return frozenset(spec.backend for spec in self.specs)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description: every field and every worker's full spec.

        Values of credential-looking ``backend_options`` keys (other than ``*_env``
        names of environment variables) are shown as ``"<redacted>"``.
        """
        return {
            "name": self.name,
            "description": self.description,
            "source": str(self.source),
            "k": self.k,
            "shuffle": self.shuffle,
            "run_budget": None if self.run_budget is None else self.run_budget.to_dict(),
            "episode_budget": (
                None if self.episode_budget is None else self.episode_budget.to_dict()
            ),
            "workers": [_describe_spec(spec) for spec in self.specs],
        }


def _describe_spec(spec: WorkerSpec) -> dict[str, Any]:
    options = {
        key: "<redacted>" if _is_credential(key, _REDACT_OPTION) else value
        for key, value in spec.backend_options.items()
    }
    return {
        "name": spec.name,
        "backend": spec.backend,
        "model": spec.model_name,
        "max_tokens": spec.max_tokens,
        "temperature": spec.temperature,
        "params": dict(spec.params),
        "backend_options": options,
        "price_in_per_mtok": spec.price_in_per_mtok,
        "price_out_per_mtok": spec.price_out_per_mtok,
        "max_concurrency": spec.max_concurrency,
        "requests_per_minute": spec.requests_per_minute,
        "tokens_per_minute": spec.tokens_per_minute,
        # only when set, so that the descriptions of pools without one stay as they were
        **({"system_prompt": spec.system_prompt} if spec.system_prompt is not None else {}),
    }


def _is_credential(key: str, pattern: re.Pattern[str]) -> bool:
    return not key.lower().endswith("_env") and pattern.search(key) is not None


# ---------------------------------------------------------------- loading


def preset_names() -> list[str]:
    """The preset pools: stems of the ``*.toml`` files in :data:`PRESET_DIR`, sorted."""
    return sorted(path.stem for path in PRESET_DIR.glob("*.toml"))


def load_preset(name: str) -> PoolConfig:
    """Load the preset ``name`` (errors name the file as ``<name>.toml``).

    Raises:
        PoolConfigError: ``name`` is not a preset (the message lists them), or its file
            is invalid.
    """
    available = preset_names()
    if name not in available:
        raise PoolConfigError([f"unknown pool preset {name!r}; available: {available}"])
    return _load(PRESET_DIR / f"{name}.toml", label=f"{name}.toml", preset=True)


def load_pool_file(path: str | os.PathLike[str]) -> PoolConfig:
    """Load and validate the pool file at ``path`` (errors name it as given).

    Raises:
        PoolConfigError: the file cannot be read, is not TOML, or is not a valid pool:
            one line per problem (see the module docstring). Type, range and unknown-field
            problems are all reported together; the checks that need well-typed values
            (WorkerSpec's own, duplicate names, ``k`` against the number of workers)
            follow once those are fixed, and WorkerSpec reports one problem per worker.
            A ``name`` that imitates a preset's (:mod:`conductor_gym.pool.names`:
            ``sim-paper`` with a Cyrillic i (U+0456), ``sim-paper-2026``) is refused.
    """
    return _load(Path(path), label=os.fspath(path), preset=False)


def _load(path: Path, *, label: str, preset: bool) -> PoolConfig:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_POOL_FILE_BYTES + 1)
        text = data.decode("utf-8")
    except OSError as exc:
        raise PoolConfigError([f"{label}: cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise PoolConfigError([f"{label}: not UTF-8 text ({exc.reason})"]) from None
    if len(data) > MAX_POOL_FILE_BYTES:
        raise PoolConfigError(
            [f"{label}: the file is over the {MAX_POOL_FILE_BYTES:,}-byte limit of a pool file"]
        )
    raw = _parse_toml(text, label)
    try:
        document = _PoolFile.model_validate(raw)
    except ValidationError as exc:
        lines = [f"{label}: {_where(error['loc'], raw)}: {error['msg']}" for error in exc.errors()]
        raise PoolConfigError(lines) from None
    if not preset and (
        problem := check_pool_name(document.name, preset_names(), where=f"{label}: name")
    ):
        raise PoolConfigError([problem])
    return _build(document, raw, path=path, label=label)


def _parse_toml(text: str, label: str) -> dict[str, Any]:
    """The TOML document ``text``, every integer in it within 64 bits."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PoolConfigError([f"{label}: {_toml_position(str(exc))}"]) from None
    except ValueError:  # an integer Python will not convert (over 4,300 digits)
        match = _LONG_INTEGER.search(text)
        digits = f" of {len(match[0].lstrip('+-').replace('_', '')):,} digits" if match else ""
        line = f", line {text.count(chr(10), 0, match.start()) + 1}" if match else ""
        problem = f"an integer{digits} does not fit in 64 bits (TOML integers are 64-bit)"
        raise PoolConfigError([f"{label}{line}: {problem}"]) from None
    if problems := _long_integers(raw, label):
        raise PoolConfigError(problems)
    return raw


def _long_integers(raw: Mapping[str, Any], label: str) -> list[str]:
    """One problem per integer of ``raw`` outside 64 bits, naming where it is."""
    problems = []
    stack: list[tuple[str, Any]] = [(key, value) for key, value in raw.items()]
    while stack:
        where, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((f"{where}.{key}", item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{n}]", item) for n, item in enumerate(value))
        elif isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
            problems.append(
                f"{label}: {where}: an integer of {len(str(abs(value)))} digits does not fit "
                "in 64 bits (TOML integers are 64-bit)"
            )
    return sorted(problems)


def _toml_position(message: str) -> str:
    match = _TOML_POSITION.match(message)
    if match is None:
        return f"TOML syntax error: {message}"
    return f"line {match['line']}, column {match['col']}: TOML syntax error: {match['msg']}"


def _worker_label(raw: Mapping[str, Any], index: int) -> str:
    """``workers[i] (name='...')`` from the raw document (the name may be missing)."""
    workers = raw.get("workers")
    entry = workers[index] if isinstance(workers, list) and index < len(workers) else None
    if not isinstance(entry, dict):
        return f"workers[{index}] (not a table)"
    name = entry.get("name")
    if not isinstance(name, str):
        return f"workers[{index}] (name missing)"
    return f"workers[{index}] (name={name!r})"


def _where(loc: Sequence[int | str], raw: Mapping[str, Any]) -> str:
    """A pydantic error location as ``workers[2] (name='x').params.top_k``."""
    path = ""
    rest = list(loc)
    if len(rest) >= 2 and rest[0] == "workers" and isinstance(rest[1], int):
        path = _worker_label(raw, rest[1])
        rest = rest[2:]
    for item in rest:
        if isinstance(item, int):
            path += f"[{item}]"
        else:
            path += f".{item}" if path else str(item)
    return path or "(document)"


def _spec_problem(where: str, name: str, exc: ValueError) -> str:
    """WorkerSpec's ``WorkerSpec(name='x').field ...`` message, relocated to ``where``."""
    message = str(exc)
    prefix = f"WorkerSpec(name={name!r})"
    if message.startswith(prefix):
        match = _SPEC_FIELD.match(message[len(prefix) :])
        if match is not None:
            return f"{where}.{match['field']}: {match['msg']}"
    return f"{where}: {message}"


def _merge(defaults: Mapping[str, Any], worker: Mapping[str, Any]) -> dict[str, Any]:
    merged = {**defaults, **worker}
    for key in _DICT_FIELDS:
        if key in defaults and key in worker:
            merged[key] = {**defaults[key], **worker[key]}
    return merged


def _credential_options(options: Mapping[str, Any] | None) -> list[str]:
    return sorted(key for key in options or {} if _is_credential(key, _CREDENTIAL_OPTION))


def _defaults_problems(defaults: Mapping[str, Any], label: str) -> list[str]:
    """Check ``[defaults]`` on its own, so a problem there is reported once, not per worker."""
    from conductor_gym.workers.spec import WorkerSpec

    problems = []
    if keys := _credential_options(defaults.get("backend_options")):
        problems.append(f"{label}: defaults.backend_options: {keys} {_CREDENTIAL_HINT}")
    try:
        WorkerSpec(name="defaults", **defaults)
    except ValueError as exc:
        problems.append(_spec_problem(f"{label}: defaults", "defaults", exc))
    return problems


def _build_specs(
    document: _PoolFile, raw: Mapping[str, Any], label: str, problems: list[str]
) -> list[WorkerSpec]:
    """The workers' specs, ``[defaults]`` merged in; problems are appended to ``problems``."""
    from conductor_gym.workers.spec import WorkerSpec

    defaults = document.defaults.model_dump(exclude_unset=True) if document.defaults else {}
    defaults_problems = _defaults_problems(defaults, label) if defaults else []
    problems.extend(defaults_problems)
    specs: list[WorkerSpec] = []
    first_index: dict[str, int] = {}
    for index, worker in enumerate(document.workers):
        where = f"{label}: {_worker_label(raw, index)}"
        fields = worker.model_dump(exclude_unset=True)
        if keys := _credential_options(fields.get("backend_options")):
            problems.append(f"{where}.backend_options: {keys} {_CREDENTIAL_HINT}")
        if worker.name in first_index:
            problems.append(
                f"{where}.name: duplicate worker name "
                f"(first used by workers[{first_index[worker.name]}])"
            )
        first_index.setdefault(worker.name, index)
        if defaults_problems:
            continue  # every worker would repeat the defaults' problem
        try:
            specs.append(WorkerSpec(**_merge(defaults, fields)))
        except ValueError as exc:
            problems.append(_spec_problem(where, worker.name, exc))
    return specs


def _build(document: _PoolFile, raw: Mapping[str, Any], *, path: Path, label: str) -> PoolConfig:
    problems: list[str] = []
    specs = _build_specs(document, raw, label, problems)
    n = len(document.workers)
    if document.k is not None and document.k > n:
        problems.append(f"{label}: k: must be <= the number of workers ({n}), got {document.k}")
    budgets: dict[str, Budget | None] = {"run_budget": None, "episode_budget": None}
    for scope in budgets:
        table: _Budget | None = getattr(document, scope)
        if table is not None:
            try:
                budgets[scope] = Budget(**table.model_dump())
            except ValueError as exc:
                problems.append(f"{label}: {scope}: {exc}")
    if problems:
        raise PoolConfigError(problems)
    return PoolConfig(
        name=document.name,
        description=document.description,
        source=path,
        specs=tuple(specs),
        k=document.k,
        shuffle=document.shuffle,
        run_budget=budgets["run_budget"],
        episode_budget=budgets["episode_budget"],
    )
