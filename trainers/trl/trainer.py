"""TRL's ``GRPOTrainer`` with cheaper steps on a CPU: :class:`ConductorGRPOTrainer`.

Two changes to TRL 1.16's trainer, each made only where it pays (:class:`CheapStep`):

* **log-probabilities from the completion's logits only** (``completion_logits``, on a
  CPU). TRL patches the policy with a fused, chunked LM head
  (``trl.trainer.utils.add_fused_lm_head``) and always scores through it. On a Triton
  device it projects only the completion's positions; elsewhere it projects *every*
  position, the prompt included, through the vocabulary-wide head (49k entries for
  SmolLM2) and recomputes the projection in backward. TRL has no setting for this, so
  :meth:`ConductorGRPOTrainer._get_per_token_logps_and_entropies` asks the model's own
  forward for the last ``logits_to_keep + 1`` positions' logits (transformers'
  ``logits_to_keep``) and takes the log-softmax over them: the same numbers (a test
  holds them equal on SmolLM2) for a third of the training step's cost on the
  ``cpu-adapt`` batch (``docs/training-cpu.md``). Entropies are computed without a
  graph unless TRL's entropy bonus is on. Anything else (multimodal inputs, MoE
  auxiliary losses, ``cast_lm_head_to_fp32``, a GPU) goes to TRL's method unchanged.
* **sampling with bf16 weights** (``bf16_sampling``, on a CPU where the run's precision
  probe chose bf16, :mod:`~conductor_gym.trainers.trl.precision`). Training keeps float32
  master weights under bf16 autocast; ``generate`` under autocast still reads float32
  weights and converts them on every matmul, so sampling runs on a bf16 copy of the
  policy instead (parameters only: buffers such as the rotary frequencies keep their
  float32 values), refreshed from the trained weights before each optimizer step's
  sampling. The samples then come from the policy rounded to bf16; TRL computes the
  loss's log-probabilities with the trained weights, as it does for any
  non-vLLM sampler. :meth:`ConductorGRPOTrainer.sampling_model` is what the multi-turn
  rollout (:mod:`~conductor_gym.trainers.trl.rollout`) generates with too.

This module imports torch and TRL; import it only where a trainer is built.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import torch
from trl.trainer.grpo_trainer import GRPOTrainer

__all__ = ["CheapStep", "ConductorGRPOTrainer", "completion_logps"]

_TRITON_DEVICES = ("cuda", "xpu")
"""Where TRL's fused head scores only the completion (``trl.kernels.chunked_logprob``)."""


@dataclass(frozen=True)
class CheapStep:
    """Which of the module's changes a run makes.

    Attributes:
        completion_logits: Score the completion's positions only, from the model's own
            logits, instead of TRL's fused head (off Triton devices).
        bf16_sampling: Generate with a bf16 copy of the policy.
    """

    completion_logits: bool = True
    bf16_sampling: bool = False

    @classmethod
    def for_config(cls, config: Any) -> CheapStep:
        """What pays for a run of ``config`` (a ``GRPOConfig``): on a CPU the
        completion-only scoring always, bf16 sampling where the run trains under bf16
        autocast (the precision probe found native bf16) and generates with
        transformers; on a GPU neither (TRL's fused head is already compact there)."""
        on_cpu = bool(getattr(config, "use_cpu", False)) or not torch.cuda.is_available()
        sampled_here = not getattr(config, "use_vllm", False)
        return cls(
            completion_logits=on_cpu,
            bf16_sampling=on_cpu and sampled_here and bool(getattr(config, "bf16", False)),
        )

    @classmethod
    def off(cls) -> CheapStep:
        """TRL's own path (the ``--before`` of :mod:`~conductor_gym.trainers.trl.step_cost`)."""
        return cls(completion_logits=False, bf16_sampling=False)

    def to_dict(self) -> dict[str, bool]:
        return asdict(self)


def completion_logps(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    logits_to_keep: int,
    *,
    temperature: float = 1.0,
    compute_entropy: bool = False,
    entropy_grad: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token log-probabilities (and entropies) of the last ``logits_to_keep`` tokens
    of ``input_ids`` under ``model`` at ``temperature``, from the logits of those positions
    only; 0 where ``attention_mask`` is 0 (TRL's convention). The entropies carry a graph
    only with ``entropy_grad``."""
    outputs = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        logits_to_keep=logits_to_keep + 1,
        use_cache=False,
    )
    # position t's logits predict token t + 1: drop the last position's
    logits = outputs.logits[:, :-1].float() / temperature
    log_probs = logits.log_softmax(dim=-1)
    targets = input_ids[:, -logits_to_keep:]
    padding = attention_mask[:, -logits_to_keep:] == 0
    logps = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).masked_fill(padding, 0.0)
    if not compute_entropy:
        return logps, None
    with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
        entropy = -(log_probs.exp() * log_probs).sum(dim=-1).masked_fill(padding, 0.0)
    return logps, entropy


_MULTIMODAL = (
    "pixel_values",
    "image_grid_thw",
    "num_images",
    "pixel_attention_mask",
    "spatial_shapes",
    "num_tiles",
    "image_sizes",
    "token_type_ids",
    "mm_token_type_ids",
    "image_position_ids",
)


class ConductorGRPOTrainer(GRPOTrainer):
    """``trl.GRPOTrainer`` with the cheaper CPU step of the module docstring.

    Takes ``GRPOTrainer``'s arguments and ``cheap_step`` (default:
    :meth:`CheapStep.for_config` of ``args``). The bf16 sampling copy is made from a
    model instance (the recipes pass one) before TRL patches it; a model given by name
    samples with its own weights.
    """

    def __init__(
        self, *, model: Any, args: Any, cheap_step: CheapStep | None = None, **kwargs: Any
    ) -> None:
        self.cheap_step = cheap_step if cheap_step is not None else CheapStep.for_config(args)
        self._sampler: Any = None
        self._sampler_step = -1
        if self.cheap_step.bf16_sampling and not isinstance(model, str):
            self._sampler = _bf16_copy(model)
        super().__init__(model=model, args=args, **kwargs)

    # -- scoring -------------------------------------------------------------------------

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **multimodal: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        plain = (
            self.cheap_step.completion_logits
            and not compute_aux_loss
            and not getattr(self.args, "cast_lm_head_to_fp32", False)
            and input_ids.device.type not in _TRITON_DEVICES
            and all(multimodal.get(name) is None for name in _MULTIMODAL)
        )
        if not plain:
            return super()._get_per_token_logps_and_entropies(  # type: ignore[no-any-return]
                model,
                input_ids,
                attention_mask,
                logits_to_keep,
                batch_size=batch_size,
                compute_entropy=compute_entropy,
                compute_aux_loss=compute_aux_loss,
                **multimodal,
            )
        size = batch_size or input_ids.size(0)
        all_logps, all_entropies = [], []
        for start in range(0, input_ids.size(0), size):
            with self.accelerator.autocast():
                logps, entropy = completion_logps(
                    model,
                    input_ids[start : start + size],
                    attention_mask[start : start + size],
                    logits_to_keep,
                    temperature=self.temperature,
                    compute_entropy=compute_entropy,
                    entropy_grad=bool(getattr(self, "_entropy_bonus_enabled", True)),
                )
            all_logps.append(logps)
            if entropy is not None:
                all_entropies.append(entropy)
        entropies = torch.cat(all_entropies) if compute_entropy else None
        return torch.cat(all_logps), entropies, None

    # -- sampling ------------------------------------------------------------------------

    def sampling_model(self) -> Any:
        """The model to sample this step's completions with: the bf16 copy, refreshed from
        the trained weights once per optimizer step, or the trained model itself."""
        if self._sampler is None:
            return self.accelerator.unwrap_model(self.model_wrapped)
        if self._sampler_step != self.state.global_step:
            _copy_weights(self.accelerator.unwrap_model(self.model), self._sampler)
            self._sampler_step = self.state.global_step
        return self._sampler

    def _generate_single_turn(self, *args: Any, **kwargs: Any) -> Any:
        if self._sampler is None or self.use_vllm:
            return super()._generate_single_turn(*args, **kwargs)  # type: ignore[no-untyped-call]
        with self._generating_with(self.sampling_model()):
            return super()._generate_single_turn(*args, **kwargs)  # type: ignore[no-untyped-call]

    @contextmanager
    def _generating_with(self, sampler: Any) -> Iterator[None]:
        """TRL's transformers path generates with ``self.model_wrapped``: point it at the
        sampler for the call."""
        wrapped = self.model_wrapped
        self.model_wrapped = sampler
        try:
            yield
        finally:
            self.model_wrapped = wrapped


def _bf16_copy(model: Any) -> Any:
    """A frozen copy of ``model`` whose parameters are bf16 (buffers keep their dtype)."""
    sampler = copy.deepcopy(model).eval()
    for parameter in sampler.parameters():
        parameter.requires_grad_(False)
        parameter.data = parameter.data.to(torch.bfloat16)
    return sampler


@torch.no_grad()
def _copy_weights(source: Any, target: Any) -> None:
    for to, since in zip(target.parameters(), source.parameters(), strict=True):
        to.copy_(since)
