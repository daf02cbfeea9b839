"""The OpenAI wire format, as far as a served conductor speaks it.

Requests. ``POST /v1/chat/completions``: ``model`` (a served model's name) and
``messages`` are required; the question is the text of the **last user message** (a
string, or the ``text`` parts of a content list); earlier messages are not shown to the
conductor. ``POST /v1/completions``: ``model`` and ``prompt`` (a string, or a list of
one string) are required; the prompt is the question. The question must be valid
Unicode (no lone surrogates: ``400``) and at most ``max_question_chars`` characters
(:data:`DEFAULT_MAX_QUESTION_CHARS`; longer: ``413`` ``question_too_long``: the
conductor's prompt has to fit its model's context).

Every other field is decided by :data:`FIELDS`: **honoured** (``seed`` fixes the
episode; ``stream`` and ``stream_options.include_usage``; ``stop`` cuts the answer
before the first stop sequence), **ignored** with a reason (sampling and length
settings: the conductor's and the workers' are the server's configuration), or
**refused** with a ``400`` naming the field and code ``unsupported`` when its value
asks for something a conductor cannot do (``tools``, a ``response_format`` other than
text, ``n > 1``, ``logprobs``, ...; the neutral value of such a field, e.g.
``tools: []`` or ``n: 1``, is accepted). A field the table does not know is ignored.
Every ignored field a request set is listed in the response's
``conductor.ignored_fields``, so nothing is ignored silently.

Responses follow OpenAI's ``chat.completion`` and ``text_completion`` objects;
``usage`` adds the conductor's and the workers' tokens, and the extension field
``conductor`` carries the plan of every round, its trace, the workers the ids stood
for, the cost split and the seed
(:meth:`~conductor_gym.serve.service.ServedAnswer.extension`). With ``stream: true``
the episode runs to its end first (so a failure is the same HTTP error as without
streaming), then the answer is sent as server-sent events (:func:`stream_events`): a
chunk with the assistant role (chat), chunks of at most :data:`STREAM_CHUNK_CHARS`
characters of the answer, a chunk with ``finish_reason`` (and the ``conductor``
field), with ``stream_options.include_usage`` a last chunk with no choices and the
``usage``, then ``data: [DONE]``. Errors are OpenAI's
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from conductor_gym.serve.service import ConductorModel, ServedAnswer, ServeError

__all__ = [
    "DEFAULT_MAX_QUESTION_CHARS",
    "FIELDS",
    "STREAM_CHUNK_CHARS",
    "ChatRequest",
    "FieldRule",
    "chat_completion",
    "model_card",
    "model_list",
    "parse_chat_request",
    "parse_completion_request",
    "stream_events",
    "text_completion",
]

DEFAULT_MAX_QUESTION_CHARS = 16_384
"""Longest question a request may carry, in characters."""
STREAM_CHUNK_CHARS = 256
"""Most characters of the answer in one streamed chunk."""
_MAX_SEED = 2**63 - 1
_MAX_STOP = 4

Kind = Literal["chat", "completion"]


def _bad(message: str, param: str, code: str = "invalid_value") -> ServeError:
    return ServeError(400, "invalid_request_error", code, message, param=param)


def _number(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(f"'{name}' must be a number", name)


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _bad(f"'{name}' must be an integer >= 1", name)


def _string(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise _bad(f"'{name}' must be a string", name)


@dataclass(frozen=True)
class FieldRule:
    """What the server does with one request field.

    Attributes:
        policy: ``"honoured"``, ``"ignored"`` or ``"refused"``.
        reason: Why (for the README's table and the refusal's message).
        neutral: For a refused field, the values that ask for nothing and so are
            accepted (``None`` always is).
        check: For an ignored field, a validator of its type (400 naming it), or
            ``None``.
        kinds: The endpoints that know the field.
    """

    policy: Literal["honoured", "ignored", "refused"]
    reason: str
    neutral: tuple[Any, ...] = ()
    check: Callable[[str, Any], None] | None = None
    kinds: tuple[Kind, ...] = ("chat", "completion")


_SAMPLING = "sampling is the server's: each worker's and the conductor's are configured"
_LENGTH = "each worker's max_tokens is the pool's; the answer is never truncated"
_NO_TOOLS = "a conductor answers with text; it calls no tools"
_CHAT: tuple[Kind, ...] = ("chat",)
_COMPLETION: tuple[Kind, ...] = ("completion",)

FIELDS: Mapping[str, FieldRule] = {
    "model": FieldRule("honoured", "the served conductor"),
    "messages": FieldRule("honoured", "the last user message is the question", kinds=_CHAT),
    "prompt": FieldRule("honoured", "the question (one string)", kinds=_COMPLETION),
    "seed": FieldRule("honoured", "fixes the episode (the worker draw and every outcome)"),
    "stream": FieldRule("honoured", "server-sent events once the episode has run"),
    "stream_options": FieldRule("honoured", "include_usage: a last chunk with the usage"),
    "stop": FieldRule("honoured", "the answer is cut before the first stop sequence"),
    "n": FieldRule("refused", "one episode, one answer: only n=1", (1,)),
    "temperature": FieldRule("ignored", _SAMPLING, check=_number),
    "top_p": FieldRule("ignored", _SAMPLING, check=_number),
    "presence_penalty": FieldRule("ignored", _SAMPLING, check=_number),
    "frequency_penalty": FieldRule("ignored", _SAMPLING, check=_number),
    "max_tokens": FieldRule("ignored", _LENGTH, check=_positive_int),
    "max_completion_tokens": FieldRule("ignored", _LENGTH, check=_positive_int, kinds=_CHAT),
    "user": FieldRule("ignored", "nothing is stored per user", check=_string),
    "metadata": FieldRule("ignored", "nothing is stored", kinds=_CHAT),
    "store": FieldRule("ignored", "nothing is stored", kinds=_CHAT),
    "reasoning_effort": FieldRule("ignored", "the conductor's model is configured", kinds=_CHAT),
    "verbosity": FieldRule("ignored", "the conductor's model is configured", kinds=_CHAT),
    "service_tier": FieldRule("ignored", "one tier", kinds=_CHAT),
    "prediction": FieldRule("ignored", "a latency hint; the answer is unchanged", kinds=_CHAT),
    "prompt_cache_key": FieldRule("ignored", "a caching hint", kinds=_CHAT),
    "safety_identifier": FieldRule("ignored", "nothing is stored per user", kinds=_CHAT),
    "parallel_tool_calls": FieldRule("ignored", _NO_TOOLS, kinds=_CHAT),
    "tools": FieldRule("refused", _NO_TOOLS, ([],), kinds=_CHAT),
    "tool_choice": FieldRule("refused", _NO_TOOLS, ("none", "auto"), kinds=_CHAT),
    "functions": FieldRule("refused", _NO_TOOLS, ([],), kinds=_CHAT),
    "function_call": FieldRule("refused", _NO_TOOLS, ("none", "auto"), kinds=_CHAT),
    "response_format": FieldRule(
        "refused",
        "the answer is the final step's free text: only type text",
        ({"type": "text"},),
        kinds=_CHAT,
    ),
    "logprobs": FieldRule("refused", "an answer has no token log-probabilities", (False, 0)),
    "top_logprobs": FieldRule("refused", "an answer has no token log-probabilities", (0,)),
    "logit_bias": FieldRule("refused", "workers' sampling cannot be biased per request", ({},)),
    "modalities": FieldRule("refused", "text only", (["text"],), kinds=_CHAT),
    "audio": FieldRule("refused", "text only", kinds=_CHAT),
    "web_search_options": FieldRule("refused", "workers do not search the web", kinds=_CHAT),
    "echo": FieldRule("refused", "the prompt is not echoed", (False,), kinds=_COMPLETION),
    "suffix": FieldRule("refused", "no insertion: only a completion", ("",), kinds=_COMPLETION),
    "best_of": FieldRule("refused", "one episode, one answer: only best_of=1", (1,)),
    **{
        name: FieldRule("refused", "vLLM's structured output: the answer is free text")
        for name in (
            "guided_json",
            "guided_regex",
            "guided_choice",
            "guided_grammar",
            "structured_outputs",
        )
    },
}
"""Every request field the server knows and what it does with it (module docstring)."""


@dataclass(frozen=True)
class ChatRequest:
    """The fields of a chat or text completion request the server acts on.

    Attributes:
        model: The served model's name.
        question: The last user message, or the prompt.
        seed: The episode's seed, or ``None`` for a random one.
        stream: Whether to answer with server-sent events.
        include_usage: Whether a stream ends with a usage chunk.
        stop: Stop sequences: the answer is cut before the first.
        ignored: The fields the request set that the server ignored, sorted.
    """

    model: str
    question: str
    seed: int | None
    stream: bool = False
    include_usage: bool = False
    stop: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()


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


def _check_question(question: str, where: str, param: str, max_question_chars: int) -> None:
    if not question.strip():
        raise _bad(f"{where} (the question) is empty", param)
    if len(question) > max_question_chars:
        raise ServeError(
            413, "invalid_request_error", "question_too_long",
            f"{where}: the question has {len(question)} characters; the server takes at "
            f"most {max_question_chars}", param=param,
        )  # fmt: skip
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _bad(
            f"{where} is not valid Unicode (a lone surrogate at character {exc.start})", param
        ) from None


def _options(body: Mapping[str, Any], kind: Kind, model: str, question: str) -> ChatRequest:
    """The request of ``body`` once every field but the question is checked by
    :data:`FIELDS`."""
    ignored = []
    for name, value in body.items():
        rule = FIELDS.get(name)
        if rule is None or kind not in rule.kinds:
            if value is not None:
                ignored.append(name)
        elif rule.policy == "refused" and value is not None and value not in rule.neutral:
            raise _bad(
                f"'{name}' is not supported ({rule.reason}): got {json.dumps(value)[:80]}",
                name, "unsupported",
            )  # fmt: skip
        elif rule.policy == "ignored" and value is not None:
            if rule.check is not None:
                rule.check(name, value)
            ignored.append(name)
    seed = body.get("seed")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED
    ):
        raise _bad(f"'seed' must be an integer in 0..{_MAX_SEED}", "seed")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _bad("'stream' must be true or false", "stream")
    options = body.get("stream_options")
    include_usage = False
    if options is not None:
        if not isinstance(options, Mapping):
            raise _bad("'stream_options' must be an object", "stream_options")
        include_usage = options.get("include_usage", False)
        if include_usage is None:
            include_usage = False
        if not isinstance(include_usage, bool):
            raise _bad("'stream_options.include_usage' must be true or false", "stream_options")
        if not stream:
            ignored.append("stream_options")
    return ChatRequest(
        model=model,
        question=question,
        seed=seed,
        stream=bool(stream),
        include_usage=include_usage,
        stop=_stop(body.get("stop")),
        ignored=tuple(sorted(ignored)),
    )


def _stop(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if (
        not isinstance(stops, list)
        or len(stops) > _MAX_STOP
        or not all(isinstance(s, str) and s for s in stops)
    ):
        raise _bad(f"'stop' must be a non-empty string or a list of at most {_MAX_STOP}", "stop")
    return tuple(stops)


def _model(body: Any) -> str:
    if not isinstance(body, Mapping):
        raise _bad("the request body must be a JSON object", "body", "invalid_json")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("'model' must be a non-empty string", "model", "missing_required_parameter")
    return model


def parse_chat_request(
    body: Any, *, max_question_chars: int = DEFAULT_MAX_QUESTION_CHARS
) -> ChatRequest:
    """Validate a decoded chat request body; :class:`ServeError` (400, or 413 for a
    question over ``max_question_chars``) names the bad field."""
    model = _model(body)
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
    _check_question(question, where, "messages", max_question_chars)
    return _options(body, "chat", model, question)


def parse_completion_request(
    body: Any, *, max_question_chars: int = DEFAULT_MAX_QUESTION_CHARS
) -> ChatRequest:
    """Validate a decoded text completion request body (``prompt`` is the question);
    :class:`ServeError` names the bad field, as :func:`parse_chat_request` does."""
    model = _model(body)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        raise _bad(
            f"'prompt' holds {len(prompt)} prompts: one question per request", "prompt",
            "unsupported",
        )  # fmt: skip
    if isinstance(prompt, list) and prompt:
        raise _bad("'prompt' must be text: token ids are not supported", "prompt", "unsupported")
    if not isinstance(prompt, str):
        raise _bad("'prompt' must be a string", "prompt", "missing_required_parameter")
    _check_question(prompt, "prompt", "prompt", max_question_chars)
    return _options(body, "completion", model, prompt)


def _content(answer: ServedAnswer, request: ChatRequest | None) -> str:
    text = answer.content
    if request is not None and request.stop:
        cut = min((i for s in request.stop if (i := text.find(s)) >= 0), default=len(text))
        text = text[:cut]
    return text


def _usage(answer: ServedAnswer) -> dict[str, int]:
    usage = answer.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


def _extension(answer: ServedAnswer, request: ChatRequest | None) -> dict[str, Any]:
    ignored = list(request.ignored) if request is not None else []
    return {**answer.extension(), "ignored_fields": ignored}


def chat_completion(
    model: str, answer: ServedAnswer, request: ChatRequest | None = None
) -> dict[str, Any]:
    """The ``chat.completion`` object of ``answer`` to ``request`` (module docstring)."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": _content(answer, request)},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage(answer),
        "conductor": _extension(answer, request),
    }


def text_completion(
    model: str, answer: ServedAnswer, request: ChatRequest | None = None
) -> dict[str, Any]:
    """The ``text_completion`` object of ``answer`` to ``request`` (module docstring)."""
    return {
        "id": f"cmpl-{uuid.uuid4().hex}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "text": _content(answer, request),
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage(answer),
        "conductor": _extension(answer, request),
    }


def stream_events(
    kind: Kind, model: str, answer: ServedAnswer, request: ChatRequest
) -> Iterator[str]:
    """The server-sent events of a streamed answer, ``data: [DONE]`` last (module
    docstring)."""
    chat = kind == "chat"
    head = {
        "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk" if chat else "text_completion",
        "created": int(time.time()),
        "model": model,
    }
    # OpenAI's chunks carry "usage": null before the usage chunk, when one is asked for.
    tail = {"usage": None} if request.include_usage else {}

    def event(choice: dict[str, Any] | None, **extra: Any) -> str:
        choices = [] if choice is None else [{"index": 0, **choice, "logprobs": None}]
        return f"data: {json.dumps({**head, 'choices': choices, **tail, **extra})}\n\n"

    def piece(text: str, finish: str | None = None) -> dict[str, Any]:
        if chat:
            return {"delta": {"content": text} if finish is None else {}, "finish_reason": finish}
        return {"text": text, "finish_reason": finish}

    if chat:
        yield event({"delta": {"role": "assistant", "content": ""}, "finish_reason": None})
    content = _content(answer, request)
    for start in range(0, len(content), STREAM_CHUNK_CHARS):
        yield event(piece(content[start : start + STREAM_CHUNK_CHARS]))
    yield event(piece("", "stop"), conductor=_extension(answer, request))
    if request.include_usage:
        yield event(None, usage=_usage(answer))
    yield "data: [DONE]\n\n"


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
