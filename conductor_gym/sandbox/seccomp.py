"""The seccomp filter of a run (both isolation modes): no new user namespaces, and no
way into a process's memory.

Run as root, bwrap gives the program no user namespace of its own (inside one, uid 0
would be the host's root), so ``--disable-userns`` (which needs one) is not available.
An unprivileged process may still call ``unshare(CLONE_NEWUSER)`` where the kernel allows
unprivileged user namespaces, become "root" there and mount file systems, which widens
the kernel's attack surface. A graded program also never needs to read or write a
process's memory from outside the interpreter: the ``unittest`` harness
(:mod:`conductor_gym.graders.code.harness`) keeps its verdict in memory the program
could otherwise rewrite. This classic-BPF program makes these fail with ``EPERM``:

* ``unshare`` and ``clone`` with ``CLONE_NEWUSER`` in their flags (the first argument);
* ``ptrace`` (any request), ``process_vm_readv`` and ``process_vm_writev``, which reach
  another process's (or the caller's own) memory whatever its dumpability;
* ``prctl(PR_SET_DUMPABLE, n)`` with ``n != 0``: a process may make itself non-dumpable
  (the harness's referee does) but never dumpable again, so a non-dumpable process's
  ``/proc/self/mem`` stays closed to it (the file is then owned by root);
* ``clone3``, whose flags sit in memory a filter cannot read, fails with ``ENOSYS``
  (the C library then falls back to ``clone`` for threads and processes);
* system calls of another ABI (x32, or i386 on x86-64) fail with ``ENOSYS``, so the
  numbers above cannot be dodged.

Everything else is allowed. bwrap installs it (``--seccomp``); the ``"unshare"`` mode's
confinement installs it itself (:mod:`.mountns`), after it has set up the process.
Only x86-64 and AArch64 are covered; elsewhere :func:`_userns_filter` returns ``None``
and no filter is installed. Signal handlers are not refused here: ``rt_sigaction``'s
handler sits in memory the filter cannot read, and the interpreter installs its own at
start-up (and subprocesses reset theirs); the harness refuses the program's instead.
"""

from __future__ import annotations

import platform
import struct

_CLONE_NEWUSER = 0x1000_0000
_PR_SET_DUMPABLE = 4
_RET_ALLOW = 0x7FFF_0000
_RET_ERRNO = 0x0005_0000
_EPERM = 1
_ENOSYS = 38
_X32_BIT = 0x4000_0000

# Classic BPF opcodes (linux/filter.h): load a word, jumps, return.
_LD_W_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06

# seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (their low 32 bits on
# little-endian, which both covered machines are).
_NR, _ARCH, _ARG0_LOW, _ARG1_LOW = 0, 4, 16, 24


class _Arch:
    """System call numbers of one machine."""

    def __init__(self, audit: int, x32: bool, **numbers: int) -> None:
        self.audit, self.x32, self.numbers = audit, x32, numbers


_X86_64 = _Arch(
    0xC000_003E, True, clone=56, unshare=272, clone3=435, ptrace=101, prctl=157,
    process_vm_readv=310, process_vm_writev=311,
)  # fmt: skip
_AARCH64 = _Arch(
    0xC000_00B7, False, clone=220, unshare=97, clone3=435, ptrace=117, prctl=167,
    process_vm_readv=270, process_vm_writev=271,
)  # fmt: skip
_ARCHES = {"x86_64": _X86_64, "amd64": _X86_64, "aarch64": _AARCH64, "arm64": _AARCH64}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _userns_filter(machine: str | None = None) -> bytes | None:
    """The filter (``struct sock_filter`` array, as ``bwrap --seccomp`` and
    ``prctl(PR_SET_SECCOMP)`` read it) for ``machine`` (default: this one), or ``None``
    where it is not supported."""
    arch = _ARCHES.get((machine or platform.machine()).lower())
    if arch is None:
        return None
    n = arch.numbers
    # The tail every jump lands in; offsets count instructions after the jump itself,
    # so each check is written against the distance to these three labels.
    allow, eperm, enosys = "allow", "eperm", "enosys"
    body: list[tuple[int, int, str | int, str | int]] = []  # (code, k, jt, jf)
    body.append((_LD_W_ABS, _NR, 0, 0))
    if arch.x32:
        body.append((_JGE, _X32_BIT, enosys, 0))
    body.append((_JEQ, n["clone3"], enosys, 0))
    for name in ("ptrace", "process_vm_readv", "process_vm_writev"):
        body.append((_JEQ, n[name], eperm, 0))
    # prctl(PR_SET_DUMPABLE, arg) with arg != 0 -> EPERM
    body.append((_JEQ, n["prctl"], 0, 4))
    body.append((_LD_W_ABS, _ARG0_LOW, 0, 0))
    body.append((_JEQ, _PR_SET_DUMPABLE, 0, allow))
    body.append((_LD_W_ABS, _ARG1_LOW, 0, 0))
    body.append((_JEQ, 0, allow, eperm))
    body.append((_JEQ, n["unshare"], 1, 0))  # -> flags
    body.append((_JEQ, n["clone"], 0, allow))
    body.append((_LD_W_ABS, _ARG0_LOW, 0, 0))  # flags
    body.append((_JSET, _CLONE_NEWUSER, eperm, allow))
    head = [_insn(_LD_W_ABS, _ARCH)]
    tail_at = 1 + 1 + len(body)  # index of the first tail instruction
    labels = {allow: tail_at, eperm: tail_at + 1, enosys: tail_at + 2}
    program = [*head, _insn(_JEQ, arch.audit, 0, tail_at + 2 - 2)]  # wrong arch -> ENOSYS
    for at, (code, k, jt, jf) in enumerate(body, start=2):

        def offset(target: str | int, at: int = at) -> int:
            return labels[target] - at - 1 if isinstance(target, str) else target

        program.append(_insn(code, k, offset(jt), offset(jf)))
    program += [
        _insn(_RET, _RET_ALLOW),
        _insn(_RET, _RET_ERRNO | _EPERM),
        _insn(_RET, _RET_ERRNO | _ENOSYS),
    ]
    return b"".join(program)
