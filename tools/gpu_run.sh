#!/usr/bin/env bash
# The one GPU script: build the package, then run the GPU tests, the examples, the benchmarks and the main job.
# Usage (on the GPU machine, from the repo root):  bash tools/gpu_run.sh [STAGE ...]
#   stages: tests notorch cli-notorch examples bench tune headroom racing sweep multigpu support profile timer startup
#     fill offline-live
#   (default: tests notorch cli-notorch examples bench tune)
#   tests / notorch: the GPU tests (tests/gpu), with torch and with torch not importable (only the torch-interop tests,
#     tests/gpu/runtime/test_torch_gpu.py, skip then)
#   cli-notorch: the CLI's explore --sweep, tune, bench, fusion with torch not importable
#   timer: the explorer's timer against the torch-based one it replaced, ResNet-50 preset (benchmarks/timer_compare.py)
#   racing: tuning by racing against the exhaustive pass, winners head to head, against torch (tune_racing_gpu.py)
#   startup: sweep worker start-up before/after (no torch in workers); fill: random inputs, the device kernel against
#     the host routes, and the ResNet-50 preset's buffer sets (benchmarks/random_fill.py)
#   multigpu: issue 23, the ResNet-50 preset on 1 GPU against every GPU of the host (benchmarks/multi_gpu_sweep.py,
#     ~280 s: MULTIGPU_BUDGET_S)
#   (sweep and multigpu want a host of 2 or more GPUs: the device tool's nvidia-h100-x2; on one GPU multigpu says so)
#   offline-live: issue 29, the default support catalogue live and offline (bundled and captured profile, plans all),
#     per graph, with the agreement (benchmarks/offline_vs_live.py, ~3 min; another cuDNN: CUDNN_BACKEND_LIBCUDNN)
# Results go to $OUT (the device tool brings that folder back); default /tmp/cudnn-backend-out.
set -uo pipefail
export PYTHONUNBUFFERED=1 COLUMNS=160
OUT=${OUT:-/tmp/cudnn-backend-out}
mkdir -p "$OUT"
if [ $# -eq 0 ]; then set -- tests notorch cli-notorch examples bench tune; fi
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX (the array tests) must not take 75% of the GPU
log() { echo "=== $* ($(date -u +%H:%M:%S))"; }

# Wheels carried in .whl/ (platformdirs, cudnn-frontend, ...): the machine has no network.
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi

log build
# in place and in parallel (the machine has 16 cores; a serial `pip install -e .` takes ~160 s), then the checkout
# first on the path, for this script and every process it starts (sweep workers, examples, the cimport test)
# GPU_RUN_NOBUILD=1: a later call on the same warm machine reuses the build (the sources are the same; their copies'
# new times would make setuptools rebuild)
if [ "${GPU_RUN_NOBUILD:-0}" != 1 ] || ! compgen -G "cudnn_backend/core/_descriptor*.so" >/dev/null; then
  CUDNN_BACKEND_BUILD_JOBS=16 python3 setup.py -q build_ext --inplace -j 16 2>&1 | grep -E "error|Error" | head -20
fi
python3 -c "import cudnn_backend" || exit 1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python3 -m cudnn_backend info | tee "$OUT/info.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/info.txt"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)

SITE=$(python3 -c "import nvidia.cudnn, os; print(os.path.dirname(os.path.dirname(nvidia.cudnn.__path__[0])))")
CUDNN_INC=$SITE/nvidia/cudnn/include
CUDNN_LIB=$SITE/nvidia/cudnn/lib
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUDNN_BACKEND_PLAN_CACHE="$OUT/plans.sqlite"
cb() { python3 -m cudnn_backend "$@"; }
# torch made unimportable (here and in every process started from here, sweep workers too): a stand-in first on
# the path whose import raises ModuleNotFoundError, as on a machine without torch (pytest.importorskip skips on that
# exception only: a plain ImportError fails the collection)
NOTORCH=/tmp/notorch
mkdir -p "$NOTORCH/torch" && echo 'raise ModuleNotFoundError("torch is blocked (tools/gpu_run.sh)", name="torch")' \
  > "$NOTORCH/torch/__init__.py"
notorch() { PYTHONPATH="$NOTORCH${PYTHONPATH:+:$PYTHONPATH}" "$@"; }

for stage in "$@"; do
  case $stage in
    tests)
      log "GPU tests (tests/gpu: every test that needs a GPU, and only those; tests/conftest.py)"
      python3 -m pytest tests/gpu -q -rs -p no:cacheprovider --junitxml="$OUT/gpu-tests.xml" 2>&1 | tee "$OUT/gpu-tests.log"
      ;;
    notorch)
      log "GPU tests with torch not importable"
      notorch python3 -c 'import torch' 2>/dev/null && { echo "torch still importable"; exit 1; }
      notorch python3 -m pytest tests/gpu -q -rs -p no:cacheprovider --junitxml="$OUT/gpu-tests-notorch.xml" 2>&1 \
        | tee "$OUT/gpu-tests-notorch.log"
      ;;
    cli-notorch)
      log "the CLI with torch not importable: explore --sweep, tune (twice: a cache hit), bench, fusion"
      { notorch /usr/bin/time -f "wall explore %e s" python3 -m cudnn_backend explore conv_bias_relu --sweep --quiet \
          --json "$OUT/explore_notorch.json"
        notorch python3 -m cudnn_backend tune conv_bias_relu --quiet --no-engines --top 5 --cache "$OUT/notorch.sqlite"
        notorch python3 -m cudnn_backend tune conv_bias_relu --quiet --cache "$OUT/notorch.sqlite"
        notorch python3 -m cudnn_backend bench conv_bias_relu --cache "$OUT/notorch.sqlite" \
          --json "$OUT/bench_notorch.json"
        notorch python3 -m cudnn_backend fusion conv_bias_relu --cache "$OUT/notorch.sqlite"
        notorch python3 -m cudnn_backend tune --preset fused --gpus 1 --quiet --max-configs 6 \
          --cache "$OUT/notorch.sqlite"
      } 2>&1 | tee "$OUT/cli-notorch.txt"
      ;;
    timer)
      log "timer comparison: the cuda.core timer against the torch-based one, ResNet-50 preset"
      python3 benchmarks/timer_compare.py --preset resnet50 --out "$OUT/timer_compare.json" 2>&1 \
        | tee "$OUT/timer_compare.txt"
      ;;
    startup)
      log "sweep worker start-up, before (torch imported) and after (cuda.core)"
      python3 benchmarks/worker_startup.py --repeats 5 --out "$OUT/worker_startup.json" 2>&1 \
        | tee "$OUT/worker_startup.txt"
      ;;
    fill)
      log "random inputs: numpy on the host + a copy, against a cuda.core Program kernel on the device"
      python3 benchmarks/random_fill.py --out "$OUT/random_fill.json" 2>&1 | tee "$OUT/random_fill.txt"
      ;;
    examples)
      log "examples"
      for e in examples/*.py; do
        echo "--- $e"; python3 "$e" > /tmp/example.log 2>&1 && echo "ok $e" || { echo "FAILED $e"; tail -30 /tmp/example.log; }
      done 2>&1 | tee "$OUT/examples.log"
      ;;
    bench)
      log "C harness"
      cc -O2 -o /tmp/c_harness benchmarks/c_harness.c -I"$CUDNN_INC" -I"$CUDA_HOME/include" -L"$CUDNN_LIB" \
         -L"$CUDA_HOME/lib64" -l:libcudnn.so.9 -lcudart -lm -Wl,-rpath,"$CUDNN_LIB" || exit 1
      log "per-call benchmarks"
      C_HARNESS=/tmp/c_harness python3 -m pytest benchmarks/test_percall.py -q -p no:cacheprovider \
        --benchmark-json="$OUT/benchmarks.json" --benchmark-columns=mean,median,stddev,rounds 2>&1 \
        | tee "$OUT/benchmarks.log"
      python3 benchmarks/summarize.py "$OUT/benchmarks.json" --info "$OUT/info.txt" --out "$OUT/percall.md"
      ;;
    tune)
      log "the main job: explore, tune, cache hit in a second process, bench, fusion"
      { for p in conv_bias_relu matmul_bias_gelu; do
          /usr/bin/time -f "wall $p %e s" python3 -m cudnn_backend explore $p --sweep --quiet --json "$OUT/explore_$p.json"
        done
        cb tune conv_bias_relu --quiet --no-engines --top 10
        cb tune conv_bias_relu --quiet          # a second process: a plan-cache hit
        cb cache list
        python3 benchmarks/tune_gpu.py --out "$OUT/tune_gpu.json"
        cb bench conv_bias_relu --json "$OUT/bench_conv_bias_relu.json"
        cb fusion conv_bias_relu --json "$OUT/fusion_conv_bias_relu.json"
        cb fusion conv_fwd --n 8 --c 64 --h 28 --w 28 --k 64 --groups 4 --layout nchw --dtype bfloat16 \
          --json "$OUT/fusion_grouped_bf16_nchw.json"
      } 2>&1 | tee "$OUT/tune.txt"
      ;;
    headroom)
      log "headroom: ResNet-50 at batch 32 and 1, the fused patterns, graphs users bring"
      for preset in resnet50_b32 resnet50_b1 fused user; do
        cb tune --preset $preset --no-cache --quiet --repeats 10 --json "$OUT/headroom_$preset.json" 2>&1 \
          | tee -a "$OUT/headroom.txt"
      done
      ;;
    sweep)
      log "issue 12: tune the ResNet-50 preset on 1 GPU and on every GPU of this host, two pairs"
      python3 benchmarks/sweep_gpus.py --gpus "$(nvidia-smi -L | wc -l)" --pairs 2 --out "$OUT/sweep_gpus.json" 2>&1 \
        | tee "$OUT/sweep_gpus.txt"
      ;;
    multigpu)
      log "issue 23: the ResNet-50 preset (knob search, racing) on 1 GPU and on every GPU of this host, in pairs within the budget; winners head to head; a split search; where the time goes"
      python3 benchmarks/multi_gpu_sweep.py --budget-s "${MULTIGPU_BUDGET_S:-280}" --out "$OUT" 2>&1 \
        | tee "$OUT/multi_gpu_sweep.txt"
      ;;
    racing)
      log "issue 20: racing against the exhaustive pass (ResNet-50 b32 + b1, fused, user; knob search on), winners head to head, autotune against torch benchmark=True, the CLI end to end"
      # RACING_ARGS: more arguments, e.g. '--presets resnet50 --no-torch --variant s2=race_samples:2'
      python3 benchmarks/tune_racing_gpu.py --out "$OUT/tune_racing.json" ${RACING_ARGS:-} 2>&1 | tee "$OUT/tune_racing.txt"
      ;;
    support)
      log "issue 19: the support matrix on this GPU (kernel counts of each first working config), and the offline one"
      export CUDNN_BACKEND_SUPPORT_CACHE="$OUT/support.sqlite"
      slug=$(echo "$GPU" | tr 'A-Z ' 'a-z_' | sed 's/nvidia_//')
      /usr/bin/time -f "wall support on the GPU %e s" python3 -m cudnn_backend support --kernels --quiet --rows none \
        --json "$OUT/support_gpu_$slug.json" --csv "$OUT/support_gpu_$slug.csv" 2>&1 | tee "$OUT/support.txt"
      python3 -m cudnn_backend why --graph examples/support_matrix.py:strided_dgrad_fp32 --json "$OUT/why_dgrad.json" \
        2>&1 | tee -a "$OUT/support.txt"
      ;;
    offline-live)
      log "issue 29: the default catalogue live and offline (bundled, captured, plans all): verdicts, configs per mode, engines, first configs"
      python3 benchmarks/offline_vs_live.py --out "$OUT" ${OFFLINE_LIVE_ARGS:-} 2>&1 | tee "$OUT/offline_vs_live.txt"
      ;;
    profile)
      log "device profile capture"
      cb profile capture --out "$OUT/$(echo "$GPU" | tr 'A-Z ' 'a-z_' | sed 's/nvidia_//')_deviceprop_cudnn$(python3 -c 'import cudnn_backend as c; print(c.get_version())').json"
      ;;
    *)
      log "custom: $stage"; eval "$stage" 2>&1 | tee -a "$OUT/custom.log" ;;
  esac
done
log done
# the device tool brings back at most 8 files: pack everything into one
tar czf /tmp/cudnn-backend-results.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/cudnn-backend-results.tgz "$OUT/results.tgz"
