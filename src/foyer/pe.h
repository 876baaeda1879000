/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* PE/COFF, as much as a unified kernel image needs: a reader for the headers and section table of
 * an EFI image (the stub, the kernel, a finished UKI), and a writer that appends data sections
 * after the last section of a stub. Nothing here logs; errors come back as negative errno plus a
 * short reason, and the caller names the file. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PE_SUBSYSTEM_EFI_APPLICATION 10
#define PE_MACHINE_X86_64 0x8664
#define PE_SECTION_MAX 96       /* the loader's limit is 96 too */

typedef struct PeSection {
        char name[9];                   /* NUL-terminated; long (/N) names are not resolved */
        uint32_t virtual_size;
        uint32_t virtual_address;       /* relative to the image base */
        uint32_t raw_size;
        uint32_t raw_offset;
        uint32_t characteristics;
} PeSection;

typedef struct PeImage {
        const uint8_t *data;            /* the file; borrowed, must outlive the PeImage */
        size_t size;
        uint32_t pe_offset;             /* "PE\0\0" */
        uint32_t section_table;         /* file offset of the first section header */
        uint16_t machine;
        uint16_t n_sections;
        bool pe32plus;
        uint64_t image_base;
        uint32_t section_alignment;
        uint32_t file_alignment;
        uint32_t size_of_image;
        uint32_t size_of_headers;
        uint16_t subsystem;
        PeSection sections[PE_SECTION_MAX];
} PeImage;

/* Parses the headers. -EBADMSG (with *ret_reason saying why) when data is not a PE image or its
 * headers are inconsistent. */
int pe_parse(const uint8_t *data, size_t size, PeImage *ret, const char **ret_reason);

const PeSection *pe_find_section(const PeImage *pe, const char *name);

/* Bytes of a section that the file holds (min of raw and virtual size), NULL if out of bounds. */
const uint8_t *pe_section_data(const PeImage *pe, const PeSection *s, size_t *ret_size);

/* The major version of a systemd stub, from its .sdmagic section ("#### LoaderInfo: systemd-stub
 * 257.13-1~deb13u1 ####"). -ENOENT when the image has no such section, -EBADMSG when the section
 * does not name a systemd-stub version. */
int pe_stub_version(const PeImage *pe);

/* The PE checksum (the algorithm of imagehlp's CheckSumMappedFile) of a whole file whose
 * checksum field is at checksum_offset; that field counts as zero. */
uint32_t pe_checksum(const uint8_t *data, size_t size, size_t checksum_offset);

typedef struct PeAddSection {
        const char *name;               /* at most 8 bytes */
        const void *data;
        size_t size;
} PeAddSection;

/* Builds a new image in memory: the stub's headers and sections, then each added section as
 * initialised read-only data at the next virtual address aligned to the larger of the stub's
 * SectionAlignment and the 4 KiB page, its file data at the next FileAlignment boundary.
 * NumberOfSections, SizeOfImage, SizeOfInitializedData and the checksum are updated; a
 * signature or COFF symbol table the stub carried is dropped (it would no longer match). The
 * result depends only on the inputs. -E2BIG (with a reason) when the header area has no room
 * for the new section headers or the image would exceed 4 GiB; -EEXIST when the stub already
 * has a section of that name. */
int pe_append_sections(const PeImage *stub, const PeAddSection *add, size_t n_add,
                       uint8_t **ret, size_t *ret_size, const char **ret_reason);
