#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bookworm-installer.sh CACHEDIR: Debian 12 with its own kernel, cryptsetup and lvm2, and the
# /etc/crypttab and /etc/fstab of the installer's guided "encrypted LVM" layout (mkroot.sh's
# suite bookworm-installer; the disk is mkdisk.sh's recipe "installer"). run-scenario.sh boots
# the tree's kernel with an image made by `foyer build --root` of the tree.
exec "$(dirname "$(realpath "$0")")/../mkroot.sh" "${1:?usage: bookworm-installer.sh CACHEDIR}" bookworm-installer
