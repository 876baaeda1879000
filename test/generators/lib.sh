# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Shared by the golden, differential and regeneration scripts here; callers set $casedir.

docs="$(dirname "${BASH_SOURCE[0]}")/../../docs/kernel-command-line.md"

# Case names in the known-differences table of docs/kernel-command-line.md; $1 names the table of a
# case directory other than root/ (e.g. "crypt" for <!-- BEGIN known-differences crypt -->).
known_differences() {
        local m=known-differences${1:+ $1}
        sed -n "/<!-- BEGIN $m -->/,/<!-- END $m -->/p" "$docs" |
                sed -n 's/^| *\([0-9][0-9]*-[^ |]*\)\( *(varies)\)\? *|.*/\1/p'
}

# The listed cases marked "(varies)": systemd 252's output depends on its hash table order, so it may
# or may not match foyer's on a given run.
varying_differences() {
        local m=known-differences${1:+ $1}
        sed -n "/<!-- BEGIN $m -->/,/<!-- END $m -->/p" "$docs" |
                sed -n 's/^| *\([0-9][0-9]*-[^ |]*\) *(varies) *|.*/\1/p'
}

# The cases of case directory KIND $2 that systemd VERSION $1's generators write differently from
# foyer's, from the table "differences-VERSION KIND" of docs/systemd-VERSION.md (rows "| case | reason |",
# "| case (varies) | reason |"); with $3 "varies", only those marked "(varies)". A row without a reason
# does not count (its case then fails differential.sh as an unlisted difference).
version_differences() {
        local m="differences-$1 $2" f docs_dir
        docs_dir=$(dirname "$docs")
        f=$docs_dir/systemd-$1.md
        [[ -f $f ]] || return 0
        sed -n "/<!-- BEGIN $m -->/,/<!-- END $m -->/p" "$f" |
                if [[ ${3:-} == varies ]]; then
                        sed -n 's/^| *\([0-9][0-9]*-[^ |]*\) *(varies) *| *[^ |].*/\1/p'
                else
                        sed -n 's/^| *\([0-9][0-9]*-[^ |]*\)\( *(varies)\)\? *| *[^ |].*/\1/p'
                fi
}

# The known-differences table and the systemd 252 counterpart for case directory $1.
diff_table() {
        case $(basename "$1") in
                root) echo "" ;;
                *) basename "$1" ;;
        esac
}
systemd_counterpart() {
        case $(basename "$1") in
                crypt) echo /usr/lib/systemd/system-generators/systemd-cryptsetup-generator ;;
                *) echo /usr/lib/systemd/system-generators/systemd-fstab-generator ;;
        esac
}

# fsck checkers decide whether fsck units are written; make them independent of the machine's packages:
# fsck, fsck.ext4, fsck.xfs, fsck.btrfs and fsck.vfat exist, nothing else (no fsck.squashfs).
fake_fsck_bin() {
        if [[ -z ${fakebin:-} ]]; then
                fakebin=$(mktemp -d)
                for f in fsck fsck.ext4 fsck.xfs fsck.btrfs fsck.vfat; do
                        printf '#!/bin/sh\nexit 0\n' >"$fakebin/$f"
                        chmod +x "$fakebin/$f"
                done
        fi
}

# The extra VAR=value lines of case $1 (its NN-name.env, if any; blank and # lines skipped), with
# @CASEDIR@ replaced by $casedir, into the array case_env_words (no subshell: see run_case).
case_env() {
        local line
        case_env_words=()
        [[ -f $1.env ]] || return 0
        while IFS= read -r line; do
                [[ -z $line || $line == \#* ]] && continue
                case_env_words+=("${line//@CASEDIR@/$casedir}")
        done <"$1.env"
}

# Runs generator $1 on case $2 into $3 (which gets normal/ early/ late/; the generator's stderr goes
# to $3.log) and sets case_rc to its exit status. Without a subshell or a helper process: the golden
# and differential tests run it for every case, and process spawns were most of their CPU time.
# shellcheck disable=SC2034 # case_rc is read by the callers
run_case() {
        local generator=$1 base=$2 out=$3 cmdline=
        # The command line as $(cat) gives it (trailing newlines dropped), without a process.
        [[ -s $base.cmdline ]] && { IFS= read -r -d '' cmdline <"$base.cmdline" || true; }
        while [[ $cmdline == *$'\n' ]]; do cmdline=${cmdline%$'\n'}; done
        local -a env=(PATH="$fakebin:/usr/bin:/bin" SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS=
                      FOYER_CMDLINE_DIR=/nonexistent SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null
                      "SYSTEMD_PROC_CMDLINE=$cmdline")
        [[ -f $base.fstab ]] && env+=("SYSTEMD_SYSROOT_FSTAB=$base.fstab")
        [[ -f $base.initrd-fstab ]] && env+=("SYSTEMD_FSTAB=$base.initrd-fstab")
        # The initrd's /etc/crypttab (systemd 252 reads $SYSTEMD_CRYPTTAB instead, as foyer's does).
        if [[ -f $base.crypttab ]]; then env+=("SYSTEMD_CRYPTTAB=$base.crypttab"); else env+=(SYSTEMD_CRYPTTAB=/dev/null); fi
        case_env "$base"
        env+=("${case_env_words[@]}")
        [[ -d $out/late ]] || mkdir -p "$out"/{normal,early,late}
        # (|| keeps a failing generator from ending a caller that runs under set -e.)
        case_rc=0
        env -i "${env[@]}" "$generator" "$out/normal" "$out/early" "$out/late" 2>"$out.log" || case_rc=$?
}

# Rewrites (for generator basename $2) the per-run differences in a finished output tree in place.
normalise() {
        local dir=$1 name=$2 canon=foyer-root-generator
        # foyer's generators keep their own name (without -asan); systemd's stand in for their foyer twin.
        [[ $name == foyer-* ]] && canon=${name%-asan}
        [[ $name == systemd-cryptsetup-generator ]] && canon="foyer-crypt-generator"
        # (252's debug generator writes no header; 257's writes one into its drop-ins.)
        [[ $name == systemd-debug-generator ]] && canon="foyer-debug-generator"
        # (252's cryptsetup generator ends some of these header lines with a space; it is kept.)
        # One sed for all of the tree's files (one per file made the golden tests spawn-bound).
        find "$dir" -type f -exec sed -i -e "s|^# Automatically generated by $name\( \?\)\$|# Automatically generated by $canon\1|" \
                -e "s|$casedir|@CASEDIR@|g" {} +
}

# Lists a tree: type, path and symlink target per line.
list_tree() {
        (cd "$1" && find . -mindepth 1 ! -name .gitkeep -printf '%y %p -> %l\n' | LC_ALL=C sort)
}

# Compares output tree $2 (with its log $2.log; the diff goes to $2.diff) of case $1 and its exit status
# $3 with the golden files $4.expected/ and $4.exit (default 0); prints FAIL lines and returns 1 on any
# difference.
check_golden() {
        local c=$1 out=$2 rc=$3 base=$4 expected_exit=0 ok=0
        [[ -f $base.exit ]] && expected_exit=$(cat "$base.exit")
        if [[ $rc != "$expected_exit" ]]; then
                echo "FAIL $c: exit status $rc, expected $expected_exit"
                sed 's/^/    /' "$out.log"
                ok=1
        fi
        # Paths and symlink targets first (diff -r does not compare link targets), then contents.
        if ! diff -u <(list_tree "$base.expected") <(list_tree "$out") >"$out.diff"; then
                echo "FAIL $c: file list or symlink targets differ"
                sed 's/^/    /' "$out.diff"
                ok=1
        elif ! diff -ru --no-dereference --exclude=.gitkeep "$base.expected" "$out" >"$out.diff"; then
                echo "FAIL $c: contents differ"
                sed 's/^/    /' "$out.diff"
                ok=1
        fi
        return $ok
}

# Prints the differences between systemd's output tree $1 (exit status $3) and foyer's $2 (status $4):
# exit statuses, paths and symlink targets, then contents; nothing when they are identical.
diff_outputs() {
        [[ $3 == "$4" ]] || echo "exit status: systemd $3, foyer $4"
        diff -u --label systemd --label foyer <(list_tree "$1") <(list_tree "$2") &&
                diff -ru --no-dereference "$1" "$2"
}

# The entries of directories $1 and $2 (case output trees, one per entry) whose trees differ, one
# name a line: one `diff -rq` over all cases instead of a listing and two diffs per case (the golden
# and differential tests were spawn-bound). Exact for what check_golden and diff_outputs compare
# (paths, file types, symlink targets, contents); only the names are taken from its output, and
# when diff fails or names none although the trees differ, every entry is printed, so that the
# callers' per-case comparison then decides. run_case's NAME.log (stderr) and check_golden's
# NAME.diff beside the trees are not compared (no unit or drop-in name ends in .log or .diff).
differing_cases() {
        local a=$1 b=$2 out rc
        out=$(diff -rq --no-dereference -x .gitkeep -x '*.log' -x '*.diff' "$a" "$b" 2>&1)
        rc=$?
        ((rc == 0)) && return 0
        local names
        names=$(sed -n -e "s|^Only in \($a\|$b\): \([^/]*\)\$|\2|p" \
                       -e "s|^[^/]*\($a\|$b\)/\([^/]*\)[/: ].*|\2|p" <<<"$out" | LC_ALL=C sort -u)
        if ((rc == 1)) && [[ -n $names ]]; then
                printf '%s\n' "$names"
        else
                (cd "$a" && find . -mindepth 1 -maxdepth 1 ! -name '*.log' ! -name '*.diff' -printf '%P\n')
                (cd "$b" && find . -mindepth 1 -maxdepth 1 ! -name '*.log' ! -name '*.diff' -printf '%P\n')
        fi
}

# Moves a finished (normalised) output tree $1 to golden directory $2 (replaced), keeping empty
# normal/, early/, late/ with a .gitkeep, and stores exit status $3 in $2's NN-name.exit unless it is 0.
store_expected() {
        local out=$1 dest=$2 rc=$3 d
        rm -rf "$dest" "${dest%.expected}.exit"
        mv "$out" "$dest"
        for d in normal early late; do
                [[ -n $(find "$dest/$d" -mindepth 1 -print -quit) ]] || : >"$dest/$d/.gitkeep"
        done
        [[ $rc == 0 ]] || echo "$rc" >"${dest%.expected}.exit"
}

# The golden directories under $1 (test/generators): those holding NN-name.expected/ trees, one path a
# line, sorted.
golden_dirs() {
        find "$1" -mindepth 2 -maxdepth 2 -type d -name '*.expected' -printf '%h\n' | LC_ALL=C sort -u
}

# The case names: the arguments, or every CASEDIR/NN-name.cmdline.
cases_of() {
        if (($# > 0)); then printf '%s\n' "$@"; else
                for c in "$casedir"/*.cmdline; do c=${c##*/}; echo "${c%.cmdline}"; done
        fi
}

# The start of the error tests (test-*.sh GENERATOR): $generator as an absolute path, a scratch
# directory $tmp removed on exit, and fail=0.
begin_error_test() {
        generator=$(realpath "$1")
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        # shellcheck disable=SC2034 # read by the test-*.sh that call this
        fail=0
}

# For the write-failure tests: a generator run (exit status $2, stderr in $tmp/log) found file $1, made
# beforehand with the content "precious", in its way. It must have failed with "Duplicate entry", left
# the file as it was and no temporary file (.#*) beside it. Prints FAIL lines (named $3) and returns 1
# otherwise.
check_kept() {
        local file=$1 rc=$2 what=$3 ok=0
        if [[ $rc == 0 || $(cat "$file") != precious ]] || ! grep -q "Duplicate entry" "$tmp/log"; then
                echo "FAIL: $what: exit $rc, content $(cat "$file")"
                cat "$tmp/log"
                ok=1
        fi
        if find "$(dirname "$file")" -name '.#*' | grep -q .; then
                echo "FAIL: temporary files left behind:"
                find "$(dirname "$file")" -name '.#*'
                ok=1
        fi
        return $ok
}

# For the tests of a generator mode that calls systemctl (FOYER_SYSTEMCTL=$tmp/systemctl, which
# writes its arguments to $tmp/calls): a run named $1 exited $2, which must be $3, and called
# systemctl exactly as $4 says (one call a line). Prints "ok $1", or a FAIL line with its stderr
# ($tmp/log) and sets fail=1.
check_calls() {
        local what=$1 rc=$2 expected_rc=$3 expected_calls=$4
        if [[ $rc != "$expected_rc" || $(cat "$tmp/calls") != "$expected_calls" ]]; then
                echo "FAIL $what: exit $rc (expected $expected_rc), calls: $(cat "$tmp/calls")"
                sed 's/^/    /' "$tmp/log"
                # shellcheck disable=SC2034 # read by the test-*.sh that call this
                fail=1
        else
                echo "ok $what"
        fi
}
