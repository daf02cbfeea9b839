"""Agent specs (``random``, ``single:<id>``, ``llm:<model>``, ``file.py:Class``, ...).

The grammar and the registry live in the library (:mod:`conductor_gym.core.agent_spec`),
where each short name of this package is registered once, by import path, with its form.
"""

from __future__ import annotations

from conductor_gym.core.agent_spec import (
    AGENTS,
    load_agent_file,
    make_agent,
    register_agent,
    spec_forms,
)

__all__ = ["AGENTS", "SPEC_FORMS", "load_agent_file", "make_agent", "register_agent"]

SPEC_FORMS = spec_forms()
"""Every valid spec form, for help texts and errors."""
