#!/usr/bin/env bash
# GRPO with OpenRLHF 0.11.2 on Ray (GPU nodes): the Conductor paper's recipe
# (trainers/openrlhf/README.md). `train run` writes the prompts and the env config into
# OUT, then submits the recipe's launch script to the Ray cluster.
#
#   pip install "openrlhf[vllm]==0.11.2" ".[data,math,litellm]"   # from a clone, every node
#   ray start --head --num-gpus 2
#   bash examples/launch_openrlhf.sh
#   DRY_RUN=1 bash examples/launch_openrlhf.sh     # print the OpenRLHF arguments, train nothing
#
# Environment (defaults in brackets): TASKS [paper-train], POOL [paper-constrained], K [3],
# MODEL [Qwen/Qwen2.5-7B-Instruct], OUT [runs/openrlhf]; GPUS_PER_NODE and NUM_NODES as
# the launch script reads them. Other arguments are passed on to `train run`.
set -euo pipefail
conductor-gym train run --trainer openrlhf \
    --tasks "${TASKS:-paper-train}" --pool "${POOL:-paper-constrained}" \
    --k "${K:-3}" --shuffle-workers \
    --model "${MODEL:-Qwen/Qwen2.5-7B-Instruct}" --output-dir "${OUT:-runs/openrlhf}" \
    ${DRY_RUN:+--dry-run} "$@"
