"""Running one sandbox: spawning it, feeding stdin, capturing and capping its output,
enforcing the wall-clock limit, killing everything it started, waiting for it to be gone
and classifying how it ended."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from typing import Any, Literal

from .cgroup import _run_cgroup, _RunCgroup
from .common import (
    _DRAIN_GRACE_S,
    _FLOOD_FACTOR,
    _MEMORY_MARKERS,
    _MIN_FLOOD_BYTES,
    _READ_CHUNK,
    _STDERR_TAIL,
    ExecResult,
    Status,
    _Config,
    _Limits,
    logger,
)
from .confine import _claim_uid, _command, _environment, _release_uid
from .seccomp import _userns_filter
from .workdir import _populate, _remove_tree


class _Sink:
    """Keeps the first ``cap`` bytes of a stream, its size and its last few KiB."""

    __slots__ = ("cap", "kept", "seen", "tail")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.seen = 0
        self.tail = b""

    def feed(self, data: bytes) -> None:
        self.seen += len(data)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.tail = (self.tail + data)[-_STDERR_TAIL:]

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


def _run(
    config: _Config,
    code: str,
    stdin: str,
    timeout_s: float,
    limits: _Limits,
    files: Mapping[str, bytes],
    argv: list[str],
    max_output_bytes: int,
) -> ExecResult:
    uid = _claim_uid() if config.drop_privileges else None
    workdir = tempfile.mkdtemp(prefix="conductor-sandbox-")
    # The unshare mode builds its view in an empty dir (mounted over in its own namespace
    # only: on the host it stays empty).
    root = tempfile.mkdtemp(prefix="conductor-root-") if config.mode == "unshare" else None
    info_r, info_w = os.pipe() if config.mode == "bwrap" else (-1, -1)
    seccomp_fd = _seccomp_pipe() if config.mode == "bwrap" else -1
    group: _RunCgroup | None = None
    try:
        main = _populate(workdir, code, files, uid)
        info_fd = info_w if info_w >= 0 else None
        filter_fd = seccomp_fd if seccomp_fd >= 0 else None
        cmd = _command(config, workdir, main, uid, limits, argv, info_fd, root, filter_fd)
        group = _run_cgroup(config.cgroup, limits.memory_bytes)
        if group is not None:
            cmd = group.join_command(cmd)
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=_environment(config, workdir),
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(fd for fd in (info_w, seccomp_fd) if fd >= 0),
        )
        for fd in (info_w, seccomp_fd):
            if fd >= 0:
                os.close(fd)
        info_w = seccomp_fd = -1
        supervision = _Supervision(config, proc, uid, start, info_r, group)
        info_r = -1  # owned by the supervision now
        data = stdin.encode("utf-8", errors="surrogatepass")
        result = supervision.run(data, timeout_s, max_output_bytes)
    finally:
        for fd in (info_r, info_w, seccomp_fd):
            if fd >= 0:
                os.close(fd)
        if group is not None:
            group.remove()
        removed = _remove_tree(workdir)
        if root is not None:
            removed = _remove_tree(root) and removed
        if uid is not None:
            _release_uid(uid)
    if not removed:
        # What the program left could not be removed: its run failed, whatever it printed.
        logger.warning("sandbox: could not remove a run's work dir %s", workdir)
        note = "sandbox: the program left files that could not be removed\n"
        return dataclasses.replace(result, status="crashed", stderr=result.stderr + note)
    return result


def _seccomp_pipe() -> int:
    """A pipe's read end holding the run's seccomp filter (:mod:`.seccomp`) for bwrap's
    ``--seccomp``, or -1 where this machine has none. The filter is a few hundred bytes:
    it fits the pipe's buffer, so writing it before bwrap starts cannot block."""
    program = _userns_filter()
    if program is None:
        return -1
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end


class _Supervision:
    """One running sandbox: feeds its stdin, collects its output, enforces the wall-clock
    and output limits and makes sure nothing of it survives :meth:`run`."""

    def __init__(
        self,
        config: _Config,
        proc: subprocess.Popen[bytes],
        uid: int | None,
        start: float,
        info_fd: int,
        group: _RunCgroup | None = None,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.config = config
        self.proc = proc
        self.uid = uid
        self.start = start
        self.stdin = proc.stdin
        self.sel = selectors.DefaultSelector()
        self.info_fd = info_fd
        self.group = group
        self.info = b""
        self.ns_init_pidfd: int | None = None
        self.pidfd = _pidfd_open(proc.pid)
        self.reason: Literal["timeout", "flood"] | None = None
        self.exited = False
        self.drain_until: float | None = None

    def run(self, stdin: bytes, timeout_s: float, max_output_bytes: int) -> ExecResult:
        proc = self.proc
        assert proc.stdout is not None and proc.stderr is not None
        out, err = _Sink(max_output_bytes), _Sink(max_output_bytes)
        try:
            self._loop(stdin, timeout_s, max_output_bytes, out, err)
            proc.wait()
            self._await_namespace_teardown()
        finally:
            if proc.returncode is None:
                self._kill_all()
                proc.wait()
            self._close()
        wall_s = time.monotonic() - self.start
        truncated = out.seen > len(out.kept) or err.seen > len(err.kept)
        status, exit_code = _classify(self.config, proc.returncode, self.reason, err.tail)
        if status == "crashed" and self.group is not None and self.group.oom_kills():
            # The OOM killer took a process of the run: its total hit memory_mb.
            status, exit_code = "memory", None
        return ExecResult(status, out.text(), err.text(), exit_code, wall_s, truncated)

    def _loop(
        self, pending: bytes, timeout_s: float, max_output_bytes: int, out: _Sink, err: _Sink
    ) -> None:
        proc, sel = self.proc, self.sel
        assert proc.stdout is not None and proc.stderr is not None
        deadline = self.start + timeout_s
        flood_limit = _FLOOD_FACTOR * max(max_output_bytes, _MIN_FLOOD_BYTES // _FLOOD_FACTOR)
        sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
        for fd in sinks:
            sel.register(fd, selectors.EVENT_READ, "out")
        if pending:
            os.set_blocking(self.stdin.fileno(), False)
            sel.register(self.stdin.fileno(), selectors.EVENT_WRITE, "in")
        else:
            _close_quietly(self.stdin)
        if self.pidfd is not None:
            sel.register(self.pidfd, selectors.EVENT_READ, "exit")
        if self.info_fd >= 0:
            sel.register(self.info_fd, selectors.EVENT_READ, "info")

        while sinks or not self.exited:
            now = time.monotonic()
            if not self.exited and self.pidfd is None and proc.poll() is not None:
                self._on_exit()
                continue
            if self.drain_until is not None and now >= self.drain_until:
                return
            if not self.exited and self.reason is None and now >= deadline:
                self._kill("timeout")
                continue
            until = self.drain_until if self.drain_until is not None else deadline
            wait = max(0.0, until - now)
            if self.pidfd is None:
                wait = min(wait, 0.01)
            for key, _ in sel.select(wait):
                fd = int(key.fd)
                if key.data == "exit":
                    sel.unregister(fd)
                    self._on_exit()
                elif key.data == "in":
                    pending = _feed_stdin(self.stdin, pending)
                    if not pending:
                        sel.unregister(fd)
                        _close_quietly(self.stdin)
                elif key.data == "info":
                    self._on_info(fd)
                else:
                    data = _read(fd)
                    if not data:
                        sel.unregister(fd)
                        del sinks[fd]
                    else:
                        sinks[fd].feed(data)
                        if sinks[fd].seen > flood_limit:
                            self._kill("flood")

    def _on_exit(self) -> None:
        self.exited = True
        # Whatever the main process left behind dies with it.
        self._kill(None)

    def _kill(self, why: Literal["timeout", "flood"] | None) -> None:
        if self.reason is None and not self.exited:
            self.reason = why
        self._kill_all()
        if self.drain_until is None:
            self.drain_until = time.monotonic() + _DRAIN_GRACE_S

    def _kill_all(self) -> None:
        _kill_sandbox(self.proc, self.uid, self.config)
        if self.group is not None:
            self.group.kill()
        if self.ns_init_pidfd is not None:
            # bwrap's --die-with-parent already takes the namespace down with bwrap;
            # killing its init directly does not depend on that (it leads a session of
            # its own, out of reach of the process-group kill).
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.ns_init_pidfd, signal.SIGKILL)

    def _on_info(self, fd: int) -> None:
        """Read bwrap's --info-fd JSON and pin the sandbox's pid-namespace init with a
        pidfd: once that process is gone, so is every process of the sandbox."""
        data = _read(fd)
        self.info += data[:4096]
        if data:
            return
        self.sel.unregister(fd)
        os.close(fd)
        self.info_fd = -1
        match = re.search(rb'"child-pid"\s*:\s*(\d+)', self.info)
        if match is None:
            return
        # Killing this process (pid 1 of the sandbox's pid namespace) kills the sandbox.
        pid = int(match.group(1))
        pidfd = _pidfd_open(pid)
        # The pidfd pins the process; checking its parent afterwards proves it is ours
        # and not an unrelated process that reused the pid.
        if pidfd is not None and _parent_pid(pid) != self.proc.pid:
            os.close(pidfd)
            pidfd = None
        self.ns_init_pidfd = pidfd

    def _await_namespace_teardown(self) -> None:
        if self.ns_init_pidfd is None:
            return
        with selectors.DefaultSelector() as sel:
            sel.register(self.ns_init_pidfd, selectors.EVENT_READ)
            if not sel.select(_DRAIN_GRACE_S):
                logger.warning("sandbox: bwrap's pid namespace outlived its sandbox")

    def _close(self) -> None:
        self.sel.close()
        for fd in (self.pidfd, self.ns_init_pidfd, self.info_fd):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.pidfd = self.ns_init_pidfd = None
        self.info_fd = -1
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            _close_quietly(stream)


def _parent_pid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def _classify(
    config: _Config, returncode: int, reason: str | None, stderr_tail: bytes
) -> tuple[Status, int | None]:
    if reason == "timeout":
        return "timeout", None
    if reason == "flood":
        return "killed", None
    signum: int | None = None
    if returncode < 0:
        signum = -returncode
    elif config.mode != "none" and 128 < returncode <= 128 + 64:
        signum = returncode - 128
    memory = any(marker.encode() in stderr_tail for marker in _MEMORY_MARKERS)
    if signum is not None:
        if signum == signal.SIGXCPU:
            return "timeout", None
        if signum == signal.SIGKILL or memory:
            return "memory", None
        return "crashed", None
    if returncode == 0:
        return "ok", 0
    return ("memory" if memory else "crashed"), returncode


def _pidfd_open(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _feed_stdin(stream: Any, pending: bytes) -> bytes:
    try:
        written = os.write(stream.fileno(), pending[:_READ_CHUNK])
    except BlockingIOError:
        return pending
    except OSError:
        # The program closed its stdin or exited: the rest is not wanted.
        return b""
    return pending[written:]


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _READ_CHUNK)
    except OSError:
        return b""


def _close_quietly(stream: Any) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()


def _kill_sandbox(proc: subprocess.Popen[bytes], uid: int | None, config: _Config) -> None:
    """SIGKILL everything the run started.

    With a pidfd the main process is only reaped after this (``proc.wait`` comes later),
    so its pid, which is also the process group id, cannot have been reused meanwhile.
    """
    # The main process leads its own session, so it cannot have left this group; no
    # proc.kill(): Popen.send_signal would reap it first.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # bwrap's pid namespace already took every process down with it; elsewhere a
    # descendant may have left the process group (setsid), but not the run's uid.
    if uid is not None and config.mode != "bwrap":
        _kill_uid(uid)


def _kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` at once: kill(-1) from a process running as ``uid``
    is atomic with respect to fork, unlike scanning /proc."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["/bin/sh", "-c", "kill -9 -1"],
            user=uid,
            group=uid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )
