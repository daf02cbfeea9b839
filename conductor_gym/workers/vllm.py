"""vLLM workers (``backend="vllm"``): open-weight models on local GPUs, batched.

Two ways to run a pool on vLLM:

**In process** (this module): ``WorkerSpec(name="qwen", backend="vllm",
model="Qwen/Qwen3-32B", backend_options={"tensor_parallel_size": 4})`` builds vLLM's
offline engine, ``vllm.LLM``, in this process. Needs ``pip install conductor-gym[vllm]``
and CUDA GPUs. Concurrent calls (many episodes on one event loop) are grouped by a
:class:`~conductor_gym.workers.batch.MicroBatcher` and sent as one ``LLM.chat`` call
with one ``SamplingParams`` per request, so requests with different ``max_tokens``,
temperatures, seeds and params share a batch (vLLM schedules them continuously inside
the call). A call's ``seed`` becomes ``SamplingParams(seed=...)``: vLLM then samples that
request reproducibly whatever else is in the batch. Token counts come from the
``RequestOutput`` (``prompt_token_ids`` and ``outputs[0].token_ids``).

**Served** (the LiteLLM backend; best for big models, several processes or machines)::

    vllm serve Qwen/Qwen3-32B --port 8000 --tensor-parallel-size 4

then a pool entry ``WorkerSpec(name="qwen3-32b", backend="litellm",
model="hosted_vllm/Qwen/Qwen3-32B", backend_options={"api_base":
"http://host:8000/v1"})``. With several servers, give ``backend_options={"deployments":
[{"api_base": "http://host1:8000/v1"}, {"api_base": "http://host2:8000/v1"}]}`` instead
of ``api_base``: the LiteLLM backend balances them with a LiteLLM Router.

The engine is built at construction (in the calling thread, usually the main one, as
vLLM expects) and cached per process per engine settings, so workers with the same
settings share one engine; generation runs on the batcher's thread.

``backend_options`` (validated before vLLM is imported; an unknown option is a
``ConfigurationError`` naming the worker and the option):

* ``path``: model folder or hub id (default: ``model``);
* ``tensor_parallel_size`` (int >= 1, default 1), ``gpu_memory_utilization`` (in (0, 1],
  default 0.9), ``max_model_len`` (int or ``None``: the model's), ``dtype`` (default
  ``"auto"``), ``engine_kwargs`` (more ``vllm.LLM`` arguments, e.g. ``quantization``);
* ``enable_thinking`` (bool): passed to the chat template as
  ``chat_template_kwargs={"enable_thinking": ...}`` (Qwen3's thinking switch);
* ``max_batch_size`` (default 256), ``max_wait_s`` (default 0.02): batching window.

Call ``params`` go to ``SamplingParams`` (``top_p``, ``top_k``, ``stop``, ...); a
parameter it rejects is a permanent :class:`~conductor_gym.workers.base.WorkerError`.
Generation failures are permanent errors with the original as ``__cause__``; CUDA
out-of-memory is transient.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.batch import BatchedWorker, BatchResult, check_options, check_window

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = ["VLLMWorker", "make_vllm_worker", "vllm_engine"]

_OPTIONS = (
    "path",
    "tensor_parallel_size",
    "gpu_memory_utilization",
    "max_model_len",
    "dtype",
    "engine_kwargs",
    "enable_thinking",
    "max_batch_size",
    "max_wait_s",
)

_MISSING = (
    "the vllm backend needs vLLM and a CUDA GPU: pip install conductor-gym[vllm]. "
    "Without a local GPU, serve the model with `vllm serve MODEL --port 8000` elsewhere "
    "and use backend='litellm' with model='hosted_vllm/MODEL' and "
    "backend_options={'api_base': 'http://host:8000/v1'}"
)

_ENGINES: dict[str, Any] = {}
_ENGINE_LOCK = threading.Lock()


def _vllm() -> Any:
    """The ``vllm`` module (typed ``Any``; it is not a dependency of the core package)."""
    if importlib.util.find_spec("vllm") is None:
        raise ImportError(_MISSING)
    return importlib.import_module("vllm")


def vllm_engine(path: str, **engine_args: Any) -> Any:
    """The ``vllm.LLM`` for ``path`` and ``engine_args``, built on first use in this
    process and then shared (keyed by the arguments' repr).

    Raises:
        ImportError: vLLM is not installed (the message says how to install it and
            points to the served alternative).
    """
    key = repr((path, sorted(engine_args.items())))
    with _ENGINE_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _vllm().LLM(model=path, **engine_args)
        return _ENGINES[key]


@dataclass(frozen=True)
class _Request:
    messages: list[dict[str, str]]
    sampling: Any
    """The request's ``SamplingParams``."""


class VLLMWorker(BatchedWorker[_Request]):
    """A model on vLLM's offline engine as a :class:`~conductor_gym.workers.base.Worker`.

    Args:
        name: Worker name (traces, errors).
        path: Model folder or hub id.
        engine: A ready engine with vLLM's ``LLM.chat`` interface; ``None`` builds (or
            reuses) ``vllm.LLM(model=path, **engine_args)`` now.
        engine_args: ``vllm.LLM`` arguments (``tensor_parallel_size``, ...).
        sampling_params: Factory of per-request sampling settings, called with
            ``max_tokens``, ``temperature``, ``seed`` and the call's params (default
            ``vllm.SamplingParams``).
        chat_template_kwargs: Passed to every ``LLM.chat`` call (e.g. ``enable_thinking``).
        model_name: Reported as :attr:`Completion.model` (default ``path``).
        price_in_per_mtok, price_out_per_mtok: USD per million prompt / completion
            tokens (``None``: free).
        max_batch_size, max_wait_s: Batching window (module docstring).

    Raises:
        ImportError: ``vllm`` is not installed and no ``engine`` was given.
    """

    backend = "vllm"

    def __init__(
        self,
        name: str,
        *,
        path: str,
        engine: Any = None,
        engine_args: Mapping[str, Any] | None = None,
        sampling_params: Callable[..., Any] | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        model_name: str | None = None,
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
        max_batch_size: int = 256,
        max_wait_s: float = 0.02,
    ) -> None:
        super().__init__(
            name,
            model_name=model_name if model_name is not None else path,
            price_in_per_mtok=price_in_per_mtok,
            price_out_per_mtok=price_out_per_mtok,
            max_batch_size=max_batch_size,
            max_wait_s=max_wait_s,
        )
        self.path = path
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        if engine is None or sampling_params is None:
            vllm = _vllm()
            sampling_params = sampling_params or vllm.SamplingParams
            if engine is None:
                engine = vllm_engine(path, **dict(engine_args or {}))
        self.engine = engine
        self._sampling_params = sampling_params

    def _make_request(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        temperature: float,
        seed: int | None,
        params: Mapping[str, Any],
    ) -> _Request:
        try:
            sampling = self._sampling_params(
                max_tokens=max_tokens, temperature=temperature, seed=seed, **params
            )
        except TypeError as exc:
            raise ValueError(f"invalid sampling params {sorted(params)}: {exc}") from exc
        return _Request(messages, sampling)

    def _run_batch(self, requests: list[_Request]) -> list[BatchResult]:
        start = time.perf_counter()
        kwargs: dict[str, Any] = {"use_tqdm": False}
        if self.chat_template_kwargs:
            kwargs["chat_template_kwargs"] = self.chat_template_kwargs
        outputs = self.engine.chat(
            [r.messages for r in requests],
            sampling_params=[r.sampling for r in requests],
            **kwargs,
        )
        latency = time.perf_counter() - start
        results = []
        for output in outputs:
            completion = output.outputs[0]
            results.append(
                BatchResult(
                    text=str(completion.text),
                    prompt_tokens=len(output.prompt_token_ids or ()),
                    completion_tokens=len(completion.token_ids),
                    latency_s=latency,
                )
            )
        return results

    def __repr__(self) -> str:
        return f"VLLMWorker({self.name!r}, path={self.path!r})"


def _engine_args(where: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``vllm.LLM`` arguments from validated ``backend_options``."""
    extra = options.get("engine_kwargs") or {}
    if not isinstance(extra, Mapping):
        raise ConfigurationError(f"{where}.backend_options.engine_kwargs must be a mapping")
    args: dict[str, Any] = dict(extra)
    tp = options.get("tensor_parallel_size", 1)
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1:
        raise ConfigurationError(
            f"{where}.backend_options.tensor_parallel_size must be an int >= 1"
        )
    memory = options.get("gpu_memory_utilization", 0.9)
    if (
        isinstance(memory, bool)
        or not isinstance(memory, int | float)
        or not (math.isfinite(memory) and 0 < memory <= 1)
    ):
        raise ConfigurationError(
            f"{where}.backend_options.gpu_memory_utilization must be in (0, 1]"
        )
    length = options.get("max_model_len")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int)):
        raise ConfigurationError(f"{where}.backend_options.max_model_len must be None or an int")
    if length is not None and length < 1:
        raise ConfigurationError(f"{where}.backend_options.max_model_len must be >= 1")
    dtype = options.get("dtype", "auto")
    if not isinstance(dtype, str):
        raise ConfigurationError(
            f"{where}.backend_options.dtype must be a string such as 'bfloat16'"
        )
    args.update(tensor_parallel_size=tp, gpu_memory_utilization=float(memory), dtype=dtype)
    if length is not None:
        args["max_model_len"] = length
    return args


def make_vllm_worker(spec: WorkerSpec) -> VLLMWorker:
    """Backend factory for ``backend="vllm"`` (options in the module docstring).

    Every option is validated before vLLM is imported.

    Raises:
        ValueError: An unknown or invalid backend option (naming the worker and option).
        ImportError: vLLM is not installed (``pip install conductor-gym[vllm]``; needs a
            CUDA GPU; the message points to the served alternative).
    """
    where = f"WorkerSpec(name={spec.name!r})"
    options = dict(spec.backend_options)
    check_options(where, "vllm", options, _OPTIONS)
    path = options.get("path", spec.model_name)
    if not isinstance(path, str) or not path:
        raise ConfigurationError(f"{where}.backend_options.path must be a non-empty string")
    engine_args = _engine_args(where, options)
    thinking = options.get("enable_thinking")
    if thinking is not None and not isinstance(thinking, bool):
        raise ConfigurationError(f"{where}.backend_options.enable_thinking must be a bool")
    batching = {k: options[k] for k in ("max_batch_size", "max_wait_s") if k in options}
    try:
        check_window(batching.get("max_batch_size", 1), batching.get("max_wait_s", 0.0))
    except ValueError as exc:
        raise ConfigurationError(f"{where}.backend_options: {exc}") from None
    try:
        return VLLMWorker(
            spec.name,
            path=path,
            engine_args=engine_args,
            chat_template_kwargs=None if thinking is None else {"enable_thinking": thinking},
            model_name=spec.model_name,
            price_in_per_mtok=spec.price_in_per_mtok,
            price_out_per_mtok=spec.price_out_per_mtok,
            **batching,
        )
    except ImportError as exc:
        raise ImportError(f"{where}: {exc}") from exc
