"""Headless Chromium for the tests of the pages the library writes.

:func:`dump_dom` loads a page and returns the DOM after its scripts ran. :class:`Browser`
drives one Chromium over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
messages are NUL-terminated JSON on file descriptors 3 and 4; standard library only, no
port is opened) to evaluate script in a page, as a person's clicks and typing would, and
to take screenshots. Both skip the test (or fail it under
``CONDUCTOR_GYM_REQUIRE_EXTRAS=1``) when ``/usr/bin/chromium`` is missing.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from support import unavailable

CHROMIUM = "/usr/bin/chromium"
_REPLY_TIMEOUT_S = 120.0

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    """The Chromium binary (or :func:`support.unavailable`)."""
    if not os.path.exists(CHROMIUM):
        unavailable(CHROMIUM, "not installed (Debian package chromium)")
    return CHROMIUM


def dump_dom(page: Path, profile: Path, *, timeout: float = 120) -> str:
    """The DOM of ``page`` once loaded and its scripts ran (``--dump-dom``)."""
    command = [chromium(), *_FLAGS, f"--user-data-dir={profile}", "--dump-dom"]
    command.append(page.resolve().as_uri())
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class BrowserError(RuntimeError):
    """The DevTools protocol answered with an error, or Chromium went away."""


class Browser:
    """One headless Chromium with one page, driven over the DevTools pipe.

    Use as ``with contextlib.closing(Browser(...)) as browser``. :meth:`open` loads a
    URL and waits until ``document.documentElement.dataset.viewerReady`` is set (or
    ``ready`` is another expression that becomes true); :meth:`run` evaluates an
    expression (awaiting a promise) and returns its value.
    """

    def __init__(self, profile: Path, *, width: int = 1400, height: int = 1000) -> None:
        ours_read, theirs_write = os.pipe()
        theirs_read, ours_write = os.pipe()

        def wire() -> None:  # in the child: the pipe ends become fds 3 (in) and 4 (out)
            fd_in, fd_out = os.dup(theirs_read), os.dup(theirs_write)
            os.dup2(fd_in, 3)
            os.dup2(fd_out, 4)

        command = [
            chromium(),
            *_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            command,
            preexec_fn=wire,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(theirs_read)
        os.close(theirs_write)
        self._in = ours_read
        self._out = ours_write
        self._buffer = b""
        self._next = 0
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]

    def _call(
        self, method: str, params: dict[str, Any] | None = None, *, page: bool = False
    ) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self._session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                if not select.select([self._in], [], [], _REPLY_TIMEOUT_S)[0]:
                    raise BrowserError(f"{method}: no reply in {_REPLY_TIMEOUT_S} s")
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the DevTools pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def run(self, expression: str) -> Any:
        """The value of a JavaScript ``expression`` in the page (promises awaited)."""
        result = self._call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            page=True,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(
        self,
        url: str,
        *,
        ready: str = "document.documentElement.dataset.viewerReady === '1'",
        timeout: float = 120,
    ) -> float:
        """Load ``url``, wait until ``ready`` is true; returns the seconds it took."""
        start = time.perf_counter()
        self._call("Page.navigate", {"url": url}, page=True)
        while not self.run(f"document.readyState === 'complete' && ({ready})"):
            if time.perf_counter() - start > timeout:
                raise BrowserError(f"{url} was not ready after {timeout} s")
            time.sleep(0.02)
        return time.perf_counter() - start

    def set_viewport(self, width: int, height: int) -> None:
        """Lay the page out in a ``width`` x ``height`` CSS-pixel window (until changed)."""
        self._call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            page=True,
        )

    def screenshot(self, path: Path, *, width: int, height: int) -> Path:
        """A PNG of the page's top ``width`` x ``height`` CSS pixels."""
        self._call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            page=True,
        )
        data = self._call("Page.captureScreenshot", {"format": "png"}, page=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def download_to(self, folder: Path) -> None:
        """Save every download the page starts into ``folder`` (by its suggested name)."""
        self._call(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)}
        )

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self._call("Browser.close")
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._in)
        os.close(self._out)
