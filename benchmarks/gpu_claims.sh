#!/usr/bin/env bash
# The GPU run of the Langevin claims bound to `small` (issue 37), and their evidence as bundles to commit under
# papers/evidence/ (`kb demo` imports them). `small` on two CPU cores cannot settle them: its chains from the ES
# and OT starts have not met after 5,700 steps, and their losses' autocorrelation times are at least 450-2,150
# steps (analyzers/langevin/README.md, "A CPU preset whose checks resolve"), so settling takes ~32,000-150,000
# steps per chain: STEPS=150000 LIMIT=6000 on a lab's GPU (up to ~90 minutes on one H100), not one slot, where
# the default measures R-hat, ESS and the time on CUDA. On a GPU the same models run chains five times as long
# as on a CPU by default (STEPS, default 7,500 steps;
# the loss draws, snapshots, weights, mass updates and checkpoints every five times as many steps, so each
# count stays `small`'s). Time on one H100, from gpu_check.sh's `small` run (design 84 s, training 80 s, 1,500
# steps of sampling ~56 s; langevin.contacts reuses the sweep's cached transformer samples): ~450 s.
# Through kb's own CLI on a SQLite KB home in .gpu-home/ (ignored by git, so that a second call on the same warm
# machine resumes from its checkpoints): `kb verify --device cuda`, then `kb evidence CLAIM` and
# `kb evidence export --claim CLAIM` per claim into the report folder.
#
# A session with a GPU (benchmarks/gpu_check.sh's header says how to make the wheels and set the corpus aside):
#   the device tool's run, carry [".whl"], in the repository root: bash benchmarks/gpu_claims.sh "$OUT/claims"
# then copy claims/evidence-*.tar.gz to papers/evidence/ and commit them with the numbers in summary.md.
#
# Usage: benchmarks/gpu_claims.sh [--cpu] [REPORT_DIR]    (default REPORT_DIR: $OUT/claims, else ./claims)
# --cpu, or no CUDA: the same commands at tiny sizes on the CPU (tests/test_gpu_check.py runs it, on the node's
# packages alone). LIMIT (seconds, default 540) bounds `kb verify`; exit status 0 when every part exited 0. The
# report folder holds summary.md, log.txt, environment.txt and one evidence-CLAIM.tar.gz per claim.
set -u
# shellcheck source=benchmarks/gpu_env.sh
source "$(dirname "$0")/gpu_env.sh" claims "$@"

export KB_HOME=${KB_HOME:-$ROOT/.gpu-home} KB_PAPERS=$ROOT/papers KB_OFFLINE=1
NOTE=sampling-intermediate-temperatures-langevin
CLAIMS=("$NOTE#generalization-min-intermediate-t" "$NOTE#attention-predicts-contacts-at-higher-t")
KB=("$PYTHON" -m kb.cli)
if [ "$MODE" = gpu ]; then
  STEPS=${STEPS:-7500}
  every=$((STEPS / 1500))  # small's counts of draws, snapshots, weights, mass updates and checkpoints
  SETS=(--set "sampling_steps=$STEPS" --set "energy_every=$((15 * every))" --set "snapshot_every=$((150 * every))"
        --set "weights_every=$((75 * every))" --set "variance_every=$((750 * every))"
        --set "checkpoint_every=$((500 * every))")
  DEVICE=cuda
else
  SETS=(--set include_ffn=false --set num_sequences=120 --set train_size=60 --set val_size=10 --set test_size=40
        --set design_burn_in_sweeps=10 --set design_sweeps_between=1 --set max_train_steps=200 --set warmup=20
        --set eval_every=20 --set embed_dim=8 --set hidden_dim=16 --set references=1 --set ot_max_steps=10
        --set relax_steps=10 --set sampling_steps=20 --set 'temperatures=[1e-4,1e-3]')
  DEVICE=cpu
fi

run verify "${LIMIT:-540}" "${KB[@]}" verify "${CLAIMS[@]}" --device "$DEVICE" "${SETS[@]}"
for claim in "${CLAIMS[@]}"; do
  name=${claim#*#}
  run "evidence-$name" 30 "${KB[@]}" evidence "$claim"
  rm -f "$REPORT/evidence-$name.tar.gz"  # a rerun writes the bundle anew (export never writes over a path)
  run "export-$name" 60 "${KB[@]}" evidence export --claim "$claim" -o "$REPORT/evidence-$name.tar.gz"
done

{
  summary_head "Langevin claims on $DEVICE ($MODE)"
  echo "kb verify ${CLAIMS[*]} --device $DEVICE ${SETS[*]}"
  for claim in "${CLAIMS[@]}"; do
    echo
    echo "## $claim"
    echo '```'; head -40 "$REPORT/evidence-${claim#*#}.txt"; echo '```'
  done
} >"$REPORT/summary.md" 2>/dev/null
# The device tool brings back at most 8 files: the parts' outputs go back as one log.
for part in "$REPORT"/verify.txt "$REPORT"/evidence-*.txt "$REPORT"/export-*.txt; do
  [ -f "$part" ] && { echo "=== ${part##*/}"; cat "$part"; rm -f "$part"; }
done >"$REPORT/log.txt"
echo "report: $REPORT/summary.md (the parts' output: log.txt)"
exit $STATUS
