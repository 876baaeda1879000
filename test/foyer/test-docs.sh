#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The documentation and the bash completion keep up with the command: foyer(1) and the completion
# know every long option that "foyer COMMAND --help" prints; the completion completes commands,
# options, kernel versions, formats and file names; and meson install puts foyer(1),
# foyer.conf(5), foyer-kernel-command-line(7) and the completion where man and bash look.
# Usage: test-docs.sh FOYER SOURCE-ROOT BUILD-ROOT WITH-LOWDOWN(true|false)
set -eu
foyer=$1 src=$2 build=$3 with_lowdown=$4
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/test-docs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The long options one help text prints, one a line.
long_options() {
        "$foyer" "$@" --help | grep -o -- '--[a-z][a-z-]*' | sort -u
}

# Runs the completion on the words given (the last one is being completed); sets COMPREPLY.
complete_words() {
        COMP_WORDS=(foyer "$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        # As bash runs it: without errexit (compopt fails outside of a completion, harmlessly).
        set +e
        _foyer foyer "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        set -e
}
has_reply() {
        local w
        for w in "${COMPREPLY[@]}"; do [ "$w" = "$1" ] && return 0; done
        return 1
}

echo "== foyer(1) and the completion know every long option of every --help"
. "$src/shell-completion/foyer.bash"
for verb in "" build ls uki preview; do
        verb_opts=$(long_options $verb)
        [ -n "$verb_opts" ] || fail "foyer $verb --help prints no long options"
        for o in $verb_opts; do
                roff=${o//-/\\-}
                grep -qF -- "$roff" "$src/docs/foyer.1" || fail "foyer.1 does not mention $o (foyer $verb --help)"
                if [ -n "$verb" ]; then
                        complete_words "$verb" --
                        has_reply "$o" || fail "completion of 'foyer $verb --' lacks $o"
                fi
        done
        echo "${verb:-foyer}: ${verb_opts//$'\n'/ }"
done
grep -qF 'foyer preview' "$src/docs/foyer.1" || fail "foyer.1 does not describe foyer preview"

echo "== completion"
[ "$(complete -p foyer)" = "complete -F _foyer foyer" ] || fail "complete -p foyer: $(complete -p foyer)"
complete_words pre
[ "${COMPREPLY[*]}" = preview ] || fail "'foyer pre': ${COMPREPLY[*]}"
complete_words ""
for v in build ls uki preview help version; do has_reply $v || fail "'foyer ': $v missing"; done
complete_words help b
[ "${COMPREPLY[*]}" = build ] || fail "'foyer help b': ${COMPREPLY[*]}"
complete_words build --compress z
[ "${COMPREPLY[*]}" = zstd ] || fail "'foyer build --compress z': ${COMPREPLY[*]}"
complete_words build --compress = l
[ "${COMPREPLY[*]}" = lz4 ] || fail "'foyer build --compress=l': ${COMPREPLY[*]}"
complete_words preview --c
[ "${COMPREPLY[*]}" = "--cmdline --crypttab" ] || fail "'foyer preview --c': ${COMPREPLY[*]}"
# shellcheck disable=SC2012 # kernel version directories have plain names
kernels=$(ls /usr/lib/modules 2>/dev/null | sort | xargs)
complete_words build --kver ""
[ "$(printf '%s\n' "${COMPREPLY[@]}" | sort | xargs)" = "$kernels" ] ||
        fail "'foyer build --kver ': '${COMPREPLY[*]}', expected '$kernels'"
mkdir "$tmp/dir"
: >"$tmp/dir/image.img"
complete_words ls "$tmp/dir/im"
[ "${COMPREPLY[*]}" = "$tmp/dir/image.img" ] || fail "'foyer ls DIR/im': ${COMPREPLY[*]}"
complete_words preview --crypttab "$tmp/dir/"
[ "${COMPREPLY[*]}" = "$tmp/dir/image.img" ] || fail "'foyer preview --crypttab DIR/': ${COMPREPLY[*]}"
complete_words ls -f ""
[ "${#COMPREPLY[@]}" -eq 0 ] || fail "'foyer ls -f ' completes '${COMPREPLY[*]}' (a path inside the image)"
complete_words build -f "$tmp/dir/im"
[ "${COMPREPLY[*]}" = "$tmp/dir/image.img" ] || fail "'foyer build -f DIR/im' (-f is --force): ${COMPREPLY[*]}"
complete_words build --cmdline ""
[ "${#COMPREPLY[@]}" -eq 0 ] || fail "'foyer build --cmdline ' completes '${COMPREPLY[*]}'"

echo "== meson install"
DESTDIR=$tmp/dest meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "meson install"; }
pages="man1/foyer.1 man5/foyer.conf.5"
$with_lowdown && pages="$pages man7/foyer-kernel-command-line.7"
for p in $pages; do
        f=$tmp/dest/usr/share/man/$p
        [ -s "$f" ] || fail "$p not installed"
        man -l "$f" >/dev/null 2>&1 || fail "$p does not render"
done
$with_lowdown || echo "lowdown not found at setup: foyer-kernel-command-line(7) not checked"
$with_lowdown && { man -l "$tmp/dest/usr/share/man/man7/foyer-kernel-command-line.7" 2>/dev/null |
        grep -q 'rd.luks.uuid' || fail "foyer-kernel-command-line(7) lacks rd.luks.uuid"; }
c=$tmp/dest/usr/share/bash-completion/completions/foyer
[ -s "$c" ] || fail "bash completion not installed"
bash -c ". '$c' && complete -p foyer" >/dev/null || fail "the installed completion does not load"
echo OK
