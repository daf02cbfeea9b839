"""Prompts: what the conductor sees, and what each worker sees.

Three texts make an episode:

* the **conductor prompt** (the observation at reset): how a workflow works, the plan
  format, worked examples, the user question and the workers, listed only as
  ``Model 0 .. Model k-1``;
* the **worker messages** for each step: the first step's worker gets the question and
  its subtask; a later worker gets, as earlier chat turns, the ``(subtask, response)``
  pairs of the steps its access list selects, then its own subtask (paper app. E). With
  ``question_to_all_workers`` every worker's own subtask is preceded by the question;
* the **recursive prompt** (multi-turn episodes): the question, the current final answer
  and the option to return it unchanged with three empty lists.

All wording is ours. Every template is a field of :class:`PromptTemplates`, a frozen
dataclass users can copy with :func:`dataclasses.replace`; templates use plain
:meth:`str.format` fields, ``{name}`` only (write a literal brace as ``{{`` or ``}}``),
and are checked at construction, so a missing or unknown field fails early and names the
template. A format spec (``{question:>100000000}`` would pad the question to 100 MB), a
conversion (``{question!r}``) or an attribute or index (``{question.upper}``,
``{question[0]}``) is refused the same way: templates arrive in shared files and
recorded runs, and a plain field is all any text here needs.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Plan
from conductor_gym.workers.base import Message

__all__ = ["DEFAULT_EXAMPLES", "DEFAULT_TEMPLATES", "FewShotExample", "PromptTemplates"]


@dataclass(frozen=True)
class FewShotExample:
    """A worked example: a question and a full conductor response (prose, then lists)."""

    question: str
    response: str


_RULES = """\
How a workflow works:
- It has between 1 and {max_steps} steps. Each step names one model, gives it a subtask, and \
gives it an access list: the earlier steps whose subtasks and answers that model will see.
- A subtask can ask a model to solve the question from scratch, to check or improve an \
earlier answer, or to produce something that a later step needs.
- The model in the first step receives the user question followed by its subtask. A model in \
a later step does NOT receive the user question: it receives the subtasks and answers of the \
earlier steps that its access list selects, as earlier turns of a conversation, and then its \
own subtask. Whatever a model needs must be in its subtask or in the steps it can see.
- An access list is [] (no earlier steps), "all" (every earlier step) or a list of earlier \
step numbers counted from 0, such as [0, 2].
- The answer of the last step is returned to the user as the final answer, so the last \
subtask must ask for the final answer in the form the question requires."""

_FORMAT = """\
You may reason first. Then end your reply with three Python lists of the same length, \
one entry per step:
model_id = [...]     (integers: which model runs each step)
subtasks = [...]     (strings: the instruction for each step)
access_list = [...]  (for each step: [], "all", or a list of earlier step numbers)"""

CONDUCTOR_TEMPLATE = (
    "You are a conductor. You answer a user's question by directing a team of "
    "{num_workers} language models with different strengths. You do not answer the "
    "question yourself: you write a short workflow that the models carry out in order.\n\n"
    + _RULES
    + "\n\n"
    + _FORMAT
    + "\n\n{examples}USER QUESTION:\n{question}\n\nAVAILABLE LANGUAGE MODELS:\n{worker_list}\n"
)

RECURSIVE_TEMPLATE = (
    "You are a conductor directing a team of {num_workers} language models. A workflow has "
    "already run for the question below, and its final answer is shown. {continuation} "
    'In a new workflow the access entry "all" also includes the current final answer.\n\n'
    + _RULES
    + "\n\n"
    + _FORMAT
    + "\n\nUSER QUESTION:\n{question}\n\nCURRENT FINAL ANSWER:\n{answer}\n\n"
    "AVAILABLE LANGUAGE MODELS:\n{worker_list}\n"
)

RECURSIVE_MAY_STOP = (
    "If that answer is right, return it as it is by replying with three empty lists "
    "(model_id = [], subtasks = [], access_list = []). Otherwise write a new workflow of up "
    "to {max_steps} steps to verify or improve it."
)

RECURSIVE_MUST_CONTINUE = (
    "Write a new workflow of up to {max_steps} steps to verify or improve it (this round "
    "must run a workflow: three empty lists are not accepted here)."
)

EXAMPLES_HEADER = (
    "The examples below show the format. They were written for a different team of "
    "models, so choose model numbers from the list of available models.\n\n"
)

EXAMPLE_TEMPLATE = "EXAMPLE {n}:\nQuestion: {question}\nAssistant Response:\n{response}\n\n"

# Four examples from tasks outside the training mix (two countdown puzzles, one
# medical question, one hard maths question), as in the paper's default set (app. E).
DEFAULT_EXAMPLES: tuple[FewShotExample, ...] = (
    FewShotExample(
        question=(
            "Using the numbers 4, 9, 11 and 50, each at most once, with +, -, *, / and "
            "parentheses, write an expression equal to 153."
        ),
        response=(
            "Searching for the expression is the hard part, and checking it is easy. Model 1 "
            "searches, then Model 3 checks the arithmetic and the use of the numbers and "
            "states the final expression.\n"
            "model_id = [1, 3]\n"
            'subtasks = ["Find an expression that uses the numbers 4, 9, 11 and 50, each at '
            "most once, with +, -, *, / and parentheses, and equals 153. Show the "
            'arithmetic.", "Check the expression above: does it use only 4, 9, 11 and 50, '
            "each at most once, and does it equal 153? If it is wrong, repair it. Give the "
            'final expression."]\n'
            'access_list = [[], "all"]'
        ),
    ),
    FewShotExample(
        question=(
            "Using the numbers 3, 7, 25 and 100, each at most once, with +, -, *, / and "
            "parentheses, write an expression equal to 704."
        ),
        response=(
            "Independent attempts make it likely that one of them succeeds. Three models try "
            "on their own, so each subtask repeats the whole puzzle; then Model 0 sees all "
            "three attempts and returns one that is correct.\n"
            "```python\n"
            "model_id = [2, 0, 3, 0]\n"
            "subtasks = [\n"
            '    "Use the numbers 3, 7, 25 and 100 (each at most once; + - * / and parentheses)'
            ' to reach exactly 704. Give your expression.",\n'
            '    "Use the numbers 3, 7, 25 and 100 (each at most once; + - * / and parentheses)'
            ' to reach exactly 704. Give your expression.",\n'
            '    "Use the numbers 3, 7, 25 and 100 (each at most once; + - * / and parentheses)'
            ' to reach exactly 704. Give your expression.",\n'
            '    "Three attempts at the puzzle are above. Evaluate each one, keep one that '
            'equals 704 and uses each number at most once, and give it as the final answer.",\n'
            "]\n"
            'access_list = [[], [], [], "all"]\n'
            "```"
        ),
    ),
    FewShotExample(
        question=(
            "A 58-year-old man has had crushing chest pain for 40 minutes. His ECG shows ST "
            "elevation in leads II, III and aVF. Which artery is most likely blocked? "
            "A) left anterior descending B) left circumflex C) right coronary "
            "D) left main"
        ),
        response=(
            "This is a recall question, so one strong model can answer it; a second model, "
            "given the question again, double-checks the reasoning before the letter goes "
            "back.\n"
            "model_id = [2, 0]\n"
            'subtasks = ["Answer the question. Explain which heart territory these ECG leads '
            'show and which artery supplies it, then give the letter.", "A patient with 40 '
            "minutes of crushing chest pain has ST elevation in leads II, III and aVF. Which "
            "artery is most likely blocked: A) left anterior descending, B) left circumflex, "
            "C) right coronary, D) left main? Check the reasoning above and reply with the "
            'single letter of the correct option."]\n'
            "access_list = [[], [0]]"
        ),
    ),
    FewShotExample(
        question=(
            "How many ordered pairs of positive integers (a, b) satisfy a * b = 2^10 * 3^6 "
            "and gcd(a, b) = 1?"
        ),
        response=(
            "Two models solve it independently, and a third compares their answers and "
            "settles any disagreement.\n"
            "model_id = [0, 3, 1]\n"
            'subtasks = ["Solve the problem step by step and give the number of pairs.", '
            '"How many ordered pairs of positive integers (a, b) satisfy a * b = 2^10 * 3^6 '
            'and gcd(a, b) = 1? Reason about how each prime power can be split.", "Two '
            "solutions to the same counting problem are above. Find any mistake, decide the "
            'correct count, and give it as the final answer."]\n'
            "access_list = [[], [], [0, 1]]"
        ),
    ),
)

# The fields each template may use; the first tuple lists those it must use.
_TEMPLATE_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "conductor": (
        frozenset({"question", "worker_list"}),
        frozenset({"question", "worker_list", "num_workers", "max_steps", "examples"}),
    ),
    "recursive": (
        frozenset({"question", "answer", "continuation"}),
        frozenset(
            {"question", "answer", "continuation", "worker_list", "num_workers", "max_steps"}
        ),
    ),
    "recursive_may_stop": (frozenset(), frozenset({"max_steps"})),
    "recursive_must_continue": (frozenset(), frozenset({"max_steps"})),
    "self_worker_item": (frozenset({"id"}), frozenset({"id"})),
    "self_call": (frozenset({"task"}), frozenset({"context", "task"})),
    "self_call_turn": (frozenset({"answer"}), frozenset({"subtask", "answer"})),
    "example": (frozenset({"question", "response"}), frozenset({"n", "question", "response"})),
    "worker_list_item": (frozenset({"id"}), frozenset({"id", "name"})),
    "first_step": (frozenset({"question", "subtask"}), frozenset({"question", "subtask"})),
    "examples_header": (frozenset(), frozenset()),
}


def _field_names(template: str, where: str = "template") -> set[str]:
    """The fields ``template`` uses; :class:`ConfigurationError` naming ``where`` and the
    field for anything but a plain ``{name}`` (module docstring)."""
    names = set()
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
        shown = (shown[:40] + "...") if len(shown) > 40 else shown + "}"
        if conversion is not None or spec:
            what = "a conversion" if conversion is not None else "a format spec"
            raise ConfigurationError(
                f"{where}: field {shown} has {what}; templates take plain {{name}} fields only"
            )
        if not name.isidentifier():
            raise ConfigurationError(
                f"{where}: field {shown} is not a plain name (no attribute, index or "
                "position); templates take plain {name} fields only"
            )
        names.add(name)
    return names


@dataclass(frozen=True)
class PromptTemplates:
    """Every text the env writes, as data.

    Attributes:
        conductor: The conductor prompt. Fields: ``question``, ``worker_list`` (required),
            ``num_workers``, ``max_steps``, ``examples``.
        recursive: The re-planning prompt. Fields: ``question``, ``answer``,
            ``continuation`` (required), ``worker_list``, ``num_workers``, ``max_steps``.
        recursive_may_stop: ``continuation`` when the conductor may stop (field
            ``max_steps``): it offers three empty lists.
        recursive_must_continue: ``continuation`` when a new workflow is required
            (forced recursion; field ``max_steps``).
        examples: Few-shot examples, rendered in order into ``{examples}``; empty for none.
        examples_header: Text placed before the examples (no fields).
        example: One example. Fields: ``question``, ``response`` (required), ``n`` (1-based).
        worker_list_item: One line of the worker list. Fields: ``id`` (required) and
            ``name``, the worker's name in the pool (``"Model {id}: {name}"`` shows the
            conductor who it may ask; the paper lists ids alone, the default).
        first_step: The first worker's user message. Fields: ``question``, ``subtask``.
        worker_system: An optional system message given to every worker.
        self_worker_item: The worker-list line of the conductor itself, when it is offered
            as a worker. Field: ``id``.
        self_call: The question of an inner conductor call (a step routed to the
            conductor itself). Fields: ``task`` (the step's own message, required) and
            ``context`` (its earlier turns, each rendered with ``self_call_turn``).
        self_call_turn: One earlier (subtask, answer) turn in ``context``. Fields:
            ``subtask``, ``answer``.
    """

    conductor: str = CONDUCTOR_TEMPLATE
    recursive: str = RECURSIVE_TEMPLATE
    examples: tuple[FewShotExample, ...] = DEFAULT_EXAMPLES
    examples_header: str = EXAMPLES_HEADER
    example: str = EXAMPLE_TEMPLATE
    worker_list_item: str = "Model {id}"
    first_step: str = "{question}\n\n{subtask}"
    worker_system: str | None = None
    recursive_may_stop: str = RECURSIVE_MAY_STOP
    recursive_must_continue: str = RECURSIVE_MUST_CONTINUE
    self_worker_item: str = (
        "Model {id} (yourself: that step becomes a new workflow that you write for it)"
    )
    self_call: str = "{context}{task}"
    self_call_turn: str = "An earlier step was asked:\n{subtask}\nIt answered:\n{answer}\n\n"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``ConfigurationError`` naming the template and the missing or unknown field."""
        for name, (required, allowed) in _TEMPLATE_FIELDS.items():
            template = getattr(self, name)
            if not isinstance(template, str):
                raise ConfigurationError(f"PromptTemplates.{name} must be a str, got {template!r}")
            try:
                used = _field_names(template, f"PromptTemplates.{name}")
            except ConfigurationError:
                raise
            except ValueError as exc:
                raise ConfigurationError(
                    f"PromptTemplates.{name} is not a valid template: {exc}"
                ) from None
            if missing := required - used:
                raise ConfigurationError(
                    f"PromptTemplates.{name} lacks the field(s) {sorted(missing)}"
                )
            if unknown := used - allowed:
                raise ConfigurationError(
                    f"PromptTemplates.{name} uses unknown field(s) {sorted(unknown)}; "
                    f"allowed: {sorted(allowed)} (write literal braces as {{{{ and }}}})"
                )
        for i, ex in enumerate(self.examples):
            if not isinstance(ex, FewShotExample):
                raise ConfigurationError(f"PromptTemplates.examples[{i}] must be a FewShotExample")
        if self.worker_system is not None and not isinstance(self.worker_system, str):
            raise ConfigurationError("PromptTemplates.worker_system must be a str or None")

    @cached_property
    def _examples_block(self) -> str:
        if not self.examples:
            return ""
        body = "".join(
            self.example.format(n=i, question=ex.question, response=ex.response)
            for i, ex in enumerate(self.examples, start=1)
        )
        return self.examples_header + body

    def worker_list(
        self, num_workers: int, self_id: int | None = None, names: Sequence[str] = ()
    ) -> str:
        """The workers as the conductor sees them, ``Model 0`` .. ``Model k-1`` one a line;
        ``self_id`` marks the conductor itself when it is offered as a worker. ``names``:
        the workers' names in ``Model`` order, for a ``worker_list_item`` that shows them
        (a worker without one is named by its id)."""
        return "\n".join(
            self.self_worker_item.format(id=i)
            if i == self_id
            else self.worker_list_item.format(
                id=i, name=names[i] if i < len(names) else f"Model {i}"
            )
            for i in range(num_workers)
        )

    def conductor_prompt(
        self,
        question: str,
        num_workers: int,
        max_steps: int,
        *,
        self_id: int | None = None,
        names: Sequence[str] = (),
    ) -> str:
        """The observation for a new episode (or for an inner call of the conductor);
        ``names`` as in :meth:`worker_list`."""
        return self.conductor.format(
            question=question,
            worker_list=self.worker_list(num_workers, self_id, names),
            num_workers=num_workers,
            max_steps=max_steps,
            examples=self._examples_block,
        )

    def recursive_prompt(
        self,
        question: str,
        answer: str,
        num_workers: int,
        max_steps: int,
        *,
        may_stop: bool = True,
        self_id: int | None = None,
        names: Sequence[str] = (),
    ) -> str:
        """The observation after a plan has run, in multi-turn episodes. With
        ``may_stop=False`` (forced recursion) the empty-lists option is withdrawn;
        ``names`` as in :meth:`worker_list`."""
        continuation = self.recursive_may_stop if may_stop else self.recursive_must_continue
        return self.recursive.format(
            question=question,
            answer=answer,
            continuation=continuation.format(max_steps=max_steps),
            worker_list=self.worker_list(num_workers, self_id, names),
            num_workers=num_workers,
            max_steps=max_steps,
        )

    def self_call_question(self, messages: Sequence[Message]) -> str:
        """The question of an inner conductor call, written from the step's chat."""
        turns = [m for m in messages if m["role"] != "system"]
        *earlier, last = turns
        context = "".join(
            self.self_call_turn.format(subtask=user["content"], answer=reply["content"])
            for user, reply in zip(earlier[::2], earlier[1::2], strict=True)
        )
        return self.self_call.format(context=context, task=last["content"])

    def worker_messages(
        self,
        question: str,
        plan: Plan,
        step: int,
        responses: Sequence[str],
        *,
        question_to_all_workers: bool = False,
        prior: Sequence[tuple[str, str]] = (),
    ) -> list[Message]:
        """The chat that step ``step``'s worker receives.

        ``responses`` holds the answers of steps ``0 .. step-1``. The selected earlier
        steps appear as ``user`` (their subtask) / ``assistant`` (their answer) turns in
        step order, then the worker's own subtask as the last ``user`` turn, preceded by
        the question for the first step (or for every step with
        ``question_to_all_workers``). ``prior`` holds ``(subtask, answer)`` turns from
        before this plan (a recursive round's previous final answer): a step whose access
        is ``"all"`` sees them first.
        """
        messages: list[Message] = []
        if self.worker_system is not None:
            messages.append({"role": "system", "content": self.worker_system})
        if plan.access[step] == "all":
            for subtask, answer in prior:
                messages.append({"role": "user", "content": subtask})
                messages.append({"role": "assistant", "content": answer})
        for j in plan.visible(step):
            messages.append({"role": "user", "content": plan.subtasks[j]})
            messages.append({"role": "assistant", "content": responses[j]})
        subtask = plan.subtasks[step]
        if step == 0 or question_to_all_workers:
            subtask = self.first_step.format(question=question, subtask=subtask)
        messages.append({"role": "user", "content": subtask})
        return messages


DEFAULT_TEMPLATES = PromptTemplates()
