#!/usr/bin/env bash
# The whole GPU check for one short lease, run on the GPU machine from the repository root:
# gpu-check's jobs (xtask/gpu/launch.py), then the Triton suite with kiln as Triton's ptxas.
# Everything it measures goes under $OUT (default /tmp/gpu-out).
#
# Prepare here, before the lease (docs/perf.md, "Running on a GPU"):
#   cargo xtask gpu-check prepare --arch sm_90            # target/gpu-check (≤ 56 MiB)
#   cargo build --release --bin kiln && mkdir -p target/device \
#     && strip -o target/device/ptxas target/release/kiln && xz -kf target/device/ptxas
# carry: target/gpu-check, target/device/ptxas.xz. Afterwards, here:
#   cargo xtask gpu-check compare --out target/gpu-check RESULTS
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
budget=${GPU_CHECK_DEADLINE_S:-240}
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
if [[ -f target/device/ptxas.xz && ! -x target/device/ptxas ]]; then
  xz -dkf target/device/ptxas.xz && chmod +x target/device/ptxas
fi
start=$(date +%s)
python3 xtask/gpu/launch.py target/gpu-check "$OUT/results" --hang-s 5 --reps 3 \
  --deadline-s "$budget" > "$OUT/launch.log" 2>&1
echo "launch.py exit $? after $(( $(date +%s) - start )) s" >> "$OUT/launch.log"
tar czf "$OUT/results.tgz" -C "$OUT" results && rm -rf "$OUT/results"
if [[ -x target/device/ptxas ]]; then
  timeout 420 python3 xtask/gpu/triton_suite.py target/device/ptxas "$OUT/triton.json" \
    > "$OUT/triton.log" 2>&1
  echo "triton_suite.py exit $?" >> "$OUT/triton.log"
fi
tail -n 3 "$OUT/launch.log" "$OUT/triton.log" 2>/dev/null
