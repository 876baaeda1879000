# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# The cache of the test trees, disks, images and packages (test/vm/mkroot.sh, mkdisk.sh, mkimage.sh,
# roots/*.sh, test/foyer/mktree.sh, test/package/build-deb.sh), sourced by each: an entry ENTRY (a
# directory or a file) is made once, under a lock, into ENTRY.tmp, renamed to ENTRY and marked done by
# ENTRY.ok; a finished entry is reused, the leftovers of an interrupted build are removed. Only the
# locking and the renames live here: the key is computed from what each script's recipe is made of,
# and this file is not part of any key (changing it changes no entry).
#
#   cache_key FILE... [-- WORD...]    prints the key: 12 hex digits of the SHA-256 over each FILE's
#                                     bytes (not its path) and each WORD
#   cache_lock LOCKFILE               takes the lock, held until the process exits or cache_unlock
#   cache_begin LOCKFILE ENTRY        cache_lock, then 0 if ENTRY is made (ENTRY and ENTRY.ok exist);
#                                     otherwise removes ENTRY, ENTRY.ok and ENTRY.tmp and returns 1:
#                                     the caller builds ENTRY.tmp, then calls cache_commit
#   cache_commit ENTRY [TEXT]         renames ENTRY.tmp to ENTRY and writes ENTRY.ok (holding TEXT)
#   cache_build LOCKFILE ENTRY CMD... cache_begin; if ENTRY is not made, runs CMD... ENTRY.tmp and
#                                     cache_commit; a failed CMD leaves no ENTRY and no ENTRY.tmp and
#                                     its exit status is returned (CMD runs with the caller's
#                                     set -e, stdin /dev/null). The lock stays held.
#   cache_unlock                      releases the lock
# Callers remove the entries of their earlier keys themselves (what is garbage differs), under the lock.

cache_key() {
        {
                while (($# > 0)) && [[ $1 != -- ]]; do
                        sha256sum <"$1" | cut -d' ' -f1
                        shift
                done
                (($# == 0)) || shift
                (($# == 0)) || printf '%s\n' "$@"
        } | sha256sum | cut -c1-12
}

cache_lock() {
        exec {cache_lock_fd}>"$1"
        flock "$cache_lock_fd"
}

cache_unlock() {
        [[ -z ${cache_lock_fd:-} ]] || exec {cache_lock_fd}>&-
        cache_lock_fd=
}

cache_begin() {
        local lock=$1 entry=$2
        cache_lock "$lock"
        if [[ -e $entry.ok && -e $entry ]]; then
                return 0
        fi
        rm -rf "$entry" "$entry.ok" "$entry.tmp"
        return 1
}

cache_commit() {
        local entry=$1
        mv "$entry.tmp" "$entry"
        if (($# > 1)); then printf '%s\n' "$2" >"$entry.ok"; else : >"$entry.ok"; fi
}

cache_build() {
        local lock=$1 entry=$2 rc=0
        shift 2
        cache_begin "$lock" "$entry" && return 0
        # In the background, so that set -e holds inside a function CMD (in "CMD || ..." it would not).
        "$@" "$entry.tmp" &
        wait "$!" || rc=$?
        if ((rc != 0)); then
                rm -rf "$entry.tmp"
                return "$rc"
        fi
        cache_commit "$entry"
}
