"""The compact-action policy network: what its trainer and its agent share.

:mod:`conductor_gym.trainers.classic.ppo_compact` trains it on
:class:`~conductor_gym.CompactPlanAction`; the ``compact:<path>`` agent
(:class:`conductor_gym.agents.CompactPolicy`) plays the ``policy.pt`` it writes
(:func:`save_policy`, :func:`load_policy`): the network's weights and everything needed to
read an episode the way it trained (:class:`PolicyShape`: the question families, the
worker names of the pool, ``k``, ``max_steps``, the role templates).

* :func:`observation_features`: the question's family (an unseen family reads as none)
  and, per ``Model i``, the name of the worker the episode lists there; never the
  question's text, an answer or a worker's skill;
* :func:`build_network`: the actor-critic network; :func:`sample_actions` samples (or
  scores, or picks greedily) action vectors of the compact action space.

torch is imported only inside the functions that need it, never by importing this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FORMAT",
    "PolicyShape",
    "active_entries",
    "build_network",
    "load_policy",
    "observation_features",
    "sample_actions",
    "save_policy",
]

FORMAT = "conductor-gym compact policy v1"
"""The ``format`` field of a ``policy.pt`` this module reads."""


class PolicyShape:
    """What fixes the network's shape and how an episode is read: the question
    ``families``, the pool's worker ``names`` (in the pool's order), ``k`` workers an
    episode, ``max_steps``, the ``roles`` (template name -> subtask, as
    :class:`RoleTemplates`), the ``hidden`` width and ``sequential_workers`` (module
    :mod:`~conductor_gym.trainers.classic.ppo_compact`)."""

    def __init__(
        self,
        *,
        families: Sequence[str],
        names: Sequence[str],
        k: int,
        max_steps: int,
        roles: Mapping[str, str | None],
        hidden: int,
        sequential_workers: bool,
    ) -> None:
        self.families = tuple(families)
        self.names = tuple(names)
        self.k = int(k)
        self.max_steps = int(max_steps)
        self.roles = dict(roles)
        self.hidden = int(hidden)
        self.sequential_workers = bool(sequential_workers)

    @property
    def observation_size(self) -> int:
        return len(self.families) + self.k * len(self.names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "families": list(self.families),
            "names": list(self.names),
            "k": self.k,
            "max_steps": self.max_steps,
            "roles": self.roles,
            "hidden": self.hidden,
            "sequential_workers": self.sequential_workers,
        }


def observation_features(
    families: Sequence[str], names: Sequence[str], k: int, domain: str, pool: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The policy's input for an episode of family ``domain`` whose ``Model i`` is the
    worker ``pool[i]``, for a policy that knows ``families`` and the worker ``names`` and
    reads ``k`` workers an episode: the family one-hot (an unknown family: all zeros),
    then one one-hot of the worker name per ``Model`` position; and each position's
    worker as an index into ``names``. Raises ``ValueError`` for a pool of another size
    or a name not in ``names``."""
    if len(pool) != k:
        raise ValueError(f"the episode lists {len(pool)} workers; the policy reads k={k}")
    unknown = [n for n in pool if n not in names]
    if unknown:
        raise ValueError(f"worker(s) {unknown} are not in the policy's pool {list(names)}")
    features = np.zeros(len(families) + k * len(names), dtype=np.float32)
    if domain in families:
        features[list(families).index(domain)] = 1.0
    ids = np.array([list(names).index(n) for n in pool], dtype=np.int64)
    features[len(families) + np.arange(k) * len(names) + ids] = 1.0
    return features, ids


def build_network(shape: PolicyShape) -> Any:
    """The actor-critic network (a ``torch.nn.Module``) for ``shape``: a critic MLP, and
    an actor MLP trunk with one head per entry of the compact action; a step's worker
    head scores worker *names* and is read at the names the episode lists, so "ask
    gpt-5" is one logit whatever ``Model i`` it is drawn as. With
    ``sequential_workers`` two further heads: one score per name added to every step's
    worker logits (a ranking of the names for this question, learned from every step's
    choices at once), and per pair of steps a score for asking the earlier step's worker
    again (:func:`sample_actions`), so "the next best worker not yet asked" and "a check
    by the first step's worker" are each one choice."""
    import torch
    from torch import nn

    steps, roles, names = shape.max_steps, len(shape.roles), len(shape.names)

    def layer(n_in: int, n_out: int, std: float = float(np.sqrt(2))) -> nn.Linear:
        linear = nn.Linear(n_in, n_out)
        nn.init.orthogonal_(linear.weight, std)
        nn.init.constant_(linear.bias, 0.0)
        return linear

    class Network(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            size, h = shape.observation_size, shape.hidden
            self.critic = nn.Sequential(
                layer(size, h), nn.Tanh(), layer(h, h), nn.Tanh(), layer(h, 1, 1.0)
            )
            self.trunk = nn.Sequential(layer(size, h), nn.Tanh(), layer(h, h), nn.Tanh())
            self.length = layer(h, steps, 0.01)
            self.worker = layer(h, steps * names, 0.01)
            self.role = layer(h, (steps - 1) * roles, 0.01)
            self.access = layer(h, (steps - 1) * 2, 0.01)
            sequential = shape.sequential_workers
            self.quality = layer(h, names, 0.01) if sequential else None
            self.repeat = layer(h, steps * steps, 0.01) if sequential else None

        def value(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.critic(x).squeeze(-1)
            return out

        def heads(
            self, x: torch.Tensor, pool: torch.Tensor
        ) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor | None, list[torch.Tensor]]:
            """The length's logits; each step's worker logits over the ``Model``
            positions (before the repeat term); the repeat term ``[batch, step, earlier
            step]`` (``None`` without ``sequential_workers``); each later step's role
            logits, then each later step's access logits."""
            h = self.trunk(x)
            batch = x.shape[0]
            by_name = self.worker(h).view(batch, steps, names)
            if self.quality is not None:  # one ranking of the names, shared by every step
                by_name = by_name + self.quality(h)[:, None, :]
            workers = by_name.gather(2, pool[:, None, :].expand(batch, steps, pool.shape[1]))
            role = self.role(h).view(batch, steps - 1, roles)
            access = self.access(h).view(batch, steps - 1, 2)
            repeat = None if self.repeat is None else self.repeat(h).view(batch, steps, steps)
            rest = [*role.unbind(1), *access.unbind(1)]
            return self.length(h), list(workers.unbind(1)), repeat, rest

    return Network()


def active_entries(actions: Any, steps: int, attempt: int) -> Any:
    """Which entries of each action vector the structure reads (a boolean tensor): the
    length; the workers of its steps; the role of each later step and its access unless
    the role is ``attempt`` (role index ``attempt``)."""
    import torch

    length = actions[:, 0:1] + 1
    slot = torch.arange(steps)[None, :]
    later = torch.arange(1, steps)[None, :]
    roles = actions[:, 1 + steps : 2 * steps]
    worker_on = slot < length
    role_on = later < length
    access_on = role_on & (roles != attempt)
    return torch.cat([torch.ones_like(length, dtype=torch.bool), worker_on, role_on, access_on], 1)


def sample_actions(
    network: Any,
    x: Any,
    pool: Any,
    steps: int,
    attempt: int,
    action: Any = None,
    greedy: bool = False,
) -> tuple[Any, Any, Any, Any]:
    """An action per row (sampled, greedy, or the given ``action``), its log-probability
    and entropy over the entries the structure reads (:func:`active_entries`), and the
    critic's value. Workers are chosen step by step: with ``sequential_workers`` a step's
    worker logits add, for each earlier step, that pair's repeat score at the earlier
    step's worker."""
    import torch
    from torch.distributions import Categorical

    length, workers, repeat, rest = network.heads(x, pool)

    def pick(d: Any, i: int) -> Any:
        if action is not None:
            return action[:, i]
        return d.probs.argmax(-1) if greedy else d.sample()

    dists: list[Any] = [Categorical(logits=length)]
    chosen = [pick(dists[0], 0)]
    asked: list[Any] = []  # one-hot over Model positions of each earlier step's worker
    for i, logits in enumerate(workers):
        if repeat is not None:
            for j, earlier in enumerate(asked):
                logits = logits + repeat[:, i, j, None] * earlier
        dists.append(Categorical(logits=logits))
        chosen.append(pick(dists[-1], 1 + i))
        asked.append(torch.nn.functional.one_hot(chosen[-1], logits.shape[-1]).float())
    for logits in rest:
        dists.append(Categorical(logits=logits))
        chosen.append(pick(dists[-1], len(chosen)))
    actions = torch.stack(chosen, 1)
    mask = active_entries(actions, steps, attempt).float()
    logp = torch.stack([d.log_prob(actions[:, i]) for i, d in enumerate(dists)], 1)
    entropy = torch.stack([d.entropy() for d in dists], 1)
    return actions, (logp * mask).sum(1), (entropy * mask).sum(1), network.value(x)


def save_policy(path: str | os.PathLike[str], network: Any, shape: PolicyShape) -> Path:
    """Write ``network`` (its weights, float32) and ``shape`` as a ``policy.pt`` that
    ``compact:<path>`` plays; returns the path."""
    import torch

    target = Path(path)
    partial = target.with_suffix(".tmp")
    torch.save(
        {"format": FORMAT, "shape": shape.to_dict(), "network": network.state_dict()}, partial
    )
    os.replace(partial, target)
    return target


def load_policy(path: str | os.PathLike[str]) -> tuple[Any, PolicyShape]:
    """The network and shape a ``policy.pt`` holds (in evaluation mode). Raises
    ``ValueError`` naming the file when it is not one :func:`save_policy` wrote."""
    import torch

    try:
        state = torch.load(path, weights_only=True)
    except Exception as error:  # any unreadable file: one line naming it
        raise ValueError(f"{path}: not a compact policy file ({type(error).__name__})") from error
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(f"{path}: not a compact policy file (format {FORMAT!r})")
    shape = PolicyShape(**state["shape"])
    network = build_network(shape)
    network.load_state_dict(state["network"])
    network.eval()
    return network, shape
