"""A checkpoint's own conductor chat: built from the episode's info, saved and found."""

from __future__ import annotations

from pathlib import Path

import pytest

from conductor_gym import ConductorEnv
from conductor_gym.training.chat_prompt import PROMPT_FILE, ChatPrompt


def test_the_chat_is_written_from_the_episodes_question_and_workers() -> None:
    prompt = ChatPrompt(system="Plan.")
    env = ConductorEnv(k=3)
    _, info = env.reset(seed=0)
    system, user = prompt.for_info(info)
    assert system == {"role": "system", "content": "Plan."}
    assert user["content"] == f"Question: {info['question']}\n\nModels:\nModel 0\nModel 1\nModel 2"
    env.close()


def test_a_saved_prompt_is_found_and_a_folder_without_one_has_none(tmp_path: Path) -> None:
    assert ChatPrompt.find(tmp_path) is None
    prompt = ChatPrompt(system="Plan.", worker_item="M{id}")
    assert prompt.save(tmp_path) == tmp_path / PROMPT_FILE
    assert ChatPrompt.find(tmp_path) == prompt
    assert ChatPrompt.find(tmp_path).fingerprint == prompt.fingerprint  # type: ignore[union-attr]
    assert ChatPrompt(system="Other.").fingerprint != prompt.fingerprint


def test_bad_prompts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="question"):
        ChatPrompt(system="x", user="Models: {worker_list}")
    with pytest.raises(ValueError, match="id"):
        ChatPrompt(system="x", worker_item="Model")
    (tmp_path / PROMPT_FILE).write_text('{"system": "x", "colour": 1}')
    with pytest.raises(ValueError, match="not a conductor prompt"):
        ChatPrompt.find(tmp_path)


def test_a_chat_prompt_may_name_the_drawn_workers() -> None:
    from conductor_gym import ConductorEnv
    from conductor_gym.training.chat_prompt import ChatPrompt

    prompt = ChatPrompt(system="Plan.", worker_item="Model {id}: {name}")
    _, info = ConductorEnv(k=2, shuffle_workers=True).reset(seed=3)
    user = prompt.for_info(info)[1]["content"]
    assert user.endswith(f"Models:\nModel 0: {info['pool'][0]}\nModel 1: {info['pool'][1]}")
    assert ChatPrompt(system="Plan.").for_info(info)[1]["content"].endswith("Model 0\nModel 1")
