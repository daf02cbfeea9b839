"""The harness script of ``call`` tasks (LiveCodeBench, LeetCode style), run in the
sandbox: it reads the arguments and a per-run nonce from stdin before the program is
loaded, calls ``Solution().<fn_name>`` or ``<fn_name>`` once and prints
``<nonce> <JSON>`` (see :mod:`conductor_gym.graders.code`)."""

from __future__ import annotations

_CALL_HARNESS = r"""
import json
import os
import sys


def _main():
    config = json.loads(sys.stdin.read())
    nonce = config.pop("nonce")
    dumps, write, exit_ = json.dumps, os.write, os._exit
    out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.devnull)

    def describe(exc):
        try:
            text = str(exc)
        except BaseException:
            text = "?"
        return type(exc).__name__ + (": " + text[:300] if text else "")

    def report(payload):
        try:
            line = dumps(payload, allow_nan=False)
        except (TypeError, ValueError, RecursionError, OverflowError) as exc:
            line = dumps({"error": "the result is not JSON-serialisable: " + describe(exc)})
        data = (nonce + " " + line + "\n").encode("utf-8", "replace")
        while data:
            data = data[write(out, data):]
        exit_(0)

    namespace = {"__name__": "solution", "__file__": "solution.py", "__builtins__": __builtins__}
    try:
        with open("solution.py", encoding="utf-8") as f:
            source = f.read()
        exec(compile(source, "solution.py", "exec"), namespace)
    except BaseException as exc:
        report({"error": "the program raised " + describe(exc) + " when loaded"})
    name = config["fn_name"]
    target = None
    cls = namespace.get("Solution")
    try:
        if isinstance(cls, type) and callable(getattr(cls, name, None)):
            target = getattr(cls(), name)
        elif callable(namespace.get(name)):
            target = namespace[name]
    except BaseException as exc:
        report({"error": "creating Solution() raised " + describe(exc)})
    if target is None:
        report({"error": "the program defines neither Solution." + name + " nor " + name})
    try:
        result = target(*config["args"])
    except BaseException as exc:
        report({"error": "the call raised " + describe(exc)})
    report({"result": result})


_main()
"""
