"""Tests for what a sandboxed program sees of the host: only the system's program and
library dirs, its interpreter with its libraries, and its own work dir. Each runs in
both confining modes, bwrap and unshare, whatever :func:`isolation` chose here (a mode
this machine lacks is skipped, or fails under ``CONDUCTOR_GYM_REQUIRE_EXTRAS=1``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import _confined, _lines

from conductor_gym import sandbox
from conductor_gym.graders import grade
from conductor_gym.sandbox import run_python
from conductor_gym.tasks import make_task_source

CHECKOUT = Path(__file__).resolve().parents[2]
LIVECODEBENCH = CHECKOUT / "tests" / "fixtures" / "livecodebench"


@pytest.fixture(params=["bwrap", "unshare"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every run_python of the test uses this mode."""
    monkeypatch.setattr(sandbox, "_config", _confined(request.param))
    return str(request.param)


@pytest.fixture
def answers(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """An answer file in the project checkout, in a task data dir, in a dataset cache
    (Hugging Face's layout) and in pytest's temporary dir; the first three are readable
    by every user (files 0644, dirs 0755), so that only the sandbox's view protects them."""
    token = f"ANSWER-{uuid.uuid4().hex}"
    shared = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else tmp_path
    data_dir = Path(tempfile.mkdtemp(prefix="conductor-data-", dir=shared))
    cache_dir = Path(tempfile.mkdtemp(prefix="conductor-hf-home-", dir=shared))
    places = {
        "checkout": CHECKOUT / f".sandbox-answer-{token}.txt",
        "data_dir": data_dir / "test.jsonl",
        "cache": cache_dir / "datasets" / "livecodebench" / "answers.arrow",
        "tmp_path": tmp_path / "answers.json",
    }
    try:
        for path in places.values():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(token)
            path.chmod(0o644)
        for top in (data_dir, cache_dir):
            for folder, _, _ in os.walk(top):
                os.chmod(folder, 0o755)
        yield places
    finally:
        places["checkout"].unlink(missing_ok=True)
        for top in (data_dir, cache_dir):
            shutil.rmtree(top, ignore_errors=True)


_READ_ALL = (
    "import sys\n"
    "for path in sys.argv[1:]:\n"
    "    try:\n"
    "        print(open(path).read())\n"
    "    except OSError as e:\n"
    "        print(type(e).__name__)\n"
)


def test_answers_on_the_host_cannot_be_read(mode: str, answers: dict[str, Path]) -> None:
    paths = [str(p) for p in answers.values()]
    # The control: on the host, any user could read every one of them.
    token = answers["checkout"].read_text()
    host = subprocess.run(
        [sys.executable, "-c", _READ_ALL, *paths], capture_output=True, text=True, check=True
    )
    assert host.stdout.splitlines() == [token] * len(paths)

    result = run_python(_READ_ALL, argv=paths, timeout_s=10)
    assert result.status == "ok", result.stderr
    assert dict(zip(answers, _lines(result), strict=True)) == dict.fromkeys(
        answers, "FileNotFoundError"
    )


def test_the_view_holds_the_system_the_interpreter_and_the_work_dir(mode: str) -> None:
    code = (
        "import json, os, sys, tempfile\n"
        "print(json.dumps({'root': sorted(os.listdir('/')), 'etc': os.listdir('/etc'),\n"
        "                  'tmp': os.listdir('/tmp'), 'cwd': os.getcwd(),\n"
        "                  'home': os.path.exists('/home'),\n"
        "                  'checkout': os.path.exists(sys.argv[1])}))\n"
    )
    result = run_python(code, argv=[str(CHECKOUT / "pyproject.toml")], timeout_s=10)
    assert result.status == "ok", result.stderr
    seen = json.loads(result.stdout)
    config = sandbox._get_config()
    interpreter_tops = {Path(op.path).parts[1] for op in config.view if op.kind == "ro"}
    system = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc"}
    assert set(seen["root"]) <= system | {"tmp"} | interpreter_tops
    assert {"usr", "etc", "dev", "proc", "tmp"} <= set(seen["root"])
    assert set(seen["etc"]) <= {"passwd", "group", "hosts", "ld.so.cache", "localtime"} | {
        "alternatives", "host.conf", "ld.so.conf", "ld.so.conf.d", "mime.types",
        "nsswitch.conf", "os-release", "timezone",
    }  # fmt: skip
    assert "shadow" not in seen["etc"]
    # /tmp is the run's own: its work dir, and the dirs holding the interpreter if it
    # lives below /tmp
    tmp_tops = {Path(op.path).parts[2] for op in config.view if op.path.startswith("/tmp/")}
    assert set(seen["tmp"]) == {Path(seen["cwd"]).name} | tmp_tops
    assert not seen["checkout"]
    assert not seen["home"] or any(op.path.startswith("/home/") for op in config.view)


def test_an_interpreter_in_a_private_home_can_start_itself(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A virtual environment inside a dir only its owner may enter (like a home at 0700,
    # or pyenv under /root): the run's uid must still be able to execute it, again and
    # again, and get this very Python (not another the loader falls back to).
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
    python = str(home / "venv" / "bin" / "python")
    monkeypatch.setattr(sandbox, "_config", _confined(mode, python))
    code = (
        "import subprocess, sys\n"
        "child = subprocess.run([sys.executable, '-c', 'import sys; print(sys.version)'],\n"
        "                       capture_output=True, text=True)\n"
        "print(sys.executable)\n"
        "print(sys.version == child.stdout.strip(), child.returncode)\n"
        "print(sys.version)\n"
    )
    result = run_python(code, timeout_s=10)
    assert result.status == "ok", result.stderr
    assert _lines(result) == [python, "True 0", sys.version]


def test_a_program_cannot_copy_its_expected_output_from_the_task_data(mode: str) -> None:
    # The exploit: find the test whose input is on stdin in the LiveCodeBench files the
    # task was loaded from, and print its stored output (private tests decoded too).
    source = make_task_source("livecodebench", data_dir=LIVECODEBENCH)
    tasks = [source[i] for i in range(len(source))]
    task = next(t for t in tasks if t.metadata["code_kind"] == "stdio")
    exploit = (
        "import base64, json, os, pickle, sys, zlib\n"
        "wanted = sys.stdin.read()\n"
        f"folder = {str(LIVECODEBENCH)!r}\n"
        "for name in sorted(os.listdir(folder)):\n"
        "    for line in open(os.path.join(folder, name)):\n"
        "        row = json.loads(line)\n"
        "        cases = json.loads(row['public_test_cases'])\n"
        "        raw = row['private_test_cases']\n"
        "        try:\n"
        "            cases += json.loads(raw)\n"
        "        except ValueError:\n"
        "            value = pickle.loads(zlib.decompress(base64.b64decode(raw)))\n"
        "            cases += json.loads(value) if isinstance(value, (str, bytes)) else value\n"
        "        for case in cases:\n"
        "            if case['input'] == wanted:\n"
        "                print(case['output'], end='')\n"
    )
    # The control: where the fixture can be read, the exploit passes every test.
    for test in task.metadata["tests"]:
        host = subprocess.run(
            [sys.executable, "-c", exploit], input=test["input"], capture_output=True, text=True
        )
        assert host.stdout == test["output"], host.stderr
    response = f"My solution:\n\n```python\n{exploit}```\n"
    verdict = grade(task.grader, response, task.reference, **task.metadata)
    assert not verdict.correct
    assert verdict.reason.startswith("stdio: test 1 of 2 failed: crashed (FileNotFoundError")


def test_editable_installs_outside_site_packages_are_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A .pth path line into a source checkout (an editable install) would mount the
    # checkout, tests and data included; a path line inside site-packages is a library.
    site_dir = tmp_path / "site-packages"
    (site_dir / "vendored").mkdir(parents=True)
    (site_dir / "libs.pth").write_text(f"vendored\n{CHECKOUT}\nimport os\n")
    monkeypatch.setattr("site.getsitepackages", lambda: [str(site_dir)])
    assert sandbox._site_paths() == (str(site_dir), str(site_dir / "vendored"))
