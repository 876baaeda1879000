#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""dhcp-rootpath.py SERVERS_DIR: servers/dhcp-rootpath.py as QEMU's -netdev socket sees it.

Starts the responder on a loopback port, connects once and hangs up (as vm-run's probe does), then
connects as QEMU would and sends length-framed Ethernet frames: an ARP request (dropped), a
DHCPDISCOVER asking for option 17 (an offer of 10.0.3.15 from 10.0.3.1 with the root path, the
netmask, no router and no DNS, IP and UDP checksums right, broadcast), a DHCPREQUEST for it (the
ack), and a DHCPREQUEST naming another server (no answer). The responder is stopped at the end."""

import os
import socket
import struct
import subprocess
import sys
import time

ROOT_PATH = b"nfs4:10.0.2.2:/srv/root:port=20049"
MAC = bytes.fromhex("525400123457")


def fail(msg):
    sys.exit(f"FAIL: {msg}")


# The Internet checksum, written here again on purpose rather than imported from the responder: the
# test checks the responder's checksums, so it must not share their code.
def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def dhcp_frame(msg_type, xid, extra=b""):
    bootp = struct.pack("!BBBB4sHH4s4s4s4s16s64s128s", 1, 1, 6, 0, xid, 0, 0x8000, b"\0" * 4, b"\0" * 4,
                        b"\0" * 4, b"\0" * 4, MAC + b"\0" * 10, b"", b"")
    bootp += b"\x63\x82\x53\x63" + bytes([53, 1, msg_type]) + bytes([55, 4, 1, 3, 6, 17]) + extra + b"\xff"
    udp = struct.pack("!HHHH", 68, 67, 8 + len(bootp), 0) + bootp
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, b"\0" * 4, b"\xff" * 4)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return b"\xff" * 6 + MAC + b"\x08\x00" + ip + udp


def send(conn, frame):
    conn.sendall(struct.pack("!I", len(frame)) + frame)


def recv_frame(conn, timeout):
    conn.settimeout(timeout)
    try:
        head = conn.recv(4, socket.MSG_WAITALL)
    except socket.timeout:
        return None
    if len(head) != 4:
        fail("the responder closed the connection")
    return conn.recv(struct.unpack("!I", head)[0], socket.MSG_WAITALL)


def check_reply(frame, want_type):
    if frame is None:
        fail(f"no answer (message type {want_type} expected)")
    if frame[0:6] != b"\xff" * 6 or frame[12:14] != b"\x08\x00":
        fail("the answer is not a broadcast IPv4 frame")
    ip = frame[14:34]
    if checksum(ip) != 0:
        fail("the IP header checksum is wrong")
    if ip[9] != 17 or socket.inet_ntoa(ip[12:16]) != "10.0.3.1" or ip[16:20] != b"\xff" * 4:
        fail("the answer is not UDP from 10.0.3.1 to the broadcast address")
    udp = frame[34:]
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, len(udp))
    if struct.unpack("!HH", udp[0:4]) != (67, 68) or checksum(pseudo + udp) != 0:
        fail("the UDP ports or checksum are wrong")
    bootp = udp[8:]
    if bootp[0] != 2 or bootp[4:8] != b"\x12\x34\x56\x78" or bootp[28:34] != MAC:
        fail("not a BOOTREPLY to our xid and MAC")
    if socket.inet_ntoa(bootp[16:20]) != "10.0.3.15":
        fail(f"offered {socket.inet_ntoa(bootp[16:20])}, not 10.0.3.15")
    opts, i = {}, 240
    while bootp[i] != 255:
        opts[bootp[i]] = bootp[i + 2:i + 2 + bootp[i + 1]]
        i += 2 + bootp[i + 1]
    if opts.get(53) != bytes([want_type]):
        fail(f"message type {opts.get(53)}, not {want_type}")
    if opts.get(17) != ROOT_PATH:
        fail(f"option 17 is {opts.get(17)!r}, not {ROOT_PATH!r}")
    if opts.get(54) != socket.inet_aton("10.0.3.1") or opts.get(1) != socket.inet_aton("255.255.255.0"):
        fail("no server identifier 10.0.3.1 or netmask /24")
    if 3 in opts or 6 in opts:
        fail("a router or DNS option: the guest's default route would move to this card")
    print(f"ok: message type {want_type} with option 17 {opts[17].decode()}")


def main():
    servers = sys.argv[1]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([sys.executable, os.path.join(servers, "dhcp-rootpath.py"), str(port),
                             ROOT_PATH.decode()], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()     # vm-run's probe
                break
            except OSError:
                time.sleep(0.1)
        else:
            fail("the responder did not listen")
        conn = socket.create_connection(("127.0.0.1", port))
        arp = b"\xff" * 6 + MAC + b"\x08\x06" + bytes(28)
        send(conn, arp)
        if recv_frame(conn, 1) is not None:
            fail("an ARP request was answered")
        xid = b"\x12\x34\x56\x78"
        send(conn, dhcp_frame(1, xid))
        check_reply(recv_frame(conn, 10), 2)
        server_id = bytes([54, 4]) + socket.inet_aton("10.0.3.1")
        send(conn, dhcp_frame(3, xid, bytes([50, 4]) + socket.inet_aton("10.0.3.15") + server_id))
        check_reply(recv_frame(conn, 10), 5)
        send(conn, dhcp_frame(3, xid, bytes([54, 4]) + socket.inet_aton("10.0.2.2")))
        if recv_frame(conn, 1) is not None:
            fail("a request to another server was answered")
        conn.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    for want in ("DHCPDISCOVER from 52:54:00:12:34:57", "option 17 requested: True"):
        if want not in out:
            fail(f"the responder's log has no '{want}':\n{out}")
    print("ok")


if __name__ == "__main__":
    main()
