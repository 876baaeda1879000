/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Writes an archive with every entry type through foyer's newc writer, reads it back with
 * foyer's parser and with GNU cpio -i, and checks the format's invariants. */

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "compress.h"
#include "cpio.h"
#include "manifest.h"
#include "tests.h"
#include "util.h"

typedef struct Seen {
        unsigned n;
        char names[16][64];
        uint32_t ino[16], nlink[16], mode[16];
        uint64_t size[16], mtime[16];
} Seen;

static int collect(const CpioEntry *e, void *userdata) {
        Seen *s = userdata;

        ASSERT_TRUE(s->n < 16);
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", e->name);
        s->ino[s->n] = e->ino;
        s->nlink[s->n] = e->nlink;
        s->mode[s->n] = e->mode;
        s->size[s->n] = e->size;
        s->mtime[s->n] = e->mtime;
        s->n++;
        return 0;
}

static void write_archive(const char *dir, const char *archive) {
        _cleanup_(manifest_freep) Manifest *m = NULL;
        _cleanup_(sink_freep) Sink *sink = NULL;
        _cleanup_free_ char *src = strjoin(dir, "/source"), *hardlink = strjoin(dir, "/source-link");
        _cleanup_close_ int fd = -EBADF;
        CpioWriter w;
        FILE *f;

        f = fopen(src, "we");
        ASSERT_TRUE(f);
        fputs("hello from a file\n", f);
        ASSERT_TRUE(fclose(f) == 0);
        ASSERT_TRUE(link(src, hardlink) == 0);
        ASSERT_TRUE(chmod(src, 0755) == 0);

        ASSERT_OK(manifest_new("/", &m));
        ASSERT_OK(manifest_add_symlink(m, "/bin", "usr/bin", "test"));
        ASSERT_OK(manifest_add_file(m, "/usr/bin/tool", src, "test"));
        /* The same inode under a second name: a hard link in the archive. */
        ASSERT_OK(manifest_add_file(m, "/usr/bin/alias", hardlink, "test"));
        ASSERT_OK(manifest_add_data(m, "/etc/motd", 0644, "data\n", 5, "test"));
        ASSERT_OK(manifest_add_directory(m, "/tmp", 01777, "test"));
        /* Adding the same entry again is a no-op, a different one is refused. */
        ASSERT_TRUE(manifest_add_data(m, "/etc/motd", 0644, "data\n", 5, "test") == 0);
        ASSERT_TRUE(manifest_add_symlink(m, "/etc/motd", "x", "test") == -EEXIST);

        fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(sink_new(COMPRESSION_NONE, -1, fd, &sink));
        cpio_writer_init(&w, sink, 1234567);
        ASSERT_OK(cpio_write_manifest(&w, m));
        ASSERT_OK(sink_finish(sink));
}

int main(void) {
        char dir[] = "/tmp/test-cpio.XXXXXX";
        _cleanup_free_ char *archive = NULL, *cmd = NULL, *out = NULL, *data = NULL, *text = NULL;
        Seen seen = {};
        size_t size, consumed;
        struct stat a, b;

        ASSERT_TRUE(mkdtemp(dir));
        archive = strjoin(dir, "/test.cpio");
        ASSERT_TRUE(archive);
        write_archive(dir, archive);

        ASSERT_OK(read_full_file(archive, &data, &size));
        /* The trailer pads the archive to 512 bytes. */
        ASSERT_TRUE(size % 512 == 0);
        ASSERT_OK(cpio_parse((const uint8_t *) data, size, collect, &seen, &consumed));

        /* Directories and symlinks first in byte order (parents generated before children), then
         * the data files, then the programs by size (the same here, so by path). */
        static const char *const expected[] = { "bin", "etc", "tmp", "usr", "usr/bin", "etc/motd", "usr/bin/alias", "usr/bin/tool" };
        ASSERT_TRUE(seen.n == ELEMENTSOF(expected));
        for (unsigned i = 0; i < seen.n; i++) {
                ASSERT_STREQ(seen.names[i], expected[i]);
                ASSERT_TRUE(seen.mtime[i] == 1234567);
                /* Sequential inode numbers in archive order. */
                ASSERT_TRUE(seen.ino[i] == i + 1 || (i == 7 && seen.ino[i] == seen.ino[6]));
        }
        /* Hard link: one inode, nlink 2, data with the last name only. */
        ASSERT_TRUE(seen.ino[6] == seen.ino[7] && seen.nlink[6] == 2 && seen.nlink[7] == 2);
        ASSERT_TRUE(seen.size[6] == 0 && seen.size[7] == 18);
        ASSERT_TRUE((seen.mode[2] & 07777) == 01777);

        /* Truncated input is reported as such. */
        ASSERT_TRUE(cpio_parse((const uint8_t *) data, size - 600, NULL, NULL, &consumed) == -EPIPE);
        data[0] = 'X';
        ASSERT_TRUE(cpio_parse((const uint8_t *) data, size, NULL, NULL, &consumed) == -EBADMSG);

        /* GNU cpio reads it back. */
        out = strjoin(dir, "/out");
        ASSERT_TRUE(out);
        ASSERT_TRUE(mkdir(out, 0755) == 0);
        ASSERT_TRUE(asprintf(&cmd, "cd '%s' && cpio -i --quiet --no-absolute-filenames < '%s'", out, archive) > 0);
        ASSERT_TRUE(system(cmd) == 0);

        free(text);
        text = strjoin(out, "/usr/bin/tool");
        ASSERT_TRUE(stat(text, &a) == 0);
        free(text);
        text = strjoin(out, "/usr/bin/alias");
        ASSERT_TRUE(stat(text, &b) == 0);
        ASSERT_TRUE(a.st_ino == b.st_ino && a.st_nlink == 2 && a.st_size == 18 && (a.st_mode & 0777) == 0755);
        free(text);
        text = NULL;
        {
                _cleanup_free_ char *p = strjoin(out, "/etc/motd"), *content = NULL;
                ASSERT_OK(read_full_file(p, &content, NULL));
                ASSERT_STREQ(content, "data\n");
        }
        {
                _cleanup_free_ char *p = strjoin(out, "/bin");
                char target[64] = {};
                ASSERT_TRUE(readlink(p, target, sizeof(target) - 1) > 0);
                ASSERT_STREQ(target, "usr/bin");
        }

        free(cmd);
        ASSERT_TRUE(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
        /* system() is warn_unused_result under _FORTIFY_SOURCE (Debian's package build). */
        if (system(cmd) != 0)
                fprintf(stderr, "test-cpio: could not remove %s\n", dir);
        printf("test-cpio: OK\n");
        return 0;
}
