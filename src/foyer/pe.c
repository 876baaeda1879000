/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "pe.h"

/* Offsets from the PE and COFF specification ("Microsoft PE and COFF Specification", rev. 11). */
#define DOS_LFANEW              0x3c
#define COFF_MACHINE            4
#define COFF_NUMBER_OF_SECTIONS 6
#define COFF_SYMBOL_TABLE       12
#define COFF_NUMBER_OF_SYMBOLS  16
#define COFF_OPT_HEADER_SIZE    20
#define OPT                     24      /* the optional header, after "PE\0\0" and the COFF header */
#define OPT_MAGIC               0
#define OPT_SIZE_OF_INIT_DATA   8
#define OPT_IMAGE_BASE_64       24
#define OPT_IMAGE_BASE_32       28
#define OPT_SECTION_ALIGNMENT   32
#define OPT_FILE_ALIGNMENT      36
#define OPT_SIZE_OF_IMAGE       56
#define OPT_SIZE_OF_HEADERS     60
#define OPT_CHECKSUM            64
#define OPT_SUBSYSTEM           68
#define OPT_RVA_COUNT_32        92
#define OPT_RVA_COUNT_64        108
#define OPT_DIRS_32             96
#define OPT_DIRS_64             112
#define DIR_SECURITY            4
#define SECTION_HEADER_SIZE     40
#define SCN_CNT_INITIALIZED_DATA 0x00000040u
#define SCN_MEM_READ            0x40000000u
#define PAGE                    4096u

static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t) get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t) get32(p + 4) << 32; }
static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }

static bool is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

static int bad(const char **ret_reason, const char *why) {
        if (ret_reason)
                *ret_reason = why;
        return -EBADMSG;
}

int pe_parse(const uint8_t *data, size_t size, PeImage *ret, const char **ret_reason) {
        uint32_t lfanew, opt, opt_size, dirs_off, n_dirs;
        PeImage pe = { .data = data, .size = size };

        if (size < 0x40 || data[0] != 'M' || data[1] != 'Z')
                return bad(ret_reason, "no MZ header");
        lfanew = get32(data + DOS_LFANEW);
        if (lfanew > size || size - lfanew < OPT + 2 || memcmp(data + lfanew, "PE\0\0", 4) != 0)
                return bad(ret_reason, "no PE signature (an MZ file but not PE/COFF)");

        pe.pe_offset = lfanew;
        pe.machine = get16(data + lfanew + COFF_MACHINE);
        pe.n_sections = get16(data + lfanew + COFF_NUMBER_OF_SECTIONS);
        opt_size = get16(data + lfanew + COFF_OPT_HEADER_SIZE);
        opt = lfanew + OPT;
        if (opt_size < OPT_SUBSYSTEM + 2 || size - opt < opt_size)
                return bad(ret_reason, "no optional header (an object file, not an image)");

        switch (get16(data + opt + OPT_MAGIC)) {
        case 0x20b:
                pe.pe32plus = true;
                pe.image_base = get64(data + opt + OPT_IMAGE_BASE_64);
                dirs_off = OPT_DIRS_64;
                n_dirs = opt_size >= OPT_RVA_COUNT_64 + 4 ? get32(data + opt + OPT_RVA_COUNT_64) : 0;
                break;
        case 0x10b:
                pe.image_base = get32(data + opt + OPT_IMAGE_BASE_32);
                dirs_off = OPT_DIRS_32;
                n_dirs = opt_size >= OPT_RVA_COUNT_32 + 4 ? get32(data + opt + OPT_RVA_COUNT_32) : 0;
                break;
        default:
                return bad(ret_reason, "unknown optional header magic");
        }
        if ((uint64_t) dirs_off + (uint64_t) n_dirs * 8 > opt_size)
                return bad(ret_reason, "data directories extend past the optional header");

        pe.section_alignment = get32(data + opt + OPT_SECTION_ALIGNMENT);
        pe.file_alignment = get32(data + opt + OPT_FILE_ALIGNMENT);
        pe.size_of_image = get32(data + opt + OPT_SIZE_OF_IMAGE);
        pe.size_of_headers = get32(data + opt + OPT_SIZE_OF_HEADERS);
        pe.subsystem = get16(data + opt + OPT_SUBSYSTEM);
        if (!is_pow2(pe.section_alignment) || !is_pow2(pe.file_alignment))
                return bad(ret_reason, "section or file alignment is not a power of two");

        pe.section_table = opt + opt_size;
        if (pe.n_sections > PE_SECTION_MAX)
                return bad(ret_reason, "more than 96 sections");
        if ((uint64_t) pe.section_table + (uint64_t) pe.n_sections * SECTION_HEADER_SIZE > size)
                return bad(ret_reason, "section table extends past the end of the file");

        for (unsigned i = 0; i < pe.n_sections; i++) {
                const uint8_t *h = data + pe.section_table + i * SECTION_HEADER_SIZE;
                PeSection *s = &pe.sections[i];

                memcpy(s->name, h, 8);
                s->name[8] = '\0';
                s->virtual_size = get32(h + 8);
                s->virtual_address = get32(h + 12);
                s->raw_size = get32(h + 16);
                s->raw_offset = get32(h + 20);
                s->characteristics = get32(h + 36);
                if (s->raw_size > 0 && (uint64_t) s->raw_offset + s->raw_size > size)
                        return bad(ret_reason, "a section's data extends past the end of the file");
        }

        *ret = pe;
        return 0;
}

const PeSection *pe_find_section(const PeImage *pe, const char *name) {
        for (unsigned i = 0; i < pe->n_sections; i++)
                if (streq(pe->sections[i].name, name))
                        return &pe->sections[i];
        return NULL;
}

int pe_stub_version(const PeImage *pe) {
        static const char key[] = "LoaderInfo: systemd-stub ";
        const PeSection *s = pe_find_section(pe, ".sdmagic");
        const uint8_t *d, *p;
        size_t n, left;
        unsigned v = 0;

        if (!s)
                return -ENOENT;
        d = pe_section_data(pe, s, &n);
        if (!d)
                return -EBADMSG;
        p = memmem(d, n, key, sizeof(key) - 1);
        if (!p)
                return -EBADMSG;
        p += sizeof(key) - 1;
        left = n - (size_t) (p - d);
        if (left == 0 || *p < '0' || *p > '9')
                return -EBADMSG;
        for (; left > 0 && *p >= '0' && *p <= '9'; p++, left--) {
                v = v * 10 + (*p - '0');
                if (v > 100000)
                        return -EBADMSG;
        }
        return (int) v;
}

const uint8_t *pe_section_data(const PeImage *pe, const PeSection *s, size_t *ret_size) {
        size_t n = MIN(s->raw_size, s->virtual_size ?: s->raw_size);

        if ((uint64_t) s->raw_offset + n > pe->size)
                return NULL;
        *ret_size = n;
        return pe->data + s->raw_offset;
}

uint32_t pe_checksum(const uint8_t *data, size_t size, size_t checksum_offset) {
        uint64_t sum = 0;

        for (size_t i = 0; i + 1 < size; i += 2) {
                if (i == checksum_offset || i == checksum_offset + 2)
                        continue;
                sum += get16(data + i);
                sum = (sum & 0xffff) + (sum >> 16);
        }
        if (size & 1) {
                sum += data[size - 1];
                sum = (sum & 0xffff) + (sum >> 16);
        }
        sum = (sum & 0xffff) + (sum >> 16);
        return (uint32_t) (sum + size);
}

static int too_big(const char **ret_reason, const char *why) {
        if (ret_reason)
                *ret_reason = why;
        return -E2BIG;
}

int pe_append_sections(const PeImage *stub, const PeAddSection *add, size_t n_add,
                       uint8_t **ret, size_t *ret_size, const char **ret_reason) {
        uint64_t raw_end = stub->size_of_headers, first_raw = UINT64_MAX, first_va = UINT64_MAX;
        uint64_t va_end = stub->size_of_image, table_end, headers, va, off, init_data;
        uint32_t va_align = MAX(stub->section_alignment, PAGE);
        uint32_t opt = stub->pe_offset + OPT;
        uint8_t *out;

        if (stub->n_sections + n_add > PE_SECTION_MAX)
                return too_big(ret_reason, "too many sections");
        for (size_t i = 0; i < n_add; i++) {
                if (strlen(add[i].name) > 8)
                        return too_big(ret_reason, "section name longer than 8 bytes");
                if (pe_find_section(stub, add[i].name)) {
                        if (ret_reason)
                                *ret_reason = "the stub already has a section of that name";
                        return -EEXIST;
                }
        }

        for (unsigned i = 0; i < stub->n_sections; i++) {
                const PeSection *s = &stub->sections[i];

                if (s->raw_size > 0) {
                        raw_end = MAX(raw_end, (uint64_t) s->raw_offset + s->raw_size);
                        first_raw = MIN(first_raw, s->raw_offset);
                }
                first_va = MIN(first_va, s->virtual_address);
                va_end = MAX(va_end, (uint64_t) s->virtual_address + MAX(s->virtual_size, s->raw_size));
        }
        if (raw_end > stub->size)
                return too_big(ret_reason, "the headers extend past the end of the file");

        /* The new section headers are written into the copy of the stub's header area, and the
         * bytes they replace are read from the stub: both must lie within what the stub's file
         * holds and what is copied of it (a malformed stub may end right after its section table,
         * or claim a SizeOfHeaders short of it). */
        table_end = stub->section_table + (uint64_t) (stub->n_sections + n_add) * SECTION_HEADER_SIZE;
        if (table_end > raw_end)
                return too_big(ret_reason, "no room in the header area for the new section headers");

        /* The new section headers go right after the old ones, in the header area: section data
         * is never moved (its file offsets stay valid), so the area must already have room, up to
         * the first section's data in the file and its address in memory. */
        headers = MAX(ALIGN_TO(table_end, (uint64_t) stub->file_alignment), stub->size_of_headers);
        if (headers > first_raw || table_end > first_va)
                return too_big(ret_reason, "no room in the header area for the new section headers");
        for (uint64_t p = stub->section_table + (uint64_t) stub->n_sections * SECTION_HEADER_SIZE; p < table_end; p++)
                if (stub->data[p] != 0)
                        return too_big(ret_reason, "the header area after the section table is in use");

        /* Lay out: addresses after everything the stub maps, file data after everything it holds. */
        va = ALIGN_TO(va_end, (uint64_t) va_align);
        off = ALIGN_TO(raw_end, (uint64_t) stub->file_alignment);
        init_data = get32(stub->data + opt + OPT_SIZE_OF_INIT_DATA);
        uint64_t vas[PE_SECTION_MAX], offs[PE_SECTION_MAX], image_end = va_end;
        for (size_t i = 0; i < n_add; i++) {
                uint64_t raw = ALIGN_TO((uint64_t) add[i].size, (uint64_t) stub->file_alignment);

                vas[i] = va;
                offs[i] = off;
                image_end = va + add[i].size;
                va = ALIGN_TO(image_end, (uint64_t) va_align);
                off += raw;
                init_data += raw;
        }
        if (off > UINT32_MAX || va > UINT32_MAX || init_data > UINT32_MAX)
                return too_big(ret_reason, "the image would be larger than 4 GiB");

        out = calloc(1, off ?: 1);
        if (!out)
                return -ENOMEM;
        memcpy(out, stub->data, raw_end);

        for (size_t i = 0; i < n_add; i++) {
                uint8_t *h = out + stub->section_table + (stub->n_sections + i) * SECTION_HEADER_SIZE;

                memset(h, 0, SECTION_HEADER_SIZE);
                memcpy(h, add[i].name, strlen(add[i].name));
                put32(h + 8, add[i].size);
                put32(h + 12, vas[i]);
                put32(h + 16, ALIGN_TO((uint64_t) add[i].size, (uint64_t) stub->file_alignment));
                put32(h + 20, add[i].size ? offs[i] : 0);
                put32(h + 36, SCN_CNT_INITIALIZED_DATA | SCN_MEM_READ);
                if (add[i].size)
                        memcpy(out + offs[i], add[i].data, add[i].size);
        }

        put16(out + stub->pe_offset + COFF_NUMBER_OF_SECTIONS, stub->n_sections + n_add);
        /* A COFF symbol table and a certificate table live after the sections, where the new data
         * now is; neither would describe the new image. */
        put32(out + stub->pe_offset + COFF_SYMBOL_TABLE, 0);
        put32(out + stub->pe_offset + COFF_NUMBER_OF_SYMBOLS, 0);
        uint32_t dirs = opt + (stub->pe32plus ? OPT_DIRS_64 : OPT_DIRS_32);
        uint32_t n_dirs = get32(out + opt + (stub->pe32plus ? OPT_RVA_COUNT_64 : OPT_RVA_COUNT_32));
        if (n_dirs > DIR_SECURITY)
                memset(out + dirs + DIR_SECURITY * 8, 0, 8);

        put32(out + opt + OPT_SIZE_OF_INIT_DATA, init_data);
        put32(out + opt + OPT_SIZE_OF_IMAGE, ALIGN_TO(image_end, (uint64_t) stub->section_alignment));
        put32(out + opt + OPT_SIZE_OF_HEADERS, headers);
        put32(out + opt + OPT_CHECKSUM, pe_checksum(out, off, opt + OPT_CHECKSUM));

        *ret = out;
        *ret_size = off;
        return 0;
}
