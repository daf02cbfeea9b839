from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conductor_gym.pool.config import (
    PRESET_DIR,
    PoolConfigError,
    load_pool_file,
    load_preset,
    preset_names,
)
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.sim.profiles import PAPER_PROFILES
from conductor_gym.sim.worker import paper_pool_specs
from conductor_gym.workers.budget import Budget

HEADER = 'name = "test-pool"\ndescription = "a pool for tests"\n'
TWO_WORKERS = '[[workers]]\nname = "a"\n\n[[workers]]\nname = "b"\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pool.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(PoolConfigError) as caught:
        load_pool_file(path)
    lines = str(caught.value).split("\n")
    assert list(caught.value.errors) == lines
    assert all(line.startswith(f"{path}: ") for line in lines), lines
    return lines


# ------------------------------------------------------------------ presets


def test_presets_are_the_toml_files_and_all_load() -> None:
    names = preset_names()
    assert {"sim-paper", "local-smol", "paper-constrained", "paper-unconstrained"} <= set(names)
    assert names == sorted(p.stem for p in PRESET_DIR.glob("*.toml"))
    for name in names:
        config = load_preset(name)
        assert config.name == name
        assert config.description
        assert config.source == PRESET_DIR / f"{name}.toml"
        json.dumps(config.describe())  # JSON-ready
        WorkerPool(config.specs, k=config.k, shuffle=config.shuffle)


def test_sim_paper_file_equals_paper_pool_specs() -> None:
    config = load_preset("sim-paper")
    assert list(config.specs) == paper_pool_specs()
    assert config.backends == frozenset({"simulated"})
    assert config.k is None and config.shuffle is False
    assert config.run_budget is None and config.episode_budget is None


def test_paper_pools_use_the_sim_paper_names() -> None:
    for name in ("paper-constrained", "paper-unconstrained"):
        config = load_preset(name)
        assert [s.name for s in config.specs] == list(PAPER_PROFILES)
        assert config.backends == frozenset({"litellm"})
        assert all(s.temperature == 0.2 for s in config.specs)


def test_paper_constrained_reasoning_settings() -> None:
    specs = {s.name: s for s in load_preset("paper-constrained").specs}
    assert all(s.max_tokens == 4096 for s in specs.values())
    assert specs["gpt-5"].model == "openai/gpt-5"
    assert specs["gpt-5"].params["reasoning_effort"] == "minimal"
    assert specs["gemini-2.5-pro"].params["thinking"] == {"type": "enabled", "budget_tokens": 128}
    assert "thinking" not in specs["claude-sonnet-4"].params
    direct = specs["qwen3-32b-direct"].params
    assert direct["extra_body"]["chat_template_kwargs"] == {"enable_thinking": False}
    assert (direct["top_p"], direct["extra_body"]["top_k"], direct["presence_penalty"]) == (
        0.8,
        20,
        1.0,
    )
    thinking = specs["qwen3-32b-thinking"].params
    assert thinking["extra_body"]["chat_template_kwargs"] == {"enable_thinking": True}
    assert specs["gpt-5"].backend_options["api_key_env"] == "OPENAI_API_KEY"
    assert specs["gemma-3-27b-it"].backend_options["api_base"].startswith("http://localhost:")
    for name, spec in specs.items():  # prices: our estimates, shared with the simulated pool
        profile = PAPER_PROFILES[name]
        assert (spec.price_in_per_mtok, spec.price_out_per_mtok) == (
            profile.price_in_per_mtok,
            profile.price_out_per_mtok,
        )


def test_paper_unconstrained_budgets_follow_table_3() -> None:
    specs = {s.name: s for s in load_preset("paper-unconstrained").specs}
    assert specs["gemini-2.5-pro"].max_tokens == 65535
    assert specs["gemini-2.5-pro"].params["thinking"]["budget_tokens"] == 32768
    assert specs["claude-sonnet-4"].max_tokens == 64000
    assert specs["claude-sonnet-4"].params["thinking"] == {
        "type": "enabled",
        "budget_tokens": 32768,
    }
    assert specs["gpt-5"].max_tokens == 128000
    assert specs["gpt-5"].params["reasoning_effort"] == "high"
    for name in ("deepseek-r1-distill-qwen-32b", "gemma-3-27b-it"):
        assert specs[name].max_tokens == 20480
    for name in ("qwen3-32b-thinking", "qwen3-32b-direct"):
        assert specs[name].max_tokens == 20480
        kwargs = specs[name].params["extra_body"]["chat_template_kwargs"]
        assert kwargs == {"enable_thinking": True}


def test_local_smol_is_hf_smollm2_at_zero_price() -> None:
    config = load_preset("local-smol")
    assert config.backends == frozenset({"hf"})
    for spec in config.specs:
        assert spec.model == "smollm2-135m"
        assert (spec.max_tokens, spec.temperature) == (256, 0.2)
        assert spec.price_in_per_mtok == spec.price_out_per_mtok == 0.0
        assert spec.backend_options["threads"] == 1


def test_loading_presets_stays_lean() -> None:
    code = (
        "import sys, conductor_gym\n"
        "lean = 'torch' not in sys.modules\n"  # pydantic is a core dependency (EnvConfig)
        "from conductor_gym.pool.config import load_preset, preset_names\n"
        "for name in preset_names():\n"
        "    load_preset(name)\n"
        "heavy = ('torch', 'transformers', 'vllm', 'litellm', 'datasets')\n"
        "print(lean, [m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True []"


def test_unknown_preset_lists_the_available_ones() -> None:
    with pytest.raises(PoolConfigError, match=r"unknown pool preset 'nope'.*sim-paper"):
        load_preset("nope")
    with pytest.raises(PoolConfigError, match="unknown pool preset"):
        load_preset("../pools/sim-paper")


# ------------------------------------------------------------------ features


def test_defaults_merge_under_workers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + """
[defaults]
max_tokens = 100
temperature = 0.5
params = { top_p = 0.9, seed = 1 }
backend_options = { latency_scale = 0.0 }
max_concurrency = 4

[[workers]]
name = "a"
temperature = 0
params = { top_p = 0.5 }

[[workers]]
name = "b"
model = "gpt-5"
max_tokens = 7
backend_options = { extra = 2 }
""",
    )
    a, b = load_pool_file(str(path)).specs
    assert (a.max_tokens, a.temperature, a.max_concurrency) == (100, 0.0, 4)
    assert dict(a.params) == {"top_p": 0.5, "seed": 1}
    assert dict(a.backend_options) == {"latency_scale": 0.0}
    assert (b.max_tokens, b.temperature, b.model_name) == (7, 0.5, "gpt-5")
    assert dict(b.params) == {"top_p": 0.9, "seed": 1}
    assert dict(b.backend_options) == {"latency_scale": 0.0, "extra": 2}
    assert b.price_in_per_mtok is None and b.requests_per_minute is None  # WorkerSpec defaults


def test_budgets_k_and_shuffle(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + "k = 1\nshuffle = true\n"
        + "[run_budget]\nmax_usd = 5\nmax_calls = 100\n"
        + "[episode_budget]\nmax_tokens = 20000\n"
        + TWO_WORKERS,
    )
    config = load_pool_file(path)
    assert config.run_budget == Budget(max_calls=100, max_usd=5.0)
    assert config.episode_budget == Budget(max_tokens=20000)
    assert (config.k, config.shuffle) == (1, True)
    described = config.describe()
    assert described["run_budget"] == {"max_calls": 100, "max_tokens": None, "max_usd": 5.0}
    assert [w["name"] for w in described["workers"]] == ["a", "b"]


def test_describe_redacts_secret_looking_backend_options(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER + '[[workers]]\nname = "a"\nbackend_options = { auth_token = "t", key_env = "K" }\n',
    )
    options = load_pool_file(path).describe()["workers"][0]["backend_options"]
    assert options == {"auth_token": "<redacted>", "key_env": "K"}


# ------------------------------------------------------------------ bad files

BAD_FILES = {
    "wrong type": (
        HEADER + TWO_WORKERS + 'temperature = "hot"\n',
        "workers[1] (name='b').temperature: Input should be a valid number",
    ),
    "bool for a number": (
        HEADER + TWO_WORKERS + "max_tokens = true\n",
        "workers[1] (name='b').max_tokens: Input should be a valid integer",
    ),
    "negative temperature": (
        HEADER + TWO_WORKERS + "temperature = -0.1\n",
        "workers[1] (name='b').temperature: Input should be greater than or equal to 0",
    ),
    "unknown field": (
        HEADER + '[[workers]]\nname = "a"\ntempreature = 0.2\n',
        "workers[0] (name='a').tempreature: Extra inputs are not permitted",
    ),
    "missing worker name": (
        HEADER + '[[workers]]\nname = "a"\n[[workers]]\nmodel = "gpt-5"\n',
        "workers[1] (name missing).name: Field required",
    ),
    "duplicate names": (
        HEADER + TWO_WORKERS + '[[workers]]\nname = "a"\n',
        "workers[2] (name='a').name: duplicate worker name (first used by workers[0])",
    ),
    "unknown backend": (
        HEADER + TWO_WORKERS + 'backend = "nope"\n',
        "workers[1] (name='b').backend: unknown backend 'nope'",
    ),
    "k too large": (
        HEADER + "k = 3\n" + TWO_WORKERS,
        "k: must be <= the number of workers (2), got 3",
    ),
    "k zero": (HEADER + "k = 0\n" + TWO_WORKERS, "k: Input should be greater than or equal to 1"),
    "TOML syntax": (
        HEADER + '[[workers]]\nname = "a"\ntemperature = = 1\n',
        "line 5, column 15: TOML syntax error: Invalid value",
    ),
    "bad budget value": (
        HEADER + "[run_budget]\nmax_usd = -1\n" + TWO_WORKERS,
        "run_budget.max_usd: Input should be greater than 0",
    ),
    "unknown budget field": (
        HEADER + "[episode_budget]\nmax_dollars = 1\n" + TWO_WORKERS,
        "episode_budget.max_dollars: Extra inputs are not permitted",
    ),
    "secret-looking param": (
        HEADER + TWO_WORKERS + 'params = { api_key = "sk-x" }\n',
        "workers[1] (name='b').params: ['api_key'] look like credentials",
    ),
    "credential in backend_options": (
        HEADER + TWO_WORKERS + 'backend_options = { api_key = "sk-x" }\n',
        "workers[1] (name='b').backend_options: ['api_key'] look like credentials",
    ),
    "wrong type inside defaults": (
        HEADER + "[defaults]\nrequests_per_minute = 0\n" + TWO_WORKERS,
        "defaults.requests_per_minute: Input should be greater than 0",
    ),
    "price in defaults (not a generation field)": (
        HEADER + "[defaults]\nprice_in_per_mtok = 1.0\n" + TWO_WORKERS,
        "defaults.price_in_per_mtok: Extra inputs are not permitted",
    ),
    "infinite price": (
        HEADER + TWO_WORKERS + "price_out_per_mtok = inf\n",
        "workers[1] (name='b').price_out_per_mtok: Input should be a finite number",
    ),
    "no workers": (HEADER, "workers: Field required"),
    "missing description": (
        'name = "x"\n' + TWO_WORKERS,
        "description: Field required",
    ),
    "worker not a table": (
        HEADER + "workers = [1]\n",
        "workers[0] (not a table): Input should be a valid dictionary",
    ),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_file_names_file_worker_and_field(tmp_path: Path, case: str) -> None:
    text, expected = BAD_FILES[case]
    path = write(tmp_path, text)
    lines = problems(path)
    assert any(line.startswith(f"{path}: {expected}") for line in lines), lines


def test_every_problem_is_one_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + '[[workers]]\nname = "a"\ntemperature = -1\nmax_tokens = 0\n'
        + '[[workers]]\nname = "b"\nmodel = 3\n',
    )
    lines = problems(path)
    assert len(lines) == 3
    assert f"{path}: workers[0] (name='a').max_tokens: Input should be greater than" in "\n".join(
        lines
    )
    assert any("workers[1] (name='b').model: Input should be a valid string" in s for s in lines)


def test_a_defaults_problem_is_reported_once(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + '[defaults]\nparams = { password = "x" }\n' + TWO_WORKERS)
    lines = problems(path)
    assert len(lines) == 1
    assert lines[0].startswith(f"{path}: defaults.params: ['password'] look like credentials")


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(PoolConfigError, match=r"missing\.toml: cannot read the file"):
        load_pool_file(missing)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(PoolConfigError, match=r"binary\.toml: not UTF-8"):
        load_pool_file(binary)


def test_error_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="k: must be"):
        load_pool_file(write(tmp_path, HEADER + "k = 9\n" + TWO_WORKERS))
