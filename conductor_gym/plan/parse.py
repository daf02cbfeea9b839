"""Turning located lists into a validated :class:`Plan` (see :mod:`conductor_gym.plan`)."""

from __future__ import annotations

from conductor_gym._validate import is_int
from conductor_gym.plan.model import NAMES, Access, Plan, PlanParseError
from conductor_gym.plan.scan import locate
from conductor_gym.plan.values import literal, short, single_value

__all__ = ["parse_plan"]


def _access_entry(entry: object, step: int) -> Access:
    if entry == "all" and isinstance(entry, str):
        return "all"
    if isinstance(entry, list | tuple):
        if len(entry) == 1 and entry[0] == "all" and isinstance(entry[0], str):
            return "all"
        if all(is_int(j) and 0 <= j < step for j in entry) and len(set(entry)) == len(entry):
            return tuple(sorted(entry))
    if step == 0:
        allowed = '[] or "all" (step 0 has no earlier steps)'
    else:
        allowed = f'[], "all" or a list of distinct step indices in 0..{step - 1}'
    raise PlanParseError(
        "bad_access", f"access_list[{step}] is {short(entry)}; step {step} needs {allowed}"
    )


def parse_plan(
    text: str,
    num_workers: int,
    max_steps: int = 5,
    *,
    max_chars: int = 65536,
    max_depth: int = 4,
) -> Plan:
    """Parse and validate the plan in a conductor completion.

    Args:
        text: The completion: free text ending (usually) in the three assignments.
        num_workers: Size of the episode's worker pool; model ids must be in
            ``0 .. num_workers - 1``.
        max_steps: Most steps a plan may have.
        max_chars: Longer texts are rejected unscanned (``too_long``).
        max_depth: Deepest bracket nesting accepted inside one list (``too_deep``).

    Returns:
        The last complete plan in ``text``; three empty lists give the empty plan.

    Raises:
        PlanParseError: The text holds no valid plan; ``reason`` is one of :data:`REASONS`.
        ValueError: ``num_workers``, ``max_steps``, ``max_chars`` or ``max_depth`` is out
            of range (a programming error, not a bad completion).
    """
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}")
    if max_chars < 0:
        raise ValueError(f"max_chars must be non-negative, got {max_chars}")
    if max_depth < 1:
        raise ValueError(f"max_depth must be at least 1, got {max_depth}")
    if len(text) > max_chars:
        raise PlanParseError(
            "too_long", f"the text has {len(text)} characters, more than the limit of {max_chars}"
        )

    group = locate(text, max_depth)
    for name in NAMES:
        single_value(text, group[name], max_depth)
    model_ids = literal(text, group["model_id"])
    subtasks = literal(text, group["subtasks"])
    access = literal(text, group["access_list"])

    n = len(model_ids)
    if len(subtasks) != n or len(access) != n:
        raise PlanParseError(
            "length_mismatch",
            f"model_id has {n} entries, subtasks {len(subtasks)}, access_list {len(access)}; "
            "they must be equally long",
        )
    if n == 0:
        return Plan((), (), ())
    if n > max_steps:
        raise PlanParseError("too_many_steps", f"the plan has {n} steps, at most {max_steps}")

    for step, mid in enumerate(model_ids):
        if not is_int(mid):
            raise PlanParseError(
                "bad_model_id", f"model_id[{step}] is {short(mid)}, not an integer worker id"
            )
        if not 0 <= mid < num_workers:
            raise PlanParseError(
                "unknown_worker",
                f"model_id[{step}] is {mid}, but the valid worker ids are 0..{num_workers - 1}",
            )
    for step, sub in enumerate(subtasks):
        if not isinstance(sub, str):
            raise PlanParseError(
                "bad_subtask",
                f"subtasks[{step}] is a {type(sub).__name__}, not a string: {short(sub)}",
            )
        if not sub.strip():
            raise PlanParseError("empty_subtask", f"subtasks[{step}] is empty: {short(sub)}")
    normalised = tuple(_access_entry(entry, step) for step, entry in enumerate(access))
    return Plan(tuple(model_ids), tuple(subtasks), normalised)
