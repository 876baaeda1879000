#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer-unlock, what an SSH login into the initrd runs (src/unlock/foyer-unlock.c), on the build host
# with systemd's own ask-password protocol: systemd-ask-password --no-tty asks in
# /run/systemd/ask-password, a stand-in systemctl ($FOYER_UNLOCK_SYSTEMCTL) says when the unlocking
# is over (once the question was answered):
#  - nothing asked and the unlocking over: exit 0 at once, saying so;
#  - a question open, the passphrase on the input (no terminal): systemd-tty-ask-password-agent
#    answers it with that line, exit 0;
#  - a question open and the input already at its end (/dev/null, a closed pipe): exit 1, nothing
#    answered;
#  - a command asked for ($SSH_ORIGINAL_COMMAND, as dropbear sets it), in an image with a shell (the
#    build host: /bin/sh, no FOYER_NO_SHELL_MARKER): it runs once the passphrase is answered, never
#    while a question is open: not when the input ended first, nor when a new question came after
#    the unlocking looked over (the stand-in systemctl asks one as it says so); exit 1, saying why.
# On a host whose PID 1 is systemd, its wall agent may announce the test's two questions to the
# logged-in users ("foyer-unlock test 1:"), as for any question asked there.
# Usage: test-foyer-unlock.sh FOYER-UNLOCK
set -eu
unlock=${1:?usage: test-foyer-unlock.sh FOYER-UNLOCK}
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*; skipping"; exit 77; }
[ "$(id -u)" = 0 ] || skip "answering systemd's ask-password questions needs root"
command -v systemd-ask-password >/dev/null || skip "systemd-ask-password is not installed"
[ -x /usr/bin/systemd-tty-ask-password-agent ] || skip "systemd-tty-ask-password-agent is not installed"
tmp=$(mktemp -d /tmp/test-foyer-unlock.XXXXXX)
asker=
trap '[ -z "$asker" ] || kill "$asker" 2>/dev/null; [ ! -s "$tmp/late.pid" ] || kill "$(cat "$tmp/late.pid")" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p /run/systemd/ask-password
if [ -e /etc/foyer/no-shell ] || [ ! -x /bin/sh ]; then skip "this host looks like an image without a shell"; fi

# The stand-in systemctl: the unlocking is over once the asker has its answer. With $tmp/late, it
# first asks one more question (as a volume set up later would), and says so once it is asked.
cat >"$tmp/systemctl" <<EOS
#!/bin/sh
[ -s "$tmp/answer" ] || exit 1
[ -e "$tmp/late" ] || exit 0
rm -f "$tmp/late"
before=\$(find /run/systemd/ask-password -name 'ask.*' | wc -l)
setsid timeout 60 systemd-ask-password --no-tty --timeout=50 "foyer-unlock test late:" >/dev/null 2>&1 </dev/null &
echo \$! >"$tmp/late.pid"
for _ in \$(seq 100); do
        [ "\$(find /run/systemd/ask-password -name 'ask.*' | wc -l)" -gt "\$before" ] && exit 0
        sleep 0.1
done
exit 0
EOS
chmod +x "$tmp/systemctl"
export FOYER_UNLOCK_SYSTEMCTL=$tmp/systemctl

# ask: one question, in the background (its answer goes to $tmp/answer); waits until it is asked.
ask() {
        : >"$tmp/answer"
        before=$(find /run/systemd/ask-password -name 'ask.*' | wc -l)
        setsid timeout 60 systemd-ask-password --no-tty --timeout=50 "foyer-unlock test $1:" >"$tmp/answer" 2>"$tmp/ask.err" </dev/null &
        asker=$!
        for _ in $(seq 100); do
                [ "$(find /run/systemd/ask-password -name 'ask.*' | wc -l)" -gt "$before" ] && return 0
                sleep 0.1
        done
        fail "systemd-ask-password asked nothing"
}

echo "== nothing to answer, the unlocking over"
echo finished >"$tmp/answer"
timeout 20 setsid "$unlock" </dev/null >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "exit status $?"; }
grep -q 'no passphrase is asked for any more' "$tmp/out" || { cat "$tmp/out"; fail "it does not say that nothing is asked"; }

echo "== a question and the passphrase on the input"
ask 1
printf 'correct horse\n' | timeout 30 setsid "$unlock" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "exit status $?"; }
wait "$asker" || true
asker=
[ "$(cat "$tmp/answer")" = "correct horse" ] || fail "the question got '$(cat "$tmp/answer")', not the passphrase"
grep -q 'no passphrase is asked for any more' "$tmp/out" || { cat "$tmp/out"; fail "it does not say that it is over"; }

echo "== a question and no input"
ask 2
rc=0
timeout 30 setsid "$unlock" </dev/null >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[ "$rc" = 1 ] || fail "exit status $rc with the input at its end, not 1"
grep -q 'the input ended with a passphrase still asked for' "$tmp/out" || fail "it does not say that the input ended"
[ ! -s "$tmp/answer" ] || fail "something was answered: '$(cat "$tmp/answer")'"

echo "== the same question, an empty pipe (ssh's input, closed)"
rc=0
: | timeout 30 setsid "$unlock" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[ "$rc" = 1 ] || fail "exit status $rc with the pipe closed, not 1"
[ ! -s "$tmp/answer" ] || fail "something was answered: '$(cat "$tmp/answer")'"

# unlock_cmd: foyer-unlock as dropbear runs it for "ssh root@HOST CMD"; CMD leaves $tmp/ran.
unlock_cmd() {
        rm -f "$tmp/ran"
        SSH_ORIGINAL_COMMAND="echo ran >'$tmp/ran'" timeout 30 setsid "$unlock"
}
not_run() {
        local rc=$1
        cat "$tmp/out"
        [ ! -e "$tmp/ran" ] || fail "the command ran while a passphrase was asked for"
        [ "$rc" = 1 ] || fail "exit status $rc, not 1"
        grep -q 'a passphrase is still asked for: not running the command' "$tmp/out" || fail "it does not say why the command did not run"
}

echo "== the same question, a command asked for, no input"
rc=0
unlock_cmd </dev/null >"$tmp/out" 2>&1 || rc=$?
not_run "$rc"
[ ! -s "$tmp/answer" ] || fail "something was answered: '$(cat "$tmp/answer")'"

echo "== the same question, a command asked for, an empty pipe"
rc=0
: | unlock_cmd >"$tmp/out" 2>&1 || rc=$?
not_run "$rc"

echo "== the same question, the passphrase on the input, then the command"
printf 'battery staple\n' | unlock_cmd >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "exit status $?"; }
wait "$asker" || true
asker=
[ "$(cat "$tmp/answer")" = "battery staple" ] || fail "the question got '$(cat "$tmp/answer")', not the passphrase"
[ -e "$tmp/ran" ] || { cat "$tmp/out"; fail "the command did not run after the unlocking"; }

echo "== a question asked as the unlocking looked over, a command asked for"
touch "$tmp/late"
rc=0
unlock_cmd </dev/null >"$tmp/out" 2>&1 || rc=$?
[ ! -e "$tmp/late" ] || fail "the stand-in systemctl asked no late question"
not_run "$rc"
echo OK
