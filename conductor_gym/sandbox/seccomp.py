"""The seccomp filter bwrap installs for a run: no new user namespaces.

Run as root, bwrap gives the program no user namespace of its own (inside one, uid 0
would be the host's root), so ``--disable-userns`` (which needs one) is not available.
An unprivileged process may still call ``unshare(CLONE_NEWUSER)`` where the kernel allows
unprivileged user namespaces, become "root" there and mount file systems, which widens
the kernel's attack surface. This classic-BPF program makes that fail with ``EPERM``:

* ``unshare`` and ``clone`` with ``CLONE_NEWUSER`` in their flags (the first argument);
* ``clone3``, whose flags sit in memory a filter cannot read, fails with ``ENOSYS``
  (the C library then falls back to ``clone`` for threads and processes);
* system calls of another ABI (x32, or i386 on x86-64) fail with ``ENOSYS``, so the
  numbers above cannot be dodged.

Everything else is allowed. Only x86-64 and AArch64 are covered; elsewhere
:func:`_userns_filter` returns ``None`` and no filter is installed.
"""

from __future__ import annotations

import platform
import struct

_CLONE_NEWUSER = 0x1000_0000
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

# seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low 32 bits on little-endian).
_NR, _ARCH, _ARG0_LOW = 0, 4, 16

# machine -> (AUDIT_ARCH_*, clone, unshare, clone3, has the x32 ABI)
_ARCHES = {
    "x86_64": (0xC000_003E, 56, 272, 435, True),
    "amd64": (0xC000_003E, 56, 272, 435, True),
    "aarch64": (0xC000_00B7, 220, 97, 435, False),
    "arm64": (0xC000_00B7, 220, 97, 435, False),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _userns_filter(machine: str | None = None) -> bytes | None:
    """The filter (``struct sock_filter`` array, as ``bwrap --seccomp`` reads it) for
    ``machine`` (default: this one), or ``None`` where it is not supported."""
    arch = _ARCHES.get((machine or platform.machine()).lower())
    if arch is None:
        return None
    audit_arch, clone, unshare, clone3, x32 = arch
    # Jump offsets count instructions after the jump itself.
    program = [
        _insn(_LD_W_ABS, _ARCH),
        _insn(_JEQ, audit_arch, 0, 9 if x32 else 8),  # -> ENOSYS
        _insn(_LD_W_ABS, _NR),
    ]
    if x32:
        program.append(_insn(_JGE, _X32_BIT, 7, 0))  # -> ENOSYS
    program += [
        _insn(_JEQ, clone3, 6, 0),  # -> ENOSYS
        _insn(_JEQ, unshare, 1, 0),  # -> flags
        _insn(_JEQ, clone, 0, 2),  # not clone -> ALLOW
        _insn(_LD_W_ABS, _ARG0_LOW),  # flags
        _insn(_JSET, _CLONE_NEWUSER, 1, 0),  # -> EPERM
        _insn(_RET, _RET_ALLOW),
        _insn(_RET, _RET_ERRNO | _EPERM),
        _insn(_RET, _RET_ERRNO | _ENOSYS),
    ]
    return b"".join(program)
