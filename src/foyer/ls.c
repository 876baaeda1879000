/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "compress.h"
#include "cpio.h"
#include "foyer-contract.h"
#include "log.h"
#include "ls.h"
#include "pe.h"
#include "util.h"

/* What one pass over an image does with its entries: list them (foyer ls IMAGE), copy one file's
 * data to out (foyer ls IMAGE PATH), nothing but check the image (foyer uki --initrd), or hand them
 * to a caller's LsVisitor (foyer preview --image). */
typedef enum LsMode {
        LS_LIST,
        LS_CAT,
        LS_CHECK,
        LS_VISIT,
} LsMode;

typedef struct LsCounts {
        uint64_t entries, files, dirs, symlinks, other;
        uint64_t file_bytes;    /* the regular files' data (a hard link's once: newc stores it once) */
} LsCounts;

/* The most of a shadow file that LS_CHECK keeps to look for password hashes; a longer one counts as
 * holding one. */
#define SHADOW_MAX 65536U

typedef struct Lister {
        const char *path;
        LsMode mode;
        FILE *out;              /* LS_LIST: the listing; LS_CAT: the file's data */
        FILE *info;             /* LS_LIST: the header and summary (NULL: none) */
        bool json;              /* LS_LIST: one JSON document on out instead of lines (ls_image_json()) */
        bool json_first;        /* ... no entry of the current archive printed yet */
        unsigned json_archives; /* ... archives opened so far */
        const char *section;    /* the UKI section being read (".ucode", ".initrd"), NULL outside a UKI */
        const char *wanted;     /* LS_CAT: the image path, normalised by image_path_skip_prefix() */
        const CpioEntry *found; /* LS_CAT: set once the wanted entry is complete */
        CpioEntry found_entry;  /* ... a copy of it, with found_target */
        char found_target[CPIO_PATH_MAX + 1];
        bool copying;           /* LS_CAT: the wanted file's data is being copied now */
        bool link_pending;      /* LS_CAT: the wanted name is a hard link whose data comes with a
                                 * later name of inode link_ino (newc keeps it on the last name) */
        uint32_t link_ino;
        char *key;              /* LS_CHECK: the first entry that holds a key, described, or NULL */
        char shadow[SHADOW_MAX];/* LS_CHECK: the data of the shadow file being read (check_data()) */
        size_t shadow_size;
        bool shadow_overflow;
        const LsVisitor *visitor; /* LS_VISIT */
        uint64_t max_expanded;  /* 0: no limit */
        uint64_t expanded;      /* decompressed bytes so far, all streams */
        int stop;               /* why list_chunk() stopped the decompressor, already logged */
        LsCounts counts;
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

/* The same, into a new string, for messages. */
static char *escape(const char *s) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        print_escaped(f, s);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* The length of the valid UTF-8 sequence at p (1 to 4 bytes, no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 if none starts there; *ret_cp is its code point. */
static size_t utf8_sequence(const unsigned char *p, uint32_t *ret_cp) {
        size_t n;
        uint32_t cp, min;

        if (p[0] < 0x80) {
                *ret_cp = p[0];
                return 1;
        }
        if ((p[0] & 0xe0) == 0xc0)
                n = 2, cp = p[0] & 0x1f, min = 0x80;
        else if ((p[0] & 0xf0) == 0xe0)
                n = 3, cp = p[0] & 0x0f, min = 0x800;
        else if ((p[0] & 0xf8) == 0xf0)
                n = 4, cp = p[0] & 0x07, min = 0x10000;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)      /* the NUL ends the string here too */
                        return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return n;
}

/* "key":"value" as JSON. Valid UTF-8 is written as it is, except the control characters (C0, DEL
 * and C1), which are \u escapes like '"' and '\\' are escaped. A byte that is not part of valid
 * UTF-8 becomes U+FFFD, and then "key_hex" follows with every byte of the value in hex, so that
 * the name is never lost or mistaken for another. */
static void json_field(FILE *out, const char *key, const char *value) {
        bool invalid = false;

        fprintf(out, "\"%s\":\"", key);
        for (const unsigned char *p = (const unsigned char *) value; *p;) {
                uint32_t cp;
                size_t n = utf8_sequence(p, &cp);

                if (n == 0) {
                        fputs("\\ufffd", out);
                        invalid = true;
                        p++;
                        continue;
                }
                if (cp == '"' || cp == '\\')
                        fprintf(out, "\\%c", (char) cp);
                else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
                        fprintf(out, "\\u%04" PRIx32, cp);
                else
                        fwrite(p, 1, n, out);
                p += n;
        }
        fputc('"', out);
        if (invalid) {
                fprintf(out, ",\"%s_hex\":\"", key);
                for (const unsigned char *p = (const unsigned char *) value; *p; p++)
                        fprintf(out, "%02x", *p);
                fputc('"', out);
        }
}

static const char *entry_type(uint32_t mode) {
        switch (mode & S_IFMT) {
        case S_IFREG:  return "file";
        case S_IFDIR:  return "directory";
        case S_IFLNK:  return "symlink";
        case S_IFCHR:  return "char-device";
        case S_IFBLK:  return "block-device";
        case S_IFIFO:  return "fifo";
        case S_IFSOCK: return "socket";
        default:       return "unknown";
        }
}

static void print_entry_json(Lister *l, const CpioEntry *e) {
        fputs(l->json_first ? "\n" : ",\n", l->out);
        l->json_first = false;
        fputs("    {", l->out);
        json_field(l->out, "path", e->name);
        fprintf(l->out, ",\"type\":\"%s\",\"mode\":\"%04o\",\"size\":%" PRIu64 ",\"uid\":%" PRIu32 ",\"gid\":%" PRIu32,
                entry_type(e->mode), (unsigned) (e->mode & 07777), e->size, e->uid, e->gid);
        if ((e->mode & S_IFMT) == S_IFCHR || (e->mode & S_IFMT) == S_IFBLK)
                fprintf(l->out, ",\"major\":%" PRIu32 ",\"minor\":%" PRIu32, e->rdev_major, e->rdev_minor);
        if (e->link_target) {
                fputc(',', l->out);
                json_field(l->out, "target", e->link_target);
        }
        fputc('}', l->out);
}

/* cpio archives name entries "usr/bin/sh" or "./usr/bin/sh"; users write "/usr/bin/sh" too. */
static const char *image_path_skip_prefix(const char *p) {
        for (;;) {
                if (p[0] == '/')
                        p++;
                else if (p[0] == '.' && p[1] == '/')
                        p += 2;
                else
                        return p;
        }
}

static void count_entry(LsCounts *c, const CpioEntry *e) {
        c->entries++;
        switch (e->mode & S_IFMT) {
        case S_IFREG:
                c->files++;
                c->file_bytes += e->size;
                break;
        case S_IFDIR:
                c->dirs++;
                break;
        case S_IFLNK:
                c->symlinks++;
                break;
        default:
                c->other++;
        }
}

static bool is_wanted(const Lister *l, const CpioEntry *e) {
        return !l->found && streq(image_path_skip_prefix(e->name), l->wanted);
}

/* LS_CAT: the wanted file's data goes to out as it comes; only the first entry of that name
 * counts. */
static int copy_data(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata) {
        Lister *l = userdata;

        if (!l->copying && !is_wanted(l, e) && !(l->link_pending && e->ino == l->link_ino))
                return 0;
        l->copying = true;
        if (fwrite(chunk, 1, n, l->out) != n)
                return log_error_errno(errno > 0 ? errno : EIO, "Failed to write %s: %m", l->wanted);
        return 0;
}

/* The password files: kept from others as a rule (foyer's own /etc/shadow is 0600, with root
 * locked), so their mode says nothing; what they hold does (shadow_has_hash()). */
static bool is_shadow(const CpioEntry *e) {
        const char *p = image_path_skip_prefix(e->name);

        return (e->mode & S_IFMT) == S_IFREG && (streq(p, "etc/shadow") || streq(p, "etc/gshadow"));
}

/* Whether a shadow file's lines give a password hash: a second field other than empty (no
 * password) or only "*" and "!" (locked, none set). */
static bool shadow_has_hash(const char *data, size_t size) {
        const char *end = data + size;

        for (const char *line = data; line < end;) {
                const char *eol = memchr(line, '\n', end - line) ?: end, *f = memchr(line, ':', eol - line);

                if (f)
                        for (f++; f < eol && *f != ':'; f++)
                                if (*f != '*' && *f != '!')
                                        return true;
                line = eol + 1;
        }
        return false;
}

/* LS_CHECK: a shadow file's data, kept for check_entry(). */
static int check_data(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata) {
        Lister *l = userdata;

        if (l->key || !is_shadow(e))
                return 0;
        if (n > SHADOW_MAX - l->shadow_size) {
                l->shadow_overflow = true;
                return 0;
        }
        memcpy(l->shadow + l->shadow_size, chunk, n);
        l->shadow_size += n;
        return 0;
}

/* Whether a regular file of an image is a key: kept from others (foyer writes key files 0400, SSH
 * host keys 0600), or where foyer's contract puts keys, whatever its mode (another builder's image, or
 * a key that was readable by others when it was added); a password file with a password hash. A
 * hard link's names share the mode, so the name without the data counts as well. */
static bool entry_is_key(Lister *l, const CpioEntry *e) {
        const char *p;

        if ((e->mode & S_IFMT) != S_IFREG)
                return false;
        if (is_shadow(e)) {
                bool hash = l->shadow_overflow || shadow_has_hash(l->shadow, l->shadow_size);

                l->shadow_size = 0;
                l->shadow_overflow = false;
                return hash;
        }
        if (!(e->mode & S_IROTH))
                return true;
        p = image_path_skip_prefix(e->name);
        FOREACH_STRING(dir, FOYER_SSH_HOST_KEY_DIR, FOYER_CRYPT_KEYS_DIR) {
                const char *rest = startswith(p, dir + 1);  /* the archive's names have no leading "/" */

                if (rest && rest[0] == '/')
                        return true;
        }
        return false;
}

static int check_entry(Lister *l, const CpioEntry *e) {
        _cleanup_free_ char *name = NULL;

        if (l->key || !entry_is_key(l, e))
                return 0;
        name = escape(image_path_skip_prefix(e->name));
        if (!name || asprintf(&l->key, "/%s (mode %04o%s)", name, (unsigned) (e->mode & 07777),
                              is_shadow(e) ? ", a password hash" : "") < 0) {
                l->key = NULL;
                return log_oom();
        }
        return 0;
}

/* LS_VISIT: the caller sees names as image paths without the archive's "./" or "/". */
static int visit_data(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata) {
        Lister *l = userdata;
        CpioEntry named = *e;

        if (!l->visitor->data)
                return 0;
        named.name = image_path_skip_prefix(e->name);
        return l->visitor->data(&named, chunk, n, l->visitor->userdata);
}

static int visit_entry(Lister *l, const CpioEntry *e) {
        CpioEntry named = *e;

        named.name = image_path_skip_prefix(e->name);
        return l->visitor->entry(&named, l->visitor->userdata);
}

static int print_entry(const CpioEntry *e, void *userdata) {
        Lister *l = userdata;
        char mode[11];

        count_entry(&l->counts, e);
        if (l->mode == LS_CHECK)
                return check_entry(l, e);
        if (l->mode == LS_VISIT)
                return visit_entry(l, e);
        if (l->mode == LS_CAT) {
                if (l->link_pending && (e->mode & S_IFMT) == S_IFREG && e->ino == l->link_ino) {
                        l->copying = false;
                        l->link_pending = e->size == 0;   /* not the name with the data yet */
                        return 0;
                }
                if (!is_wanted(l, e))
                        return 0;
                l->copying = false;
                l->link_pending = (e->mode & S_IFMT) == S_IFREG && e->nlink > 1 && e->size == 0;
                l->link_ino = e->ino;
                l->found_entry = *e;
                if (e->link_target) {
                        strcpy(l->found_target, e->link_target);
                        l->found_entry.link_target = l->found_target;
                }
                l->found_entry.name = l->wanted;
                l->found = &l->found_entry;
                return 0;
        }

        if (l->json) {
                print_entry_json(l, e);
                return 0;
        }
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
        l->link_pending = false;        /* inode numbers belong to one archive */
        if (l->mode == LS_CAT)
                cpio_reader_set_data_callback(&l->reader, copy_data);
        else if (l->mode == LS_CHECK)
                cpio_reader_set_data_callback(&l->reader, check_data);
        else if (l->mode == LS_VISIT)
                cpio_reader_set_data_callback(&l->reader, visit_data);
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
        l->link_pending = false;        /* inode numbers belong to one archive */
        if (l->mode == LS_CAT)
                cpio_reader_set_data_callback(&l->reader, copy_data);
        else if (l->mode == LS_CHECK)
                cpio_reader_set_data_callback(&l->reader, check_data);
        else if (l->mode == LS_VISIT)
                cpio_reader_set_data_callback(&l->reader, visit_data);
        r = cpio_reader_feed(&l->reader, data + pos, size - pos, ret_used);
        if (r == -EBADMSG)
                return log_error_errno(r, "%s: corrupt cpio archive at offset %zu.", l->path, pos);
        if (r < 0)
                return r;       /* copy_data() logged it */
        r = cpio_reader_finish(&l->reader);
        if (r < 0)
                return log_error_errno(r, "%s: cpio archive at offset %zu is truncated.", l->path, pos);
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

/* A UKI: its sections; the archives follow (ls_walk()). */
static void ls_uki(const Lister *l, const PeImage *pe) {
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
}

/* The data of a UKI's section, NULL when it is empty or out of the file. */
static const uint8_t *uki_section(const PeImage *pe, const char *name, size_t *ret_size) {
        const PeSection *s = pe_find_section(pe, name);
        const uint8_t *d;

        *ret_size = 0;
        if (!s)
                return NULL;
        d = pe_section_data(pe, s, ret_size);
        return d && *ret_size > 0 ? d : NULL;
}

static size_t skip_zeros(const uint8_t *data, size_t size, size_t pos) {
        while (pos < size && data[pos] == 0)
                pos++;
        return pos;
}

/* Each archive in data, one after the other. */
static int ls_archives(Lister *l, const uint8_t *data, size_t size) {
        size_t pos = 0;
        int r;

        for (;;) {
                Compression c;
                size_t used;

                pos = skip_zeros(data, size, pos);
                if (pos >= size)
                        return 0;

                r = decompress_detect(data + pos, size - pos, &c);
                if (r < 0)
                        return log_error_errno(r, "%s%s: neither a cpio archive nor a known compression at offset %zu.",
                                               l->path, IN_SET(l->mode, LS_CHECK, LS_VISIT) ? " is not an initrd" : "", pos);
                if (l->json) {
                        fprintf(l->out, "%s{\"section\":", l->json_archives++ > 0 ? ",\n  " : "\n  ");
                        if (l->section)
                                fprintf(l->out, "\"%s\"", l->section);
                        else
                                fputs("null", l->out);
                        fprintf(l->out, ",\"offset\":%zu,\"compression\":\"%s\",\"entries\":[", pos,
                                c == COMPRESSION_NONE ? "none" : compression_to_string(c));
                        l->json_first = true;
                } else if (l->info) {
                        /* The listing so far first, where both go to one file. */
                        fflush(l->out);
                        fprintf(l->info, "Offset %zu: %s%s cpio\n", pos,
                                c == COMPRESSION_NONE ? "uncompressed" : compression_to_string(c),
                                c == COMPRESSION_NONE ? "" : "-compressed");
                }
                if (c == COMPRESSION_NONE)
                        r = list_uncompressed(l, data, size, pos, &used);
                else
                        r = list_compressed(l, c, data, size, pos, &used);
                if (r < 0)
                        return r;
                if (l->json)
                        fputs(l->json_first ? "]}" : "\n  ]}", l->out);
                if (used == 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s: no progress at offset %zu.", l->path, pos);
                pos += used;
        }
}

/* One pass over the image in data: a UKI's sections (listed in LS_LIST), then each archive; in a
 * UKI, those of .ucode (systemd-stub 256's microcode section) before those of .initrd, the order
 * in which the stub hands them to the kernel. */
static int ls_walk(Lister *l, const uint8_t *data, size_t size) {
        PeImage pe;
        int r;

        if (pe_parse(data, size, &pe, NULL) >= 0) {
                const uint8_t *ucode, *initrd;
                size_t ucode_size, initrd_size;

                if (l->mode == LS_CHECK)
                        return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s is a PE image (a UKI or a kernel), not an initrd.",
                                               l->path);
                if (l->mode == LS_LIST && !l->json)
                        ls_uki(l, &pe);
                initrd = uki_section(&pe, ".initrd", &initrd_size);
                if (!initrd) {
                        if (l->mode == LS_LIST && pe_find_section(&pe, ".initrd"))
                                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s: the .initrd section is empty or truncated.",
                                                       l->path);
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s: PE image without an%s initrd.", l->path,
                                               l->mode != LS_CAT ? " .initrd section" : "");
                }
                ucode = uki_section(&pe, ".ucode", &ucode_size);
                if (ucode) {
                        if (l->mode == LS_LIST && !l->json)
                                fprintf(l->out, ".ucode:\n");
                        l->section = ".ucode";
                        r = ls_archives(l, ucode, ucode_size);
                        if (r < 0)
                                return r;
                }
                if (l->mode == LS_LIST && !l->json)
                        fprintf(l->out, ".initrd:\n");
                l->section = ".initrd";
                r = ls_archives(l, initrd, initrd_size);
        } else
                r = ls_archives(l, data, size);
        if (r < 0)
                return r;
        if (l->counts.entries == 0 && l->mode != LS_LIST)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s holds no cpio archive.", l->path);
        return 0;
}

/* The reader holds a name and a target of up to 4 KiB each, LS_CHECK a shadow file: not on the stack. */
static Lister *lister_new(const char *path, LsMode mode, FILE *out) {
        Lister *l = calloc(1, sizeof(Lister));

        if (!l)
                return NULL;
        l->path = path;
        l->mode = mode;
        l->out = out;
        return l;
}

int ls_data(const char *path, const uint8_t *data, size_t size, FILE *out, uint64_t max_expanded) {
        _cleanup_free_ Lister *l = NULL;

        assert(path);
        assert(data || size == 0);
        assert(out);

        l = lister_new(path, LS_LIST, out);
        if (!l)
                return log_oom();
        l->max_expanded = max_expanded;
        return ls_walk(l, data, size);
}

int ls_check_initrd(const char *path, const uint8_t *data, size_t size, char **ret_key) {
        _cleanup_free_ Lister *l = NULL;
        int r;

        assert(path);
        assert(data || size == 0);

        l = lister_new(path, LS_CHECK, NULL);
        if (!l)
                return log_oom();
        r = ls_walk(l, data, size);
        if (r >= 0 && ret_key)
                *ret_key = TAKE_PTR(l->key);
        free(l->key);
        return r;
}

typedef struct MappedImage {
        void *data;
        size_t size;
} MappedImage;

static void mapped_image_done(MappedImage *m) {
        if (m->data)
                munmap(m->data, m->size);
        *m = (MappedImage) {};
}

static int map_image(const char *path, MappedImage *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        void *map;

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
        *ret = (MappedImage) { map, st.st_size };
        return 0;
}

static int flush_stdout(const char *what) {
        if (fflush(stdout) != 0 || ferror(stdout))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write %s.", what);
        return 0;
}

int ls_image(const char *path) {
        _cleanup_(mapped_image_done) MappedImage map = {};
        _cleanup_free_ Lister *l = NULL;
        int r;

        assert(path);

        r = map_image(path, &map);
        if (r < 0)
                return r;
        l = lister_new(path, LS_LIST, stdout);
        if (!l)
                return log_oom();
        /* stdout holds the entries only, one a line, as before; what describes the image goes to
         * stderr, as cpio's block count does, so that scripts reading the listing see no change. */
        l->info = stderr;
        fprintf(stderr, "Image: %s, %zu bytes\n", path, map.size);

        /* Streaming keeps memory bounded, so an image is listed however far it expands. */
        r = ls_walk(l, map.data, map.size);
        if (r < 0)
                return r;
        r = flush_stdout("the listing");
        if (r < 0)
                return r;
        fprintf(stderr, "Summary: entries %" PRIu64 ", files %" PRIu64 " (%" PRIu64 " bytes), directories %" PRIu64
                ", symlinks %" PRIu64 ", other %" PRIu64 "\n",
                l->counts.entries, l->counts.files, l->counts.file_bytes, l->counts.dirs, l->counts.symlinks,
                l->counts.other);
        return 0;
}

int ls_image_json(const char *path) {
        _cleanup_(mapped_image_done) MappedImage map = {};
        _cleanup_free_ Lister *l = NULL;
        PeImage pe;
        int r;

        assert(path);

        r = map_image(path, &map);
        if (r < 0)
                return r;
        l = lister_new(path, LS_LIST, stdout);
        if (!l)
                return log_oom();
        l->json = true;

        fputs("{", stdout);
        json_field(stdout, "image", path);
        fprintf(stdout, ",\"size\":%zu,\"format\":\"%s\",\"archives\":[", map.size,
                pe_parse(map.data, map.size, &pe, NULL) >= 0 ? "uki" : "initrd");
        r = ls_walk(l, map.data, map.size);
        if (r < 0) {
                /* What was printed is no complete document; say so where a reader of stdout sees it. */
                fflush(stdout);
                return r;
        }
        fprintf(stdout, "%s],\n \"summary\":{\"entries\":%" PRIu64 ",\"files\":%" PRIu64 ",\"file_bytes\":%" PRIu64
                ",\"directories\":%" PRIu64 ",\"symlinks\":%" PRIu64 ",\"other\":%" PRIu64 "}}\n",
                l->json_archives > 0 ? "\n" : "", l->counts.entries, l->counts.files, l->counts.file_bytes,
                l->counts.dirs, l->counts.symlinks, l->counts.other);
        return flush_stdout("the listing");
}

int ls_cat(const char *image, const char *path) {
        _cleanup_(mapped_image_done) MappedImage map = {};
        _cleanup_free_ Lister *l = NULL;
        const CpioEntry *e;
        int r;

        assert(image);
        assert(path);

        r = map_image(image, &map);
        if (r < 0)
                return r;
        l = lister_new(image, LS_CAT, stdout);
        if (!l)
                return log_oom();
        l->wanted = image_path_skip_prefix(path);
        if (isempty(l->wanted))
                return log_error_errno(SYNTHETIC_ERRNO(EISDIR), "%s: \"%s\" is the image's root directory, not a file.",
                                       image, path);

        r = ls_walk(l, map.data, map.size);
        if (r < 0)
                return r;
        e = l->found;
        if (!e) {
                struct stat st;

                /* "foyer ls A.img B.img" listed two images before foyer ls took lsinitrd's form. */
                if (stat(path, &st) >= 0 && S_ISREG(st.st_mode))
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "%s has no file %s (foyer ls lists one image; the words after it "
                                               "are paths inside it).", image, path);
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s has no file %s.", image, path);
        }
        switch (e->mode & S_IFMT) {
        case S_IFREG:
                return flush_stdout(path);
        case S_IFDIR:
                return log_error_errno(SYNTHETIC_ERRNO(EISDIR), "%s: %s is a directory.", image, path);
        case S_IFLNK: {
                _cleanup_free_ char *target = escape(e->link_target);

                if (!target)
                        return log_oom();
                return log_error_errno(SYNTHETIC_ERRNO(ELOOP), "%s: %s is a symlink to %s; name the target instead.",
                                       image, path, target);
        }
        default:
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s: %s is not a regular file.", image, path);
        }
}

int ls_visit(const char *path, const LsVisitor *v, uint64_t max_expanded, char **ret_uki_cmdline) {
        _cleanup_(mapped_image_done) MappedImage map = {};
        _cleanup_free_ Lister *l = NULL;
        _cleanup_free_ char *cmdline = NULL;
        PeImage pe;
        int r;

        assert(path);
        assert(v);
        assert(v->entry);

        r = map_image(path, &map);
        if (r < 0)
                return r;
        if (ret_uki_cmdline && pe_parse(map.data, map.size, &pe, NULL) >= 0) {
                size_t n;
                const uint8_t *d = uki_section(&pe, ".cmdline", &n);

                /* The stub passes the section's text up to its first NUL, as a C string. */
                if (d) {
                        cmdline = strndup((const char *) d, n);
                        if (!cmdline)
                                return log_oom();
                }
        }
        l = lister_new(path, LS_VISIT, NULL);
        if (!l)
                return log_oom();
        l->visitor = v;
        l->max_expanded = max_expanded;
        r = ls_walk(l, map.data, map.size);
        if (r < 0)
                return r;
        if (ret_uki_cmdline)
                *ret_uki_cmdline = TAKE_PTR(cmdline);
        return 0;
}
