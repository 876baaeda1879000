/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-network-cleanup: takes down what the initrd's network set up, before the switch to the real
 * root (ExecStop= of FOYER_NETWORK_CLEANUP_SERVICE, after systemd-networkd has stopped).
 *
 * systemd-networkd leaves its addresses and routes on the interfaces when it stops, and its state in
 * /run, which outlives the switch. The real root's own network setup (ifupdown, NetworkManager, its
 * own networkd) would then find a DHCP lease nobody renews, interfaces already up under an address
 * it did not choose, and the initrd's ip= configuration in /run/systemd/network. So every address
 * on every interface but loopback is deleted (which takes its routes along), every such interface is
 * set down, and /run/systemd/network and /run/systemd/netif are removed. Failures are logged and
 * the rest goes on: the switch must not wait for this. */

#include <errno.h>
#include <ftw.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE 32768

static int nl_fd = -1;
static unsigned nl_seq = 1;

/* Sends a request and reads the answers until NLMSG_DONE (a dump) or the ACK/error of a request;
 * calls f for each answer of a dump. Returns 0 or a negative errno (the kernel's, for a request). */
static int nl_talk(struct nlmsghdr *req, void (*f)(struct nlmsghdr *h, void *data), void *data) {
        char buf[BUF_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        unsigned seq = nl_seq++;

        req->nlmsg_seq = seq;
        if (sendto(nl_fd, req, req->nlmsg_len, 0, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        for (;;) {
                ssize_t n = recv(nl_fd, buf, sizeof(buf), 0);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, (size_t) n); h = NLMSG_NEXT(h, n)) {
                        if (h->nlmsg_seq != seq)
                                continue;
                        if (h->nlmsg_type == NLMSG_DONE)
                                return 0;
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                struct nlmsgerr *e = NLMSG_DATA(h);

                                return e->error;        /* 0: the ACK */
                        }
                        if (f)
                                f(h, data);
                }
        }
}

#define MAX_ITEMS 256

typedef struct Addr {
        struct ifaddrmsg ifa;
        unsigned char local[16], address[16];
        int local_len, address_len;
} Addr;

typedef struct Addrs {
        Addr items[MAX_ITEMS];
        int n;
} Addrs;

static void collect_addr(struct nlmsghdr *h, void *data) {
        Addrs *a = data;
        struct ifaddrmsg *ifa = NLMSG_DATA(h);
        int len = IFA_PAYLOAD(h);
        Addr *x;

        if (h->nlmsg_type != RTM_NEWADDR || a->n >= MAX_ITEMS || ifa->ifa_scope == RT_SCOPE_HOST)
                return;
        x = &a->items[a->n];
        *x = (Addr) { .ifa = *ifa };
        for (struct rtattr *rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
                int l = RTA_PAYLOAD(rta);

                if (l > 16)
                        continue;
                if (rta->rta_type == IFA_LOCAL) {
                        memcpy(x->local, RTA_DATA(rta), l);
                        x->local_len = l;
                } else if (rta->rta_type == IFA_ADDRESS) {
                        memcpy(x->address, RTA_DATA(rta), l);
                        x->address_len = l;
                }
        }
        a->n++;
}

typedef struct Links {
        struct ifinfomsg items[MAX_ITEMS];
        int n;
} Links;

static void collect_link(struct nlmsghdr *h, void *data) {
        Links *l = data;
        struct ifinfomsg *ifi = NLMSG_DATA(h);

        if (h->nlmsg_type != RTM_NEWLINK || l->n >= MAX_ITEMS)
                return;
        if ((ifi->ifi_flags & IFF_LOOPBACK) || !(ifi->ifi_flags & IFF_UP))
                return;
        l->items[l->n++] = *ifi;
}

static void add_attr(struct nlmsghdr *h, unsigned short type, const void *data, int len) {
        struct rtattr *rta = (struct rtattr *) ((char *) h + NLMSG_ALIGN(h->nlmsg_len));

        rta->rta_type = type;
        rta->rta_len = RTA_LENGTH(len);
        memcpy(RTA_DATA(rta), data, len);
        h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static int flush_addresses(void) {
        static Addrs addrs;
        struct {
                struct nlmsghdr h;
                struct ifaddrmsg ifa;
                char attrs[64];
        } req = {
                .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)), .nlmsg_type = RTM_GETADDR,
                       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
                .ifa = { .ifa_family = AF_UNSPEC },
        };
        int r, failed = 0;

        addrs.n = 0;
        r = nl_talk(&req.h, collect_addr, &addrs);
        if (r < 0) {
                fprintf(stderr, "foyer-network-cleanup: cannot list the addresses: %s\n", strerror(-r));
                return r;
        }
        for (int i = 0; i < addrs.n; i++) {
                Addr *x = &addrs.items[i];

                req.h = (struct nlmsghdr) { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)),
                                            .nlmsg_type = RTM_DELADDR, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK };
                req.ifa = x->ifa;
                if (x->local_len > 0)
                        add_attr(&req.h, IFA_LOCAL, x->local, x->local_len);
                if (x->address_len > 0)
                        add_attr(&req.h, IFA_ADDRESS, x->address, x->address_len);
                r = nl_talk(&req.h, NULL, NULL);
                if (r < 0 && r != -EADDRNOTAVAIL) {
                        fprintf(stderr, "foyer-network-cleanup: cannot delete an address of interface %u: %s\n",
                                x->ifa.ifa_index, strerror(-r));
                        failed = r;
                }
        }
        return failed;
}

static int links_down(void) {
        static Links links;
        struct {
                struct nlmsghdr h;
                struct ifinfomsg ifi;
        } req = {
                .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)), .nlmsg_type = RTM_GETLINK,
                       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
                .ifi = { .ifi_family = AF_UNSPEC },
        };
        int r, failed = 0;

        links.n = 0;
        r = nl_talk(&req.h, collect_link, &links);
        if (r < 0) {
                fprintf(stderr, "foyer-network-cleanup: cannot list the interfaces: %s\n", strerror(-r));
                return r;
        }
        for (int i = 0; i < links.n; i++) {
                req.h = (struct nlmsghdr) { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
                                            .nlmsg_type = RTM_NEWLINK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK };
                req.ifi = (struct ifinfomsg) { .ifi_family = AF_UNSPEC, .ifi_index = links.items[i].ifi_index,
                                               .ifi_change = IFF_UP, .ifi_flags = 0 };
                r = nl_talk(&req.h, NULL, NULL);
                if (r < 0) {
                        fprintf(stderr, "foyer-network-cleanup: cannot set interface %d down: %s\n",
                                links.items[i].ifi_index, strerror(-r));
                        failed = r;
                }
        }
        return failed;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if ((type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                fprintf(stderr, "foyer-network-cleanup: cannot remove %s: %m\n", path);
        return 0;
}

static void remove_tree(const char *path) {
        if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
                fprintf(stderr, "foyer-network-cleanup: cannot remove %s: %m\n", path);
}

int main(int argc, char *argv[]) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        int r = 0;

        (void) argc;
        (void) argv;

        nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "foyer-network-cleanup: cannot open a netlink socket: %m\n");
                r = -errno;
        } else {
                if (flush_addresses() < 0)
                        r = -1;
                if (links_down() < 0)
                        r = -1;
                close(nl_fd);
        }
        remove_tree("/run/systemd/network");
        remove_tree("/run/systemd/netif");
        return r < 0 ? 1 : 0;
}
