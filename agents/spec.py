"""Agent specs: the short strings the CLI and harnesses use to build an agent.

Grammar (``<id>`` and ``<n>`` are non-negative / positive integers)::

    random                   RandomPlanner
    single:<id>              SingleWorker(<id>)
    best-single              BestSingle.from_spec(**kwargs): calibrates unless given
                             ranking=/overall=
    reflect:<id>:<n>         SelfReflection(<id>, <n>)
    consensus:<id>:<n>       Consensus(<id>, <n>)
    moa                      MixtureOfAgents()
    llm:<litellm-model>      LLMConductor("<litellm-model>")  (the rest of the spec,
                             colons included)
    policy:<path>            PolicyConductor("<path>")
    path/to/file.py:Name     Name(**kwargs) from that file (a class or a factory)

Keyword arguments of :func:`make_agent` go to the factory. Any malformed spec raises
``ValueError`` naming the spec and listing the valid forms.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from .base import Agent
from .best_single import BestSingle
from .fixed import Consensus, MixtureOfAgents, SelfReflection, SingleWorker
from .llm import LLMConductor
from .policy import PolicyConductor
from .random_planner import RandomPlanner

__all__ = ["AGENTS", "SPEC_FORMS", "load_agent_file", "make_agent"]

AGENTS: dict[str, Callable[..., Agent]] = {
    "random": RandomPlanner,
    "single": SingleWorker,
    "best-single": BestSingle.from_spec,
    "reflect": SelfReflection,
    "consensus": Consensus,
    "moa": MixtureOfAgents,
    "llm": LLMConductor,
    "policy": PolicyConductor,
}
"""Short name -> agent factory (positional arguments are the spec's fields)."""

SPEC_FORMS = (
    "random",
    "single:<id>",
    "best-single",
    "reflect:<id>:<n>",
    "consensus:<id>:<n>",
    "moa",
    "llm:<litellm-model>",
    "policy:<path>",
    "path/to/file.py:ClassName",
)
"""Every valid spec form, for help texts and errors."""

_FILE_SPEC = re.compile(r"(?P<file>.+\.py):(?P<attr>[A-Za-z_]\w*)")
_INT_FIELDS = {"single": 1, "reflect": 2, "consensus": 2}
_MINIMUM = {"single": (0,), "reflect": (0, 1), "consensus": (0, 1)}


def _bad(spec: object, why: str) -> ValueError:
    return ValueError(f"agent spec {spec!r}: {why}; valid forms: {', '.join(SPEC_FORMS)}")


def make_agent(spec: str, **kwargs: Any) -> Agent:
    """Build the agent that ``spec`` names (module docstring), passing ``kwargs`` on."""
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(spec, "an agent spec must be a non-empty string")
    head, sep, rest = spec.partition(":")
    if head in ("llm", "policy"):
        if not rest.strip():
            what = "a LiteLLM model string" if head == "llm" else "a checkpoint path"
            raise _bad(spec, f"give {what} after '{head}:'")
        return AGENTS[head](rest, **kwargs)
    if match := _FILE_SPEC.fullmatch(spec):
        return load_agent_file(match["file"], match["attr"], **kwargs)
    if head.endswith(".py"):
        raise _bad(spec, "a file spec needs the class after the file: file.py:ClassName")
    if head in ("random", "best-single", "moa"):
        if sep:
            raise _bad(spec, f"'{head}' takes no ':' fields")
        return AGENTS[head](**kwargs)
    if head in _INT_FIELDS:
        fields = rest.split(":") if sep else []
        if len(fields) != _INT_FIELDS[head]:
            raise _bad(spec, f"'{head}' takes {_INT_FIELDS[head]} integer field(s)")
        values: list[int] = []
        for field, low in zip(fields, _MINIMUM[head], strict=True):
            if not re.fullmatch(r"\d+", field.strip()) or int(field) < low:
                raise _bad(spec, f"{field!r} is not an integer >= {low}")
            values.append(int(field))
        return AGENTS[head](*values, **kwargs)
    raise _bad(spec, f"unknown agent {head!r}")


def load_agent_file(path: str, name: str, **kwargs: Any) -> Agent:
    """``name(**kwargs)`` from the Python file at ``path`` (the ``file.py:Name`` form).

    The file is imported once per process (as a module named after a hash of its
    resolved path), like OpenRLHF loads its agent functions. Raises ``ValueError`` when
    the file or the name is missing, and ``TypeError`` when what ``name`` builds has no
    ``act`` and ``act_batch``.
    """
    spec = f"{path}:{name}"
    file = Path(path)
    if not file.is_file():
        raise _bad(spec, f"no such file {str(file)!r}")
    module = _import_file(file)
    factory = getattr(module, name, None)
    if not callable(factory):
        raise _bad(spec, f"{str(file)!r} defines no class or function {name!r}")
    agent = factory(**kwargs)
    if not isinstance(agent, Agent):
        raise TypeError(
            f"agent spec {spec!r}: {name}(...) built a {type(agent).__name__}, which lacks "
            "act(observation, info) and async act_batch(observations, infos)"
        )
    return agent


def _import_file(file: Path) -> ModuleType:
    resolved = str(file.resolve())
    module_name = f"conductor_gym_agent_file_{hashlib.sha256(resolved.encode()).hexdigest()[:16]}"
    if (module := sys.modules.get(module_name)) is not None:
        return module
    import_spec = importlib.util.spec_from_file_location(module_name, resolved)
    if import_spec is None or import_spec.loader is None:
        raise ValueError(f"cannot import {resolved!r} as a Python module")
    module = importlib.util.module_from_spec(import_spec)
    sys.modules[module_name] = module
    try:
        import_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
