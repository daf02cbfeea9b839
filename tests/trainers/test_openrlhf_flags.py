"""The launch script's flags, parsed by the installed OpenRLHF 0.11.2's own parser.

0.11.2 builds its parser inline, under ``if __name__ == "__main__":`` of
``openrlhf/cli/train_ppo_ray.py`` (there is no parser function to import), and that module
imports Ray and vLLM at import time (``openrlhf.trainer.ray``), which do not install on a
CPU machine. So the test runs that ``__main__`` block from the installed source as
written: parser construction, ``parse_args``, ``hierarchize`` and every validation
assert after it. Only the module's non-standard-library imports are skipped (the block
does not use them), ``sys.argv`` holds the script's arguments, and ``train(args)`` (the
Ray launch) is replaced by a function that keeps ``args``.

The arguments come from the script itself (``DRY_RUN=1`` prints exactly what it would
submit), so script and test cannot drift apart.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.trainers.openrlhf import AGENT_FILE, LAUNCH_SCRIPT
from support import require

import conductor_gym
from conductor_gym.training.prepare import prepare_prompts

REPO_TESTS = Path(__file__).resolve().parents[1]


def openrlhf_train_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """``python -m openrlhf.cli.train_ppo_ray ARGV`` up to the point it would start Ray:
    the hierarchical ``args`` its ``train`` would get, and the parser (see the module
    docstring)."""
    require("openrlhf.utils.config")  # hierarchize, imported by the block itself
    spec = importlib.util.find_spec("openrlhf")
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "cli" / "train_ppo_ray.py"
    tree = ast.parse(path.read_text())

    def stdlib(node: ast.stmt) -> bool:
        if isinstance(node, ast.Import):
            return all(a.name.split(".")[0] in sys.stdlib_module_names for a in node.names)
        return isinstance(node, ast.ImportFrom) and (
            (node.module or "").split(".")[0] in sys.stdlib_module_names
        )

    main = [
        n
        for n in tree.body
        if isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'"
    ]
    assert len(main) == 1, "0.11.2's train_ppo_ray.py has one __main__ block"
    body = [n for n in tree.body if stdlib(n)] + main[0].body
    captured: dict[str, Any] = {}
    namespace = {"__name__": "__main__", "train": lambda args: captured.setdefault("args", args)}
    monkeypatch.setattr(sys, "argv", ["train_ppo_ray.py", *argv])
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    return captured["args"], namespace["parser"]


def script_argv(tmp_path: Path, **env: str) -> list[str]:
    """The trainer arguments ``train_conductor.sh`` would submit (its DRY_RUN mode)."""
    prompts = prepare_prompts(tmp_path / "prompts.jsonl", tasks="offline", limit=4)
    out = subprocess.run(
        ["bash", LAUNCH_SCRIPT],
        env={**os.environ, "DRY_RUN": "1", "PROMPTS": str(prompts.prompts_path), **env},
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert out.endswith("\0")
    return out[:-1].split("\0")


def test_every_flag_of_the_script_is_accepted_with_the_recipes_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = script_argv(tmp_path)
    args, parser = openrlhf_train_cli(argv, monkeypatch)
    # argparse accepts unambiguous prefixes: hold every flag to its full, exact name
    flags = [token for token in argv if token.startswith("--")]
    assert not set(flags) - set(parser._option_string_actions)

    assert args.algo.advantage.estimator == "group_norm"
    assert (args.rollout.batch_size, args.rollout.n_samples_per_prompt) == (4, 64)
    assert args.train.batch_size == 256 and args.train.max_epochs == 1
    assert args.algo.kl.init_coef == 0 and not args.algo.kl.use_loss  # no reference model
    assert args.critic.model_name_or_path is None  # group_norm: no critic
    assert (args.rollout.temperature, args.rollout.max_new_tokens) == (1.0, 1024)
    assert args.actor.optim == "adam" and args.actor.adam.lr == 1e-6
    assert tuple(args.actor.adam.betas) == (0.9, 0.999) and args.actor.adam.eps == 1e-8
    assert args.actor.lr_scheduler == "cosine" and args.actor.lr_warmup_ratio == 0.03
    assert args.actor.eps_clip == 0.2 and tuple(args.actor.eps_clip_low_high) == (0.2, 0.2)
    # 0.11.2's step count (trainer/ppo_trainer.py, prepare_datasets) on the paper's 960
    rows = min(args.data.max_samples, 960)
    steps = rows * args.rollout.n_samples_per_prompt // args.train.batch_size
    assert steps * args.train.num_episodes * args.train.max_epochs == 200
    assert Path(args.train.agent_func_path).resolve() == Path(AGENT_FILE).resolve()
    assert args.reward.remote_url == ["agent"]  # what 0.11.2 sets for an agent file
    assert (args.data.input_key, args.data.label_key) == ("prompt", "label")
    assert args.data.apply_chat_template and args.data.prompt_dataset.endswith("prompts.jsonl")
    assert args.actor.model_name_or_path == "Qwen/Qwen2.5-7B-Instruct"
    assert args.algo.dynamic_filtering_enable
    # a group is kept when low < mean score < high: any mean of 0/1 scores passes, a
    # group holding a -inf score (an infrastructure failure) does not
    low, high = args.algo.dynamic_filtering_range
    assert -math.inf < low < 0.0 and high > 1.0


def test_the_parser_is_strict_and_overrides_reach_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit):  # an unknown flag is an error, not ignored
        openrlhf_train_cli([*script_argv(tmp_path), "--rollout.samples", "8"], monkeypatch)
    argv = script_argv(tmp_path, MODEL="/models/qwen-3b", ITERATIONS="20", GPUS_PER_NODE="8")
    args, _ = openrlhf_train_cli([*argv, "--actor.adam.lr", "2e-6"], monkeypatch)
    assert args.actor.model_name_or_path == "/models/qwen-3b" and args.data.max_samples == 80
    assert args.vllm.num_engines == 8 and args.actor.num_gpus_per_node == 8
    assert args.actor.adam.lr == 2e-6  # extra arguments come last and win


def test_cosine_decays_to_zero_unlike_the_default() -> None:
    """The schedulers 0.11.2 builds (utils/deepspeed/deepspeed.py: transformers'
    ``get_scheduler``, 200 steps, ceil(200 * 0.03) = 6 warm-up steps)."""
    torch = require("torch")
    transformers = require("transformers")

    def lr_curve(name: str, **kwargs: Any) -> list[float]:
        optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-6)
        scheduler = transformers.get_scheduler(
            name, optimizer, num_warmup_steps=6, num_training_steps=200, **kwargs
        )
        curve = []
        for _ in range(200):
            curve.append(scheduler.get_last_lr()[0])
            optimizer.step()
            scheduler.step()
        return [*curve, scheduler.get_last_lr()[0]]

    ours = lr_curve("cosine")
    default = lr_curve("cosine_with_min_lr", scheduler_specific_kwargs={"min_lr_rate": 0.1})
    assert ours[0] == 0.0 and ours[6] == pytest.approx(1e-6) and ours[-1] == pytest.approx(0)
    assert default[-1] == pytest.approx(1e-7)  # 0.11.2's default stops at 10 %


def test_our_tests_are_not_shadowed_by_the_wheels_tests_package(
    request: pytest.FixtureRequest,
) -> None:
    """openrlhf 0.11.2 installs a top-level ``tests`` package; ours is not a package and
    is imported by path (pytest's importlib mode, ``pythonpath = ["tests"]``)."""
    import support

    assert Path(support.__file__).resolve().parent == REPO_TESTS
    plugins = request.config.pluginmanager.get_plugins()
    conftests = {Path(getattr(p, "__file__", "")).resolve() for p in plugins}
    assert REPO_TESTS / "conftest.py" in conftests
    assert request.getfixturevalue("three_step_plan")  # a fixture of our conftest.py
    assert Path(conductor_gym.__file__).resolve().parent.parent == REPO_TESTS.parent
    installed = importlib.util.find_spec("tests")
    if installed is not None and installed.origin is not None:  # the wheel's, elsewhere
        assert Path(installed.origin).resolve().parent != REPO_TESTS
