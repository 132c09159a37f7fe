#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/errors.md has one table row per ws_status code, with the code's value
# as include/wavesched/status.h defines it ("| `WS_NAME` (value) |"): a code
# added without its row, or renumbered, fails here.
# Usage: errors_doc.sh STATUS_H ERRORS_MD
set -eu
status_h=$1
errors_md=$2
codes=$(sed -n 's/^ *X(\([A-Z0-9_]*\), *\(-\{0,1\}[0-9]*\),.*/\1 \2/p' "$status_h")
[ -n "$codes" ] || { echo "errors_doc: no X(NAME, value, ...) lines in $status_h"; exit 1; }
n=0
missing=0
echo "$codes" | {
  while read -r name value; do
    n=$((n + 1))
    if ! grep -Fq "| \`WS_$name\` ($value) |" "$errors_md"; then
      echo "errors_doc: $errors_md has no row '| \`WS_$name\` ($value) |'"
      missing=$((missing + 1))
    fi
  done
  echo "errors_doc: $n codes, $missing without their row"
  [ "$missing" -eq 0 ]
}
