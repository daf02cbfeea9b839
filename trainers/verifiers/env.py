"""The conductor-gym env for verifiers 0.4: one seat, ``agent``, the conductor.

A verifiers ``Env`` turns a task into an episode. :class:`ConductorEnvironment` plays
single-turn tasks as verifiers' own single-agent env does (one run of the agent; the
task's ``finalize`` plays the reply on conductor-gym). With ``max_recursions > 0`` it
drives the exchange itself, as a game engine would: the conductor's reply is the plan,
the env's recursive prompt (the question, the current answer, the step limit) comes back
as the next user turn, until the episode ends; the episode's state is recorded on the
trace before the rollout closes, and the task's rubric reads it
(:mod:`.taskset`). An exchange that verifiers stops first (a turn or token limit) is
recorded as unfinished: reward 0.

The seat's defaults: the taskset's bundled in-process chat harness (:mod:`.harness`) in the
``subprocess`` runtime, which for this harness only provides a scratch folder: nothing
is executed, no container or sandbox is needed.
"""

from __future__ import annotations

import verifiers.v1 as vf

from .taskset import STATE_KEY, ConductorTask, Episode

__all__ = ["ConductorEnvConfig", "ConductorEnvironment"]


class ConductorEnvConfig(vf.EnvConfig):
    """``--env.*``: the conductor seat (``--env.agent.*``) and verifiers' env knobs."""

    # No harness pinned: the taskset's bundled harness is the default of an unpinned seat.
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class ConductorEnvironment(vf.Env[ConductorEnvConfig]):
    """Plays conductor-gym episodes (module docstring)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        assert isinstance(task, ConductorTask)
        if not task.data.env["max_recursions"]:
            await agents.agent.run(task)
            return
        episode = Episode(task.data)
        async with agents.agent.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                observation = await episode.step(segment.last_reply)
                if observation is None:
                    break
                segment = await interaction.turn(observation)
            if not episode.done:
                episode.env.close()
            episode.record(interaction.trace)
            interaction.trace.info[STATE_KEY]["finished"] = episode.done
