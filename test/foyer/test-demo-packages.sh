#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/demo installs tools/packages.demo only (with --no-install-recommends): that list must be a
# subset of the test suite's tools/packages, and hold the package of every command the demo runs.
# The commands are read from tools/demo and tools/lib.sh (a small parser: the words at a command's
# place, outside heredocs; its own functions and the shell's builtins left out), plus those of the
# scripts and programs it runs (below, with the reason); each must be in the table below, whose
# package must be in the demo list or one that every Debian system has (Priority: required). Where
# a command is installed here, dpkg -S must agree with the table.
# Usage: test-demo-packages.sh SOURCE-ROOT
set -euo pipefail
src=${1:?usage: test-demo-packages.sh SOURCE-ROOT}
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

names() { sed 's/#.*//' "$1" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u; }
demo=$(names "$src/tools/packages.demo")
full=$(names "$src/tools/packages")

echo "== tools/packages.demo is a subset of tools/packages"
[ "$(wc -l <<<"$demo")" -ge 5 ] || fail "tools/packages.demo lists too few packages: $demo"
extra=$(comm -23 <(echo "$demo") <(echo "$full"))
[ -z "$extra" ] || fail "in tools/packages.demo but not in tools/packages: $extra"
# shellcheck disable=SC2016 # the text of tools/demo, not an expansion
grep -q 'ensure_packages --list "$topdir/tools/packages.demo"' "$src/tools/demo" ||
        fail "tools/demo does not install tools/packages.demo"
grep -q 'apt-get install .*--no-install-recommends' "$src/tools/lib.sh" ||
        fail "ensure_packages does not use --no-install-recommends"

# On every Debian 12 system (Priority: required): not in the lists.
base="apt coreutils dpkg grep mawk sed util-linux"

# COMMAND PACKAGE[:OWNER]: OWNER is the package dpkg -S names when it is not the one listed
# (pkg-config is pkgconf's).
table="
apt-get apt
awk mawk
cat coreutils
chroot coreutils
cp coreutils
cut coreutils
date coreutils
dirname coreutils
realpath coreutils
head coreutils
id coreutils
install coreutils
ln coreutils
ls coreutils
mkdir coreutils
mv coreutils
printf coreutils
rm coreutils
sha256sum coreutils
sort coreutils
stat coreutils
tail coreutils
touch coreutils
tr coreutils
truncate coreutils
dpkg-query dpkg
grep grep
sed sed
flock util-linux
mountpoint util-linux
blkid util-linux
fsck util-linux
meson meson
ninja ninja-build
gcc gcc
pkg-config pkg-config:pkgconf
debootstrap debootstrap
mkfs.ext4 e2fsprogs
qemu-system-x86_64 qemu-system-x86
qemu-img qemu-utils
udevadm udev
systemctl systemd
journalctl systemd
systemd-ask-password systemd
systemd-tty-ask-password-agent systemd
mount mount
umount mount
kmod kmod
modprobe kmod
less less
"

# What the demo runs beyond its own lines, and why:
#   meson runs gcc and pkg-config (build_foyer);
#   test/vm/mkroot.sh and the cache helper it sources (test/lib/cache.sh), read below as a whole;
#   test/vm/mkdisk.sh's ext4 recipe: the cache key and lock, stage(), mkext4(), cleanup();
#   vm-run starts qemu-system-x86_64 on a qemu-img overlay of the disk;
#   foyer build copies these required programs from this machine into the image (plan-base.c).
also="gcc pkg-config
sha256sum cut mkdir flock ls rm mountpoint cp printf truncate mkfs.ext4 mv cat
qemu-system-x86_64 qemu-img
udevadm systemctl journalctl systemd-ask-password systemd-tty-ask-password-agent mount umount blkid kmod
modprobe fsck less"

# The commands of shell scripts, one a line.
script_commands() {
        python3 - "$@" <<'EOF'
import re, shlex, sys

SEP = {';', '|', '||', '&&', '&', '(', ')', '{', '}', '()', '!', ';;',
       'then', 'do', 'else', 'elif', 'if', 'while', 'until'}
SHELL = set('''[[ ]] [ ] case esac for in done fi function select return exit set shift trap read cd
echo printf true false : . source local export readonly declare typeset unset eval exec command
builtin type wait break continue mapfile readarray getopts let pwd test compgen complete compopt
pushd popd umask kill'''.split())
# Builtins whose words are names, not commands.
WORDS = {'local', 'export', 'readonly', 'declare', 'typeset', 'for', 'case', 'unset'}


def lines(text):
    """The logical lines: continuations joined, heredoc bodies left out."""
    out, skip, buf = [], None, ''
    for line in text.split('\n'):
        if skip:
            if line.strip() == skip:
                skip = None
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if m:
            skip = m.group(1)
        if line.endswith('\\'):
            buf += line[:-1] + ' '
            continue
        out.append(buf + line)
        buf = ''
    return out


def substitutions(s):
    """The text of each $( ... ), parentheses balanced."""
    i = 0
    while (i := s.find('$(', i)) >= 0:
        depth, j = 1, i + 2
        while j < len(s) and depth:
            depth += {'(': 1, ')': -1}.get(s[j], 0)
            j += 1
        yield s[i + 2:j - 1]
        i = j


def scan(line, funcs, found):
    for sub in substitutions(line):
        scan(sub, funcs, found)
    try:
        # ${...} is one word, spaces and all (${1:?usage: NAME ARGS}).
        line = re.sub(r'\$\{[^}]*\}', '$X', line).replace('$(', ' ( ')
        lex = shlex.shlex(line, posix=True, punctuation_chars=';&|()')
        lex.commenters = '#'
        lex.wordchars += '$-./+:=@%,[]*?~^!{}'
        toks = list(lex)
    except ValueError:
        return
    place = True
    for i, t in enumerate(toks):
        if place == 'words' and t in ('(', ')', '()'):
            continue    # an array: local a=() b
        if t in SEP:
            place = True
        elif place == 'words':
            continue
        elif place:
            if re.match(r'^[A-Za-z_][A-Za-z0-9_]*\+?=', t):
                continue
            if i + 1 < len(toks) and toks[i + 1] in ('(', '()'):
                funcs.add(t)
            else:
                found.add(t)
            place = 'words' if t in WORDS else False


funcs, found = set(), set()
for f in sys.argv[1:]:
    for line in lines(open(f, encoding='utf-8').read()):
        scan(line, funcs, found)
for c in sorted(found - funcs - SHELL):
    if re.match(r'^[a-z][a-z0-9._+-]*$', c):
        print(c)
EOF
}

echo "== every command of the demo comes from a package of the demo list"
own=$(script_commands "$src/tools/demo" "$src/tools/lib.sh")
grep -qx debootstrap <<<"$(script_commands "$src/test/vm/mkroot.sh")" || fail "the parser finds no debootstrap in mkroot.sh"
grep -qx meson <<<"$own" || fail "the parser finds no meson in tools/demo"
commands=$( { echo "$own"; script_commands "$src/test/vm/mkroot.sh" "$src/test/lib/cache.sh"; tr -s ' ' '\n' <<<"$also"; } | sed '/^$/d' | sort -u)
summary=
for c in $commands; do
        entry=$(awk -v c="$c" '$1 == c { print $2 }' <<<"$table")
        [ -n "$entry" ] || fail "the demo runs $c, which the table of $0 does not know: add its package (and to tools/packages.demo)"
        pkg=${entry%%:*} owner=${entry#*:}
        if ! grep -qx -- "$pkg" <<<"$demo" && ! grep -qw -- "$pkg" <<<"$base"; then
                fail "the demo runs $c from $pkg, which is not in tools/packages.demo"
        fi
        # The table against dpkg, where the command is here (and dpkg knows its file).
        if p=$(command -v "$c") && [[ $p == /* ]]; then
                r=$(readlink -f "$p")
                if o=$(dpkg -S "$p" 2>/dev/null || dpkg -S "$r" 2>/dev/null || dpkg -S "${p#/usr}" 2>/dev/null ||
                        dpkg -S "${r#/usr}" 2>/dev/null); then
                        o=${o%%:*}
                        [ "$o" = "$owner" ] || fail "$c is $o's here (dpkg -S), not $owner's as the table says"
                fi
        fi
        summary+="$pkg $c"$'\n'
done
sort <<<"$summary" | awk 'NF { a[$1] = a[$1] " " $2 } END { for (p in a) print p ":" a[p] }' | sort
echo OK
