"""Tests for conductor_gym.sandbox: a battery of hostile programs, each of which must be
contained, reported with the right status and leave the host unchanged.

Tests that rely on a particular isolation skip when this machine does not provide it
(``isolation()`` says what it does); run as root with bubblewrap installed, none skip.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from sandbox_support import (
    IS_ROOT,
    _host_tasks,
    _leftovers,
    _lines,
    _pids_with,
    _require_isolation,
    _require_process_limit,
)

from conductor_gym import sandbox
from conductor_gym.sandbox import isolation, run_python


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
    _require_isolation()
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
        if isolation() != "none":  # bwrap and unshare give the run a /tmp of its own
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


def test_host_files_are_out_of_sight_and_the_view_is_read_only() -> None:
    _require_isolation()
    if not os.path.isdir("/var/tmp"):
        pytest.skip("needs /var/tmp (a host dir outside the sandbox's view)")
    # World-writable, so that only the sandbox's view of the host protects it.
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
            "mounts = ['/', '/usr/lib', '/etc', os.path.dirname(os.__file__), sys.argv[2]]\n"
            "print(all(os.statvfs(m).f_flag & os.ST_RDONLY for m in mounts))\n"
        )
        site = sandbox._get_config().site_paths[0]
        result = run_python(code, argv=[victim, site], timeout_s=5)
        assert result.status == "ok", result.stderr
        assert _lines(result)[0] == "visible False"
        assert "succeeded" not in result.stdout
        assert _lines(result)[-1] == "True"  # everything of the host it sees is read-only
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
    assert shadow in {"failed PermissionError", "failed FileNotFoundError"}
