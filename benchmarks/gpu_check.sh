#!/usr/bin/env bash
# One GPU check (issue 28): every GPU measurement kb has, in one short script, each part under its own
# `timeout`, everything written into one report folder with a summary.md. About 8.5 minutes on one H100, from a
# fresh machine holding only the repository and a wheel folder .whl/ (benchmarks/make_gpu_wheels.sh makes it on
# a machine with PyPI; see /work/shared/docs/gpu-node.md):
#   1. python3 benchmarks/gpu_depth.py                         (the depth probes at true model size)
#   2. python3 benchmarks/bench_langevin.py --device cuda      (chain-steps/s: one chain, batched, batched + graph,
#      both models' chains of the paper preset per group against one graph for all, and the analyzer's own loop
#      at small's shapes beside them)
#   3. langevin.sweep at `small` on cuda, through the analyzer registry (benchmarks/gpu_sweep.py: kb's CLI needs
#      sqlmodel, alembic, ... which the node lacks; the registry runs the same analyzer)
#   4. every GPU-marked test (pytest -m "gpu and not slow" over the test files that carry the marker; the slow one
#      compiles the step with torch.compile, minutes: run it alone with -m gpu when there is time)
#
# A session with a GPU: make the wheels, set the PDF corpus aside (the device tool sends at most 64 MiB), call
# the device tool once, put the corpus back (benchmarks/device_tree.sh says why; never commit in between):
#   bash benchmarks/make_gpu_wheels.sh && bash benchmarks/device_tree.sh lighten
#   bash benchmarks/device_tree.sh size .whl
#   the device tool's run, carry [".whl"], in the repository root: bash benchmarks/gpu_check.sh "$OUT/gpu-report"
#   bash benchmarks/device_tree.sh restore
#
# Usage: benchmarks/gpu_check.sh [--cpu] [REPORT_DIR]     (default REPORT_DIR: $OUT/gpu-report, else ./gpu-report)
# --cpu, or a machine without CUDA: the same four parts at tiny sizes on the CPU, in seconds (tests/test_gpu_check.py
# runs it, so the script cannot rot). Exit status: 0 when every part exited 0.
set -u
# shellcheck source=benchmarks/gpu_env.sh
source "$(dirname "$0")/gpu_env.sh" gpu-report "$@"

GPU_TESTS=$(grep -l "pytest.mark.gpu" tests/test_*.py | tr '\n' ' ')
if [ "$MODE" = gpu ]; then
  run gpu_depth 100 "$PYTHON" benchmarks/gpu_depth.py
  run bench_langevin 130 "$PYTHON" benchmarks/bench_langevin.py --device cuda \
    --sections chains,groups,analyzer,replicas,steps --steps 30 --repeats 3 --analyzer-steps 1000 --groups-scale paper
  # small needs ~220 s with today's one-core design (84 s) and training (80 s), ~150 s with the design on every
  # core; 220 s keeps the four limits with the setup near 8.5 minutes (100 + 130 + 220 + 60 s)
  run langevin_sweep_small 220 "$PYTHON" benchmarks/gpu_sweep.py --scale small --device cuda \
    --work "${TMPDIR:-/tmp}/kb-gpu-sweep"
  # shellcheck disable=SC2086  # the file list splits on purpose
  run gpu_tests 60 "$PYTHON" -m pytest -q -p no:cacheprovider --noconftest -m "gpu and not slow" -o addopts="" \
    $GPU_TESTS
else
  run gpu_depth 60 "$PYTHON" benchmarks/gpu_depth.py --device cpu --tiny --batch 2 --length 12 --train-batch 2 \
    --repeats 1 --models esm2_650m
  run bench_langevin 60 "$PYTHON" benchmarks/bench_langevin.py --device cpu --sections chains,groups,analyzer \
    --chains 4 --mass-rank 8 --steps 2 --repeats 1 --ess-model T1-d26 --analyzer-steps 6 --analyzer-sizes 60,10,20 \
    --pretrain-steps 5 --groups-scale smoke
  run langevin_sweep_small 90 "$PYTHON" benchmarks/gpu_sweep.py --scale smoke --device cpu \
    --work "$REPORT/sweep-work" --set include_ffn=false --set num_sequences=120 --set train_size=60 \
    --set val_size=10 --set test_size=40 --set design_burn_in_sweeps=10 --set max_train_steps=60 \
    --set ot_max_steps=10 --set sampling_steps=20 --set 'temperatures=[1e-4,1e-3]'
  # shellcheck disable=SC2086
  run gpu_tests 60 "$PYTHON" -m pytest -q -p no:cacheprovider --noconftest -m gpu -o addopts="" $GPU_TESTS
fi

{
  summary_head "GPU check ($MODE)"
  echo "## Langevin: chain-steps per second (bench_langevin.py, chains section)"
  echo '```'; grep -A3 "^every chain in one step" "$REPORT/bench_langevin.txt"; echo '```'
  echo "## Langevin: both models' chains per group against one graph for all (bench_langevin.py, groups section)"
  echo '```'; grep -A3 "^every chain of the experiment" "$REPORT/bench_langevin.txt"; echo '```'
  echo "## Langevin: the analyzer's own loop beside the raw step (bench_langevin.py, analyzer section)"
  echo '```'; grep -A4 "^analyzer loop" "$REPORT/bench_langevin.txt"; echo '```'
  echo "## Langevin: batched replicas and sampler steps"
  echo '```'; grep -E "^batched replicas|^T[0-9]-d[0-9]+ " "$REPORT/bench_langevin.txt"; echo '```'
  echo "## langevin.sweep: time per stage"
  echo '```'; grep -E "in all$|^  (design|training|sampling) |estimated time per stage" \
    "$REPORT/langevin_sweep_small.txt"; echo '```'
  echo "## Depth probes (gpu_depth.py)"
  echo '```'; grep -E "^[a-z0-9_]+: |x plain" "$REPORT/gpu_depth.txt" | head -40; echo '```'
  echo "## GPU-marked tests"
  echo '```'; tail -3 "$REPORT/gpu_tests.txt"; echo '```'
} >"$REPORT/summary.md" 2>/dev/null
echo "report: $REPORT/summary.md"
exit $STATUS
