"""The vLLM backend without a GPU: its errors, its option checks, and its batching.

vLLM needs a CUDA GPU, which the test machines lack, so the batching tests drive
:class:`VLLMWorker` with ``FakeLLM``, a TEST DOUBLE standing in for the GPU engine
``vllm.LLM`` (the one double of this file). Everything else is the real worker and the
real micro-batcher.
"""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from conductor_gym.workers.base import WorkerError
from conductor_gym.workers.spec import WorkerSpec
from conductor_gym.workers.vllm import VLLMWorker, make_vllm_worker

VLLM_INSTALLED = importlib.util.find_spec("vllm") is not None


# -- TEST DOUBLE: stands in for vllm.LLM (a GPU engine) -------------------------------


@dataclass
class _Out:
    text: str
    token_ids: list[int]


@dataclass
class _RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[_Out]


@dataclass
class FakeLLM:
    """TEST DOUBLE for ``vllm.LLM``: answers ``chat`` like the real engine (one
    ``RequestOutput`` per conversation, in order) and records every call. Its answer
    echoes the request's sampling settings; ``max_tokens`` tokens are "generated"."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    fail_with: Exception | None = None

    def chat(
        self,
        messages: Sequence[Sequence[Mapping[str, str]]],
        sampling_params: Sequence[Mapping[str, Any]],
        use_tqdm: bool = True,
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> list[_RequestOutput]:
        self.calls.append(
            {
                "messages": [list(m) for m in messages],
                "sampling_params": list(sampling_params),
                "use_tqdm": use_tqdm,
                "chat_template_kwargs": chat_template_kwargs,
            }
        )
        if self.fail_with is not None:
            raise self.fail_with
        assert len(messages) == len(sampling_params)
        return [
            _RequestOutput(
                prompt_token_ids=list(range(len(conv[-1]["content"].split()))),
                outputs=[_Out(f"t={p['temperature']} seed={p['seed']}", [0] * p["max_tokens"])],
            )
            for conv, p in zip(messages, sampling_params, strict=True)
        ]


def strict_sampling(
    *, max_tokens: int, temperature: float, seed: int | None, top_p: float = 1.0
) -> dict[str, Any]:
    """Real code: a sampling-settings factory that, like ``SamplingParams``, rejects
    unknown parameters (it knows only ``top_p``)."""
    return {"max_tokens": max_tokens, "temperature": temperature, "seed": seed, "top_p": top_p}


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


# -- without vLLM -------------------------------------------------------------------


@pytest.mark.skipif(VLLM_INSTALLED, reason="vllm is installed here")
def test_missing_vllm_is_a_clear_error_at_construction() -> None:
    spec = WorkerSpec(name="qwen", backend="vllm", model="Qwen/Qwen3-0.6B")
    with pytest.raises(ImportError) as info:
        make_vllm_worker(spec)
    message = str(info.value)
    assert "WorkerSpec(name='qwen')" in message
    assert "pip install conductor-gym[vllm]" in message and "CUDA GPU" in message
    assert "vllm serve" in message and "litellm" in message and "hosted_vllm/" in message


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"tensor_parallell_size": 2}, r"unknown option\(s\) \['tensor_parallell_size'\]"),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size must be an int >= 1"),
        ({"gpu_memory_utilization": 1.5}, r"gpu_memory_utilization must be in \(0, 1\]"),
        ({"max_model_len": "4k"}, "max_model_len must be None or an int"),
        ({"enable_thinking": "no"}, "enable_thinking must be a bool"),
        ({"engine_kwargs": ["enforce_eager"]}, "engine_kwargs must be a mapping"),
        ({"max_batch_size": 0}, "max_batch_size must be an int >= 1"),
        ({"max_wait_s": -1}, "max_wait_s must be a number >= 0"),
    ],
)
def test_backend_options_are_checked_before_vllm_is_imported(
    options: dict[str, Any], match: str
) -> None:
    spec = WorkerSpec(name="qwen", backend="vllm", model="Qwen/Qwen3-0.6B", backend_options=options)
    with pytest.raises(ValueError, match=match) as info:
        make_vllm_worker(spec)
    assert "WorkerSpec(name='qwen')" in str(info.value)


def test_a_rejected_option_never_imports_vllm() -> None:
    code = (
        "import sys\n"
        "from conductor_gym.pool.pool import WorkerSpec\n"
        "from conductor_gym.workers.vllm import make_vllm_worker\n"
        "spec = WorkerSpec(name='q', backend='vllm', backend_options={'bogus': 1})\n"
        "try:\n    make_vllm_worker(spec)\nexcept ValueError:\n    pass\n"
        "print('vllm' in sys.modules, 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


# -- batching, with the engine double ---------------------------------------------------


def test_mixed_sampling_settings_share_one_engine_call() -> None:
    engine = FakeLLM()
    worker = VLLMWorker(
        "qwen",
        path="Qwen/Qwen3-0.6B",
        engine=engine,
        sampling_params=strict_sampling,
        chat_template_kwargs={"enable_thinking": False},
        max_batch_size=3,
        max_wait_s=10.0,
        price_in_per_mtok=1.0,
        price_out_per_mtok=2.0,
    )

    async def main() -> list[Any]:
        return await asyncio.gather(
            worker.complete(_user("one two three"), max_tokens=5, temperature=0.0),
            worker.complete(_user("four five"), max_tokens=9, temperature=0.7, seed=11),
            worker.complete(_user("six"), max_tokens=2, temperature=1.0, seed=12, top_p=0.9),
        )

    first, second, third = asyncio.run(main())
    assert worker.batches_run == 1 and worker.last_batch_size == 3
    (call,) = engine.calls
    assert call["messages"] == [_user("one two three"), _user("four five"), _user("six")]
    assert call["sampling_params"] == [
        {"max_tokens": 5, "temperature": 0.0, "seed": None, "top_p": 1.0},
        {"max_tokens": 9, "temperature": 0.7, "seed": 11, "top_p": 1.0},
        {"max_tokens": 2, "temperature": 1.0, "seed": 12, "top_p": 0.9},
    ]
    assert call["use_tqdm"] is False
    assert call["chat_template_kwargs"] == {"enable_thinking": False}
    assert (first.text, second.text, third.text) == (
        "t=0.0 seed=None",
        "t=0.7 seed=11",
        "t=1.0 seed=12",
    )
    assert [c.prompt_tokens for c in (first, second, third)] == [3, 2, 1]
    assert [c.completion_tokens for c in (first, second, third)] == [5, 9, 2]
    assert second.cost_usd == pytest.approx((2 * 1.0 + 9 * 2.0) / 1e6)
    assert first.model == "Qwen/Qwen3-0.6B" and first.latency_s == second.latency_s
    worker.close()


def test_engine_failures_become_worker_errors() -> None:
    engine = FakeLLM(fail_with=RuntimeError("engine died"))
    worker = VLLMWorker("qwen", path="m", engine=engine, sampling_params=strict_sampling)
    call = worker.complete(_user("hi"), max_tokens=4, temperature=0.0)
    with pytest.raises(WorkerError, match="engine died") as info:
        asyncio.run(call)
    assert info.value.transient is False and isinstance(info.value.__cause__, RuntimeError)

    class OutOfMemoryError(RuntimeError):  # named like torch's CUDA OOM error
        pass

    engine.fail_with = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    with pytest.raises(WorkerError, match="out of memory") as info:
        asyncio.run(worker.complete(_user("hi"), max_tokens=4, temperature=0.0))
    assert info.value.transient is True and info.value.worker == "qwen"
    worker.close()


def test_rejected_sampling_params_are_permanent_errors_before_batching() -> None:
    engine = FakeLLM()
    worker = VLLMWorker("qwen", path="m", engine=engine, sampling_params=strict_sampling)
    with pytest.raises(WorkerError, match="invalid sampling params") as info:
        asyncio.run(worker.complete(_user("hi"), max_tokens=4, temperature=0.0, top_k=5))
    assert info.value.transient is False and isinstance(info.value.__cause__, ValueError)
    with pytest.raises(WorkerError, match="max_tokens must be an int >= 1"):
        asyncio.run(worker.complete(_user("hi"), max_tokens=0, temperature=0.0))
    assert engine.calls == [] and worker.batches_run == 0
