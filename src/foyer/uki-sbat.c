/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "uki-sbat.h"

/* The text of a PE's .sbat up to its first NUL, or NULL (*ret_reason set) when it has none or it
 * is not SBAT text: a first line other than the "sbat," header, or a byte no CSV line holds. */
static const char *sbat_text(const PeImage *pe, size_t *ret_size, const char **ret_reason) {
        const PeSection *s = pe_find_section(pe, ".sbat");
        const uint8_t *d;
        size_t n = 0;

        if (!s) {
                *ret_reason = "no .sbat section";
                return NULL;
        }
        d = pe_section_data(pe, s, &n);
        if (!d) {
                *ret_reason = "its .sbat section lies outside the file";
                return NULL;
        }
        n = strnlen((const char *) d, n);
        if (n < strlen("sbat,") || memcmp(d, "sbat,", 5) != 0) {
                *ret_reason = "its .sbat section does not start with the SBAT header";
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if ((d[i] < ' ' && d[i] != '\n') || d[i] >= 0x7f) {
                        *ret_reason = "its .sbat section holds a byte that is not SBAT text";
                        return NULL;
                }
        *ret_size = n;
        return (const char *) d;
}

/* Appends the entries of text (every non-empty line after the header) to buf at *pos, when they
 * fit below max; false when they do not. */
static bool append_entries(char *buf, size_t *pos, size_t max, const char *text, size_t size) {
        const char *p = memchr(text, '\n', size), *end = text + size;

        if (!p)
                return true;            /* the header alone */
        for (p++; p < end;) {
                const char *nl = memchr(p, '\n', end - p);
                size_t len = (nl ?: end) - p;

                if (len > 0) {
                        if (*pos + len + 1 > max)
                                return false;
                        memcpy(buf + *pos, p, len);
                        *pos += len;
                        buf[(*pos)++] = '\n';
                }
                p += len + 1;
        }
        return true;
}

int uki_sbat_merge(uint8_t *stub_data, const PeImage *stub, const PeImage *kernel, const char **ret_reason) {
        const char *why = NULL, *stub_text, *kernel_text = NULL;
        size_t stub_size = 0, kernel_size = 0, room = 0, pos = 0;
        const PeSection *s;
        const uint8_t *d;
        _cleanup_free_ char *buf = NULL;

        assert(stub_data);
        assert(stub);
        assert(stub->data == stub_data);
        assert(ret_reason);

        stub_text = sbat_text(stub, &stub_size, &why);
        if (!stub_text) {
                *ret_reason = why;
                return 0;
        }
        /* A stub whose SBAT already names a UKI was merged into before (or is not a plain stub). */
        if (memmem(stub_text, stub_size, "\nuki,", 5)) {  /* the text need not end in a NUL */
                *ret_reason = "its .sbat already holds a \"uki\" entry";
                return 0;
        }
        s = pe_find_section(stub, ".sbat");
        d = pe_section_data(stub, s, &room);
        assert(d);
        /* What the loader maps of the file's bytes: past VirtualSize they are not the section's. */
        room = MIN(room, (size_t) (s->virtual_size ?: s->raw_size));
        if (kernel)
                kernel_text = sbat_text(kernel, &kernel_size, &why);

        /* The header, the stub's entries, the kernel's, "uki", and a NUL: as ukify merges them. */
        buf = calloc(1, room + 1);
        if (!buf)
                return -ENOMEM;
        if (strlen(UKI_SBAT_HEADER) < room) {
                memcpy(buf, UKI_SBAT_HEADER, strlen(UKI_SBAT_HEADER));
                pos = strlen(UKI_SBAT_HEADER);
        }
        if (pos == 0 || !append_entries(buf, &pos, room, stub_text, stub_size) ||
            (kernel_text && !append_entries(buf, &pos, room, kernel_text, kernel_size)) ||
            pos + strlen(UKI_SBAT_ENTRY) + 1 > room) {
                *ret_reason = "its .sbat section has no room for the UKI's entries (systemd-stub 258 and later "
                              "leave room there)";
                return 0;
        }
        memcpy(buf + pos, UKI_SBAT_ENTRY, strlen(UKI_SBAT_ENTRY));
        /* The whole mapped section: the merged text, then zeros. */
        memcpy(stub_data + (d - stub->data), buf, room);
        *ret_reason = NULL;
        return 1;
}
