#!/usr/bin/env bash
# The GPU path checked on a GPU machine, in one run: install into the Python that is there
# (CUDA PyTorch, no package registry: missing wheels come along in .whl/), build the native
# kernels, then the CUDA tests, CPU-vs-CUDA parity, the solver and think-time benchmarks on
# CUDA with the same machine's CPU rows beside them, a solver profile, the whole test suite,
# and nvidia-smi before/after. Everything goes under $OUT (at most 8 files).
#
#   OUT=/tmp/gpu-check bash scripts/gpu-check.sh    # anywhere; without CUDA it runs end to end
#                                                   # and says what it skipped
#   SKIP_SUITE=1 ...                                # leave out the whole default suite (a dry run
#                                                   # on a 2-core CPU, where CI runs it anyway)
#   PARTS="tests parity bench generate" ...         # the parts to run (default: all of them)
# Each phase has its own time limit and reports its exit status and seconds in summary.txt,
# so a phase that fails or runs long never hides the ones after it.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
RESULTS=$OUT/results.jsonl
: >"$SUMMARY"
: >"$RESULTS"
: >"$OUT/logs.txt"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
WORK=$(mktemp -d)

PARTS=${PARTS:-tests parity bench generate}
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

say() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$SUMMARY"; }

# phase NAME LIMIT_S COMMAND...: run with a time limit, output in $WORK/NAME.log, its tail
# appended to $OUT/logs.txt as soon as it ends
phase() {
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS rc
    timeout --kill-after=10 "$limit" "$@" >>"$WORK/$name.log" 2>&1
    rc=$?
    { echo "==== $name"; tail -c 20000 "$WORK/$name.log"; } >>"$OUT/logs.txt"
    say "phase $name: exit $rc in $((SECONDS - start)) s (limit $limit s)$([ $rc -eq 124 ] && echo ', TIMED OUT')"
    return $rc
}

# JSON lines of a phase's log into results.jsonl, each tagged with the phase
collect() {
    grep -h '^{' "$WORK/$1.log" | sed "s/^{/{\"phase\": \"$1\", /" >>"$RESULTS" || true
}

say "gpu-check on $(hostname), $(nproc) cores, OUT=$OUT"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,memory.total --format=csv -lms 1000 >"$OUT/gpu-samples.csv" 2>&1 &
    SAMPLER=$!
else
    echo "nvidia-smi: not found (no NVIDIA driver here)" >"$OUT/nvidia-smi.txt"
    SAMPLER=
fi

# ---- install: wheels brought along, then the project itself (native kernels built here)
if ! $PY -c "import cffi, structlog, eval7" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
    phase wheels 120 $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
if ! $PY -c "import native._native" 2>/dev/null; then
    phase install 180 $PY -m pip install -q --no-index --no-deps --no-build-isolation -e . ||
        phase build_ext 180 $PY setup.py build_ext --inplace
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
$PY - >>"$SUMMARY" 2>&1 <<'EOF'
import sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none", "threads", torch.get_num_threads())
import native._native  # noqa: F401  (the C kernels built)
print("native kernels: built")
EOF
CUDA=$($PY -c "import torch; print(int(torch.cuda.is_available()))")
[ "$CUDA" = 1 ] || say "no CUDA device: the CUDA tests skip and the CUDA rows are skipped, the CPU rows still run"
sed 's/^device: .*/device: cuda/' config.yaml >"$WORK/cuda.yaml"
sed 's/^device: .*/device: cpu/' config.yaml >"$WORK/cpu.yaml"

# ---- 1. the CUDA tests (skipped without CUDA), then the whole default suite in the background
SUITE=
if want tests; then
phase cuda_tests 150 $PY -m pytest -p no:cacheprovider -rfEs tests/agent/test_cuda.py tests/native/test_torch_showdown.py \
    tests/agent/test_forest.py tests/test_cli.py -k "cuda or Cuda or forest or device or showdown"
cp "$WORK/cuda_tests.log" "$OUT/pytest-cuda.log"
XDIST=""
$PY -c "import xdist" 2>/dev/null && XDIST="-n 8"
if [ "${SKIP_SUITE:-0}" = 1 ]; then
    say "whole suite: skipped (SKIP_SUITE=1)"
else
( OMP_NUM_THREADS=2 timeout --kill-after=10 ${SUITE_LIMIT:-160} $PY -m pytest -p no:cacheprovider -rfEs $XDIST --durations=15 >"$OUT/pytest-all.log" 2>&1
  echo "exit $?" >>"$OUT/pytest-all.log" ) &
SUITE=$!
fi
fi

# ---- 2. CPU vs CUDA parity (beside the suite: its timings are not the point)
if want parity; then
    phase parity 240 $PY -m agent.cli bench parity
    collect parity
fi
if [ -n "$SUITE" ]; then
    say "waiting for the whole suite"
    wait $SUITE
    say "whole suite: $(tail -2 "$OUT/pytest-all.log" | tr '\n' ' ')"
fi

# ---- 3. benchmarks, nothing else running: CUDA, then this machine's CPU
if want bench; then
for dev in cuda cpu; do
    [ "$dev" = cuda ] && [ "$CUDA" != 1 ] && { say "bench solver cuda: skipped (no CUDA)"; continue; }
    phase "solver_$dev" 150 $PY -m agent.cli bench solver --device "$dev" --deepstack-river-iterations 1000 --deepstack-turn-iterations 300
    collect "solver_$dev"
done
if [ "$CUDA" = 1 ]; then
    phase profile 90 $PY scripts/gpu_profile.py --spot turn --device cuda --iterations 50
    cp "$WORK/profile.log" "$OUT/profile.txt"
    # >= 50 hands of the bot on CUDA against random: think time per street, corrections
    phase resolve_cuda 150 $PY -m agent.cli bench resolve --hands 25 --seed 11 --config "$WORK/cuda.yaml"
    collect resolve_cuda
fi
phase resolve_cpu 150 $PY -m agent.cli bench resolve --hands 5 --seed 11 --config "$WORK/cpu.yaml"
collect resolve_cpu
fi

# ---- 4. data generation throughput: turn situations (the shipped DCFR setting), forests on CUDA,
#         one process per core on the CPU
if want generate; then
GEN="bench generate --street turn --turn-algorithm dcfr --iterations 450 --dcfr 1.5,-inf,4"
if [ "$CUDA" = 1 ]; then
    phase generate_cuda 110 $PY -m agent.cli $GEN --device cuda --batch auto --turn-situations ${GEN_SITUATIONS:-32}
    collect generate_cuda
fi
phase generate_cpu 70 $PY -m agent.cli $GEN --device cpu --processes "$(nproc)" --turn-situations 2
collect generate_cpu
fi

[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
command -v nvidia-smi >/dev/null && { echo; echo "==== after"; nvidia-smi; } >>"$OUT/nvidia-smi.txt" 2>&1
say "done"
