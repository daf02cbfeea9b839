"""A few-minute check of the paper-scale GPU recipes (``docs/training-gpu.md``).

::

    python -m conductor_gym.trainers.trl.gpu_smoke [--recipe paper|paper-adapt] \\
        [--model Qwen/Qwen2.5-1.5B-Instruct] [--iterations 2] [--output-dir runs/gpu-smoke] \\
        [--dry-run]

It runs the ``run`` of the recipe ``--recipe`` names (:data:`SMOKE_RECIPES`:
:mod:`~conductor_gym.trainers.trl.recipes.paper`, the default, or
:mod:`~conductor_gym.trainers.trl.recipes.paper_adapt`, the same GRPO recipe on the
paper's randomised pool) with vLLM generation in colocate mode on one GPU, shrunk so that
it ends in minutes (:func:`smoke_settings`): ``num_generations`` 8 instead of 64, 2
questions per step instead of 4, 256-token completions instead of 1024, a few iterations
instead of 200. Everything else (GRPO loss, clip 0.2, no KL, AdamW 0.9/0.999, lr 1e-6
cosine, bf16, gradient checkpointing, the offline tasks, and the recipe's env: the
``sim-paper`` pool, and for ``paper-adapt`` ``k`` 4 of its workers under shuffled ids,
named in the conductor prompt) is the recipe's. Then it prints the wall time, the peak
GPU memory and the reward of every step.

Before anything is loaded it checks for a CUDA GPU, vLLM and TRL: when one is missing
it prints what is missing and how to get it, and exits with status 2. ``--dry-run``
prints the settings it would run (the recipe, and its env's pool, ``k``, shuffling and
templates among them; no GPU needed). Importing this module imports neither torch, vLLM
nor TRL.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_MODEL",
    "MISSING_EXIT",
    "SMOKE_RECIPES",
    "main",
    "missing_requirements",
    "rewards_by_step",
    "smoke_settings",
]

DEFAULT_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
MISSING_EXIT = 2
"""Exit status when a CUDA GPU, vLLM or TRL is missing."""
SMOKE_RECIPES = ("paper", "paper-adapt")
"""The recipes the smoke check runs (``--recipe``; the first is the default)."""


def missing_requirements() -> list[str]:
    """One line per missing requirement of the smoke run (empty: all present).

    Checks, without importing vLLM or TRL: torch is importable and sees a CUDA GPU
    (``torch.cuda.is_available()``), and ``vllm`` and ``trl`` are installed.
    """
    missing: list[str] = []
    if importlib.util.find_spec("torch") is None:
        missing.append("torch is not installed: pip install 'conductor-gym[trl]'")
    elif not importlib.import_module("torch").cuda.is_available():
        missing.append("no CUDA GPU visible (torch.cuda.is_available() is False)")
    if importlib.util.find_spec("vllm") is None:
        missing.append("vllm is not installed: pip install 'conductor-gym[vllm]'")
    if importlib.util.find_spec("trl") is None:
        missing.append("trl is not installed: pip install 'conductor-gym[trl]'")
    return missing


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.trainers.trl.gpu_smoke",
        description="check a paper-scale GRPO recipe (TRL + vLLM) on one GPU in minutes",
    )
    add = parser.add_argument
    add(
        "--recipe",
        choices=SMOKE_RECIPES,
        default=SMOKE_RECIPES[0],
        help=f"the recipe to shrink (default {SMOKE_RECIPES[0]}; paper-adapt: the randomised "
        "pool, k of n workers under shuffled ids, named in the prompt)",
    )
    add("--model", default=DEFAULT_MODEL, help=f"HF id or folder (default {DEFAULT_MODEL})")
    add("--iterations", type=int, default=2, help="GRPO optimizer steps (default 2)")
    add("--num-generations", type=int, default=8, help="rollouts per question (default 8)")
    add("--questions", type=int, default=2, help="questions per step (default 2)")
    add("--micro-batch", type=int, default=8, help="per_device_train_batch_size (default 8)")
    add("--max-completion-length", type=int, default=256, help="tokens (default 256)")
    add(
        "--vllm-gpu-memory-utilization",
        type=float,
        default=0.3,
        help="share of the GPU's memory vLLM may take (default 0.3, TRL's default)",
    )
    add("--output-dir", default="runs/gpu-smoke")
    add("--seed", type=int, default=0)
    add("--dry-run", action="store_true", help="print the settings and exit (no GPU needed)")
    return parser


def smoke_settings(args: argparse.Namespace) -> Any:
    """The ``Args`` of the smoke run: those of the recipe ``args.recipe`` names
    (:data:`SMOKE_RECIPES`), its env kept.

    The recipe with vLLM in colocate mode on one process: a generation batch of
    ``num_generations x questions`` completions, consumed by one optimizer step
    (``gradient_accumulation_steps = batch / micro_batch``). Raises ``ValueError``
    naming the option when the batch arithmetic does not divide.
    """
    if args.iterations < 1:
        raise ValueError(f"--iterations must be >= 1, got {args.iterations}")
    if args.num_generations < 2:
        raise ValueError(f"--num-generations must be >= 2 (GRPO), got {args.num_generations}")
    if args.questions < 1:
        raise ValueError(f"--questions must be >= 1, got {args.questions}")
    batch = args.num_generations * args.questions
    if args.micro_batch < 1 or batch % args.micro_batch:
        raise ValueError(
            f"--micro-batch ({args.micro_batch}) must divide the generation batch "
            f"(--num-generations x --questions = {batch})"
        )
    if not 0.0 < args.vllm_gpu_memory_utilization < 1.0:
        raise ValueError(
            "--vllm-gpu-memory-utilization must be in (0, 1), "
            f"got {args.vllm_gpu_memory_utilization}"
        )
    from .train import make_args

    return make_args(
        args.recipe,
        model=args.model,
        output_dir=args.output_dir,
        iterations=args.iterations,
        train_tasks=max(16, 4 * args.questions * args.iterations),
        num_generations=args.num_generations,
        use_vllm=True,
        vllm_mode="colocate",
        seed=args.seed,
        precision="bf16",
        grpo_overrides={
            "num_processes": 1,
            "generation_batch_size": batch,
            "per_device_train_batch_size": args.micro_batch,
            "gradient_accumulation_steps": batch // args.micro_batch,
            "max_completion_length": args.max_completion_length,
            "vllm_gpu_memory_utilization": args.vllm_gpu_memory_utilization,
            # the default conductor prompt is about 1,500 tokens
            "vllm_max_model_length": 2048 + args.max_completion_length,
            "save_strategy": "no",
        },
    )


def rewards_by_step(log_history: Sequence[dict[str, Any]]) -> list[tuple[int, float]]:
    """``(step, mean reward)`` for every logged training step (TRL's ``reward`` key)."""
    return [
        (int(entry["step"]), float(entry["reward"]))
        for entry in log_history
        if "reward" in entry and "step" in entry
    ]


def _summary(result: Any, wall_s: float, torch: Any) -> dict[str, Any]:
    free, total = torch.cuda.mem_get_info()
    steps = [e for e in result.log_history if "reward" in e]
    return {
        "recipe": result.settings.recipe,
        "model": result.settings.model,
        "gpu": torch.cuda.get_device_name(0),
        "wall_s": round(wall_s, 1),
        "timings": {k: round(v, 1) for k, v in result.timings.items()},
        # the torch allocator of this process (the policy, its optimizer and the
        # colocated vLLM engine); device_used also counts what the allocator caches
        "peak_allocated_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "peak_reserved_gib": round(torch.cuda.max_memory_reserved() / 2**30, 2),
        "device_used_gib": round((total - free) / 2**30, 2),
        "device_total_gib": round(total / 2**30, 2),
        "rewards": rewards_by_step(result.log_history),
        "mean_completion_tokens": [e.get("completions/mean_length") for e in steps],
        "step_time_s": [e.get("step_time") for e in steps],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the smoke check; 0 on success, :data:`MISSING_EXIT` when a requirement is
    missing (each printed to stderr). A bad option exits with argparse's status 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        settings = smoke_settings(args)
    except ValueError as error:
        parser.error(str(error))
    if args.dry_run:
        from .recipes.common import TrainResult

        print(json.dumps(TrainResult(settings, []).to_dict()["settings"], default=str))
        return 0
    missing = missing_requirements()
    if missing:
        for line in missing:
            print(f"gpu_smoke: {line}", file=sys.stderr)
        print("gpu_smoke: nothing was run (see docs/training-gpu.md)", file=sys.stderr)
        return MISSING_EXIT

    torch = importlib.import_module("torch")
    from .train import train

    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    result = train(settings)
    summary = _summary(result, time.perf_counter() - start, torch)
    out = Path(settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "smoke.json").write_text(json.dumps(summary, indent=2))
    print(
        f"{summary['recipe']}: {summary['model']} on {summary['gpu']}: {args.iterations} "
        f"GRPO steps in {summary['wall_s']:.0f} s; "
        f"peak allocated {summary['peak_allocated_gib']:.1f} GiB "
        f"(reserved {summary['peak_reserved_gib']:.1f}, device in use "
        f"{summary['device_used_gib']:.1f} of {summary['device_total_gib']:.0f} GiB)"
    )
    for step, reward in summary["rewards"]:
        print(f"step {step}: reward {reward:.3f}")
    print(f"summary: {out / 'smoke.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
