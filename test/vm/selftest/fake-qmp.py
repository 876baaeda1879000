#!/usr/bin/python3
# A stand-in for QEMU's monitor (QMP) on a unix socket, for vm-run's self-test (see fake-qemu.sh).
# Greets, wants qmp_capabilities first, answers query-status, and device_del: for the id
# "rootdisk" it says on the console (this process's stdout) that the slot went down, then sends
# DEVICE_DELETED half a second later; any other id gets the error QEMU gives. send-key prints the
# keys it got on the console ("KEYS: qcode:shift+qcode:z"). quit ends "QEMU"
# (the fake's whole process group, this process too) after its reply, as QEMU does.
import json
import os
import signal
import socket
import sys
import threading
import time

path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
conn, _ = srv.accept()
lock = threading.Lock()


def send(obj):
    with lock:
        conn.sendall((json.dumps(obj) + "\r\n").encode())


def stamp():
    t = time.time()
    return {"seconds": int(t), "microseconds": int((t % 1) * 1e6)}


def unplug(dev):
    sys.stdout.write("[    2.500000] pcieport 0000:00:01.0: pciehp: Slot(0): Link Down\r\n")
    sys.stdout.flush()
    time.sleep(0.5)
    # As QEMU does: the virtio backend's event (no "device") comes before the device's own.
    send({"timestamp": stamp(), "event": "DEVICE_DELETED",
          "data": {"path": "/machine/peripheral/" + dev + "/virtio-backend"}})
    send({"timestamp": stamp(), "event": "DEVICE_DELETED",
          "data": {"path": "/machine/peripheral/" + dev, "device": dev}})


send({"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": "fake"},
              "capabilities": ["oob"]}})
negotiated = False
buf = b""
while True:
    data = conn.recv(4096)
    if not data:
        break
    buf += data
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        if not line.strip():
            continue
        cmd = json.loads(line)
        name = cmd.get("execute")
        if name == "qmp_capabilities":
            negotiated = True
            send({"return": {}})
        elif not negotiated:
            send({"error": {"class": "CommandNotFound",
                            "desc": "Expecting capabilities negotiation with 'qmp_capabilities'"}})
        elif name == "query-status":
            # An unrelated event first: the reply is told apart from it.
            send({"timestamp": stamp(), "event": "RTC_CHANGE", "data": {"offset": 0}})
            send({"return": {"status": "running", "singlestep": False, "running": True}})
        elif name == "send-key":
            # What the keyboard got, on the console, for the scenario to expect.
            keys = cmd.get("arguments", {}).get("keys", [])
            sys.stdout.write("KEYS: %s\r\n" % "+".join(k.get("type", "") + ":" + k.get("data", "") for k in keys))
            sys.stdout.flush()
            send({"return": {}})
        elif name == "quit":
            send({"return": {}})
            conn.close()
            os.killpg(os.getpgid(0), signal.SIGKILL)
        elif name == "device_del":
            dev = cmd.get("arguments", {}).get("id", "")
            if dev == "rootdisk":
                send({"return": {}})
                threading.Thread(target=unplug, args=(dev,)).start()
            else:
                send({"error": {"class": "DeviceNotFound", "desc": "Device '%s' not found" % dev}})
        else:
            send({"error": {"class": "CommandNotFound", "desc": "The command %s has not been found" % name}})
os._exit(0)
