#!/usr/bin/env bash
# The checks that need a CUDA GPU, in under five minutes: the CUDA-only tests (timing with CUDA
# events, loading a set on cuda), then the published block drafters on the GPU: losslessness and
# the round-for-round cross-check against transformers' own DFlash generation.
# Run on a GPU host from anywhere: bash scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python -c "import torch; assert torch.cuda.is_available(), 'torch sees no CUDA GPU'; print(torch.cuda.get_device_name(0))"
timeout 100 python -m pytest -q -p no:cacheprovider tests/test_clock.py tests/test_config.py -k cuda
timeout 180 python -m pytest -q -p no:cacheprovider tests/test_published_drafters.py -k "rounds_equal or lossless or zlab_layout"
