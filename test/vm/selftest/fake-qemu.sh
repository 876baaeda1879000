#!/bin/bash
# A stand-in for qemu-system-x86_64 that plays a scripted console, for vm-run's self-test.
# FAKE_MODE: pass (boot, prompt, echo a command, report), panic, hang, exit, disk (pass, and before
# it, like a guest, counts its boots in byte 0 of the first disk: prints the count before this boot,
# then writes it plus one; with snapshot=on the write is dropped at exit, as QEMU's; and prints the
# first line of the -initrd file, as "INITRD: LINE").
# FAKE_ARGS_LOG: a file that gets the command line, one line per start.
# A second serial port (-serial pipe:PATH, vm-run's serial2) gets a shell prompt that runs one command.
# The monitor (-qmp unix:PATH,server=on,wait=off) is fake-qmp.py, which may write to the console.
# A forwarded port (-netdev user,...,hostfwd=tcp:127.0.0.1:PORT-:GUESTPORT) is fake-hostfwd.py.
# A TPM's control socket (-chardev socket,id=chrtpm,path=SOCK) is asked CMD_GET_CAPABILITY once,
# and the answer shown on the console (TPM: ctrl answered result=R caps=0xC), as QEMU asks at start.
for a in "$@"; do
        case $a in
        pipe:*) port2=${a#pipe:} ;;
        unix:*,server=on,wait=off) qmp=${a#unix:}; qmp=${qmp%%,*} ;;
        file=*,format=*) [[ -n ${disk:-} ]] || disk=$a ;;
        -initrd) next_is_initrd=1; continue ;;
        user,*hostfwd=tcp:127.0.0.1:*) fwd=${a#*hostfwd=tcp:127.0.0.1:}; fwd=${fwd%%,*}; host_port=${fwd%%-*}; guest_port=${fwd##*-:} ;;
        socket,id=chrtpm,path=*) tpm_sock=${a#*path=} ;;
        esac
        [[ -z ${next_is_initrd:-} ]] || { initrd=$a; next_is_initrd=; }
done
if [[ -n ${FAKE_ARGS_LOG:-} ]]; then
        printf '%s\n' "$*" >>"$FAKE_ARGS_LOG"
fi
if [[ -n ${qmp:-} ]]; then
        python3 "$(dirname "$0")/fake-qmp.py" "$qmp" &
        qmp_pid=$!
        # It shares the console: when "QEMU" exits, so must the monitor.
        trap 'kill $qmp_pid 2>/dev/null' EXIT
fi
if [[ -n ${port2:-} ]]; then
        {
                printf 'debug-sh# ' >"$port2.out"
                IFS= read -r -d $'\r' c2 <"$port2.in"
                printf '%s\r\n' "$c2" >"$port2.out"
                eval "$c2" 2>&1 | sed 's/$/\r/' >"$port2.out"
        } &
fi
printf '[    0.000000] Linux version 6.1.0 (fake)\r\n'
if [[ -n ${host_port:-} ]]; then
        python3 "$(dirname "$0")/fake-hostfwd.py" "$host_port" "$guest_port"
fi
if [[ -n ${tpm_sock:-} ]]; then
        python3 -c '
import socket, struct, sys
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[1])
c.sendall(struct.pack(">I", 1))
r, caps = struct.unpack(">II", c.recv(8))
print(f"TPM: ctrl answered result={r} caps={caps:#x}\r")' "$tpm_sock" || printf 'TPM: no answer\r\n'
fi
printf '\033[0;32m  OK  \033[0m] Reached target \033[0;1;39minitrd.target\033[0m.\r\n'
case ${FAKE_MODE:-pass} in
panic) printf '[    1.0] Kernel panic - not syncing: Attempted to kill init!\r\n'; sleep 30 ;;
hang)  sleep 30 ;;
exit)  exit 0 ;;
disk)
        file=${disk#file=}; file=${file%%,*}
        format=${disk#*,format=}; format=${format%%,*}
        count=$(qemu-io -f "$format" -c 'read -v 0 1' "$file" | sed -n 's/^00000000: *\([0-9a-f][0-9a-f]\) .*/\1/p')
        printf 'DISK: format=%s boots-before=%d\r\n' "$format" "$((16#$count))"
        [[ -z ${initrd:-} ]] || printf 'INITRD: %s\r\n' "$(head -n1 "$initrd")"
        [[ $disk == *,snapshot=on* ]] || qemu-io -f "$format" -c "write -P $((16#$count + 1)) 0 1" "$file" >/dev/null
        ;;
esac
printf 'Press Enter for maintenance\r\n(or press Control-D to continue): '
IFS= read -r -d $'\r' _
printf '\r\nsh-5.2# '
IFS= read -r -d $'\r' cmd
printf '%s\r\n' "$cmd"
eval "$cmd" | sed 's/$/\r/'
printf 'FOYER-REPORT root=reached rw=1 fstype=ext4 initrd_ms=1234 failed_units=0\r\n'
sleep 30
