#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""dhcp-rootpath.py PORT ROOT_PATH: a DHCP-only responder that hands out a root path (option 17).

QEMU's user network cannot send option 17 (libslirp's bootp.c writes a fixed set of options), so a
root=dhcp guest gets a second network card whose Ethernet frames QEMU sends over a TCP connection
(-netdev socket,connect=127.0.0.1:PORT: each frame as a 4-byte big-endian length and the frame), the
`socket-net` line of vm-run. This program is the other end of that connection: it listens on
127.0.0.1:PORT only, answers DHCPDISCOVER with an offer and DHCPREQUEST with an ack of 10.0.3.15/24
(another subnet than the user network's; no router and no DNS, so the guest's default route stays on
the user-network card, which reaches the NFS server at 10.0.2.2), from the server 10.0.3.1, with
option 17 = ROOT_PATH (sent whether or not the client asked for it; the guest asks). Every other frame
is dropped. It serves one connection after the other (QEMU's, and vm-run's probe, which only connects)
until killed, logging each exchange to stdout.

For a scenario:
    server  DHCP 1 python3 @TESTDIR@/servers/dhcp-rootpath.py @PORT_DHCP@ nfs4:10.0.2.2:/srv/root:port=@PORT_NFS@
    socket-net @PORT_DHCP@
"""

import socket
import struct
import sys
import threading

CLIENT_ADDR = "10.0.3.15"
SERVER_ADDR = "10.0.3.1"
NETMASK = "255.255.255.0"
SERVER_MAC = bytes.fromhex("525400aa0301")
LEASE_SECS = 3600
COOKIE = b"\x63\x82\x53\x63"
DISCOVER, OFFER, REQUEST, ACK = 1, 2, 3, 5


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def parse_options(data):
    """The DHCP options after the cookie: {code: bytes}; None if malformed."""
    opts, i = {}, 0
    while i < len(data):
        code = data[i]
        if code == 255:
            return opts
        if code == 0:
            i += 1
            continue
        if i + 1 >= len(data) or i + 2 + data[i + 1] > len(data):
            return None
        opts[code] = data[i + 2:i + 2 + data[i + 1]]
        i += 2 + data[i + 1]
    return opts


def parse_dhcp(frame):
    """(message type, xid, client MAC, options, flags) of a DHCP request in an Ethernet frame, or None."""
    if len(frame) < 14 + 20 + 8 + 240 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    if ip[0] >> 4 != 4 or ip[9] != 17 or len(ip) < ihl + 8 + 240:
        return None
    udp = ip[ihl:]
    if struct.unpack("!H", udp[2:4])[0] != 67:
        return None
    bootp = udp[8:]
    if bootp[0] != 1 or bootp[1] != 1 or bootp[2] != 6 or bootp[236:240] != COOKIE:
        return None
    opts = parse_options(bootp[240:])
    if opts is None or len(opts.get(53, b"")) != 1:
        return None
    return opts[53][0], bootp[4:8], bootp[28:34], opts, bootp[10:12]


def option(code, value):
    return bytes([code, len(value)]) + value


def reply(msg_type, xid, mac, flags, root_path):
    """The Ethernet frame of an offer or ack, broadcast (the client has no address yet)."""
    a = socket.inet_aton
    bootp = struct.pack("!BBBB4sHH4s4s4s4s16s64s128s", 2, 1, 6, 0, xid, 0, struct.unpack("!H", flags)[0],
                        b"\0" * 4, a(CLIENT_ADDR), a(SERVER_ADDR), b"\0" * 4, mac + b"\0" * 10, b"", b"")
    bootp += COOKIE + option(53, bytes([msg_type])) + option(54, a(SERVER_ADDR)) + \
        option(51, struct.pack("!I", LEASE_SECS)) + option(1, a(NETMASK)) + \
        option(17, root_path) + b"\xff"
    bootp += b"\0" * max(0, 300 - len(bootp))
    src, dst = a(SERVER_ADDR), a("255.255.255.255")
    udp_len = 8 + len(bootp)
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", 67, 68, udp_len, 0) + bootp
    udp = udp[:6] + struct.pack("!H", checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return b"\xff" * 6 + SERVER_MAC + b"\x08\x00" + ip + udp


def answer(frame, root_path):
    """The reply frame to a frame from the guest, or None."""
    req = parse_dhcp(frame)
    if not req:
        return None
    msg_type, xid, mac, opts, flags = req
    macs = mac.hex(":")
    if msg_type == DISCOVER:
        print(f"DHCPDISCOVER from {macs}: offering {CLIENT_ADDR}, root path {root_path.decode()}", flush=True)
        return reply(OFFER, xid, mac, flags, root_path)
    if msg_type == REQUEST:
        server = opts.get(54)
        if server is not None and server != socket.inet_aton(SERVER_ADDR):
            return None         # the client chose another server's offer
        asked = 17 in opts.get(55, b"")
        print(f"DHCPREQUEST from {macs}: ack {CLIENT_ADDR} (option 17 requested: {asked})", flush=True)
        return reply(ACK, xid, mac, flags, root_path)
    return None


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve(conn, root_path):
    with conn:
        while True:
            head = read_exact(conn, 4)
            if head is None:
                return
            frame = read_exact(conn, struct.unpack("!I", head)[0])
            if frame is None:
                return
            out = answer(frame, root_path)
            if out:
                conn.sendall(struct.pack("!I", len(out)) + out)


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or not sys.argv[2]:
        sys.exit("usage: dhcp-rootpath.py PORT ROOT_PATH")
    root_path = sys.argv[2].encode()
    if len(root_path) > 255:
        sys.exit("dhcp-rootpath.py: the root path is longer than a DHCP option (255 bytes)")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(sys.argv[1])))
    sock.listen(4)
    print(f"dhcp-rootpath.py: on 127.0.0.1:{sys.argv[1]}, root path {sys.argv[2]}", flush=True)
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve, args=(conn, root_path), daemon=True).start()


if __name__ == "__main__":
    main()
