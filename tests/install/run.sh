#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The package test (scripts/test step `package`, docs/install.md): installs
# wavesched into temporary prefixes and uses it as a user would.
#
#   tests/install/run.sh
#
# For a static and a shared (BUILD_SHARED_LIBS=ON) build of the library
# (CPU + Vulkan, no tests/examples/benchmarks), each installed:
#   * the tutorial (examples/tutorial) through find_package (CMake) and
#     through pkg-config (its Makefile), run on the CPU and on Vulkan;
#   * the demo (examples/demo) through find_package, run on the CPU and on
#     Vulkan, and through pkg-config (a plain cc command), run on the CPU;
#   * the versions agree: headers, library, CMake package, pkg-config;
# the shared library exports exactly the functions the installed headers
# declare, all `ws_`-prefixed (nm -D), with the SONAME libwavesched.so.MAJOR.MINOR;
# and consumers that ask for a backend the installed library lacks fail at
# configure time with the package's message (each next to a control that
# asks for one it has and configures).
# docs/tutorial.md quotes the tutorial's files exactly.
# With nvcc (/usr/local/cuda/bin/nvcc), static and shared CUDA builds too:
# compile only (no GPU here): a C-only consumer links, the tutorial builds
# through both routes, a project without the CUDA language is refused, the
# shared library exports only the API.
#
# Environment: WS_PACKAGE_WORK (folder, default build-package), WS_PACKAGE_JOBS,
# WS_PACKAGE_CUDA=0 (skip the CUDA part), WS_PACKAGE_GPU=1 (the GPU machine:
# CUDA + Vulkan installs, run on CUDA too; see the end of this file; =only:
# that part alone).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${WS_PACKAGE_WORK:-$root/build-package}
jobs=${WS_PACKAGE_JOBS:-$(nproc)}
nvcc=/usr/local/cuda/bin/nvcc
rm -rf "$work"
mkdir -p "$work"
failures=0
log=$work/log.txt

pass() { echo "package: ok      $*"; }
fail() {
  failures=$((failures + 1))
  echo "package: FAILED  $*"
}
# check <label> <command...>: runs it with its output in $log, shown on failure
check() {
  local label=$1
  shift
  if "$@" >"$log" 2>&1; then
    pass "$label"
  else
    fail "$label"
    sed 's/^/    /' "$log" | tail -40
  fi
}
# run_ok <label> <expected output regex> <command...>: exit 0 and the text
run_ok() {
  local label=$1 want=$2
  shift 2
  if "$@" >"$log" 2>&1 && grep -Eq -- "$want" "$log"; then
    pass "$label: $(grep -Em1 -- "$want" "$log")"
  else
    fail "$label (exit $?, expected /$want/)"
    sed 's/^/    /' "$log" | tail -40
  fi
}
# configure_fails <label> <expected message regex> <cmake args...>
configure_fails() {
  local label=$1 want=$2
  shift 2
  if cmake "$@" >"$log" 2>&1; then
    fail "$label: configured, but should have failed"
    sed 's/^/    /' "$log" | tail -20
  elif grep -q -- "$want" <(tr -s ' \n' ' ' <"$log"); then
    pass "$label: refused at configure time"
  else
    fail "$label: failed without the message /$want/"
    sed 's/^/    /' "$log" | tail -30
  fi
}

# library <name> <cmake args...>: configure, build, install into $work/prefix-<name>
library() {
  local name=$1
  shift
  cmake -S "$root" -B "$work/lib-$name" -G Ninja -DWS_WERROR=ON -DWS_BUILD_TESTS=OFF \
    -DWS_BUILD_BENCH=OFF -DWS_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$work/prefix-$name" "$@" &&
    cmake --build "$work/lib-$name" -j "$jobs" &&
    cmake --install "$work/lib-$name"
}

# consumer_cmake <dir> <source> <prefix> [cmake args...]
consumer_cmake() {
  local dir=$1 src=$2 prefix=$3
  shift 3
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" "$@" && cmake --build "$dir" -j "$jobs"
}

# The demo with pkg-config and cc, CPU kernels only: the module sets that
# ws_add_kernels would generate, written here.
demo_pkgconfig() {
  local prefix=$1 out=$2
  mkdir -p "$out"
  printf '%s\n' '#include "wavesched/module.h"' \
    'extern const ws_module demo_kernels_module_cpu, reg_kernels_module_cpu;' \
    'extern const ws_module_set demo_kernels_modules, reg_kernels_modules;' \
    'const ws_module_set demo_kernels_modules = {{&demo_kernels_module_cpu, 0, 0}};' \
    'const ws_module_set reg_kernels_modules = {{&reg_kernels_module_cpu, 0, 0}};' \
    >"$out/modules.c"
  local pc
  pc=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs wavesched) || return 1
  # shellcheck disable=SC2086
  cc -std=c11 -O2 -Wall -Wextra -Werror -I "$root/examples/demo" -I "$root/tests/aux" \
    "$root/examples/demo/main.c" "$root/examples/demo/pipeline.c" "$out/modules.c" \
    -x c "$root/examples/demo/demo.kern.h" -x c "$root/tests/aux/regression.kern.h" -x none \
    -o "$out/demo" -Wl,-rpath,"$prefix/lib" $pc
}

# demo_checksums <demo> [backend]: the demo workload (queue verification
# on) gives the same checksum on the CPU and on the backend (vulkan)
demo_checksums() {
  local b=${2:-vulkan} c v
  c=$("$1" --backend cpu --items 3000 --pool 256 --verify | grep -o 'checksum [0-9a-f]*') &&
    v=$("$1" --backend "$b" --items 3000 --pool 256 --verify | grep -o 'checksum [0-9a-f]*') &&
    [ -n "$c" ] && [ "$c" = "$v" ] && echo "cpu and $b: same $c"
}

# Exactly the public functions: every exported symbol is a ws_ name that an
# installed header declares, and every function of the library that a
# header declares is exported.
exports_check() {
  local prefix=$1 so
  so=$(readlink -f "$prefix/lib/libwavesched.so")
  nm -D --defined-only "$so" | awk '{print $NF}' | sort -u >"$work/exported.txt"
  cat "$prefix"/include/wavesched/*.h >"$work/headers.txt"
  local bad=0 sym
  while read -r sym; do
    if [[ $sym != ws_* ]]; then
      echo "exported, not ws_-prefixed: $sym"
      bad=1
    elif ! grep -Eq "\\b$sym\\(" "$work/headers.txt"; then
      echo "exported, declared by no installed header: $sym"
      bad=1
    fi
  done <"$work/exported.txt"
  # the library's global functions (the static build has them all, hidden
  # or not) that the headers declare
  nm -g --defined-only "$work/prefix-static/lib/libwavesched.a" | awk '$2 == "T" {print $3}' |
    sort -u | while read -r sym; do
    if grep -Eq "\\b$sym\\(" "$work/headers.txt" && ! grep -qx "$sym" "$work/exported.txt"; then
      echo "declared by a header, not exported: $sym"
      echo bad >"$work/missing"
    fi
  done
  [ -e "$work/missing" ] && bad=1
  local soname
  soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  local want
  want=libwavesched.so.$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion wavesched |
    cut -d. -f1,2)
  if [ "$soname" != "$want" ]; then
    echo "SONAME $soname, expected $want"
    bad=1
  fi
  echo "$(wc -l <"$work/exported.txt") exported symbols, SONAME $soname"
  return $bad
}

# version_pkgconfig <prefix> <out>: the version check built with pkg-config
version_pkgconfig() {
  local prefix=$1 out=$2 pc
  pc=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs wavesched) || return 1
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Wextra -Werror "$here/checks/version_check.c" -o "$out" \
    -Wl,-rpath,"$prefix/lib" $pc || return 1
  local v want
  v=$("$out") || return 1
  want=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion wavesched)
  echo "$v (pkg-config --modversion $want)"
  [ "${v%% *}" = "$want" ]
}

# docs/tutorial.md shows the tutorial's files verbatim: the code block
# after each `<!-- file: PATH -->` line equals PATH
tutorial_doc_check() {
  local d=$work/tutorial-doc n=0 bad=0 path
  mkdir -p "$d"
  awk -v d="$d" '
    /^<!-- file: [^ ]+ -->$/ { path = $3; name = path; gsub("/", "_", name); out = d "/" name
                               print path > (d "/list"); getline; copy = 1; printf "" > out; next }
    copy && /^```$/ { copy = 0; close(out); next }
    copy { print >> out }' "$root/docs/tutorial.md"
  while read -r path; do
    n=$((n + 1))
    # the listings leave out each file's SPDX license line
    diff -u <(sed '/^\/\* SPDX-License-Identifier: MIT \*\/$/d' "$root/$path") \
      "$d/${path//\//_}" || bad=1
  done <"$d/list"
  # the lengths it states: all lines of the C files less the SPDX line, and
  # those that are neither blank nor a one-line comment
  local c=(collatz.h collatz.kern.h main.c) all code
  all=$(cd "$root/examples/tutorial" && cat "${c[@]}" | grep -vc 'SPDX-License-Identifier')
  code=$(cd "$root/examples/tutorial" && cat "${c[@]}" | grep -v 'SPDX-License-Identifier' |
    grep -v '^[[:space:]]*$' | grep -vc '^[[:space:]]*/\*.*\*/[[:space:]]*$')
  if ! grep -q "$all lines in all" "$root/docs/tutorial.md" ||
    ! tr '\n' ' ' <"$root/docs/tutorial.md" | grep -q "$code without blank and comment-only"; then
    echo "docs/tutorial.md does not state the tutorial's length: $all lines, $code code lines"
    bad=1
  fi
  echo "$n files shown verbatim, $all lines of C ($code code lines)"
  [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

t0=$SECONDS
# Everything CI runs (all but the GPU part below)
ci_checks() {
  run_ok "docs/tutorial.md shows the tutorial's files as they are" 'shown verbatim' \
    tutorial_doc_check
  for kind in static shared; do
    shared=OFF
    [ $kind = shared ] && shared=ON
    check "$kind library: build and install" library $kind -DWS_CUDA=OFF -DWS_VULKAN=ON \
      -DBUILD_SHARED_LIBS=$shared
    prefix=$work/prefix-$kind
    out=$work/$kind
    mkdir -p "$out"
    check "$kind: tutorial through find_package builds" \
      consumer_cmake "$out/tutorial" "$root/examples/tutorial" "$prefix"
    for b in cpu vulkan; do
      run_ok "$kind: tutorial (find_package) on $b" ' 0 wrong' "$out/tutorial/tutorial" $b
    done
    check "$kind: tutorial through pkg-config (make) builds" \
      env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C "$root/examples/tutorial" \
      O="$out/tutorial-make" CFLAGS="-O2 -Wall -Wextra -Werror" LDFLAGS="-Wl,-rpath,$prefix/lib"
    for b in cpu vulkan; do
      run_ok "$kind: tutorial (pkg-config) on $b" ' 0 wrong' "$out/tutorial-make/tutorial" $b
    done
    check "$kind: demo through find_package builds" \
      consumer_cmake "$out/demo" "$here/demo" "$prefix"
    run_ok "$kind: demo (find_package) on cpu and vulkan, same checksum" 'same checksum' \
      demo_checksums "$out/demo/demo"
    run_ok "$kind: demo (find_package) pipeline scenario on vulkan" \
      'mismatches 0, overflow/corruption 0' "$out/demo/demo" --backend vulkan --scenario pipeline
    check "$kind: demo through pkg-config (cc) builds" demo_pkgconfig "$prefix" "$out/demo-pc"
    run_ok "$kind: demo (pkg-config) on cpu" 'mismatches 0, overflow/corruption 0' \
      "$out/demo-pc/demo" --backend cpu --scenario pipeline
    check "$kind: version check through find_package builds" \
      consumer_cmake "$out/version" "$here/checks" "$prefix" -DCASE=version
    run_ok "$kind: versions (headers, library, CMake package)" '^[0-9]+\.[0-9]+\.[0-9]+ cpu' \
      "$out/version/version_check"
    run_ok "$kind: versions (pkg-config)" 'modversion' version_pkgconfig "$prefix" "$out/version-pc"
  done
  run_ok "shared: exports exactly the public ws_ functions (nm -D), SONAME" 'exported symbols' \
    exports_check "$work/prefix-shared"

  # Backends the installed (CPU + Vulkan) library lacks, and controls.
  prefix=$work/prefix-static
  cfg=(-G Ninja -DCMAKE_PREFIX_PATH="$prefix" -S "$here/checks")
  configure_fails "ws_add_kernels(BACKENDS cpu cuda) without CUDA" \
    "BACKENDS requires cuda, but the wavesched package at" "${cfg[@]}" -B "$work/neg1" \
    -DCASE=backends -DWANT=cuda
  check "control: ws_add_kernels(BACKENDS cpu vulkan) configures" \
    cmake "${cfg[@]}" -B "$work/pos1" -DCASE=backends -DWANT=vulkan
  configure_fails "find_package(COMPONENTS cuda) without CUDA" \
    "the cuda backend was required, but wavesched" "${cfg[@]}" -B "$work/neg2" \
    -DCASE=components -DWANT=cuda
  check "control: find_package(COMPONENTS vulkan) configures" \
    cmake "${cfg[@]}" -B "$work/pos2" -DCASE=components -DWANT=vulkan
  configure_fails "ws_add_kernels(BACKENDS cpu vulkan) without GLSL" \
    "BACKENDS requires vulkan, but no GLSL <dir> was given" "${cfg[@]}" -B "$work/neg3" \
    -DCASE=noglsl

  if [ -x "$nvcc" ] && [ "${WS_PACKAGE_CUDA:-1}" != 0 ]; then
    cuda=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90)
    check "cuda (static) library: build and install" library cuda -DWS_CUDA=ON "${cuda[@]}" \
      -DWS_VULKAN=OFF
    prefix=$work/prefix-cuda
    out=$work/cuda
    check "cuda: a C-only project links (find_package, no CUDA language)" \
      consumer_cmake "$out/version" "$here/checks" "$prefix" -DCASE=version
    run_ok "cuda: versions and backends (C-only find_package)" '^[0-9.]+ cpu cuda$' \
      "$out/version/version_check"
    run_ok "cuda: a C-only program links (pkg-config)" 'modversion' \
      version_pkgconfig "$prefix" "$out/version-pc"
    check "cuda: tutorial through find_package compiles its CUDA kernels" \
      consumer_cmake "$out/tutorial" "$root/examples/tutorial" "$prefix" "${cuda[@]}"
    run_ok "cuda: tutorial (find_package) on cpu" ' 0 wrong' "$out/tutorial/tutorial" cpu
    check "cuda: tutorial through pkg-config (make, nvcc) compiles" \
      env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C "$root/examples/tutorial" \
      O="$out/tutorial-make" CFLAGS="-O2 -Wall -Wextra -Werror"
    run_ok "cuda: tutorial (pkg-config) on cpu" ' 0 wrong' "$out/tutorial-make/tutorial" cpu
    cfg=(-G Ninja -DCMAKE_PREFIX_PATH="$prefix" -S "$here/checks")
    configure_fails "ws_add_kernels in a project without the CUDA language" \
      "has the CUDA backend, so the kernels must be built for CUDA too" "${cfg[@]}" \
      -B "$work/neg4" -DCASE=nocuda
    configure_fails "ws_add_kernels(BACKENDS cpu vulkan) without Vulkan" \
      "BACKENDS requires vulkan, but the wavesched package at" "${cfg[@]}" -B "$work/neg5" \
      -DCASE=backends -DWANT=vulkan
    # shared: its exports, and consumers' CUDA kernels linked by a C linker
    check "cuda (shared) library: build and install" library cuda-shared -DWS_CUDA=ON \
      "${cuda[@]}" -DWS_VULKAN=OFF -DBUILD_SHARED_LIBS=ON
    prefix=$work/prefix-cuda-shared
    out=$work/cuda-shared
    run_ok "cuda (shared): exports exactly the public ws_ functions (nm -D)" 'exported symbols' \
      exports_check "$prefix"
    check "cuda (shared): tutorial through find_package compiles its CUDA kernels" \
      consumer_cmake "$out/tutorial" "$root/examples/tutorial" "$prefix" "${cuda[@]}"
    run_ok "cuda (shared): tutorial (find_package) on cpu" ' 0 wrong' "$out/tutorial/tutorial" cpu
    check "cuda (shared): tutorial through pkg-config (make, nvcc) links" \
      env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C "$root/examples/tutorial" \
      O="$out/tutorial-make" CFLAGS="-O2 -Wall -Wextra -Werror" LDFLAGS="-Wl,-rpath,$prefix/lib"
    run_ok "cuda (shared): tutorial (pkg-config) on cpu" ' 0 wrong' "$out/tutorial-make/tutorial" cpu
  fi
}
if [ "${WS_PACKAGE_GPU:-0}" != only ]; then
  ci_checks
fi

# On the GPU machine (WS_PACKAGE_GPU=1, or =only for this part alone; needs
# nvcc, a CUDA GPU, the Vulkan loader and glslc; pkg-config and make if there): static and shared CUDA + Vulkan installs, the tutorial
# through both routes and the demo run on CUDA too. This is where the shared
# library's CUDA runtime (CUDA_RUNTIME_LIBRARY Shared) meets a consumer's.
if [ "${WS_PACKAGE_GPU:-0}" != 0 ]; then
  cuda=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90)
  for kind in static shared; do
    shared=OFF
    [ $kind = shared ] && shared=ON
    name=gpu-$kind
    check "$name library (CUDA + Vulkan): build and install" library $name -DWS_CUDA=ON \
      "${cuda[@]}" -DWS_VULKAN=ON -DBUILD_SHARED_LIBS=$shared
    prefix=$work/prefix-$name
    out=$work/$name
    check "$name: tutorial through find_package builds" \
      consumer_cmake "$out/tutorial" "$root/examples/tutorial" "$prefix" "${cuda[@]}"
    for b in cpu cuda vulkan; do
      run_ok "$name: tutorial (find_package) on $b" ' 0 wrong' "$out/tutorial/tutorial" $b
    done
    if command -v pkg-config >/dev/null && command -v make >/dev/null; then
      check "$name: tutorial through pkg-config (make, nvcc) builds" \
        env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C "$root/examples/tutorial" \
        O="$out/tutorial-make" CFLAGS="-O2 -Wall -Wextra -Werror" LDFLAGS="-Wl,-rpath,$prefix/lib"
      for b in cuda vulkan; do
        run_ok "$name: tutorial (pkg-config) on $b" ' 0 wrong' "$out/tutorial-make/tutorial" $b
      done
    else
      echo "package: skipped $name: tutorial through pkg-config (no pkg-config or make here)"
    fi
    check "$name: demo through find_package builds" \
      consumer_cmake "$out/demo" "$here/demo" "$prefix" "${cuda[@]}"
    run_ok "$name: demo (find_package) pipeline scenario on cuda" \
      'mismatches 0, overflow/corruption 0' "$out/demo/demo" --backend cuda --scenario pipeline
    run_ok "$name: demo on cuda, the CPU's checksum" 'same checksum' demo_checksums \
      "$out/demo/demo" cuda
  done
fi

echo "package: $failures failed ($((SECONDS - t0)) s)"
[ "$failures" -eq 0 ]
