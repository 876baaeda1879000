/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* root=dhcp's parsing (src/shared/netroot.c): systemd-networkd's lease file, and the root spec of a
 * DHCP root path. (The NFS and NBD spec parsers are the golden cases' and the fuzz harness's.) */

#include "netroot.h"
#include "tests.h"

static void do_get(const char *lease, const char *key, int expected_r, const char *expected) {
        _cleanup_free_ char *v = NULL;

        ASSERT_EQ(dhcp_lease_get(lease, key, &v), expected_r);
        ASSERT_STREQ(v, expected);
}

TEST(dhcp_lease_get) {
        /* As systemd 252 and 257 write it (dhcp_lease_save()). */
        const char *lease = "# This is private data. Do not parse.\n"
                            "ADDRESS=10.0.3.15\n"
                            "NETMASK=255.255.255.0\n"
                            "SERVER_ADDRESS=10.0.3.1\n"
                            "NEXT_SERVER=10.0.3.9\n"
                            "ROOT_PATH=nfs4:10.0.2.2:/srv/root:port=2049,vers=4.2\n"
                            "CLIENTID=ff1a2b3c4d\n";

        do_get(lease, "ROOT_PATH", 1, "nfs4:10.0.2.2:/srv/root:port=2049,vers=4.2");
        do_get(lease, "SERVER_ADDRESS", 1, "10.0.3.1");
        do_get(lease, "CLIENTID", 1, "ff1a2b3c4d");
        do_get(lease, "ADDR", 0, NULL);                         /* a prefix is not the key */
        do_get(lease, "HOSTNAME", 0, NULL);
        do_get("ROOT_PATH=\nROOT_PATH=/late\n", "ROOT_PATH", 0, NULL);  /* the first line counts, empty is none */
        do_get("ROOT_PATH=/a\nROOT_PATH=/b", "ROOT_PATH", 1, "/a");
        do_get("X=1\nROOT_PATH=/no/newline", "ROOT_PATH", 1, "/no/newline");
        do_get("XROOT_PATH=/x\n ROOT_PATH=/y\n", "ROOT_PATH", 0, NULL);
        do_get("", "ROOT_PATH", 0, NULL);
        do_get("\n\n", "ROOT_PATH", 0, NULL);
}

static void do_spec(const char *path, const char *server, const char *expected, NetrootKind expected_kind) {
        _cleanup_free_ char *spec = NULL;
        NetrootKind kind = NETROOT_NONE;

        ASSERT_OK(dhcp_root_path_to_spec(path, server, &spec, &kind));
        ASSERT_STREQ(spec, expected);
        ASSERT_EQ(kind, expected_kind);
}

TEST(dhcp_root_path_to_spec) {
        do_spec("10.0.2.2:/srv/root", "10.0.3.1", "10.0.2.2:/srv/root", NETROOT_NFS);
        do_spec("nfs4:10.0.2.2:/srv/root:port=1", NULL, "nfs4:10.0.2.2:/srv/root:port=1", NETROOT_NFS);
        do_spec("/srv/root", "10.0.3.9", "10.0.3.9:/srv/root", NETROOT_NFS);
        do_spec("nfs:/srv/root:vers=3", "10.0.3.9", "nfs:10.0.3.9:/srv/root:vers=3", NETROOT_NFS);
        do_spec("nfs4:/srv", "s", "nfs4:s:/srv", NETROOT_NFS);
        do_spec("/srv/root", NULL, "/srv/root", NETROOT_NFS);     /* no server: nfs_root_parse() refuses it */
        do_spec("files.example:/export", "10.0.3.1", "files.example:/export", NETROOT_NFS);
        do_spec("nbd:10.0.2.2:10809:ext4", "10.0.3.1", "nbd:10.0.2.2:10809:ext4", NETROOT_NBD);
        do_spec("iscsi:10.0.2.2::3260::iqn.x", NULL, "iscsi:10.0.2.2::3260::iqn.x", NETROOT_ISCSI);
}

TEST_MAIN()
