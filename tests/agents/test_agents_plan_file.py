"""``plan:<path>`` (:class:`FixedPlan`): the same plan from a file for every question, the
question put where ``{question}`` stands (a plain replacement), ids that are the
episode's ``Model`` positions under ``k=4, shuffle_workers=True``, and clear refusals (a
missing or unparseable file, no ``{question}``, an id the episode lacks, too few steps)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conductor_gym.agents import AGENTS, SPEC_FORMS, FixedPlan, make_agent
from conductor_gym.agents.fixed import stop_text

from conductor_gym import ConductorEnv, EnvConfig, Plan, parse_plan

RANDOMISED = EnvConfig(pool="sim-paper", k=4, shuffle_workers=True)
SOLVE = "Solve the following problem and end with the final answer.\n\n{question}"
VOTE = "Above are answers to the problem below; give the one most agree on.\n\nProblem: {question}"
THREE = Plan((2, 0, 3), (SOLVE, SOLVE, VOTE), ((), (), "all"))


def written(tmp_path: Path, plan: Plan = THREE, name: str = "three.plan") -> Path:
    return FixedPlan.write(tmp_path / name, plan, comment="a test plan\nsecond line")


def test_the_same_plan_for_every_question(tmp_path: Path) -> None:
    path = written(tmp_path)
    assert path.read_text().startswith("# a test plan\n# second line\nmodel_id = [2, 0, 3]")
    agent = make_agent(f"plan:{path}")
    assert isinstance(agent, FixedPlan) and agent.template == THREE
    env = ConductorEnv(RANDOMISED)
    plans = []
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        plan = parse_plan(agent.act(obs, info), num_workers=info["num_workers"])
        assert plan.subtasks == tuple(
            s.replace("{question}", info["question"]) for s in THREE.subtasks
        )
        plans.append(
            Plan(
                plan.model_ids,
                tuple(s.replace(info["question"], "{question}") for s in plan.subtasks),
                plan.access,
            )
        )
        _, _, terminated, _, step_info = env.step(agent.act(obs, info))
        assert terminated and step_info["parse_error"] is None
        assert step_info["outcome"] in ("correct", "wrong")
    assert plans[0] == plans[1] == THREE  # identical but for the question
    # two different questions, so the equality above is not vacuous
    assert env.reset(seed=0)[1]["question"] != env.reset(seed=1)[1]["question"]


def test_ids_are_the_episode_positions_under_shuffled_ids(tmp_path: Path) -> None:
    agent = make_agent(f"plan:{written(tmp_path)}")
    env = ConductorEnv(RANDOMISED)
    at_first_step = set()
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        assert info["num_workers"] == 4
        _, _, _, _, step_info = env.step(agent.act(obs, info))
        called = [s.worker for s in step_info["trace"].steps]
        # step i asks whichever worker the episode drew at position model_id[i]
        assert called == [info["pool"][i] for i in THREE.model_ids]
        at_first_step.add(called[0])
    assert len(at_first_step) > 2  # the position holds different workers episode to episode


def test_the_question_is_put_in_by_plain_replacement(tmp_path: Path) -> None:
    braces = Plan((0, 1), ("Keep {x} and {{0}}: {question}", "Answer {0}."), ((), (0,)))
    agent = FixedPlan(written(tmp_path, braces))
    info = {"question": "Is {a} + {0} = {{b}}?", "num_workers": 2, "max_steps": 5}
    plan = parse_plan(agent.act("", info), num_workers=2)
    assert plan.subtasks == ("Keep {x} and {{0}}: Is {a} + {0} = {{b}}?", "Answer {0}.")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Just solve it.", r"not a plan \(no_lists: "),
        ("model_id = [0]\nsubtasks = ['{question}']", r"not a plan \(missing_list: "),
        ("model_id = [0, 1]\nsubtasks = ['{question}']\naccess_list = [[]]", r"length_mismatch"),
        ("model_id = [-1]\nsubtasks = ['{question}']\naccess_list = [[]]", r"an int >= 0"),
        (
            "model_id = [0]\nsubtasks = ['Say hi.']\naccess_list = [[]]",
            r"no subtask holds .*\{question\}",
        ),
        ("model_id = []\nsubtasks = []\naccess_list = []", r"the plan has no steps"),
    ],
)
def test_a_file_that_is_no_usable_plan_is_refused_at_construction(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "bad.plan"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"plan file '{re.escape(str(path))}': .*{why}"):
        make_agent(f"plan:{path}")
    with pytest.raises(ValueError, match=why):
        FixedPlan(path)


def test_a_missing_or_unreadable_file_is_refused_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=rf"plan file '{re.escape(str(tmp_path))}/nowhere\.plan': cannot read it"
    ):
        make_agent(f"plan:{tmp_path}/nowhere.plan")
    with pytest.raises(
        ValueError, match=rf"plan file '{re.escape(str(tmp_path))}': cannot read it"
    ):
        FixedPlan(tmp_path)  # a folder
    with pytest.raises(ValueError, match=r"no subtask holds the placeholder \{question\}"):
        FixedPlan.write(tmp_path / "x.plan", Plan((0,), ("Say hi.",), ((),)))
    assert not (tmp_path / "x.plan").exists()


def test_an_id_the_episode_lacks_is_refused_at_act_time(tmp_path: Path) -> None:
    agent = make_agent(f"plan:{written(tmp_path, Plan((0, 5), (SOLVE, VOTE), ((), 'all')))}")
    obs, info = ConductorEnv(RANDOMISED).reset(seed=0)
    with pytest.raises(ValueError) as caught:
        agent.act(obs, info)
    assert str(caught.value) == (
        f"{agent.name}: worker id 5 is not valid for this episode, which has 4 workers "
        "(Model 0 .. Model 3)"
    )


def test_long_plans_ask_for_max_steps_and_recursive_rounds_stop(tmp_path: Path) -> None:
    assert make_agent(f"plan:{written(tmp_path)}").env_overrides == {}
    six = Plan((0, 1, 2, 3, 0, 1), (SOLVE,) * 5 + (VOTE,), ((),) * 5 + ("all",))
    agent = make_agent(f"plan:{written(tmp_path, six, 'six.plan')}")
    assert agent.env_overrides == {"max_steps": 6}
    obs, info = ConductorEnv(RANDOMISED).reset(seed=0)
    with pytest.raises(ValueError, match=r"writes 6-step plans but the env allows max_steps=5"):
        agent.act(obs, info)
    env = ConductorEnv(RANDOMISED, **agent.env_overrides)
    obs, info = env.reset(seed=0)
    assert env.step(agent.act(obs, info))[4]["parse_error"] is None
    assert agent.act(obs, {**info, "can_stop": True}) == stop_text()


def test_spec_round_trip_and_registration(tmp_path: Path) -> None:
    path = written(tmp_path)
    agent = make_agent(f"plan:{path}")
    assert agent.spec == agent.name == f"plan:{path}"
    again = make_agent(agent.spec)
    assert isinstance(again, FixedPlan) and again.template == agent.template
    assert "plan" in AGENTS and "plan:<path>" in SPEC_FORMS
    with pytest.raises(ValueError, match=r"give a plan file path .* after 'plan:'"):
        make_agent("plan:")
