"""TRL's GRPOTrainer on the env: two real GRPO steps on each path.

The policy is a tiny Llama (hidden 64, 2 layers, random init) with SmolLM2's tokenizer,
so nothing is downloaded. A random model never writes a parseable plan, every reward
would be 0 and GRPO's group advantages all zero, so the fixture first teaches it the
plan format for a few seconds (supervised, on three one-step plans): its samples are
then a mix of valid plans (different workers, rewards 0.5 / 1) and broken ones (0),
and a GRPO step has something to learn from. The rewards come from the env: the tests
check that what TRL logged equals what our reward function and rollout computed from
the episodes they played.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import math
from types import SimpleNamespace
from typing import Any

import pytest
from support import require, require_smollm2

from conductor_gym.errors import ConfigurationError
from conductor_gym.training.scoring import Scorer

PLAN = 'model_id = [{m}]\nsubtasks = ["Answer the question."]\naccess_list = [[]]'


@pytest.fixture(scope="module")
def stack() -> SimpleNamespace:
    """torch, TRL and the project's TRL modules (skips without them)."""
    torch = require("torch")
    for module in ("transformers", "trl", "datasets", "gguf"):
        require(module)
    require_smollm2()
    from conductor_gym.trainers.trl import data, policy, reward, rollout, train
    from conductor_gym.trainers.trl.recipes import common, cpu_demo

    torch.set_num_threads(1)
    return SimpleNamespace(
        torch=torch,
        common=common,
        cpu_demo=cpu_demo,
        data=data,
        policy=policy,
        reward=reward,
        rollout=rollout,
        train=train,
    )


def _scorer(stack: SimpleNamespace, **kwargs: Any) -> Scorer:
    """The demo's episodes (three fixed workers, short prompt) with a short recursive
    prompt too."""
    settings = stack.train.make_args(workers=stack.cpu_demo.DEMO_WORKERS)
    templates = dataclasses.replace(
        stack.cpu_demo.DEMO_TEMPLATES,
        recursive="Question: {question}\n\nCurrent answer: {answer}\n\n{continuation}",
        recursive_may_stop="Plan again, or reply with three empty lists to keep it.",
    )
    pool = stack.train.build_pool(settings)
    return Scorer(tasks="offline", pool=pool, templates=templates, **kwargs)


def _chat_ids(tokenizer: Any, conversation: list[dict[str, str]]) -> list[int]:
    text = tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


@pytest.fixture(scope="module")
def warm_policy(stack: SimpleNamespace) -> tuple[Any, Any]:
    """The tiny model after a few seconds of supervised training on plans, for the first
    round and for a recursive round (contexts rendered by the real env)."""
    torch = stack.torch
    model, tokenizer = stack.policy.load_policy("tiny:64x2")
    scorer = _scorer(stack, max_recursions=1)
    env = scorer.make_env()
    rows = []
    for i in range(3):
        observation, _ = scorer.reset(env, stack.data.make_refs([i])[0])
        chat = [{"role": "user", "content": observation}]
        recursive, *_ = env.step(PLAN.format(m=i))
        later = [*chat, {"role": "assistant", "content": PLAN.format(m=i)}]
        later.append({"role": "user", "content": recursive})
        for context, m in ((chat, i), (later, (i + 1) % 3)):
            tail = tokenizer(PLAN.format(m=m) + tokenizer.eos_token, add_special_tokens=False)
            rows.append((_chat_ids(tokenizer, context), list(tail["input_ids"])))
    env.close()
    scorer.close()
    width = max(len(h) + len(t) for h, t in rows)
    ids = torch.full((len(rows), width), tokenizer.pad_token_id)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    predict = torch.zeros((len(rows), width), dtype=torch.bool)  # positions before a tail token
    for r, (head, tail) in enumerate(rows):
        n = len(head) + len(tail)
        ids[r, :n] = torch.tensor(head + tail)
        mask[r, :n] = 1
        predict[r, len(head) - 1 : n - 1] = True
    targets = ids[:, 1:][predict[:, :-1]]
    optimiser = torch.optim.Adam(model.parameters(), lr=5e-3)
    for _ in range(80):
        # the output head only where a plan token is predicted (the vocabulary is 49k)
        hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
        logits = model.lm_head(hidden[predict])
        loss = torch.nn.functional.cross_entropy(logits, targets)
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    return model, tokenizer


def _snapshot(model: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in model.named_parameters()}


def _changed(model: Any, before: dict[str, Any]) -> bool:
    return any(not bool((p.detach() == before[k]).all()) for k, p in model.named_parameters())


def _config(stack: SimpleNamespace, tmp_path: Any) -> Any:
    return stack.common.cpu_config(
        str(tmp_path),
        max_steps=2,
        num_generations=4,
        prompts_per_step=2,
        learning_rate=1e-4,
        temperature=1.0,
        max_completion_length=32,
        bf16=False,
        disable_tqdm=True,
    )


def _spy_reward(stack: SimpleNamespace, scorer: Scorer) -> Any:
    """Our reward function, recording every batch it scored."""

    class SpyReward(stack.reward.ConductorReward):  # type: ignore[name-defined,misc]
        batches: list[list[Any]]

        async def __call__(self, *args: Any, **kwargs: Any) -> list[float | None]:
            result: list[float | None] = await super().__call__(*args, **kwargs)
            self.batches.append(self.last)
            return result

    spy = SpyReward(scorer)
    spy.batches = []
    return spy


def _step_logs(trainer: Any) -> list[dict[str, Any]]:
    return [h for h in trainer.state.log_history if "reward" in h]


def test_reward_function_path(stack: SimpleNamespace, warm_policy: Any, tmp_path: Any) -> None:
    from trl import GRPOTrainer
    from trl.trainer.utils import is_async_callable

    model, tokenizer = copy.deepcopy(warm_policy[0]), warm_policy[1]
    scorer = _scorer(stack)
    dataset, _ = stack.data.build_dataset(scorer, stack.data.make_refs(range(8)))
    reward = _spy_reward(stack, scorer)
    assert is_async_callable(reward)  # TRL awaits it on its event loop
    before = _snapshot(model)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=_config(stack, tmp_path),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    logs = _step_logs(trainer)
    assert len(logs) == 2
    assert reward.episodes == 2 * 8  # two generation batches of 2 prompts x 4 completions
    # what TRL logged for each step is what the env paid out for that step's batch
    assert len(reward.batches) == 2
    for log, batch in zip(logs, reward.batches, strict=True):
        rewards = [r.reward for r in batch]
        assert math.isclose(
            log["rewards/conductor/mean"], sum(rewards) / len(rewards), abs_tol=1e-6
        )
        invalid = sum(r.outcome == "invalid" for r in batch) / len(batch)
        assert math.isclose(log["conductor/parse_failure_rate"], invalid, abs_tol=1e-6)
    played = [r for batch in reward.batches for r in batch]
    assert {r.outcome for r in played} <= {"correct", "wrong", "invalid"}
    assert any(r.info["worker_calls"] > 0 for r in played)  # real worker calls were made
    assert _changed(model, before)
    scorer.close()


class _SpyRollout:
    """Records what the (real) ConductorRollout returned to TRL."""

    def __init__(self, rollout: Any) -> None:
        self.rollout = rollout
        self.outputs: list[dict[str, Any]] = []

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        output: dict[str, Any] = self.rollout(prompts, trainer)
        self.outputs.append(output)
        return output


def test_rollout_func_path_with_recursion(
    stack: SimpleNamespace, warm_policy: Any, tmp_path: Any
) -> None:
    from trl import GRPOTrainer

    model, tokenizer = copy.deepcopy(warm_policy[0]), warm_policy[1]
    scorer = _scorer(stack, max_recursions=1)
    dataset, labels = stack.data.build_dataset(scorer, stack.data.make_refs(range(8)))
    spy = _SpyRollout(stack.rollout.ConductorRollout(scorer, labels))
    before = _snapshot(model)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[stack.reward.rollout_reward],
        args=_config(stack, tmp_path),
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=spy,
    )
    trainer.train()
    logs = _step_logs(trainer)
    assert len(logs) == 2 and len(spy.outputs) == 2
    recursed = []
    for log, out in zip(logs, spy.outputs, strict=True):
        n = len(out["prompt_ids"])
        assert n == 8 and len(out["completion_ids"]) == n and len(out["env_mask"]) == n
        for ids, mask in zip(out["completion_ids"], out["env_mask"], strict=True):
            assert len(ids) == len(mask)
        # what TRL logged for the step is what the episodes paid out
        rewards = [r for r in out["env_reward"] if r is not None]
        assert math.isclose(
            log["rewards/conductor/mean"], sum(rewards) / len(rewards), abs_tol=1e-6
        )
        recursed += [(out, i) for i, rounds in enumerate(out["env_rounds"]) if rounds == 2]
    # an episode whose first plan was valid recursed: the recursive prompt sits in its
    # completion as environment tokens (mask 0), followed by the second plan (mask 1)
    assert recursed
    out, i = recursed[0]
    mask = out["env_mask"][i]
    assert 0 in mask and mask[0] == 1 and mask[-1] == 1
    env_text = tokenizer.decode(
        [t for t, m in zip(out["completion_ids"][i], mask, strict=True) if m == 0]
    )
    assert "Current answer:" in env_text
    assert spy.rollout.episodes == 16
    assert _changed(model, before)
    spy.rollout.close()
    scorer.close()


# -- precision ---------------------------------------------------------------------------


def test_precision_chooser_goes_by_the_measurement() -> None:
    from conductor_gym.trainers.trl.precision import BF16_SPEEDUP, choose_cpu_precision

    # Injected measurements (the figures of an AVX2-only EPYC and of an AMX Xeon).
    emulated = choose_cpu_precision(lambda bf16: 30.8 if bf16 else 4.1, flags=())
    assert emulated.bf16 is False and emulated.reason.startswith("float32")
    assert (emulated.fp32_s, emulated.bf16_s) == (4.1, 30.8)
    native = choose_cpu_precision(lambda bf16: 2.0 if bf16 else 6.0, flags=("amx_bf16",))
    assert native.bf16 is True and "amx_bf16" in native.reason
    # A CPU that lists a bf16 flag still gets float32 when bf16 measures slower.
    assert not choose_cpu_precision(lambda bf16: 9.0 if bf16 else 3.0, flags=("avx512_bf16",)).bf16
    # A small gain is not worth autocast's changed numerics.
    tie = choose_cpu_precision(lambda bf16: 1.0 / (BF16_SPEEDUP * 0.99) if bf16 else 1.0)
    assert not tie.bf16


def test_cpu_bf16_flags_are_read_from_cpuinfo(tmp_path: Any) -> None:
    from conductor_gym.trainers.trl.precision import cpu_bf16_flags

    info = tmp_path / "cpuinfo"
    info.write_text("processor : 0\nflags : fpu avx2 avx512f avx512_bf16 sse\n")
    assert cpu_bf16_flags(str(info)) == ("avx512_bf16",)
    info.write_text("processor : 0\nflags : fpu avx2 sse\n")
    assert cpu_bf16_flags(str(info)) == ()
    assert cpu_bf16_flags(str(tmp_path / "missing")) == ()


def test_the_probe_measures_both_precisions(stack: SimpleNamespace) -> None:
    from conductor_gym.trainers.trl.precision import BF16_SPEEDUP, choose_cpu_precision

    choice = choose_cpu_precision()
    assert choice.fp32_s > 0 and choice.bf16_s > 0
    assert choice.bf16 is (choice.bf16_s * BF16_SPEEDUP <= choice.fp32_s)


def test_cpu_recipe_precision_is_measured_not_hard_coded(
    stack: SimpleNamespace, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import inspect

    assert inspect.signature(stack.common.cpu_config).parameters["bf16"].default is None
    precision = importlib.import_module("conductor_gym.trainers.trl.precision")
    for times, expected in (({False: 4.1, True: 30.8}, False), ({False: 6.0, True: 2.0}, True)):
        # Fault injection: the probe's measurement is replaced by fixed timings.
        monkeypatch.setattr(precision, "measure_probe", times.__getitem__)
        assert stack.common.cpu_config(str(tmp_path)).bf16 is expected
        settings = stack.train.make_args()
        chosen = stack.train.choose_precision(settings)
        assert chosen["bf16"] is expected and chosen["source"] == "measured"
        assert (chosen["fp32_s"], chosen["bf16_s"]) == (times[False], times[True])
        assert stack.train.grpo_config(settings, bf16=chosen["bf16"]).bf16 is expected
    for given, expected in (("fp32", False), ("bf16", True)):
        settings = stack.train.make_args(precision=given)
        assert stack.train.choose_precision(settings) == {"bf16": expected, "source": "--precision"}
    assert stack.train.choose_precision(stack.train.make_args(recipe="paper"))["bf16"]
    with pytest.raises(ConfigurationError, match="must be one of") as bad:
        stack.train.choose_precision(stack.train.make_args(precision="fp16"))
    assert bad.value.field == "precision"


def test_main_runs_and_writes_results(stack: SimpleNamespace, tmp_path: Any) -> None:
    """The CLI entry point end to end with the untrained tiny model: one step, a greedy
    evaluation before and after on held-out tasks, results.json."""
    import json

    code = stack.train.main(
        [
            "--model", "tiny", "--iterations", "1", "--train-tasks", "4",
            "--eval-tasks", "4", "--eval-repeats", "2", "--num-generations", "4",
            "--output-dir", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["before"]["tasks"] == 4 and result["after"]["tasks"] == 4
    assert result["settings"]["workers"] == list(stack.cpu_demo.DEMO_WORKERS)
    assert len([h for h in result["log_history"] if "reward" in h]) == 1
    precision = result["precision"]
    assert precision["source"] == "measured" and precision["fp32_s"] > 0
    assert precision["bf16"] is (precision["bf16_s"] * 1.25 <= precision["fp32_s"])
