#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What `meson install` puts where: every path of docs/foyer.md's "Installed files" table is
# installed, the generators only under /usr/lib/foyer/generators (in no systemd generator
# directory, where the host's own boot would run them), the units as built (build/units), and the
# installed foyer finds its generators there by default. Then an image built from the installed
# files is byte-identical to one built from the build tree, with the generators in the image's
# /usr/lib/systemd/system-generators.
# Usage: test-install.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR SOURCE-ROOT BUILD-ROOT WITH-LOWDOWN
# shellcheck source=test/foyer/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
helper_dir=$4 src=$5 build=$6 with_lowdown=$7
make_tmp test-install
dest=$tmp/dest

echo "== meson install --destdir"
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "meson install"; }
find "$dest" -mindepth 1 | sed "s|^$dest||" | sort >"$tmp/installed"
[ -s "$tmp/installed" ] || fail "meson install installed nothing"

echo "== the paths docs/foyer.md lists"
# The first cell of each row of the "Installed files" table: one absolute path or glob.
# shellcheck disable=SC2016 # the backquotes are markdown's
documented=$(sed -n '/^## Installed files/,/^## /p' "$src/docs/foyer.md" | sed -n 's/^| `\(\/[^`]*\)` |.*/\1/p')
[ "$(wc -l <<<"$documented")" -ge 7 ] || fail "docs/foyer.md's Installed files table has too few rows: $documented"
while read -r p; do
        if [[ $p == */foyer-kernel-command-line.7 ]] && ! $with_lowdown; then
                echo "lowdown not found at setup: $p not checked"
                continue
        fi
        # shellcheck disable=SC2086 # $p may be a glob
        compgen -G "$dest"$p >/dev/null || fail "documented $p is not installed"
        echo "installed: $p"
done <<<"$documented"

echo "== the generators: in foyer's directory, in no generator directory"
grep -E '/(system|user)-generators(/|$)|/generators/.*-asan$' "$tmp/installed" &&
        fail "installed into a systemd generator directory, or a sanitizer build installed"
built=$(cd "$FOYER_GENERATOR_DIR" && find . -maxdepth 1 -name 'foyer-*-generator' -type f -perm -u+x -printf '%f\n' | sort)
[ "$(wc -l <<<"$built")" -ge 5 ] || fail "fewer than 5 generators built in $FOYER_GENERATOR_DIR: $built"
installed=$(grep -o '/[^/]*-generator$' "$tmp/installed" | tr -d / | sort)
[ "$installed" = "$built" ] || fail "installed generators '${installed//$'\n'/ }', built '${built//$'\n'/ }'"
for g in $built; do
        [ -x "$dest/usr/lib/foyer/generators/$g" ] || fail "$g is not in /usr/lib/foyer/generators"
done
grep -q "(default: /usr/lib/foyer/generators)" <("$dest/usr/bin/foyer" preview --help) ||
        fail "the installed foyer does not take its generators from /usr/lib/foyer/generators by default"

echo "== the units, as built"
diff -r "$FOYER_UNIT_DIR" "$dest/usr/lib/foyer/units" || fail "the installed units differ from $FOYER_UNIT_DIR"

require_kernel
echo "== an image from the installed files is the build tree's"
FOYER_GENERATOR_DIR=$dest/usr/lib/foyer/generators FOYER_UNIT_DIR=$dest/usr/lib/foyer/units \
        FOYER_HELPER_DIR=$dest/usr/lib/foyer "$dest/usr/bin/foyer" build --kver "$kver" -o "$tmp/installed.img" \
        >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build from the installed files"; }
FOYER_HELPER_DIR=$helper_dir "$foyer" build --kver "$kver" -o "$tmp/built.img" >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/build.log"; fail "foyer build from the build tree"; }
cmp "$tmp/installed.img" "$tmp/built.img" || fail "the installed files make another image than the build tree"
"$foyer" ls "$tmp/installed.img" >"$tmp/ls"
for g in $built; do
        grep -q "^-rwx.* usr/lib/systemd/system-generators/$g\$" "$tmp/ls" ||
                fail "$g is not in the image's /usr/lib/systemd/system-generators"
done
grep -q ' usr/lib/foyer/generators' "$tmp/ls" && fail "the image has /usr/lib/foyer/generators"
echo OK
