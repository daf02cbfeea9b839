"""The shared machinery of the benchmark loaders: config, lazy loading, order, fingerprint.

Contract. A loader is a subclass of :class:`DatasetTasks` paired with a frozen dataclass
config (a subclass of :class:`SourceConfig` with ``validate()``, which raises
``ConfigurationError`` naming the field). The source:

* is **lazy**: constructing it validates the config and touches neither the network nor
  the disk, nor imports ``datasets``; the data is located, read and turned into tasks on
  the first ``len()``, indexing, iteration, :meth:`~DatasetTasks.fingerprint` or explicit
  :meth:`~DatasetTasks.load`, then kept in memory;
* is **deterministic**: tasks come in dataset order (after the loader's split selection),
  or, with ``shuffle=True``, in the seeded hash order of :func:`~conductor_gym.tasks.
  splits.shuffled` (salt ``f"{domain}:{seed}"``), the same in every process;
* gives every task ``domain`` = the source's registry name and ``metadata["profile"]`` =
  the same name (the paper benchmark the simulated workers' accuracies describe), and
  unique ids prefixed ``f"{domain}/"``;
* reads its files with :mod:`conductor_gym.tasks.hub`: ``data_files`` (explicit local
  paths), else ``data_dir`` (a local directory laid out like the Hub repository), else
  the Hub (``cache_dir``, ``revision``, ``token`` or ``HF_TOKEN``, and ``HF_HUB_OFFLINE``
  honoured); any failure is a :class:`~conductor_gym.tasks.errors.TaskSourceError`.

``name`` is the registry name, with ``[split]`` appended when the source was built on a
split other than the paper's evaluation split (``"math500[train]"``).
"""

from __future__ import annotations

import dataclasses
import os
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import LoadedTasks, Task
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles, cached_locally, read_rows, resolve_files
from conductor_gym.tasks.splits import SPLITS, shuffled, split_sizes

__all__ = ["DatasetTasks", "SourceConfig"]

PathArg = str | os.PathLike[str]


@dataclass(frozen=True)
class SourceConfig:
    """Options every dataset-backed source takes.

    Attributes:
        seed: Seed of the order when ``shuffle`` is true (and of any seeded selection).
        shuffle: Give the tasks in a seeded hash order instead of dataset order.
        cache_dir: The Hugging Face cache to download into and read from (also where
            ``datasets`` keeps its Arrow files); ``None`` for the default.
        data_dir: A local directory laid out like the Hub repository; used instead of
            the Hub.
        data_files: Explicit local files in the Hub's format; used instead of the Hub.
        revision: A branch, tag or commit of the Hub repository (``None``: main).
        token: A Hugging Face token; ``None`` uses ``HF_TOKEN`` (needed for gated data).
    """

    seed: int = 0
    shuffle: bool = False
    cache_dir: PathArg | None = None
    data_dir: PathArg | None = None
    data_files: PathArg | Sequence[PathArg] | None = None
    revision: str | None = None
    token: str | None = None

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        if not is_int(self.seed):
            raise ConfigurationError(f"seed: must be an int, got {self.seed!r}")
        if not isinstance(self.shuffle, bool):
            raise ConfigurationError(f"shuffle: must be a bool, got {self.shuffle!r}")
        for field in ("cache_dir", "data_dir"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, str | os.PathLike):
                raise ConfigurationError(f"{field}: must be a path or None, got {value!r}")
        if self.data_files is not None:
            files: list[object] = (
                [self.data_files]
                if isinstance(self.data_files, str | os.PathLike)
                else list(self.data_files)
                if isinstance(self.data_files, Sequence)
                else []
            )
            if not files or not all(isinstance(f, str | os.PathLike) for f in files):
                raise ConfigurationError(
                    f"data_files: must be a path or a non-empty list of paths, "
                    f"got {self.data_files!r}"
                )
        for field in ("revision", "token"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, str):
                raise ConfigurationError(f"{field}: must be a string or None")

    @property
    def cache_path(self) -> str | None:
        """``cache_dir`` as a string (``None`` if unset)."""
        return None if self.cache_dir is None else os.fspath(self.cache_dir)

    def public_dict(self) -> dict[str, Any]:
        """The config's fields without the token (for ``repr`` and logs)."""
        fields = dataclasses.asdict(self)
        fields.pop("token", None)
        return fields


@dataclass(frozen=True)
class SplitConfig(SourceConfig):
    """A :class:`SourceConfig` for datasets split by a documented hash (see
    :mod:`conductor_gym.tasks.splits`).

    Attributes:
        split: ``"test"`` (default, 20 %), ``"val"`` (20 %), ``"train"`` (60 %) or ``"all"``.
    """

    split: str = "test"

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        super().validate()
        if self.split not in SPLITS:
            raise ConfigurationError(f"split: must be one of {SPLITS}, got {self.split!r}")


C = TypeVar("C", bound=SourceConfig)


class DatasetTasks(LoadedTasks, Generic[C]):
    """A lazy, deterministic :class:`~conductor_gym.tasks.base.TaskSource` over a dataset.

    Subclasses set :attr:`domain` and implement :meth:`default_config`,
    :meth:`hub_files` and :meth:`build`; they may override :meth:`read` (how rows are
    read), :meth:`select` (split selection), :attr:`expected_size` and
    :meth:`variant`.

    Args:
        config: A config instance (default: :meth:`default_config`).
        **options: Field overrides applied to ``config`` (``split="train"``, ``seed=3``).
    """

    domain: str = ""
    """Registry name, task domain and simulated-worker profile (set by each subclass)."""

    def __init__(self, config: C | None = None, /, **options: Any) -> None:
        base = config if config is not None else self.default_config()
        valid = [f.name for f in dataclasses.fields(base)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ConfigurationError(f"{self.domain}: unknown option(s) {unknown}; valid: {valid}")
        self.config: C = dataclasses.replace(base, **options)
        self.config.validate()
        variant = self.variant()
        self.name: str = f"{self.domain}[{variant}]" if variant else self.domain
        self._tasks: list[Task] | None = None

    # -- to implement -----------------------------------------------------------------

    @classmethod
    @abstractmethod
    def default_config(cls) -> C:
        """The config used when none is given."""

    @abstractmethod
    def hub_files(self) -> HubFiles:
        """The Hub repository and files this configuration reads."""

    @abstractmethod
    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """Turn the dataset's rows (in file order) into tasks (in the same order)."""

    def select(self, tasks: list[Task]) -> list[Task]:
        """Keep the configured split of ``tasks`` (default: all of them, in order)."""
        return tasks

    def variant(self) -> str:
        """A label appended to ``name`` for a non-default split (default: none)."""
        return ""

    @property
    def expected_size(self) -> int | None:
        """The number of tasks this configuration gives on the real data, if known
        without loading (the paper's or dataset card's count); ``None`` otherwise."""
        return None

    def read(self) -> list[dict[str, Any]]:
        """Locate the files and read every row (default: ``datasets`` packaged builder)."""
        files = self.hub_files()
        paths = self.resolve(files)
        return read_rows(files.repo_id, paths, files.fmt, cache_dir=self.config.cache_path)

    # -- shared -------------------------------------------------------------------------

    def resolve(self, files: HubFiles) -> list[Path]:
        """Local paths of ``files`` per this config (local copy, cache or download)."""
        return resolve_files(
            files,
            data_dir=self.config.data_dir,
            data_files=self.config.data_files,
            cache_dir=self.config.cache_path,
            revision=self.config.revision,
            token=self.config.token,
        )

    def task(
        self,
        local_id: str,
        question: str,
        reference: str,
        grader: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> Task:
        """A task of this source: id ``f"{domain}/{local_id}"``, domain and profile set."""
        meta: dict[str, Any] = {"profile": self.domain}
        if metadata:
            meta.update(metadata)
        return Task(
            id=f"{self.domain}/{local_id}",
            question=question,
            reference=reference,
            grader=grader,
            domain=self.domain,
            metadata=meta,
        )

    def load(self) -> list[Task]:
        """Read, build, select and order the tasks (once); later calls return the same list."""
        if self._tasks is None:
            tasks = self.select(self.build(self.read()))
            ids = [task.id for task in tasks]
            if len(set(ids)) != len(ids):
                dupes = sorted({i for i in ids if ids.count(i) > 1})[:5]
                raise TaskSourceError(
                    self.hub_files().repo_id,
                    f"duplicate task ids {dupes}.",
                    "The data does not match the expected format.",
                )
            if self.config.shuffle:
                tasks = shuffled(tasks, ids, self.domain, self.config.seed)
            self._tasks = tasks
        return self._tasks

    @property
    def loaded(self) -> bool:
        """Whether the data has been read already."""
        return self._tasks is not None

    def offline_available(self) -> bool:
        """Whether :meth:`load` can succeed without the network (no download, no load).

        True when ``data_files``/``data_dir`` point at existing files, or when every file
        this configuration needs is in the local Hugging Face cache.
        """
        if self.config.data_files is not None or self.config.data_dir is not None:
            try:
                self.resolve(self.hub_files())
            except TaskSourceError:
                return False
            return True
        return cached_locally(
            self.hub_files(), cache_dir=self.config.cache_path, revision=self.config.revision
        )

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{k}={v!r}" for k, v in self.config.public_dict().items() if v is not None
        )
        state = "loaded" if self.loaded else "not loaded"
        return f"{type(self).__name__}({fields}) [{state}]"


S = TypeVar("S", bound=SplitConfig)


class HashSplitTasks(DatasetTasks[S]):
    """A :class:`DatasetTasks` whose config has a hash ``split``; subclasses set
    :attr:`total_size`, the dataset's full size (for :attr:`expected_size`)."""

    total_size: int = 0

    def variant(self) -> str:
        """The split when it is not ``"test"``."""
        return "" if self.config.split == "test" else self.config.split

    @property
    def expected_size(self) -> int:
        """The split's size on the full dataset."""
        sizes = split_sizes(self.total_size)
        return {"test": sizes.test, "val": sizes.val, "train": sizes.train}.get(
            self.config.split, self.total_size
        )
