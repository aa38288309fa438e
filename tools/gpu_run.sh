#!/usr/bin/env bash
# The one device call: build the package in place, then run the GPU tests and the benchmarks.
# Usage (on the GPU machine, from the repo root):  bash tools/gpu_run.sh [tests] [bench] [explore]
# Results go to $OUT (the device tool brings that folder back); default /tmp/cudnn-backend-out.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/cudnn-backend-out}
mkdir -p "$OUT"
if [ $# -eq 0 ]; then set -- tests bench explore; fi
log() { echo "=== $* ($(date -u +%H:%M:%S))"; }

# Wheels carried in .whl/ (pytest-benchmark, cudnn-frontend, ...): the machine has no network.
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi

log build
python3 -m pip install --no-build-isolation --no-deps -e . -q 2>&1 | tail -20 || exit 1
python3 -m cudnn_backend info | tee "$OUT/info.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/info.txt"

SITE=$(python3 -c "import nvidia.cudnn, os; print(os.path.dirname(os.path.dirname(nvidia.cudnn.__path__[0])))")
CUDNN_INC=$SITE/nvidia/cudnn/include
CUDNN_LIB=$SITE/nvidia/cudnn/lib
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

for stage in "$@"; do
  case $stage in
    tests)
      log "GPU tests"
      python3 -m pytest tests -m gpu -q -rs -p no:cacheprovider --junitxml="$OUT/gpu-tests.xml" 2>&1 | tee "$OUT/gpu-tests.log"
      ;;
    bench)
      log "C harness"
      cc -O2 -o /tmp/c_harness benchmarks/c_harness.c -I"$CUDNN_INC" -I"$CUDA_HOME/include" -L"$CUDNN_LIB" \
         -L"$CUDA_HOME/lib64" -l:libcudnn.so.9 -lcudart -lm -Wl,-rpath,"$CUDNN_LIB" || exit 1
      log "benchmarks"
      C_HARNESS=/tmp/c_harness python3 -m pytest benchmarks -q -p no:cacheprovider \
        --benchmark-json="$OUT/benchmarks.json" --benchmark-columns=mean,median,stddev,rounds 2>&1 \
        | tee "$OUT/benchmarks.log"
      python3 benchmarks/summarize.py "$OUT/benchmarks.json" --info "$OUT/info.txt" --out "$OUT/percall.md"
      ;;
    explore)
      log explore
      python3 -m cudnn_backend explore --time --sweep --json "$OUT/explore.json" 2>&1 | tee "$OUT/explore.txt"
      ;;
    headroom)
      log "headroom: ResNet-50-like convs and fused patterns"
      python3 -m cudnn_backend explore --preset resnet50 --sweep --max-configs 40 --repeats 10 --quiet \
        --json "$OUT/headroom_resnet50.json" --csv "$OUT/headroom_resnet50.csv" 2>&1 | tee "$OUT/headroom.txt"
      for p in conv_bias_relu matmul_bias_gelu; do
        python3 -m cudnn_backend explore --pattern $p --sweep --repeats 10 --quiet --json "$OUT/headroom_$p.json" \
          2>&1 | tail -25 | tee -a "$OUT/headroom.txt"
      done
      ;;
    *)
      log "custom: $stage"; eval "$stage" 2>&1 | tee -a "$OUT/custom.log" ;;
  esac
done
log done
# the device tool brings back at most 8 files: pack everything into one
tar czf /tmp/cudnn-backend-results.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/cudnn-backend-results.tgz "$OUT/results.tgz"
