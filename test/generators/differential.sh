#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# differential.sh VERSION GENERATOR_DIR [SUFFIX]
#
# The differential test of one systemd version: the Debian suite's own systemd-fstab-generator,
# systemd-cryptsetup-generator, systemd-debug-generator and systemd-gpt-auto-generator against
# foyer's generators (GENERATOR_DIR/foyer-*-generator, SUFFIX e.g. "-asan" for the sanitizer
# build) on every golden case of test/generators/{root,crypt,debug,gpt-auto}, with the same
# environment (lib.sh's run_case; gpt-auto.sh's faked EFI chroot for gpt-auto). foyer's run with
# the version file the builder would record for that suite's tree (VERSION=, LIBEXECDIR= from the
# tree's systemd-fsck@.service, CRYPTSETUP= when the tree has /usr/bin/systemd-cryptsetup; the
# rules of src/foyer/plan-systemd.c), so what is tested is "foyer writes what this version writes".
#
#   252  Debian 12 (bookworm): the host's generators when the host's systemd is 252 (the project's
#        build machine), else those of a bookworm tree made by test/foyer/mktree.sh.
#   257  Debian 13 (trixie): the generators of the trixie tree made (once, cached in
#        $FOYER_TREE_CACHE, default /var/cache/foyer-trees) by test/foyer/mktree.sh, run with the
#        tree's own dynamic loader and libraries.
#   262  Debian unstable (sid): the same, with the sid tree of test/foyer/mktree.sh (tools/test
#        starts making it in the background at its start).
#
# A case may differ only when it is listed, with its reason, in the version's list of differences:
# for 252 the known-differences tables of docs/kernel-command-line.md, for 257 and 262 the tables
# "differences-VERSION KIND" of docs/systemd-VERSION.md. A listed case whose outputs are identical fails
# (the list must stay true), unless it is marked "(varies)"; so does a listed name that is no case.
# The NN-foyer-* debug cases (rd.break=, rd.shell, ...: no systemd counterpart) are not compared.
# A missing tree, reference generator or foyer generator, or a reference of another version, fails
# the test: it is never skipped. gpt-auto needs root (a private mount namespace and chroot).
set -u

version=${1:?usage: differential.sh VERSION GENERATOR_DIR [SUFFIX]}
gendir=$(realpath "${2:?usage: differential.sh VERSION GENERATOR_DIR [SUFFIX]}")
suffix=${3:-}
here=$(dirname "$(realpath "$0")")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
fake_fsck_bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$fakebin"' EXIT
total_failed=0

fail() {
        echo "FAIL: $*"
        total_failed=$((total_failed + 1))
}

# The version of the systemd in tree $1: the NNN of its libsystemd-shared-NNN.so (as plan-systemd.c).
tree_version() {
        local lib
        for lib in "$1"/usr/lib/systemd/libsystemd-shared-*.so "$1"/usr/lib/*/systemd/libsystemd-shared-*.so \
                   "$1"/lib/systemd/libsystemd-shared-*.so; do
                [[ -e $lib ]] || continue
                lib=${lib##*/libsystemd-shared-}
                echo "${lib%%[!0-9]*}"
                return 0
        done
}

# The reference tree of $version (prints its path; "/" for the host).
reference_tree() {
        local suite cache=${FOYER_TREE_CACHE:-/var/cache/foyer-trees}
        case $version in
                252) suite=bookworm ;;
                257) suite=trixie ;;
                262) suite=sid ;;
                *) echo "differential: no Debian suite is known for systemd $version" >&2; return 1 ;;
        esac
        if [[ $suite == bookworm && $(tree_version /) == 252 ]]; then
                echo /
                return 0
        fi
        "$here/../foyer/mktree.sh" "$suite" "$cache"
}

if ! tree=$(reference_tree); then
        fail "no $version tree (mktree.sh failed, see above)"
        exit 1
fi
tree=$(realpath "$tree")
tree_v=$(tree_version "$tree")
echo "reference: systemd ${tree_v:-?} in $tree"
if [[ $tree_v != "$version" ]]; then
        fail "the tree $tree has systemd ${tree_v:-(none)}, not $version"
        exit 1
fi

# Wrappers named as the generators they run (normalise() and the trees' headers go by the name):
# systemd's from the tree, with its own loader and libraries unless the tree is the host; foyer's
# with the version file.
bin=$tmp/bin
mkdir -p "$bin"
libexec=$(sed -n 's|^ExecStart=\(/[^ ]*\)/systemd-fsck .*|\1|p' "$tree"/{usr/,}lib/systemd/system/systemd-fsck@.service 2>/dev/null | head -n1)
{
        echo "VERSION=$version"
        echo "LIBEXECDIR=${libexec:-/usr/lib/systemd}"
        [[ -f $tree/usr/bin/systemd-cryptsetup && ! -L $tree/usr/bin/systemd-cryptsetup ]] &&
                echo "CRYPTSETUP=/usr/bin/systemd-cryptsetup"
} >"$bin/systemd-version"
sed 's/^/version file: /' "$bin/systemd-version"
loader=$tree/lib64/ld-linux-x86-64.so.2
for g in systemd-fstab-generator systemd-cryptsetup-generator systemd-debug-generator systemd-gpt-auto-generator; do
        ref=$tree/usr/lib/systemd/system-generators/$g
        [[ -x $ref ]] || ref=$tree/lib/systemd/system-generators/$g
        if [[ ! -x $ref ]]; then
                fail "the reference $g is missing from $tree"
                continue
        fi
        if [[ $tree == / ]]; then
                printf '#!/bin/sh\nexec %q "$@"\n' "$ref" >"$bin/$g"
        else
                printf '#!/bin/sh\nexec %q --library-path %q --argv0 %q %q "$@"\n' "$loader" \
                        "$tree/usr/lib/x86_64-linux-gnu/systemd:$tree/usr/lib/x86_64-linux-gnu:$tree/lib/x86_64-linux-gnu" \
                        "$g" "$ref" >"$bin/$g"
        fi
        chmod +x "$bin/$g"
done
for g in root crypt debug gpt-auto; do
        f=$gendir/foyer-$g-generator$suffix
        if [[ ! -x $f ]]; then
                fail "$f is missing"
                continue
        fi
        printf '#!/bin/sh\nFOYER_SYSTEMD_VERSION_FILE=%q exec %q "$@"\n' "$bin/systemd-version" "$f" >"$bin/foyer-$g-generator$suffix"
        chmod +x "$bin/foyer-$g-generator$suffix"
done
((total_failed == 0)) || exit 1

# The cases of KIND $1 listed as differences of $version (with "(varies)" when $2 is "varies").
listed() {
        local kind=$1
        if [[ $version == 252 ]]; then
                [[ $kind == gpt-auto ]] && return 0
                [[ $kind == root ]] && kind=
                if [[ ${2:-} == varies ]]; then varying_differences "$kind"; else known_differences "$kind"; fi
        else
                version_differences "$version" "$kind" "${2:-}"
        fi
}

# Compares systemd's generator $2 and foyer's $3 on every case of KIND $1: both run on every case
# (into $tmp/KIND/systemd/ and $tmp/KIND/foyer/, each side normalised at once), one comparison
# names the cases whose trees differ, and only those (and those whose exit statuses differ) get the
# detailed diff_outputs.
compare_kind() {
        local kind=$1 systemd=$2 foyer=$3 known varies c d same=0 listed_n=0 failed=0 skipped=0
        local -A rs rf suspect is_known is_varies
        local -a run=()
        casedir=$here/$kind
        known=$(listed "$kind")
        varies=$(listed "$kind" varies)
        for c in $known; do
                is_known[$c]=1
                [[ -f $casedir/$c.cmdline ]] || { echo "FAIL $kind/$c: listed, but there is no such case"; failed=$((failed + 1)); }
        done
        for c in $varies; do is_varies[$c]=1; done
        local out=$tmp/$kind
        mkdir -p "$out/systemd" "$out/foyer"
        for c in "$casedir"/*.cmdline; do
                c=${c##*/} c=${c%.cmdline}
                if [[ $kind == debug && $c == [0-9]*-foyer-* ]]; then
                        skipped=$((skipped + 1))
                        continue
                fi
                run_case "$systemd" "$casedir/$c" "$out/systemd/$c"
                rs[$c]=$case_rc
                run_case "$foyer" "$casedir/$c" "$out/foyer/$c"
                rf[$c]=$case_rc
                run+=("$c")
        done
        normalise "$out/systemd" "$(basename "$systemd")"
        normalise "$out/foyer" "$(basename "$foyer")"
        while IFS= read -r d; do
                [[ -n $d ]] && suspect[$d]=1
        done < <(differing_cases "$out/systemd" "$out/foyer")
        for c in "${run[@]}"; do
                : >"$out/$c.diff"
                if [[ -n ${suspect[$c]:-} || ${rs[$c]} != "${rf[$c]}" ]]; then
                        diff_outputs "$out/systemd/$c" "$out/foyer/$c" "${rs[$c]}" "${rf[$c]}" >"$out/$c.diff" 2>&1
                fi
                if [[ -s $out/$c.diff ]]; then
                        if [[ -n ${is_known[$c]:-} ]]; then
                                echo "LISTED $kind/$c"
                                listed_n=$((listed_n + 1))
                        else
                                echo "FAIL $kind/$c: unlisted difference"
                                sed 's/^/    /' "$out/$c.diff"
                                failed=$((failed + 1))
                        fi
                elif [[ -n ${is_varies[$c]:-} ]]; then
                        echo "SAME $kind/$c (listed, order varies in systemd)"
                        same=$((same + 1))
                elif [[ -n ${is_known[$c]:-} ]]; then
                        echo "FAIL $kind/$c: listed as a difference but the outputs are identical; update the list"
                        failed=$((failed + 1))
                else
                        same=$((same + 1))
                fi
        done
        echo "== $kind (systemd $version): $same identical, $listed_n listed differences, $skipped foyer-only cases not compared, $failed failures"
        ((same > 0)) || { echo "FAIL $kind: no case is identical"; failed=$((failed + 1)); }
        total_failed=$((total_failed + failed))
}

compare_kind root "$bin/systemd-fstab-generator" "$bin/foyer-root-generator$suffix"
compare_kind crypt "$bin/systemd-cryptsetup-generator" "$bin/foyer-crypt-generator$suffix"
compare_kind debug "$bin/systemd-debug-generator" "$bin/foyer-debug-generator$suffix"

# gpt-auto: systemd's generator reads /sys/firmware/efi and detects containers itself, so both run
# in gpt-auto.sh's faked EFI chroot; the tree, foyer's build directory and the wrappers are bound
# into it.
binds=$bin:$gendir
[[ $tree == / ]] || binds+=:$tree
gpt_known=$(listed gpt-auto)
for c in $gpt_known; do
        [[ -f $here/gpt-auto/$c.cmdline ]] || fail "gpt-auto/$c: listed, but there is no such case"
done
FOYER_DIFF_BINDS=$binds FOYER_DIFF_LISTED=$gpt_known \
        "$here/gpt-auto.sh" diff "$bin/foyer-gpt-auto-generator$suffix" "$here/gpt-auto" "$bin/systemd-gpt-auto-generator"
rc=$?
if ((rc == 77)); then
        fail "gpt-auto: the faked EFI chroot cannot be made (needs root and unshare); not skipped"
elif ((rc != 0)); then
        fail "gpt-auto: see above"
fi

if ((total_failed > 0)); then
        echo "differential-$version: $total_failed failures"
        exit 1
fi
echo "differential-$version: every difference is listed"
