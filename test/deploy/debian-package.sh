#!/usr/bin/env bash
# The Debian package as scripts/package.sh builds it from this build tree:
# its control fields and dependencies, every file it must carry, the units
# naming the installed binaries, man pages that show every option --help
# shows (both made of one option table per binary), the configuration page
# (docs/operate/configuration.md) naming exactly the daemon's flags, and
# lintian clean but for the overrides the package carries, each with its
# reason (deploy/debian/lintian-overrides).
#   debian-package.sh <source dir> <build dir> <version>
set -euo pipefail
source_dir=$1 build=$2 version=$3
fail() { echo "debian-package: $*" >&2; exit 1; }
deb=$("$source_dir/scripts/package.sh" "$build")
[[ -f $deb ]] || fail "scripts/package.sh printed no package: '$deb'"
echo "package: $deb ($(du -k "$deb" | cut -f1) KiB)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == nbdkeeper ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version), the project's is $version"
depends=$(field Depends)
echo "Depends: $depends"
# Named by hand (what it runs) and by dpkg-shlibdeps (what it links).
for want in rbd-nbd e2fsprogs mount kmod librbd1 librados2 libuv1; do
  [[ ",$depends" =~ [,\ ]$want[\ ,\(]|[,\ ]$want$ ]] || fail "Depends lacks $want: $depends"
done

dpkg-deb -x "$deb" "$dir/root"
dpkg-deb -e "$deb" "$dir/control"
for f in usr/bin/nbdkeeperd usr/bin/nbdkeeperctl usr/share/man/man8/nbdkeeperd.8.gz \
  usr/share/man/man8/nbdkeeperctl.8.gz lib/systemd/system/nbdkeeperd.service \
  lib/systemd/system/nbdkeeper-volumes.service usr/lib/modules-load.d/nbdkeeper.conf etc/nbdkeeper/config.json \
  usr/share/doc/nbdkeeper/copyright usr/share/doc/nbdkeeper/changelog.gz \
  usr/share/lintian/overrides/nbdkeeper; do
  [[ -f $dir/root/$f ]] || fail "no /$f in the package"
done
grep -qx /etc/nbdkeeper/config.json "$dir/control/conffiles" || fail "/etc/nbdkeeper/config.json is no conffile"
for unit in nbdkeeperd nbdkeeper-volumes; do
  text=$(cat "$dir/root/lib/systemd/system/$unit.service")
  [[ $text != */usr/local/* ]] || fail "$unit.service still names /usr/local"
done
grep -qx 'ExecStart=/usr/bin/nbdkeeperd --config /etc/nbdkeeper/config.json' \
  "$dir/root/lib/systemd/system/nbdkeeperd.service" || fail "nbdkeeperd.service does not start /usr/bin/nbdkeeperd"
# The packaged binary reads the packaged configuration (it creates nothing
# before --help; a bad file fails before that).
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/root/etc/nbdkeeper/config.json" ||
  fail "the default configuration is no JSON"

# Every option of --help in the man page (help2man drops what it cannot
# parse; a page built before the option would lack it).
flags() { grep -oE -- '(^|[ ,])--[a-z][a-z0-9-]*' | sed 's/^[ ,]*//' | sort -u; }
for binary in nbdkeeperd nbdkeeperctl; do
  page=$(zcat "$dir/root/usr/share/man/man8/$binary.8.gz" | sed 's/\\-/-/g; s/\\f[BIRP]//g; s/\\fI\\,//g; s/\\\/\\f[BIRP]//g')
  [[ $page == *".TH ${binary^^} \"8\""* ]] || fail "$binary.8: no .TH ${binary^^} 8 header"
  [[ $page == *"$binary $version"* ]] || fail "$binary.8 does not name version $version"
  n=0
  while read -r flag; do
    grep -qF -- "$flag" <<<"$page" || fail "$binary.8 lacks $flag, which $binary --help shows"
    n=$((n + 1))
  done < <("$dir/root/usr/bin/$binary" --help | flags)
  ((n >= 10)) || fail "$binary --help shows only $n options"
  echo "$binary.8: all $n options of --help"
done
# The configuration page's table: the daemon's flags, no more, no fewer.
help_flags=$("$dir/root/usr/bin/nbdkeeperd" --help | grep -v 'the former name of' | grep -oE '^  --[a-z0-9-]+' |
  sed 's/^ *//' | grep -vxE -- '--(config|help|version)' | sort -u)
page_flags=$(cd "$source_dir" && grep -oE '^\| `--[a-z0-9-]+`' docs/operate/configuration.md | sed 's/^| `//; s/`$//' | sort -u)
diff <(echo "$help_flags") <(echo "$page_flags") >"$dir/flags.diff" ||
  fail "docs/operate/configuration.md's table and nbdkeeperd --help differ (< --help only, > the page only):
$(cat "$dir/flags.diff")"

# lintian: errors and warnings fail, each override is in the package with
# its reason.
out=$(lintian --fail-on error,warning --display-info "$deb" 2>&1) || fail "lintian:
$out"
echo "lintian: ${out:-clean}"
