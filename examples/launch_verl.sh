#!/usr/bin/env bash
# GRPO with verl 0.9.1 (one GPU node): the prompts as verl's parquet, then verl's trainer
# with the Conductor paper's recipe as Hydra overrides (trainers/verl/train_conductor.sh;
# README, section verl).
#
#   pip install ".[verl]" "verl[vllm]==0.9.1"      # from a clone, on the GPU node
#   bash examples/launch_verl.sh [MORE HYDRA OVERRIDES]
#   DRY_RUN=1 bash examples/launch_verl.sh         # print the overrides, train nothing
#
# Environment (defaults in brackets): TASKS [paper-train], POOL [paper-constrained], K [3],
# LIMIT [every task: the first N tasks only], DATA_DIR [data]; MODEL, GPUS, OUTPUT and CONDUCTOR_GYM_MATH_ANTLR as the launch script
# reads them (its header).
set -euo pipefail
data_dir="${DATA_DIR:-data}"
prompts="${data_dir}/conductor-${TASKS:-paper-train}.jsonl"
conductor-gym train prepare --tasks "${TASKS:-paper-train}" --pool "${POOL:-paper-constrained}" \
    --k "${K:-3}" --shuffle-workers ${LIMIT:+--limit "${LIMIT}"} --out "${prompts}"
python - "${prompts}" "${prompts%.jsonl}.parquet" <<'PY'
import sys

from conductor_gym.trainers.verl import write_dataset

write_dataset(sys.argv[1], sys.argv[2])
PY
script="$(python -c 'from conductor_gym.trainers.verl import LAUNCH_SCRIPT; print(LAUNCH_SCRIPT)')"
DATA="${prompts%.jsonl}.parquet" bash "${script}" "$@"
