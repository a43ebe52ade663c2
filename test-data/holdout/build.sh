#!/usr/bin/env bash
# Regenerates ptx/ from src/*.cu with NVIDIA's nvcc 13.0.88 (../../../shared/tools/nvcc.sh, or
# $NVCC): every kernel for every SM family kiln has a SASS table for, optimized (default -O3).
# This folder is never given to `cargo xtask sass-probe` (its words are not seeds): it is the
# held-out check that the tables decode PTX they were not learned from (docs/arch/sass.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$here/../../../shared/tools/nvcc.sh}
mkdir -p "$here/ptx"
for cu in "$here"/src/*.cu; do
  k=$(basename "$cu" .cu)
  for arch in sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120; do
    "$nvcc" -ptx -arch=$arch "$cu" -o "$here/ptx/$k.$arch.ptx"
  done
done
