/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The header the hand-made ELF files of the builder's unit tests share: a 64-bit little-endian
 * x86-64 shared object. Each test sets the offsets and counts of its own layout. */

#include <elf.h>
#include <string.h>

static inline void elf_fixture_header(Elf64_Ehdr *e) {
        memset(e, 0, sizeof(*e));
        memcpy(e->e_ident, ELFMAG, SELFMAG);
        e->e_ident[EI_CLASS] = ELFCLASS64;
        e->e_ident[EI_DATA] = ELFDATA2LSB;
        e->e_ident[EI_VERSION] = EV_CURRENT;
        e->e_type = ET_DYN;
        e->e_machine = EM_X86_64;
        e->e_version = EV_CURRENT;
        e->e_ehsize = sizeof(*e);
        e->e_phentsize = sizeof(Elf64_Phdr);
}
