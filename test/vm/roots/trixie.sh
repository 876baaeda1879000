#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# trixie.sh CACHEDIR: Debian 13 (systemd 257, kernel 6.12) as a real root that builds its own
# initrd (`root trixie`): mkroot.sh's tree of suite trixie, with its kernel, its cryptsetup and LVM
# tools and systemd-boot's stub. run-scenario.sh boots the tree's kernel with an image made by
# `foyer build --root` of the tree, and puts a UKI on the tree's stub.
exec "$(dirname "$(realpath "$0")")/../mkroot.sh" "${1:?usage: trixie.sh CACHEDIR}" trixie
