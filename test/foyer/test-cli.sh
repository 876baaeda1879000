#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The foyer command as users of dracut, mkinitcpio and lsinitrd expect it: help and version verbs,
# usage errors that name the culprit and point to --help, the habits of the other tools accepted
# (or refused with a reason), and foyer preview, the dry run of the boot's generators.
# Usage: test-cli.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
make_tmp test-cli
prog=$(basename "$foyer")

# expect_usage DESCRIPTION PATTERN HINT COMMAND...: fails with exactly two lines on stderr, the
# first matching PATTERN, the second "Try 'foyer[ VERB] --help'." (HINT is the verb or "").
expect_usage() {
        local what=$1 pattern=$2 hint=$3
        shift 3
        echo "== usage error: $what"
        if "$@" >"$tmp/stdout" 2>"$tmp/stderr"; then
                fail "$what: exit status 0"
        fi
        cat "$tmp/stderr"
        [ "$(grep -c . "$tmp/stderr")" -eq 2 ] || fail "$what: expected two lines on stderr"
        head -n 1 "$tmp/stderr" | grep -q -- "$pattern" || fail "$what: first line does not match '$pattern'"
        [ "$(tail -n 1 "$tmp/stderr")" = "Try '$prog${hint:+ $hint} --help'." ] || fail "$what: no --help hint"
        [ ! -s "$tmp/stdout" ] || fail "$what: output on stdout"
}

echo "== help and version"
for h in help --help -h; do
        "$foyer" $h >"$tmp/out" || fail "foyer $h"
        grep -q '^Commands:' "$tmp/out" || fail "foyer $h: no command list"
        grep -q '^  preview' "$tmp/out" || fail "foyer $h: preview not listed"
done
for v in version --version; do
        "$foyer" $v | grep -qx 'foyer [0-9][0-9.]*' || fail "foyer $v"
done
for verb in build ls uki preview; do
        "$foyer" help $verb >"$tmp/a" || fail "foyer help $verb"
        "$foyer" $verb --help >"$tmp/b" || fail "foyer $verb --help"
        cmp -s "$tmp/a" "$tmp/b" || fail "foyer help $verb differs from foyer $verb --help"
        head -n 1 "$tmp/a" | grep -q "^$prog $verb " || fail "foyer help $verb: synopsis"
done

# getopt's own messages name the option and the verb; ours name the word.
expect_usage "unknown command" 'Unknown command "frobnicate"' "" "$foyer" frobnicate
expect_usage "unknown top-level option" 'Unknown option "--frob"' "" "$foyer" --frob
expect_usage "help for an unknown command" 'Unknown command "frob"' "" "$foyer" help frob
expect_usage "unknown build option" "^$prog build: unrecognized option '--frob'" build "$foyer" build --frob
expect_usage "unknown short option" "^$prog build: invalid option -- 'Z'" build "$foyer" build -Z
expect_usage "missing argument" "^$prog build: option '--kver' requires an argument" build "$foyer" build --kver
expect_usage "unknown ls option" "^$prog ls: unrecognized option '--frob'" ls "$foyer" ls --frob
expect_usage "unknown uki option" "^$prog uki: unrecognized option '--frob'" uki "$foyer" uki --frob
expect_usage "uki argument" 'uki takes no positional arguments (got "x.efi")' uki "$foyer" uki x.efi
expect_usage "uki without --output" 'uki needs --output' uki "$foyer" uki --kver 1.0
expect_usage "ls without an image" 'ls needs an image' ls "$foyer" ls
expect_usage "unknown preview option" "^$prog preview: unrecognized option '--frob'" preview "$foyer" preview --frob
expect_usage "preview argument" 'preview takes no arguments (got "root=/dev/sda")' preview \
        "$foyer" preview root=/dev/sda
expect_usage "three build arguments" 'at most OUTPUT and KVER.*"c"' build "$foyer" build a b c

echo "== habits of dracut and mkinitcpio"
out=$tmp/never.img
# dracut's -H/--hostonly and -N/--no-hostonly are foyer's too (test-foyer-hostonly.sh): accepted,
# the build goes on to the kernel version.
for o in -H --hostonly -N --no-hostonly; do
        expect_error "$o" 'Kernel version 0.0-foyer-test has no modules' "$foyer" build "$o" --kver 0.0-foyer-test -o "$out"
done
expect_error "-c with a file" '-c is --compress.*foyer.conf' "$foyer" build -c /etc/mkinitcpio.conf -o "$out"
expect_error "-o and a positional OUTPUT" '--output given twice' "$foyer" build -o "$out" "$tmp/other.img"
expect_error "--kver and a positional KVER" '--kver given twice' "$foyer" build --kver 1.0 "$out" 2.0
# The positional KVER, -k and mkinitcpio's -g reach the builder: the error names that version.
expect_error "positional KVER" 'Kernel version 0.0-foyer-test has no modules' \
        "$foyer" build "$out" 0.0-foyer-test
expect_error "-g and -k" 'Kernel version 0.0-foyer-test has no modules' \
        "$foyer" build -g "$out" -k 0.0-foyer-test
unset out

echo "== output paths, checked before the work (the kernel version 0.0-foyer-test would fail next)"
mkdir "$tmp/outdir"
mkfifo "$tmp/fifo"
ln -s "$tmp/missing.img" "$tmp/dangling"
ln -s /dev/null "$tmp/to-null"
ln -s outdir "$tmp/to-dir"
nokver=(-k 0.0-foyer-test)
expect_error "-o /dev/null" '^foyer: Output /dev/null is a character device, not a regular file; refusing' \
        "$foyer" build -o /dev/null "${nokver[@]}"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
expect_error "-o FIFO" "Output $tmp/fifo is a FIFO, not a regular file" "$foyer" build -o "$tmp/fifo" "${nokver[@]}"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
expect_error "-o DIR" "Output $tmp/outdir is a directory" "$foyer" build -o "$tmp/outdir" "${nokver[@]}"
expect_error "-o DIR/" "Output \"$tmp/outdir/\" names a directory" "$foyer" build "$tmp/outdir/" "${nokver[@]}"
[ -z "$(ls -A "$tmp/outdir")" ] || fail "files left in the output directory"
expect_error "-o to a dangling symlink" "Output $tmp/dangling is a symlink to $tmp/missing.img, which does not exist" \
        "$foyer" build -o "$tmp/dangling" "${nokver[@]}"
[ ! -e "$tmp/missing.img" ] || fail "the dangling symlink's target was created"
[ "$(readlink "$tmp/dangling")" = "$tmp/missing.img" ] || fail "the dangling symlink changed"
expect_error "-o to a symlink to /dev/null" "Output $tmp/to-null is a symlink to /dev/null, which is a character device" \
        "$foyer" build -o "$tmp/to-null" "${nokver[@]}"
expect_error "-o to a symlink to a directory" "Output $tmp/to-dir is a symlink to $tmp/outdir, which is a directory" \
        "$foyer" build -o "$tmp/to-dir" "${nokver[@]}"
expect_error "-o with an unknown specifier" "--output=$tmp/x-%v.img: unknown specifier %v" \
        "$foyer" build -o "$tmp/x-%v.img" "${nokver[@]}"
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nOutput=%s/x-%%%%-%%v.img\n' "$tmp" >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf expect_error "Output= with an unknown specifier" \
        "$tmp/conf/etc/foyer/foyer.conf:2: Output=$tmp/x-%%-%v.img: unknown specifier %v" "$foyer" build "${nokver[@]}"
unset nokver

if compgen -G '/usr/lib/modules/*/modules.order' >/dev/null; then
        require_kernel
        echo "== -o expands %k and %% (the expanded path is a directory: refused, still before the work)"
        mkdir "$tmp/outdir/100%-$kver.img"
        expect_error "-o with %k and %%" "Output $tmp/outdir/100%-$kver.img is a directory" \
                "$foyer" build -o "$tmp/outdir/100%%-%k.img" -k "$kver"
        rmdir "$tmp/outdir/100%-$kver.img"
fi

if [ -n "$(compgen -G "$FOYER_GENERATOR_DIR/foyer-*")" ] && compgen -G '/usr/lib/modules/*/modules.order' >/dev/null; then
        require_kernel
        echo "== dracut-style build: foyer build -v -f -N --add-drivers \"dummy veth\" OUTPUT KVER"
        echo added >"$tmp/added.txt"
        : >"$tmp/old.img"
        "$foyer" build -v -f -N --add-drivers "dummy  veth" -a "$tmp/added.txt:/etc/added" "$tmp/old.img" "$kver" \
                2>"$tmp/verbose" || { cat "$tmp/verbose"; fail "dracut-style build"; }
        "$foyer" ls "$tmp/old.img" >"$tmp/ls"

        echo "== -v says why each entry is in the image"
        # "foyer: Entry /PATH (TYPE): REASON", one for each entry foyer ls lists, no more.
        sed -n 's|^foyer: Entry /\(.*\) ([a-z]*): ..*$|\1|p' "$tmp/verbose" >"$tmp/reasons"
        diff <(sort "$tmp/reasons") <(awk '{ print $3 }' "$tmp/ls" | sort) || fail "-v: entries and reasons differ"
        grep -q '^foyer: Entry /etc/added (file): --add-file$' "$tmp/verbose" || fail "-v: no reason for --add-file"
        grep -q '^foyer: Entry /usr/lib/modules/.*/dummy\.ko[.a-z]* (file): .*requested' "$tmp/verbose" ||
                fail "-v: no reason for the requested module"
        grep -q '^foyer: Entry /usr/lib/systemd/systemd (file): systemd (PID 1)$' "$tmp/verbose" || fail "-v: no reason for systemd"
        grep -q '/dummy\.ko' "$tmp/ls" || fail "--add-drivers: dummy missing"
        grep -q '/veth\.ko' "$tmp/ls" || fail "--add-drivers: veth missing"
        out=$tmp/never.img
        expect_error "--add-drivers with an unknown module" 'no-such-module-x' \
                "$foyer" build --add-drivers "dummy no-such-module-x" "$out" "$kver"
        unset out

        echo "== Output=DIR/initrd-%k.img, a symlink as Debian's /initrd.img: the file it points to is replaced"
        mkdir "$tmp/boot"
        echo old >"$tmp/boot/initrd.img-$kver"
        ln -s "boot/initrd.img-$kver" "$tmp/initrd-$kver.img"
        ino=$(stat -c %i "$tmp/boot/initrd.img-$kver")
        printf '[Build]\nOutput=%s/initrd-%%k.img\nCompression=none\n' "$tmp" >"$tmp/conf/etc/foyer/foyer.conf"
        FOYER_CONFIG_ROOT=$tmp/conf "$foyer" build -k "$kver" 2>"$tmp/err" || { cat "$tmp/err"; fail "build through a symlink"; }
        cat "$tmp/err"
        grep -q "Wrote $tmp/initrd-$kver.img -> $tmp/boot/initrd.img-$kver:" "$tmp/err" || fail "the message does not name the target"
        [ "$(readlink "$tmp/initrd-$kver.img")" = "boot/initrd.img-$kver" ] || fail "the symlink was replaced"
        [ "$(stat -c %i "$tmp/boot/initrd.img-$kver")" != "$ino" ] || fail "the target was rewritten in place, not replaced"
        "$foyer" ls "$tmp/initrd-$kver.img" 2>/dev/null | grep -q ' usr/lib/systemd/systemd$' || fail "the target is not the image"
        [ -z "$(compgen -G "$tmp/boot/.#*")$(compgen -G "$tmp/.#*")" ] || fail "temporary files left behind"
        [ "$(find "$tmp/boot" -type f | wc -l)" -eq 1 ] || fail "more than the target in the target's directory"
else
        echo "no kernel or generators: skipping the dracut-style build"
fi

echo "== foyer ls: entries on stdout, a header and a summary on stderr"
mkdir -p "$tmp/tree/etc/dir" "$tmp/tree/usr/bin"
cp "$(type -P true)" "$tmp/tree/usr/bin/true"
ln "$tmp/tree/usr/bin/true" "$tmp/tree/usr/bin/true-link"     # newc: the data comes with one name only
printf 'a\tb\n' >"$tmp/tree/etc/fstab"
: >"$tmp/tree/etc/empty"
ln -s fstab "$tmp/tree/etc/link"
(cd "$tmp/tree" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$tmp/tree.cpio"
zstd -q -c "$tmp/tree.cpio" >"$tmp/tree.img"
"$foyer" ls "$tmp/tree.img" >"$tmp/ls.out" 2>"$tmp/ls.err" || { cat "$tmp/ls.err"; fail "foyer ls"; }
cat "$tmp/ls.err"
# stdout is what it always was: one entry a line, the path in the third field, as cpio -t has it.
diff <(awk '{ print $3 }' "$tmp/ls.out") <(cpio -t --quiet <"$tmp/tree.cpio") || fail "foyer ls: stdout is not the entries"
[ "$(sed -n 1p "$tmp/ls.err")" = "Image: $tmp/tree.img, $(stat -c %s "$tmp/tree.img") bytes" ] || fail "foyer ls: header"
[ "$(sed -n 2p "$tmp/ls.err")" = "Offset 0: zstd-compressed cpio" ] || fail "foyer ls: compression"
files=$(find "$tmp/tree" -type f | wc -l) dirs=$(find "$tmp/tree" -type d | wc -l)
links=$(find "$tmp/tree" -type l | wc -l) bytes=$(find "$tmp/tree" -type f -printf '%i %s\n' | sort -u | awk '{ s += $2 } END { print s }')
want="Summary: entries $((files + dirs + links)), files $files ($bytes bytes), directories $dirs, symlinks $links, other 0"
[ "$(sed -n 3p "$tmp/ls.err")" = "$want" ] || fail "foyer ls: summary is not '$want'"
[ "$(grep -c . "$tmp/ls.err")" -eq 3 ] || fail "foyer ls: more than a header and a summary on stderr"
# Both on one stream: the header first, the summary last.
"$foyer" ls "$tmp/tree.img" >"$tmp/ls.both" 2>&1
[ "$(head -n 1 "$tmp/ls.both")" = "Image: $tmp/tree.img, $(stat -c %s "$tmp/tree.img") bytes" ] || fail "foyer ls 2>&1: header not first"
[ "$(tail -n 1 "$tmp/ls.both")" = "$want" ] || fail "foyer ls 2>&1: summary not last"

echo "== foyer ls of concatenated archives: a header line for each, one summary"
gzip -c "$tmp/tree.cpio" >"$tmp/tree.cpio.gz"
cat "$tmp/tree.cpio" "$tmp/tree.cpio.gz" >"$tmp/concat.img"
"$foyer" ls "$tmp/concat.img" 2>"$tmp/ls.err" >/dev/null
grep -qx 'Offset 0: uncompressed cpio' "$tmp/ls.err" || fail "concatenated: no uncompressed archive at 0"
grep -qx "Offset $(stat -c %s "$tmp/tree.cpio"): gzip-compressed cpio" "$tmp/ls.err" || fail "concatenated: no gzip archive"
grep -q "^Summary: entries $((2 * (files + dirs + links))), files $((2 * files)) ($((2 * bytes)) bytes)," "$tmp/ls.err" ||
        fail "concatenated: the summary does not count both archives"

echo "== foyer ls IMAGE PATH and -f PATH print one file, byte for byte"
for form in "ls $tmp/tree.img usr/bin/true" "ls $tmp/tree.img /usr/bin/true" "ls $tmp/tree.img ./usr/bin/true" \
            "ls -f usr/bin/true $tmp/tree.img" "ls --file=/usr/bin/true $tmp/concat.img" \
            "ls $tmp/tree.img usr/bin/true-link" "ls $tmp/concat.img usr/bin/true-link"; do
        # shellcheck disable=SC2086 # the forms are words
        "$foyer" $form >"$tmp/cat" 2>"$tmp/cat.err" || { cat "$tmp/cat.err"; fail "foyer $form"; }
        cmp "$tmp/cat" "$tmp/tree/usr/bin/true" || fail "foyer $form: not the file"
        [ ! -s "$tmp/cat.err" ] || fail "foyer $form: something on stderr"
done
[ "$("$foyer" ls "$tmp/tree.img" etc/fstab etc/empty etc/fstab)" = "$(printf 'a\tb\na\tb')" ] ||
        fail "foyer ls IMAGE PATH PATH: not the files in order"
out=
expect_error "a path not in the image" "$tmp/tree.img has no file etc/none\.\$" "$foyer" ls "$tmp/tree.img" etc/none
expect_error "a directory" "$tmp/tree.img: /etc/dir is a directory" "$foyer" ls "$tmp/tree.img" /etc/dir
expect_error "a symlink" "$tmp/tree.img: etc/link is a symlink to fstab" "$foyer" ls "$tmp/tree.img" etc/link
expect_error "the old form with two images" "has no file $tmp/concat.img (foyer ls lists one image" \
        "$foyer" ls "$tmp/tree.img" "$tmp/concat.img"
expect_error "not an image" "$tmp/tree/etc/fstab: neither a cpio archive" "$foyer" ls "$tmp/tree/etc/fstab" etc/fstab
[ ! -s "$tmp/stdout" ] || fail "foyer ls IMAGE PATH: output for a file it cannot read"

echo "== preview"
require_generator foyer-root-generator
require_generator foyer-crypt-generator
uuid=8d5a4b0e-1c3f-4d2a-9e6b-1f2e3d4c5b6a
luks=0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b
mkdir "$tmp/t"
TMPDIR=$tmp/t "$foyer" preview --cmdline "root=UUID=$uuid rd.luks.uuid=$luks rd.timeout=soon" \
        >"$tmp/preview" 2>"$tmp/preview.err" || { cat "$tmp/preview.err"; fail "preview failed"; }
cat "$tmp/preview.err"
grep -qx '# /run/systemd/generator/sysroot.mount' "$tmp/preview" || fail "preview: no sysroot.mount header"
awk '/^# \// { on = ($0 == "# /run/systemd/generator/sysroot.mount") } on' "$tmp/preview" | grep -qx "What=/dev/disk/by-uuid/$uuid" ||
        fail "preview: sysroot.mount has no What=/dev/disk/by-uuid/$uuid"
cryptunit="/run/systemd/generator/systemd-cryptsetup@luks\\\\x2d${luks//-/\\\\x2d}.service"
grep -qx "# $cryptunit" "$tmp/preview" || fail "preview: no $cryptunit"
grep -q "^# /run/systemd/generator/.*\.requires/sysroot.mount -> \.\./sysroot.mount$" "$tmp/preview" ||
        fail "preview: symlinks not shown as NAME -> TARGET"
grep -q 'ExecStart=.*systemd-cryptsetup attach' "$tmp/preview" || fail "preview: no cryptsetup ExecStart"
grep -q "$tmp" "$tmp/preview" && fail "preview: the temporary directory shows in the units"
grep -q 'rd.timeout=soon' "$tmp/preview.err" || fail "preview: the bad parameter is not logged on stderr"
grep -q 'rd.timeout' "$tmp/preview" && fail "preview: log messages on stdout"
# Headers come in sorted order within each directory.
grep '^# /run/systemd/generator/' "$tmp/preview" | LC_ALL=C sort -c || fail "preview: not sorted"
[ -z "$(ls -A "$tmp/t")" ] || fail "preview left $(ls -A "$tmp/t") in TMPDIR"

echo "== preview with a crypttab and the real root's fstab"
printf 'data UUID=%s none luks\n' "$luks" >"$tmp/crypttab"
printf 'UUID=%s / ext4 defaults 0 1\n/dev/vg/usr /usr ext4 defaults 0 2\n' "$uuid" >"$tmp/fstab"
TMPDIR=$tmp/t "$foyer" preview --cmdline "root=UUID=$uuid" --crypttab "$tmp/crypttab" --fstab "$tmp/fstab" \
        >"$tmp/preview" 2>"$tmp/preview.err" || { cat "$tmp/preview.err"; fail "preview with files failed"; }
grep -qx '# /run/systemd/generator/systemd-cryptsetup@data.service' "$tmp/preview" || fail "preview: crypttab unused"
grep -qx '# /run/systemd/generator/sysroot-usr.mount' "$tmp/preview" || fail "preview: fstab's /usr not mounted"
[ -z "$(ls -A "$tmp/t")" ] || fail "preview left files in TMPDIR"
TMPDIR=$tmp/t expect_error "preview with a missing crypttab" "Cannot read $tmp/nonexistent" \
        "$foyer" preview --cmdline root=/dev/sda1 --crypttab "$tmp/nonexistent"

echo "== preview fails when a generator fails, and still cleans up"
mkdir "$tmp/gens"
printf '#!/bin/sh\necho "failing on purpose" >&2\nexit 3\n' >"$tmp/gens/foyer-broken-generator"
chmod +x "$tmp/gens/foyer-broken-generator"
TMPDIR=$tmp/t FOYER_GENERATOR_DIR=$tmp/gens "$foyer" preview --cmdline quiet >"$tmp/out" 2>"$tmp/err" &&
        fail "preview: a failing generator gives exit status 0"
cat "$tmp/err"
grep -q 'foyer-broken-generator failed with exit status 3' "$tmp/err" || fail "preview: generator failure not named"
[ -z "$(ls -A "$tmp/t")" ] || fail "preview left files in TMPDIR after a failure"
echo "== preview interrupted while a generator runs: the generator is stopped, the tree removed"
mkdir "$tmp/slow"
printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 300\n' "$tmp/slow.pid" >"$tmp/slow/foyer-slow-generator"
chmod +x "$tmp/slow/foyer-slow-generator"
for sig in TERM INT HUP; do
        rm -f "$tmp/slow.pid"
        TMPDIR=$tmp/t FOYER_GENERATOR_DIR=$tmp/slow "$foyer" preview --cmdline quiet >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 100); do [ -s "$tmp/slow.pid" ] && break; sleep 0.1; done
        [ -s "$tmp/slow.pid" ] || fail "preview: the slow generator did not start"
        [ -n "$(ls -A "$tmp/t")" ] || fail "preview: no temporary tree while the generator runs"
        kill -s "$sig" "$pid"
        rc=0
        wait "$pid" || rc=$?
        [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] || fail "preview: SIG$sig gave exit status $rc"
        [ -z "$(ls -A "$tmp/t")" ] || fail "preview: SIG$sig left $(ls -A "$tmp/t") in TMPDIR"
        ! kill -0 "$(cat "$tmp/slow.pid")" 2>/dev/null || fail "preview: SIG$sig left the generator running"
done
unset pid

TMPDIR=$tmp/t FOYER_GENERATOR_DIR=$tmp/empty expect_error "no generators" 'No foyer generators' \
        "$foyer" preview --cmdline quiet

echo "OK"
