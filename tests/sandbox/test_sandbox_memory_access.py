"""Tests for conductor_gym.sandbox (issue 39): what the OS refuses a program in both
confining modes (its own or another process's memory: ``ptrace``, ``process_vm_*``,
making itself dumpable again, ``/proc/self/mem`` opened for writing), and a clean-up
that no program can defeat (a tree too deep for a recursive removal: before, 1,100
nested dirs made ``shutil.rmtree`` raise ``RecursionError``, the run's files stayed on
the host and the grade became an infrastructure failure).
"""

from __future__ import annotations

import os
import stat
import struct
import tempfile

import pytest
from sandbox_support import _confined

from conductor_gym import sandbox
from conductor_gym.sandbox import ExecResult, process
from conductor_gym.sandbox.seccomp import _userns_filter
from conductor_gym.sandbox.workdir import _remove_tree

MEMORY = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)

def outcome(call):
    try:
        rc = call()
    except OSError as exc:
        return exc.strerror
    return os.strerror(ctypes.get_errno()) if rc == -1 else "allowed"

print("mem", outcome(lambda: open("/proc/self/mem", "r+b", buffering=0) and 0))
print("dumpable", outcome(lambda: libc.prctl(4, 1, 0, 0, 0)))
print("ptrace", outcome(lambda: libc.ptrace(0, 0, 0, 0)))
print("vm_writev", outcome(lambda: libc.syscall(311, os.getpid(), 0, 0, 0, 0, 0)))
print("undumpable", outcome(lambda: libc.prctl(4, 0, 0, 0, 0)))
print("status", outcome(lambda: len(open("/proc/self/status").read()) and 0))
"""

# 1,100 nested dirs, each holding a file: past the recursion limit of a recursive removal.
DEEP = """
import os
for level in range(1100):
    with open('f', 'wb') as f:
        f.write(b'x' * 1024)
    os.mkdir('d')
    os.chdir('d')
print('built')
"""


def _run(mode: str, code: str) -> ExecResult:
    config = _confined(mode)
    limits = sandbox._Limits(256 << 20, 20)
    return sandbox._run(config, code, "", 20, limits, {}, [], 1 << 16)


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_the_os_refuses_memory_access(mode: str) -> None:
    if os.uname().machine not in ("x86_64", "amd64"):
        pytest.skip("the probe uses x86-64 system call numbers")
    result = _run(mode, MEMORY)
    assert result.status == "ok", result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["mem"] in ("Permission denied", "Read-only file system"), lines
    assert lines["dumpable"] == "Operation not permitted"
    assert lines["ptrace"] == "Operation not permitted"
    assert lines["vm_writev"] == "Operation not permitted"
    assert lines["undumpable"] == "allowed"  # the harness's referee needs this one
    assert lines["status"] == "allowed"


def _verdict(program: bytes, nr: int, arch: int, arg0: int = 0, arg1: int = 0) -> int:
    """What the classic-BPF ``program`` returns for one system call."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, arg1, 0, 0, 0, 0)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x06:
            return int(k)
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        pc += 1


@pytest.mark.parametrize(
    ("machine", "arch", "ptrace", "prctl", "vm_readv", "vm_writev"),
    [("x86_64", 0xC000003E, 101, 157, 310, 311), ("aarch64", 0xC00000B7, 117, 167, 270, 271)],
)
def test_the_filter_refuses_memory_access_exactly(
    machine: str, arch: int, ptrace: int, prctl: int, vm_readv: int, vm_writev: int
) -> None:
    program = _userns_filter(machine)
    assert program is not None
    allow, eperm = 0x7FFF0000, 0x50001
    for nr in (ptrace, vm_readv, vm_writev):
        assert _verdict(program, nr, arch) == eperm
    assert _verdict(program, prctl, arch, 4, 1) == eperm  # PR_SET_DUMPABLE 1
    assert _verdict(program, prctl, arch, 4, 2) == eperm
    assert _verdict(program, prctl, arch, 4, 0) == allow  # the referee's
    assert _verdict(program, prctl, arch, 3, 0) == allow  # PR_GET_DUMPABLE
    assert _verdict(program, prctl, arch, 15, 1) == allow  # PR_SET_NAME
    assert _verdict(program, 0, arch, 4, 1) == allow  # read(2) with the same arguments


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_a_tree_too_deep_for_recursion_is_removed(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    removed: list[str] = []

    def spy(path: str) -> bool:  # records what the real removal was given
        removed.append(path)
        return _remove_tree(path)

    monkeypatch.setattr(process, "_remove_tree", spy)
    result = _run(mode, DEEP)
    assert (result.status, result.stdout) == ("ok", "built\n"), result.stderr
    assert removed
    assert [path for path in removed if os.path.lexists(path)] == []


def test_remove_tree_handles_depth_width_permissions_and_links() -> None:
    root = tempfile.mkdtemp(prefix="conductor-test-remove-")
    outside = tempfile.mkdtemp(prefix="conductor-test-outside-")
    keep = os.path.join(outside, "keep")
    with open(keep, "w") as f:
        f.write("the caller's file")
    here = os.getcwd()
    try:
        os.chdir(root)
        for _ in range(1500):  # deeper than PATH_MAX with these names
            os.mkdir("n" * 40)
            os.chdir("n" * 40)
        os.symlink(outside, "link")
        os.chdir(root)
        os.mkdir("wide")
        for i in range(300):
            os.makedirs(os.path.join("wide", str(i), "x"))
        os.mkdir("locked")
        open(os.path.join("locked", "f"), "w").close()
        os.chmod("locked", 0)
    finally:
        os.chdir(here)
    assert _remove_tree(root)
    assert not os.path.lexists(root)
    assert os.path.exists(keep)  # the symlink was unlinked, not followed
    assert _remove_tree(root)  # already gone
    os.chmod(outside, stat.S_IRWXU)
    assert _remove_tree(outside)


def test_a_run_whose_files_cannot_be_removed_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fault injection: removal reports failure (no program can cause it now); the run
    # is then a failed run, never an exception, so the grade is wrong, not infra.
    config = _confined("bwrap")
    monkeypatch.setattr(process, "_remove_tree", lambda path: _remove_tree(path) and False)
    limits = sandbox._Limits(256 << 20, 20)
    result = sandbox._run(config, "print('done')", "", 10, limits, {}, [], 1 << 16)
    assert result.status == "crashed"
    assert result.stdout == "done\n"
    assert "could not be removed" in result.stderr
