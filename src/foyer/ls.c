/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "compress.h"
#include "cpio.h"
#include "log.h"
#include "ls.h"
#include "pe.h"
#include "util.h"

typedef struct Lister {
        const char *path;
        FILE *out;
        uint64_t max_expanded;  /* 0: no limit */
        uint64_t expanded;      /* decompressed bytes so far, all streams */
        int stop;               /* why list_chunk() stopped the decompressor, already logged */
        CpioReader reader;
} Lister;

/* Names and link targets come from the image, which may come from anywhere: control characters
 * (an ESC starting a terminal sequence, C1 controls among the 8-bit bytes) are printed as \xNN,
 * never raw. A backslash stays as it is, so that systemd's escaped unit names (\x2d) read the
 * same as in cpio -t; all names foyer writes are ASCII. */
static void print_escaped(FILE *out, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < ' ' || *p >= 0x7f)
                        fprintf(out, "\\x%02x", *p);
                else
                        fputc(*p, out);
}

static int print_entry(const CpioEntry *e, void *userdata) {
        Lister *l = userdata;
        char mode[11];

        if ((e->mode & S_IFMT) == S_IFCHR || (e->mode & S_IFMT) == S_IFBLK) {
                char dev[24];

                /* Major and minor in one column, so the path stays the third field. */
                snprintf(dev, sizeof(dev), "%" PRIu32 ",%" PRIu32, e->rdev_major, e->rdev_minor);
                fprintf(l->out, "%s %9s ", mode_to_string(e->mode, mode), dev);
        } else
                fprintf(l->out, "%s %9" PRIu64 " ", mode_to_string(e->mode, mode), e->size);
        print_escaped(l->out, e->name);
        if (e->link_target) {
                fputs(" -> ", l->out);
                print_escaped(l->out, e->link_target);
        }
        fputc('\n', l->out);
        return 0;
}

/* Decompressed output goes straight into the cpio reader, a piece at a time. */
static int list_chunk(const void *chunk, size_t n, void *userdata) {
        Lister *l = userdata;
        size_t used;
        int r;

        l->expanded += n;
        if (l->max_expanded > 0 && l->expanded > l->max_expanded)
                return l->stop = log_error_errno(SYNTHETIC_ERRNO(EFBIG), "%s: expands to more than %" PRIu64 " bytes, refusing.",
                                                 l->path, l->max_expanded);
        r = cpio_reader_feed(&l->reader, chunk, n, &used);
        if (r == -EBADMSG)
                return l->stop = log_error_errno(r, "%s: corrupt cpio archive at offset %" PRIu64 " of the decompressed data.",
                                                 l->path, l->reader.archive_start);
        if (r < 0)
                return l->stop = r;     /* print_entry() logged it */
        return 0;
}

static int list_compressed(Lister *l, Compression c, const uint8_t *data, size_t size, size_t pos,
                           size_t *ret_used) {
        const char *what = compression_to_string(c);
        int r;

        cpio_reader_init(&l->reader, true, print_entry, l);
        l->stop = 0;
        r = decompress_foreach(c, data + pos, size - pos, list_chunk, l, ret_used);
        if (r < 0 && l->stop < 0)
                return r;
        if (r == -EPIPE)
                return log_error_errno(r, "%s: %s data at offset %zu is truncated.", l->path, what, pos);
        if (r == -ENOMEM)
                return log_error_errno(r, "%s: %s data at offset %zu needs more memory than allowed.", l->path, what, pos);
        if (r < 0)
                return log_error_errno(r, "%s: %s data at offset %zu is corrupt: %m", l->path, what, pos);
        r = cpio_reader_finish(&l->reader);
        if (r < 0)
                return log_error_errno(r, "%s: %s cpio archive is truncated (no trailer).", l->path, what);
        return 0;
}

static int list_uncompressed(Lister *l, const uint8_t *data, size_t size, size_t pos, size_t *ret_used) {
        int r;

        cpio_reader_init(&l->reader, false, print_entry, l);
        r = cpio_reader_feed(&l->reader, data + pos, size - pos, ret_used);
        if (r >= 0)
                r = cpio_reader_finish(&l->reader);
        if (r == -EPIPE)
                return log_error_errno(r, "%s: cpio archive at offset %zu is truncated.", l->path, pos);
        if (r < 0)
                return log_error_errno(r, "%s: corrupt cpio archive at offset %zu.", l->path, pos);
        return 0;
}

static void print_section_text(FILE *out, const PeImage *pe, const PeSection *s) {
        _cleanup_free_ char *text = NULL;
        const uint8_t *d;
        size_t n;

        d = pe_section_data(pe, s, &n);
        if (!d)
                return;
        /* The short text sections are what one looks for; show the start of them. */
        text = strndup((const char *) d, MIN(n, (size_t) 200));
        if (!text)
                return;
        fputs("  \"", out);
        print_escaped(out, text);
        fputc('"', out);
}

/* A UKI: its sections, then the embedded initrd's listing. */
static int ls_uki(const Lister *l, const PeImage *pe, const uint8_t **data, size_t *size) {
        const PeSection *initrd = pe_find_section(pe, ".initrd");

        fprintf(l->out, "PE image, %s, image base 0x%" PRIx64 ", section alignment 0x%" PRIx32
                ", file alignment 0x%" PRIx32 ", %u sections:\n",
                pe->subsystem == PE_SUBSYSTEM_EFI_APPLICATION ? "EFI application" : "not EFI",
                pe->image_base, pe->section_alignment, pe->file_alignment, pe->n_sections);
        for (unsigned i = 0; i < pe->n_sections; i++) {
                const PeSection *s = &pe->sections[i];

                fputs("  ", l->out);
                print_escaped(l->out, s->name);
                fprintf(l->out, "%*s vma 0x%08" PRIx64 " size %10" PRIu32 " file 0x%08" PRIx32,
                        (int) (8 - MIN(strlen(s->name), (size_t) 8)), "",
                        pe->image_base + s->virtual_address, s->virtual_size, s->raw_offset);
                if (streq(s->name, ".uname") || streq(s->name, ".cmdline"))
                        print_section_text(l->out, pe, s);
                fputc('\n', l->out);
        }
        if (!initrd)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s: PE image without an .initrd section.", l->path);
        *data = pe_section_data(pe, initrd, size);
        if (!*data || *size == 0)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s: the .initrd section is empty or truncated.", l->path);
        fprintf(l->out, ".initrd:\n");
        return 0;
}

static size_t skip_zeros(const uint8_t *data, size_t size, size_t pos) {
        while (pos < size && data[pos] == 0)
                pos++;
        return pos;
}

int ls_data(const char *path, const uint8_t *data, size_t size, FILE *out, uint64_t max_expanded) {
        _cleanup_free_ Lister *l = NULL;
        size_t pos = 0;
        PeImage pe;
        int r;

        assert(path);
        assert(data || size == 0);
        assert(out);

        /* The reader holds a name and a target of up to 4 KiB each: not on the stack. */
        l = malloc(sizeof(Lister));
        if (!l)
                return log_oom();
        *l = (Lister) { .path = path, .out = out, .max_expanded = max_expanded };

        if (pe_parse(data, size, &pe, NULL) >= 0) {
                r = ls_uki(l, &pe, &data, &size);
                if (r < 0)
                        return r;
        }

        for (;;) {
                Compression c;
                size_t used;

                pos = skip_zeros(data, size, pos);
                if (pos >= size)
                        return 0;

                r = decompress_detect(data + pos, size - pos, &c);
                if (r < 0)
                        return log_error_errno(r, "%s: neither a cpio archive nor a known compression at offset %zu.",
                                               path, pos);
                if (c == COMPRESSION_NONE)
                        r = list_uncompressed(l, data, size, pos, &used);
                else
                        r = list_compressed(l, c, data, size, pos, &used);
                if (r < 0)
                        return r;
                if (used == 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s: no progress at offset %zu.", path, pos);
                pos += used;
        }
}

int ls_image(const char *path) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        void *map;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s is not a regular file.", path);
        if (st.st_size == 0)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s is empty.", path);

        map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return log_error_errno(errno, "Failed to map %s: %m", path);
        /* Streaming keeps memory bounded, so an image is listed however far it expands. */
        r = ls_data(path, map, st.st_size, stdout, 0);
        munmap(map, st.st_size);
        if (r < 0)
                return r;
        if (fflush(stdout) != 0 || ferror(stdout))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write the listing.");
        return 0;
}
