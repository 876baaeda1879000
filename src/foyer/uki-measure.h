/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The measured-boot sections of a UKI: .pcrpkey (a PEM public key) and .pcrsig (systemd-measure's
 * JSON: signatures of the PCR 11 values the stub will leave, one per boot phase). foyer does not
 * compute PCR values itself; it hands systemd-measure the bytes of exactly the sections the stub
 * will measure and embeds what it prints. */

#include <stddef.h>

#include "pe.h"

#define DEFAULT_SYSTEMD_MEASURE "/usr/lib/systemd/systemd-measure"

typedef struct UkiPcr {
        /* From the command line. */
        const char *private_key, *public_key, *phases;
        /* Filled by uki_pcr_prepare(). */
        const char *tool;               /* $FOYER_SYSTEMD_MEASURE or DEFAULT_SYSTEMD_MEASURE */
        int tool_version;
        char *private_pem;              /* the private key's bytes, as checked (wiped by uki_pcr_done()) */
        size_t private_size;
        char *public_pem;               /* the .pcrpkey section */
        size_t public_size;
} UkiPcr;

void uki_pcr_done(UkiPcr *p);

/* Cheap checks before any work: the stub measures the UKI at all (systemd-stub 252 or later), the
 * tool is there and knows the sections the stub will measure (as far as they are known now), the
 * private key is a regular file (not a symlink) owned by this user or root, readable by neither its
 * group nor others, and a PEM private key (read once, here), the public key is a PEM public key. */
int uki_pcr_prepare(UkiPcr *p, const PeImage *stub, const char *stub_path, int stub_version);

/* Runs systemd-measure sign over those of the sections to add that the stub measures, plus the
 * stub's own .sbat where the stub measures it. sections must include .pcrpkey (and not .pcrsig).
 * Returns the JSON for .pcrsig. */
int uki_pcr_sign(const UkiPcr *p, const PeImage *stub, int stub_version, const PeAddSection *sections,
                 size_t n_sections, char **ret, size_t *ret_size);
