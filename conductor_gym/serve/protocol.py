"""The OpenAI chat-completions wire format, as far as a served conductor speaks it.

Requests (``POST /v1/chat/completions``): ``model`` (a served model's name) and
``messages`` are required; the question is the text of the **last user message** (a
string, or the ``text`` parts of a content list); earlier messages are not shown to the
conductor. The question must be valid Unicode (no lone surrogates: ``400``) and at most
``max_question_chars`` characters (:data:`DEFAULT_MAX_QUESTION_CHARS`; longer: ``413``
``question_too_long``: the conductor's prompt has to fit its model's context). ``seed``
(an int in ``0 .. 2**63 - 1``) fixes the episode. ``stream: true`` and ``n > 1`` are
refused (``400``, naming the field); every other field (``temperature``,
``max_tokens``, ``user``, ...) is accepted and ignored: the conductor's and the workers'
sampling belong to the server's configuration.

Responses follow OpenAI's ``chat.completion`` object; ``usage`` adds the conductor's and
the workers' tokens, and the extension field ``conductor`` carries the plan of every
round, its trace, the workers the ids stood for, the cost split and the seed
(:meth:`~conductor_gym.serve.service.ServedAnswer.extension`). Errors are OpenAI's
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conductor_gym.serve.service import ConductorModel, ServedAnswer, ServeError

__all__ = [
    "DEFAULT_MAX_QUESTION_CHARS",
    "ChatRequest",
    "chat_completion",
    "model_card",
    "model_list",
    "parse_chat_request",
]

DEFAULT_MAX_QUESTION_CHARS = 16_384
"""Longest question a request may carry, in characters."""
_MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class ChatRequest:
    """The fields of a chat request the server acts on."""

    model: str
    question: str
    seed: int | None


def _bad(message: str, param: str, code: str = "invalid_value") -> ServeError:
    return ServeError(400, "invalid_request_error", code, message, param=param)


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise _bad(f"{where}[{i}] must be an object with a 'type'", where)
            if part["type"] == "text":
                if not isinstance(part.get("text"), str):
                    raise _bad(f"{where}[{i}].text must be a string", where)
                parts.append(part["text"])
        return "\n".join(parts)
    raise _bad(f"{where} must be a string or a list of content parts", where)


def parse_chat_request(
    body: Any, *, max_question_chars: int = DEFAULT_MAX_QUESTION_CHARS
) -> ChatRequest:
    """Validate a decoded request body; :class:`ServeError` (400, or 413 for a question
    over ``max_question_chars``) names the bad field."""
    if not isinstance(body, Mapping):
        raise _bad("the request body must be a JSON object", "body", "invalid_json")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("'model' must be a non-empty string", "model", "missing_required_parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad(
            "'messages' must be a non-empty list of messages", "messages",
            "missing_required_parameter",
        )  # fmt: skip
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise _bad(f"messages[{i}] must be an object with a string 'role'", "messages")
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not users:
        raise _bad("'messages' holds no user message: its last one is the question", "messages")
    where = f"messages[{users[-1]}].content"
    question = _text(messages[users[-1]].get("content"), where)
    if not question.strip():
        raise _bad("the last user message (the question) is empty", "messages")
    if len(question) > max_question_chars:
        raise ServeError(
            413, "invalid_request_error", "question_too_long",
            f"{where}: the question has {len(question)} characters; the server takes at "
            f"most {max_question_chars}", param="messages",
        )  # fmt: skip
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _bad(
            f"{where} is not valid Unicode (a lone surrogate at character {exc.start})",
            "messages",
        ) from None
    if body.get("stream"):
        raise _bad("streaming is not supported: send 'stream': false", "stream", "unsupported")
    n = body.get("n", 1)
    if n is not None and n != 1:
        raise _bad("only n=1 is supported (one answer per request)", "n", "unsupported")
    seed = body.get("seed")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED
    ):
        raise _bad(f"'seed' must be an integer in 0..{_MAX_SEED}", "seed")
    return ChatRequest(model=model, question=question, seed=seed)


def chat_completion(model: str, answer: ServedAnswer) -> dict[str, Any]:
    """The ``chat.completion`` object of ``answer`` (module docstring)."""
    usage = answer.usage
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "conductor": answer.extension(),
    }


def model_card(model: ConductorModel, created: int) -> dict[str, Any]:
    """One entry of ``GET /v1/models``; ``conductor`` describes the agent and pool."""
    return {
        "id": model.name,
        "object": "model",
        "created": created,
        "owned_by": "conductor-gym",
        "conductor": model.describe(),
    }


def model_list(models: Sequence[ConductorModel], created: int) -> dict[str, Any]:
    """The body of ``GET /v1/models``."""
    return {"object": "list", "data": [model_card(m, created) for m in models]}
