#!/usr/bin/env bash
# The C++ sources' one layout: .clang-format (Google's style at 120
# columns, include blocks regrouped: C and library headers, C++ headers,
# the project's own), applied by clang-format to every tracked .cc and .h.
#   scripts/format.sh           formats them in place
#   scripts/format.sh --check   changes nothing; lists each file that
#                               differs and fails (CTest source_format)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ ${1:-} == --check ]]; then
  # Each difference is "FILE:LINE:COL: error: code should be clang-formatted".
  report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1) && exit 0
  echo "$report" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u |
    sed 's/^/not in the .clang-format layout (scripts\/format.sh fixes it): /' >&2
  exit 1
fi
clang-format -i "${files[@]}"
