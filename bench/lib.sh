# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by bench/build.sh and bench/boot.sh: the tree, kernel and builders of one Debian suite.
#
# A suite is benchmarked on what it ships: its systemd, libraries, kernel and dracut. For the build
# host's own suite that is the host (foyer build, the host's dracut); for another suite it is the
# tree bench/mktree-dracut.sh makes (test/foyer/mktree.sh's tree with dracut-core installed), which
# foyer reads with --root and dracut runs in, chrooted. Both builders thus read the same files.

benchdir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# bench_suite SUITE: sets bench_root (/ for the host), bench_kver and bench_kernel (the vmlinuz).
bench_suite() {
        local suite=$1 host d
        # shellcheck disable=SC1091 # the host's os-release
        host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
        bench_kver=
        if [[ $suite == "$host" ]]; then
                bench_root=/
                if [[ -n ${FOYER_KVER:-} ]]; then
                        bench_kver=$FOYER_KVER
                else
                        for d in /usr/lib/modules/*/; do
                                [[ -e $d/modules.order && -e /boot/vmlinuz-$(basename "$d") ]] && bench_kver=$(basename "$d")
                        done
                fi
                bench_kernel=/boot/vmlinuz-$bench_kver
                if ! command -v dracut >/dev/null; then
                        echo "installing dracut-core on the host ..." >&2
                        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dracut-core >&2
                fi
        else
                bench_root=$("$benchdir/mktree-dracut.sh" "$suite" "${FOYER_TREE_CACHE:-/var/cache/foyer-trees}")
                for d in "$bench_root"/usr/lib/modules/*/; do
                        [[ -e $d/modules.order ]] && bench_kver=$(basename "$d")
                done
                bench_kernel=$bench_root/boot/vmlinuz-$bench_kver
        fi
        [[ -n $bench_kver && -r $bench_kernel ]] || { echo "bench: no kernel with modules for $suite" >&2; return 1; }
}

# The systemd version of the suite's tree, from its libsystemd-shared-NNN.so.
bench_systemd_version() {
        local f
        f=$(find "$bench_root/usr/lib" -maxdepth 3 -name 'libsystemd-shared-*.so' -print -quit)
        f=${f##*/libsystemd-shared-}
        echo "${f%%[!0-9]*}"
}

# bench_stage BUILDDIR: installs the build, stripped, into BUILDDIR/bench-stage once and sets
# $bench_stage_dir. The images are made from it: foyer's programs as a package installs them
# (Debian's strips them), not the build tree's, which carry debug information. The scripts call it
# before timing anything; bench_foyer_run calls it if they did not.
bench_stage() {
        local dir
        [[ -z ${bench_stage_dir:-} ]] || return 0
        # Absolute: meson reads a relative --destdir from the build directory, not from here.
        dir=$(realpath "$1")/bench-stage
        rm -rf "$dir"
        meson install -C "$1" --no-rebuild --quiet --strip --destdir "$dir" >/dev/null
        bench_stage_dir=$dir
}

# bench_foyer_run BUILDDIR ARGS...: foyer ARGS... with the programs and units of bench_stage.
bench_foyer_run() {
        bench_stage "$1"
        shift
        FOYER_GENERATOR_DIR=$bench_stage_dir/usr/lib/foyer/generators \
                FOYER_UNIT_DIR=$bench_stage_dir/usr/lib/foyer/units \
                FOYER_HELPER_DIR=$bench_stage_dir/usr/lib/foyer "$bench_stage_dir/usr/bin/foyer" "$@"
}

# bench_foyer BUILDDIR OUT: foyer's generic image of the suite (its default compression, zstd).
bench_foyer() {
        bench_foyer_run "$1" build --root "$bench_root" --kver "$bench_kver" -o "$2" >/dev/null 2>&1
}

# bench_foyer_hostonly BUILDDIR OUT: foyer build --hostonly on the build host (the host's suite only:
# a tree given with --root is not the running system, whose devices host-only follows).
bench_foyer_hostonly() {
        bench_foyer_run "$1" build --hostonly --kver "$bench_kver" -o "$2" >/dev/null 2>&1
}

# bench_dracut_hostonly OUT [ARG...]: dracut --hostonly on the build host, with its defaults and
# the ARGs (e.g. --zstd).
bench_dracut_hostonly() {
        local out=$1
        shift
        dracut --quiet --force --hostonly "$@" --kver "$bench_kver" "$out" >/dev/null 2>&1
}

# bench_dracut OUT [ARG...]: dracut --no-hostonly of the suite, with its defaults and the ARGs (e.g.
# --zstd). In a tree it runs chrooted, in a mount namespace of its own with /proc, /sys and /dev,
# which disappear with it.
bench_dracut() {
        local out=$1
        shift
        if [[ $bench_root == / ]]; then
                dracut --quiet --force --no-hostonly "$@" --kver "$bench_kver" "$out" >/dev/null 2>&1
                return
        fi
        # shellcheck disable=SC2016 # expanded by the inner shell
        unshare --mount --propagation private /bin/sh -ec '
                t=$1 kver=$2
                mount --bind /dev "$t/dev"
                mount -t proc proc "$t/proc"
                mount -t sysfs sysfs "$t/sys"
                mount -t tmpfs tmpfs "$t/tmp"
                mount -t tmpfs tmpfs "$t/var/tmp"
                out=$3
                shift 3
                chroot "$t" dracut --quiet --force --no-hostonly "$@" --kver "$kver" /tmp/bench-dracut.img
                cp "$t/tmp/bench-dracut.img" "$out"' sh "$bench_root" "$bench_kver" "$out" "$@" >/dev/null 2>&1
}

# bench_measure LOG: "INIT REAL" from a console log: the kernel's time of "Run /init" and of the last
# "running in system mode" (the real root's PID 1), in seconds.
bench_measure() {
        awk '
                { sub(/\r$/, "") }
                /^\[ *[0-9.]+\] Run \/init/ { match($0, /[0-9]+\.[0-9]+/); init = substr($0, RSTART, RLENGTH) }
                /^\[ *[0-9.]+\] systemd\[1\]: systemd [0-9]+.* running in system mode/ {
                        match($0, /[0-9]+\.[0-9]+/); real = substr($0, RSTART, RLENGTH) }
                END { if (init == "" || real == "") exit 1; printf "%.2f %.2f\n", init, real }
        ' "$1"
}

# bench_median: the median of the numbers on stdin, one a line.
bench_median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# bench_append_archive IMAGE DIR OUT: OUT is IMAGE with DIR's files appended as a newc archive (owned
# by root), which the kernel unpacks over the archives before it. OUT appears complete or not at all.
bench_append_archive() {
        local image=$1 dir=$2 out=$3
        cp "$image" "$out.tmp"
        # The kernel reads an uncompressed archive only at a multiple of 4 bytes; it skips the zeros.
        truncate -s %4 "$out.tmp"
        (cd "$dir" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >>"$out.tmp"
        mv "$out.tmp" "$out"
}

# bench_generators FOYER IMAGE: the names of IMAGE's generators (foyer's and systemd's), one a line,
# as the foyer binary FOYER lists them.
bench_generators() {
        "$1" ls "$2" 2>/dev/null | awk '{ print $NF }' | sed -n 's|^usr/lib/systemd/system-generators/\([^/]*\)$|\1|p'
}

# bench_boot BUILDDIR LOG SCENARIO KERNEL INITRD APPEND [DISK...]: boots KERNEL with INITRD, the DISKs
# and APPEND (may be empty) on the kernel command line through SCENARIO, as every bench boot is made
# (test/vm/vm-run, FOYER_VM_SMP virtual CPUs, default 2; under the command prefix BENCH_VM_SLOT), the
# console in LOG and vm-run's messages in LOG.err; prints "INIT REAL" (bench_measure). Fails if the
# boot does.
bench_boot() {
        local builddir=$1 log=$2 scenario=$3 kernel=$4 initrd=$5 append=$6 d slot drives=()
        shift 6
        read -ra slot <<<"${BENCH_VM_SLOT:-}"
        for d in "$@"; do drives+=(--drive "$d"); done
        "${slot[@]}" "$builddir/test/vm/vm-run" --smp "${FOYER_VM_SMP:-2}" --kernel "$kernel" --initrd "$initrd" \
                "${drives[@]}" ${append:+--append "$append"} --log "$log" "$scenario" >/dev/null 2>"$log.err" &&
                bench_measure "$log"
}
