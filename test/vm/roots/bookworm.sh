#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bookworm.sh CACHEDIR: the default real root of the VM scenarios (`root bookworm`), Debian 12 as
# mkroot.sh makes it. Each root recipe here takes the disk cache directory, makes its tree there
# once (named after the recipe and a hash of what makes it, never root-*: mkroot.sh removes those
# of its old recipes) and prints the tree's path; the disks are keyed by that path.
exec "$(dirname "$(realpath "$0")")/../mkroot.sh" "$@"
