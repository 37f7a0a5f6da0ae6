#!/usr/bin/env bash
# Prints the tree's folder-to-folder include counts: one line per arrow,
# "FROM -> TO  N", for every #include "DIR/..." of a tracked .h/.cc file
# outside test/ whose target lies in another folder. DEPTH (default 1)
# is how many path components name a folder: 1 for the top-level rooms,
# 2 to see sub-rooms (csi/node, csi/controller, csi/heal). With --lines,
# the files and lines of code per folder instead.
#   scripts/room-arrows.sh [--lines] [DEPTH]
set -euo pipefail
cd "$(dirname "$0")/.."
lines=false
if [[ "${1:-}" == "--lines" ]]; then
  lines=true
  shift
fi
depth=${1:-1}
folder() { cut -d/ -f1-"$depth" <<<"$(dirname "$1")"; }

mapfile -t files < <(git ls-files '*.h' '*.cc' | grep -v '^test/')
if $lines; then
  for f in "${files[@]}"; do printf '%s %s\n' "$(folder "$f")" "$(wc -l <"$f")"; done |
    awk '{files[$1]++; n[$1] += $2} END {for (d in n) printf "%-16s %4d files %6d lines\n", d, files[d], n[d]}' | sort
  exit 0
fi
for f in "${files[@]}"; do
  from=$(folder "$f")
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
    [[ "$inc" == */* ]] || continue
    to=$(folder "$inc")
    if [[ -d "$to" && "$to" != "$from" ]]; then printf '%s -> %s\n' "$from" "$to"; fi
  done
done | sort | uniq -c | awk '{printf "%-16s -> %-16s %4d\n", $2, $4, $1}'
