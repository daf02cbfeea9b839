r"""The graders' agreement corpus: cases written here from the conventions of strong peers.

Every case is our own text. What carries over from each peer is the *fact* of what it
accepts or rejects (which answer formats it reads, which equivalences it grants, which
block it grades), never its test text:

* ``math-verify``: Hugging Face's Math-Verify (its extraction and equivalence tests:
  boxes, several boxes read as one set, units and ``\text{}`` dropped, ``x = 5`` against
  ``5``, intervals, matrices, ``\dfrac``);
* ``minerva``: lm-evaluation-harness's Minerva MATH format, ``Final Answer: The final
  answer is X. I hope it is correct.``;
* ``hendrycks``: the MATH paper's equivalence normalisation (``\tfrac``/``\dfrac``,
  ``\left``/``\right``, degrees, dollars, units, ``.5``, ``\sqrt2``, ``\frac12``, ``a/b``,
  a short ``x =`` prefix);
* ``lighteval``: lighteval's math prompt (``Therefore, the final answer is:
  $\boxed{X}$. I hope it is correct``) and its multiple-choice extraction (``Answer: C``,
  ``answer is (C)``, ``**C**``, ``\boxed{C}``, a letter alone on a line);
* ``simple-evals``: OpenAI simple-evals' ``Answer: X`` line (``Answer: $C$`` for multiple
  choice, the format its prompt asks for) and its normalisation of ``\textbf{}``,
  ``\text{}`` and ``$`` around a letter;
* ``lm-eval``: lm-evaluation-harness's answer patterns (MMLU-Pro/GPQA ``The answer is
  (X)``, GSM8K ``#### 42`` and its flexible last-number match);
* ``r1``: DeepSeek-R1-style ``<think>...</think>`` reasoning followed by the answer (peers
  grade only what follows the reasoning);
* ``reasoning-gym``: reasoning-gym's countdown (the expression inside
  ``<answer>...</answer>``, each given number at most once, exact value) and TinyZero's;
* ``bigcodebench``: BigCodeBench's sanitizer (the code that defines the entry point; top
  level example calls, ``Example usage`` blocks and output blocks are not the answer);
* ``issue-38``: the failure classes the issue lists (worker formats seen in real
  outputs), and ``numbers`` for number formats (``1 000``, ``0,111``, ``12:00``).

A case's ``expect`` is the verdict the convention gives. ``note`` says why when a case is
ambiguous and which way we grade. Code cases (``grader="code-extract"``) expect the
program the extraction must hand to the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CASES", "CODE_CASES", "MATH_FORMATS", "MATH_REFERENCES", "Case", "CodeCase"]


@dataclass(frozen=True)
class Case:
    """One response graded against one reference, with the verdict a peer gives."""

    grader: str
    peer: str
    response: str
    reference: str
    expect: bool
    metadata: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class CodeCase:
    """One code response and the program its extraction must yield (``None``: none)."""

    layout: str
    response: str
    entry_point: str | None
    expect: str | None
    peer: str = "bigcodebench"
    note: str = ""


def _math(peer: str, response: str, reference: str, expect: bool, note: str = "") -> Case:
    return Case("math", peer, response, reference, expect, note=note)


def _choice(peer: str, response: str, reference: str, expect: bool, note: str = "") -> Case:
    return Case("choice", peer, response, reference, expect, note=note)


def _numeric(peer: str, response: str, reference: str, expect: bool, note: str = "") -> Case:
    return Case("numeric", peer, response, reference, expect, note=note)


def _free(peer: str, response: str, reference: str, expect: bool, note: str = "") -> Case:
    return Case("freeform", peer, response, reference, expect, note=note)


_NUMBERS = [25, 5, 4, 3]


def _countdown(peer: str, response: str, target: int, expect: bool, note: str = "") -> Case:
    return Case("countdown", peer, response, str(target), expect, {"numbers": _NUMBERS}, note)


MATH_CASES: list[Case] = [
    _math(
        "issue-38",
        "So $\\boxed{5}$. The final answer is the boxed value above.",
        "5",
        True,
        "a final-answer phrase followed by prose does not supersede the box",
    ),
    _math(
        "issue-38",
        "So $\\boxed{5}$.\n\nFinal Answer: The final answer is $5$. I hope it is correct.",
        "5",
        True,
    ),
    _math("lighteval", "So $k = \\frac{1}{3}$ holds.", r"\frac{1}{3}", True),
    _math("lighteval", "The length is $\\frac{1}{3} \\text{meters}$.", r"\frac13", True),
    _math("lighteval", "Thus the answer is $\\cfrac{1}{3}$.", r"\frac13", True),
    _math("lighteval", "The answer is $[0,9)$.", "(0,9)", False),
    _math("lighteval", "Answer \\[ 9 \\]", "9", True),
    # -- Minerva (lm-eval minerva_math): the answer sits between the phrase and the cut.
    _math(
        "minerva",
        "So x is twelve.\nFinal Answer: The final answer is 12. I hope it is correct.",
        "12",
        True,
    ),
    _math("minerva", "Final Answer: The final answer is $12$. I hope it is correct.", "12", True),
    _math(
        "minerva",
        r"Final Answer: The final answer is $\frac{3}{4}$. I hope it is correct.",
        r"\frac{3}{4}",
        True,
    ),
    _math(
        "minerva",
        r"Final Answer: The final answer is (3,\frac{\pi}{2}). I hope it is correct.",
        r"\left( 3, \frac{\pi}{2} \right)",
        True,
    ),
    _math(
        "minerva",
        r"Final Answer: The final answer is \text{Evelyn}. I hope it is correct.",
        r"\text{Evelyn}",
        True,
    ),
    _math(
        "minerva",
        "Final Answer: The final answer is 0.5. I hope it is correct.",
        r"\frac{1}{2}",
        True,
    ),
    _math("minerva", "Final Answer: The final answer is 13. I hope it is correct.", "12", False),
    _math(
        "minerva",
        "Final Answer: The final answer is 1. I hope it is correct.",
        "12",
        False,
        "the cut must not leave digits of the prose behind",
    ),
    _math(
        "minerva",
        r"Final Answer: The final answer is $[-2,7]$. I hope it is correct.",
        "[-2,7]",
        True,
    ),
    # -- Math-Verify's extraction and equivalence facts.
    _math(
        "math-verify",
        r"The roots are $\boxed{-2}$ and $\boxed{1}$.",
        "1,-2",
        True,
        "several boxes are read as one set, as Math-Verify merges them",
    ),
    _math(
        "math-verify",
        r"\boxed{1} and \boxed{2}",
        "2",
        False,
        "two different boxes against one value: the merged set is not the value (hedging)",
    ),
    _math(
        "math-verify",
        r"First \boxed{206}, on reflection \boxed{204}",
        "204",
        False,
        "Math-Verify merges every box; a response that boxes two answers commits to both",
    ),
    _math(
        "math-verify",
        r"So $\boxed{7}$, i.e. again $\boxed{7}$.",
        "7",
        True,
        "the same answer boxed twice is one answer",
    ),
    _math("math-verify", r"The answer is $x = 5$.", "5", True),
    _math("math-verify", r"Therefore \boxed{\dfrac{7}{9}}.", r"\frac79", True),
    _math("math-verify", r"So the price is \boxed{18 \text{ dollars}}.", "18", True),
    _math("math-verify", r"The solution set is \boxed{[1,2)}.", "[1,2)", True),
    _math("math-verify", r"The solution set is \boxed{[1,2]}.", "[1,2)", False),
    _math("math-verify", r"The angle is $\boxed{120^\circ}$.", "120", True),
    _math("math-verify", r"Expanding, \boxed{x^2+2x+1}.", "(x+1)^2", True),
    _math(
        "math-verify",
        r"$\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}$",
        r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
        True,
    ),
    _math("math-verify", r"The probability is \boxed{0.75}.", r"\frac{3}{4}", True),
    _math("math-verify", r"Hence \boxed{\sqrt{2}}.", r"\sqrt{3}", False),
    _math(
        "math-verify",
        "After simplifying we get 3 and the result is $\\frac{1}{3}$.",
        r"\frac13",
        True,
        "no box and no phrase: the last expression is the answer",
    ),
    # -- hendrycks MATH equivalence (its normalisation of the written answer).
    _math("hendrycks", r"So \boxed{\sqrt2}.", r"\sqrt{2}", True),
    _math("hendrycks", r"So \boxed{\frac12}.", r"\frac{1}{2}", True),
    _math("hendrycks", r"So \boxed{.5}.", "0.5", True),
    _math("hendrycks", r"It costs \boxed{\$18.90}.", "18.90", True),
    _math("hendrycks", r"The side is \boxed{5\text{ cm}}.", "5", True),
    _math("hendrycks", r"Thus \boxed{k = 3}.", "3", True),
    _math("hendrycks", r"So \boxed{10\%}.", r"10\%", True),
    _math("hendrycks", r"So \boxed{3/4}.", r"\frac{3}{4}", True),
    _math("hendrycks", r"So \boxed{\left(1, 2\right)}.", "(1,2)", True),
    # -- lighteval's math prompt.
    _math(
        "lighteval",
        "Therefore, the final answer is: $\\boxed{4}$. I hope it is correct.",
        "4",
        True,
    ),
    _math("lighteval", "Therefore, the final answer is: $4$. I hope it is correct.", "4", True),
    _math("lighteval", "Therefore, the final answer is: $\\frac{1}{2}$", r"\frac{1}{2}", True),
    _math("lighteval", "Therefore, the final answer is: $5$. I hope it is correct.", "4", False),
    # -- simple-evals' MATH answer line.
    _math("simple-evals", "We add the two.\nAnswer: 12", "12", True),
    _math("simple-evals", "Answer: $\\frac{3}{4}$", r"\frac{3}{4}", True),
    _math("simple-evals", "Answer: x = 5, since both sides match.", "5", True),
    _math("simple-evals", "Answer: 7", "12", False),
    _math(
        "simple-evals", "Answer: 12, not 13.", "13", False, "the answer is what precedes the cut"
    ),
    # -- R1-style reasoning then answer.
    _math(
        "r1",
        "<think>Maybe \\boxed{3}? No, recheck: 2+2=4.</think>\nThe answer is $\\boxed{4}$.",
        "4",
        True,
        "boxes inside the reasoning are not the answer",
    ),
    _math("r1", "<think>2+2=4</think>\n\n**Answer:** 4", "4", True),
    _math("r1", "<think>It is 4.</think>\nThe answer is $\\boxed{5}$.", "4", False),
    # -- issue 38: a final-answer phrase after a box.
    _math(
        "issue-38",
        "So \\boxed{3}. Wait, I dropped a term.\nFinal answer: 4",
        "4",
        True,
        "a later final-answer phrase after a box is the answer (the box was superseded)",
    ),
    _math("issue-38", "So \\boxed{3}. Wait, I dropped a term.\nFinal answer: 4", "3", False),
    _math(
        "issue-38",
        "So \\boxed{3}. This answer is correct because 3 is prime.",
        "3",
        True,
        "'answer is correct' is prose, not a final-answer phrase: the box stands",
    ),
    _math("issue-38", "I could not finish the computation.", "12", False),
    _math("issue-38", r"\boxed{12}", "13", False),
    # -- references math-verify cannot read are compared as normalised text, never raised.
    _math(
        "issue-38",
        "The meeting starts at \\boxed{12:00}.",
        "12:00",
        True,
        "a reference Math-Verify cannot read is compared as hendrycks-normalised text",
    ),
    _math("issue-38", "Answer: 1:00", "12:00", False),
]

CHOICE_CASES: list[Case] = [
    _choice(
        "lighteval",
        "Answer: B\n\nWhy not the others: option C is correct only for ideal gases.",
        "B",
        True,
        "an answer phrase outranks a verdict in the explanation after it",
    ),
    _choice(
        "issue-38",
        "I first thought the answer is A. After checking, option C is correct.",
        "C",
        False,
        "ambiguous: an answer phrase outranks a later verdict (lighteval's order); "
        "a response that wants to revise writes a new answer line",
    ),
    _choice("lighteval", "Weighing it all, I think the correct answer is C", "C", True),
    _choice("lighteval", "It cannot be A, that makes no sense, so I think it's B", "B", True),
    _choice("lighteval", "It cannot be A, that makes no sense, so I think it's B", "A", False),
    _choice("lighteval", "The answer is surely D; it cannot be A or B", "D", True),
    _choice("lighteval", "The answer: D, since A and B contradict the data", "D", True),
    _choice(
        "lighteval",
        "D. It cannot be A or B.",
        "D",
        True,
        "a letter opening the response is its answer when nothing more explicit follows",
    ),
    _choice(
        "simple-evals",
        "Working through it...\nAnswer: $C$",
        "C",
        True,
        "the literal format simple-evals' prompt asks for",
    ),
    _choice("simple-evals", "Answer: C", "C", True),
    _choice("simple-evals", "Answer: (C)", "C", True),
    _choice("simple-evals", "Answer: \\textbf{C}", "C", True),
    _choice("simple-evals", "Answer: $\\text{C}$", "C", True),
    _choice("simple-evals", "Answer: B", "C", False),
    _choice("lighteval", "The correct choice is \\textbf{(C)}.", "C", True),
    _choice("lighteval", "**Answer:** C", "C", True),
    _choice("lighteval", "So the result is $\\boxed{C}$.", "C", True),
    _choice("lighteval", "The answer is C.", "C", True),
    _choice("lighteval", "Final answer: (C)", "C", True),
    _choice("lighteval", "After elimination:\n\nC", "C", True),
    _choice("lighteval", "After elimination:\n\n**C**", "C", True),
    _choice("lighteval", "The correct answer is C: 42.", "C", True),
    _choice("lighteval", "Answer: C) 42", "C", True),
    _choice("lm-eval", "Let's think step by step. ... the answer is (C).", "C", True),
    _choice("lm-eval", "the answer is (B)", "C", False),
    _choice("issue-38", "Answer - C", "C", True),
    _choice("issue-38", "Comparing the options, option C is correct.", "C", True),
    _choice("issue-38", "Having checked each one, I choose C.", "C", True),
    _choice(
        "issue-38",
        "Answer: C. Many confuse it with (A)",
        "C",
        True,
        "an explicit answer is not overridden by a letter mentioned after it",
    ),
    _choice("issue-38", "Answer: C. Many confuse it with (A)", "A", False),
    _choice(
        "issue-38",
        "The answer is B. Option D is wrong because it ignores friction.",
        "B",
        True,
        "a wrong letter mentioned last does not replace the answer",
    ),
    _choice(
        "issue-38", "The answer is B. Option D is wrong because it ignores friction.", "D", False
    ),
    _choice("issue-38", "Option A is incorrect, option C is correct.", "C", True),
    _choice("issue-38", "A is tempting, but the answer is B.", "A", False),
    _choice("issue-38", "Answer: A good first step is to tabulate. Answer: D", "D", True),
    _choice(
        "issue-38",
        "Answer: A good first step is to tabulate. Answer: D",
        "A",
        False,
        "the article 'A' starting a sentence is not an option",
    ),
    _choice("issue-38", "I cannot decide between the options.", "C", False),
    _choice("r1", "<think>Maybe the answer is A.</think>\nAnswer: C", "C", True),
    _choice("r1", "<think>The answer is C.</think>\nAnswer: B", "C", False),
]

COUNTDOWN_CASES: list[Case] = [
    _countdown("reasoning-gym", "<answer>(25 - 5) * 4</answer>", 80, True),
    _countdown(
        "reasoning-gym", "<think>25-5=20, 20*4=80</think>\n<answer>(25-5)*4</answer>", 80, True
    ),
    _countdown("reasoning-gym", "<answer> 25 * 3 + 5 </answer>", 80, True),
    _countdown(
        "reasoning-gym",
        "<answer>(25 - 5) * 4 = 80</answer>",
        80,
        True,
        "a trailing '= target' is dropped; only the left side is judged",
    ),
    _countdown("reasoning-gym", "<answer>(25 \u2212 5) \u00d7 4</answer>", 80, True),
    _countdown("reasoning-gym", "<answer>(25 - 5) * 3</answer>", 80, False),
    _countdown(
        "reasoning-gym",
        "<answer>25 * 4 - 5 * 4</answer>",
        80,
        False,
        "4 is given once and used twice: each number may be used as often as listed "
        "(TinyZero agrees; reasoning-gym's scorer would allow the reuse)",
    ),
    _countdown("reasoning-gym", "<answer>80</answer>", 80, False, "80 is not a given number"),
    _countdown(
        "reasoning-gym",
        "<answer>25 + 5</answer> Note: (25-5)*4 is another idea.",
        80,
        False,
        "the tagged expression is the answer, not an expression in prose",
    ),
    _countdown(
        "reasoning-gym",
        "<answer>(25-5)*4</answer>\n<answer>25+5</answer>",
        80,
        False,
        "the last tag is the answer",
    ),
    _countdown(
        "issue-38",
        "Trying products first.\n(25 - 5) * 4",
        80,
        True,
        "a bare final line that is an expression over the numbers is the answer",
    ),
    _countdown("issue-38", "Trying products first.\n(25 - 5) * 4 = 80", 80, True),
    _countdown("issue-38", "Trying products first.\n(25 - 5) * 3", 80, False),
    _countdown("issue-38", "I could not reach 80 with these numbers.", 80, False),
    _countdown("math-verify", "\\boxed{(25-5)\\times 4}", 80, True),
    _countdown("simple-evals", "Answer: (25 - 5) * 4", 80, True),
]

NUMERIC_CASES: list[Case] = [
    _numeric("lighteval", "In total 7,425,000 people.", "7425000", True),
    _numeric("lighteval", "Answer: 1000,99", "1000.99", True),
    _numeric("lighteval", "Answer: 1,000.0", "1000", True),
    _numeric("lighteval", "Answer: .4", "0.4", True),
    _numeric("lighteval", "It costs $1,000.99 in the end.", "1000.99", True),
    _numeric("lighteval", "Not 10: the area is 1,000.99 m\u00b2", "1000.99", True),
    _numeric("lighteval", "The code is AZYUK2A.", "2", False, "a digit inside a word is no number"),
    _numeric("lm-eval", "She has 1,234 marbles.\n#### 1,234", "1234", True),
    _numeric("lm-eval", "So 18 dollars are left. #### 18", "18", True),
    _numeric(
        "lm-eval",
        "The total is 20 and then 18 remain.",
        "18",
        True,
        "flexible extraction: the last number",
    ),
    _numeric("simple-evals", "Answer: 42", "42", True),
    _numeric("simple-evals", "Answer: $42$", "42", True),
    _numeric("simple-evals", "Answer: 42 apples", "42", True),
    _numeric("simple-evals", "Answer: 17", "18", False),
    _numeric("simple-evals", "Answer: -5", "5", False),
    _numeric("math-verify", "\\boxed{\\frac{3}{4}}", "0.75", True),
    _numeric("math-verify", "The answer is 18.00.", "18", True),
    _numeric(
        "numbers",
        "The answer is 1 000.",
        "1000",
        True,
        "space-grouped thousands (groups of three digits) are one number",
    ),
    _numeric("numbers", "So \\boxed{1\\,000}.", "1000", True),
    _numeric("numbers", "So \\boxed{1{,}000}.", "1000", True),
    _numeric(
        "numbers",
        "Answer: 0,111",
        "0.111",
        True,
        "a comma after a leading 0 (or before other than three digits) is a decimal comma",
    ),
    _numeric("numbers", "Answer: 1,22", "1,22", True, "the reference reads the same way"),
    _numeric("numbers", "Answer: 1,22", "122", False),
    _numeric(
        "numbers",
        "Answer: 12:00",
        "12:00",
        True,
        "a reference that is no number is compared as text, never raised",
    ),
    _numeric("numbers", "Answer: 1 000", "1", False),
    _numeric(
        "issue-38",
        "\\boxed{18}. Wait: one more coin.\nFinal answer: 19",
        "18",
        False,
        "a later final-answer phrase after a box is the answer",
    ),
    _numeric("issue-38", "The answer is 5, not 6.", "6", False),
    _numeric("minerva", "Final Answer: The final answer is 12. I hope it is correct.", "12", True),
]

FREEFORM_CASES: list[Case] = [
    _free("minerva", "The final answer is Paris. I hope it is correct.", "Paris", True),
    _free(
        "minerva", "Final Answer: The final answer is Paris. I hope it is correct.", "Paris", True
    ),
    _free("simple-evals", "Answer: Paris, since it is the capital.", "Paris", True),
    _free("simple-evals", "Answer: Lyon", "Paris", False),
    _free("simple-evals", "Answer: 3.1416", "3.14159", True, "within the default 1e-4 tolerance"),
    _free("math-verify", "The answer is \\boxed{\\text{Paris}}.", "Paris", True),
    _free("math-verify", "So \\boxed{\\frac{1}{2}}.", "0.5", True),
    _free("numbers", "Answer: 12:00", "12:00", True),
    _free("numbers", "Answer: 1,22", "1,22", True),
    _free("numbers", "Answer: 11:00", "12:00", False),
    _free("r1", "<think>Maybe Lyon.</think>\nParis", "Paris", True),
    _free("r1", "<think>It is Paris.</think>\nLyon", "Paris", False),
    _free("issue-38", "The answer is Paris, not Lyon.", "Lyon", False),
    _free("issue-38", "Answer: H2O", "H2O", True),
]

CASES: list[Case] = MATH_CASES + CHOICE_CASES + COUNTDOWN_CASES + NUMERIC_CASES + FREEFORM_CASES
"""Every text-answer case, grader by grader."""


# -- code: which program is graded -----------------------------------------------------------

_SOLUTION = "import numpy as np\n\ndef task_func(values):\n    return int(np.sum(values))"
_WRONG = "def task_func(values):\n    return 0"
_EXAMPLE = "values = [1, 2, 3]\nresult = task_func(values)\nprint(result)"
_LEETCODE = (
    "class Solution:\n    def twoSum(self, nums, target):\n"
    "        seen = {}\n        for i, n in enumerate(nums):\n"
    "            if target - n in seen:\n                return [seen[target - n], i]\n"
    "            seen[n] = i"
)
_MAIN_GUARD = '\n\nif __name__ == "__main__":\n    print(task_func([1, 2]))'
_TESTS = (
    "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
    "        self.assertEqual(task_func([1]), 1)"
)
_STDIO = "a, b = map(int, input().split())\nprint(a + b)"


def _fence(code: str, tag: str = "python") -> str:
    return f"```{tag}\n{code}\n```"


CODE_CASES: list[CodeCase] = [
    CodeCase("one block", f"Here it is.\n\n{_fence(_SOLUTION)}\n", "task_func", _SOLUTION),
    CodeCase(
        "solution, then an Example usage block",
        f"{_fence(_SOLUTION)}\n\nExample usage:\n{_fence(_EXAMPLE)}\n",
        "task_func",
        _SOLUTION,
    ),
    CodeCase(
        "solution, then an untagged Output block",
        f"{_fence(_SOLUTION)}\n\nOutput:\n{_fence('6', '')}\n",
        "task_func",
        _SOLUTION,
    ),
    CodeCase(
        "solution, then a python-tagged output block",
        f"{_fence(_SOLUTION)}\n\nThis prints:\n{_fence('[1, 2, 3]')}\n",
        "task_func",
        _SOLUTION,
    ),
    CodeCase(
        "solution with example calls at its end",
        _fence(_SOLUTION + "\n\n# Example usage\n" + _EXAMPLE) + "\n",
        "task_func",
        _SOLUTION,
        note="top-level calls after the definition are example usage (BigCodeBench drops them)",
    ),
    CodeCase(
        "solution with a __main__ guard",
        _fence(_SOLUTION + _MAIN_GUARD) + "\n",
        "task_func",
        _SOLUTION,
    ),
    CodeCase(
        "draft, then a corrected solution",
        f"First try:\n{_fence(_WRONG)}\nFixed:\n{_fence(_SOLUTION)}\n",
        "task_func",
        _SOLUTION,
    ),
    CodeCase(
        "solution, then a unittest block",
        _fence(_SOLUTION) + "\n\nTests:\n" + _fence(_TESTS) + "\n",
        "task_func",
        _SOLUTION,
    ),
    CodeCase(
        "no fence: the code chunk",
        f"Sure! Here is the function:\n\n{_SOLUTION}\n\nIt sums the values.",
        "task_func",
        _SOLUTION,
        note="BigCodeBench's sanitizer reads the code chunk of an unfenced response",
    ),
    CodeCase(
        "wrong solution, then an example whose output differs",
        f"{_fence(_WRONG)}\n\nExample usage:\n{_fence('print(task_func([1, 2, 3]))  # 6')}\n",
        "task_func",
        _WRONG,
        note="the defining block is graded (and fails its tests); the example never replaces it",
    ),
    CodeCase(
        "LeetCode class, then an example block",
        f"{_fence(_LEETCODE)}\n\nExample:\n{_fence('print(Solution().twoSum([2, 7], 9))')}\n",
        "twoSum",
        _LEETCODE,
    ),
    CodeCase(
        "stdin program, then an Output block",
        f"{_fence(_STDIO)}\n\nOutput:\n{_fence('3', '')}\n",
        None,
        _STDIO,
    ),
    CodeCase("no code at all", "I would sum the values.", "task_func", None),
]
"""Code layouts: the program the extraction must hand to the tests."""


# -- MATH-style references written in common final-answer formats ----------------------------

MATH_REFERENCES: list[str] = [
    "12",
    "-3",
    "0",
    "204",
    "2025",
    r"\frac{3}{4}",
    r"-\frac{1}{3}",
    r"\frac{7}{9}",
    r"\sqrt{3}",
    r"2\sqrt{5}",
    r"\frac{\sqrt{3}}{2}",
    r"18\pi",
    r"\frac{\pi}{4}",
    "0.5",
    "3.75",
    r"10\%",
    r"120^\circ",
    r"\$18.90",
    r"(3, \frac{\pi}{2})",
    "(1,-2)",
    "[1,2)",
    r"(-\infty, 3]",
    r"\{1,2,3\}",
    "1,-2",
    r"\text{Evelyn}",
    r"\text{(C)}",
    "x^2+2x+1",
    "2x-3",
    "y = 2x + 1",
    r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}",
    "1000",
    "3^{10}",
    r"\frac{1}{2}",
    "e^2",
    r"\log_2 3",
    "5 \\text{ cm}",
    r"2 + \sqrt{2}",
    "64",
    "11_{2}",
    r"\infty",
]
"""MATH-style reference answers (written here, covering the answer types of MATH500's
test split: integers, fractions, radicals, pi, decimals, percent, degrees, dollars,
points, intervals, sets, several values, names, an option, polynomials, an equation, a
matrix, powers, logarithms, units, a base subscript, infinity). MATH500 itself is not in
the repository or any installed package, so the format table is measured on these."""

MATH_FORMATS: dict[str, str] = {
    "minerva": "Final Answer: The final answer is {answer}. I hope it is correct.",
    "boxed": "Combining the steps, the answer is $\\boxed{{{answer}}}$.",
    "answer-line": "We are done.\nAnswer: ${answer}$",
    "lighteval": "Therefore, the final answer is: $\\boxed{{{answer}}}$. I hope it is correct.",
    "r1": "<think>Let me try 7 first: \\boxed{{7}} fails.</think>\nThe answer is "
    "$\\boxed{{{answer}}}$.",
    "dollars": "So the result is ${answer}$.",
}
"""Final-answer formats a worker writes (``str.format`` templates over ``answer``)."""
