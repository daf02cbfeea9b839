"""Where a validated leaderboard entry goes: which section, ranked or listed apart, and why.

Contract. A **section** (:class:`Section`) is one suite fingerprint on one pool: the suite's
name and fingerprint, the pool setting (``simulated``, ``constrained``,
``unconstrained``) and the pool's own fingerprint (:func:`pool_fingerprint`: every
worker's backend, model, generation settings, prices and simulator options, ``k``,
``shuffle`` and the episode budget), the env settings the run changed
(:func:`env_setting`), the graders in force (:func:`grader_setting`) and the entry's
**trust level** (:data:`TRUST_LEVELS`: a re-play from a submitted response cache rests
on the submitter's claim, so it is never ranked with simulated re-plays), so entries are
compared like with like only. Each placement also says whose completions the entry
shows (:class:`AgentIdentity`, :data:`AGENT_CHECKS`; :mod:`conductor_gym.board.identity`).
Nothing in the key is taken on the file's word where it can be derived:

* the env settings are those the re-play's envs ran with
  (:attr:`conductor_gym.bench.replay.Replay.settings`; without a re-play, the recorded
  settings as the re-play would decode them). An agent's declared ``env_overrides`` are
  kept out of the key only where the re-play shows the agent's own need: a plan limit
  ``max_steps`` above the default that the longest re-played plan fills exactly (the
  mixture of agents' 8 steps). A lower limit, or any other setting, is in the key
  whoever claims it (:func:`excused_overrides`);
* the graders in force are, per benchmark, the graders that replaced a task's own in
  the run's latest re-scoring (:func:`~conductor_gym.bench.replay.recorded_graders`:
  the graders the re-play grades with), each with its version derived here from the
  installed grader's source (:func:`~conductor_gym.bench.rescore.grader_version`),
  never read from the file. A re-scored file thus never shares a section with the run
  it re-scored unless it kept every task's own grader.

An entry is **ranked** in its section when every rule below holds; otherwise it is
**listed apart** with one reason per rule it breaks (:func:`place`):

==================  =========================================================================
rule                why
==================  =========================================================================
verified            every episode was re-played and matched
                    (:mod:`conductor_gym.bench.replay`): on a simulated pool (trust level
                    ``simulated re-play``), or on a real pool from the submitted response
                    cache (``cache re-play``); hub suites (datasets that need downloads)
                    and local ``jsonl:`` suites cannot be re-played offline
whole suite         no ``limit``: the suite's full task set, or a fixed subset suite with its
                    own fingerprint (``offline-160``)
repeats             at least :data:`MIN_REPEATS` (the paper reports up to 16)
suite seed          the run's seed is :data:`SUITE_SEED`, from which every episode's reset
                    seed derives (:func:`conductor_gym.bench.suites.episode_seed`), so
                    nobody picks the seeds or repeats that happened to go well
failures capped     at most :data:`MAX_FAILED_SHARE` of the episodes are infrastructure
                    failures (never scores; the board shows their share for every entry)
==================  =========================================================================

Completions the validator re-derived never share a ranking with completions it cannot:
the section key holds the entry's **ranking** (:data:`RANKINGS`, from its
:class:`AgentIdentity`), so the entries of an agent re-run on validation are ranked
among themselves and self-reported completions (a policy checkpoint, an LLM, an agent
or plan file) in a table of their own, shown below them. A simulated pool that is not a
shipped preset (fitted to recorded episodes, or hand-made) is named as such in its
section's title (:attr:`Section.custom_pool`); a pool name that looks like a preset's
(:func:`lookalike_preset`) is refused on validation.

The order of the board is one key, :func:`ranking_key` (section, then
:data:`RANKED_BY` best first, then name): the README, the page and the plot all show
entries in that order, and the page marks :data:`RANKED_BY` as its sorted column.

The board marks, within a section, the entries on the accuracy-vs-cost Pareto frontier
(:func:`conductor_gym.bench.frontier.pareto_frontier`, the project's one rule: ties beat
nobody). :func:`price_table` names what priced an entry's costs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from conductor_gym.bench.results import Results, WorkerRecord
from conductor_gym.core.config import EnvConfig
from conductor_gym.pool.splits import parse_split_pool_name

if TYPE_CHECKING:
    from conductor_gym.bench.replay import Replay
    from conductor_gym.bench.suites import Suite

__all__ = [
    "AGENT_CHECKS",
    "MAX_FAILED_SHARE",
    "MIN_REPEATS",
    "RANKED_BY",
    "RANKINGS",
    "SUITE_SEED",
    "TRUST_LEVELS",
    "AgentCheck",
    "AgentIdentity",
    "Placement",
    "Rankable",
    "Ranking",
    "Section",
    "TrustLevel",
    "Verification",
    "custom_pool",
    "draw_setting",
    "env_setting",
    "excused_overrides",
    "failed_share",
    "grader_setting",
    "graders_in_force",
    "lookalike_preset",
    "name_skeleton",
    "offline_suite",
    "place",
    "pool_fingerprint",
    "price_table",
    "ran_settings",
    "ranking_key",
    "simulator_setting",
    "task_graders",
]

MIN_REPEATS = 3
"""Fewest repeats of a ranked entry."""

MAX_FAILED_SHARE = 0.02
"""Largest share of infrastructure failures (outcome ``"error"``) of a ranked entry."""

SUITE_SEED = 0
"""The seed of every ranked run: the reset seed of episode (source, task ``i``, repeat
``r``) is ``episode_seed(SUITE_SEED, source, i, r)``."""


TrustLevel = Literal["simulated re-play", "cache re-play", "unverified"]
"""How far the board checked an entry's episodes (:data:`TRUST_LEVELS`)."""

TRUST_LEVELS: dict[str, str] = {
    "simulated re-play": (
        "every episode was re-played on the simulated pool, which answers by itself: no "
        "submitted file can forge its answers"
    ),
    "cache re-play": (
        "every episode was re-played from the response cache the submitter shipped: the "
        "cache is the submitter's claim about what the real workers answered, checked for "
        "plausibility (tokens, prices, latencies) and open to a spot check against the live "
        "endpoints (`conductor-gym leaderboard spot-check`); ranked only among cache re-plays"
    ),
    "unverified": "the episodes were not re-played; never ranked",
}
"""Each trust level and what it means (the board's README says the same)."""

AgentCheck = Literal["re-run", "self-reported completions"]
"""Whose word the completions rest on (:data:`AGENT_CHECKS`)."""

AGENT_CHECKS: dict[str, str] = {
    "re-run": (
        "a deterministic built-in agent (random with its per-episode seed included): the "
        "validator built it from its spec, asked it on every re-played observation and "
        "got the recorded completions"
    ),
    "self-reported completions": (
        "an agent the validator cannot re-run (an LLM or policy conductor, an agent file): "
        "the completions are the submitter's, with the checkpoint's hash where the results "
        "record one"
    ),
}
"""Each agent check and what it means."""

Ranking = Literal["re-derived", "self-reported"]
"""Which ranking of its section an entry is in (:data:`RANKINGS`)."""

RANKINGS: dict[str, str] = {
    "re-derived": (
        "the validator re-derived every completion (a built-in agent re-run on every "
        "re-played observation): ranked among re-derived entries only"
    ),
    "self-reported": (
        "completions the validator cannot re-derive (a policy checkpoint, an LLM, an agent "
        "or plan file): the submitter's word, ranked only among themselves, in a table of "
        "their own below the re-derived entries of the same pool and suite"
    ),
}
"""Each ranking and what it means (the board's README says the same)."""

RANKED_BY = "accuracy"
"""The column a ranking sorts on, best first (:func:`ranking_key`)."""


@dataclass(frozen=True)
class Verification:
    """How the entry's episodes were checked: ``trust`` (:data:`TRUST_LEVELS`) and
    ``how`` (what was re-played, or why nothing was)."""

    trust: TrustLevel
    how: str

    @property
    def replayed(self) -> bool:
        """Every episode was re-played and matched."""
        return self.trust != "unverified"

    def __str__(self) -> str:
        if not self.replayed:
            return f"unverified: {self.how}"
        return f"{self.trust} ({self.how})"


@dataclass(frozen=True)
class AgentIdentity:
    """Whether the completions are the named agent's: ``check`` (:data:`AGENT_CHECKS`)
    and ``detail`` (what was re-run, or the checkpoint's hash)."""

    check: AgentCheck
    detail: str = ""

    def __str__(self) -> str:
        check = "agent re-run" if self.check == "re-run" else self.check
        return f"{check} ({self.detail})" if self.detail else check


@dataclass(frozen=True, order=True)
class Section:
    """A like-with-like group of entries (module docstring)."""

    suite: str
    fingerprint: str
    pool_setting: str
    pool: str
    pool_fingerprint: str
    env: str = ""
    graders: str = ""
    trust: str = "simulated re-play"
    simulator: str = ""
    draw: str = ""
    custom_pool: bool = False
    ranking: str = "re-derived"

    def title(self) -> str:
        """``suite <name> (<fingerprint>), <setting> pool <name> (<fingerprint>)``, then
        ``, simulator <version>`` for a pool with simulated workers (:func:`simulator_setting`),
        ``, <k> of <n> workers per question, shuffled ids`` for a randomised pool
        (:func:`draw_setting`),
        ``, env <settings>`` when the run changed env settings (:func:`env_setting`),
        ``, graders <graders>`` when graders replaced the tasks' own
        (:func:`grader_setting`), ``, cache re-play`` for a section of cache re-plays
        (:data:`TRUST_LEVELS`) and ``, self-reported completions`` for the ranking of
        self-reported entries (:data:`RANKINGS`). A simulated pool that is not a shipped
        preset reads ``<setting> pool <name> (<fingerprint>, fitted or hand-made, not a
        preset)``."""
        pool = f"{self.pool_setting} pool {self.describe()}"
        return f"suite {self.suite} ({self.fingerprint}), {pool}"

    def describe(self) -> str:
        """The title after ``pool``: the pool's name and fingerprint (marked when it is a
        custom simulated pool), then the simulator, draw, env, graders, trust and ranking
        where they are not the defaults (:meth:`title`)."""
        custom = ", fitted or hand-made, not a preset" if self.custom_pool else ""
        return ", ".join([f"{self.pool} ({self.pool_fingerprint}{custom})", *self.details()])

    def details(self) -> list[str]:
        """The title's parts after the pool (:meth:`describe`), each where it is not
        the default."""
        parts = [f"simulator {self.simulator}"] if self.simulator else []
        parts += [self.draw] if self.draw else []
        parts += [f"env {self.env}"] if self.env else []
        parts += [f"graders {self.graders}"] if self.graders else []
        parts += [self.trust] if self.trust == "cache re-play" else []
        parts += ["self-reported completions"] if self.ranking == "self-reported" else []
        return parts


class Rankable(Protocol):
    """What :func:`ranking_key` reads of a board row."""

    @property
    def section(self) -> Section: ...
    @property
    def accuracy(self) -> float | None: ...
    @property
    def name(self) -> str: ...
    @property
    def slug(self) -> str: ...


def ranking_key(entry: Rankable) -> tuple[Section, float, str, str]:
    """The board's one order: by section (:class:`Section`'s field order: within one suite
    and pool the re-derived ranking before the self-reported one), then
    :data:`RANKED_BY` best first (an entry with no scored episode last), then name and
    slug (a stable tie-break)."""
    accuracy = entry.accuracy if entry.accuracy is not None else -1.0
    return (entry.section, -accuracy, entry.name, entry.slug)


@dataclass(frozen=True)
class Placement:
    """The entry's section, whether it is ranked there and, if not, every reason."""

    section: Section
    verification: Verification
    reasons: tuple[str, ...]
    identity: AgentIdentity = AgentIdentity("self-reported completions")

    @property
    def ranked(self) -> bool:
        return not self.reasons

    def __str__(self) -> str:
        where = f"{self.section.title()}; {self.verification}; {self.identity}"
        if self.ranked:
            return f"ranked in {where}"
        return f"listed apart ({'; '.join(self.reasons)}), in {where}"


def _worker_records(results: Results) -> list[dict[str, Any]]:
    """Every worker's settings that change answers or prices (``latency_scale`` only
    changes how long a simulated call waits); a ``v1`` file's as it describes them."""
    from conductor_gym.bench.replay import ReplayError, worker_specs

    try:
        specs = worker_specs(results)
    except ReplayError:
        workers = results.pool.get("workers")
        return list(workers) if isinstance(workers, list) else []
    return [WorkerRecord.from_spec(spec).model_dump(mode="json") for spec in specs]


def simulator_setting(results: Results) -> str:
    """The simulator version the pool's simulated workers run, as their records name it
    (``"v3"``, ``"v2+v3"`` for a mixed pool; ``""`` when no worker is simulated): part of
    the pool fingerprint already, named in the heading so that a reader tells a ``v2``
    section of ``sim-paper`` from a ``v3`` one."""
    versions = sorted(
        {
            str(record.get("options", {}).get("version", ""))
            for record in _worker_records(results)
            if record.get("backend") == "simulated"
        }
    )
    return "+".join(v for v in versions if v)


# Latin look-alikes of Cyrillic and Greek letters (after NFKC and casefolding): enough
# that a name cannot pose as another by swapping one letter for its twin.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝвмнткʏɡαβεικνορτυχϲ",
    "aeopcyxijsdhlqwbmhtkygabeiknoptuxc",
)


def name_skeleton(text: str) -> str:
    """``text`` reduced for comparing names: NFKC, casefolded, common Cyrillic and Greek
    look-alikes of Latin letters mapped to them, and everything but letters and digits
    dropped (``"S\u0456m_Paper"``, with a Cyrillic i, -> ``"simpaper"``)."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_CONFUSABLES)
    return "".join(c for c in folded if c.isalnum())


_POOL_NAME = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?")


def lookalike_preset(name: str) -> str | None:
    """Why the pool name ``name`` could pass for a shipped preset it is not, or ``None``:
    a name that is not printable ASCII (up to 200 characters; no letter of another
    script can stand in for a Latin one), or whose
    :func:`name_skeleton` equals or extends a preset's (``Sim_Paper``,
    ``sim-paper-2026``). A shipped preset's own name passes (its workers are checked
    against the preset)."""
    from conductor_gym.bench.replay import shipped_presets

    presets = shipped_presets()
    if (split := parse_split_pool_name(name)) is not None:
        name = split[0]  # a preset's held-out split ("sim-paper@heldout-sizes") is that preset's
    if name in presets:
        return None
    if not _POOL_NAME.fullmatch(name):
        return (
            f"pool name {name!r} is not printable ASCII (at most 200 characters): a board "
            "pool name is plain text, so that no letter of another script or NFKC form can "
            "make it pass for another"
        )
    skeleton = name_skeleton(name)
    for preset in sorted(presets):
        if skeleton.startswith(name_skeleton(preset)):
            return (
                f"pool name {name!r} looks like the shipped preset {preset!r}, but the pool "
                "is not that preset: name a fitted or hand-made pool so that it cannot pass "
                "for a preset (e.g. 'myteam-fit-2026')"
            )
    return None


def custom_pool(results: Results) -> bool:
    """Whether the pool has simulated workers and is not a shipped preset (a pool fitted
    to recorded episodes, or hand-made): its board section says so."""
    from conductor_gym.bench.replay import shipped_presets

    simulated = any(r.get("backend") == "simulated" for r in _worker_records(results))
    name = str(results.pool.get("name"))
    base = split[0] if (split := parse_split_pool_name(name)) is not None else name
    return simulated and base not in shipped_presets()


def draw_setting(results: Results) -> str:
    """How each question's workers were drawn, when not all of them in pool order:
    ``"4 of 7 workers per question, shuffled ids"`` (``k`` of the pool's workers, and/or
    the ``Model`` ids shuffled); ``""`` otherwise. Part of the pool fingerprint already,
    named in the heading so that a reader tells the randomised pool's section from the
    fixed one's."""
    pool = results.pool
    k, shuffle = pool.get("k"), pool.get("shuffle")
    parts = []
    workers = pool.get("workers")
    total = len(workers) if isinstance(workers, list) else None
    if isinstance(k, int) and not isinstance(k, bool) and k != total:
        parts.append(f"{k} of {total} workers per question" if total else f"{k} workers")
    if shuffle is True:
        parts.append("shuffled ids")
    return ", ".join(parts)


def pool_fingerprint(results: Results) -> str:
    """First 12 hex digits of the SHA-256 of the pool's workers, ``k``, ``shuffle`` and
    episode budget (module docstring)."""
    pool = results.pool
    data = {
        "workers": _worker_records(results),
        "k": pool.get("k"),
        "shuffle": pool.get("shuffle"),
        "episode_budget": pool.get("episode_budget"),
    }
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


_POOL_SETTINGS = ("k", "shuffle_workers", "cache")  # the pool fingerprint's, or moot
_DEFAULT_MAX_STEPS: int = EnvConfig.model_fields["max_steps"].default


def ran_settings(results: Results, replay: Replay | None = None) -> dict[str, Any]:
    """The env settings the entry's episodes ran with that are not the defaults, as
    results record them: the re-play's (:attr:`Replay.settings
    <conductor_gym.bench.replay.Replay.settings>`) when there was one, else the recorded
    ``env_kwargs`` as the re-play would decode them
    (:func:`~conductor_gym.bench.replay.replay_config`), else (settings it refuses) as
    recorded; the pool's ``k``, ``shuffle_workers`` and ``cache`` left out."""
    if replay is not None:
        settings = dict(replay.settings)
    else:
        from conductor_gym.bench.evaluate import recorded_settings
        from conductor_gym.bench.replay import ReplayError, replay_config

        try:
            settings = recorded_settings(replay_config(results))
        except (ReplayError, TypeError, ValueError):
            settings = dict(results.env_kwargs)
    return {key: value for key, value in settings.items() if key not in _POOL_SETTINGS}


def excused_overrides(results: Results, replay: Replay | None = None) -> dict[str, Any]:
    """The agent's declared ``env_overrides`` that stay out of the section key: only
    ``max_steps``, when the env ran with it (:func:`ran_settings`), it is above
    :class:`~conductor_gym.core.config.EnvConfig`'s default and the re-play's longest
    plan has exactly that many steps (the agent needed the longer limit, as the mixture
    of agents needs 8). Nothing is excused without a re-play."""
    declared = results.agent.get("env_overrides")
    if replay is None or not isinstance(declared, dict):
        return {}
    value = declared.get("max_steps")
    ran = ran_settings(results, replay).get("max_steps")
    needed = isinstance(value, int) and value > _DEFAULT_MAX_STEPS
    if needed and value == ran and replay.longest_plan == value:
        return {"max_steps": value}
    return {}


def env_setting(results: Results, replay: Replay | None = None) -> str:
    """The env settings the run changed, as compact JSON (``""`` for none): the settings
    the episodes ran with (:func:`ran_settings`), less the paper's reward scheme and the
    agent's excused overrides (:func:`excused_overrides`). Entries that changed the env
    (a plan limit, recursion, prompt templates, budgets, ...) are compared only with
    entries that changed it alike."""
    excused = excused_overrides(results, replay)
    changed = {
        key: value
        for key, value in ran_settings(results, replay).items()
        if key not in excused and not (key == "reward" and _is_paper_reward(value))
    }
    return json.dumps(changed, sort_keys=True, separators=(",", ":")) if changed else ""


@functools.lru_cache(maxsize=16)
def task_graders(name: str, limit: int | None = None) -> dict[str, tuple[str, ...]] | None:
    """Per benchmark (suite source) of the registered suite ``name`` (cut to ``limit``),
    the graders its tasks name, sorted; ``None`` when the suite does not read offline
    (:func:`offline_suite`). Cached: these sources are deterministic."""
    found = offline_suite(name, limit)
    if found is None:
        return None
    sources = found[0].sources
    return {
        bench: tuple(sorted({source[i].grader for i in range(len(source))}))
        for bench, source in sources.items()
    }


def _derived_version(grader: str) -> str:
    from conductor_gym.bench.rescore import grader_version

    try:
        return grader_version(grader)
    except KeyError:  # UnknownNameError: refused by the submission's grader check
        return "unregistered"


def graders_in_force(results: Results) -> dict[str, dict[str, str]]:
    """Per benchmark, each task grader that the run's latest re-scoring replaced, mapped
    to ``"<grader>@<version>"`` with the version derived from the installed grader
    (:func:`~conductor_gym.bench.rescore.grader_version`); empty when every task was
    graded by its own grader. A suite that does not read offline is one benchmark
    ``"*"`` (its tasks' graders cannot be listed here)."""
    from conductor_gym.bench.replay import recorded_graders

    swaps = recorded_graders(results) or {}
    if not swaps:
        return {}
    graders = task_graders(results.suite.name, results.suite.limit)
    benchmarks = graders if graders is not None else {"*": tuple(swaps)}
    out: dict[str, dict[str, str]] = {}
    for bench, own in sorted(benchmarks.items()):
        used = {t: f"{g}@{_derived_version(g)}" for t, g in sorted(swaps.items()) if t in own}
        if used:
            out[bench] = used
    return out


def grader_setting(results: Results) -> str:
    """The graders in force (:func:`graders_in_force`) as
    ``"<benchmark>:<task grader>-><grader>@<version>"`` entries joined by ``,``
    (``""`` when every task kept its own grader)."""
    return ",".join(
        f"{bench}:{task}->{grader}"
        for bench, used in graders_in_force(results).items()
        for task, grader in used.items()
    )


def _is_paper_reward(value: Any) -> bool:
    paper = {"correct": 1.0, "wrong": 0.5, "invalid": 0.0}
    return value == "paper" or (
        isinstance(value, dict) and {k: value.get(k) for k in paper} == paper
    )


def failed_share(results: Results) -> float:
    """Fraction of the episodes that are infrastructure failures (0.0 with none)."""
    overall = results.metrics.get("overall")
    if overall is None or overall.n == 0:
        return 0.0
    return overall.infra_failures / overall.n


def _price_source(worker: WorkerRecord) -> str:
    if worker.price_in_per_mtok is not None or worker.price_out_per_mtok is not None:
        return "pool-file prices"
    return {
        "simulated": "simulator profile prices",
        "litellm": "LiteLLM price map",
        "hf": "unpriced (local)",
        "vllm": "unpriced (local)",
    }.get(worker.backend, f"{worker.backend} backend prices")


def price_table(results: Results) -> str:
    """What priced the entry's worker costs, e.g. ``"simulator profile prices"`` or
    ``"pool-file prices + LiteLLM price map"`` (``"unknown"`` for a ``v1`` file that
    names no shipped preset)."""
    from conductor_gym.bench.replay import ReplayError, worker_specs

    try:
        workers = [WorkerRecord.from_spec(spec) for spec in worker_specs(results)]
    except ReplayError:
        return "unknown"
    return " + ".join(sorted({_price_source(w) for w in workers}))


@functools.lru_cache(maxsize=16)
def offline_suite(name: str, limit: int | None = None) -> tuple[Suite, dict[str, Any]] | None:
    """The registered suite ``name`` (cut to ``limit``) with its
    :meth:`~conductor_gym.bench.suites.Suite.info` when every source reads here without a
    download (procedural sources), else ``None``: hub suites need datasets, and a
    ``jsonl:`` suite names a file on the submitter's machine (never opened here).
    Cached: these sources are deterministic."""
    from conductor_gym.bench.replay import offline_sources
    from conductor_gym.bench.suites import SUITES, get_suite

    if name not in SUITES:
        return None
    suite = get_suite(name, limit=limit)
    if offline_sources(suite, downloaded=False) is None:
        return None
    return suite, suite.info()


def _partial_reason(results: Results) -> str | None:
    suite = results.suite
    if suite.limit is None:
        return None
    reason = f"partial: the first {suite.limit} tasks per source of suite {suite.name!r}"
    from conductor_gym.bench.suites import SUITES

    for name in SUITES:
        found = offline_suite(name)
        if found is not None and found[1]["fingerprint"] == suite.fingerprint:
            return reason + f" (the tasks of the fixed subset suite {name!r}: run that suite)"
    return reason + " (rank the whole suite, or a fixed subset suite such as 'offline-160')"


def place(
    results: Results,
    pool_setting: str,
    verification: Verification,
    *,
    pool: str | None = None,
    replay: Replay | None = None,
    identity: AgentIdentity | None = None,
) -> Placement:
    """The entry's :class:`Placement` (module docstring); ``replay`` is what its
    re-play found (its env settings and longest plan set the section's env);
    ``identity`` whether its agent was re-run (default: self-reported completions), which
    sets its ranking (:data:`RANKINGS`)."""
    identity = identity or AgentIdentity("self-reported completions")
    section = Section(
        suite=results.suite.name,
        fingerprint=results.suite.fingerprint,
        pool_setting=pool_setting,
        pool=pool if pool is not None else str(results.pool.get("name") or "custom"),
        pool_fingerprint=pool_fingerprint(results),
        env=env_setting(results, replay),
        graders=grader_setting(results),
        trust=verification.trust,
        simulator=simulator_setting(results),
        draw=draw_setting(results),
        custom_pool=custom_pool(results),
        ranking="re-derived" if identity.check == "re-run" else "self-reported",
    )
    reasons: list[str] = []
    if not verification.replayed:
        reasons.append(str(verification))
    if partial := _partial_reason(results):
        reasons.append(partial)
    if results.repeats < MIN_REPEATS:
        reasons.append(f"{results.repeats} repeat(s): a ranked entry needs at least {MIN_REPEATS}")
    if results.seed != SUITE_SEED:
        reasons.append(
            f"seed {results.seed}: ranked runs use the suite seed {SUITE_SEED}, from which "
            "every episode's seed derives"
        )
    share = failed_share(results)
    if share > MAX_FAILED_SHARE:
        reasons.append(
            f"{100 * share:.1f} % of the episodes failed (infrastructure), above the "
            f"{100 * MAX_FAILED_SHARE:g} % cap"
        )
    return Placement(section, verification, tuple(reasons), identity)
