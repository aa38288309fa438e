#!/usr/bin/env bash
# Carry a pip cuDNN release to the GPU machine, which has no network, and select it there.
#
# The device tool carries at most 64 MiB a call, this working tree included, so a release (0.8 GB of libraries,
# ~360 MB as tar.xz) travels in chunks, one device call each. A warm machine keeps /tmp between calls and goes back
# after ~30 s idle: make the calls back to back. Several releases can sit side by side on the machine.
#
# Here, from the repo root (.cudnnc/ is git-ignored, so it travels only when a call's `carry` names it):
#   bash tools/carry_cudnn.sh pack 9.28.1 [cu13|cu12]   # pip-installs that release into ~/.cache (once), then packs
#   bash tools/carry_cudnn.sh pack /path/to/nvidia/cudnn # or any cuDNN folder holding lib/ (and include/)
#     -> .cudnnc/<release>/00 ... NN: one chunk per device call, sized to 64 MiB minus this tree and a margin
#        (CARRY_MARGIN_KIB, 4096: room for results committed before the calls; CARRY_XZ_LEVEL, 6: xz's level)
#   bash tools/carry_cudnn.sh resplit 9.28.1            # the tree grew (calls refused as too large): smaller chunks
#   bash tools/carry_cudnn.sh calls 9.28.1              # the device calls to make, one line each
# On the device, one call per chunk, each carrying only that chunk (carry: [".cudnnc/9.28.1/03"]):
#   bash tools/carry_cudnn.sh put .cudnnc/9.28.1/03
# then, in the same call as the last put or any later one on the same warm machine:
#   bash tools/carry_cudnn.sh unpack 9.28.1             # -> /tmp/cudnn/9.28.1/{lib,include}; checks the sha256
#   bash tools/gpu_run.sh --releases 9.19.0,9.28.1 tests ...   # gpu_run.sh selects each release in turn
# `unpack` is idempotent and `installed` lists what the machine holds. The installed release (9.19.0 on the GPU
# machines) needs no carrying: gpu_run.sh calls it "system".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHUNKS=$ROOT/.cudnnc
DEST=${CUDNN_CARRY_DEST:-/tmp/cudnn}
LIMIT_MIB=64       # the device tool's limit per call, working tree included
MARGIN_KIB=${CARRY_MARGIN_KIB:-4096}  # for files written between packing and the calls (results committed meanwhile)
XZ_LEVEL=${CARRY_XZ_LEVEL:-6}  # 3 packs ~3x faster on a busy machine, for ~10% more chunks
# the libraries the graph API loads (cuDNN 9 splits them; a release lacking one simply has fewer)
LIBS="libcudnn.so.9 libcudnn_graph.so.9 libcudnn_engines_precompiled.so.9 libcudnn_engines_runtime_compiled.so.9
      libcudnn_engines_tensor_ir.so.9 libcudnn_heuristic.so.9 libcudnn_ops.so.9 libcudnn_cnn.so.9 libcudnn_adv.so.9"

usage() { sed -n '2,21p' "$0" >&2; exit 2; }
die() { echo "carry_cudnn.sh: $*" >&2; exit 1; }

tree_bytes() {  # what travels with every call: tracked files and untracked ones git does not ignore
  (cd "$ROOT" && git ls-files -z -c -o --exclude-standard | xargs -0 -r stat -c %s -- 2>/dev/null \
     | awk '{s += $1} END {print s + 0}')
}

release_dir() {  # RELEASE [CUDA] -> a folder holding lib/ and include/ of that pip release
  local release=$1 cuda=${2:-cu13}
  [[ $release =~ ^9\.[0-9]+\.[0-9]+$ ]] || die "release: expected MAJOR.MINOR.PATCH (e.g. 9.28.1), not '$release'"
  [[ $cuda = cu12 || $cuda = cu13 ]] || die "cuda: expected cu12 or cu13, not '$cuda'"
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/cudnn-backend/releases/$cuda-$release
  if [ ! -e "$cache/nvidia/cudnn/lib/libcudnn.so.9" ]; then
    python3 -m pip install -q --no-deps --target "$cache" "nvidia-cudnn-$cuda==$release.*" >&2 \
      || die "pip could not install nvidia-cudnn-$cuda==$release.* (is it a release pip offers?)"
  fi
  echo "$cache/nvidia/cudnn"
}

version_of() {  # the version cudnn_version.h states: MAJOR.MINOR.PATCH
  local h=$1/include/cudnn_version.h
  [ -e "$h" ] || { echo ""; return; }
  awk '/#define CUDNN_MAJOR /{a=$3} /#define CUDNN_MINOR /{b=$3} /#define CUDNN_PATCHLEVEL /{c=$3}
       END {if (a != "") print a "." b "." c}' "$h"
}

pack() {
  [ $# -ge 1 ] || usage
  local src
  if [ -d "$1" ]; then src=$(cd "$1" && pwd); else src=$(release_dir "$@"); fi
  [ -e "$src/lib/libcudnn.so.9" ] || die "$src: no lib/libcudnn.so.9 there"
  local release; release=$(version_of "$src")
  [ -n "$release" ] || release=${1##*/}
  local out=$CHUNKS/$release files=()
  for lib in $LIBS; do [ -e "$src/lib/$lib" ] && files+=("lib/$lib"); done
  [ -d "$src/include" ] && files+=(include)
  rm -rf "$out" && mkdir -p "$out"
  echo "packing cuDNN $release from $src (${#files[@]} entries)" >&2
  (cd "$src" && tar -cf - "${files[@]}") | xz -"$XZ_LEVEL" -T0 > "$out/all.tar.xz"
  split_chunks "$out" "$release"
  calls "$release"
}

split_chunks() {  # FOLDER RELEASE: FOLDER/all.tar.xz -> its sha256 and chunks 00 ... NN, sized for this tree now
  local out=$1 release=$2
  local tree; tree=$(tree_bytes)
  local chunk_kib=$(( (LIMIT_MIB * 1024) - tree / 1024 - MARGIN_KIB ))
  [ $chunk_kib -gt 4096 ] || die "this tree is $((tree >> 20)) MiB: too little room is left for a chunk"
  echo "cuDNN $release: chunks of $((chunk_kib / 1024)) MiB (this tree: $((tree >> 20)) MiB)" >&2
  (cd "$out" && sha256sum all.tar.xz | cut -d' ' -f1 > sha256 && split -b "${chunk_kib}k" -d -a 2 all.tar.xz part. \
     && rm all.tar.xz && for p in part.*; do n=${p#part.}; mkdir "$n"; mv "$p" "$n/"; done \
     && cp sha256 00/ && echo "$release" > 00/release)
}

resplit() {  # RELEASE: the packed chunks joined and split again for the tree as it is now (nothing compressed again)
  local release=${1:?release}
  local out=$CHUNKS/$release
  [ -e "$out/sha256" ] || die "nothing packed for $release: run pack first"
  cat "$out"/[0-9][0-9]/part.* > "$out/all.tar.xz"
  if [ "$(sha256sum "$out/all.tar.xz" | cut -d' ' -f1)" != "$(cat "$out/sha256")" ]; then
    rm -f "$out/all.tar.xz"
    die "the chunks of $release do not add up: pack it again"
  fi
  rm -rf "$out"/[0-9][0-9]
  split_chunks "$out" "$release"
  calls "$release"
}

calls() {
  local release=${1:?release}
  [ -d "$CHUNKS/$release" ] || die "nothing packed for $release: run pack first"
  local n=0
  for d in "$CHUNKS/$release"/[0-9][0-9]; do
    echo "run(command=\"bash tools/carry_cudnn.sh put .cudnnc/$release/${d##*/}\", carry=[\".cudnnc/$release/${d##*/}\"])"
    n=$((n + 1))
  done
  echo "then: bash tools/carry_cudnn.sh unpack $release   ($n chunks, $(du -sh "$CHUNKS/$release" | cut -f1))"
}

put() {
  local dir=${1:?chunk folder}
  [ -d "$dir" ] || die "$dir: no such chunk here (was it named in the call's carry?)"
  local release=${dir%/*}; release=${release##*/}
  mkdir -p "$DEST/.parts/$release"
  cp "$dir"/* "$DEST/.parts/$release/"
  echo "cuDNN $release: $(ls "$DEST/.parts/$release" | grep -c '^part\.') chunk(s) here"
}

unpack() {
  local release=${1:?release}
  if [ -e "$DEST/$release/lib/libcudnn.so.9" ]; then echo "$DEST/$release/lib"; return; fi
  local parts=$DEST/.parts/$release
  [ -e "$parts/sha256" ] || die "chunk 00 of $release is not here: put it first"
  python3 - "$parts" "$DEST/$release" <<'PY'
import hashlib, pathlib, sys, tarfile
parts, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
whole = parts / "all.tar.xz"
with whole.open("wb") as out:
    for part in sorted(parts.glob("part.*")):
        out.write(part.read_bytes())
digest = hashlib.sha256(whole.read_bytes()).hexdigest()
if digest != (parts / "sha256").read_text().strip():
    sys.exit(f"carry_cudnn.sh: the chunks do not add up (sha256 {digest}): a chunk is missing or was put twice")
dest.mkdir(parents=True, exist_ok=True)
with tarfile.open(whole) as tar:
    tar.extractall(dest, filter="data")
whole.unlink()
PY
  rm -rf "$parts"
  echo "$DEST/$release/lib"
}

installed() { ls -d "$DEST"/[0-9]*/lib 2>/dev/null || true; }

cmd=${1:-}; shift || true
case $cmd in
  pack) pack "$@" ;;
  resplit) resplit "$@" ;;
  calls) calls "$@" ;;
  put) put "$@" ;;
  unpack) unpack "$@" ;;
  installed) installed ;;
  *) usage ;;
esac
