#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# fake-server.py NAME MARKER PORT...: a stand-in for a server line's daemon (servers.sh): listens on
# 127.0.0.1 at each PORT, answers each connection with "SERVER NAME PORT", and on SIGTERM writes
# "stopped" to MARKER before it exits, as the real server scripts clean up.
import selectors
import signal
import socket
import sys

name, marker, ports = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]


def stop(signum, frame):
    with open(marker, "w") as f:
        f.write("stopped\n")
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
sel = selectors.DefaultSelector()
for port in ports:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen()
    sel.register(s, selectors.EVENT_READ, port)
print(f"fake server {name} listening on {ports}", flush=True)
while True:
    for key, _ in sel.select():
        c, _ = key.fileobj.accept()
        try:
            c.sendall(f"SERVER {name} {key.data}\n".encode())
        except OSError:
            pass
        c.close()
