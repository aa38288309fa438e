#!/usr/bin/env bash
# The one GPU script: build the package, then run the GPU tests, the examples, the benchmarks and the main job.
# Usage (on the GPU machine, from the repo root):  bash tools/gpu_run.sh [--releases R1,R2,...] [--side-by-side] [STAGE ...]
#   --side-by-side: every release at once, each on a GPU of its own (a host of as many GPUs; results per release)
#   --releases: the cuDNN releases to run every stage on, in turn (default: $CUDNN_RELEASES, else "system"):
#     "system" is the one installed on the machine (9.19.0 on the GPU machines), MAJOR.MINOR.PATCH one carried there
#     with tools/carry_cudnn.sh (unpacked under /tmp/cudnn/<release>). With several, each release's results go to
#     $OUT/cudnn-<release>/.
#   stages: tests notorch cli-notorch examples bench percall tune headroom racing sweep multigpu support profile timer startup
#     fill arrays compare-releases offline-live
#   (default: tests notorch cli-notorch examples bench tune)
#   tests / notorch: the GPU tests (tests/gpu), with torch and with torch not importable (only the torch-interop tests,
#     tests/gpu/runtime/test_torch_gpu.py, skip then)
#   cli-notorch: the CLI's explore --sweep, tune, bench, fusion with torch not importable
#   arrays: the array matrix (tests/gpu/runtime/test_array_matrix_gpu.py) and the fp8 graphs, table in
#     $OUT/arrays/array_matrix.md (benchmarks/array_matrix_table.py)
#   bench: per-call pytest-benchmark table (percall.md), then percall
#   percall: per call against C's loops in the same process, batches alternating (percall_interleaved.md)
#   timer: the explorer's timer against the torch-based one it replaced, ResNet-50 preset (benchmarks/timer_compare.py)
#   racing: tuning by racing against the exhaustive pass, winners head to head, against torch (tune_racing_gpu.py)
#   startup: sweep worker start-up before/after (no torch in workers); fill: random inputs, the device kernel against
#     the host routes, and the ResNet-50 preset's buffer sets (benchmarks/random_fill.py)
#   multigpu: the ResNet-50 preset on 1 GPU against every GPU of the host (benchmarks/multi_gpu_sweep.py,
#     ~280 s: MULTIGPU_BUDGET_S)
#   compare-releases: `compare --releases` of two releases on this GPU (run it once, under any --releases entry)
#   (sweep and multigpu want a host of 2 or more GPUs: the device tool's nvidia-h100-x2; on one GPU multigpu says so)
#   offline-live: the default support catalogue live and offline (bundled and captured profile, plans all),
#     per graph, with the agreement (benchmarks/offline_vs_live.py, ~3 min; another cuDNN: CUDNN_BACKEND_LIBCUDNN)
# Results go to $OUT (the device tool brings that folder back); default /tmp/cudnn-backend-out.
set -uo pipefail
export PYTHONUNBUFFERED=1 COLUMNS=160
OUT=${OUT:-/tmp/cudnn-backend-out}
mkdir -p "$OUT"
SCRATCH=$(mktemp -d)  # this run's own: two runs side by side (one GPU each) share nothing but the build
trap 'rm -rf "$SCRATCH"' EXIT
RELEASES_ARG=${CUDNN_RELEASES:-system}
SIDE_BY_SIDE=0
while [ $# -gt 0 ]; do
  case $1 in
    --releases) RELEASES_ARG=${2:?--releases needs a list, e.g. system,9.28.1}; shift 2 ;;
    --side-by-side) SIDE_BY_SIDE=1; shift ;;
    *) break ;;
  esac
done
IFS=, read -r -a RELEASES <<< "$RELEASES_ARG"
FAILED_RELEASES=()
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
if [ "$SIDE_BY_SIDE" = 1 ]; then
  # each release on a GPU and a share of the CPUs of its own, at the same time (timings stay apart: the per-call
  # benchmarks pin to the last CPU of their share)
  gpus=$(nvidia-smi -L | wc -l) cpus=$(nproc)
  [ "$gpus" -ge ${#RELEASES[@]} ] || { echo "--side-by-side: ${#RELEASES[@]} releases, $gpus GPU(s)"; exit 2; }
  share=$((cpus / ${#RELEASES[@]})) pids=()
  for i in "${!RELEASES[@]}"; do
    mkdir -p "$OUT/cudnn-${RELEASES[$i]}"
    CUDA_VISIBLE_DEVICES=$i OUT="$OUT/cudnn-${RELEASES[$i]}" GPU_RUN_NOBUILD=1 \
      taskset -c "$((i * share))-$(((i + 1) * share - 1))" bash "$0" --releases "${RELEASES[$i]}" "$@" \
      > "$OUT/cudnn-${RELEASES[$i]}.log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  for r in "${RELEASES[@]}"; do echo "=== cuDNN $r"; grep -E "^===|passed|failed|FAILED|error" "$OUT/cudnn-$r.log" | tail -40; done
  exit $rc
fi
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)

SITE=$(python3 -c "import nvidia.cudnn, os; print(os.path.dirname(os.path.dirname(nvidia.cudnn.__path__[0])))")
SYSTEM_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
select_release() {  # RELEASE: point the package (and the C harness) at that cuDNN
  if [ "$1" = system ]; then
    unset CUDNN_BACKEND_LIBCUDNN; export LD_LIBRARY_PATH=$SYSTEM_LD_LIBRARY_PATH
    CUDNN_INC=$SITE/nvidia/cudnn/include CUDNN_LIB=$SITE/nvidia/cudnn/lib
  else
    local dir=${CUDNN_CARRY_DEST:-/tmp/cudnn}/$1
    [ -e "$dir/lib/libcudnn.so.9" ] || return 1
    export CUDNN_BACKEND_LIBCUDNN=$dir/lib/libcudnn.so.9 LD_LIBRARY_PATH=$dir/lib${SYSTEM_LD_LIBRARY_PATH:+:$SYSTEM_LD_LIBRARY_PATH}
    CUDNN_INC=$dir/include CUDNN_LIB=$dir/lib
  fi
}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cb() { python3 -m cudnn_backend "$@"; }
# torch made unimportable (here and in every process started from here, sweep workers too): a stand-in first on
# the path whose import raises ModuleNotFoundError, as on a machine without torch (pytest.importorskip skips on that
# exception only: a plain ImportError fails the collection)
NOTORCH=/tmp/notorch
mkdir -p "$NOTORCH/torch" && echo 'raise ModuleNotFoundError("torch is blocked (tools/gpu_run.sh)", name="torch")' \
  > "$NOTORCH/torch/__init__.py"
notorch() { PYTHONPATH="$NOTORCH${PYTHONPATH:+:$PYTHONPATH}" "$@"; }

run_stages() {  # the stages, on the cuDNN release selected now, results under $ROUT
for stage in "$@"; do
  case $stage in
    tests)
      log "GPU tests (tests/gpu: every test that needs a GPU, and only those; tests/conftest.py)"
      OUT="$ROUT" python3 -m pytest tests/gpu -q -rs -p no:cacheprovider --junitxml="$ROUT/gpu-tests.xml" 2>&1 \
        | tee "$ROUT/gpu-tests.log"
      python3 benchmarks/array_matrix_table.py "$ROUT/gpu-findings.jsonl" --info "$ROUT/info.txt" \
        --out "$ROUT/array_matrix.md" 2>&1 | tail -3
      ;;
    notorch)
      log "GPU tests with torch not importable"
      notorch python3 -c 'import torch' 2>/dev/null && { echo "torch still importable"; exit 1; }
      OUT="$SCRATCH" notorch python3 -m pytest tests/gpu -q -rs -p no:cacheprovider --junitxml="$ROUT/gpu-tests-notorch.xml" 2>&1 \
        | tee "$ROUT/gpu-tests-notorch.log"
      ;;
    cli-notorch)
      log "the CLI with torch not importable: explore --sweep, tune (twice: a cache hit), bench, fusion"
      { notorch /usr/bin/time -f "wall explore %e s" python3 -m cudnn_backend explore conv_bias_relu --sweep --quiet \
          --json "$ROUT/explore_notorch.json"
        notorch python3 -m cudnn_backend tune conv_bias_relu --quiet --no-engines --top 5 --cache "$ROUT/notorch.sqlite"
        notorch python3 -m cudnn_backend tune conv_bias_relu --quiet --cache "$ROUT/notorch.sqlite"
        notorch python3 -m cudnn_backend bench conv_bias_relu --cache "$ROUT/notorch.sqlite" \
          --json "$ROUT/bench_notorch.json"
        notorch python3 -m cudnn_backend fusion conv_bias_relu --cache "$ROUT/notorch.sqlite"
        notorch python3 -m cudnn_backend tune --preset fused --gpus 1 --quiet --max-configs 6 \
          --cache "$ROUT/notorch.sqlite"
      } 2>&1 | tee "$ROUT/cli-notorch.txt"
      ;;
    timer)
      log "timer comparison: the cuda.core timer against the torch-based one, ResNet-50 preset"
      python3 benchmarks/timer_compare.py --preset resnet50 --out "$ROUT/timer_compare.json" 2>&1 \
        | tee "$ROUT/timer_compare.txt"
      ;;
    startup)
      log "sweep worker start-up, before (torch imported) and after (cuda.core)"
      python3 benchmarks/worker_startup.py --repeats 5 --out "$ROUT/worker_startup.json" 2>&1 \
        | tee "$ROUT/worker_startup.txt"
      ;;
    fill)
      log "random inputs: numpy on the host + a copy, against a cuda.core Program kernel on the device"
      python3 benchmarks/random_fill.py --out "$ROUT/random_fill.json" 2>&1 | tee "$ROUT/random_fill.txt"
      ;;
    examples)
      log "examples"
      for e in examples/*.py; do
        echo "--- $e"; python3 "$e" > "$SCRATCH/example.log" 2>&1 && echo "ok $e" || { echo "FAILED $e"; tail -30 "$SCRATCH/example.log"; }
      done 2>&1 | tee "$ROUT/examples.log"
      ;;
    bench)
      log "C harness"
      cc -O2 -o "$SCRATCH/c_harness" benchmarks/c_harness.c -I"$CUDNN_INC" -I"$CUDA_HOME/include" -L"$CUDNN_LIB" \
         -L"$CUDA_HOME/lib64" -l:libcudnn.so.9 -lcudart -lm -Wl,-rpath,"$CUDNN_LIB" || exit 1
      log "per-call benchmarks"
      C_HARNESS="$SCRATCH/c_harness" python3 -m pytest benchmarks/test_percall.py -q -p no:cacheprovider \
        --benchmark-json="$ROUT/benchmarks.json" --benchmark-columns=mean,median,stddev,rounds 2>&1 \
        | tee "$ROUT/benchmarks.log"
      python3 benchmarks/summarize.py "$ROUT/benchmarks.json" --info "$ROUT/info.txt" --out "$ROUT/percall.md"
      run_stages percall
      ;;
    percall)
      log "C's loops as a library, in this process (benchmarks/c_harness.c -DPERCALL_LIBRARY)"
      cc -O2 -shared -fPIC -DPERCALL_LIBRARY -o "$SCRATCH/libpercall.so" benchmarks/c_harness.c -I"$CUDNN_INC" \
         -I"$CUDA_HOME/include" -I"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
         -L"$CUDNN_LIB" -l:libcudnn.so.9 -Wl,-rpath,"$CUDNN_LIB" || exit 1
      log "per call against C, batches alternating in one process on a pinned CPU (the targets' table)"
      python3 benchmarks/percall_interleaved.py --c-library "$SCRATCH/libpercall.so" --rounds "${PERCALL_ROUNDS:-7}" \
        --out "$ROUT/percall_interleaved.json" --md "$ROUT/percall_interleaved.md" --info "$ROUT/info.txt" 2>&1 \
        | tee "$ROUT/percall_interleaved.txt"
      ;;
    arrays)
      log "arrays of every library x data type x layout x stream, and the fp8 graphs over torch fp8 tensors"
      mkdir -p "$ROUT/arrays"
      OUT="$ROUT/arrays" python3 -m pytest tests/gpu/runtime/test_array_matrix_gpu.py tests/gpu/runtime/test_fp8_gpu.py \
        tests/gpu/runtime/test_arrays_gpu.py -q -rfE -p no:cacheprovider 2>&1 | tee "$ROUT/arrays/tests.log" | tail -40
      python3 benchmarks/array_matrix_table.py "$ROUT/arrays/gpu-findings.jsonl" --info "$ROUT/info.txt" \
        --out "$ROUT/arrays/array_matrix.md"
      ;;
    tune)
      log "the main job: explore, tune, cache hit in a second process, bench, fusion"
      { for p in conv_bias_relu matmul_bias_gelu; do
          /usr/bin/time -f "wall $p %e s" python3 -m cudnn_backend explore $p --sweep --quiet --json "$ROUT/explore_$p.json"
        done
        cb tune conv_bias_relu --quiet --no-engines --top 10
        cb tune conv_bias_relu --quiet          # a second process: a plan-cache hit
        cb cache list
        python3 benchmarks/tune_gpu.py --out "$ROUT/tune_gpu.json"
        cb bench conv_bias_relu --json "$ROUT/bench_conv_bias_relu.json"
        cb fusion conv_bias_relu --json "$ROUT/fusion_conv_bias_relu.json"
        cb fusion conv_fwd --n 8 --c 64 --h 28 --w 28 --k 64 --groups 4 --layout nchw --dtype bfloat16 \
          --json "$ROUT/fusion_grouped_bf16_nchw.json"
      } 2>&1 | tee "$ROUT/tune.txt"
      ;;
    headroom)
      log "headroom: ResNet-50 at batch 32 and 1, the fused patterns, graphs users bring"
      for preset in resnet50_b32 resnet50_b1 fused user; do
        cb tune --preset $preset --no-cache --quiet --repeats 10 --json "$ROUT/headroom_$preset.json" 2>&1 \
          | tee -a "$ROUT/headroom.txt"
      done
      ;;
    sweep)
      log "tune the ResNet-50 preset on 1 GPU and on every GPU of this host, two pairs"
      python3 benchmarks/sweep_gpus.py --gpus "$(nvidia-smi -L | wc -l)" --pairs 2 --out "$ROUT/sweep_gpus.json" 2>&1 \
        | tee "$ROUT/sweep_gpus.txt"
      ;;
    multigpu)
      log "the ResNet-50 preset (knob search, racing) on 1 GPU and on every GPU of this host, in pairs within the budget; winners head to head; a split search; where the time goes"
      python3 benchmarks/multi_gpu_sweep.py --budget-s "${MULTIGPU_BUDGET_S:-280}" --out "$OUT" 2>&1 \
        | tee "$ROUT/multi_gpu_sweep.txt"
      ;;
    racing)
      log "racing against the exhaustive pass (ResNet-50 b32 + b1, fused, user; knob search on), winners head to head, autotune against torch benchmark=True, the CLI end to end"
      # RACING_ARGS: more arguments, e.g. '--presets resnet50 --no-torch --variant s2=race_samples:2'
      python3 benchmarks/tune_racing_gpu.py --out "$ROUT/tune_racing.json" ${RACING_ARGS:-} 2>&1 | tee "$ROUT/tune_racing.txt"
      ;;
    support)
      log "the support matrix on this GPU (kernel counts of each first working config), and the offline one"
      export CUDNN_BACKEND_SUPPORT_CACHE="$ROUT/support.sqlite"
      slug=$(echo "$GPU" | tr 'A-Z ' 'a-z_' | sed 's/nvidia_//')
      /usr/bin/time -f "wall support on the GPU %e s" python3 -m cudnn_backend support --kernels --quiet --rows none \
        --json "$ROUT/support_gpu_$slug.json" --csv "$ROUT/support_gpu_$slug.csv" 2>&1 | tee "$ROUT/support.txt"
      python3 -m cudnn_backend why --graph examples/support_matrix.py:strided_dgrad_fp32 --json "$ROUT/why_dgrad.json" \
        2>&1 | tee -a "$ROUT/support.txt"
      ;;
    compare-releases)
      log "two releases side by side on this GPU (COMPARE_A, COMPARE_B; default: the installed one and 9.28.1): the resnet50, fused and attention presets timed graph by graph, and the support catalogue with kernel counts"
      a=${COMPARE_A:-$SITE/nvidia/cudnn} b=${COMPARE_B:-9.28.1}
      for preset in ${COMPARE_PRESETS:-resnet50 fused attention}; do
        /usr/bin/time -f "wall compare $preset %e s" python3 -m cudnn_backend compare --releases "$a" "$b" \
          --preset "$preset" --all --json "$ROUT/compare_$preset.json" --csv "$ROUT/compare_$preset.csv"
      done 2>&1 | tee "$ROUT/compare_releases.txt"
      [ "${COMPARE_SUPPORT:-1}" = 1 ] && /usr/bin/time -f "wall compare support %e s" python3 -m cudnn_backend compare \
        --releases "$a" "$b" --no-cache --quiet --json "$ROUT/compare_support.json" --csv "$ROUT/compare_support.csv" \
        2>&1 | tee -a "$ROUT/compare_releases.txt"
      ;;
    offline-live)
      log "the default catalogue live and offline (bundled, captured, plans all): verdicts, configs per mode, engines, first configs"
      python3 benchmarks/offline_vs_live.py --out "$ROUT" ${OFFLINE_LIVE_ARGS:-} 2>&1 | tee "$ROUT/offline_vs_live.txt"
      ;;
    profile)
      log "device profile capture"
      cb profile capture --out "$ROUT/$(echo "$GPU" | tr 'A-Z ' 'a-z_' | sed 's/nvidia_//')_deviceprop_cudnn$(python3 -c 'import cudnn_backend as c; print(c.get_version())').json"
      ;;
    *)
      log "custom: $stage"; eval "$stage" 2>&1 | tee -a "$ROUT/custom.log" ;;
  esac
done
}

for release in "${RELEASES[@]}"; do
  select_release "$release" || { echo "cuDNN $release is not on this machine"; FAILED_RELEASES+=("$release"); continue; }
  ROUT=$OUT; [ ${#RELEASES[@]} -gt 1 ] && ROUT=$OUT/cudnn-$release && mkdir -p "$ROUT"
  export CUDNN_BACKEND_PLAN_CACHE="$ROUT/plans.sqlite"  # a private folder: the cache refuses a world-writable one
  python3 -m cudnn_backend info > "$ROUT/info.txt" 2>&1
  log "cuDNN $release: $(grep -E 'cudnn (version|path)' "$ROUT/info.txt" | tr -s ' ' | tr '\n' ' ')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$ROUT/info.txt"
  run_stages "$@"
done
log done
# the device tool brings back at most 8 files: pack everything into one
[ ${#FAILED_RELEASES[@]} -eq 0 ] || echo "releases not run: ${FAILED_RELEASES[*]}"
tar czf "$SCRATCH/results.tgz" -C "$OUT" . && rm -rf "${OUT:?}"/* && mv "$SCRATCH/results.tgz" "$OUT/results.tgz"
