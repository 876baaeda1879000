#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer ls --json: one JSON document that python3's json module (and jq, when installed) reads, with
# each archive of a concatenated image (offset, compression) and each entry's path, type, mode,
# size, owner, device numbers and link target as the archive has them, names that are hostile
# (control bytes, quotes, backslashes, bytes that are not UTF-8) escaped and given in hex as well;
# the same for the initrd of a UKI; --json with a PATH is a usage error.
# Usage: test-ls-json.sh FOYER
set -euo pipefail
foyer=$1
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
command -v zstd >/dev/null || { echo "SKIP: zstd is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/test-ls-json.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# A newc archive written byte by byte: owners, a device node and names no cpio tool would make.
python3 - "$tmp/a.cpio" <<'EOF'
import sys

def entry(name, mode, data=b'', uid=0, gid=0, rdev=(0, 0), ino=[0]):
    ino[0] += 1
    name += b'\0'
    fields = [ino[0], mode, uid, gid, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name), 0]
    h = b'070701' + b''.join(b'%08X' % f for f in fields) + name
    h += b'\0' * (-len(h) % 4)
    return h + data + b'\0' * (-len(data) % 4)

out = b''.join([
    entry(b'etc', 0o40755),
    entry(b'etc/shadow', 0o100600, b'root:*:1::::::\n', uid=0, gid=42),
    entry(b'home/user/file', 0o100644, b'x', uid=1000, gid=100),
    entry(b'dev/tty0', 0o20620, uid=0, gid=5, rdev=(4, 0)),
    entry(b'etc/link', 0o120777, b'../usr/lib/os-release'),
    entry(b'bad\x1b[31m\n"q\\\xff\xe9.txt', 0o100644, b'y'),
    entry(b'caf\xc3\xa9', 0o100644),
    entry(b'evil-link', 0o120777, b'\x7f\xc2\x9b\xc2\x80target\xc3'),   # DEL, C1 CSI and PAD in UTF-8
    entry(b'TRAILER!!!', 0),
])
out += b'\0' * (-len(out) % 512)
open(sys.argv[1], 'wb').write(out)
EOF
zstd -q "$tmp/a.cpio" -o "$tmp/a.cpio.zst"
cat "$tmp/a.cpio" "$tmp/a.cpio.zst" > "$tmp/image"

echo "== foyer ls --json IMAGE"
"$foyer" ls --json "$tmp/image" > "$tmp/out.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "foyer ls --json failed"; }
[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "foyer ls --json wrote to stderr"; }
python3 -m json.tool "$tmp/out.json" > /dev/null || fail "not JSON: $(cat "$tmp/out.json")"
if command -v jq >/dev/null; then
        jq -e '.archives | length == 2' "$tmp/out.json" > /dev/null || fail "jq: not two archives"
fi
# No raw control byte, whatever the names hold: the document is safe on a terminal.
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$tmp/out.json" && fail "a raw control byte in the output"
python3 - "$tmp/out.json" "$tmp/image" <<'EOF'
import json, sys

doc = json.load(open(sys.argv[1], encoding='utf-8'))
def check(cond, what):
    if not cond:
        print('FAIL:', what)
        print(json.dumps(doc, indent=1))
        sys.exit(1)

import os
check(doc['image'] == sys.argv[2], 'image path')
check(doc['size'] == os.path.getsize(sys.argv[2]), 'image size')
check(doc['format'] == 'initrd', 'format')
a = doc['archives']
check([(x['offset'], x['compression'], x['section']) for x in a] ==
      [(0, 'none', None), (a[1]['offset'], 'zstd', None)] and a[1]['offset'] > 0, 'archives')
for x in a:
    e = {y['path']: y for y in x['entries']}
    check(len(x['entries']) == 8, 'entry count')
    check(e['etc'] == {'path': 'etc', 'type': 'directory', 'mode': '0755', 'size': 0, 'uid': 0, 'gid': 0}, 'etc')
    check(e['etc/shadow']['mode'] == '0600' and e['etc/shadow']['gid'] == 42 and e['etc/shadow']['size'] == 15,
          'etc/shadow')
    check(e['home/user/file']['uid'] == 1000 and e['home/user/file']['gid'] == 100, 'owner')
    check(e['dev/tty0']['type'] == 'char-device' and (e['dev/tty0']['major'], e['dev/tty0']['minor']) == (4, 0)
          and e['dev/tty0']['mode'] == '0620', 'device')
    check(e['etc/link']['type'] == 'symlink' and e['etc/link']['target'] == '../usr/lib/os-release', 'symlink')
    check('target' not in e['etc/shadow'] and 'path_hex' not in e['etc/shadow'], 'no extra fields')
    check(e['café']['type'] == 'file', 'valid UTF-8 kept')
    # The hostile name: escapes decode to the bytes that are valid, U+FFFD for the others, and
    # the hex gives them all.
    bad = [y for y in x['entries'] if y['path'].startswith('bad')]
    check(len(bad) == 1, 'hostile name')
    check(bad[0]['path'] == 'bad\x1b[31m\n"q\\\ufffd\ufffd.txt', 'hostile name escaped: %r' % bad[0]['path'])
    check(bytes.fromhex(bad[0]['path_hex']) == b'bad\x1b[31m\n"q\\\xff\xe9.txt', 'hostile name in hex')
    evil = e['evil-link']
    check(evil['target'] == '\x7f\x9b\x80target\ufffd', 'hostile target: %r' % evil['target'])
    check(bytes.fromhex(evil['target_hex']) == b'\x7f\xc2\x9b\xc2\x80target\xc3', 'hostile target in hex')
check(doc['summary']['entries'] == 16 and doc['summary']['directories'] == 2 and doc['summary']['symlinks'] == 4
      and doc['summary']['other'] == 2, 'summary')
EOF
# The escapes themselves, as written.
grep -qF '"path":"bad\u001b[31m\u000a\"q\\\ufffd\ufffd.txt","path_hex":"6261641b5b33316d0a22715cffe92e747874"' "$tmp/out.json" ||
        fail "the hostile name is not escaped as documented: $(grep -a bad "$tmp/out.json")"
grep -qF '"target":"\u007f\u009b\u0080target\ufffd"' "$tmp/out.json" || fail "C1 controls in a target not escaped"

echo "== errors"
if "$foyer" ls --json "$tmp/image" etc/shadow > /dev/null 2> "$tmp/err"; then fail "--json with a PATH succeeded"; fi
grep -q -- "--json lists the image" "$tmp/err" || { cat "$tmp/err"; fail "no usage error for --json PATH"; }
head -c 700 "$tmp/image" > "$tmp/truncated"
if "$foyer" ls --json "$tmp/truncated" > /dev/null 2> "$tmp/err"; then fail "a truncated image listed"; fi
grep -q "truncated" "$tmp/err" || { cat "$tmp/err"; fail "no error for a truncated image"; }
echo OK
