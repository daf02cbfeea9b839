"""The error a task source raises when its data cannot be had.

Contract: every failure to locate, download, read or parse a dataset's data is reported as
:class:`TaskSourceError` (a ``RuntimeError``) whose message names the dataset, says what
went wrong and says how to fix it (download it once online, set ``HF_TOKEN``, accept a
gated dataset's terms, point ``data_dir`` at a local copy, install ``datasets``). The
original exception, when there is one, is chained as ``__cause__``; users never see a
bare stack trace from ``datasets`` or ``huggingface_hub``.
"""

from __future__ import annotations

from conductor_gym.errors import ConfigurationError

__all__ = ["TaskSourceError"]


class TaskSourceError(ConfigurationError, RuntimeError):
    """A task source could not load its data.

    Args:
        dataset: The dataset the source reads (a Hub id such as ``"cais/mmlu"`` or a path).
        problem: What went wrong, as one sentence.
        hint: How to fix it (may be empty).

    Attributes:
        dataset: As given.
        problem: As given.
        hint: As given.
    """

    def __init__(self, dataset: str, problem: str, hint: str = "") -> None:
        self.dataset = dataset
        self.problem = problem
        self.hint = hint
        message = f"{dataset}: {problem}"
        if hint:
            message += f" {hint}"
        super().__init__(message)
