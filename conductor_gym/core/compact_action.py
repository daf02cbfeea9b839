"""The compact plan action: a plan's structure, with its text written from templates.

:class:`CompactPlanAction` wraps a :class:`~conductor_gym.core.env.ConductorEnv` so that an
action is only a plan's **structure**: how many steps, which ``Model i`` each step asks,
and each later step's **role** and **access**. The wrapper writes the plan's subtasks from
:class:`RoleTemplates` and hands the env the full completion; rewards, ``info`` and
episode end are the env's own.

What it removes, plainly: the policy no longer words its subtasks. Every plan it can play
is one of the templates' plans, so a conductor trained on it learns *which* workers to ask
and *how to combine* them (per question), never how to phrase a request. That is the
part of the paper's problem where the headroom of a randomised pool lies (adaptivity),
at a small fraction of the sampling cost: about 8 tokens an action instead of ~100.

Two forms of the same action:

* **Discrete** (classic RL: PPO, tabular learners): a vector in
  :attr:`CompactPlanAction.action_space`, a ``gymnasium.spaces.MultiDiscrete`` of
  ``1 + S + 2 (S - 1)`` entries for ``S = max_steps``: ``steps - 1``; the worker of each
  of the ``S`` step slots (``0 .. k-1``); the role of each later slot (an index into
  ``templates.roles``); the access of each later slot (``0``: ``"all"``, ``1``: only the
  step before). Slots past ``steps`` are ignored, so every vector is a valid plan.
* **Text** (a small LM that writes a few tokens): ``"2 attempt | 0 check | 1 vote/prev"``:
  one ``"<worker> <role>"`` per step, ``|`` between steps, ``/prev`` after a later role to
  see only the step before (``/all``, the default, sees every earlier step). The first
  step is always ``attempt``. A text that does not read as a structure is played as
  written, so the env scores it as it would any completion (an unparsable plan: reward 0,
  ``info["parse_error"]``), and ``info["compact_error"]`` says what the wrapper could not
  read.

The first step always carries the question (the env shows a later step only the
subtasks and answers it accesses). Role ``attempt`` is an independent attempt at the
question (its subtask is the question, access ``[]``) at any position.

Example::

    env = CompactPlanAction(ConductorEnv(k=4))
    obs, info = env.reset(seed=0)
    env.step("1 attempt | 3 attempt | 0 check")
    env.step(env.action_space.sample())

Version History

* v0 (this release): roles ``attempt``, ``solve``, ``check``, ``vote``; access ``all`` /
  ``prev``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from conductor_gym.core.env import ConductorEnv
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Access, Plan

__all__ = ["ACCESS", "CompactPlanAction", "RoleTemplates", "Structure", "structure_from_vector"]

ACCESS: tuple[str, ...] = ("all", "prev")
"""A later step's access choices: every earlier step, or only the step before."""

_DEFAULT_ROLES: dict[str, str | None] = {
    "attempt": None,
    "solve": "Solve the problem above and end with the final answer.",
    "check": "Check the answers above and give the correct one as your final answer.",
    "vote": "Give the answer that most of the answers above agree on.",
}


@dataclass(frozen=True)
class RoleTemplates:
    """The subtask each role writes: ``None`` copies the question (and sees no earlier
    step); a string is the subtask of a step that sees earlier steps. Replace it to word
    the plans your own way; role ``attempt`` (the question, copied) must stay, since the
    first step carries the question."""

    roles: Mapping[str, str | None] = field(default_factory=lambda: dict(_DEFAULT_ROLES))

    def __post_init__(self) -> None:
        if self.roles.get("attempt", "") is not None:
            raise ConfigurationError(
                "must map 'attempt' to None (the question, copied)", field="roles"
            )
        for name, text in self.roles.items():
            if not re.fullmatch(r"[a-z][a-z_-]*", name):
                raise ConfigurationError(
                    f"role name {name!r}: lower-case letters, '_' or '-'", field="roles"
                )
            if text is not None and not (isinstance(text, str) and text.strip()):
                raise ConfigurationError(f"role {name!r}: empty subtask", field="roles")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.roles)


@dataclass(frozen=True)
class Structure:
    """A plan without its words: ``workers[i]``, ``roles[i]`` and ``access[i]`` (``"all"``
    or ``"prev"``; ignored for ``attempt``) of step ``i``; ``roles[0]`` is ``attempt``."""

    workers: tuple[int, ...]
    roles: tuple[str, ...]
    access: tuple[str, ...]

    def plan(self, question: str, templates: RoleTemplates) -> Plan:
        """The full plan for ``question``."""
        subtasks: list[str] = []
        access: list[Access] = []
        for i, (role, seen) in enumerate(zip(self.roles, self.access, strict=True)):
            text = templates.roles[role]
            subtasks.append(question if text is None else text)
            if text is None:
                access.append(())
            else:
                access.append("all" if seen == "all" else (i - 1,))
        return Plan(model_ids=self.workers, subtasks=tuple(subtasks), access=tuple(access))

    def to_text(self) -> str:
        """The text form (module docstring): ``"2 attempt | 0 check/prev"``."""
        return " | ".join(
            f"{w} {r}" + ("/prev" if i and a == "prev" and r != "attempt" else "")
            for i, (w, r, a) in enumerate(zip(self.workers, self.roles, self.access, strict=True))
        )


def structure_from_vector(
    vector: Sequence[int] | np.ndarray, *, max_steps: int, role_names: Sequence[str]
) -> Structure:
    """The :class:`Structure` an action vector of :attr:`CompactPlanAction.action_space`
    encodes (for ``max_steps`` and the templates' ``role_names``; module docstring).
    The vector is not range-checked here (:meth:`CompactPlanAction.structure` does)."""
    s = max_steps
    values = [int(v) for v in vector]
    steps = values[0] + 1
    workers = tuple(values[1 : 1 + steps])
    role_ids = values[1 + s : 1 + s + (s - 1)]
    access_ids = values[1 + s + (s - 1) :]
    roles = ("attempt", *(role_names[r] for r in role_ids[: steps - 1]))
    access = ("all", *(ACCESS[a] for a in access_ids[: steps - 1]))
    return Structure(workers, roles, access)


_STEP = re.compile(r"\s*(\d+)\s+([a-z][a-z_-]*)\s*(?:/\s*(all|prev))?\s*")


def read_structure(
    text: str, *, num_workers: int, max_steps: int, templates: RoleTemplates
) -> Structure:
    """The :class:`Structure` a text form writes (its last line that reads as one, so a
    short reasoning line before it is allowed). Raises ``ValueError`` saying what does not
    read."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise ValueError("empty action: write steps like '2 attempt | 0 check'")
    problem = ""
    for line in reversed(lines):
        try:
            return _read_line(line, num_workers, max_steps, templates)
        except ValueError as error:
            problem = problem or str(error)
    raise ValueError(problem)


def _read_line(line: str, num_workers: int, max_steps: int, templates: RoleTemplates) -> Structure:
    parts = line.strip().strip("`").split("|")
    if len(parts) > max_steps:
        raise ValueError(f"{len(parts)} steps; at most {max_steps}")
    workers, roles, access = [], [], []
    for i, part in enumerate(parts):
        found = _STEP.fullmatch(part)
        if found is None:
            raise ValueError(f"step {i}: {part.strip()!r} is not '<worker> <role>'")
        worker, role, seen = int(found[1]), found[2], found[3] or "all"
        if worker >= num_workers:
            raise ValueError(f"step {i}: Model {worker} is not listed (0..{num_workers - 1})")
        if role not in templates.roles:
            raise ValueError(
                f"step {i}: unknown role {role!r}; roles: {', '.join(templates.names)}"
            )
        if i == 0 and role != "attempt":
            raise ValueError("step 0 must be 'attempt' (the first step carries the question)")
        workers.append(worker)
        roles.append(role)
        access.append(seen)
    return Structure(tuple(workers), tuple(roles), tuple(access))


class CompactPlanAction(gym.ActionWrapper[Any, Any, str]):
    """Play a plan's structure on a :class:`ConductorEnv` (module docstring).

    Args:
        env: The env (not recursive: ``max_recursions`` must be 0).
        templates: The role subtasks (:class:`RoleTemplates`; default: ours).

    The action space is ``MultiDiscrete`` (module docstring); :meth:`step` also takes the
    text form. ``info["compact_action"]`` holds the structure played in text form.
    """

    def __init__(self, env: gym.Env[Any, Any], templates: RoleTemplates | None = None) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not isinstance(base, ConductorEnv):
            raise ConfigurationError("wraps a ConductorEnv", field="env")
        if base.max_recursions:
            raise ConfigurationError(
                "the compact action plays one plan an episode; use max_recursions=0",
                field="max_recursions",
            )
        self.templates = templates or RoleTemplates()
        self.num_workers = base.pool.k or base.pool.n
        self.max_steps = base.max_steps
        later = self.max_steps - 1
        self.action_space = gym.spaces.MultiDiscrete(
            [self.max_steps]
            + [self.num_workers] * self.max_steps
            + [len(self.templates.roles)] * later
            + [len(ACCESS)] * later
        )
        self._question = ""
        self._compact_error: str | None = None
        self._played: Structure | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, Any]:
        observation, info = self.env.reset(**kwargs)
        self._question = info["question"]
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        info = dict(info)
        if self._played is not None:
            info["compact_action"] = self._played.to_text()
        if self._compact_error is not None:
            info["compact_error"] = self._compact_error
        return observation, reward, terminated, truncated, info

    def structure(self, action: Sequence[int] | np.ndarray) -> Structure:
        """The structure a :attr:`action_space` vector encodes."""
        vector = np.asarray(action, dtype=np.int64)
        if vector.shape != self.action_space.shape or not self.action_space.contains(vector):
            raise ValueError(
                f"action {vector.tolist()} is not in {self.action_space} (module docstring)"
            )
        return structure_from_vector(
            vector, max_steps=self.max_steps, role_names=self.templates.names
        )

    def action(self, action: Any) -> str:
        """The completion the env plays for ``action`` (a vector or the text form)."""
        self._compact_error = None
        self._played = None
        if isinstance(action, str):
            try:
                self._played = read_structure(
                    action,
                    num_workers=self.num_workers,
                    max_steps=self.max_steps,
                    templates=self.templates,
                )
            except ValueError as error:
                self._compact_error = str(error)
                return action  # the env scores it as written: an unparsable plan
        else:
            self._played = self.structure(action)
        return self._played.plan(self._question, self.templates).to_text()
