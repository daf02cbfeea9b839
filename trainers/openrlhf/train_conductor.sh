#!/usr/bin/env bash
# Train a conductor with GRPO on OpenRLHF 0.11.2: the recipe of the Conductor paper
# (arXiv 2512.04388, app. A) written as 0.11.2's dotted flags, submitted to a running Ray
# cluster with `ray job submit`. README.md (next to this file) has the set-up.
#
#   conductor-gym train prepare --tasks paper-train --out data/paper-train.jsonl
#   ray start --head --num-gpus 2                      # one node; README: several nodes
#   PROMPTS=data/paper-train.jsonl bash trainers/openrlhf/train_conductor.sh [MORE FLAGS]
#
# The paper's adaptive selection (the TRL recipe paper-adapt: 4 workers drawn per
# question, shuffled ids, named in the prompt) is a matter of the prompts file alone:
#
#   conductor-gym train prepare --tasks paper-train --out data/paper-adapt.jsonl \
#       --k 4 --shuffle-workers --templates '{"worker_list_item": "Model {id}: {name}"}'
#   PROMPTS=data/paper-adapt.jsonl bash trainers/openrlhf/train_conductor.sh
#
# Environment (defaults in brackets): PROMPTS (required: the prompts file; its env config
# is ${PROMPTS%.jsonl}.env.json), MODEL [Qwen/Qwen2.5-7B-Instruct, or any path],
# OUTPUT [./ckpt/conductor], NUM_NODES [1], GPUS_PER_NODE [2], VLLM_TP [1],
# VLLM_ENGINES [NUM_NODES*GPUS_PER_NODE/VLLM_TP], MAX_LEN [8192], ITERATIONS [200],
# RAY_ADDRESS [http://127.0.0.1:8265], AGENT [agent.py next to this script].
# Extra arguments are appended to the trainer's (argparse: a repeated flag's last value
# wins). DRY_RUN=1 prints the trainer's arguments NUL-separated and submits nothing
# (the tests parse exactly these with 0.11.2's own parser).
#
# The recipe (app. A) and where it lands:
#   GRPO                      --algo.advantage.estimator group_norm
#   4 questions x 64 rollouts --rollout.batch_size 4 --rollout.n_samples_per_prompt 64
#   batch 256                 --train.batch_size 256 (one optimiser step per iteration)
#   200 iterations            --data.max_samples 800 (= 200 x 4) --train.num_episodes 1:
#                             0.11.2 runs one iteration per 4 prompts until the dataset is
#                             used up and schedules the lr over 800*64/256 = 200 steps.
#                             (The paper's 960 problems are more than 200 x 4 = 800.)
#   no KL, no reference       --algo.kl.init_coef 0 (0.11.2 builds no reference model then)
#   temperature 1.0, 1024 tok --rollout.temperature 1.0 --rollout.max_new_tokens 1024
#                             (agent.py caps every turn at this; the multi-turn executor
#                             alone would let a turn run to --data.max_len)
#   AdamW 0.9/0.999, lr 1e-6  --actor.adam.betas 0.9 0.999 --actor.adam.lr 1e-6
#   cosine, warmup 0.03       --actor.lr_scheduler cosine --actor.lr_warmup_ratio 0.03.
#                             0.11.2's default, cosine_with_min_lr, decays only to
#                             --actor.min_lr_ratio (0.1 = 10 % of the peak); plain
#                             `cosine` (transformers) decays to 0, as "cosine" reads.
#   reward 1 / 0.5 / 0        the env's "paper" reward scheme (agent.py)
#
# Ambiguous in app. A, and what we chose:
#   * "eps 0.2" next to AdamW's betas: as Adam's epsilon it would shrink every step to
#     about |g| / 0.2 of a normal one (orders of magnitude for the small gradients of a
#     7B model), while 0.2 is the standard PPO/GRPO clip, so we read it as the clip
#     range: --actor.eps_clip 0.2 (symmetric), with Adam's eps left at 1e-8.
#   * The std of the group normalisation, sample or population: unspecified. 0.11.2's
#     group_norm uses torch.std, the sample std (n-1); with 64 rollouts the two differ
#     by 0.8 %. Kept.
#   * Groups whose rewards are all equal (std 0): unspecified. 0.11.2 computes
#     (r - mean) / (std + 1e-9), so such a group gets advantage 0 (no gradient, no
#     division by zero); the samples still count in the token-mean loss. Kept: the
#     paper does not say it filters them (DAPO-style filtering would change the recipe).
#   * Weight decay (AdamW's default in torch is 0.01): unspecified; 0.11.2's 0.0 kept.
#   * Gradient clipping, loss aggregation: unspecified; 0.11.2's defaults kept
#     (max_norm 1.0, token-mean).
# Ours, not the paper's: --algo.dynamic_filtering_enable --algo.dynamic_filtering_range
# -1 2. agent.py scores an infrastructure-truncated episode (a worker failed after
# retries) -inf; every other score is 0 or 1, so a group is dropped (and a new prompt
# drawn) only when one of its rollouts hit an infrastructure failure: OpenRLHF cannot
# drop one sample, and a worker outage must not train the conductor as a bad plan. Each
# dropped group takes one more prompt from the 800, so such a run makes a few steps less.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${PROMPTS:?set PROMPTS to the prompts file written by conductor-gym train prepare}"
ENV_CONFIG="${PROMPTS%.jsonl}.env.json"
MODEL="${MODEL:-Qwen/Qwen2.5-7B-Instruct}"
AGENT="${AGENT:-$SCRIPT_DIR/agent.py}"
OUTPUT="${OUTPUT:-./ckpt/conductor}"
NUM_NODES="${NUM_NODES:-1}"
GPUS_PER_NODE="${GPUS_PER_NODE:-2}"
VLLM_TP="${VLLM_TP:-1}"
VLLM_ENGINES="${VLLM_ENGINES:-$((NUM_NODES * GPUS_PER_NODE / VLLM_TP))}"
MAX_LEN="${MAX_LEN:-8192}"
ITERATIONS="${ITERATIONS:-200}"
RAY_ADDRESS="${RAY_ADDRESS:-http://127.0.0.1:8265}"
ROLLOUT_BATCH=4

for file in "$PROMPTS" "$ENV_CONFIG" "$AGENT"; do
    [[ -f "$file" ]] || { echo "train_conductor.sh: no such file: $file" >&2; exit 2; }
done
# Ray actors may run on other nodes: hand them absolute paths (shared file system).
PROMPTS="$(cd "$(dirname "$PROMPTS")" && pwd)/$(basename "$PROMPTS")"
ENV_CONFIG="$(cd "$(dirname "$ENV_CONFIG")" && pwd)/$(basename "$ENV_CONFIG")"

TRAIN_ARGS=(
    # model, agent, data
    --actor.model_name_or_path "$MODEL"
    --train.agent_func_path "$AGENT"
    --data.prompt_dataset "$PROMPTS"
    --data.input_key prompt
    --data.label_key label
    --data.apply_chat_template
    --data.max_len "$MAX_LEN"
    --data.max_samples "$((ITERATIONS * ROLLOUT_BATCH))"
    # GRPO (app. A)
    --algo.advantage.estimator group_norm
    --rollout.batch_size "$ROLLOUT_BATCH"
    --rollout.n_samples_per_prompt 64
    --train.batch_size 256
    --train.num_episodes 1
    --train.max_epochs 1
    --algo.kl.init_coef 0
    --actor.eps_clip 0.2
    --rollout.temperature 1.0
    --rollout.top_p 1.0
    --rollout.max_new_tokens 1024
    --actor.optim adam
    --actor.adam.lr 1e-6
    --actor.adam.betas 0.9 0.999
    --actor.adam.eps 1e-8
    --actor.adam.weight_decay 0.0
    --actor.lr_scheduler cosine
    --actor.lr_warmup_ratio 0.03
    # ours: drop a group hit by an infrastructure failure (see the header)
    --algo.dynamic_filtering_enable
    --algo.dynamic_filtering_range -1 2
    # placement: actor and vLLM share the GPUs (the paper: 2 x H100 80 GB)
    --actor.num_nodes "$NUM_NODES"
    --actor.num_gpus_per_node "$GPUS_PER_NODE"
    --vllm.num_engines "$VLLM_ENGINES"
    --vllm.tensor_parallel_size "$VLLM_TP"
    --train.colocate_all
    --vllm.enable_sleep
    --ds.enable_sleep
    --vllm.gpu_memory_utilization 0.5
    --ds.zero_stage 3
    --ds.param_dtype bf16
    --actor.gradient_checkpointing_enable
    --train.micro_batch_size 4
    --rollout.micro_batch_size 8
    --train.seed 42
    # outputs
    --ckpt.output_dir "$OUTPUT"
    --ckpt.path "$OUTPUT/checkpoints"
    --ckpt.save_steps 50
    --ckpt.save_hf
    --logger.logging_steps 1
)

if [[ "${DRY_RUN:-0}" == 1 ]]; then
    printf '%s\0' "${TRAIN_ARGS[@]}" "$@"
    exit 0
fi

# The rollout engines (Ray actors, any node) read the env config from this variable.
RUNTIME_ENV="$(python3 -c 'import json, sys; print(json.dumps({"env_vars": {"CONDUCTOR_GYM_TRAIN_CONFIG": sys.argv[1]}}))' "$ENV_CONFIG")"
exec ray job submit --address "$RAY_ADDRESS" --runtime-env-json "$RUNTIME_ENV" \
    -- python3 -m openrlhf.cli.train_ppo_ray "${TRAIN_ARGS[@]}" "$@"
