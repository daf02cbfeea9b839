"""``memory_mb`` bounds a run's total, not each process (issue 29, item 7): five children
of 150 MiB each used to live side by side under ``memory_mb=256``; with the run's memory
cgroup (:mod:`conductor_gym.sandbox.cgroup`) the total stays under the limit: the kernel
kills children until what is left fits. Skips where no cgroup can be made here (the
sandbox then limits each process, and says so in a warning)."""

from __future__ import annotations

import dataclasses

from sandbox_support import _require_isolation
from support import unavailable

from conductor_gym import sandbox

# Forks N children that each fill SIZE MiB, waits until each has, then reports how many
# are still alive together.
_HOGS = r"""
import os, sys, time
n, size = int(sys.argv[1]), int(sys.argv[2]) << 20
children = []
for _ in range(n):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        block = bytearray(size)
        for i in range(0, size, 4096):
            block[i] = 1
        os.write(w, b"x")
        time.sleep(60)
        os._exit(0)
    os.close(w)
    os.read(r, 1)  # empty when the child was killed first
    os.close(r)
    children.append(pid)
time.sleep(0.2)
alive = sum(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in children)
print("alive", alive)
"""
_LIMIT_MB, _CHILD_MB, _CHILDREN = 256, 150, 5


def _config() -> sandbox._Config:
    _require_isolation()
    config = sandbox._get_config()
    if config.cgroup is None:
        unavailable("a memory cgroup", "this process may not create cgroups here")
    return config


def _alive(config: sandbox._Config) -> int:
    limits = sandbox._Limits(_LIMIT_MB << 20, 30)
    argv = [str(_CHILDREN), str(_CHILD_MB)]
    result = sandbox._run(config, _HOGS, "", 30, limits, {}, argv, 1 << 16)
    assert result.status == "ok", result
    return int(result.stdout.split()[1])


def test_children_together_stay_under_memory_mb() -> None:
    config = _config()
    alive = _alive(config)
    assert alive * _CHILD_MB <= _LIMIT_MB, f"{alive} children of {_CHILD_MB} MiB alive"


def test_per_process_limits_alone_let_children_add_up() -> None:
    # The attack reproduced: without the cgroup (fault injection), each child stays under
    # RLIMIT_AS and all five (750 MiB) live under memory_mb=256.
    config = dataclasses.replace(_config(), cgroup=None)
    assert _alive(config) == _CHILDREN


def test_a_run_whose_children_hit_the_limit_reports_memory() -> None:
    config = _config()
    # Two children of 100 MiB, each under RLIMIT_AS (128 MiB), together over memory_mb:
    # the kernel kills one, the program exits 1, and the run reads as "memory".
    code = (
        "import os, sys, time\n"
        "pids = []\n"
        "for _ in range(2):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        block = bytearray(100 << 20)\n"
        "        block[::4096] = b'1' * (25 << 10)\n"
        "        time.sleep(1)\n"
        "        os._exit(0)\n"
        "    pids.append(pid)\n"
        "killed = [os.WIFSIGNALED(os.waitpid(pid, 0)[1]) for pid in pids]\n"
        "sys.exit(1 if any(killed) else 0)\n"
    )
    result = sandbox._run(config, code, "", 30, sandbox._Limits(128 << 20, 30), {}, [], 4096)
    assert (result.status, result.exit_code) == ("memory", None), result
