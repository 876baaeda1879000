#!/usr/bin/python3
# What QEMU's user network does for hostfwd=tcp:127.0.0.1:PORT-:GUESTPORT, for vm-run's self-test
# (see fake-qemu.sh): listen on the loopback PORT, with SO_REUSEADDR as libslirp does (vm-run
# holds the port bound until it ends), and answer each connection with one line naming the
# "guest" ($FAKE_GUEST_ID) and its port, saying so on the console (stdout). Says there too when it
# listens, and returns then, leaving a child (in QEMU's process group) to serve.
import os
import socket
import sys

port, guest_port = int(sys.argv[1]), int(sys.argv[2])
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', port))
srv.listen(4)
print(f'HOSTFWD: listening on 127.0.0.1:{port} for port {guest_port}\r', flush=True)
if os.fork() > 0:
    sys.exit(0)
while True:
    conn, _ = srv.accept()
    print('HOSTFWD: a connection\r', flush=True)
    conn.sendall(f'FAKE-GUEST {os.environ.get("FAKE_GUEST_ID", "-")} {guest_port}\n'.encode())
    conn.close()
