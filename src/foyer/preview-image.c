/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer preview --image: what the generators read at boot, taken out of a built image (or a UKI's
 * initrd) into preview's temporary tree. The image may come from anywhere, so only a few fixed
 * paths are taken, never a name the image chose, except the plain file names of its cmdline.d,
 * which stay inside the tree's cmdline.d; every file is bounded in size and the image in how far
 * it may expand (ls_visit()). */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "log.h"
#include "ls.h"
#include "preview-image.h"
#include "util.h"

/* An archive names its entries without the leading "/" that the contract's paths all have. */
#define IMAGE_NAME(contract_path) (&(contract_path)[1])

/* Far more than any image's decompressed size (a generic one is about 100 MiB); what an image beyond
 * it would cost is time, not memory, since it is read as a stream. */
#define PREVIEW_MAX_EXPANDED (UINT64_C(4) << 30)
/* A command line, a crypttab or an mdadm.conf is a few KiB. */
#define PREVIEW_FILE_MAX (UINT64_C(1) << 20)
#define PREVIEW_CMDLINE_FILES_MAX 1024U
#define PREVIEW_GENERATORS_MAX 256U

typedef struct Reader {
        const char *image;
        const char *root;       /* the temporary tree */
        bool crypttab;          /* take the image's /etc/crypttab */
        PreviewImage *out;
        int fd;                 /* the file of the entry whose data is being written, or -EBADF */
        uint64_t written;       /* ... its bytes so far */
        unsigned cmdline_files;
} Reader;

/* The image's files that the generators read at boot, at the same path in the tree. Names are
 * image paths without the leading "/". */
static const char *const taken_files[] = {
        IMAGE_NAME(FOYER_MDADM_IMAGE_CONF),
        IMAGE_NAME(FOYER_SYSTEMD_VERSION_PATH),
};

/* A plain file name in cmdline.d: no directory, no "." or "..", nothing a path could resolve. */
static bool plain_name(const char *name) {
        return !isempty(name) && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..") &&
               strlen(name) <= NAME_MAX;
}

/* Where the image file name goes in the tree, or NULL (*ret NULL) when it is not taken. */
static int destination(const Reader *rd, const char *name, char **ret) {
        const char *rest;

        *ret = NULL;
        rest = startswith(name, IMAGE_NAME(FOYER_CMDLINE_DIR));
        if (rest && rest[0] == '/' && plain_name(rest + 1)) {
                *ret = strjoin(rd->root, "/", name);
                return *ret ? 1 : -ENOMEM;
        }
        if (rd->crypttab && streq(name, "etc/crypttab")) {
                *ret = strjoin(rd->root, "/", name);
                return *ret ? 1 : -ENOMEM;
        }
        for (size_t i = 0; i < ELEMENTSOF(taken_files); i++)
                if (streq(name, taken_files[i])) {
                        *ret = strjoin(rd->root, "/", name);
                        return *ret ? 1 : -ENOMEM;
                }
        return 0;
}

/* Opens (truncates) the tree's copy of a taken file: a later entry of the same name replaces an
 * earlier one, as when the kernel unpacks the archives in order. O_NOFOLLOW: the tree's directories
 * are preview's own, and nothing in them is a link. */
static int open_destination(Reader *rd, const CpioEntry *e, const char *path) {
        const char *rest = startswith(e->name, IMAGE_NAME(FOYER_CMDLINE_DIR));

        if (rest && rest[0] == '/' && rd->cmdline_files++ >= PREVIEW_CMDLINE_FILES_MAX)
                return log_error_errno(SYNTHETIC_ERRNO(EFBIG), "%s: more than %u files in %s, refusing.",
                                       rd->image, PREVIEW_CMDLINE_FILES_MAX, FOYER_CMDLINE_DIR);
        rd->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (rd->fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        rd->written = 0;
        return 0;
}

static void close_destination(Reader *rd) {
        if (rd->fd >= 0)
                close(rd->fd);
        rd->fd = -EBADF;
}

static int take_data(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata) {
        Reader *rd = userdata;
        _cleanup_free_ char *path = NULL;
        int r;

        if (rd->fd < 0) {
                r = destination(rd, e->name, &path);
                if (r < 0)
                        return log_oom();
                if (r == 0)
                        return 0;
                r = open_destination(rd, e, path);
                if (r < 0)
                        return r;
        }
        rd->written += n;
        if (rd->written > PREVIEW_FILE_MAX)
                return log_error_errno(SYNTHETIC_ERRNO(EFBIG), "%s: /%s is larger than %" PRIu64 " bytes, refusing.",
                                       rd->image, e->name, PREVIEW_FILE_MAX);
        r = write_all(rd->fd, chunk, n);
        if (r < 0)
                return log_error_errno(r, "Failed to write the copy of /%s: %m", e->name);
        return 0;
}

/* The generators the image holds, by name, as add_generators() (plan-base.c) puts them there. */
static int take_generator(Reader *rd, const CpioEntry *e) {
        const char *rest = startswith(e->name, IMAGE_NAME(FOYER_IMAGE_GENERATOR_DIR));

        if (!rest || rest[0] != '/' || !plain_name(rest + 1) || !startswith(rest + 1, "foyer-"))
                return 0;
        rest++;
        if ((e->mode & S_IFMT) != S_IFREG || !(e->mode & 0111) || strv_contains(rd->out->generators, rest))
                return 0;
        if (strv_length(rd->out->generators) >= PREVIEW_GENERATORS_MAX)
                return log_error_errno(SYNTHETIC_ERRNO(EFBIG), "%s: more than %u generators, refusing.",
                                       rd->image, PREVIEW_GENERATORS_MAX);
        return strv_extend(&rd->out->generators, rest) < 0 ? log_oom() : 0;
}

static int take_entry(const CpioEntry *e, void *userdata) {
        Reader *rd = userdata;
        _cleanup_free_ char *path = NULL;
        int r;

        if (rd->fd >= 0) {
                close_destination(rd);
                return 0;       /* take_data() wrote it */
        }
        /* What the network generator looks for (access(X_OK), which follows a link). */
        if (streq(e->name, IMAGE_NAME(FOYER_SSH_DROPBEAR)))
                rd->out->dropbear = (e->mode & S_IFMT) == S_IFLNK ||
                                    ((e->mode & S_IFMT) == S_IFREG && (e->mode & 0111));
        else if (streq(e->name, IMAGE_NAME(FOYER_NO_SHELL_MARKER)))
                rd->out->no_shell = (e->mode & S_IFMT) != S_IFDIR;
        /* The host keys' presence only: what they hold is a secret, and the generator only names them. */
        else if (streq(e->name, IMAGE_NAME(FOYER_SSH_HOST_KEY_ED25519)))
                rd->out->host_key_ed25519 = (e->mode & S_IFMT) == S_IFREG;
        else if (streq(e->name, IMAGE_NAME(FOYER_SSH_HOST_KEY_ECDSA)))
                rd->out->host_key_ecdsa = (e->mode & S_IFMT) == S_IFREG;
        r = take_generator(rd, e);
        if (r < 0)
                return r;

        r = destination(rd, e->name, &path);
        if (r < 0)
                return log_oom();
        if (r == 0)
                return 0;
        if ((e->mode & S_IFMT) == S_IFREG) {
                /* An empty file (or the first name of a hard link, whose data comes later): empty. */
                r = open_destination(rd, e, path);
                if (r < 0)
                        return r;
                close_destination(rd);
                return 0;
        }
        /* Anything else under a taken name is no file the generators could read: an earlier copy goes. */
        log_debug("%s: /%s is no regular file, not taken.", rd->image, e->name);
        if (unlink(path) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Failed to remove %s: %m", path);
        return 0;
}

static int make_dirs(const char *root) {
        FOREACH_STRING(p, FOYER_CMDLINE_DIR, FOYER_MDADM_IMAGE_CONF, FOYER_SYSTEMD_VERSION_PATH) {
                _cleanup_free_ char *d = strjoin(root, p);
                int r;

                if (!d)
                        return log_oom();
                r = streq(p, FOYER_CMDLINE_DIR) ? mkdir_p(d, 0755) : mkdir_parents(d, 0755);
                if (r < 0)
                        return log_error_errno(r, "Failed to create the directories of %s: %m", d);
        }
        return 0;
}

void preview_image_done(PreviewImage *p) {
        p->generators = strv_free(p->generators);
        free(p->uki_cmdline);
        p->uki_cmdline = NULL;
        p->dropbear = p->no_shell = p->host_key_ed25519 = p->host_key_ecdsa = false;
}

int preview_image_read(const char *image, const char *root, bool take_crypttab, PreviewImage *ret) {
        _cleanup_(preview_image_done) PreviewImage out = {};
        Reader rd = {
                .image = image,
                .root = root,
                .crypttab = take_crypttab,
                .out = &out,
                .fd = -EBADF,
        };
        LsVisitor v = { .entry = take_entry, .data = take_data, .userdata = &rd };
        int r;

        assert(image);
        assert(root);
        assert(ret);

        r = make_dirs(root);
        if (r < 0)
                return r;
        r = ls_visit(image, &v, PREVIEW_MAX_EXPANDED, &out.uki_cmdline);
        close_destination(&rd);
        if (r < 0)
                return r;
        if (strv_isempty(out.generators))
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s has no foyer generators in %s: not an image foyer built.",
                                       image, FOYER_IMAGE_GENERATOR_DIR);
        *ret = out;
        out = (PreviewImage) {};
        return 0;
}
