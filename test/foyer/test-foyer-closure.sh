#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The closure check fails the build when the tree lacks a program one of the image's units runs,
# naming the unit and the file. From a copy of the tree, each Exec*= program of the units of a
# good image is removed in turn (all of them, not one chosen case), and the build must fail with
# "Unit U: ExecX= PROGRAM" for a unit U that runs it. Programs a unit runs with the '-' prefix, or
# guards with its own condition, are left out: systemd copes with those at boot.
# The tree is a hard-linked copy of the build host's /usr parts an image needs, or, with TREE, a
# copy of that tree (made by mktree.sh), whose kernel is the one under TREE/usr/lib/modules.
# Usage: test-foyer-closure.sh FOYER GENERATOR-DIR UNIT-DIR [TREE]
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
src=${4:-}
require_generator
make_tmp test-foyer-closure

tree=$tmp/tree
if [ -n "$src" ]; then
        [ -d "$src/usr/lib/modules" ] || fail "$src is not a tree with kernels"
        kver=$(find "$src/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tail -n1)
        mkdir "$tree"
        cp -al "$src/." "$tree/" 2>/dev/null || cp -a "$src/." "$tree/"
else
        require_kernel
        mkdir -p "$tree/usr/lib/modules" "$tree/etc"
        for d in bin sbin lib64 lib/x86_64-linux-gnu lib/systemd lib/udev lib/os-release lib/modprobe.d lib/tmpfiles.d; do
                [ -e "/usr/$d" ] || continue
                mkdir -p "$tree/usr/$(dirname "$d")"
                cp -al "/usr/$d" "$tree/usr/$d" 2>/dev/null || cp -a "/usr/$d" "$tree/usr/$d"
        done
        cp -al "/usr/lib/modules/$kver" "$tree/usr/lib/modules/" 2>/dev/null || cp -a "/usr/lib/modules/$kver" "$tree/usr/lib/modules/"
        for l in bin sbin lib64; do ln -s "usr/$l" "$tree/$l"; done
        ln -s usr/lib "$tree/lib"
        cp -a /etc/ld.so.conf /etc/ld.so.conf.d "$tree/etc/"
fi

build() { "$foyer" build --root "$tree" --kver "$kver" --compress none -o "$1" 2>"$tmp/err"; }

echo "== the whole tree builds"
build "$tmp/good.img" || { cat "$tmp/err"; fail "build of the complete tree"; }
grep -q 'Closure check' "$tmp/err" && fail "closure check complained about the complete tree"

# The image's units and drop-ins, unpacked.
mkdir "$tmp/img"
(cd "$tmp/img" && cpio -id --quiet < "$tmp/good.img")
units=$tmp/img/usr/lib/systemd/system

# "UNIT PROGRAM" for every Exec*= line of every unit of the image (with its drop-ins).
: > "$tmp/pairs"
for f in "$units"/*; do
        [ -f "$f" ] || continue
        u=$(basename "$f")
        guards=$(cat "$f" "$units/$u.d/"*.conf 2>/dev/null |
                 sed -n 's/^\(ConditionPathExists\|ConditionFileIsExecutable\)=\(\/.*\)$/\2/p')
        # An empty assignment resets the key (debug-shell.service.d replaces ExecStart=/bin/bash).
        cat "$f" "$units/$u.d/"*.conf 2>/dev/null |
        awk -F= '/^Exec[A-Za-z]*=/ { k = $1; v = substr($0, length(k) + 2); sub(/^[ \t]+/, "", v)
                                     if (v == "") { n[k] = 0 } else { l[k, ++n[k]] = v } }
                 END { for (k in n) for (i = 1; i <= n[k]; i++) print l[k, i] }' | while read -r cmd _; do
                case $cmd in
                        ''|*%*) continue ;;
                        *-*) prefix=${cmd%%[!-@:+!|]*} ;;
                        *) prefix= ;;
                esac
                prog=${cmd#"$prefix"}
                prog=${prog#\"}; prog=${prog%\"}
                [[ $prefix == *-* ]] && continue
                grep -qxF -- "$prog" <<<"$guards" && continue
                if [[ $prog != /* ]]; then
                        for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin; do
                                if [ -e "$tmp/img$d/$prog" ] || [ -L "$tmp/img$d/$prog" ]; then prog=$d/$prog; break; fi
                        done
                fi
                echo "$u $prog"
        done >> "$tmp/pairs"
done
sort -u -o "$tmp/pairs" "$tmp/pairs"
[ -s "$tmp/pairs" ] || fail "no Exec*= programs found in the image's units"

# Merged-/usr form, as the image and the error messages spell it.
merged() { sed -E 's#^/(bin|sbin|lib|lib64)/#/usr/\1/#' <<<"$1"; }

checked=0
while read -r prog; do
        m=$(merged "$prog")
        # Remove it from the tree as the tree spells it (the /usr path of a merged tree).
        victim=$tree$m
        if [ ! -e "$victim" ] && [ ! -L "$victim" ]; then
                echo "   $m: not in the tree (a foyer program), skipped"
                continue
        fi
        mv "$victim" "$victim.foyer-test-removed"
        echo "== without $m"
        if build "$tmp/bad.img"; then
                mv "$victim.foyer-test-removed" "$victim"
                fail "build succeeded without $m"
        fi
        mv "$victim.foyer-test-removed" "$victim"
        named=
        while read -r u; do
                if grep -F "Unit $u: " "$tmp/err" | grep -qF " $m "; then
                        named=$u
                fi
        done < <(awk -v p="$prog" '$2 == p {print $1}' "$tmp/pairs")
        [ -n "$named" ] || { cat "$tmp/err"; fail "the error does not name a unit that runs $m with the file"; }
        grep -F "Unit $named: " "$tmp/err" | grep -F " $m " | head -n1
        checked=$((checked + 1))
done < <(awk '{print $2}' "$tmp/pairs" | sort -u)
[ "$checked" -ge 5 ] || fail "only $checked programs checked"
[ ! -e "$tmp/bad.img" ] || fail "a failed build left its output"

if compgen -G "$tree/usr/lib/*/systemd/libsystemd-core-2[5-9][5-9].so" >/dev/null ||
   compgen -G "$tree/usr/lib/systemd/libsystemd-core-2[5-9][5-9].so" >/dev/null; then
        echo "== without systemd-executor (systemd >= 255)"
        x=$tree/usr/lib/systemd/systemd-executor
        [ -e "$x" ] || fail "the tree's systemd is 255 or later but has no systemd-executor"
        mv "$x" "$x.foyer-test-removed"
        if build "$tmp/bad.img"; then
                mv "$x.foyer-test-removed" "$x"
                fail "build succeeded without systemd-executor"
        fi
        mv "$x.foyer-test-removed" "$x"
        grep 'systemd-executor is not in the image' "$tmp/err" || { cat "$tmp/err"; fail "systemd-executor not named"; }
fi

echo "== a udev rule's program is named with file:line"
# The stock rules' programs are required by their planners already (dmsetup, lvm); a rule of our own
# in the image names one the tree lacks on its third line, a builtin, and a relative program the
# tree has in /usr/lib/udev.
cat > "$tmp/99-test.rules" <<'RULES'
# foyer test

ACTION=="add", SUBSYSTEM=="block", IMPORT{builtin}="blkid", PROGRAM="scsi_id -u -g $devnode", RUN+="/usr/bin/foyer-test-missing %k"
RULES
out=$tmp/bad.img
if "$foyer" build --root "$tree" --kver "$kver" --compress none -o "$out" \
        --add-file "$tmp/99-test.rules:/usr/lib/udev/rules.d/99-test.rules" 2>"$tmp/err"; then
        fail "build succeeded with a rule that runs a missing program"
fi
grep -F '/usr/lib/udev/rules.d/99-test.rules:3: RUN program /usr/bin/foyer-test-missing is not in the image' "$tmp/err" ||
        { cat "$tmp/err"; fail "the rule's file:line and program not named"; }
[ "$(grep -c 'is not in the image' "$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "a builtin or a present program named"; }
[ ! -e "$out" ] || fail "a failed build left its output"

echo "== an optional feature's program is a warning naming the feature"
if [ -e "$tree/usr/lib/udev/cdrom_id" ]; then
        mv "$tree/usr/lib/udev/cdrom_id" "$tree/usr/lib/udev/cdrom_id.foyer-test-removed"
        build "$tmp/opt.img" || { mv "$tree/usr/lib/udev/cdrom_id.foyer-test-removed" "$tree/usr/lib/udev/cdrom_id"; cat "$tmp/err"; fail "build failed without cdrom_id"; }
        mv "$tree/usr/lib/udev/cdrom_id.foyer-test-removed" "$tree/usr/lib/udev/cdrom_id"
        grep -q 'cdrom_id.*CD-ROM media detection' "$tmp/err" || { cat "$tmp/err"; fail "no warning naming the feature"; }
fi
echo "ok: $checked programs"
