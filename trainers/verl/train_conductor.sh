#!/usr/bin/env bash
# Train a conductor with GRPO on verl 0.9.1 (one GPU node): the Conductor paper's recipe
# (arXiv 2512.04388, app. A) as Hydra overrides of verl's own ppo_trainer config, played
# by the conductor_gym agent loop (agent_loop.py).
#
#   pip install ".[verl]" "verl[vllm]==0.9.1"      # from a clone; the GPU stack, on the node
#   conductor-gym train prepare --tasks paper-train --pool paper-constrained \
#       --k 4 --shuffle-workers --templates '{"worker_list_item": "Model {id}: {name}"}' \
#       --out data/paper-train.jsonl
#   python -c "from conductor_gym.trainers.verl import write_dataset; \
#       write_dataset('data/paper-train.jsonl', 'data/paper-train.parquet')"
#   DATA=data/paper-train.parquet bash trainers/verl/train_conductor.sh [MORE OVERRIDES]
#
# The prompts are the paper's adaptive selection, as the TRL recipe paper-adapt trains
# it: 4 of the pool's workers per question under shuffled ids, named in the conductor
# prompt (--templates; the paper's prompt lists ids alone, which under shuffled ids says
# nothing of who Model i is). train prepare records k, the shuffling and the templates in
# the env config, and the agent loop plays that. Drop the three flags for the paper's
# fixed pool; --pool sim-paper --tasks offline (the defaults) for the simulated world.
#
# Environment (defaults in brackets): DATA (required: the parquet; the env config is
# ${DATA%.parquet}.env.json, written by `train prepare`), MODEL
# [Qwen/Qwen2.5-7B-Instruct], GPUS [2], OUTPUT [./ckpt/conductor-verl]. Extra arguments
# are appended (Hydra: a repeated key's last value wins). CONDUCTOR_GYM_MATH_ANTLR (the
# folder of the ANTLR 4.13.2 runtime that the math grader needs beside Hydra's 4.9; see
# the README, section verl), when set, is forwarded to Ray's workers as
# CONDUCTOR_GYM_TRAIN_CONFIG is. DRY_RUN=1 prints the
# overrides NUL-separated and runs nothing (the tests compose exactly these with
# verl's own config).
#
# The recipe (app. A) and where it lands:
#   GRPO, no KL                algorithm.adv_estimator=grpo, use_kl_in_reward=False,
#                              actor.use_kl_loss=False
#   4 questions x 64 rollouts  data.train_batch_size=4, rollout.n=64; one optimiser step
#                              per iteration: actor.ppo_mini_batch_size=4 (prompts)
#   200 iterations             trainer.total_training_steps=200
#   temperature 1.0, 1024 tok  rollout.temperature=1.0, data.max_response_length=1024
#   AdamW 0.9/0.999, lr 1e-6,  actor.optim.lr=1e-6, betas (verl's default 0.9, 0.999),
#   cosine, warmup 0.03        lr_scheduler_type=cosine, lr_warmup_steps_ratio=0.03
#   clip 0.2 ("eps 0.2")       actor.clip_ratio=0.2 (read as the clip range, as for the
#                              OpenRLHF script)
#   reward 1 / 0.5 / 0         the env's "paper" scheme, computed in the agent loop
# Ours: the agent loop on every row (rollout.agent.agent_loop_config_path, the rows'
# agent_name), and verl's V1 trainer (its default) refilling failed groups
# (trainer.v1.sampler.sync_refill_failed_groups=True): the loop raises on an
# infrastructure failure, verl marks that rollout's group failed and draws a new prompt.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${DATA:?set DATA to the parquet written by write_dataset}"
MODEL="${MODEL:-Qwen/Qwen2.5-7B-Instruct}"
GPUS="${GPUS:-2}"
OUTPUT="${OUTPUT:-./ckpt/conductor-verl}"
CONFIG="${DATA%.parquet}.env.json"

overrides=(
  algorithm.adv_estimator=grpo
  algorithm.use_kl_in_reward=False
  "data.train_files=${DATA}"
  "data.val_files=${DATA}"
  data.train_batch_size=4
  data.max_prompt_length=4096
  data.max_response_length=1024
  data.filter_overlong_prompts=True
  "actor_rollout_ref.model.path=${MODEL}"
  actor_rollout_ref.actor.optim.lr=1e-6
  actor_rollout_ref.actor.optim.lr_scheduler_type=cosine
  actor_rollout_ref.actor.optim.lr_warmup_steps_ratio=0.03
  actor_rollout_ref.actor.ppo_mini_batch_size=4
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
  actor_rollout_ref.actor.use_kl_loss=False
  actor_rollout_ref.actor.clip_ratio=0.2
  actor_rollout_ref.rollout.name=vllm
  actor_rollout_ref.rollout.n=64
  actor_rollout_ref.rollout.temperature=1.0
  actor_rollout_ref.rollout.tensor_model_parallel_size=1
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
  "actor_rollout_ref.rollout.agent.agent_loop_config_path=${here}/agent_loop.yaml"
  actor_rollout_ref.rollout.agent.default_agent_loop=conductor_gym
  trainer.use_v1=True
  trainer.v1.sampler.sync_refill_failed_groups=True
  trainer.total_training_steps=200
  trainer.nnodes=1
  "trainer.n_gpus_per_node=${GPUS}"
  trainer.project_name=conductor-gym
  trainer.experiment_name=conductor-grpo
  "trainer.default_local_dir=${OUTPUT}"
  "+ray_kwargs.ray_init.runtime_env.env_vars.CONDUCTOR_GYM_TRAIN_CONFIG=$(realpath "${CONFIG}")"
)
if [[ -n "${CONDUCTOR_GYM_MATH_ANTLR:-}" ]]; then
  if [[ ! -d "${CONDUCTOR_GYM_MATH_ANTLR}" ]]; then
    echo "train_conductor.sh: CONDUCTOR_GYM_MATH_ANTLR=${CONDUCTOR_GYM_MATH_ANTLR} is no folder;" \
      "install the runtime there: pip install --no-deps --target DIR antlr4-python3-runtime==4.13.2" >&2
    exit 2
  fi
  CONDUCTOR_GYM_MATH_ANTLR="$(realpath "${CONDUCTOR_GYM_MATH_ANTLR}")"
  export CONDUCTOR_GYM_MATH_ANTLR
  overrides+=("+ray_kwargs.ray_init.runtime_env.env_vars.CONDUCTOR_GYM_MATH_ANTLR=${CONDUCTOR_GYM_MATH_ANTLR}")
fi

if [[ "${DRY_RUN:-0}" == 1 ]]; then
  printf '%s\0' "${overrides[@]}" "$@"
  exit 0
fi
export CONDUCTOR_GYM_TRAIN_CONFIG="$(realpath "${CONFIG}")"
exec python -m verl.trainer.main_ppo "${overrides[@]}" "$@"
