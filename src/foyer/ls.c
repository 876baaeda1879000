/* SPDX-License-Identifier: LGPL-2.1-or-later */

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

static int print_entry(const CpioEntry *e, void *userdata) {
        char mode[11];

        if ((e->mode & S_IFMT) == S_IFCHR || (e->mode & S_IFMT) == S_IFBLK)
        {
                char dev[24];

                /* Major and minor in one column, so the path stays the third field. */
                snprintf(dev, sizeof(dev), "%" PRIu32 ",%" PRIu32, e->rdev_major, e->rdev_minor);
                printf("%s %9s %s\n", mode_to_string(e->mode, mode), dev, e->name);
        }
        else if ((e->mode & S_IFMT) == S_IFLNK)
                printf("%s %9" PRIu64 " %s -> %.*s\n", mode_to_string(e->mode, mode), e->size, e->name,
                       (int) e->size, (const char *) e->data);
        else
                printf("%s %9" PRIu64 " %s\n", mode_to_string(e->mode, mode), e->size, e->name);
        return 0;
}

static size_t skip_zeros(const uint8_t *data, size_t size, size_t pos) {
        while (pos < size && data[pos] == 0)
                pos++;
        return pos;
}

static int ls_archives(const char *image, const char *what, const uint8_t *data, size_t size) {
        size_t pos = 0;
        int r;

        for (;;) {
                size_t used;

                pos = skip_zeros(data, size, pos);
                if (pos >= size)
                        return 0;
                r = cpio_parse(data + pos, size - pos, print_entry, NULL, &used);
                if (r == -EPIPE)
                        return log_error_errno(r, "%s: %s cpio archive is truncated (no trailer).", image, what);
                if (r < 0)
                        return log_error_errno(r, "%s: corrupt %s cpio archive at offset %zu.", image, what, pos);
                pos += used;
        }
}

/* A UKI: its sections, then the embedded initrd's listing. */
static int ls_uki(const char *path, const PeImage *pe, const uint8_t **data, size_t *size) {
        const PeSection *initrd = pe_find_section(pe, ".initrd");

        printf("PE image, %s, image base 0x%" PRIx64 ", section alignment 0x%" PRIx32 ", file alignment 0x%" PRIx32
               ", %u sections:\n", pe->subsystem == PE_SUBSYSTEM_EFI_APPLICATION ? "EFI application" : "not EFI",
               pe->image_base, pe->section_alignment, pe->file_alignment, pe->n_sections);
        for (unsigned i = 0; i < pe->n_sections; i++) {
                const PeSection *s = &pe->sections[i];

                printf("  %-8s vma 0x%08" PRIx64 " size %10" PRIu32 " file 0x%08" PRIx32, s->name,
                       pe->image_base + s->virtual_address, s->virtual_size, s->raw_offset);
                /* The short text sections are what one looks for; show them. */
                if (streq(s->name, ".uname") || streq(s->name, ".cmdline")) {
                        size_t n;
                        const uint8_t *d = pe_section_data(pe, s, &n);

                        if (d)
                                printf("  \"%.*s\"", (int) MIN(n, (size_t) 200), (const char *) d);
                }
                putchar('\n');
        }
        if (!initrd)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s: PE image without an .initrd section.", path);
        *data = pe_section_data(pe, initrd, size);
        if (!*data || *size == 0)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s: the .initrd section is empty or truncated.", path);
        printf(".initrd:\n");
        return 0;
}

int ls_image(const char *path) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        const uint8_t *map, *data;
        size_t size, pos = 0, n_archives = 0;
        PeImage pe;
        int r = 0;

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
        data = map;
        size = st.st_size;
        if (pe_parse(map, size, &pe, NULL) >= 0)
                r = ls_uki(path, &pe, &data, &size);

        while (r >= 0) {
                Compression c;
                _cleanup_free_ uint8_t *buf = NULL;
                size_t buf_size, used;

                pos = skip_zeros(data, size, pos);
                if (pos >= size)
                        break;

                r = decompress_detect(data + pos, size - pos, &c);
                if (r < 0) {
                        r = log_error_errno(r, "%s: neither a cpio archive nor a known compression at offset %zu.",
                                            path, pos);
                        break;
                }

                if (c == COMPRESSION_NONE) {
                        r = cpio_parse(data + pos, size - pos, print_entry, NULL, &used);
                        if (r == -EPIPE)
                                r = log_error_errno(r, "%s: cpio archive at offset %zu is truncated.", path, pos);
                        else if (r < 0)
                                r = log_error_errno(r, "%s: corrupt cpio archive at offset %zu.", path, pos);
                        if (r < 0)
                                break;
                } else {
                        r = decompress_stream(c, data + pos, size - pos, &buf, &buf_size, &used);
                        if (r == -EPIPE)
                                r = log_error_errno(r, "%s: %s data at offset %zu is truncated.", path,
                                                    compression_to_string(c), pos);
                        else if (r < 0)
                                r = log_error_errno(r, "%s: %s data at offset %zu is corrupt: %m", path,
                                                    compression_to_string(c), pos);
                        if (r < 0)
                                break;
                        r = ls_archives(path, compression_to_string(c), buf, buf_size);
                        if (r < 0)
                                break;
                }
                if (used == 0) {
                        r = log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s: no progress at offset %zu.", path, pos);
                        break;
                }
                pos += used;
                n_archives++;
        }

        munmap((void *) map, st.st_size);
        if (r < 0)
                return r;
        if (fflush(stdout) != 0 || ferror(stdout))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write the listing.");
        return 0;
}
