#!/usr/bin/env bash
# Regenerates ptx/<name>.sm_XX.ptx from each src/<name>.cu with NVIDIA's nvcc 13.0.88
# (../../../shared/tools/nvcc.sh, or $NVCC) for sm_75 (compiled by ptxas for every later SM),
# sm_80 (bfloat16 arithmetic) and sm_90. The other probe
# files are written by gen_packed.py or by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$here/../../../shared/tools/nvcc.sh}
for cu in "$here"/src/*.cu; do
  k=$(basename "$cu" .cu)
  for arch in sm_75 sm_80 sm_90; do
    "$nvcc" -ptx -arch=$arch "$cu" -o "$here/ptx/$k.$arch.ptx"
  done
done
