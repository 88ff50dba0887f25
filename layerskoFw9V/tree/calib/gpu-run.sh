#!/usr/bin/env bash
# gpu-run.sh -- the full GPU calibration on one H100/H200, in under 5 minutes.
#
# Builds latsim with CUDA (make CUDA=1; CUDA_ARCH=90 by default, 80 for A100),
# times cuBLAS GEMMs at the linear-layer shapes of each model's TP shard
# (1..16384 tokens), the paged decode-attention kernel (batch 1..256 x context
# 128..8192), prefill attention (128..8192 tokens), memory bandwidth and launch
# overhead (latsim calib gpu), and writes:
#   calib/profiles/<gpu>-<date>.csv   every measurement with its provenance
#                                     (GPU name, driver, date): commit this file
#   calib/profiles/<gpu>-<date>.txt   latsim calib list of the run
# Load it anywhere with: latsim calib import meas calib/profiles/<gpu>-<date>.csv
# then latsim calib fit profile --model M --gpu <gpu> --tp T (all-reduces for
# tp > 1 come from imported NCCL profiles: latsim calib import vidur DIR).
#
# Usage: calib/gpu-run.sh [OUTDIR]      (run from anywhere; needs nvcc and a GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-calib/profiles}
arch=${CUDA_ARCH:-90}
make CUDA=1 CUDA_ARCH="$arch" build/release-cuda/latsim
bin=build/release-cuda/latsim
mkdir -p "$out"
db=$(mktemp /tmp/latsim-gpu-XXXXXX.db)
trap 'rm -f "$db" "$db-wal" "$db-shm"' EXIT
start=$(date +%s)
# Model, TP degree: the shapes a serving stack runs on one GPU of each replica.
for run in "llama-3-8b 1" "llama-3-8b 2" "llama-3-70b 4" "llama-3-70b 8" "llama-2-70b 8"; do
  set -- $run
  echo "== $1 tp $2 ($(( $(date +%s) - start )) s)"
  "$bin" calib gpu --model "$1" --tp "$2" --repeats 10 --db "$db"
done
gpu=$("$bin" calib list --db "$db" | awk '$1 == "cuda" && $2 == "op" { print $4; exit }')
stamp=$(date -u +%Y%m%d)
"$bin" calib export "$out/$gpu-$stamp.csv" --source cuda --db "$db"
"$bin" calib list --db "$db" > "$out/$gpu-$stamp.txt"
echo "done in $(( $(date +%s) - start )) s: $out/$gpu-$stamp.csv (commit it)"
