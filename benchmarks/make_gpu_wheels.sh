#!/usr/bin/env bash
# The wheel folder .whl/ that benchmarks/gpu_check.sh installs on a bare GPU node (no network, no kb install;
# /work/shared/docs/gpu-node.md): the wheels of what the analyzers and benchmarks import beyond the node's own
# torch, numpy, transformers' dependencies and pytest. Run it on a machine with PyPI, in the repository root;
# .whl/ stays out of git (.gitignore). About 19 MB.
# Usage: benchmarks/make_gpu_wheels.sh [DEST]   (default .whl)
set -euo pipefail
DEST=${1:-.whl}
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$DEST" pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 \
  typing-inspection==0.4.5 gemmi==0.7.5 transformers==5.24.0   # transformers >= 5.23 has ESM-C
ls -l "$DEST"
