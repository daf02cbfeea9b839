"""Programs may not create user namespaces (issue 29, item 12): under bwrap as root the
program used to ``unshare(CLONE_NEWUSER | CLONE_NEWNS)`` and mount a tmpfs; bwrap now
installs a seccomp filter (:mod:`conductor_gym.sandbox.seccomp`) that refuses it, and the
unshare mode refuses it already (a chroot). The filter is also checked instruction by
instruction, for both architectures it supports, by a small classic-BPF interpreter."""

from __future__ import annotations

import struct

import pytest
from sandbox_support import IS_ROOT, _confined

from conductor_gym import sandbox
from conductor_gym.sandbox import process
from conductor_gym.sandbox.seccomp import _userns_filter

# Creates a user and a mount namespace, then mounts a tmpfs: it prints what happened.
_ESCAPE = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000) != 0:
    print("unshare refused:", os.strerror(ctypes.get_errno()))
else:
    os.makedirs("/tmp/m", exist_ok=True)
    rc = libc.mount(b"tmpfs", b"/tmp/m", b"tmpfs", 0, None)
    print("mounted" if rc == 0 else "mount refused: " + os.strerror(ctypes.get_errno()))
"""


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_a_program_cannot_create_a_user_namespace(mode: str) -> None:
    config = _confined(mode)
    if mode == "bwrap" and not IS_ROOT and config.bwrap_version < (0, 8):
        pytest.skip("unprivileged callers rely on bwrap's --disable-userns (bwrap >= 0.8)")
    limits = sandbox._Limits(256 << 20, 5)
    result = sandbox._run(config, _ESCAPE, "", 10, limits, {}, [], 1 << 16)
    assert result.status == "ok", result.stderr
    assert result.stdout == "unshare refused: Operation not permitted\n"


def test_without_the_filter_the_attack_works(monkeypatch: pytest.MonkeyPatch) -> None:
    # The attack reproduced: root's bwrap run minus its seccomp filter (fault injection)
    # lets it through, where the kernel allows unprivileged user namespaces at all.
    if not IS_ROOT:
        pytest.skip("root's bwrap mode")
    config = _confined("bwrap")
    monkeypatch.setattr(process, "_seccomp_pipe", lambda: -1)
    limits = sandbox._Limits(256 << 20, 5)
    result = sandbox._run(config, _ESCAPE, "", 10, limits, {}, [], 1 << 16)
    if result.stdout.startswith("unshare refused"):
        pytest.skip("this kernel refuses unprivileged user namespaces anyway")
    assert result.stdout == "mounted\n"


def _run_bpf(program: bytes, nr: int, arch: int, arg0: int) -> int:
    """What the classic-BPF ``program`` returns for one system call."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
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
    ("machine", "arch", "clone", "unshare", "other_abi"),
    [
        ("x86_64", 0xC000003E, 56, 272, [(0x40000000 | 272, 0xC000003E), (310, 0x40000003)]),
        ("aarch64", 0xC00000B7, 220, 97, [(97, 0x40000028)]),
    ],
)
def test_the_filter_refuses_exactly_new_user_namespaces(
    machine: str, arch: int, clone: int, unshare: int, other_abi: list[tuple[int, int]]
) -> None:
    program = _userns_filter(machine)
    assert program is not None
    allow, eperm, enosys = 0x7FFF0000, 0x50001, 0x50026
    newuser, thread_flags = 0x10000000, 0x003D0F00
    assert _run_bpf(program, unshare, arch, newuser) == eperm
    assert _run_bpf(program, unshare, arch, newuser | 0x20000) == eperm
    assert _run_bpf(program, clone, arch, newuser | 0x11) == eperm
    assert _run_bpf(program, 435, arch, 0) == enosys  # clone3
    assert _run_bpf(program, clone, arch, thread_flags) == allow
    assert _run_bpf(program, unshare, arch, 0x20000) == allow  # fails later: no CAP_SYS_ADMIN
    assert _run_bpf(program, 0, arch, newuser) == allow
    for nr, foreign in other_abi:
        assert _run_bpf(program, nr, foreign, newuser) == enosys
    assert _userns_filter("riscv64") is None
