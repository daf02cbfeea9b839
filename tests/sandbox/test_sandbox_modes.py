"""Tests for conductor_gym.sandbox's other isolation modes, each run directly (whatever
:func:`isolation` chose here): ``unshare`` with this interpreter (wherever it lives), and
``none`` with and without setpriv, with an interpreter the sandbox's uid can execute.
They need root.
"""

from __future__ import annotations

import dataclasses
import socket
import uuid

import pytest
from sandbox_support import IS_ROOT, _confined, _leftovers, _python_the_sandbox_uid_can_run

from conductor_gym import sandbox
from conductor_gym.sandbox import ExecResult


@pytest.mark.parametrize(
    ("mode", "use_setpriv"), [("unshare", False), ("none", True), ("none", False)]
)
def test_fallback_modes_contain_programs(mode: str, use_setpriv: bool) -> None:
    if not IS_ROOT:
        pytest.skip("the unshare mode and privilege dropping need root")
    if mode == "unshare":
        config = _confined("unshare")
    else:
        python = _python_the_sandbox_uid_can_run()
        if python is None:
            pytest.skip("no Python that an unprivileged uid can execute")
        config = sandbox._base_config("none", python=python)
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
