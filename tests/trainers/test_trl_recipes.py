"""The TRL recipes' settings: each declared once, as an ``Args`` field, and its flag
generated from it (name, type, default, help), read back to the same value. Each recipe
reads on its own: found by its registry, its ``Args`` complete, no recipe importing
another (issue 43)."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import pkgutil
import typing
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.trainers.trl import recipes, train
from conductor_gym.trainers.trl import settings as flags
from conductor_gym.trainers.trl.plan_prior import PlanSearch
from conductor_gym.trainers.trl.recipes import (
    common,
    cpu_adapt,
    cpu_demo,
    cpu_orchestrate,
    paper,
    paper_adapt,
)
from conductor_gym.trainers.trl.warm_start import WarmStart

from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError

RECIPES = {
    "paper": paper,
    "paper-adapt": paper_adapt,
    "cpu-demo": cpu_demo,
    "cpu-orchestrate": cpu_orchestrate,
    "cpu-adapt": cpu_adapt,
}

LEGACY_FLAGS = (
    "--recipe", "--workers", "--rollout", "--model", "--output-dir", "--iterations",
    "--train-tasks", "--eval-tasks", "--eval-first", "--eval-repeats", "--train-first",
    "--warm-start-steps", "--search-iterations", "--baselines", "--no-checkpoint",
    "--learning-rate", "--num-generations", "--temperature", "--trainable-layers",
    "--threads", "--use-vllm", "--vllm-mode", "--seed", "--precision",
)  # fmt: skip
"""Every flag the hand-written parser had: each keeps its name."""


def _parser(recipe: str, *, env: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    train.add_arguments(parser, recipe=recipe, env=env)
    return parser


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def _other_value(flag: flags.Flag, default: Any) -> tuple[list[str], Any]:
    """A value unlike ``default`` for ``flag``: its argv and the value it gives."""
    if flag.kind == "bool":
        negative = "--no-" + flag.option.removeprefix("--")
        return ([negative] if default else [flag.option]), not default
    if flag.kind == "list":
        return [flag.option, "a, b"], ("a", "b")
    if flag.choices:
        choice = next(c for c in flag.choices if c != default)
        return [flag.option, choice], choice
    if flag.type is str:
        return [flag.option, "elsewhere"], "elsewhere"
    value = flag.type(7 if default != 7 else 8)
    return [flag.option, str(value)], value


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_every_field_has_a_generated_flag_that_round_trips(recipe: str) -> None:
    cls = RECIPES[recipe].Args
    assert train.RECIPES.get(recipe) is cls and cls.recipe == recipe
    parser = _parser(recipe)
    options = _options(parser)
    generated = flags.flags(cls)
    by_field = {flag.field for flag in generated}
    for field in dataclasses.fields(cls):
        assert flags._metadata(cls, field.name)["help"]  # documented
        if field.name == "env":
            assert {"--tasks", "--pool", "--k", "--max-recursions"} <= options
        elif field.name != "grpo_overrides":  # Python API only
            assert field.name in by_field, field.name
    defaults = cls()
    for flag in generated:
        assert flag.option in options
        current = getattr(defaults, flag.field)
        if flag.sub is None:
            default = current
        else:  # a stage's setting: the recipe's stage, or the stage's own defaults
            stage = current or {"warm_start": WarmStart, "plan_search": PlanSearch}[flag.field]()
            default = getattr(stage, flag.sub)
        argv, value = _other_value(flag, default)
        args = train.args_from_arguments(parser.parse_args(["--recipe", recipe, *argv]))
        assert type(args) is cls
        got = getattr(args, flag.field)
        if flag.sub is None:
            assert got == value, flag.option
            # only that field changed
            assert dataclasses.replace(args, **{flag.field: current}) == defaults
        else:
            assert getattr(got, flag.sub) == value, flag.option
    # nothing given: the recipe's defaults
    assert train.args_from_arguments(parser.parse_args(["--recipe", recipe])) == defaults


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_every_legacy_flag_keeps_its_name(recipe: str) -> None:
    assert set(LEGACY_FLAGS) <= _options(_parser(recipe))


def test_env_flags_build_the_env_field() -> None:
    parser = _parser("cpu-orchestrate")
    args = train.args_from_arguments(
        parser.parse_args(["--recipe", "cpu-orchestrate", "--k", "3", "--shuffle-workers"])
    )
    assert args.env == EnvConfig(pool=common.CPU_RECIPE_POOL, k=3, shuffle_workers=True)
    flagged = parser.parse_args(["--recipe", "cpu-orchestrate", "--pool", "sim-paper"])
    assert train.args_from_arguments(flagged).env == EnvConfig(pool="sim-paper")
    env = EnvConfig(tasks="offline")
    namespace = _parser("paper", env=False).parse_args(["--recipe", "paper"])
    given = train.args_from_arguments(namespace, env=env)
    assert given.env is env and type(given) is paper.Args


def test_env_flags_help_shows_the_recipes_env() -> None:
    def shown(recipe: str, dest: str) -> str:
        (action,) = [a for a in _parser(recipe)._actions if a.dest == dest]
        return str(action.help)

    assert shown("cpu-orchestrate", "pool").endswith(f"(default: {common.CPU_RECIPE_POOL!r})")
    assert shown("cpu-adapt", "k").endswith("(default: 4)")
    assert shown("paper", "k").endswith("(default: None)")
    assert shown("paper-adapt", "templates").endswith("(default: a PromptTemplates)")


def test_stage_flags_change_one_setting_of_the_stage() -> None:
    parser = _parser("cpu-orchestrate")
    argv = ["--recipe", "cpu-orchestrate", "--warm-start-steps", "3", "--search-iterations", "0"]
    args = train.args_from_arguments(parser.parse_args([*argv, "--no-checkpoint"]))
    assert args.warm_start == WarmStart(steps=3)
    assert args.plan_search == PlanSearch(iterations=0)
    assert args.save_checkpoint is False


def test_the_recipes_defaults_are_the_documented_ones() -> None:
    demo = train.resolve(train.make_args("cpu-demo"))
    assert demo.workers == cpu_demo.DEMO_WORKERS and demo.env.templates == cpu_demo.DEMO_TEMPLATES
    assert (demo.train_tasks, demo.eval_tasks, demo.eval_repeats) == (64, 48, 4)
    assert (demo.trainable_layers, demo.threads, demo.save_checkpoint) == (4, 1, False)
    orchestrate = train.resolve(train.make_args("cpu-orchestrate", seed=5))
    assert (orchestrate.train_first, orchestrate.train_tasks) == (160, 1792)
    assert (orchestrate.eval_first, orchestrate.eval_tasks, orchestrate.eval_repeats) == (0, 160, 3)
    assert orchestrate.warm_start == WarmStart(seed=5)
    assert orchestrate.plan_search == PlanSearch(seed=5)
    assert (orchestrate.trainable_layers, orchestrate.threads) == (4, 1)
    assert orchestrate.save_checkpoint is True and orchestrate.iterations is None
    gpu = train.resolve(train.make_args("paper"))
    assert (gpu.eval_tasks, gpu.eval_repeats, gpu.train_tasks, gpu.workers) == (0, 4, None, None)
    assert gpu.on_gpu and not demo.on_gpu
    # results.json records the recipe and every setting
    names = [name for name in _settings() if name != "env"]
    recorded = common.TrainResult(gpu, []).to_dict()["settings"]
    assert list(recorded) == ["recipe", *names, "env"] and recorded["recipe"] == "paper"


def test_unknown_recipes_settings_and_bad_values_name_the_field() -> None:
    with pytest.raises(ConfigurationError, match="recipe") as unknown:
        train.make_args("cpu-large")
    assert unknown.value.field == "recipe"
    with pytest.raises(ConfigurationError, match="unknown setting") as setting:
        train.make_args("paper", eval_task=4)
    assert setting.value.field == "eval_task"
    for name, value in (
        ("eval_tasks", "many"),
        ("eval_tasks", True),
        ("learning_rate", "fast"),
        ("rollout", "yes"),
        ("workers", "gpt-5"),
        ("env", {"k": 3}),
        ("warm_start", 3),
    ):
        with pytest.raises(ConfigurationError, match=name) as bad:
            train.make_args("cpu-orchestrate", **{name: value})
        assert bad.value.field == name
    assert train.make_args("paper", workers=["a", "b"]).workers == ("a", "b")
    assert train.make_args("paper", learning_rate=1).learning_rate == 1
    with pytest.raises(ConfigurationError, match="warm_start") as refused:
        train.resolve(train.make_args("cpu-demo", warm_start=WarmStart()))
    assert refused.value.field == "warm_start"


def test_bad_flag_values_are_refused_naming_the_flag() -> None:
    for argv in (["--precision", "fp16"], ["--eval-tasks", "many"], ["--recipe", "cpu-large"]):
        with pytest.raises(argparse.ArgumentError, match=argv[0].removeprefix("--")):
            _parser("cpu-demo").parse_args(argv)


def test_a_field_without_a_flag_kind_is_refused_at_declaration() -> None:
    @dataclasses.dataclass
    class Odd:
        mapping: dict[str, int] = flags.setting(default_factory=dict, help="no flag")  # noqa: RUF009

    with pytest.raises(TypeError, match="flag=None"):
        flags.flags(Odd)


def _settings() -> list[str]:
    """The fields every recipe's ``Args`` declares, in order (:class:`common.Args`)."""
    hints = typing.get_type_hints(common.Args)
    return [name for name, hint in hints.items() if typing.get_origin(hint) is not typing.ClassVar]


def test_the_registry_finds_every_recipe_module_and_train_uses_it() -> None:
    modules = {m.name for m in pkgutil.iter_modules(recipes.__path__)} - recipes.SHARED
    assert recipes.RECIPES.names() == sorted(recipes.recipe_name(m) for m in modules)
    assert recipes.RECIPES.names() == sorted(RECIPES)
    for name, module in RECIPES.items():
        assert recipes.RECIPES.get(name) is module.Args is train.RECIPES.get(name)
    assert train.RECIPES.names() == recipes.RECIPES.names()


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_each_recipes_args_is_complete_and_extends_no_other(recipe: str) -> None:
    cls = RECIPES[recipe].Args
    assert cls.__bases__ == (object,), cls.__mro__
    assert [f.name for f in dataclasses.fields(cls)] == _settings()
    declared = cls.__dict__["__dataclass_fields__"]
    assert all("help" in declared[name].metadata for name in _settings())
    assert typing.get_type_hints(cls)["env"] is EnvConfig


def _imported_modules(path: Path) -> set[str]:
    """The modules ``path`` imports, relative ones as ``.name`` / ``..name``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            joiner = "" if base.endswith(".") else "."
            found |= {base} | {f"{base}{joiner}{alias.name}" for alias in node.names}
    return found


def test_no_recipe_module_imports_another_recipe_module() -> None:
    folder = Path(recipes.__file__).parent
    names = {m.name for m in pkgutil.iter_modules(recipes.__path__)} - recipes.SHARED
    assert names == {"paper", "paper_adapt", "cpu_demo", "cpu_orchestrate", "cpu_adapt"}
    spellings = {
        name: {f".{name}", f"..recipes.{name}", f"{recipes.__name__}.{name}"} for name in names
    }
    for importer in sorted(names | recipes.SHARED):
        imported = _imported_modules(folder / f"{importer}.py")
        others = {name for name, ways in spellings.items() if name != importer and ways & imported}
        assert not others, f"{importer} imports the recipe(s) {sorted(others)}"


def test_what_two_recipes_share_is_stated_once_and_held_together() -> None:
    # the adaptive recipes' k, and cpu-adapt's chat as cpu-orchestrate's with names
    assert paper_adapt.K == cpu_adapt.K == paper_adapt.adaptive_env().k
    assert (
        dataclasses.replace(cpu_orchestrate.CHAT_PROMPT, worker_item="Model {id}: {name}")
        == cpu_adapt.CHAT_PROMPT
    )
