/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The symbol-version tables (elf-version.h). Every structure is copied out of the bytes with
 * memcpy() after its range has been checked, as elf.c does: the table's offset comes from the file
 * and may have any alignment. The chains are walked by their counts, and each step must move
 * forward by at least one structure, so a crafted table cannot loop or overlap itself. */

#include <assert.h>
#include <elf.h>

#include "elf-version.h"
#include "util.h"

static bool in_table(size_t size, uint64_t offset, size_t n) {
        return offset <= size && n <= size - offset;
}

/* The name at index in strtab: NUL-terminated inside it, and not empty. */
static const char *table_string(const uint8_t *strtab, size_t strsz, uint64_t index) {
        if (index >= strsz || strtab[index] == 0)
                return NULL;
        if (!memchr(strtab + index, 0, strsz - index))
                return NULL;
        return (const char *) strtab + index;
}

static void need_done(ElfVersionNeed *need) {
        free(need->file);
        strv_free(need->versions);
        strv_free(need->weak);
        *need = (ElfVersionNeed) {};
}

void elf_version_needs_free(ElfVersionNeed *needs, size_t n) {
        for (size_t i = 0; i < n; i++)
                need_done(&needs[i]);
        free(needs);
}

/* One Elf64_Verneed at offset and its vn_cnt auxiliary entries. */
static int parse_one_need(const uint8_t *table, size_t size, uint64_t offset, const uint8_t *strtab,
                          size_t strsz, Elf64_Verneed *ret_vn, ElfVersionNeed *ret) {
        _cleanup_(need_done) ElfVersionNeed need = {};
        Elf64_Verneed vn;
        uint64_t aux;
        const char *s;
        int r;

        if (!in_table(size, offset, sizeof(vn)))
                return -EBADMSG;
        memcpy(&vn, table + offset, sizeof(vn));
        if (vn.vn_version != VER_NEED_CURRENT || vn.vn_cnt == 0 || vn.vn_aux < sizeof(vn))
                return -EBADMSG;
        s = table_string(strtab, strsz, vn.vn_file);
        if (!s)
                return -EBADMSG;
        need.file = strdup(s);
        if (!need.file)
                return -ENOMEM;

        aux = offset + vn.vn_aux;
        for (unsigned i = 0; i < vn.vn_cnt; i++) {
                Elf64_Vernaux a;

                if (!in_table(size, aux, sizeof(a)))
                        return -EBADMSG;
                memcpy(&a, table + aux, sizeof(a));
                s = table_string(strtab, strsz, a.vna_name);
                if (!s)
                        return -EBADMSG;
                r = strv_extend(&need.versions, s);
                if (r >= 0 && (a.vna_flags & VER_FLG_WEAK))
                        r = strv_extend(&need.weak, s);
                if (r < 0)
                        return r;
                if (i + 1 < vn.vn_cnt) {
                        if (a.vna_next < sizeof(a))
                                return -EBADMSG;
                        aux += a.vna_next;
                }
        }

        *ret_vn = vn;
        *ret = need;
        need = (ElfVersionNeed) {};
        return 0;
}

int elf_verneed_parse(const uint8_t *table, size_t size, uint64_t count, const uint8_t *strtab, size_t strsz,
                      ElfVersionNeed **needs, size_t *n) {
        ElfVersionNeed *parsed = NULL, *t;
        size_t n_parsed = 0;
        uint64_t offset = 0;
        int r;

        assert(table || size == 0);
        assert(strtab || strsz == 0);
        assert(needs);
        assert(n);

        /* Each entry takes at least its own size: a larger count cannot fit. */
        if (count > size / sizeof(Elf64_Verneed))
                return -EBADMSG;
        if (count == 0)
                return 0;
        parsed = calloc(count, sizeof(ElfVersionNeed));
        if (!parsed)
                return -ENOMEM;

        for (uint64_t i = 0; i < count; i++) {
                /* Zeroed only for gcc 14, which cannot see that parse_one_need() fills it on success. */
                Elf64_Verneed vn = {};

                r = parse_one_need(table, size, offset, strtab, strsz, &vn, &parsed[n_parsed]);
                if (r < 0)
                        goto fail;
                n_parsed++;
                if (i + 1 < count) {
                        r = -EBADMSG;
                        if (vn.vn_next < sizeof(vn))
                                goto fail;
                        offset += vn.vn_next;
                }
        }

        r = -ENOMEM;
        t = reallocarray(*needs, *n + n_parsed, sizeof(ElfVersionNeed));
        if (!t)
                goto fail;
        memcpy(t + *n, parsed, n_parsed * sizeof(ElfVersionNeed));
        *needs = t;
        *n += n_parsed;
        free(parsed);
        return 0;
fail:
        elf_version_needs_free(parsed, n_parsed);
        return r;
}

int elf_verdef_parse(const uint8_t *table, size_t size, uint64_t count, const uint8_t *strtab, size_t strsz,
                     char ***ret) {
        _cleanup_strv_free_ char **names = NULL;
        uint64_t offset = 0;
        int r;

        assert(table || size == 0);
        assert(strtab || strsz == 0);
        assert(ret);

        if (count > size / sizeof(Elf64_Verdef))
                return -EBADMSG;

        for (uint64_t i = 0; i < count; i++) {
                Elf64_Verdef vd;
                uint64_t aux;

                if (!in_table(size, offset, sizeof(vd)))
                        return -EBADMSG;
                memcpy(&vd, table + offset, sizeof(vd));
                if (vd.vd_version != VER_DEF_CURRENT || vd.vd_cnt == 0 || vd.vd_aux < sizeof(vd))
                        return -EBADMSG;

                /* The first name is the version's own, the others its parents: all must be valid. */
                aux = offset + vd.vd_aux;
                for (unsigned j = 0; j < vd.vd_cnt; j++) {
                        Elf64_Verdaux a;
                        const char *s;

                        if (!in_table(size, aux, sizeof(a)))
                                return -EBADMSG;
                        memcpy(&a, table + aux, sizeof(a));
                        s = table_string(strtab, strsz, a.vda_name);
                        if (!s)
                                return -EBADMSG;
                        if (j == 0 && !(vd.vd_flags & VER_FLG_BASE)) {
                                r = strv_extend(&names, s);
                                if (r < 0)
                                        return r;
                        }
                        if (j + 1 < vd.vd_cnt) {
                                if (a.vda_next < sizeof(a))
                                        return -EBADMSG;
                                aux += a.vda_next;
                        }
                }
                if (i + 1 < count) {
                        if (vd.vd_next < sizeof(vd))
                                return -EBADMSG;
                        offset += vd.vd_next;
                }
        }

        *ret = TAKE_PTR(names);
        return 0;
}
