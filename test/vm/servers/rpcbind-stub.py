#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# rpcbind-stub.py SOCKET: answers "yes" to every call on the unix socket SOCKET, where a local RPC
# server looks for rpcbind (/run/rpcbind.sock). nfs.sh runs it in ganesha's private /run: ganesha
# 4.x will not serve NFSv3 unless its registration with rpcbind (RPCBPROC_SET/UNSET, PMAPPROC_SET)
# succeeds, and the clients are told the ports (port=, mountport=) instead of asking a portmapper,
# so nothing has to be registered anywhere. No network port is opened.
import os
import socket
import struct
import sys
import threading

path = sys.argv[1]


def serve(conn):
    with conn:
        buf = b""
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            # Record marking: a 4-byte header (last-fragment bit, length) per fragment.
            while len(buf) >= 4:
                (mark,) = struct.unpack(">I", buf[:4])
                length = mark & 0x7FFFFFFF
                if len(buf) < 4 + length:
                    break
                call, buf = buf[4:4 + length], buf[4 + length:]
                xid = call[:4]
                # xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE (flavour 0, length 0), SUCCESS, TRUE.
                reply = xid + struct.pack(">IIIIII", 1, 0, 0, 0, 0, 1)
                conn.sendall(struct.pack(">I", 0x80000000 | len(reply)) + reply)


if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
