#!/usr/bin/python3
# A stand-in for swtpm, for vm-run's self-test: takes swtpm's command line
# (socket --tpm2 --tpmstate dir=STATE --ctrl type=unixio,path=SOCK), writes "start PID N ARGS"
# (N: the how-many-th start on this state, counted in STATE/starts as a TPM keeps its state) and,
# on SIGTERM, "stop PID" to $FAKE_SWTPM_LOG, and answers the control channel's
# CMD_GET_CAPABILITY (result 0 and the capabilities 0x5354, "ST" for stub) as swtpm does.
import os
import signal
import socket
import struct
import sys

args = sys.argv[1:]
log = os.environ['FAKE_SWTPM_LOG']
if args[:2] != ['socket', '--tpm2'] or '--tpmstate' not in args or '--ctrl' not in args:
    sys.exit('fake-swtpm: unexpected command line')
state = args[args.index('--tpmstate') + 1].removeprefix('dir=')
if not os.path.isdir(state):
    sys.exit(f'fake-swtpm: no state directory {state}')
path = args[args.index('--ctrl') + 1].split('path=', 1)[1]
with open(os.path.join(state, 'starts'), 'a+') as f:
    f.write('x')
    f.seek(0)
    starts = len(f.read())
with open(log, 'a') as f:
    f.write(f'start {os.getpid()} {starts} ' + ' '.join(args) + '\n')


def stop(sig, frame):
    with open(log, 'a') as f:
        f.write(f'stop {os.getpid()}\n')
    if os.path.exists(path):
        os.unlink(path)
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
while True:
    conn, _ = srv.accept()
    while (cmd := conn.recv(4)):
        if struct.unpack('>I', cmd)[0] == 1:
            conn.sendall(struct.pack('>II', 0, 0x5354))
    conn.close()
