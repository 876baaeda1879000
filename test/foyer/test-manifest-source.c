/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A --root tree changed between planning and writing cannot put another file in the image: every
 * way of swapping a planned file is tried on a scratch tree (the file replaced, replaced by a
 * symlink, a directory on the way replaced by a symlink to a host directory holding a file of the
 * same name, a FIFO or a device node put there), and the cpio writer must refuse each, writing
 * nothing of the host's file. The same plan, untouched, writes. */

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compress.h"
#include "cpio.h"
#include "fileio.h"
#include "manifest.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/test-manifest-source.XXXXXX";

static void write_text(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(write_all(fd, text, strlen(text)));
}

static char *at(const char *rel) {
        char *p = strjoin(dir, "/", rel);

        ASSERT_TRUE(p);
        return p;
}

/* Writes the plan of ROOT/usr/lib/tool into an archive; returns the writer's result and whether the
 * host's marker is in the archive. */
static int write_plan(Manifest *m, bool *ret_host_bytes) {
        _cleanup_(sink_freep) Sink *sink = NULL;
        _cleanup_free_ char *archive = at("out.cpio"), *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        CpioWriter w;
        size_t size;
        int r;

        fd = open(archive, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(sink_new(COMPRESSION_NONE, -1, fd, &sink));
        cpio_writer_init(&w, sink, 0);
        r = cpio_write_manifest(&w, m);
        if (r >= 0)
                ASSERT_OK(sink_finish(sink));
        ASSERT_OK(read_full_file(archive, &data, &size));
        *ret_host_bytes = memmem(data, size, "HOST-BYTES", 10) != NULL;
        return r;
}

/* A fresh tree and a plan holding ROOT/usr/lib/tool (resolved as the builder does). */
static Manifest *plan_tree(void) {
        _cleanup_free_ char *lib = at("root/usr/lib"), *tool = at("root/usr/lib/tool"),
                            *cmd = strjoin("rm -rf ", dir, "/root");
        Manifest *m = NULL;

        ASSERT_TRUE(cmd && system(cmd) == 0);
        ASSERT_OK(mkdir_p(lib, 0755));
        write_text(tool, "tree bytes\n");
        _cleanup_free_ char *root = at("root");
        ASSERT_OK(manifest_new(root, &m));
        ASSERT_OK(manifest_add_from_root(m, "/usr/lib/tool", "test", NULL));
        return m;
}

typedef void (*Swap)(void);

static void swap_replace(void) {
        _cleanup_free_ char *tool = at("root/usr/lib/tool"), *tmp = at("root/usr/lib/tool.new");

        write_text(tmp, "HOST-BYTES\n");
        ASSERT_TRUE(rename(tmp, tool) == 0);
}

static void swap_symlink(void) {
        _cleanup_free_ char *tool = at("root/usr/lib/tool"), *host = at("host/tool");

        ASSERT_TRUE(unlink(tool) == 0);
        ASSERT_TRUE(symlink(host, tool) == 0);
}

static void swap_directory(void) {
        _cleanup_free_ char *lib = at("root/usr/lib"), *old = at("root/usr/lib.old"), *host = at("host");

        ASSERT_TRUE(rename(lib, old) == 0);
        ASSERT_TRUE(symlink(host, lib) == 0);
}

static void swap_relative_directory(void) {
        _cleanup_free_ char *usr = at("root/usr"), *old = at("root/usr.old");

        /* ROOT/usr -> ../hostusr, where hostusr/lib/tool is the host's. */
        ASSERT_TRUE(rename(usr, old) == 0);
        ASSERT_TRUE(symlink("../hostusr", usr) == 0);
}

static void swap_fifo(void) {
        _cleanup_free_ char *tool = at("root/usr/lib/tool");

        ASSERT_TRUE(unlink(tool) == 0);
        ASSERT_TRUE(mkfifo(tool, 0644) == 0);
}

static void swap_device(void) {
        _cleanup_free_ char *tool = at("root/usr/lib/tool");

        ASSERT_TRUE(unlink(tool) == 0);
        if (mknod(tool, S_IFCHR | 0644, makedev(1, 5)) < 0)    /* /dev/zero: never ends */
                ASSERT_TRUE(mkfifo(tool, 0644) == 0);           /* not root: a FIFO instead */
}

int main(void) {
        static const struct {
                const char *name;
                Swap swap;
        } swaps[] = {
                { "file replaced",                          swap_replace },
                { "file replaced by a symlink to the host", swap_symlink },
                { "directory replaced by a host link",      swap_directory },
                { "directory replaced by a ../ link",       swap_relative_directory },
                { "file replaced by a FIFO",                swap_fifo },
                { "file replaced by a device node",         swap_device },
        };
        _cleanup_free_ char *host = NULL, *host_tool = NULL, *hostusr = NULL, *hostusr_tool = NULL, *cmd = NULL;
        bool host_bytes;

        ASSERT_TRUE(mkdtemp(dir));
        host = at("host");
        host_tool = at("host/tool");
        hostusr = at("hostusr/lib");
        hostusr_tool = at("hostusr/lib/tool");
        ASSERT_OK(mkdir_p(host, 0755));
        ASSERT_OK(mkdir_p(hostusr, 0755));
        write_text(host_tool, "HOST-BYTES\n");
        write_text(hostusr_tool, "HOST-BYTES\n");

        /* Untouched, the plan is written. */
        {
                _cleanup_(manifest_freep) Manifest *m = plan_tree();

                ASSERT_OK(write_plan(m, &host_bytes));
                ASSERT_TRUE(!host_bytes);
        }
        for (size_t i = 0; i < ELEMENTSOF(swaps); i++) {
                _cleanup_(manifest_freep) Manifest *m = plan_tree();
                int r;

                fprintf(stderr, "== %s\n", swaps[i].name);
                swaps[i].swap();
                r = write_plan(m, &host_bytes);
                ASSERT_TRUE(r == -ESTALE);
                ASSERT_TRUE(!host_bytes);
        }

        cmd = strjoin("rm -rf ", dir);
        ASSERT_TRUE(cmd && system(cmd) == 0);
        fprintf(stderr, "%zu swaps refused\n", ELEMENTSOF(swaps));
        return 0;
}
