#!/usr/bin/env bash
# The checks worth a CUDA GPU (pytest -m gpu), in under five minutes: the CUDA-only tests (timing with CUDA
# events, loading a set on cuda), then the published block drafters on the GPU: losslessness and
# the round-for-round cross-check against transformers' own DFlash generation.
# Run on a GPU host from anywhere: bash scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python -c "import torch; assert torch.cuda.is_available(), 'torch sees no CUDA GPU'; print(torch.cuda.get_device_name(0))"
timeout 280 python -m pytest -q -p no:cacheprovider -m gpu tests
