# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# The steps of a root recipe that is another recipe's tree plus Debian packages (net-server.sh,
# trixie-net.sh), sourced by them:
#   apt_tree_begin CACHEDIR NAME BASE KEY...
#                     the cached tree CACHEDIR/tree-NAME-<hash> (keyed by the files KEY..., this
#                     file and BASE's path): if it is there, prints its path and exits 0; otherwise
#                     copies BASE to $t (the tree being made) and sets $tree
#   apt_tree_install PACKAGE...
#                     apt-get install in $t without recommends, with policy-rc.d saying no to
#                     every start (in a chroot, invoke-rc.d would run the init scripts); the file
#                     stays in $t, and apt's lists and caches go
#   apt_tree_mask UNIT...
#                     masks the units in $t (links to /dev/null in /etc/systemd/system, so that a
#                     scenario can unmask one)
#   apt_tree_require PROGRAM...
#                     fails naming the first program the tree does not have
#   apt_tree_commit   commits the tree, removes NAME's earlier trees, prints the path

# shellcheck source=SCRIPTDIR/../../lib/cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/cache.sh"

apt_tree_begin() {
        local cachedir=$1 base=$3
        apt_tree_name=$2
        apt_tree_cachedir=$cachedir
        shift 3
        tree=$cachedir/tree-$apt_tree_name-$(cache_key "$@" "${BASH_SOURCE[0]}" -- "$base")
        if cache_begin "$cachedir/tree-$apt_tree_name.lock" "$tree"; then
                echo "$tree"
                exit 0
        fi
        cp -a "$base" "$tree.tmp"
        t=$tree.tmp
}

apt_tree_install() {
        printf '#!/bin/sh\nexit 101\n' >"$t/usr/sbin/policy-rc.d"
        chmod 0755 "$t/usr/sbin/policy-rc.d"
        {
                chroot "$t" apt-get update -q
                chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
        } >&2
        rm -rf "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb "$t"/var/log/*.log
}

apt_tree_mask() {
        local u
        for u in "$@"; do
                ln -sf /dev/null "$t/etc/systemd/system/$u"
        done
}

apt_tree_require() {
        local p
        for p in "$@"; do
                [[ -x $t$p ]] || { echo "$apt_tree_name: $p is missing from the tree" >&2; exit 1; }
        done
}

apt_tree_commit() {
        local old
        cache_commit "$tree"
        # Trees of earlier recipes (or of an earlier base tree) are garbage now.
        for old in "$apt_tree_cachedir/tree-$apt_tree_name"-*; do
                [[ $old == "$tree" || $old == "$tree.ok" || $old == *.lock ]] || rm -rf "$old"
        done
        echo "$tree"
}
