#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The documentation and the bash completion keep up with the command: foyer(1) and the completion
# know every long option that "foyer COMMAND --help" prints; the completion completes commands,
# options, kernel versions, formats and file names; the figures in README.md and docs/*.md are
# not image sizes or counts that go stale, and match the constants they describe; the docs name no
# path of the build machine; and meson install puts foyer(1), foyer.conf(5),
# foyer-kernel-command-line(7) and the completions where man, bash, zsh and fish look.
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

echo "== figures in the docs: printed by a command the docs name, or checked here against their source"
docs=("$src/README.md" "$src/docs/"*.md)
# What an image holds depends on the kernel and the tree it comes from: the docs name foyer build's
# last line and foyer ls's summary instead of giving counts or sizes that go stale.
if grep -nE '[0-9][0-9,]* (entries|files in the image)|[0-9.]+ ?(MiB|MB) (of cpio|with zstd|with xz)' "${docs[@]}"; then
        fail "an image's entry count or size in the docs (name the command that prints it)"
fi
# A number of scenarios is the number of scenario files.
scenarios=$(find "$src/test/vm/scenarios" -name '*.scenario' | wc -l)
[ "$scenarios" -gt 0 ] || fail "no scenarios found"
while read -r n _; do
        [ "$n" -eq "$scenarios" ] || fail "the docs say $n scenarios; there are $scenarios"
done < <(grep -ohE '\b[0-9]+ (VM |QEMU )?(scenarios|boots)\b' "${docs[@]}")
# figure DOC PHRASE SOURCE TEXT: the doc (its lines joined, so that wrapping does not matter) says
# PHRASE and the file that decides it holds TEXT; change one and this fails until the other follows.
figure() {
        tr -s ' \n' '  ' <"$src/$1" | grep -qF -- "$2" || fail "$1 no longer says \"$2\" (update this test with the doc)"
        grep -qF -- "$4" "$src/$3" || fail "$1 says \"$2\", but $3 has no \"$4\" any more"
}
figure README.md 'about 8 s a harness' meson_options.txt "option('fuzz_seconds', type : 'integer', value : 8,"
figure docs/testing.md 'runs each harness for 8 seconds' meson_options.txt "option('fuzz_seconds', type : 'integer', value : 8,"
figure docs/testing.md 'a 10-second hang' test/fuzz/run-libfuzzer.sh '-timeout=10 '
figure docs/testing.md 'more than 2 GiB of memory' test/fuzz/run-libfuzzer.sh '-rss_limit_mb=2048 '
figure docs/testing.md 'fewer than 20 scripts' test/shellcheck.sh '< 20))'
# shellcheck disable=SC2016 # the backquotes are the doc's markdown, not a command
figure docs/testing.md 'wait (up to 30 s) for its `return`' test/vm/vm-run.c '#define QMP_REPLY_SECS 30'
figure docs/testing.md 'the last 60 console lines' test/vm/vm-run.c '#define TAIL_LINES 60'
figure README.md 'the last 60 lines of the serial console' test/vm/vm-run.c '#define TAIL_LINES 60'
figure docs/testing.md '4 MiB extents starting 1 MiB into each PV' test/vm/mkdisk.sh 'extent_size = 8192'
figure docs/testing.md 'The deadline is 1500 s in all' test/mkosi/meson.build 'timeout : 1500'
figure docs/testing.md 'gives the build 900 s and the boot 600 s' tools/mkosi-vm 'build_timeout=900'
figure docs/testing.md 'gives the build 900 s and the boot 600 s' tools/mkosi-vm 'timeout=600'
figure docs/mkosi.md '(default 600)' tools/mkosi-vm 'timeout=600'
figure docs/mkosi.md 'default 900 s' tools/mkosi-vm 'build_timeout=900'
figure docs/foyer.md 'a dictionary over 128 MiB is refused' src/foyer/compress.c '#define XZ_MEMLIMIT (128U * 1024U * 1024U)'
figure docs/foyer.md 'longer than 4 KiB are refused' src/foyer/cpio.h '#define CPIO_PATH_MAX 4096U'
figure docs/security.md 'over 4 KiB are refused' src/foyer/cpio.h '#define CPIO_PATH_MAX 4096U'
figure docs/security.md 'a zstd stream under 64 KiB' test/foyer/test-ls.c 'ASSERT_TRUE(bomb.size < 64 * 1024);'
figure docs/security.md '1 GiB listed under a 512 MiB address-space limit' test/foyer/test-ls.c 'struct rlimit rl = { 512 * MiB, 512 * MiB };'
figure docs/security.md '1 GiB listed under' test/foyer/test-ls.c 'const uint64_t big = 1024ULL * MiB;'
figure docs/security.md 'a 2 GiB symlink entry' test/foyer/test-ls.c 'const uint64_t big = 2048ULL * MiB;'
figure docs/debugging.md 'foyer-explain first waits up to 30 s' src/failure/foyer-explain.c '"--timeout=30"'
figure docs/uki.md 'a multiple of both the stub'"'"'s SectionAlignment and 4 KiB' src/foyer/pe.c '#define PAGE                    4096u'
echo "figures: $scenarios scenarios, constants checked"

echo "== the docs name no path of the build machine"
# An absolute path of two or more components must be one the product or its tests use (in the
# image, on the installed system, or a cache the test tools document; /kernel/x86/microcode is the
# early microcode archive's; /srv/... the exports of the NFS test server), or an obvious placeholder;
# /work/..., /tmp/XYZ, /home/USER/... of the machine the docs were written on are not.
allowed='^/(usr|etc|boot|run|sys|proc|dev|sysroot|sysusr|srv|bin|sbin|lib|lib64|efi|loader|kernel|\.extra|\.\.\.)/|^/root/\.ssh|^/var/(cache/foyer-trees|cache/foyer-mkosi|lib/foyer|log/journal|log/apt|log/dpkg\.log|tmp)(/|$)|^/path/to/'
bad=
while IFS=: read -r file line path; do
        path=/${path#*/}
        [[ $path =~ $allowed ]] || bad+="${file#"$src/"}:$line: $path"$'\n'
done < <(grep -onE '(^|[][ `("'"'"'=:,|])/[A-Za-z0-9._+@-]+/[^][ `()"'"'"',;<>|]*' "$src/README.md" "$src/docs/"*.md)
[ -z "$bad" ] || fail "the docs name paths of the build machine:"$'\n'"$bad"

echo "== meson install"
DESTDIR=$tmp/dest meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "meson install"; }
pages="man1/foyer.1 man5/foyer.conf.5"
$with_lowdown && pages="$pages man7/foyer-kernel-command-line.7"
for p in $pages; do
        f=$tmp/dest/usr/share/man/$p
        [ -s "$f" ] || fail "$p not installed"
        man -l "$f" >/dev/null 2>&1 || fail "$p does not render"
        # A NAME section of the form "NAME \- DESCRIPTION", which mandb and apropos read: its first
        # name is the page's own.
        page=${p#*/} page=${page%.*}
        if command -v lexgrog >/dev/null; then
                lexgrog "$f" | grep -qF ": \"$page - " || fail "$p: no NAME section naming $page ($(lexgrog "$f" 2>&1))"
        fi
        man -l "$f" 2>/dev/null | sed -n '/^NAME/,/^[A-Z]/p' | grep -qE "^ +${page}[ ,]" ||
                fail "$p: man shows no NAME section \"$page - ...\""
done
$with_lowdown || echo "lowdown not found at setup: foyer-kernel-command-line(7) not checked"
$with_lowdown && { man -l "$tmp/dest/usr/share/man/man7/foyer-kernel-command-line.7" 2>/dev/null |
        grep -q 'rd.luks.uuid' || fail "foyer-kernel-command-line(7) lacks rd.luks.uuid"; }
c=$tmp/dest/usr/share/bash-completion/completions/foyer
[ -s "$c" ] || fail "bash completion not installed"
bash -c ". '$c' && complete -p foyer" >/dev/null || fail "the installed completion does not load"
# zsh and fish look in their vendor directories (Debian's zsh and fish packages).
for c in zsh/vendor-completions/_foyer fish/vendor_completions.d/foyer.fish; do
        cmp -s "$tmp/dest/usr/share/$c" "$src/shell-completion/${c##*/}" || fail "$c not installed"
done
echo OK
