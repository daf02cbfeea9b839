"""``conductor-gym tasks list``: every registered task source, its size and whether it runs offline.

Contract. :func:`list_sources` builds each registered source with its default options
(cheap: benchmark loaders are lazy) and returns one row per source, plus one for the
``jsonl:<path>`` prefix, with

* ``name``: the registry name;
* ``size``: the number of tasks when known without reading any data (procedural sources:
  their size; benchmark loaders: the paper's or the dataset card's count for the default
  split); ``None`` otherwise;
* ``domain``: the tasks' domain (procedural sources: their families joined by ``+``;
  ``paper-train``: ``"mixed"``);
* ``offline_available``: ``True`` for procedural sources and local JSON Lines files; for
  Hub datasets ``True`` only if every file needed is already in the local Hugging Face
  cache (checked with ``huggingface_hub``'s cache functions, never the network); ``None``
  for a source of unknown kind.

Listing never reads a dataset, downloads anything or imports ``datasets``.
:func:`format_table` renders the rows as an aligned plain-text table;
``tasks list --json`` prints them as a JSON list (:class:`TasksCommand`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from conductor_gym.cli.command import CommandGroup, Subparsers
from conductor_gym.cli.table import text_table
from conductor_gym.tasks import ProceduralTasks, make_task_source, task_source_names
from conductor_gym.tasks.jsonl import JSONL_PREFIX

__all__ = ["COLUMNS", "TasksCommand", "format_table", "list_sources"]

COLUMNS = ("name", "size", "domain", "offline_available")
"""The keys of every row of :func:`list_sources`, in display order."""


def _row(name: str) -> dict[str, Any]:
    try:
        source = make_task_source(name)
    except Exception:  # a third-party factory that needs arguments: list it, unknown
        return {"name": name, "size": None, "domain": None, "offline_available": None}
    if isinstance(source, ProceduralTasks):
        families = "+".join(family.name for family in source.families)
        return {"name": name, "size": len(source), "domain": families, "offline_available": True}
    size = source.expected_size
    domain = getattr(source, "domain", None) or ("mixed" if name == "paper-train" else None)
    available = source.offline_available()
    return {
        "name": name,
        "size": size if isinstance(size, int) else None,
        "domain": domain,
        "offline_available": None if available is None else bool(available),
    }


def list_sources() -> list[dict[str, Any]]:
    """One row per registered task source, plus ``jsonl:<path>`` (see the module docstring)."""
    rows = [_row(name) for name in task_source_names()]
    rows.append(
        {
            "name": f"{JSONL_PREFIX}<path>",
            "size": None,
            "domain": "from the file",
            "offline_available": True,
        }
    )
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` as a left-aligned text table with a header (``None`` shown as ``-``)."""
    header = {column: column.replace("_", " ") for column in COLUMNS}
    return text_table(
        [header[c] for c in COLUMNS], [[_cell(row.get(c)) for c in COLUMNS] for row in rows]
    )


class TasksCommand(CommandGroup):
    """``conductor-gym tasks list [--json]``."""

    name = "tasks"
    help = "task sources"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        tasks = self.add_parser(subparsers)
        commands = tasks.add_subparsers(dest="tasks_command", required=True)
        listing = commands.add_parser("list", help="every source, size, domain, offline?")
        listing.add_argument("--json", action="store_true", help="print a JSON list")
        listing.set_defaults(handler=_list)
        return tasks


def _list(args: argparse.Namespace) -> int:
    rows = list_sources()
    print(json.dumps(rows, indent=2) if args.json else format_table(rows))
    return 0
