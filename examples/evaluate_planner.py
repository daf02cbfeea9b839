"""Evaluate planners on a suite and compare them: accuracy, reward, cost per sample.

    python examples/evaluate_planner.py                       # offline, simulated pool
    python examples/evaluate_planner.py --agents best-single random --limit 40 --repeats 4
    python examples/evaluate_planner.py --pool examples/pools/openai.toml   # real workers

Every agent spec works (``random``, ``single:<id>``, ``best-single``, ``llm:<model>``,
``policy:<checkpoint>``, ``path/to/file.py:Class``); each run is saved as a results file
that ``conductor-gym view`` and ``conductor-gym leaderboard submit`` read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from conductor_gym.bench.evaluate import evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", nargs="+", default=["best-single", "random"],
                        help="agent specs to compare")  # fmt: skip
    parser.add_argument("--suite", default="offline", help="suite name (conductor-gym suites list)")
    parser.add_argument("--pool", default="sim-paper", help="pool preset or pool file")
    parser.add_argument("--limit", type=int, default=10, help="first N tasks per source")
    parser.add_argument("--repeats", type=int, default=2, help="repeats per task")
    parser.add_argument("--out-dir", default="runs/evaluate", help="where results files go")
    args = parser.parse_args()

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"{'agent':<14} {'accuracy':>16} {'reward':>7} {'steps':>6} {'$/sample':>10}")
    for spec in args.agents:
        results = evaluate(
            spec,
            args.suite,
            pool=args.pool,
            limit=args.limit,
            repeats=args.repeats,
            out=out_dir / f"{spec.replace(':', '_').replace('/', '_')}.json",
            resume=False,
            progress=False,
        )
        m = results.metrics["overall"]
        se = "" if m.accuracy_se is None else f"± {m.accuracy_se:.3f}"  # one repeat: none
        print(
            f"{spec:<14} {m.accuracy:>7.3f} {se:>8} {m.mean_reward:>7.3f} "
            f"{m.mean_steps:>6.2f} {m.cost_per_sample_usd:>10.5f}"
        )
    print(f"results in {out_dir}/ (conductor-gym view {out_dir}/<agent>.json draws one)")


if __name__ == "__main__":
    main()
