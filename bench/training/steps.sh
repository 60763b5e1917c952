#!/usr/bin/env bash
# Issue 55's training steps, LazyFuse and its PyTorch peers in one call, model by model in turn:
# lazyfuse-bench-train (step.cpp), then step_torch.py (eager with fused AdamW; torch.compile where
# the PyTorch has it). Then each model once more under LAZYFUSE_PROFILE=1 (where the step's time
# goes) and LAZYFUSE_FUSION=0 (the unfused step).
#   bench/training/steps.sh BIN_DIR [mlp|gpt|gpt-bf16 ...]   (default: all three)
# BIN_DIR holds lazyfuse-bench-train (build/bench, or carry/gpu on the GPU machine); PYTHON picks
# the interpreter with torch (default python3); STEPS (default 20); MODES for step_torch.py
# (default eager,compile).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: steps.sh BIN_DIR [model ...]}
shift
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(mlp gpt gpt-bf16)
steps=${STEPS:-20}
status=0
for m in "${models[@]}"; do
  args=("${m%-bf16}" --steps "$steps")
  [ "$m" != "${m%-bf16}" ] && args+=(--dtype bfloat16)
  echo "== $m"
  timeout 300 "$bin/lazyfuse-bench-train" "${args[@]}" || status=1
  PYTHONUNBUFFERED=1 timeout 300 "${PYTHON:-python3}" "$here/step_torch.py" "${args[@]}" --modes "${MODES:-eager,compile}" || status=1
  LAZYFUSE_FUSION=0 timeout 300 "$bin/lazyfuse-bench-train" "${args[@]}" | sed 's/^/unfused: /' || status=1
  LAZYFUSE_PROFILE=1 timeout 300 "$bin/lazyfuse-bench-train" "${args[@]}" 2>&1 | head -n 40 || status=1
done
exit $status
