#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# sid.sh CACHEDIR: Debian unstable, the newest systemd and kernel Debian ships, as a real root that
# builds its own initrd (`root sid`), as roots/trixie.sh does for trixie. When debootstrap of sid
# itself fails (the archive can be mid-transition, with packages that cannot be installed
# together), the scenario is skipped (exit 77) with that reason; any other failure fails it.
rc=0
"$(dirname "$(realpath "$0")")/../mkroot.sh" "${1:?usage: sid.sh CACHEDIR}" sid || rc=$?
if [[ $rc == 3 ]]; then
        echo "SKIP: debootstrap of Debian sid failed (the archive may be mid-transition; its output is above)" >&2
        exit 77
fi
exit "$rc"
