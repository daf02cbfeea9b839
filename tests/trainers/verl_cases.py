"""The verl 0.9.1 adapter, driven by verl's own loader and classes on CPU.

Real parts: the installed verl (``--no-deps``: its GPU stack is not installed; Ray,
Hydra, tensordict are), its Hydra config composed with the launch script's own
overrides, its ``RLHFDataset`` reading the converted parquet, its ``AgentLoopWorker``
loading the agent loop from the YAML registry file and running a batch through
``generate_sequences`` (tokenisation, padding, masks, ``rm_scores``), its reward-function
loader and ``naive`` reward manager; a real tokenizer (SmolLM2-135M-Instruct); the env on
the simulated pool.

The one test double: :class:`ScriptedEngine`, labelled, stands in for verl's LLM server
client (vLLM or SGLang on a GPU): ``generate(request_id=, prompt_ids=,
sampling_params=)`` returns a scripted completion's token ids and the end-of-turn token
as ``TokenOutput``, as the real servers do.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from smollm2_support import smollm2_hf_folder
from support import plan_text, require

from conductor_gym import EpisodeRef, Scorer, score_completions

verl = require("verl")
agent_loop = require("conductor_gym.trainers.verl.agent_loop")
from conductor_gym.trainers.verl import (  # noqa: E402
    AGENT_LOOP_YAML,
    LAUNCH_SCRIPT,
    REWARD_FILE,
    write_dataset,
)

from conductor_gym.training.prepare import CONFIG_ENV, prepare_prompts  # noqa: E402

GROUP = 4
TWO_STEPS = plan_text([0, 1], ["Solve the question.", "Check the answer above."], [[], "all"])
ONE_STEP = plan_text([2], ["Solve the question."], [[]])
INVALID = "I would rather answer myself: 42."


class ScriptedEngine:
    """Test double for verl's LLM server client (module docstring): ``script(prompt,
    call)`` gives the completion for the decoded prompt of the ``call``-th request."""

    def __init__(self, tokenizer: Any, script: Callable[[str, int], str]) -> None:
        self.tokenizer = tokenizer
        self.script = script
        self.calls = 0
        self.prompts: list[str] = []

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        prompt = self.tokenizer.decode(prompt_ids)
        self.prompts.append(prompt)
        text = self.script(prompt, self.calls)
        self.calls += 1
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return TokenOutput(token_ids=[*ids, self.tokenizer.convert_tokens_to_ids("<|im_end|>")])


@pytest.fixture(scope="module")
def model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return smollm2_hf_folder(request, tmp_path_factory)


def launch_overrides(data: Path) -> list[str]:
    """The launch script's overrides (``DRY_RUN=1``), for ``data``."""
    env = {**os.environ, "DATA": str(data), "DRY_RUN": "1"}
    out = subprocess.run(["bash", str(LAUNCH_SCRIPT)], env=env, capture_output=True, check=True)
    return [item.decode() for item in out.stdout.split(b"\0") if item]


def compose(data: Path, extra: list[str]) -> Any:
    """verl's ``ppo_trainer`` config with the launch script's overrides, then ``extra``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=launch_overrides(data) + extra)


class Setup:
    """Prepared prompts, their parquet and env config, and a composed verl config."""

    def __init__(
        self, folder: Path, model: Path, *, response_length: int = 512, **prepare: Any
    ) -> None:
        self.result = prepare_prompts(folder / "prompts.jsonl", limit=2, **prepare)
        self.data = write_dataset(self.result.prompts_path, folder / "prompts.parquet")
        self.config = compose(
            self.data,
            [
                f"actor_rollout_ref.model.path={model}",
                "actor_rollout_ref.rollout.n=4",
                "data.max_prompt_length=2048",
                f"data.max_response_length={response_length}",
                "data.dataloader_num_workers=0",
            ],
        )

    def batch(self, tokenizer: Any) -> Any:
        """Every row through verl's ``RLHFDataset`` and collate, repeated GROUP times
        (interleaved: a group's rollouts are adjacent), as verl's trainer does."""
        from verl.protocol import DataProto
        from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

        dataset = RLHFDataset(
            data_files=str(self.data), tokenizer=tokenizer, config=self.config.data, processor=None
        )
        rows = collate_fn([dataset[i] for i in range(len(dataset))])
        return DataProto.from_single_dict(rows).repeat(repeat_times=GROUP, interleave=True)


@pytest.fixture
def env_config(monkeypatch: pytest.MonkeyPatch) -> Callable[[Setup], None]:
    return lambda setup: monkeypatch.setenv(CONFIG_ENV, str(setup.result.config_path))


def run_worker(setup: Setup, engine: ScriptedEngine, tokenizer: Any) -> Any:
    """verl's ``AgentLoopWorker`` (it loads AGENT_LOOP_YAML from the config) on a batch."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    worker = AgentLoopWorker(setup.config, llm_client=engine)
    return asyncio.run(worker.generate_sequences(setup.batch(tokenizer)))


@pytest.fixture(scope="module")
def tokenizer(model: Path) -> Any:
    from verl.utils import hf_tokenizer

    return hf_tokenizer(str(model))


def episodes(out: Any) -> list[dict[str, Any]]:
    return list(out.non_tensor_batch[agent_loop.EPISODE_FIELD])


def test_the_launch_script_is_the_papers_recipe_in_verls_config(tmp_path: Path) -> None:
    config = compose(tmp_path / "x.parquet", [])
    actor, rollout = config.actor_rollout_ref.actor, config.actor_rollout_ref.rollout
    assert config.algorithm.adv_estimator == "grpo" and not config.algorithm.use_kl_in_reward
    assert config.data.train_batch_size == 4 and rollout.n == 64 and actor.ppo_mini_batch_size == 4
    assert config.trainer.total_training_steps == 200 and not actor.use_kl_loss
    assert actor.optim.lr == 1e-6 and actor.optim.lr_scheduler_type == "cosine"
    assert actor.optim.lr_warmup_steps_ratio == 0.03 and list(actor.optim.betas) == [0.9, 0.999]
    assert actor.clip_ratio == 0.2 and rollout.temperature == 1.0
    assert config.data.max_response_length == 1024
    assert rollout.agent.agent_loop_config_path == str(AGENT_LOOP_YAML)
    assert config.trainer.use_v1 and config.trainer.v1.sampler.sync_refill_failed_groups
    env_vars = config.ray_kwargs.ray_init.runtime_env.env_vars
    assert env_vars[CONFIG_ENV].endswith("x.env.json")


def test_a_grpo_group_shares_its_draw_and_rewards_are_the_envs(
    tmp_path: Path, model: Path, tokenizer: Any, env_config: Callable[[Setup], None]
) -> None:
    setup = Setup(tmp_path, model, k=3, shuffle_workers=True)
    env_config(setup)
    script = [TWO_STEPS, ONE_STEP, INVALID, TWO_STEPS]
    engine = ScriptedEngine(tokenizer, lambda prompt, call: script[call % 4])
    out = run_worker(setup, engine, tokenizer)
    assert engine.calls == 2 * GROUP and out.batch["rm_scores"].shape[0] == 2 * GROUP
    assert all("USER QUESTION" in p or "Model 0" in p for p in engine.prompts)
    labels = [e["label"] for e in out.non_tensor_batch["extra_info"]]
    rewards = out.batch["rm_scores"].sum(-1).tolist()
    for i, (episode, label, reward) in enumerate(zip(episodes(out), labels, rewards, strict=True)):
        (completion,) = episode["completions"]
        (scored,) = score_completions(
            [EpisodeRef.from_label(label)], [completion],
            rollout_seeds=[episode["rollout_seed"]], k=3, shuffle_workers=True,
        )  # fmt: skip
        assert reward == pytest.approx(scored.reward) and episode["outcome"] == scored.outcome
        assert out.non_tensor_batch["correct"][i] == scored.correct
        assert out.non_tensor_batch["parse_failure"][i] == float(scored.outcome == "invalid")
    for group in range(2):
        members = episodes(out)[group * GROUP : (group + 1) * GROUP]
        assert len({tuple(e["workers"]) for e in members}) == 1  # one draw per group
        assert len({e["rollout_seed"] for e in members}) == GROUP  # fresh worker randomness
    # a single turn: every response token is the model's own
    mask, attention = out.batch["response_mask"], out.batch["attention_mask"]
    response_tokens = attention[:, -mask.shape[1] :].sum(-1)
    assert (mask.sum(-1) == response_tokens).all()


def test_recursion_appends_the_envs_prompt_as_masked_turns(
    tmp_path: Path, model: Path, tokenizer: Any, env_config: Callable[[Setup], None]
) -> None:
    # the recursive prompt is a user turn inside the response: room for it
    setup = Setup(tmp_path, model, response_length=2048, max_recursions=1, force_recursion=True)
    env_config(setup)
    engine = ScriptedEngine(tokenizer, lambda prompt, call: TWO_STEPS if call % 2 else ONE_STEP)
    out = run_worker(setup, engine, tokenizer)
    assert engine.calls == 2 * 2 * GROUP  # two rounds per rollout, run concurrently
    assert list(out.non_tensor_batch["__num_turns__"]) == [4] * (2 * GROUP)
    scorer = Scorer(max_recursions=1, force_recursion=True)
    labels = [e["label"] for e in out.non_tensor_batch["extra_info"]]
    for row, (episode, label) in enumerate(zip(episodes(out), labels, strict=True)):
        assert len(episode["completions"]) == 2 and out.non_tensor_batch["rounds"][row] == 2
        env = scorer.make_env()
        scorer.reset(env, EpisodeRef.from_label(label), episode["rollout_seed"])
        followup, *_ = env.step(episode["completions"][0])
        _, reward, terminated, _, _ = env.step(episode["completions"][1])
        assert terminated and out.batch["rm_scores"][row].sum().item() == pytest.approx(reward)
        # the env's recursive prompt is in the response, and masked out of the loss
        response = out.batch["responses"][row]
        mask = out.batch["response_mask"][row].bool()
        masked = tokenizer.decode(response[~mask & (response != tokenizer.pad_token_id)])
        assert followup.strip()[-200:] in masked
        assert INVALID not in tokenizer.decode(response[mask])
    scorer.close()


def _budget_pool(path: Path) -> Path:
    workers = "".join(f'[[workers]]\nname = "{n}"\n' for n in ("gpt-5", "claude-sonnet-4"))
    path.write_text(
        'name = "one-call"\ndescription = "one worker call per episode"\n'
        f"[episode_budget]\nmax_calls = 1\n{workers}"
    )
    return path


def test_an_infrastructure_failure_raises_for_v1_or_is_masked(
    tmp_path: Path, model: Path, tokenizer: Any, env_config: Callable[[Setup], None]
) -> None:
    pool = _budget_pool(tmp_path / "one-call.toml")
    setup = Setup(tmp_path, model, pool=str(pool))  # a two-step plan spends the budget
    env_config(setup)
    engine = ScriptedEngine(tokenizer, lambda prompt, call: TWO_STEPS)
    with pytest.raises(agent_loop.InfrastructureFailure, match="budget"):
        run_worker(setup, engine, tokenizer)  # AGENT_LOOP_YAML: raise (V1 fails the group)

    masked_yaml = tmp_path / "mask.yaml"
    masked_yaml.write_text(AGENT_LOOP_YAML.read_text().replace("raise", "mask"))
    setup.config.actor_rollout_ref.rollout.agent.agent_loop_config_path = str(masked_yaml)
    out = run_worker(setup, ScriptedEngine(tokenizer, lambda prompt, call: TWO_STEPS), tokenizer)
    assert out.batch["response_mask"].sum().item() == 0  # no token enters the loss
    assert out.batch["rm_scores"].sum().item() == 0
    assert list(out.non_tensor_batch["env_truncated"]) == [1.0] * (2 * GROUP)
    assert all(e["error"]["kind"] == "budget" for e in episodes(out))


def test_the_reward_function_through_verls_loader_and_reward_manager(
    tmp_path: Path, model: Path, tokenizer: Any, env_config: Callable[[Setup], None]
) -> None:
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
    from verl.protocol import DataProto
    from verl.trainer.ppo.reward import get_custom_reward_fn

    setup = Setup(tmp_path, model)
    env_config(setup)
    config = setup.config
    config.reward.custom_reward_function.path = str(REWARD_FILE)
    config.reward.custom_reward_function.name = "compute_score"
    manager = NaiveRewardManager(config, tokenizer, get_custom_reward_fn(config))
    batch = setup.batch(tokenizer)[:2]  # one row's first two rollouts
    for completion in (TWO_STEPS, INVALID):
        ids = tokenizer(completion, add_special_tokens=False, return_tensors="pt")["input_ids"]
        item = DataProto.from_dict(
            tensors={"responses": ids, "attention_mask": ids.new_ones(ids.shape)},
            non_tensors={k: v[:1] for k, v in batch.non_tensor_batch.items()},
        )
        result = manager.loop.run_until_complete(manager.run_single(item))  # its own loop
        info = result["reward_extra_info"]
        label = batch.non_tensor_batch["extra_info"][0]["label"]
        (scored,) = score_completions(
            [EpisodeRef.from_label(label)], [completion], rollout_seeds=[info["rollout_seed"]]
        )
        assert result["reward_score"] == scored.reward
        assert info["correct"] == scored.correct and info["env_truncated"] == 0.0
        assert info["parse_failure"] == float(completion == INVALID)


@pytest.fixture(autouse=True, scope="module")
def _no_stray_ray() -> Iterator[None]:
    yield
    ray = require("ray")
    assert not ray.is_initialized()  # nothing here needs (or started) a Ray cluster
