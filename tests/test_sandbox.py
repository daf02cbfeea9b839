"""Tests for conductor_gym.sandbox: a battery of hostile programs, each of which must be
contained, reported with the right status and leave the host unchanged.

Tests that rely on a particular isolation skip when this machine does not provide it
(``isolation()`` says what it does); run as root with bubblewrap installed, none skip.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import resource
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conductor_gym import sandbox
from conductor_gym.sandbox import ExecResult, isolation, run_python

IS_ROOT = os.geteuid() == 0


def _require_bwrap() -> None:
    if isolation() != "bwrap":
        pytest.skip(f"needs bubblewrap isolation (this machine: {isolation()})")


def _require_isolation() -> None:
    if isolation() == "none":
        pytest.skip("needs bwrap or unshare isolation (this machine: none)")


def _require_process_limit() -> None:
    # RLIMIT_NPROC is only applied where it cannot count the caller's own processes.
    if isolation() != "bwrap" and not IS_ROOT:
        pytest.skip("the process limit needs bwrap or root")


def _pids_with(token: str) -> list[int]:
    """Host pids whose command line contains ``token``."""
    found = []
    needle = token.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if needle in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def _leftovers(token: str) -> list[int]:
    """Processes carrying ``token`` once run_python has returned. Under bwrap the sandbox
    waits for its pid namespace to be torn down, so none may remain at all; elsewhere
    SIGKILL is asynchronous, so allow the kernel a moment to finish the job."""
    pids = _pids_with(token)
    if isolation() == "bwrap":
        return pids
    deadline = time.monotonic() + 2.0
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = _pids_with(token)
    return pids


def _host_tasks() -> int:
    """Threads on the whole host (the kernel's count in /proc/loadavg): cheap enough to
    sample while a fork bomb is running, unlike a scan of /proc."""
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[1])


def _lines(result: ExecResult) -> list[str]:
    return result.stdout.splitlines()


# --------------------------------------------------------------------------- basics


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


def test_no_isolation_warns_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(sandbox.ISOLATION_ENV, "none")
    monkeypatch.setattr(sandbox, "_config", None)
    with caplog.at_level(logging.WARNING, logger="conductor_gym.sandbox"):
        assert isolation() == "none"
        assert isolation() == "none"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "NOT a security boundary" in warnings[0].getMessage()


# --------------------------------------------------------------------------- hostile


def test_infinite_loop_times_out() -> None:
    result = run_python("print('started', flush=True)\nwhile True:\n    pass\n", timeout_s=1)
    assert (result.status, result.exit_code) == ("timeout", None)
    assert result.stdout == "started\n"


def test_sleeping_past_the_limit_times_out() -> None:
    result = run_python("import time\ntime.sleep(30)\n", timeout_s=1)
    assert (result.status, result.exit_code) == ("timeout", None)


def test_program_ignoring_sigterm_and_sigalrm_is_still_killed() -> None:
    token = f"ignore-signals-{uuid.uuid4().hex}"
    code = (
        "import signal, subprocess, sys\n"
        "for s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT, signal.SIGHUP):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "signal.alarm(1)\n"
        "helper = ('import signal, time\\n'\n"
        "          'for s in (signal.SIGTERM, signal.SIGALRM, signal.SIGHUP):\\n'\n"
        "          '    signal.signal(s, signal.SIG_IGN)\\n'\n"
        "          'time.sleep(60)\\n')\n"
        "subprocess.Popen([sys.executable, '-I', '-S', '-c', helper, sys.argv[1]])\n"
        "print('looping', flush=True)\n"
        "while True:\n"
        "    pass\n"
    )
    result = run_python(code, argv=[token], timeout_s=1.5)
    assert (result.status, result.exit_code) == ("timeout", None)
    assert result.stdout == "looping\n"
    assert _leftovers(token) == []


def test_grandchild_outliving_its_parent_is_killed() -> None:
    token = f"orphan-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys\n"
        "child = ('import os, time\\n'\n"
        "         'os.setsid()\\n'\n"
        "         'if os.fork():\\n'\n"
        "         '    os._exit(0)\\n'\n"
        "         'print(\"ready\", flush=True)\\n'\n"
        "         'time.sleep(60)\\n')\n"
        "p = subprocess.Popen([sys.executable, '-I', '-S', '-c', child, sys.argv[1]],\n"
        "                     stdout=subprocess.PIPE)\n"
        "print(p.stdout.readline().decode().strip())\n"
    )
    result = run_python(code, argv=[token], timeout_s=10)
    # The run ends with the main process, not when the orphan would have.
    assert (result.status, result.stdout) == ("ok", "ready\n"), result.stderr
    assert _leftovers(token) == []


def test_fork_bomb_is_contained() -> None:
    _require_process_limit()
    token = f"fork-bomb-{uuid.uuid4().hex}"
    code = (
        "import os, time\n"
        "while True:\n"
        "    try:\n"
        "        os.fork()\n"
        "    except OSError:\n"
        "        time.sleep(0.01)\n"
    )
    peak = peak_tasks = 0
    baseline = _host_tasks()
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_tasks
        while not done.is_set():
            peak_tasks = max(peak_tasks, _host_tasks())
            peak = max(peak, len(_pids_with(token)))
            peak_tasks = max(peak_tasks, _host_tasks())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = run_python(code, argv=[token], timeout_s=2)
    finally:
        done.set()
        sampler.join()
    assert result.status in {"timeout", "crashed"}
    assert peak > 10  # the bomb did go off ...
    # ... within the process limit (plus bwrap's launcher and namespace init; the host
    # count allows for whatever else the machine is doing) ...
    assert peak <= sandbox._PROCESS_LIMIT + 2
    assert peak_tasks - baseline <= sandbox._PROCESS_LIMIT + 400
    assert _leftovers(token) == []  # ... and nothing of it is left


def test_process_limit_binds() -> None:
    _require_process_limit()
    code = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(2000):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e:\n"
        "    print('limited', n, type(e).__name__)\n"
    )
    result = run_python(code, timeout_s=10)
    assert result.status == "ok", result.stderr
    word, count, error = result.stdout.split()
    assert (word, error) == ("limited", "BlockingIOError")
    assert 10 < int(count) < sandbox._PROCESS_LIMIT


def test_memory_bomb_reports_memory() -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 24))\n"
    result = run_python(code, memory_mb=256, timeout_s=10)
    assert result.status == "memory"
    assert "MemoryError" in result.stderr


def test_memory_limit_follows_memory_mb() -> None:
    code = "block = bytearray(300 << 20)\nprint(len(block) >> 20)\n"
    assert run_python(code, memory_mb=128, timeout_s=10).status == "memory"
    roomy = run_python(code, memory_mb=1024, timeout_s=10)
    assert (roomy.status, roomy.stdout) == ("ok", "300\n")


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_flood_is_truncated_and_killed(stream: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = f"import sys\nchunk = 'x' * 65536\nwhile True:\n    sys.{stream}.write(chunk)\n"
    result = run_python(code, timeout_s=20, max_output_bytes=10_000)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert (result.status, result.exit_code, result.truncated) == ("killed", None, True)
    assert getattr(result, stream) == "x" * 10_000
    assert grown_kib < 100 * 1024


def test_output_over_the_cap_is_truncated() -> None:
    code = "import sys\nsys.stdout.write('y' * 50_000)\nsys.stderr.write('z' * 50)\n"
    result = run_python(code, timeout_s=10, max_output_bytes=10_000)
    assert (result.status, result.truncated) == ("ok", True)
    assert result.stdout == "y" * 10_000
    assert result.stderr == "z" * 50


def test_writing_outside_the_work_dir_leaves_the_host_unchanged(tmp_path: Path) -> None:
    _require_bwrap()
    unique = uuid.uuid4().hex
    targets = [
        f"/tmp/conductor-escape-{unique}",
        f"/root/conductor-escape-{unique}",
        str(tmp_path / f"escape-{unique}"),
        f"/var/tmp/conductor-escape-{unique}",
    ]
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        with open(path, 'w') as f:\n"
        "            f.write('escaped')\n"
        "        print('wrote', path)\n"
        "    except OSError as e:\n"
        "        print('failed', path, type(e).__name__)\n"
        "open('inside.txt', 'w').write('fine')\n"
        "print('inside ok')\n"
    )
    try:
        result = run_python(code, argv=targets, timeout_s=5)
        assert result.status == "ok", result.stderr
        assert _lines(result)[-1] == "inside ok"
        for target in targets:
            assert not os.path.lexists(target), target
    finally:
        for target in targets:
            if os.path.lexists(target):
                os.remove(target)


def test_temporary_files_work_and_stay_private() -> None:
    name = f"conductor-private-{uuid.uuid4().hex}"
    code = (
        "import multiprocessing, os, sys, tempfile\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    open(os.path.join(d, 'f'), 'w').write('x')\n"
        "open(os.path.join('/tmp', sys.argv[1]), 'w').write('x')\n"
        "lock = multiprocessing.Lock()  # a POSIX semaphore in /dev/shm\n"
        "with lock:\n"
        "    print('ok')\n"
    )
    try:
        result = run_python(code, argv=[name], timeout_s=10)
        assert (result.status, result.stdout) == ("ok", "ok\n"), result.stderr
        if isolation() == "bwrap":
            assert not os.path.lexists(os.path.join("/tmp", name))
    finally:
        if os.path.lexists(os.path.join("/tmp", name)):
            os.remove(os.path.join("/tmp", name))


def test_writing_to_root_home_fails() -> None:
    if not IS_ROOT and isolation() == "none":
        pytest.skip("as an unprivileged caller without isolation this checks nothing")
    target = f"/root/conductor-escape-{uuid.uuid4().hex}"
    code = (
        "import sys\n"
        "try:\n"
        "    open(sys.argv[1], 'w').write('escaped')\n"
        "    print('wrote')\n"
        "except OSError as e:\n"
        "    print('failed', type(e).__name__)\n"
    )
    try:
        result = run_python(code, argv=[target], timeout_s=5)
        assert result.status == "ok", result.stderr
        assert not os.path.lexists(target)
    finally:
        if os.path.lexists(target):
            os.remove(target)


def test_deleting_a_host_file_fails() -> None:
    _require_bwrap()
    if not os.path.isdir("/var/tmp"):
        pytest.skip("needs /var/tmp (a host dir the sandbox can see)")
    # World-writable, so that only the sandbox's read-only view of the host protects it.
    victim_dir = tempfile.mkdtemp(prefix="conductor-victim-", dir="/var/tmp")
    try:
        os.chmod(victim_dir, 0o777)
        victim = os.path.join(victim_dir, "keep.txt")
        with open(victim, "w") as f:
            f.write("precious")
        os.chmod(victim, 0o666)
        code = (
            "import os, shutil, sys\n"
            "path = sys.argv[1]\n"
            "print('visible', os.path.exists(path))\n"
            "for attempt in (os.remove, lambda p: shutil.rmtree(os.path.dirname(p)),\n"
            "                lambda p: open(p, 'w').close()):\n"
            "    try:\n"
            "        attempt(path)\n"
            "        print('succeeded')\n"
            "    except OSError as e:\n"
            "        print('failed', type(e).__name__)\n"
        )
        result = run_python(code, argv=[victim], timeout_s=5)
        assert result.status == "ok", result.stderr
        assert _lines(result)[0] == "visible True"
        assert "succeeded" not in result.stdout
        with open(victim) as f:
            assert f.read() == "precious"
    finally:
        shutil.rmtree(victim_dir, ignore_errors=True)


def test_environment_secrets_are_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv("CONDUCTOR_TEST_SECRET", secret)
    monkeypatch.setenv("HF_TOKEN", secret)
    code = (
        "import json, os\n"
        "seen = []\n"
        "readable = 0\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n"
        "        try:\n"
        "            data = open(f'/proc/{pid}/environ', 'rb').read()\n"
        "        except OSError:\n"
        "            continue\n"
        "        readable += 1\n"
        "        if sys_secret in data:\n"
        "            seen.append(pid)\n"
        "print(json.dumps({'env': dict(os.environ), 'seen': seen, 'readable': readable}))\n"
    )
    # The program gets the secret's value only to search for it, never from the env.
    code = f"sys_secret = {secret.encode()!r}\n" + code
    result = run_python(code, timeout_s=10)
    assert result.status == "ok", result.stderr
    report = json.loads(result.stdout)
    env = report["env"]
    assert secret not in json.dumps(env)
    assert set(env) <= {
        "PATH",
        "HOME",
        "LANG",
        "PYTHONDONTWRITEBYTECODE",
        "OMP_NUM_THREADS",
        "TMPDIR",
        "PWD",
    }
    assert env["LANG"] == "C.UTF-8" and env["OMP_NUM_THREADS"] == "1"
    assert report["readable"] >= 1  # it could read its own environment, at least
    if IS_ROOT or isolation() != "none":
        assert report["seen"] == []  # and no other process's (the parent's) environment


def test_network_is_unreachable() -> None:
    _require_isolation()
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = (
            "import socket, sys\n"
            "try:\n"
            "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\n"
            "    print('connected')\n"
            "except OSError as e:\n"
            "    print('failed', type(e).__name__)\n"
        )
        result = run_python(code, argv=[str(port)], timeout_s=10)
        server.settimeout(0.3)
        with pytest.raises(TimeoutError):
            server.accept()
    assert result.status == "ok", result.stderr
    assert result.stdout.startswith("failed ")


def test_runs_as_an_unprivileged_user() -> None:
    if not IS_ROOT:
        pytest.skip("privileges are only dropped when running as root")
    code = (
        "import os\n"
        "print(os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups())\n"
        "print(len(os.listdir('/proc/self/fd')) >= 3)\n"
        "for attempt in (lambda: os.setuid(0), lambda: open('/etc/shadow').read()):\n"
        "    try:\n"
        "        attempt()\n"
        "        print('succeeded')\n"
        "    except OSError as e:\n"
        "        print('failed', type(e).__name__)\n"
    )
    result = run_python(code, timeout_s=5)
    assert result.status == "ok", result.stderr
    ids, own_fds_visible, setuid, shadow = _lines(result)
    assert own_fds_visible == "True"
    uid, euid, gid, egid, groups = ids.split(" ", 4)
    assert int(uid) != 0 and int(euid) != 0 and int(gid) != 0 and int(egid) != 0
    assert groups == "[]"
    assert setuid == "failed PermissionError"
    assert shadow == "failed PermissionError"


# --------------------------------------------------------------------------- fallbacks


def _python_the_sandbox_uid_can_run() -> str | None:
    """An interpreter of this Python's version that other users may execute (for the
    unshare/none modes, which cannot remount a Python kept under a private dir)."""

    def reachable(path: str) -> bool:
        real = os.path.realpath(path)
        parts = Path(real).parents
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in parts) and bool(
            os.stat(real).st_mode & stat.S_IXOTH
        )

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, shutil.which(version), f"/usr/bin/{version}"):
        if candidate and os.path.exists(candidate) and reachable(candidate):
            return candidate
    return None


@pytest.mark.parametrize(
    ("mode", "use_setpriv"), [("unshare", True), ("none", True), ("none", False)]
)
def test_fallback_modes_contain_programs(mode: str, use_setpriv: bool) -> None:
    if not IS_ROOT:
        pytest.skip("the unshare mode and privilege dropping need root")
    if mode == "unshare" and shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    python = _python_the_sandbox_uid_can_run()
    if python is None:
        pytest.skip("no Python that an unprivileged uid can execute")
    tool = shutil.which("unshare") if mode == "unshare" else None
    config = dataclasses.replace(sandbox._base_config(mode, tool), python=python)  # type: ignore[arg-type]
    if not use_setpriv:  # the program then drops its privileges itself
        config = dataclasses.replace(config, setpriv=None)
    elif config.setpriv is None:
        pytest.skip("setpriv is not installed")
    if (problem := sandbox._probe(config)) is not None:
        pytest.skip(f"{mode} does not work here: {problem}")

    def run(code: str, argv: list[str], timeout_s: float = 5) -> ExecResult:
        limits = sandbox._Limits(256 << 20, 3)
        return sandbox._run(config, code, "", timeout_s, limits, {}, argv, 1 << 16)

    token = f"fallback-{uuid.uuid4().hex}"
    escapee = (
        "import os, subprocess, sys\n"
        "print(os.getuid())\n"
        "subprocess.Popen([sys.executable, '-I', '-S', '-c', 'import time; time.sleep(60)',\n"
        "                  sys.argv[1]], start_new_session=True)\n"
    )
    result = run(escapee, [token])
    assert result.status == "ok", result.stderr
    assert int(result.stdout) != 0
    assert _leftovers(token) == []

    looping = run("while True:\n    pass\n", [token], timeout_s=1)
    assert looping.status == "timeout"
    assert _leftovers(token) == []

    assert run("x = bytearray(1 << 30)", []).status == "memory"

    if mode == "unshare":
        with socket.create_server(("127.0.0.1", 0)) as server:
            code = (
                "import socket, sys\n"
                "try:\n"
                "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\n"
                "    print('connected')\n"
                "except OSError as e:\n"
                "    print('failed', type(e).__name__)\n"
            )
            result = run(code, [str(server.getsockname()[1])])
        assert result.stdout.startswith("failed "), result
