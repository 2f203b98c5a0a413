#!/usr/bin/env bash
# The wheel folder .whl/ that benchmarks/gpu_check.sh installs on a bare GPU node (no network, no kb install;
# /work/shared/docs/gpu-node.md): every wheel benchmarks/gpu_wheels.txt names, which is what the analyzers, the
# GPU scripts and kb's CLI (`kb verify`, `kb evidence export` on SQLite) import beyond the node image's own
# packages (benchmarks/gpu_node_packages.txt). Run it on a machine with PyPI, in the repository root; .whl/
# stays out of git (.gitignore). About 26 MB for Python 3.12.
# Usage: benchmarks/make_gpu_wheels.sh [DEST]   (default .whl; PYVER=3.12, the node's Python)
set -euo pipefail
DEST=${1:-.whl}
PYTHON=${PYTHON:-python3}
PYVER=${PYVER:-3.12}
LIST=$(dirname "$0")/gpu_wheels.txt
# the pins, without comments and blank lines
mapfile -t WHEELS < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$LIST" | grep -v '^$')
"$PYTHON" -m pip download --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$DEST" "${WHEELS[@]}"
ls -l "$DEST"
du -sh "$DEST"
