#!/usr/bin/env bash
# Usage: tests/package/debian_package_test.sh BUILD_DIR   (inside scripts/with-pg.sh, as root)
#
# Builds the .deb with scripts/package.sh, checks its control fields,
# contents and maintainer scripts, runs lintian (no errors allowed; warnings
# are printed), then installs it into a throwaway dpkg root, runs the
# installed binary's `migrate` and `templates load` against a fresh database
# of the with-pg server (the migrations must come from the installed tree),
# and removes and purges it again.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
: "${MG_DATABASE_URL:?run inside scripts/with-pg.sh}"
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: dpkg --root installs (file owners, the user database of the root) need root"
  exit 77
fi

failures=0
step() { echo "== $*"; }
ok() { echo "ok   $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
# check DESCRIPTION COMMAND...: one expectation, the run goes on when it fails.
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

root=$(mktemp -d "$build/deb-root.XXXXXX")
db=mg_debpkg_$$
url=${MG_DATABASE_URL%/*}/$db
# sql URL STATEMENT: one value, unaligned.
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
cleanup() {
  rm -rf "$root" "$root.extract" "$root.dpkg.log"
  sql "$MG_DATABASE_URL" "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
}
trap cleanup EXIT

step "build"
deb=$(bash "$src/scripts/package.sh" "$build")
upstream=$(sed -n 's/^project(movegate VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
check "file name movegate_${upstream}-1_amd64.deb" \
  test "$(basename "$deb")" = "movegate_${upstream}-1_amd64.deb"

step "control fields"
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: movegate" test "$(field Package)" = movegate
check "Version: $upstream-1 (CMakeLists project version)" test "$(field Version)" = "$upstream-1"
check "Architecture: amd64" test "$(field Architecture)" = amd64
depends=$(field Depends)
echo "Depends: $depends"
for lib in libc6 libcaf-core0.17 libcaf-io0.17 libpqxx-6.4 libssl3 libstdc++6 \
  libsecp256k1-1 "systemd | systemd-standalone-sysusers"; do
  check "Depends names $lib" grep -qF "$lib" <<<"$depends"
done

step "contents"
contents=$(dpkg-deb -c "$deb")
has() { grep -qE " \./$1\$" <<<"$contents"; }
for path in usr/bin/movegate lib/systemd/system/movegate.service etc/movegate/movegate.env \
  usr/lib/sysusers.d/movegate.conf usr/share/doc/movegate/copyright \
  usr/share/doc/movegate/changelog.Debian.gz usr/share/doc/movegate/README.md; do
  check "ships /$path" has "$path"
done
migrations=("$src"/persistence/migrations/*.sql)
templates=("$src"/templates/*.json)
for f in "${migrations[@]}"; do
  check "ships migration $(basename "$f")" has "usr/share/movegate/migrations/$(basename "$f")"
done
for f in "${templates[@]}"; do
  check "ships template $(basename "$f")" has "usr/share/movegate/templates/$(basename "$f")"
done
check "everything is owned by root" test -z "$(awk '$2 != "root/root"' <<<"$contents")"
check "the env file is 0640 (secrets)" grep -qE '^-rw-r----- .* \./etc/movegate/movegate.env$' \
  <<<"$contents"

extract=$root.extract
mkdir -p "$extract"
dpkg-deb -R "$deb" "$extract"
check "the binary is stripped (no .symtab)" \
  bash -c "! readelf -S '$extract/usr/bin/movegate' | grep -q '\.symtab'"
unit=$extract/lib/systemd/system/movegate.service
check "unit: ExecStart is the packaged binary" grep -qx 'ExecStart=/usr/bin/movegate serve' "$unit"
check "unit: EnvironmentFile is the packaged conffile" \
  grep -qx 'EnvironmentFile=/etc/movegate/movegate.env' "$unit"
check "unit: User=movegate (the sysusers.d user)" grep -qx 'User=movegate' "$unit"
check "sysusers.d declares the movegate user" grep -qE '^u movegate ' \
  "$extract/usr/lib/sysusers.d/movegate.conf"
check "conffiles lists exactly the env file" \
  test "$(cat "$extract/DEBIAN/conffiles")" = /etc/movegate/movegate.env
for script in postinst prerm postrm; do
  check "$script is executable sh with valid syntax" \
    bash -c "test -x '$extract/DEBIAN/$script' && sh -n '$extract/DEBIAN/$script'"
done
# The systemd side only runs with systemd as PID 1, which a test machine
# (a container) lacks: checked as text.
# shellcheck disable=SC2016 # a literal $1 in the pattern
check "prerm stops movegate.service on remove (when systemd runs)" \
  grep -qE '^if \[ "\$1" = remove \] .*/run/systemd/system' "$extract/DEBIAN/prerm"
check "prerm's stop is deb-systemd-invoke (policy-rc.d respected)" \
  grep -qF 'deb-systemd-invoke stop movegate.service' "$extract/DEBIAN/prerm"
check "postinst neither enables nor starts the unit (it needs its settings first)" \
  bash -c "! grep -qE 'enable|start|restart' <(grep -v '^ *#' '$extract/DEBIAN/postinst')"
check "md5sums matches the files" bash -c "cd '$extract' && md5sum --quiet -c DEBIAN/md5sums"
rm -rf "$extract"

step "lintian"
lintian_out=$(lintian --tag-display-limit 0 "$deb" 2>&1 || true)
echo "$lintian_out"
no_errors() { ! grep -q '^E: ' <<<"$lintian_out"; }
check "lintian reports no errors" no_errors

step "install into $root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/log" "$root/etc"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
host_passwd=$(md5sum </etc/passwd)
# Chrootless: the throwaway root has no shell or tools of its own; the
# maintainer scripts take every path under DPKG_ROOT.
# Its output (a page of "dependency problems" from --force-depends) is shown
# only when it fails.
dpkg_root() {
  if ! dpkg --root="$root" --force-script-chrootless --force-depends --log=/dev/null "$@" \
    >"$root.dpkg.log" 2>&1; then
    cat "$root.dpkg.log"
    return 1
  fi
}
check "dpkg -i succeeds" dpkg_root -i "$deb"
check "dpkg records it installed" \
  bash -c "dpkg-query --admindir='$root/var/lib/dpkg' -W -f='\${Status}' movegate |
           grep -qx 'install ok installed'"
check "postinst made the movegate user in the root" grep -q '^movegate:' "$root/etc/passwd"
check "postinst made the movegate group in the root" grep -q '^movegate:' "$root/etc/group"
check "the running system's users are untouched" test "$(md5sum </etc/passwd)" = "$host_passwd"
gid=$(awk -F: '$1 == "movegate" { print $3 }' "$root/etc/group" 2>/dev/null || true)
uid=$(awk -F: '$1 == "movegate" { print $3 }' "$root/etc/passwd" 2>/dev/null || true)
check "/etc/movegate is 0750 root:movegate" test "$(stat -c '%a %u %g' "$root/etc/movegate")" = \
  "750 0 $gid"
check "/var/lib/movegate is 0750 movegate:movegate" \
  test "$(stat -c '%a %u %g' "$root/var/lib/movegate")" = "750 $uid $gid"

check "installing it again (an upgrade's path) succeeds" dpkg_root -i "$deb"
check "... and keeps one movegate user" test "$(grep -c '^movegate:' "$root/etc/passwd")" = 1

step "run the installed binary"
sql "$MG_DATABASE_URL" "CREATE DATABASE $db" >/dev/null
# An unset MG_MIGRATIONS_DIR: the installed binary must find its own tree.
migrate_out=$(env -u MG_MIGRATIONS_DIR MG_DATABASE_URL="$url" "$root/usr/bin/movegate" migrate 2>&1) ||
  fail "installed movegate migrate exits 0"
echo "$migrate_out"
check "migrate reads the installed migrations" \
  grep -qxF "migrate: migrations from $root/usr/share/movegate/migrations" <<<"$migrate_out"
applied=$(sql "$url" "SELECT count(*) FROM schema_migrations" 2>/dev/null || echo 0)
check "every shipped migration is applied ($applied)" \
  test "$applied" = "${#migrations[@]}"
templates_out=$(MG_DATABASE_URL="$url" "$root/usr/bin/movegate" templates load \
  "$root/usr/share/movegate/templates" 2>&1) || fail "installed movegate templates load exits 0"
echo "$templates_out"
check "every shipped template loads" \
  test "$(sql "$url" "SELECT count(*) FROM templates" 2>/dev/null || echo 0)" = \
  "${#templates[@]}"

step "remove, then purge"
echo "MG_DATABASE_URL=postgresql://edited" >>"$root/etc/movegate/movegate.env"
check "dpkg -r succeeds" dpkg_root -r movegate
check "remove takes the binary" test ! -e "$root/usr/bin/movegate"
check "remove keeps the edited conffile" grep -q edited "$root/etc/movegate/movegate.env"
check "remove keeps the state directory" test -d "$root/var/lib/movegate"
check "dpkg -P succeeds" dpkg_root -P movegate
check "purge takes the conffile and /etc/movegate" test ! -e "$root/etc/movegate"
check "purge takes the state directory" test ! -e "$root/var/lib/movegate"
check "purge drops the statoverride" \
  test -z "$(dpkg-statoverride --admindir "$root/var/lib/dpkg" --list 2>/dev/null)"

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
