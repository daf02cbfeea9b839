"""The ``"ansi"`` rendering of an episode: a plain-text account for people."""

from __future__ import annotations

from collections.abc import Sequence

from conductor_gym.core.episode import Round
from conductor_gym.core.info import StepInfo
from conductor_gym.tasks import Task

__all__ = ["render_episode"]


def render_episode(
    task: Task, pool: Sequence[str], rounds: Sequence[Round], info: StepInfo | None
) -> str:
    """The question, the pool, every round's steps, and the outcome so far."""
    lines = [f"task {task.id} [{task.domain}]", f"Q: {task.question}"]
    lines.append("pool: " + ", ".join(f"Model {i}={name}" for i, name in enumerate(pool)))
    if not rounds:
        lines.append("(awaiting a plan)")
    for r in rounds:
        if len(rounds) > 1 or r.index > 0:
            lines.append(f"-- round {r.index}")
        if r.parse_error is not None:
            lines.append(f"invalid plan: {r.parse_error['reason']}: {r.parse_error['detail']}")
        elif r.plan is not None and r.plan.is_empty:
            lines.append("empty plan: the current answer is final")
        for step in r.trace.steps if r.trace is not None else ():
            seen = f"steps {list(step.visible)}" if step.visible else "no earlier step"
            lines.append(f"step {step.index}: Model {step.model_id} ({step.worker}) sees {seen}")
            lines.append(f"  subtask:  {step.subtask}")
            lines.append(f"  response: {step.response}")
        for n, call in enumerate(r.self_calls):
            lines.append(f"  inner call {n}: {len(call.plan)} step(s) on {call.question[:60]!r}")
    if info is not None:
        if (g := info["grade"]) is not None:
            lines.append(f"grade: correct={g.correct} extracted={g.extracted!r} ({g.reason})")
        if info["error"] is not None:
            lines.append(f"error: {info['error']}")
        lines.append(f"outcome: {info['outcome']}")
    return "\n".join(lines) + "\n"
