"""The OpenRLHF agent file, driven the way OpenRLHF 0.11.2 drives it, on CPU.

Real parts: the installed OpenRLHF 0.11.2 (its ``MultiTurnAgentExecutor``, its prompt
loader ``blending_datasets`` + ``PromptDataset``, and two functions run from its own
source: ``_load_agent_executor`` and ``RolloutRayActor.generate_responses``, whose module
imports vLLM and Ray at import time), a real tokenizer (SmolLM2-135M-Instruct, ChatML
like Qwen2.5), the env on the simulated pool.

The one test double: :class:`ScriptedEngine` stands in for the vLLM engine (no GPU
here). It answers each request with a scripted completion, in vLLM's output shape: the
stop token kept in ``token_ids`` but not in ``text``, ``finish_reason`` ``"stop"`` or
``"length"``. Its ``SimpleNamespace`` sampling parameters carry the fields OpenRLHF
reads (``max_tokens``, ``logprobs``).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from conductor_gym.trainers.openrlhf import AGENT_FILE
from smollm2_support import smollm2_hf_folder
from support import plan_text, require

from conductor_gym.training.prepare import CONFIG_ENV, PrepareResult, prepare_prompts
from conductor_gym.training.scoring import EpisodeRef

GROUP = 64
MAX_LEN = 8192
VALID = plan_text(
    [0, 1, 2], ["Solve the question.", "Check the answer above.", "Give the final answer."],
    [[], "all", [1]],
)  # fmt: skip
INVALID = "I would rather answer myself: 42."
STOP = "Keep it.\nmodel_id = []\nsubtasks = []\naccess_list = []"


def openrlhf_function(path: str, qualname: str, namespace: dict[str, Any]) -> Any:
    """The function ``qualname`` (``f`` or ``Class.f``) of the installed OpenRLHF file
    ``path`` (relative to the package), executed as written in ``namespace``: the file's
    own imports (vLLM, Ray; its package's too) never run."""
    spec = importlib.util.find_spec("openrlhf")
    assert spec is not None and spec.origin is not None
    origin = Path(spec.origin).parent / path
    body: list[ast.stmt] = ast.parse(origin.read_text()).body
    *owners, name = qualname.split(".")
    for owner in owners:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == owner).body
    node = next(
        n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
    )
    node.decorator_list = []
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(origin), "exec"), namespace)
    return namespace[name]


class ScriptedEngine:
    """Test double for vLLM's engine (see the module docstring). ``script(turn)`` gives
    the completion for the ``turn``-th assistant turn of the request's prompt."""

    def __init__(self, tokenizer: Any, script: Callable[[int], str]) -> None:
        self.tokenizer = tokenizer
        self.script = script
        self.in_flight = 0
        self.peak = 0
        self.max_tokens_seen: list[int] = []

    async def generate(
        self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> Any:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.01)
        finally:
            self.in_flight -= 1
        self.max_tokens_seen.append(sampling_params.max_tokens)
        prompt = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        text = self.script(prompt.count("<|im_start|>assistant"))
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) > sampling_params.max_tokens:
            ids = ids[: sampling_params.max_tokens]
            text, reason = self.tokenizer.decode(ids), "length"
        else:
            ids, reason = [*ids, self.tokenizer.convert_tokens_to_ids("<|im_end|>")], "stop"
        output = SimpleNamespace(token_ids=ids, text=text, finish_reason=reason, logprobs=None)
        return SimpleNamespace(outputs=[output])


def sampling_params(max_tokens: int | None = 1024) -> SimpleNamespace:
    return SimpleNamespace(max_tokens=max_tokens, logprobs=None, temperature=1.0)


@pytest.fixture(scope="module")
def agent_module() -> ModuleType:
    return require("openrlhf.utils.agent")


@pytest.fixture(scope="module")
def tokenizer(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """SmolLM2-135M-Instruct's tokenizer (converted from the GGUF file once, cached)."""
    transformers = require("transformers")
    return transformers.AutoTokenizer.from_pretrained(smollm2_hf_folder(request, tmp_path_factory))


def load_agent(agent_module: ModuleType) -> Any:
    """``AgentExecutor()`` exactly as 0.11.2's rollout engine builds it."""
    load = openrlhf_function(
        "trainer/ray/vllm_engine.py",
        "_load_agent_executor",
        {"AgentExecutorBase": agent_module.AgentExecutorBase},
    )
    return load(AGENT_FILE)


def dataset_rows(path: Path, tokenizer: Any) -> list[tuple[str, str, str]]:
    """(datasource, prompt, label) of each row, read by 0.11.2's own loader with the
    launch script's data flags (input_key prompt, label_key label, chat template)."""
    from openrlhf.datasets import PromptDataset
    from openrlhf.datasets.utils import blending_datasets

    data = SimpleNamespace(
        input_key="prompt", label_key="label", apply_chat_template=True, image_key="images"
    )
    strategy = SimpleNamespace(
        args=SimpleNamespace(data=data, use_ms=False), print=lambda *a: None, is_rank_0=lambda: True
    )
    raw = blending_datasets(str(path), None, strategy, 42, max_count=800, dataset_split="train")
    dataset = PromptDataset(raw, tokenizer, strategy)
    return [dataset[i][:3] for i in range(len(dataset))]


def prepare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "prompts", **options: Any
) -> PrepareResult:
    options = {"tasks": "offline", "k": 3, "shuffle_workers": True, "limit": 6, **options}
    result = prepare_prompts(tmp_path / f"{name}.jsonl", seed=3, **options)
    monkeypatch.setenv(CONFIG_ENV, str(result.config_path))
    return result


def run_group(
    executor: Any, engine: ScriptedEngine, prompt: str, label: str, n: int, max_len: int = MAX_LEN
) -> Any:
    """0.11.2's ``RolloutRayActor.generate_responses`` (n concurrent ``execute`` calls)
    on an actor whose engine is ``engine``."""
    generate_responses = openrlhf_function(
        "trainer/ray/vllm_engine.py",
        "RolloutRayActor.generate_responses",
        {"asyncio": asyncio, "List": list, "Optional": Any},
    )
    actor = SimpleNamespace(executor=executor, generate=engine.generate)
    return asyncio.run(
        generate_responses(
            actor, prompt, label, sampling_params(), max_len, engine.tokenizer, num_samples=n
        )
    )


def spy_resets(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Records (ref, rollout seed, task id, pool) of every reset of this process's
    shared Scorer: a spy around the real method."""
    from conductor_gym.trainers.openrlhf.executor import shared_env

    records: list[tuple[Any, ...]] = []
    scorer = shared_env().scorer
    real = scorer.reset

    def spy(env: Any, ref: EpisodeRef, rollout_seed: int | None = None) -> Any:
        observation, info = real(env, ref, rollout_seed)
        records.append((ref, rollout_seed, info["task_id"], tuple(info["pool"])))
        return observation, info

    monkeypatch.setattr(scorer, "reset", spy)
    return records


def test_openrlhf_loads_the_agent_file_and_plays_a_group_of_64_concurrently(
    agent_module: ModuleType, tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = prepare(tmp_path, monkeypatch)
    executor = load_agent(agent_module)
    assert isinstance(executor, agent_module.MultiTurnAgentExecutor)
    _, prompt, label = dataset_rows(result.prompts_path, tokenizer)[2]
    assert prompt.startswith("<|im_start|>") and json.loads(label)["task_index"] == 2

    from conductor_gym.trainers.openrlhf.executor import LOG_KEYS

    resets = spy_resets(monkeypatch)
    calls = iter(range(10**6))
    engine = ScriptedEngine(tokenizer, lambda turn: VALID if next(calls) % 2 == 0 else INVALID)
    outputs = run_group(executor, engine, prompt, label, GROUP)

    assert len(outputs) == GROUP and engine.peak == GROUP  # all 64 in flight at once
    assert set(engine.max_tokens_seen) == {1024}  # each turn capped at max_new_tokens
    assert len({r[0] for r in resets}) == 1 and len({r[1] for r in resets}) == GROUP
    valid = 0
    for out in outputs:
        start, end = out["action_ranges"][0]
        action = tokenizer.decode(out["observation_tokens"][start:end])
        logs = out["extra_logs"]
        assert tuple(logs) == LOG_KEYS and all(isinstance(v, float) for v in logs.values())
        assert logs["env_truncated"] == 0.0 and logs["prompt_truncated"] == 0.0
        if "model_id" in action:
            valid += 1
            assert out["reward"] in (0.5, 1.0) and logs["steps"] == 3.0
            assert float(out["scores"]) == (out["reward"] == 1.0) == logs["correct"]
            assert logs["worker_calls"] == 3.0 and logs["cost_usd"] > 0
        else:
            assert out["reward"] == 0.0 and float(out["scores"]) == 0.0
            assert logs["parse_failure"] == 1.0 and logs["steps"] == 0.0
    assert valid == GROUP // 2


def test_a_group_shares_task_and_pool_draw(
    agent_module: ModuleType,
    tokenizer: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = prepare(tmp_path, monkeypatch)
    executor = load_agent(agent_module)
    rows = dataset_rows(result.prompts_path, tokenizer)
    seen = spy_resets(monkeypatch)
    pools = set()
    for _, prompt, label in rows[:3]:
        seen.clear()
        run_group(executor, ScriptedEngine(tokenizer, lambda turn: VALID), prompt, label, GROUP)
        assert len(seen) == GROUP
        assert len({(ref, task, pool) for ref, _, task, pool in seen}) == 1  # one draw
        assert len({seed for _, seed, _, _ in seen}) == GROUP  # own worker randomness
        pools.add(seen[0][3])
    assert len(pools) > 1  # other rows, other draws (k=3 of 7, shuffled)


def test_multi_turn_episode_feeds_back_the_recursive_prompt(
    agent_module: ModuleType, tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = prepare(tmp_path, monkeypatch, max_recursions=1)
    executor = load_agent(agent_module)
    _, prompt, label = dataset_rows(result.prompts_path, tokenizer)[0]
    engine = ScriptedEngine(tokenizer, lambda turn: VALID if turn == 1 else STOP)
    out = run_group(executor, engine, prompt, label, 4)[0]
    assert len(out["action_ranges"]) == 2 and out["reward"] in (0.5, 1.0)
    assert out["extra_logs"]["rounds"] == 2.0 and out["extra_logs"]["steps"] == 3.0
    text = tokenizer.decode(out["observation_tokens"])
    (first, second) = out["action_ranges"]
    feedback = tokenizer.decode(out["observation_tokens"][first[1] : second[0]])
    # vLLM kept <|im_end|> in the action's tokens: the feedback does not repeat it
    assert feedback.startswith("\n<|im_start|>user\n") and feedback.endswith("assistant\n")
    assert "<|im_end|><|im_end|>" not in text and "access_list = []" in text

    # The instance's reset/step cycle, as the executor runs it, step by step.
    episode = executor.agent_instance_cls()
    reset = asyncio.run(episode.reset({"observation": prompt, "label": label}))
    assert reset == {"observation": prompt}
    first_step = asyncio.run(episode.step({"observation_text": prompt, "action_text": VALID}))
    torch = require("torch")
    assert isinstance(first_step["rewards"], torch.Tensor) and first_step["done"] is False
    assert float(first_step["rewards"]) == 0.0 and first_step["environment_feedback"]
    # no engine here: the text shows no closing token, so the feedback closes the turn
    assert first_step["environment_feedback"].startswith("<|im_end|>\n<|im_start|>user\n")
    recursive = first_step["environment_feedback"]  # the question and the current answer
    assert result.config.task_source()[0].question in recursive and recursive not in prompt
    last = asyncio.run(episode.step({"observation_text": prompt, "action_text": STOP}))
    assert last["done"] is True and last["environment_feedback"] == ""
    assert float(last["rewards"]) in (0.5, 1.0)


def test_a_turn_without_room_left_ends_the_episode_flagged(
    agent_module: ModuleType, tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_gym.trainers.openrlhf.executor import LOG_KEYS

    result = prepare(tmp_path, monkeypatch, max_recursions=1)
    executor = load_agent(agent_module)
    _, prompt, label = dataset_rows(result.prompts_path, tokenizer)[0]
    max_len = len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) + 1024
    wordy = "Let me think this through. " * 120 + VALID  # most of the 1024 tokens
    engine = ScriptedEngine(tokenizer, lambda turn: wordy if turn == 1 else STOP)
    for out in run_group(executor, engine, prompt, label, 2, max_len=max_len):
        assert len(out["action_ranges"]) == 1 and out["reward"] == 0.0
        logs = out["extra_logs"]
        assert tuple(logs) == LOG_KEYS and logs["context_exhausted"] == 1.0
        assert logs["steps"] == 3.0 and logs["worker_calls"] == 3.0


def test_infrastructure_failure_is_reward_zero_but_flagged_and_filterable(
    agent_module: ModuleType, tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "down.toml"
    pool.write_text(
        'name = "down"\ndescription = "one worker that always fails"\n'
        '[[workers]]\nname = "down"\nbackend = "test-flaky"\n'
        "backend_options = { failures = 99, transient = false }\n"
    )
    result = prepare(tmp_path, monkeypatch, pool=str(pool), k=None, shuffle_workers=False)
    executor = load_agent(agent_module)
    _, prompt, label = dataset_rows(result.prompts_path, tokenizer)[0]
    one_step = plan_text([0], ["Solve the question."], [[]])
    outputs = run_group(executor, ScriptedEngine(tokenizer, lambda t: one_step), prompt, label, 4)
    for out in outputs:
        assert out["reward"] == 0.0 and out["extra_logs"]["env_truncated"] == 1.0
        assert math.isinf(float(out["scores"])) and float(out["scores"]) < 0
    # OpenRLHF's dynamic filter keeps a group only if min < mean(scores) < max.
    mean = sum(float(o["scores"]) for o in outputs) / len(outputs)
    assert not (-1.0 < mean < 2.0)


def test_mismatches_fail_loudly(
    agent_module: ModuleType, tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    with pytest.raises(RuntimeError, match=CONFIG_ENV):
        load_agent(agent_module)
    result = prepare(tmp_path, monkeypatch)
    other = prepare_prompts(tmp_path / "other.jsonl", tasks="offline-ood", limit=2)
    executor = load_agent(agent_module)
    rows = dataset_rows(result.prompts_path, tokenizer)
    foreign = json.loads(other.prompts_path.read_text().splitlines()[0])["label"]
    engine = ScriptedEngine(tokenizer, lambda turn: VALID)
    with pytest.raises(ValueError, match="do not belong together"):
        run_group(executor, engine, rows[0][1], foreign, 1)
    with pytest.raises(ValueError, match="not this env's conductor prompt"):
        run_group(executor, engine, rows[1][1], rows[0][2], 1)  # row 1's prompt, row 0's label
    data = json.loads(result.config_path.read_text())
    drifted = tmp_path / "drifted.env.json"
    drifted.write_text(json.dumps({**data, "task_fingerprint": "0" * 16}))
    monkeypatch.setenv(CONFIG_ENV, str(drifted))
    with pytest.raises(RuntimeError, match="prompts were prepared on"):
        load_agent(agent_module)
