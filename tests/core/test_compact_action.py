"""The compact plan action: a structure (vector or text) expands into the env's plan,
every vector is a playable plan, a text that does not read is scored as the env scores
any unparsable completion, and the wrapper refuses what it cannot play."""

from __future__ import annotations

import numpy as np
import pytest

from conductor_gym import ConductorEnv
from conductor_gym.core.compact_action import (
    CompactPlanAction,
    RoleTemplates,
    Structure,
    read_structure,
)
from conductor_gym.errors import ConfigurationError


@pytest.fixture
def env() -> CompactPlanAction:
    return CompactPlanAction(ConductorEnv(k=4, max_steps=3))


def test_the_space_has_one_entry_per_choice(env: CompactPlanAction) -> None:
    # steps, 3 workers, 2 later roles, 2 later accesses
    assert env.action_space.nvec.tolist() == [3, 4, 4, 4, 4, 4, 2, 2]


def test_a_vector_plays_the_plan_it_encodes(env: CompactPlanAction) -> None:
    _, info = env.reset(seed=0)
    # three steps: Model 2 attempts, Model 0 attempts, Model 3 checks only the step before
    action = np.array([2, 2, 0, 3, 0, 2, 0, 1])
    *_, info = env.step(action)
    plan = info["plan"]
    assert plan.model_ids == (2, 0, 3)
    assert plan.subtasks[:2] == (info["question"], info["question"])
    assert plan.subtasks[2].startswith("Check the answers above")
    assert plan.access == ((), (), (1,))
    assert info["compact_action"] == "2 attempt | 0 attempt | 3 check/prev"
    assert info["outcome"] in ("correct", "wrong")


def test_slots_past_the_length_are_ignored(env: CompactPlanAction) -> None:
    one = env.structure([0, 1, 3, 3, 2, 2, 1, 1])
    assert one == Structure((1,), ("attempt",), ("all",))


def test_every_sampled_vector_is_a_playable_plan(env: CompactPlanAction) -> None:
    env.action_space.seed(0)
    for seed in range(40):
        env.reset(seed=seed)
        *_, info = env.step(env.action_space.sample())
        assert info["parse_error"] is None and info["outcome"] in ("correct", "wrong")


def test_the_text_form_reads_back_what_it_writes() -> None:
    templates = RoleTemplates()
    for text in ("1 attempt", "2 attempt | 0 check/prev | 1 vote", "0 attempt | 0 solve"):
        read = read_structure(text, num_workers=3, max_steps=3, templates=templates)
        assert read.to_text() == text
    # a short reasoning line before the structure is allowed; the last line is read
    read = read_structure(
        "Model 2 is strong here.\n2 attempt | 1 check", num_workers=3, max_steps=3,
        templates=templates,
    )  # fmt: skip
    assert read.workers == (2, 1)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty action"),
        ("0 check", "step 0 must be 'attempt'"),
        ("0 attempt | 7 check", "Model 7 is not listed"),
        ("0 attempt | 1 guess", "unknown role 'guess'"),
        ("0 attempt | 1 check | 2 vote | 3 vote", "4 steps; at most 3"),
    ],
)
def test_a_text_that_does_not_read_is_an_unparsable_plan(
    env: CompactPlanAction, text: str, says: str
) -> None:
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step(text)
    assert (reward, terminated, info["outcome"]) == (0.0, True, "invalid")
    assert says in info["compact_error"]


def test_a_vector_outside_the_space_is_refused(env: CompactPlanAction) -> None:
    env.reset(seed=0)
    with pytest.raises(ValueError, match="is not in MultiDiscrete"):
        env.step([3, 0, 0, 0, 0, 0, 0, 0])


def test_templates_word_the_plans() -> None:
    templates = RoleTemplates({"attempt": None, "double-check": "Verify the answer above."})
    env = CompactPlanAction(ConductorEnv(k=2, max_steps=2), templates)
    env.reset(seed=0)
    *_, info = env.step("1 attempt | 0 double-check")
    assert info["plan"].subtasks[1] == "Verify the answer above."
    with pytest.raises(ConfigurationError, match=r"^roles: must map 'attempt' to None"):
        RoleTemplates({"check": "Check it."})


def test_a_recursive_env_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigurationError) as caught:
        CompactPlanAction(ConductorEnv(max_recursions=1))
    assert caught.value.field == "max_recursions"
