"""Tests for conductor_gym.sandbox: what run_python promises ordinary programs (statuses,
exit codes, stdin, argv, files, the work dir, the interpreter and its environment,
concurrent runs) and the isolation probe.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sandbox_support import IS_ROOT, _lines, _python_the_sandbox_uid_can_run

from conductor_gym import sandbox
from conductor_gym.sandbox import ExecResult, isolation, run_python


def test_isolation_reports_a_known_mode_and_is_stable() -> None:
    assert isolation() in {"bwrap", "unshare", "none"}
    assert isolation() == isolation()


def test_print_runs_ok() -> None:
    result = run_python("print('hello', 6 * 7)")
    assert result == ExecResult("ok", "hello 42\n", "", 0, result.wall_s, False)
    assert result.wall_s > 0


@pytest.mark.parametrize(
    ("code", "status", "exit_code"),
    [
        ("import sys; sys.exit(3)", "crashed", 3),
        ("exit(0)", "ok", 0),
        ("quit(4)", "crashed", 4),
        ("import os; os._exit(7)", "crashed", 7),
        ("raise ValueError('boom')", "crashed", 1),
    ],
)
def test_exit_code_is_propagated(code: str, status: str, exit_code: int) -> None:
    result = run_python(code, timeout_s=5)
    assert (result.status, result.exit_code) == (status, exit_code)


def test_uncaught_exception_traceback_starts_in_the_program() -> None:
    result = run_python("def f():\n    raise ValueError('boom')\nf()\n", timeout_s=5)
    assert result.status == "crashed"
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert result.stderr.rstrip().endswith("ValueError: boom")
    frames = [line for line in result.stderr.splitlines() if line.startswith("  File ")]
    assert len(frames) == 2 and all("main.py" in frame for frame in frames)


def test_syntax_error_is_reported_like_python() -> None:
    result = run_python("def broken(:\n    pass\n", timeout_s=5)
    assert (result.status, result.exit_code) == ("crashed", 1)
    assert "SyntaxError" in result.stderr and "main.py" in result.stderr
    assert "<string>" not in result.stderr


def test_signal_death_is_crashed_without_exit_code() -> None:
    result = run_python("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", timeout_s=5)
    assert (result.status, result.exit_code) == ("crashed", None)


def test_stdin_is_delivered() -> None:
    code = "import sys\ndata = sys.stdin.read()\nprint(len(data), data[:11].upper())"
    result = run_python(code, stdin="héllo wörld\n" + "x" * 2_000_000, timeout_s=10)
    assert result.status == "ok"
    assert result.stdout == f"{12 + 2_000_000} HÉLLO WÖRLD\n"


def test_unread_stdin_does_not_block_the_run() -> None:
    result = run_python("print('done')", stdin="y" * 3_000_000, timeout_s=10)
    assert (result.status, result.stdout) == ("ok", "done\n")


def test_argv_sys_path_and_working_directory_are_like_python_main_py() -> None:
    code = (
        "import json, os, sys\n"
        "print(json.dumps([sys.argv, sys.path[0], os.getcwd(), os.environ['HOME']]))\n"
    )
    result = run_python(code, argv=["alpha", "--beta"], timeout_s=5)
    assert result.status == "ok", result.stderr
    argv, path0, cwd, home = json.loads(result.stdout)
    assert argv == [os.path.join(cwd, "main.py"), "alpha", "--beta"]
    assert path0 == cwd == home


def test_files_are_written_and_readable() -> None:
    code = (
        "import helper\n"
        "print(open('data/in.txt', encoding='utf-8').read())\n"
        "print(list(open('blob.bin', 'rb').read()))\n"
        "print(helper.answer())\n"
        "open('data/in.txt', 'a').write('!')\n"
        "print(open('data/in.txt', encoding='utf-8').read())\n"
    )
    files = {
        "data/in.txt": "héllo",
        "blob.bin": b"\x00\xff\x10",
        "helper.py": "def answer():\n    return 42\n",
    }
    result = run_python(code, files=files, timeout_s=5)
    assert result.status == "ok", result.stderr
    assert _lines(result) == ["héllo", "[0, 255, 16]", "42", "héllo!"]


@pytest.mark.parametrize(
    "name", ["../escape.txt", "a/../../escape.txt", "..", "/etc/passwd", "", ".", "main.py"]
)
def test_files_outside_the_work_dir_are_rejected(name: str) -> None:
    with pytest.raises(ValueError):
        run_python("print(1)", files={name: "x"})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"timeout_s": 0},
        {"timeout_s": -1.0},
        {"timeout_s": float("nan")},
        {"memory_mb": 0},
        {"max_output_bytes": -1},
    ],
)
def test_invalid_limits_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        run_python("print(1)", **kwargs)


def test_work_dir_is_removed_even_when_made_unwritable() -> None:
    code = (
        "import os\n"
        "os.makedirs('locked/inner')\n"
        "open('locked/inner/f.txt', 'w').write('x')\n"
        "os.chmod('locked/inner', 0)\n"
        "os.chmod('locked', 0o500)\n"
        "print(os.getcwd())\n"
    )
    result = run_python(code, timeout_s=5)
    assert result.status == "ok", result.stderr
    workdir = result.stdout.strip()
    assert os.path.basename(workdir).startswith("conductor-sandbox-")
    assert not os.path.lexists(workdir)


def test_work_dir_is_removed_after_a_timeout() -> None:
    code = "import os\nprint(os.getcwd(), flush=True)\nwhile True:\n    pass\n"
    result = run_python(code, timeout_s=1)
    assert result.status == "timeout"
    workdir = result.stdout.strip()
    assert workdir and not os.path.lexists(workdir)


def test_site_packages_import_but_python_variables_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shadowmod.py").write_text("print('leaked')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "shadowmod.py"))
    code = (
        "import sys, numpy\n"
        "try:\n    import shadowmod\nexcept ImportError:\n    print('no shadowmod')\n"
        "print(sys.flags.isolated, sys.flags.ignore_environment, callable(exit), callable(help))\n"
        "print(int(numpy.arange(5).sum()))\n"
    )
    result = run_python(code, timeout_s=10)
    assert result.status == "ok", result.stderr
    assert _lines(result) == ["no shadowmod", "1 1 True True", "10"]


def test_concurrent_runs_from_threads() -> None:
    def one(i: int) -> ExecResult:
        return run_python(f"import sys\nprint({i} * int(sys.stdin.read()))", stdin="3")

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(one, range(12)))
    assert [r.status for r in results] == ["ok"] * 12
    assert [r.stdout for r in results] == [f"{3 * i}\n" for i in range(12)]


def test_no_isolation_warns_once_or_refuses_clearly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(sandbox.ISOLATION_ENV, "none")
    monkeypatch.setattr(sandbox, "_config", None)
    if IS_ROOT and _python_the_sandbox_uid_can_run() != sys.executable:
        # The run's uid cannot execute this interpreter, and "none" has no view to make
        # it reachable: refused, once, with the reason (not run with a broken Python).
        for _ in range(2):
            with pytest.raises(OSError, match=r"=none, but the sandbox's user may not execute"):
                isolation()
        return
    with caplog.at_level(logging.WARNING, logger="conductor_gym.sandbox"):
        assert isolation() == "none"
        assert isolation() == "none"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "NOT a security boundary" in warnings[0].getMessage()


def test_no_working_isolation_refuses_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # An unknown isolation program: nothing is found, so nothing is run unconfined.
    monkeypatch.setattr(sandbox, "_config", None)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(OSError, match=r"no isolation works .*bwrap: bwrap not found") as info:
        run_python("print('unconfined')")
    assert "apt-get install bubblewrap" in str(info.value)
    assert f"{sandbox.ISOLATION_ENV}=none" in str(info.value)
