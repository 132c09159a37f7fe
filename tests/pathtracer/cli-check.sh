#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The path tracer CLI's failure classes (docs/pathtracer.md "Tests"): each
# case runs wavesched-pathtracer with one bad input and checks the exit
# status and that the message names what was wrong.
#
#   cli-check.sh PATHTRACER CASE
#
# CASE: numbers | sizes | outputs | scene-missing | scene-corrupt |
#       scene-unsupported | scene-description | version-threads
set -u
pt=$1
case_=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect STATUS REGEX ARGS...: runs the CLI, checks its status and output
expect() {
  local want=$1 re=$2
  shift 2
  local out rc
  out=$("$pt" --no-progress --output - "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE -- "$re" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (want $want), output:"
    sed 's/^/    /' <<<"$out" | head -20
    echo "    (wanted /$re/)"
    fail=1
  else
    echo "ok   $* -> exit $rc: $(grep -E -- "$re" <<<"$out" | head -1)"
  fi
}

case $case_ in
numbers) # strict parsing: no letters, signs, overflow or empty values
  expect 2 "--spp: expected an integer" --spp abc
  expect 2 "--spp: expected an integer" --spp -1
  expect 2 "--spp: expected an integer" --spp 0
  expect 2 "--width: expected an integer" --width 99999999999
  expect 2 "--height: expected an integer" --height 12x
  expect 2 "--seed: expected an integer" --seed " 7"
  expect 2 "--pool: expected an integer" --pool +5
  expect 2 "--camera-fov: expected a number" --camera-fov nan
  expect 2 "--camera-fov: expected a number" --camera-fov 500
  expect 2 "--camera-eye: expected X,Y,Z" --camera-eye 1,2
  expect 2 "--camera-eye: expected a number" --camera-eye 1,2,inf
  expect 2 "--threads: expected an integer" --threads 0
  expect 1 "camera: eye \(1, 1, 1\) and target \(1, 1, 1\) must differ" --camera-eye 1,1,1 \
    --camera-target 1,1,1
  expect 2 "--threads: 4000000000 is above the limit of 4096" --threads 4000000000
  ;;
sizes) # sizes are checked in 64-bit before anything is allocated: under a
  # 1 GiB address-space cap a 100000 x 100000 image (120 GB) must fail with
  # the limit named, not run out of memory
  (
    # a sanitizer build reserves terabytes of shadow address space and cannot
    # start under the cap: there only the messages and statuses are checked
    if (ulimit -v 1048576 && "$pt" --version >/dev/null 2>&1); then
      ulimit -v 1048576
    else
      echo "note: the binary does not start under a 1 GiB address-space cap (sanitizer build?): no cap"
    fi
    expect 2 "--width x --height: 100000x100000 = 10000000000 pixels is above the limit of 67108864" \
      --width 100000 --height 100000
    expect 2 "--width x --height: 65536x65536 .* above the limit" --width 65536 --height 65536
    expect 2 "--pool 4000000000 is above the limit of 16777216" --pool 4000000000
    expect 2 "--shadow-capacity 4000000000 is above the limit" --shadow-capacity 4000000000
    expect 2 "--max-depth 65 is outside \[1, 64\]" --max-depth 65
    expect 2 "--batch-spp 64 with --max-depth 6: .* above the limit of 4294967296 bytes" \
      --width 4096 --height 4096 --spp 4096 --batch-spp 64
    expect 2 "--batch-spp 4096: a batch of .* paths is above the limit" \
      --width 8192 --height 8192 --spp 4096 --batch-spp 4096
    exit $fail
  ) || fail=1
  ;;
outputs) # an unwritable output fails before the render: the spp below would
  # take hours on the CPU, the check a moment (ctest's timeout catches a
  # render that starts anyway)
  expect 1 "cannot write image /nonexistent-dir/x.png: .*checked before rendering" \
    --spp 100000000 --output /nonexistent-dir/x.png
  expect 1 "cannot write image /nonexistent-dir/x.exr" --spp 100000000 --output /nonexistent-dir/x.exr
  expect 1 "cannot write statistics /nonexistent-dir/s.json" --spp 100000000 \
    --stats-json /nonexistent-dir/s.json
  # and the formats: PNG, PFM (header, size) and EXR (magic) from one render
  out=$("$pt" --no-progress --width 8 --height 4 --spp 1 --output "$tmp/a.png" --output "$tmp/a.pfm" \
    --output "$tmp/a.exr" 2>&1)
  if [ "$(head -c 8 "$tmp/a.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    [ "$(head -c 12 "$tmp/a.pfm" | od -An -c | tr -d ' \n')" = 'PF\n84\n-1.0\n' ] &&
    [ "$(stat -c %s "$tmp/a.pfm")" = $((12 + 8 * 4 * 12)) ] &&
    [ "$(head -c 4 "$tmp/a.exr" | od -An -tx1 | tr -d ' \n')" = 762f3101 ]; then
    echo "ok   PNG, PFM (8x4, $(stat -c %s "$tmp/a.pfm") bytes) and EXR written"
  else
    echo "FAIL: PNG/PFM/EXR outputs:"
    echo "$out" | tail -5
    ls -la "$tmp"
    fail=1
  fi
  ;;
scene-missing)
  expect 1 "--scene: $tmp/none.glb: cannot open: No such file" --scene "$tmp/none.glb"
  expect 1 "--scene: $tmp/none.scene: cannot open" --scene "$tmp/none.scene"
  ;;
scene-corrupt)
  head -c 4096 /dev/urandom >"$tmp/bad.glb"
  printf 'glTF\002\000\000\000\377\377\000\000garbage' >"$tmp/trunc.glb"
  expect 1 "--scene: $tmp/bad.glb: cannot read the scene: " --scene "$tmp/bad.glb"
  expect 1 "--scene: $tmp/trunc.glb: cannot read the scene: " --scene "$tmp/trunc.glb"
  ;;
scene-unsupported) # points and lines only: nothing the path tracer can render
  printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\nl 2 3\np 1\n' >"$tmp/lines.obj"
  expect 1 "--scene: $tmp/lines.obj: no triangles to render \(.*point or line primitives: unsupported\)" \
    --scene "$tmp/lines.obj"
  ;;
scene-description)
  printf 'box\nteapot 1 2 3\n' >"$tmp/a.scene"
  expect 1 "a.scene:2: unknown command 'teapot'" --scene "$tmp/a.scene"
  printf 'box\ncamera eye 0 1 x target 0 0 0\n' >"$tmp/b.scene"
  expect 1 "b.scene:2: camera eye: 'x' is not a finite number" --scene "$tmp/b.scene"
  printf 'box\nmesh lines.obj fit 1 material wood\n' >"$tmp/c.scene"
  expect 1 "c.scene:2: material: unknown kind 'wood'" --scene "$tmp/c.scene"
  printf 'box\nmesh missing.obj\n' >"$tmp/d.scene"
  expect 1 "d.scene:2: $tmp/missing.obj: cannot open" --scene "$tmp/d.scene"
  printf '# nothing\n' >"$tmp/e.scene"
  expect 1 "e.scene: the scene places nothing" --scene "$tmp/e.scene"
  ;;
version-threads)
  expect 0 "^wavesched-pathtracer [0-9]+\.[0-9]+\.[0-9]+$" --version
  expect 0 "on cpu \(1 thread\)" --threads 1 --width 8 --height 8 --spp 1
  ;;
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
exit $fail
