/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dracut's network root specs (src/shared/netroot.c) on arbitrary input. The input is "SPEC" or
 * "SPEC\nROOTFLAGS": SPEC is tried as root= (and as nfsroot= of root=/dev/nfs) and as an nbd: spec. No
 * crash; a spec is accepted only with a server, an absolute export and every field safe for a unit (no
 * blank, control character, quote, backslash, '%' or '$'); the NFS options are safe and start with ro or
 * rw; NFSv3 always gets nolock; an accepted NBD port is a number from 1 to 65535; a refusal always
 * gives a reason; the classifiers agree with the parsers. SPEC is also tried as an iscsi: spec: an
 * accepted one has a server, a target name that is not an option, a port from 1 to 65535, a numeric LUN,
 * CHAP credentials in complete pairs (the target's only with the initiator's) and every field safe.
 * The whole input is also a lease file of systemd-networkd (root=dhcp): a value found is non-empty and
 * holds no newline, and the root spec made of it (with a server) keeps the path and has a network
 * root's kind. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "macro.h"
#include "mount-options.h"
#include "netroot.h"
#include "strv.h"

static void check_nfs(const char *root, const char *nfsroot, const char *rootflags, const char *input) {
        _cleanup_(nfs_root_done) NfsRoot n = {};
        _cleanup_free_ char *opts = NULL;
        const char *error = NULL;
        bool dropped = false;
        int r;

        r = nfs_root_parse(root, nfsroot, "nfs4", &n, &error);
        if (r == -EINVAL && !error)
                fuzz_fail("refused without a reason", input);
        if (r < 0)
                return;
        if (isempty(n.server) || !n.path || n.path[0] != '/' || !n.type)
                fuzz_fail("accepted without a server or an absolute export", input);
        if (!netroot_word_is_safe(n.server, NULL) || !netroot_word_is_safe(n.path, NULL) ||
            (n.options && !netroot_word_is_safe(n.options, NULL)))
                fuzz_fail("accepted a field that is not safe for a unit", input);
        if (!streq(n.type, "nfs") && !streq(n.type, "nfs4"))
                fuzz_fail("a type that is not nfs or nfs4", input);
        r = nfs_root_options(&n, rootflags, -1, &opts, &dropped);
        if (r < 0)
                return;
        if (!netroot_word_is_safe(opts, NULL) || !(startswith(opts, "ro") || startswith(opts, "rw")))
                fuzz_fail("options not safe or without ro/rw first", input);
        if (streq(n.type, "nfs") && !mount_options_test(opts, "nolock\0"))
                fuzz_fail("NFSv3 without nolock", input);
}

static void check_nbd(const char *spec, const char *input) {
        _cleanup_(nbd_root_done) NbdRoot n = {};
        const char *error = NULL;
        int r, port;

        r = nbd_root_parse(spec, &n, &error);
        if (r == -EINVAL && !error)
                fuzz_fail("refused without a reason", input);
        if (r < 0)
                return;
        if (netroot_kind_of_root(spec) != NETROOT_NBD)
                fuzz_fail("parsed as nbd but not classified so", input);
        port = atoi(n.port);
        if (isempty(n.server) || port < 1 || port > 65535)
                fuzz_fail("accepted without a server or a valid port", input);
        if (!netroot_word_is_safe(n.server, NULL) || (n.export && (!netroot_word_is_safe(n.export, NULL) || n.export[0] == '-')) ||
            (n.fstype && !netroot_word_is_safe(n.fstype, NULL)) || (n.options && !netroot_word_is_safe(n.options, NULL)))
                fuzz_fail("accepted a field that is not safe for a unit", input);
        STRV_FOREACH(o, n.nbd_opts)
                if (!netroot_word_is_safe(*o, NULL))
                        fuzz_fail("accepted an nbd-client option that is not safe", input);
}

static bool safe_or_null(const char *s) {
        return !s || netroot_word_is_safe(s, NULL);
}

static void check_iscsi(const char *spec, const char *input) {
        _cleanup_(iscsi_root_done) IscsiRoot n = {};
        const char *error = NULL;
        int r, port;

        r = iscsi_root_parse(spec, &n, &error);
        if (r == -EINVAL && !error)
                fuzz_fail("refused without a reason", input);
        if (r < 0)
                return;
        if (netroot_kind_of_root(spec) != NETROOT_ISCSI || netroot_kind_of_netroot(spec) != NETROOT_ISCSI)
                fuzz_fail("parsed as iscsi but not classified so", input);
        port = atoi(n.port);
        if (isempty(n.server) || isempty(n.target) || n.target[0] == '-' || port < 1 || port > 65535 ||
            isempty(n.lun) || strspn(n.lun, "0123456789") != strlen(n.lun))
                fuzz_fail("accepted without a server, a target, a valid port or a numeric LUN", input);
        if (!n.username != !n.password || !n.in_username != !n.in_password || (n.in_username && !n.username) ||
            (n.username && n.username[0] == '-') || (n.in_username && n.in_username[0] == '-'))
                fuzz_fail("accepted CHAP credentials that are not complete pairs", input);
        if (!netroot_word_is_safe(n.server, NULL) || !netroot_word_is_safe(n.target, NULL) ||
            !safe_or_null(n.username) || !safe_or_null(n.password) || !safe_or_null(n.in_username) ||
            !safe_or_null(n.in_password) || !safe_or_null(n.iface) || !safe_or_null(n.netdev))
                fuzz_fail("accepted a field that is not safe for a unit", input);
}

static void check_lease(const char *lease, const char *input) {
        static const char *const keys[] = { "ROOT_PATH", "NEXT_SERVER", "SERVER_ADDRESS" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *v = NULL, *spec = NULL;
                NetrootKind kind = NETROOT_NONE;
                int r;

                r = dhcp_lease_get(lease, keys[i], &v);
                if (r < 0)
                        return;
                if ((r > 0) != !!v || (v && (isempty(v) || strchr(v, '\n'))))
                        fuzz_fail("a lease value that is empty, holds a newline or does not match the result", input);
                if (!v)
                        continue;
                if (dhcp_root_path_to_spec(v, "10.0.3.1", &spec, &kind) < 0)
                        return;
                if (!strstr(spec, v) && !strstr(spec, strchr(v, '/') ?: v))
                        fuzz_fail("the root spec lost the root path", input);
                if (kind != NETROOT_NFS && kind != NETROOT_NBD && kind != NETROOT_ISCSI)
                        fuzz_fail("a root spec of no network root kind", input);
                if (kind == NETROOT_NFS)
                        check_nfs(spec, NULL, NULL, input);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *nbd = NULL, *iscsi = NULL;
        const char *rootflags = NULL;
        char *nl;

        if (!fuzz_setup(size, 4096))
                return 0;
        s = fuzz_strndup(data, size);
        if (!s)
                return 0;
        check_lease(s, s);
        nl = strchr(s, '\n');
        if (nl) {
                *nl = 0;
                rootflags = nl + 1;
        }
        (void) netroot_kind_of_netroot(s);
        if (netroot_kind_of_root(s) == NETROOT_NFS)
                check_nfs(s, NULL, rootflags, s);
        check_nfs("/dev/nfs", s, rootflags, s);
        check_nbd(s, s);
        nbd = startswith(s, "nbd:") ? NULL : strjoin("nbd:", s);
        if (nbd)
                check_nbd(nbd, s);
        check_iscsi(s, s);
        iscsi = startswith(s, "iscsi:") ? NULL : strjoin("iscsi:", s);
        if (iscsi)
                check_iscsi(iscsi, s);
        return 0;
}
