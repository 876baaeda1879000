#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The zsh and fish completions (shell-completion/_foyer, foyer.fish) keep up with the command: each
# parses (zsh -n, fish -n), names every long option that "foyer COMMAND --help" prints, and fish,
# asked as it asks when Tab is pressed, offers each of them and the commands. (foyer.bash is
# test-docs.sh's.) A shell that is not installed is left out; exit 77 when neither is.
# Usage: test-completion.sh FOYER SOURCE-ROOT
set -eu
foyer=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
zsh_file=$src/shell-completion/_foyer fish_file=$src/shell-completion/foyer.fish
verbs="build ls uki preview timeline"
checked=0

long_options() {
        "$foyer" "$@" --help | grep -o -- '--[a-z][a-z-]*' | sort -u
}

if command -v zsh >/dev/null; then
        echo "== zsh"
        zsh -n "$zsh_file" || fail "zsh -n $zsh_file"
        head -n1 "$zsh_file" | grep -qx '#compdef foyer' || fail "_foyer does not start with #compdef foyer"
        for verb in $verbs; do
                # The options of a command are in its function, _foyer_VERB (build's image options in
                # the array both build and uki take).
                body=$(sed -n "/^_foyer_$verb() {/,/^}/p" "$zsh_file")
                [[ $verb == build || $verb == uki ]] && body+=$(sed -n '/^_foyer_image_options=(/,/^)/p' "$zsh_file")
                [ -n "$body" ] || fail "_foyer has no _foyer_$verb"
                for o in $(long_options "$verb"); do
                        grep -qE -- "(^|[{,'\"*)])$o([]=[,}'\"+]|$)" <<<"$body" || fail "zsh: foyer $verb lacks $o"
                done
        done
        checked=$((checked + 1))
else
        echo "zsh is not installed: _foyer not checked"
fi

if command -v fish >/dev/null; then
        echo "== fish"
        fish -n "$fish_file" || fail "fish -n $fish_file"
        # complete -C: what fish offers for a command line, "WORD<TAB>DESCRIPTION" a line.
        offers() { HOME=$tmp fish --no-config -c "source '$fish_file'; complete -C '$1'" | cut -f1; }
        tmp=$(mktemp -d /tmp/test-completion.XXXXXX)
        trap 'rm -rf "$tmp"' EXIT
        got=$(offers "foyer ")
        for verb in $verbs help version; do
                grep -qx "$verb" <<<"$got" || fail "fish: 'foyer ' does not offer $verb"
        done
        for verb in $verbs; do
                got=$(offers "foyer $verb --")
                for o in $(long_options "$verb"); do
                        grep -qx -- "$o" <<<"$got" || fail "fish: 'foyer $verb --' does not offer $o"
                done
        done
        [ "$(offers "foyer build --compress " | sort | xargs)" = "gzip lz4 none xz zstd" ] ||
                fail "fish: 'foyer build --compress ': $(offers "foyer build --compress " | xargs)"
        # ls's options are not build's.
        offers "foyer ls --" | grep -qx -- --output && fail "fish: 'foyer ls --' offers --output"
        checked=$((checked + 1))
else
        echo "fish is not installed: foyer.fish not checked"
fi

[ "$checked" -gt 0 ] || { echo "SKIP: neither zsh nor fish is installed"; exit 77; }
echo OK
