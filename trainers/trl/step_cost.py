"""What one GRPO step costs on this CPU, before and after the cheaper step: ``main(argv)``.

::

    OMP_NUM_THREADS=1 nice python -m conductor_gym.trainers.trl.step_cost            # both
    OMP_NUM_THREADS=1 nice python -m conductor_gym.trainers.trl.step_cost --before   # TRL's

Real GRPO steps of the ``cpu-adapt`` setting (its randomised pool, chat prompt, policy
with its top 4 blocks trainable, one torch thread, and its :data:`~.recipes.cpu_adapt.GRPO`
batch: 4 prompts x 8 completions of up to 160 tokens, all flags to shrink it), with no
warm start and no evaluation, on two paths built from the same loaded policy:

* ``before``: TRL's ``GRPOTrainer`` as the recipes used it (the fused LM head over every
  position; sampling with the float32 weights, under bf16 autocast where the probe
  chose bf16);
* ``after``: :class:`~conductor_gym.trainers.trl.trainer.ConductorGRPOTrainer` with what
  :meth:`~conductor_gym.trainers.trl.trainer.CheapStep.for_config` turns on for this run.

The paths are interleaved (``--rounds`` times ``--steps`` steps of each, in turn) so that
both see the same machine load (other processes on the cores are reported as the load
average at the start and the end). Each step prints its wall time and its split:
``sampling`` (``generate``, the bf16 copy's refresh included), ``forward`` (every
log-probability pass), ``backward`` (``accelerator.backward``), ``scoring`` (the env's
reward) and ``other`` (the optimizer, batching, logging); sampling throughput is given in
``useful`` tokens (the completions' own) and ``padded`` tokens (rows x the longest
completion, what ``generate`` computes). ``--json PATH`` writes every figure.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PARTS", "PATHS", "Setting", "StepCost", "main", "measure", "table"]

PATHS = ("before", "after")
PARTS = ("sampling", "forward", "backward", "scoring")


@dataclass
class StepCost:
    """One GRPO step's wall time (seconds) and its split (module docstring)."""

    path: str
    step: int
    wall_s: float = 0.0
    parts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    completions: int = 0
    useful_tokens: int = 0
    padded_tokens: int = 0

    @property
    def other_s(self) -> float:
        return max(0.0, self.wall_s - sum(self.parts.values()))

    def tokens_per_s(self, kind: str) -> float:
        tokens = self.useful_tokens if kind == "useful" else self.padded_tokens
        return tokens / self.parts["sampling"] if self.parts["sampling"] else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            **dataclasses.asdict(self),
            "other_s": self.other_s,
            "useful_tokens_per_s": self.tokens_per_s("useful"),
            "padded_tokens_per_s": self.tokens_per_s("padded"),
        }


class _Meter:
    """Collects a trainer's timings into :class:`StepCost` rows, one per optimizer step."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.steps: list[StepCost] = []
        self.current = StepCost(path, 0)
        self._started = 0.0

    def begin(self) -> None:
        self.current = StepCost(self.path, len(self.steps) + 1)
        self._started = time.perf_counter()

    def end(self) -> None:
        self.current.wall_s = time.perf_counter() - self._started
        self.steps.append(self.current)

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.current.parts[name] += time.perf_counter() - start

    def sampled(self, completion_ids: Sequence[Sequence[int]]) -> None:
        lengths = [len(ids) for ids in completion_ids]
        self.current.completions += len(lengths)
        self.current.useful_tokens += sum(lengths)
        self.current.padded_tokens += len(lengths) * max(lengths, default=0)


def _metered(base: type, meter: _Meter) -> type:
    """``base`` (a GRPO trainer class) with its step's parts timed into ``meter``."""

    class Metered(base):  # type: ignore[misc]
        def _generate_single_turn(self, *args: Any, **kwargs: Any) -> Any:
            with meter.part("sampling"):
                completion_ids, logprobs = super()._generate_single_turn(*args, **kwargs)
            meter.sampled(completion_ids)
            return completion_ids, logprobs

        def _get_per_token_logps_and_entropies(self, *args: Any, **kwargs: Any) -> Any:
            with meter.part("forward"):
                return super()._get_per_token_logps_and_entropies(*args, **kwargs)

        def _calculate_rewards(self, *args: Any, **kwargs: Any) -> Any:
            with meter.part("scoring"):
                return super()._calculate_rewards(*args, **kwargs)

    return Metered


def _timed_backward(backward: Callable[..., Any], meter: _Meter) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        with meter.part("backward"):
            return backward(*args, **kwargs)

    return timed


@dataclass
class Setting:
    """What :func:`measure` runs (the flags of :func:`main`)."""

    model: str = "smollm2-135m"
    paths: tuple[str, ...] = PATHS
    steps: int = 1
    rounds: int = 2
    prompts_per_step: int | None = None
    num_generations: int | None = None
    max_completion_length: int | None = None
    micro_batch_size: int | None = None
    precision: str = "auto"
    seed: int = 0


def measure(setting: Setting) -> dict[str, Any]:
    """Run the interleaved GRPO steps of ``setting`` and return every figure (the CPU,
    the precision chosen, the load, each step's :class:`StepCost`)."""
    from .policy import freeze_lower_layers, load_policy
    from .precision import cpu_bf16_flags, cpu_name
    from .recipes import common, cpu_adapt
    from .reward import ConductorReward
    from .train import make_args
    from .trainer import CheapStep, ConductorGRPOTrainer

    unknown = [p for p in setting.paths if p not in PATHS]
    if unknown or not setting.paths:
        raise ValueError(f"paths must be among {PATHS}, got {setting.paths}")
    grpo = dict(cpu_adapt.GRPO)
    for name in ("prompts_per_step", "num_generations", "max_completion_length"):
        if (value := getattr(setting, name)) is not None:
            grpo[name] = value
    grpo["micro_batch_size"] = setting.micro_batch_size or min(
        grpo["micro_batch_size"], grpo["num_generations"]
    )
    tasks = grpo["prompts_per_step"] * setting.steps * setting.rounds
    workdir = tempfile.mkdtemp(prefix="step-cost-")
    args = make_args(
        "cpu-adapt",
        model=setting.model,
        threads=1,
        seed=setting.seed,
        train_tasks=tasks,
        iterations=setting.steps,
        precision=setting.precision,
        warm_start=None,
        plan_search=None,
        output_dir=workdir,
    )
    load_start = os.getloadavg()
    common.use_threads(args.threads)
    scorer = common.make_scorer(args)
    train_tasks, _ = common.split_tasks(args, scorer)
    dataset, _ = common.training_dataset(
        args, scorer, train_tasks, chat_prompt=cpu_adapt.CHAT_PROMPT
    )
    precision = common.choose_precision(args)
    config = common.cpu_config_for(args, bf16=precision["bf16"], defaults=grpo)
    model, tokenizer = load_policy(args.model)
    freeze_lower_layers(model, args.trainable_layers)

    from trl.trainer.grpo_trainer import GRPOTrainer

    meters = {path: _Meter(path) for path in setting.paths}
    trainers: dict[str, Any] = {}
    for path in setting.paths:
        base = GRPOTrainer if path == "before" else ConductorGRPOTrainer
        extra = {} if path == "before" else {"cheap_step": CheapStep.for_config(config)}
        trainer = _metered(base, meters[path])(
            model=copy.deepcopy(model),
            reward_funcs=[ConductorReward(scorer)],
            args=config,
            train_dataset=dataset,
            processing_class=tokenizer,
            **extra,
        )
        trainer.accelerator.backward = _timed_backward(trainer.accelerator.backward, meters[path])
        trainer.add_callback(_StepCallback(meters[path]))
        trainers[path] = trainer
    for _ in range(setting.rounds):
        for path in setting.paths:
            trainers[path].train()
    after = trainers.get("after")
    return {
        "cpu": cpu_name(),
        "cpu_bf16_flags": list(cpu_bf16_flags()),
        "precision": precision,
        "cheap_step": after.cheap_step.to_dict() if after is not None else None,
        "load_average": {"start": list(load_start), "end": list(os.getloadavg())},
        "setting": dataclasses.asdict(setting),
        "grpo": grpo,
        "steps": [step.to_dict() for meter in meters.values() for step in meter.steps],
    }


class _StepCallback:
    """A ``TrainerCallback`` (duck-typed: ``Trainer`` calls the events it defines) that
    brackets each optimizer step for a :class:`_Meter`."""

    def __init__(self, meter: _Meter) -> None:
        self.meter = meter

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)

    def on_step_begin(self, *args: Any, **kwargs: Any) -> None:
        self.meter.begin()

    def on_step_end(self, *args: Any, **kwargs: Any) -> None:
        self.meter.end()


# -- the report ----------------------------------------------------------------------------


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.fmean(row[key] for row in rows) if rows else 0.0


def table(result: dict[str, Any]) -> str:
    """The figures of :func:`measure` as a text table: each step, then each path's mean."""
    precision = result["precision"]
    chosen = "bf16 autocast" if precision["bf16"] else "float32"
    lines = [
        f"CPU: {result['cpu']} (bf16 flags: {', '.join(result['cpu_bf16_flags']) or 'none'})",
        f"precision: {chosen} ({precision.get('reason', precision.get('source'))})",
        f"after: {result['cheap_step']}",
        f"load average (1/5/15 min): start {_loads(result, 'start')}, end {_loads(result, 'end')}",
        f"batch: {result['grpo']['prompts_per_step']} prompts x "
        f"{result['grpo']['num_generations']} completions of <= "
        f"{result['grpo']['max_completion_length']} tokens, trained "
        f"{result['grpo']['micro_batch_size']} at a time",
        "",
        "path    step  s/step  sampling  forward  backward  scoring  other  "
        "tokens  tok/s useful  tok/s padded",
    ]
    rows = result["steps"]
    for row in rows:
        lines.append(_row(row["path"], str(row["step"]), row))
    for path in PATHS:
        mine = [row for row in rows if row["path"] == path]
        if mine:
            mean: dict[str, Any] = {key: _mean(mine, key) for key in _KEYS}
            mean["parts"] = {part: _mean([r["parts"] for r in mine], part) for part in PARTS}
            lines.append(_row(path, "mean", mean))
    return "\n".join(lines)


_KEYS = ("wall_s", "other_s", "useful_tokens", "useful_tokens_per_s", "padded_tokens_per_s")


def _loads(result: dict[str, Any], when: str) -> str:
    return "/".join(f"{x:.2f}" for x in result["load_average"][when])


def _row(path: str, step: str, row: dict[str, Any]) -> str:
    parts = row["parts"]
    return (
        f"{path:<7} {step:>4}  {row['wall_s']:6.1f}  {parts['sampling']:8.1f}  "
        f"{parts['forward']:7.1f}  {parts['backward']:8.1f}  {parts['scoring']:7.2f}  "
        f"{row['other_s']:5.1f}  {row['useful_tokens']:6.0f}  "
        f"{row['useful_tokens_per_s']:12.1f}  {row['padded_tokens_per_s']:12.1f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.trainers.trl.step_cost",
        description="seconds per GRPO step of the cpu-adapt setting, before and after the "
        "cheaper CPU step",
    )
    defaults = Setting()
    paths = parser.add_mutually_exclusive_group()
    paths.add_argument("--before", action="store_true", help="TRL's path only")
    paths.add_argument("--after", action="store_true", help="the cheaper step only")
    parser.add_argument("--model", default=defaults.model, help="policy (default %(default)s)")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="steps per round")
    parser.add_argument("--rounds", type=int, default=defaults.rounds, help="interleaved rounds")
    parser.add_argument("--prompts-per-step", type=int, help="(default: cpu-adapt's 4)")
    parser.add_argument("--num-generations", type=int, help="(default: cpu-adapt's 8)")
    parser.add_argument("--max-completion-length", type=int, help="(default: cpu-adapt's 160)")
    parser.add_argument(
        "--micro-batch-size",
        type=int,
        help="completions per training forward/backward (default: cpu-adapt's 8); must "
        "divide prompts x completions",
    )
    parser.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    ns = parser.parse_args(argv)
    for name in ("steps", "rounds", "prompts_per_step", "num_generations", "micro_batch_size"):
        value = getattr(ns, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if ns.micro_batch_size is not None:
        from .recipes.cpu_adapt import GRPO

        batch = (ns.prompts_per_step or GRPO["prompts_per_step"]) * (
            ns.num_generations or GRPO["num_generations"]
        )
        if batch % ns.micro_batch_size:
            parser.error(f"--micro-batch-size must divide the step's {batch} completions")
    chosen = ("before",) if ns.before else ("after",) if ns.after else PATHS
    setting = Setting(
        model=ns.model,
        paths=chosen,
        steps=ns.steps,
        rounds=ns.rounds,
        prompts_per_step=ns.prompts_per_step,
        num_generations=ns.num_generations,
        max_completion_length=ns.max_completion_length,
        micro_batch_size=ns.micro_batch_size,
        precision=ns.precision,
        seed=ns.seed,
    )
    result = measure(setting)
    print(table(result))
    if ns.json is not None:
        ns.json.write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
