#!/usr/bin/env bash
# One GPU window, used whole: the CUDA tests, then `deepstack campaign` on the GPU and every CPU
# core beside it, then its networks, report and the first GPU worker's first turn shard under
# $OUT (the device tool brings back at most 8 files). Install as scripts/gpu-check.sh does:
# missing wheels come along in .whl/. The repository is larger than the 64 MiB a device call
# sends: `bash scripts/gpu-tree.sh aside` before the call, `bash scripts/gpu-tree.sh back` after.
#
#   OUT=/tmp/gpu-campaign BUDGET=360 bash scripts/gpu-campaign.sh
#   TEST_LIMIT=90 CAMPAIGN_LIMIT=470 SEED=11 ...   # the phases' hard limits (s), the campaign's seed
#   GPU_WORKERS=4 ...                              # workers sharing the GPU (default 1)
#   FROM_SHIPPED=1 ...                             # fine-tune the shipped networks (--from-shipped)
#   STREETS=turn,flop ...                          # only these stages (--streets), the shipped river below
#   WORKERS=2 ITERATIONS=river=20,turn=10,flop=5 BUDGET=30 ...   # a quick dry run on a small CPU
#
# Without CUDA it runs the same on the CPU (the CUDA tests skip): a dry run of the script itself.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
BUDGET=${BUDGET:-360}
RUN=${RUN_DIR:-$(mktemp -d)/campaign}
SUMMARY=$OUT/summary.txt
say() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$SUMMARY"; }

say "gpu-campaign on $(hostname), $(nproc) cores, budget $BUDGET s"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -lms 2000 >"$OUT/gpu-samples.csv" 2>&1 &
    SAMPLER=$!
else
    SAMPLER=
fi
if ! $PY -c "import cffi, structlog" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
$PY -c "import native._native" 2>/dev/null || $PY setup.py build_ext --inplace >"$OUT/build.log" 2>&1
$PY -c "import sys, torch, native._native; print('python', sys.version.split()[0], 'torch', torch.__version__,
 'device', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none')" >>"$SUMMARY" 2>&1
DEVICE=$($PY -c "import torch; print('cuda' if torch.cuda.is_available() else 'cpu')")

start=$SECONDS
# one after another they ran past 75 s on the H200 (the turn float64 parity test alone takes 53 s);
# four at a time they took 65 s with the start of pytest-xdist's workers, which that machine has
XDIST=$($PY -c "import xdist" 2>/dev/null && echo "-n 4")
timeout --kill-after=5 "${TEST_LIMIT:-90}" $PY -m pytest -p no:cacheprovider -q -rfEs --durations=10 $XDIST \
    tests/agent/test_cuda.py tests/native/test_torch_showdown.py tests/agent/test_forest.py \
    -k "cuda or Cuda or device or showdown" >"$OUT/pytest-cuda.log" 2>&1
say "CUDA tests: exit $? in $((SECONDS - start)) s: $(tail -1 "$OUT/pytest-cuda.log")"

start=$SECONDS
timeout --kill-after=10 "${CAMPAIGN_LIMIT:-470}" $PY -m agent.cli.main campaign --budget "$BUDGET" --out "$RUN" \
    --device "$DEVICE" --seed "${SEED:-11}" ${WORKERS:+--workers $WORKERS} ${GPU_WORKERS:+--gpu-workers $GPU_WORKERS} ${FROM_SHIPPED:+--from-shipped} ${ITERATIONS:+--iterations $ITERATIONS} ${STREETS:+--streets "$STREETS"} >"$OUT/campaign.log" 2>&1
say "campaign: exit $? in $((SECONDS - start)) s"
[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null

# What comes back is at most 8 files of 16 MiB each: every network as its own file (a network of
# the shipped shape is 1.6-14 MiB, too large to share one), and one tarball with the rest: manifests,
# curves, report, state, each data folder's generate.json, the first GPU worker's first turn shard
# (its targets checked against CPU solves of the same situations) and the logs.
( cd "$RUN" && find . \( -path '*/network/*' -o -name 'report.*' -o -name campaign.json -o -name generate.json \) \
      -type f ! -name '*.ckpt' ! -name '*.pt.tmp' ! -name '*.pt' >/tmp/keep.txt
  ls turn/data-0/*.npz 2>/dev/null | head -1 >>/tmp/keep.txt
  for net in */network/*.pt; do [ -f "$net" ] && cp "$net" "$OUT/"; done
  logs=$(cd "$OUT" && ls -- *.log *.csv nvidia-smi.txt 2>/dev/null)
  tar czf "$OUT/campaign.tar.gz" -T /tmp/keep.txt -C "$OUT" $logs && (cd "$OUT" && rm -f -- $logs) )
say "packed $(du -h "$OUT/campaign.tar.gz" | cut -f1) ($(wc -l </tmp/keep.txt) files and the logs); networks: $(cd "$OUT" && ls -- *.pt 2>/dev/null | tr '\n' ' ')"
tail -c 12000 "$RUN/report.md" 2>/dev/null
