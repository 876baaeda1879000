#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# rpc-probe.py PORT PROGRAM VERSION [PATH]: an ONC RPC call over TCP to 127.0.0.1:PORT, as a client
# that was told the port (no portmapper): the NULL procedure of PROGRAM (100003 NFS, 100005 MOUNT)
# VERSION, or with PATH, MOUNT v3's MNT of PATH (the export must exist and be mountable). Exit 0 when
# the server answers so, 1 otherwise, with what it said. For the self-test of servers/nfs.sh.
import socket
import struct
import sys

port, prog, vers = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
path = sys.argv[4] if len(sys.argv) > 4 else None


def xdr_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


# AUTH_SYS as root (uid 0, gid 0, no groups), as the guest's mount.
cred_body = struct.pack(">I", 0) + xdr_string("probe") + struct.pack(">III", 0, 0, 0)
cred = struct.pack(">II", 1, len(cred_body)) + cred_body
proc, args = (1, xdr_string(path)) if path else (0, b"")
call = struct.pack(">IIIIII", 0x1234, 0, 2, prog, vers, proc) + cred + struct.pack(">II", 0, 0) + args
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
buf = b""
while len(buf) < 4 or len(buf) < 4 + (struct.unpack(">I", buf[:4])[0] & 0x7FFFFFFF):
    data = s.recv(65536)
    if not data:
        sys.exit(f"rpc-probe: the connection closed after {len(buf)} bytes")
    buf += data
reply = buf[4:]
xid, mtype, rstat = struct.unpack(">III", reply[:12])
if mtype != 1 or rstat != 0:
    sys.exit(f"rpc-probe: call denied (reply_stat {rstat})")
flavour, vlen = struct.unpack(">II", reply[12:20])
off = 20 + vlen + (-vlen % 4)
(astat,) = struct.unpack(">I", reply[off:off + 4])
if astat != 0:
    sys.exit(f"rpc-probe: program {prog} version {vers}: accept_stat {astat} (1 unavailable, 2 version mismatch)")
if path:
    (mstat,) = struct.unpack(">I", reply[off + 4:off + 8])
    if mstat != 0:
        sys.exit(f"rpc-probe: MNT {path}: status {mstat} (2 no such entry, 13 access denied)")
    print(f"rpc-probe: MNT {path} ok")
else:
    print(f"rpc-probe: program {prog} version {vers} answers on port {port}")
