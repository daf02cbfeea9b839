"""A GBNF grammar of well-formed conductor plans, for small models on llama.cpp.

A 135M conductor (SmolLM2) rarely writes the plan's three lists on its own: unconstrained,
nearly every reply is unparseable and scores 0. llama.cpp's OpenAI endpoint takes a GBNF
``grammar`` as a sampling field, and verifiers forwards extra sampling keys, so
``vf-eval ... --sampling.grammar "$(python -m conductor_gym.trainers.verifiers.grammar)"``
constrains every reply to a plan of 1 to ``max_steps`` steps over ``Model 0`` to
``Model workers - 1``: the first step sees no earlier step, every later step sees all of
them (``access_list = [[], "all", ...]``). The grammar fixes only the format; the model
still picks the workers and writes the subtasks.

``python -m conductor_gym.trainers.verifiers.grammar [--workers N] [--max-steps S]``
prints it.
"""

from __future__ import annotations

import argparse
import sys

from conductor_gym.errors import ConfigurationError

__all__ = ["plan_grammar"]


def plan_grammar(workers: int = 3, max_steps: int = 2) -> str:
    """The GBNF grammar of plans with 1 to ``max_steps`` steps over workers
    ``0 .. workers - 1`` (``workers`` at most 10: one digit). Raises
    :class:`~conductor_gym.errors.ConfigurationError` naming the bad argument."""
    if not isinstance(workers, int) or not 1 <= workers <= 10:
        raise ConfigurationError(f"must be an int in 1..10, got {workers!r}", field="workers")
    if not isinstance(max_steps, int) or not 1 <= max_steps <= 5:
        raise ConfigurationError(f"must be an int in 1..5, got {max_steps!r}", field="max_steps")
    rules = [f"root ::= {' | '.join(f'plan{n}' for n in range(1, max_steps + 1))}"]
    for n in range(1, max_steps + 1):
        ids = ' ", " '.join(["id"] * n)
        subtasks = ' ", " '.join(["str"] * n)
        access = ", ".join(["[]", *['\\"all\\"'] * (n - 1)])
        rules.append(
            f'plan{n} ::= "model_id = [" {ids} "]\\nsubtasks = [" {subtasks} '
            f'"]\\naccess_list = [{access}]"'
        )
    rules.append(f"id ::= [0-{workers - 1}]")
    rules.append('str ::= "\\"" [a-zA-Z ,.]{3,40} "\\""')
    return "\n".join(rules) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print :func:`plan_grammar` for the command line's arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.trainers.verifiers.grammar",
        description="Print a GBNF grammar of well-formed conductor plans (for llama.cpp).",
    )
    parser.add_argument(
        "--workers", type=int, default=3,
        help="the workers a plan may name: Model 0 .. workers-1 (the run's k; default 3)",
    )  # fmt: skip
    parser.add_argument(
        "--max-steps", type=int, default=2, help="the most steps of a plan (default 2)"
    )
    args = parser.parse_args(argv)
    try:
        sys.stdout.write(plan_grammar(args.workers, args.max_steps))
    except ConfigurationError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
