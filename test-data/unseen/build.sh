#!/usr/bin/env bash
# Regenerates ptx/ from src/*.cu with NVIDIA's nvcc 13.0.88 (../../../shared/tools/nvcc.sh, or
# $NVCC): every kernel for sm_75, sm_80 and sm_90, each optimized (default -O3) and with
# -lineinfo, and for sm_90 also with -G (device debug, unoptimized; the -G files are large, so
# only one architecture is kept).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$here/../../../shared/tools/nvcc.sh}
mkdir -p "$here/ptx"
for cu in "$here"/src/*.cu; do
  k=$(basename "$cu" .cu)
  for arch in sm_75 sm_80 sm_90; do
    "$nvcc" -ptx -arch=$arch "$cu" -o "$here/ptx/$k.$arch.ptx"
    if [[ $arch == sm_90 ]]; then
      "$nvcc" -ptx -arch=$arch -G "$cu" -o "$here/ptx/$k.$arch.G.ptx"
    fi
    "$nvcc" -ptx -arch=$arch -lineinfo "$cu" -o "$here/ptx/$k.$arch.lineinfo.ptx"
  done
done
