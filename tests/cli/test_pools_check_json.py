"""``pools check --json`` writes each failure's whole message; the table shortens it
(issue 41, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import require_spec

from conductor_gym.cli.main import main


def test_check_json_never_cuts_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_spec("litellm")
    pool = tmp_path / "p.toml"
    pool.write_text(
        'name = "p"\ndescription = "d"\n[[workers]]\nname = "a"\nbackend = "litellm"\n'
        'model = "openai/m"\nbackend_options = { api_base = "http://127.0.0.1:9/v1", '
        "an_option_of_a_long_and_unknown_name = 1 }\n"
    )
    main(["pools", "check", str(pool), "--json"])
    out = capsys.readouterr().out
    detail = json.loads(out[out.index("[") :])[0]["detail"]
    assert not detail.endswith("...") and "valid: ['api_base'" in detail, detail
    main(["pools", "check", str(pool)])
    assert "..." in capsys.readouterr().out
