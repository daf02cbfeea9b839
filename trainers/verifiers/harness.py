"""An in-process chat harness for the conductor: one completion per segment.

verifiers' built-in chat harnesses (``null``, ``bash``) run a PEP 723 program that
``uv`` installs into the runtime, which needs the network. A conductor needs no tools
and no program: :class:`ConductorChatHarness` makes the segment's one chat completion
from this process, through the rollout's interception endpoint (``endpoint`` with the
bearer ``secret``), as verifiers' ``Harness.launch`` contract allows. The interception
records the call on the trace and applies the run's model and sampling settings; a
recursive round arrives through verifiers' default ``resume`` as the whole conversation.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from verifiers.v1.dialects.chat import message_to_wire

__all__ = ["ConductorChatConfig", "ConductorChatHarness"]


class ConductorChatConfig(vf.HarnessConfig):
    """The harness's config (``--env.agent.harness.*``)."""

    id: str = "conductor-gym-env"


class ConductorChatHarness(vf.Harness[ConductorChatConfig]):
    """One chat completion per segment, in this process (module docstring)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        from openai import AsyncOpenAI

        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(message_to_wire(m) for m in prompt)
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)  # type: ignore[arg-type]
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")
