#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# nbd.sh PORT EXPORT IMAGE: serves the raw disk image IMAGE by NBD on 127.0.0.1:PORT under the export
# name EXPORT, with the host's qemu-nbd (package qemu-utils), until killed (SIGTERM). The guest
# writes into a qcow2 overlay of this run's own (IMAGE, a cached disk, is never written), kept
# across the guest's reconnects and removed at the end; several clients may be connected at once.
# For a scenario: `server NBD 1 servers/nbd.sh @PORT_NBD@ root IMAGE`, and in the guest
# root=nbd:10.0.2.2:@PORT_NBD@:root (or nbd-client 10.0.2.2 @PORT_NBD@ -N root /dev/nbd0).
set -euo pipefail

port=${1:?usage: nbd.sh PORT EXPORT IMAGE}
export_name=${2:?usage: nbd.sh PORT EXPORT IMAGE}
image=$(realpath "${3:?usage: nbd.sh PORT EXPORT IMAGE}")
[[ -r $image ]] || { echo "nbd.sh: no image $image" >&2; exit 1; }

# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
server_scratch nbd
qemu-img create -q -f qcow2 -b "$image" -F raw "$dir/overlay.qcow2"
echo "nbd.sh: $image (overlay $dir/overlay.qcow2) as export '$export_name' on 127.0.0.1:$port"
# --persistent: the server outlives a client's disconnect (the initrd's nbd-client and the real
# root's may connect one after the other); --shared: more than one at a time.
qemu-nbd --bind 127.0.0.1 --port "$port" --export-name "$export_name" --persistent --shared 8 \
        --format qcow2 --cache writeback "$dir/overlay.qcow2" &
pid=$!
wait "$pid"
