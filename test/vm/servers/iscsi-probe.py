#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# iscsi-probe.py PORT TARGET INITIATOR: an iSCSI login (RFC 7143) to the target TARGET on
# 127.0.0.1:PORT as the initiator INITIATOR, its security stage only (AuthMethod=None): exit 0 when
# the target accepts it (the target exists and lets that initiator in), 1 with the status otherwise.
# For the self-test of servers/iscsi.sh; no kernel session is made.
import socket
import struct
import sys

port, target, initiator = int(sys.argv[1]), sys.argv[2], sys.argv[3]
data = f"InitiatorName={initiator}\0SessionType=Normal\0TargetName={target}\0AuthMethod=None\0".encode()
bhs = bytearray(48)
bhs[0] = 0x40 | 0x03            # immediate, Login Request
bhs[1] = 0x80 | (0 << 2) | 1    # Transit to the next stage; CSG security, NSG operational
bhs[5:8] = len(data).to_bytes(3, "big")
bhs[8:14] = bytes([0x40, 0, 0, 0x01, 0, 0])    # ISID: random-qualifier format
struct.pack_into(">I", bhs, 16, 1)              # Initiator Task Tag
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(bytes(bhs) + data + b"\0" * (-len(data) % 4))
resp = b""
while len(resp) < 48:
    chunk = s.recv(4096)
    if not chunk:
        sys.exit("iscsi-probe: the connection closed before a login response")
    resp += chunk
if resp[0] & 0x3F != 0x23:
    sys.exit(f"iscsi-probe: not a login response (opcode {resp[0] & 0x3f:#x})")
status_class, detail = resp[36], resp[37]
if status_class != 0:
    sys.exit(f"iscsi-probe: login to {target} as {initiator} refused: status {status_class:#04x}{detail:02x} "
             "(0x0201 authentication failed, 0x0202 forbidden, 0x0203 no such target)")
print(f"iscsi-probe: login to {target} as {initiator} accepted")
