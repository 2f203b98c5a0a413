#!/usr/bin/env bash
# The set-up every GPU script shares (sourced: `source benchmarks/gpu_env.sh DEFAULT_REPORT_NAME "$@"`): the
# mode (`--cpu`, or no CUDA here: the CPU fallback at tiny sizes), the report folder (the argument after the mode,
# else $OUT/DEFAULT_REPORT_NAME, else ./DEFAULT_REPORT_NAME), the wheels kb needs beyond the node's image
# (.whl/, benchmarks/gpu_wheels.txt) installed once into /tmp/site, PYTHONPATH, environment.txt, and `run`, which
# runs one part under its own `timeout` and adds its row to ROWS for the summary, and `summary_head`, the top of
# the summary. It leaves MODE, REPORT, PYTHON, ROOT, STATUS (1 once a part failed) and ROWS set, and the working
# folder at the repository root.
DEFAULT_REPORT=$1; shift
MODE=gpu
if [ "${1:-}" = "--cpu" ]; then MODE=cpu; shift; fi
REPORT=${1:-${OUT:-.}/$DEFAULT_REPORT}
PYTHON=${PYTHON:-python3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
mkdir -p "$REPORT"
REPORT=$(cd "$REPORT" && pwd)

# Wheels for what kb imports beyond the node's image (benchmarks/gpu_wheels.txt), when the node lacks them.
if [ -d .whl ] && ! "$PYTHON" -c "import pydantic, gemmi, arviz, sqlmodel" >/dev/null 2>&1; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
    >"$REPORT/pip.txt" 2>&1
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if [ "$MODE" = gpu ] && ! "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null
then
  MODE=cpu
  echo "no CUDA on this machine: the CPU fallback at tiny sizes" | tee "$REPORT/no-cuda.txt"
fi

{
  echo "mode: $MODE"; date -u; uname -a
  "$PYTHON" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda',
torch.version.cuda, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')" 2>&1
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  "$PYTHON" -c "import kb.cli" >/dev/null 2>&1 && echo "kb CLI importable" || echo "kb CLI not importable here"
} >"$REPORT/environment.txt" 2>&1

STATUS=0
ROWS=()
# run NAME SECONDS COMMAND...: one part under `timeout`, its output in NAME.txt, a row of the summary.
run() {
  local name=$1 limit=$2; shift 2
  local began=$SECONDS code
  timeout --kill-after=10 "$limit" "$@" >"$REPORT/$name.txt" 2>&1
  code=$?
  local took=$((SECONDS - began)) verdict=ok
  if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then verdict="timed out after ${limit} s"
  elif [ "$code" -ne 0 ]; then verdict="failed (exit $code)"; fi
  [ "$code" -eq 0 ] || STATUS=1
  ROWS+=("| $name | $verdict | $took s | $name.txt |")
  echo "$name: $verdict in $took s"
}

# summary_head TITLE: the top of a report's summary.md: the title, the environment and a row per part.
summary_head() {
  echo "# $1"
  echo
  echo '```'; cat "$REPORT/environment.txt"; echo '```'
  echo
  echo "| part | result | time | output |"
  echo "|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
  echo
}
