#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 15's measurements, one command for the GPU machine (no interaction):
#   1. unpacks what scripts/fetch-scenes put in .debs/scenes (assimp, stb,
#      OpenEXR .debs, and the model files under /usr/share), builds the path
#      tracer with CUDA (and Vulkan when WS_VULKAN=ON is asked: VULKAN=1);
#   2. runs the scene tests on CUDA (schedulers bit-identical on the real
#      scene, CPU vs CUDA on it);
#   3. renders the engine+bunny scene and the Cornell box at WIDTHxHEIGHT,
#      SPP samples, with both schedulers on CUDA (and Vulkan), and prints a
#      table of Mpaths/s with the wavefront/megakernel ratio per scene
#      (goal on the engine+bunny scene: >= 1.3);
#   4. writes the real scene's image ($OUT/engine-bunny.png, .exr) for docs/;
#   5. times a 1080p 64-spp render of the real scene end to end (process
#      start to image written; goal < 10 s on the H200);
#   6. Nsight Compute share of the scheduler's queue kernels on the real
#      scene (kernel-share.sh, 1 spp; goal <= 5 %), when ncu is there.
#
#   bash examples/pathtracer/bench-scenes.sh [WIDTH HEIGHT SPP]   (default 1920 1080 16)
# Vulkan is measured too when the build has it (VULKAN=1 configures it, or a
# BUILD_DIR configured with WS_VULKAN=ON).
# Carry [".debs"] (scripts/fetch-scenes run beforehand on a Debian machine).
# BACKEND=cpu TESTS=0 runs steps 3-5 on the CPU (a smoke test off the GPU
# machine; use a small size).
# Logs: $OUT (default out/pathtracer-scenes). Exit status: 1 if a test, a
# build or a render failed (the table still prints what ran).
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/pathtracer-scenes}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
W=${1:-1920} H=${2:-1080} SPP=${3:-16}
bd=${BUILD_DIR:-build-pt-scenes}
vk=${VULKAN:-0}
be=${BACKEND:-cuda}
TESTS=${TESTS:-1}
scene=examples/pathtracer/scenes/engine-bunny.scene
rc=0

# 1. dependencies and build
if ls .debs/scenes/*.deb >/dev/null 2>&1; then
  for f in .debs/scenes/*.deb .debs/libcmocka*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  [ -f .debs/scenes/models.tar.gz ] && tar -xzf .debs/scenes/models.tar.gz -C /
  # bookworm's zlib1g-dev links libz.so to its own libz.so.1.2.13: use the host's
  z=/usr/lib/x86_64-linux-gnu/libz.so
  [ -e $z ] || ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libz.so.1.* /lib/x86_64-linux-gnu/libz.so.1.* 2>/dev/null | head -1)" $z
  ldconfig 2>/dev/null
else
  echo "bench-scenes: no .debs/scenes (run scripts/fetch-scenes on a Debian machine and carry .debs)"
fi
for f in $(grep -ho '/usr/share/[^ ]*' examples/pathtracer/scenes/*.scene | sort -u); do
  [ -f "$f" ] || { echo "bench-scenes: model file $f is missing (scripts/fetch-scenes)"; exit 1; }
done
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  nvcc --version | tail -1
  nproc
} | tee "$OUT/env.log"
{ [ -f "$bd/build.ninja" ] || cmake -S . -B "$bd" -G Ninja -DWS_CUDA=ON -DCMAKE_CUDA_COMPILER=nvcc \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DWS_VULKAN=$([ "$vk" = 1 ] && echo ON || echo OFF) \
  -DWS_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1; } &&
  ninja -C "$bd" wavesched-pathtracer test_pathtracer >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; echo "bench-scenes: build failed ($OUT/build.log)"; exit 1; }
grep -q "PT_HAVE_ASSIMP" "$bd/build.ninja" ||
  { echo "bench-scenes: the build found no assimp/stb ($OUT/build.log)"; exit 1; }
pt=$bd/examples/pathtracer/wavesched-pathtracer
t=$bd/tests/pathtracer/test_pathtracer

# 2. tests on CUDA
[ "$TESTS" = 1 ] && {
  echo "== scene tests on cuda"
  $t --backend cuda --scene "$scene" || rc=1
  $t --backend cuda --scene examples/pathtracer/scenes/small.scene --reference 0.32359 \
    --tolerance 0.15 || rc=1
  echo "== CPU vs CUDA on the real scene (64x64, 8 spp)"
  $t --compare-backends cpu,cuda --scene "$scene" || rc=1
  $t --backend cuda || rc=1
} 2>&1 | tee "$OUT/tests.log"
if [ "$TESTS" = 1 ]; then
  grep -q "checks, 0 failed" "$OUT/tests.log" && ! grep -qE "FAIL|SKIP" "$OUT/tests.log" || rc=1
fi

# 3. + 4. timed renders: Mpaths/s per (scene, backend, scheduler)
table=$OUT/table.txt
: >"$table"
render() { # label backend scheduler scene-args...
  local label=$1 backend=$2 sched=$3
  shift 3
  local log="$OUT/$label-$backend-$sched.log"
  "$pt" --no-progress --backend "$backend" --scheduler "$sched" --width "$W" --height "$H" \
    --spp "$SPP" --stats-json "$OUT/$label-$backend-$sched.json" "$@" >"$log" 2>&1
  local r=$?
  local mp
  mp=$(sed -n 's/.*(\([0-9.]*\) Mpaths\/s.*/\1/p' "$log")
  if [ $r != 0 ] || [ -z "$mp" ]; then
    echo "bench-scenes: $label $backend $sched failed:"
    tail -5 "$log"
    rc=1
    mp=-
  fi
  printf '%-12s %-7s %-11s %10s   %s\n' "$label" "$backend" "$sched" "$mp" \
    "$(grep -o 'rendered.*' "$log" | head -1)" | tee -a "$table"
}
backends=("$be")
# Vulkan where this build has it (VULKAN=1 configures it; a BUILD_DIR
# configured with Vulkan, such as scripts/gpu-final's, has it too)
if [ "$be" = cuda ] && "$pt" --backend vulkan --width 8 --height 8 --spp 1 --no-progress \
  --output - >/dev/null 2>&1; then
  backends+=(vulkan)
elif [ "$vk" = 1 ]; then
  echo "bench-scenes: VULKAN=1 but the Vulkan backend does not open: CUDA only"
fi
{
  echo "== ${W}x${H}, $SPP spp, depth 6: scene backend scheduler Mpaths/s"
  for b in "${backends[@]}"; do
    render engine-bunny "$b" wavefront --scene "$scene" --output "$OUT/engine-bunny-$b.png" \
      --output "$OUT/engine-bunny-$b.exr"
    render engine-bunny "$b" megakernel --scene "$scene" --output -
    render cornell "$b" wavefront --output -
    render cornell "$b" megakernel --output -
  done
  echo "== wavefront / megakernel (goal on engine-bunny, cuda: >= 1.3)"
  for b in "${backends[@]}"; do
    for s in engine-bunny cornell; do
      awk -v s="$s" -v b="$b" '$1 == s && $2 == b { v[$3] = $4 }
        END { if (v["megakernel"] > 0 && v["wavefront"] > 0)
                printf "%-12s %-7s %.2fx\n", s, b, v["wavefront"] / v["megakernel"]
              else printf "%-12s %-7s (missing)\n", s, b }' "$table"
    done
  done
} 2>&1 | tee "$OUT/bench.log"

# 5. the 64-spp 1080p render of the real scene, end to end (goal < 10 s)
{
  echo "== ${E2E_W:-1920}x${E2E_H:-1080}, 64 spp, engine-bunny, $be wavefront, end to end"
  t0=$(date +%s.%N)
  "$pt" --no-progress --backend "$be" --scene "$scene" --width "${E2E_W:-1920}" --height "${E2E_H:-1080}" --spp 64 \
    --output "$OUT/engine-bunny-64spp.png" >"$OUT/e2e.log" 2>&1 || rc=1
  t1=$(date +%s.%N)
  grep -E "scene:|rendered" "$OUT/e2e.log"
  echo "end to end: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s (goal < 10 s)"
  echo "== the same with the megakernel"
  t0=$(date +%s.%N)
  "$pt" --no-progress --backend "$be" --scheduler megakernel --scene "$scene" --width "${E2E_W:-1920}" \
    --height "${E2E_H:-1080}" --spp 64 --output - >"$OUT/e2e-mega.log" 2>&1 || rc=1
  t1=$(date +%s.%N)
  grep -E "rendered" "$OUT/e2e-mega.log"
  echo "end to end: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
} 2>&1 | tee "$OUT/e2e.txt"

# 6. the scheduler's share of GPU time on the real scene
if [ "$be" = cuda ] && command -v ncu >/dev/null 2>&1; then
  bash examples/pathtracer/kernel-share.sh profile "$OUT/ncu-scene" "$pt" --backend cuda \
    --scene "$scene" --width 1920 --height 1080 --spp 1 --output - 2>&1 | tail -12 |
    tee "$OUT/kernel-share.txt"
else
  echo "bench-scenes: no ncu: kernel share not measured" | tee "$OUT/kernel-share.txt"
fi
echo "bench-scenes: logs in $OUT; exit $rc"
exit $rc
