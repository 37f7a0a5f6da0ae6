#!/usr/bin/env bash
# npm-ci.sh SOURCE_DIR DEST: installs the node modules SOURCE_DIR's
# package-lock.json pins into DEST/node_modules, again only when it changes.
set -euo pipefail
src=$1 dest=$2
mkdir -p "$dest"
if cmp -s "$src/package-lock.json" "$dest/installed.lock" && [[ -d $dest/node_modules ]]; then
  exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
cp "$src/package-lock.json" "$dest/installed.lock"
