"""The simulated pool's data: the paper's single-model accuracies and our cost estimates.

Accuracies are the Conductor paper's constrained-setting numbers (arXiv 2512.04388,
Table 7 for the in-domain benchmarks, Table 8 for the unseen ones). Token counts,
prices and latencies are not in the paper: they are our estimates (see
:mod:`conductor_gym.sim.worker`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "IN_DOMAIN",
    "LINEAGE",
    "OUT_OF_DOMAIN",
    "PAPER_ACCURACY",
    "PAPER_PROFILES",
    "PROFILE_TOKEN_FACTOR",
    "SimProfile",
]

IN_DOMAIN = ("math500", "mmlu", "rlpr", "livecodebench")
OUT_OF_DOMAIN = ("aime25", "bigcodebench", "gpqa-diamond")

# Single-model accuracy (%) in the paper's constrained setting.
# Table 7 (in-domain): MATH500, MMLU, RLPR, LiveCodeBench.
# Table 8 (unseen tasks): AIME25, BigCodeBench, GPQA-Diamond.
PAPER_ACCURACY: dict[str, dict[str, float]] = {
    "gemini-2.5-pro": {
        "math500": 85.30, "mmlu": 91.53, "rlpr": 39.57, "livecodebench": 40.14,
        "aime25": 46.67, "bigcodebench": 35.1, "gpqa-diamond": 75.25,
    },
    "claude-sonnet-4": {
        "math500": 82.90, "mmlu": 90.66, "rlpr": 32.60, "livecodebench": 38.00,
        "aime25": 35.33, "bigcodebench": 35.8, "gpqa-diamond": 67.30,
    },
    "gpt-5": {
        "math500": 74.45, "mmlu": 89.79, "rlpr": 33.13, "livecodebench": 57.50,
        "aime25": 46.67, "bigcodebench": 33.8, "gpqa-diamond": 72.73,
    },
    "deepseek-r1-distill-qwen-32b": {
        "math500": 78.50, "mmlu": 84.41, "rlpr": 32.75, "livecodebench": 24.86,
        "aime25": 30.00, "bigcodebench": 24.3, "gpqa-diamond": 51.01,
    },
    "gemma-3-27b-it": {
        "math500": 37.45, "mmlu": 63.58, "rlpr": 14.93, "livecodebench": 7.21,
        "aime25": 6.67, "bigcodebench": 10.8, "gpqa-diamond": 33.33,
    },
    "qwen3-32b-thinking": {
        "math500": 76.85, "mmlu": 83.28, "rlpr": 34.35, "livecodebench": 31.21,
        "aime25": 23.33, "bigcodebench": 20.9, "gpqa-diamond": 59.09,
    },
    "qwen3-32b-direct": {
        "math500": 73.15, "mmlu": 84.02, "rlpr": 30.60, "livecodebench": 26.79,
        "aime25": 23.33, "bigcodebench": 23.0, "gpqa-diamond": 54.05,
    },
}  # fmt: skip

# Relative completion length per benchmark profile (our estimate).
PROFILE_TOKEN_FACTOR: dict[str, float] = {
    "math500": 1.2, "mmlu": 0.5, "rlpr": 0.8, "livecodebench": 1.5,
    "aime25": 1.6, "bigcodebench": 1.4, "gpqa-diamond": 0.9,
}  # fmt: skip


@dataclass(frozen=True)
class SimProfile:
    """One simulated model.

    ``accuracy`` maps a benchmark profile to P(correct) for a one-step plan that
    carries the question; a profile it lacks uses the mean over its in-domain entries.
    """

    key: str
    accuracy: Mapping[str, float]
    tokens_mean: float
    price_in_per_mtok: float
    price_out_per_mtok: float
    latency_base_s: float
    tokens_per_s: float
    lineage: str = ""
    """Models of one lineage share part of their blind spots (simulator ``v2``)."""

    def p_correct(self, profile: str) -> float:
        if profile in self.accuracy:
            return self.accuracy[profile]
        known = [self.accuracy[d] for d in IN_DOMAIN if d in self.accuracy]
        values = known or list(self.accuracy.values())
        return sum(values) / len(values) if values else 0.0


# key: (mean completion tokens, $ in / M tok, $ out / M tok, base latency s, tokens/s)
_MODEL_COSTS: dict[str, tuple[float, float, float, float, float]] = {
    "gemini-2.5-pro": (700, 1.25, 10.0, 1.2, 90),
    "claude-sonnet-4": (600, 3.00, 15.0, 1.0, 60),
    "gpt-5": (500, 1.25, 10.0, 0.8, 80),
    "deepseek-r1-distill-qwen-32b": (1100, 0.12, 0.18, 0.5, 40),
    "gemma-3-27b-it": (400, 0.10, 0.20, 0.4, 50),
    "qwen3-32b-thinking": (1000, 0.10, 0.30, 0.5, 45),
    "qwen3-32b-direct": (450, 0.10, 0.30, 0.5, 45),
}

# The two Qwen3-32B workers are one model in two modes (app. A): one lineage. The
# R1 distillation of Qwen2.5-32B is counted as its own model.
LINEAGE: dict[str, str] = {"qwen3-32b-thinking": "qwen3-32b", "qwen3-32b-direct": "qwen3-32b"}

PAPER_PROFILES: dict[str, SimProfile] = {
    key: SimProfile(
        key=key,
        accuracy={profile: pct / 100.0 for profile, pct in PAPER_ACCURACY[key].items()},
        tokens_mean=costs[0],
        price_in_per_mtok=costs[1],
        price_out_per_mtok=costs[2],
        latency_base_s=costs[3],
        tokens_per_s=costs[4],
        lineage=LINEAGE.get(key, ""),
    )
    for key, costs in _MODEL_COSTS.items()
}
"""The seven workers of the paper (app. A), in the paper's order."""
