"""Agent specs: the short strings the CLI and harnesses use to build an agent.

Each short name is registered once in :data:`AGENTS` with the lazy import path of its
factory and its **form**, the spec grammar of that name::

    random                   RandomPlanner(**kwargs)
    single:<id>              SingleWorker(<id>, **kwargs)
    best-single              BestSingle.from_spec(**kwargs)
    reflect:<id>:<n>         SelfReflection(<id>, <n>, **kwargs)
    consensus:<id>:<n>       Consensus(<id>, <n>, **kwargs)
    moa                      MixtureOfAgents(**kwargs)
    llm:<litellm-model>      LLMConductor("<litellm-model>", **kwargs)
    policy:<path>            PolicyConductor("<path>", **kwargs)
    plan:<path>              FixedPlan("<path>", **kwargs): a plan file, every question
    compact:<path>           CompactPolicy("<path>", **kwargs): a compact-action policy
    path/to/file.py:Name     Name(**kwargs) from that file (a class or a factory)
    <plug-in>[:<arg>]        an installed plug-in's factory([<arg>], **kwargs)

In a form, ``<id>`` is an integer >= 0, ``<n>`` an integer >= 1, and any other
``<field>`` (last only) takes the rest of the spec, colons included. A new agent is one
:func:`register_agent` call, or, from another distribution, one entry point in the group
``conductor_gym.agents`` (``myagent = "mypkg.agent:MyAgent"``); a built-in name wins over
a plug-in of the same name. Factories load on first use, so the harness never imports
an agent package it does not run. A malformed spec raises
:class:`~conductor_gym.errors.ConfigurationError` (a ``ValueError``) naming the spec and
listing the valid forms.
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

from conductor_gym.core.agent import Agent
from conductor_gym.errors import ConfigurationError
from conductor_gym.registry import Registry

__all__ = ["AGENTS", "load_agent_file", "make_agent", "register_agent", "spec_forms"]

AgentFactory = Callable[..., Agent]

AGENTS: Registry[AgentFactory] = Registry("agent", field="agent", group="conductor_gym.agents")
"""Short name -> agent factory (positional arguments are the spec's fields)."""

_FORMS: dict[str, tuple[str, ...]] = {}
_REST_HELP: dict[str, str] = {}
_FILE_FORM = "path/to/file.py:ClassName"
_FILE_SPEC = re.compile(r"(?P<file>.+\.py):(?P<attr>[A-Za-z_]\w*)")
_INT_MINIMUM = {"id": 0, "n": 1}


def register_agent(
    name: str, factory: str | AgentFactory, form: str | None = None, *, rest_help: str = ""
) -> None:
    """Register an agent short name: ``factory`` (or its ``"module:attr"`` path) and its
    ``form`` (default: ``name``, no fields), e.g. ``"reflect:<id>:<n>"``; ``rest_help``
    says what a free-text last field holds (for errors)."""
    form = form or name
    head, *fields = form.split(":")
    if head != name or not all(re.fullmatch(r"<[\w-]+>", f) for f in fields):
        raise ConfigurationError(f"agent form {form!r} must be {name!r} then ':<field>' parts")
    AGENTS.register(name, factory)
    _FORMS[name] = tuple(f[1:-1] for f in fields)
    if rest_help:
        _REST_HELP[name] = rest_help


def spec_forms() -> tuple[str, ...]:
    """Every valid spec form (installed plug-ins' included), for help texts and errors."""
    forms = [":".join([name, *(f"<{f}>" for f in fields)]) for name, fields in _FORMS.items()]
    plugins = [f"{name}[:<arg>]" for name in AGENTS.names() if name not in _FORMS]
    return (*forms, *plugins, _FILE_FORM)


def _bad(spec: object, why: str) -> ConfigurationError:
    return ConfigurationError(f"agent spec {spec!r}: {why}; valid forms: {', '.join(spec_forms())}")


def make_agent(spec: str, **kwargs: Any) -> Agent:
    """Build the agent that ``spec`` names (module docstring), passing ``kwargs`` on."""
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(spec, "an agent spec must be a non-empty string")
    if match := _FILE_SPEC.fullmatch(spec):
        return load_agent_file(match["file"], match["attr"], **kwargs)
    head, sep, rest = spec.partition(":")
    if head.endswith(".py"):
        raise _bad(spec, "a file spec needs the class after the file: file.py:ClassName")
    if head not in _FORMS:
        if head not in AGENTS:
            raise _bad(spec, f"unknown agent {head!r}")
        return _make_plugin_agent(spec, head, rest if sep else None, **kwargs)
    fields = _FORMS[head]
    if not fields:
        if sep:
            raise _bad(spec, f"'{head}' takes no ':' fields")
        return AGENTS.get(head)(**kwargs)
    if fields[-1] not in _INT_MINIMUM:  # a free-text field takes the rest
        if not rest.strip():
            what = _REST_HELP.get(head, f"<{fields[-1]}>")
            raise _bad(spec, f"give {what} after '{head}:'")
        return AGENTS.get(head)(rest, **kwargs)
    parts = rest.split(":") if sep else []
    if len(parts) != len(fields):
        raise _bad(spec, f"'{head}' takes {len(fields)} integer field(s)")
    values: list[int] = []
    for part, field in zip(parts, fields, strict=True):
        low = _INT_MINIMUM[field]
        if not re.fullmatch(r"\d+", part.strip()) or int(part) < low:
            raise _bad(spec, f"{part!r} is not an integer >= {low}")
        values.append(int(part))
    return AGENTS.get(head)(*values, **kwargs)


def _make_plugin_agent(spec: str, head: str, arg: str | None, **kwargs: Any) -> Agent:
    # A plug-in agent (entry point group ``conductor_gym.agents``) has the form
    # ``name[:<arg>]``: the text after the first ':' is its one positional argument.
    if arg is not None and not arg.strip():
        raise _bad(spec, f"give the argument after '{head}:' (or drop the ':')")
    factory = AGENTS.get(head)
    agent = factory(**kwargs) if arg is None else factory(arg, **kwargs)
    if not isinstance(agent, Agent):
        raise TypeError(
            f"agent spec {spec!r}: the plug-in {head!r} built a {type(agent).__name__}, which "
            "lacks act(observation, info) and async act_batch(observations, infos)"
        )
    return agent


def load_agent_file(path: str, name: str, **kwargs: Any) -> Agent:
    """``name(**kwargs)`` from the Python file at ``path`` (the ``file.py:Name`` form).

    The file is imported once per process (as a module named after a hash of its
    resolved path), like OpenRLHF loads its agent functions. Raises ``ConfigurationError`` when
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
        raise ConfigurationError(f"cannot import {resolved!r} as a Python module")
    module = importlib.util.module_from_spec(import_spec)
    sys.modules[module_name] = module
    try:
        import_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


# The agents that ship with the library (the top-level ``agents/`` folder, installed as
# ``conductor_gym.agents``), by import path: none is imported until it is built.
_AGENTS = "conductor_gym.agents"
register_agent("random", f"{_AGENTS}.random_planner:RandomPlanner")
register_agent("single", f"{_AGENTS}.fixed:SingleWorker", "single:<id>")
register_agent("best-single", f"{_AGENTS}.best_single:BestSingle.from_spec")
register_agent("reflect", f"{_AGENTS}.fixed:SelfReflection", "reflect:<id>:<n>")
register_agent("consensus", f"{_AGENTS}.fixed:Consensus", "consensus:<id>:<n>")
register_agent("moa", f"{_AGENTS}.fixed:MixtureOfAgents")
register_agent(
    "reference",
    f"{_AGENTS}.reference:ReferencePlan",
    "reference:<plan>",
    rest_help="a reference plan (solve_then_check, routed_check, decompose_arithmetic)",
)
register_agent(
    "llm", f"{_AGENTS}.llm:LLMConductor", "llm:<litellm-model>", rest_help="a LiteLLM model string"
)
register_agent(
    "policy", f"{_AGENTS}.policy:PolicyConductor", "policy:<path>", rest_help="a checkpoint path"
)
register_agent(
    "compact",
    f"{_AGENTS}.compact_policy:CompactPolicy",
    "compact:<path>",
    rest_help="a policy.pt that ppo_compact wrote",
)
register_agent(
    "plan",
    f"{_AGENTS}.plan_file:FixedPlan",
    "plan:<path>",
    rest_help="a plan file path (the three lists, subtasks holding {question})",
)
