/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>
#include <elf.h>
#include <stddef.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "elf-file.h"
#include "log.h"
#include "util.h"

/* The FDO dlopen note: owner "FDO", type 0x407c0c0a, descriptor a JSON array of objects with a
 * "soname" array. https://systemd.io/ELF_DLOPEN_METADATA/ */
#define NOTE_FDO_DLOPEN 0x407c0c0aU

typedef struct Image {
        const uint8_t *data;
        size_t size;
        const Elf64_Ehdr *ehdr;
        const Elf64_Phdr *phdr;
} Image;

ElfFile *elf_file_free(ElfFile *f) {
        if (!f)
                return NULL;
        free(f->interp);
        strv_free(f->needed);
        strv_free(f->rpath);
        strv_free(f->runpath);
        strv_free(f->dlopen);
        free(f);
        return NULL;
}

static bool range_ok(const Image *img, uint64_t offset, uint64_t size) {
        return offset <= img->size && size <= img->size - offset;
}

/* Maps a virtual address to a file offset through the PT_LOAD segments. */
static int vaddr_to_offset(const Image *img, uint64_t vaddr, uint64_t *ret) {
        for (unsigned i = 0; i < img->ehdr->e_phnum; i++) {
                const Elf64_Phdr *p = img->phdr + i;

                if (p->p_type != PT_LOAD)
                        continue;
                if (vaddr >= p->p_vaddr && vaddr - p->p_vaddr < p->p_filesz) {
                        *ret = p->p_offset + (vaddr - p->p_vaddr);
                        return 0;
                }
        }
        return -EBADMSG;
}

/* Returns a pointer to a NUL-terminated string inside the image, or NULL if it runs off the end. */
static const char *image_string(const Image *img, uint64_t offset) {
        if (offset >= img->size)
                return NULL;
        if (!memchr(img->data + offset, 0, img->size - offset))
                return NULL;
        return (const char *) img->data + offset;
}

static int parse_dynamic(const Image *img, const Elf64_Phdr *dyn, ElfFile *f) {
        const Elf64_Dyn *d;
        size_t n;
        uint64_t strtab_vaddr = 0, strtab_off, strsz = 0;
        bool have_strtab = false;
        int r;

        if (!range_ok(img, dyn->p_offset, dyn->p_filesz))
                return -EBADMSG;
        d = (const Elf64_Dyn *) (img->data + dyn->p_offset);
        n = dyn->p_filesz / sizeof(Elf64_Dyn);

        for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++)
                if (d[i].d_tag == DT_STRTAB) {
                        strtab_vaddr = d[i].d_un.d_ptr;
                        have_strtab = true;
                } else if (d[i].d_tag == DT_STRSZ)
                        strsz = d[i].d_un.d_val;
        if (!have_strtab)
                return 0;

        r = vaddr_to_offset(img, strtab_vaddr, &strtab_off);
        if (r < 0)
                return r;
        if (!range_ok(img, strtab_off, strsz))
                return -EBADMSG;

        for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
                const char *s;

                if (d[i].d_tag != DT_NEEDED && d[i].d_tag != DT_RPATH && d[i].d_tag != DT_RUNPATH)
                        continue;
                if (d[i].d_un.d_val >= strsz)
                        return -EBADMSG;
                s = image_string(img, strtab_off + d[i].d_un.d_val);
                if (!s)
                        return -EBADMSG;

                switch (d[i].d_tag) {
                case DT_NEEDED:
                        r = strv_extend(&f->needed, s);
                        break;
                case DT_RPATH:
                        r = strv_split(s, ":", &f->rpath);
                        break;
                case DT_RUNPATH:
                        r = strv_split(s, ":", &f->runpath);
                        break;
                }
                if (r < 0)
                        return r;
        }

        return 0;
}

/* Pulls every string of every "soname" array out of the note's JSON. The notes are produced by a
 * macro with a fixed shape, so a small scanner is enough; anything unexpected is skipped. */
static int parse_dlopen_json(const char *json, size_t len, ElfFile *f) {
        const char *p = json, *end = json + len;
        int r;

        while (p < end) {
                const char *k = memmem(p, end - p, "\"soname\"", 8);

                if (!k)
                        break;
                p = k + 8;
                while (p < end && (*p == ' ' || *p == ':' || *p == '\n' || *p == '\t'))
                        p++;
                if (p >= end || *p != '[')
                        continue;
                p++;
                while (p < end && *p != ']') {
                        const char *q;

                        if (*p != '"') {
                                p++;
                                continue;
                        }
                        q = memchr(p + 1, '"', end - p - 1);
                        if (!q)
                                return 0;
                        r = strv_consume(&f->dlopen, strndup(p + 1, q - p - 1));
                        if (r < 0)
                                return r;
                        p = q + 1;
                }
        }
        return 0;
}

static int parse_notes(const Image *img, ElfFile *f) {
        const Elf64_Ehdr *e = img->ehdr;
        const Elf64_Shdr *sh;
        int r;

        if (e->e_shoff == 0 || e->e_shnum == 0)
                return 0;
        if (e->e_shentsize != sizeof(Elf64_Shdr) ||
            !range_ok(img, e->e_shoff, (uint64_t) e->e_shnum * sizeof(Elf64_Shdr)))
                return -EBADMSG;
        sh = (const Elf64_Shdr *) (img->data + e->e_shoff);

        for (unsigned i = 0; i < e->e_shnum; i++) {
                uint64_t off, end, align;

                if (sh[i].sh_type != SHT_NOTE)
                        continue;
                if (!range_ok(img, sh[i].sh_offset, sh[i].sh_size))
                        return -EBADMSG;

                align = sh[i].sh_addralign == 8 ? 8 : 4;
                off = sh[i].sh_offset;
                end = off + sh[i].sh_size;
                while (off + sizeof(Elf64_Nhdr) <= end) {
                        const Elf64_Nhdr *n = (const Elf64_Nhdr *) (img->data + off);
                        uint64_t name_off = off + sizeof(Elf64_Nhdr);
                        uint64_t desc_off = name_off + ALIGN_TO((uint64_t) n->n_namesz, align);
                        uint64_t next = desc_off + ALIGN_TO((uint64_t) n->n_descsz, align);

                        if (desc_off + n->n_descsz > end)
                                break;
                        if (n->n_type == NOTE_FDO_DLOPEN && n->n_namesz == 4 &&
                            memcmp(img->data + name_off, "FDO", 4) == 0) {
                                r = parse_dlopen_json((const char *) img->data + desc_off, n->n_descsz, f);
                                if (r < 0)
                                        return r;
                        }
                        off = next;
                }
        }
        return 0;
}

static int read_ident(int fd, unsigned char ident[static EI_NIDENT + 4]) {
        ssize_t n = pread(fd, ident, EI_NIDENT + 4, 0);

        if (n < 0)
                return negative_errno();
        if (n < EI_NIDENT + 4 || memcmp(ident, ELFMAG, SELFMAG) != 0)
                return -ENOEXEC;
        if (ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB)
                return -ENOEXEC;
        return 0;
}

int elf_file_read(const char *path, ElfFile **ret) {
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        _cleanup_close_ int fd = -EBADF;
        unsigned char ident[EI_NIDENT + 4];
        struct stat st;
        Image img = {};
        void *map;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = read_ident(fd, ident);
        if (r < 0)
                return r;
        /* e_type follows e_ident; relocatable objects (kernel modules) need nothing. */
        if (ident[EI_NIDENT] != ET_EXEC && ident[EI_NIDENT] != ET_DYN)
                return -ENOEXEC;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((size_t) st.st_size < sizeof(Elf64_Ehdr))
                return -EBADMSG;

        map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return negative_errno();

        img.data = map;
        img.size = st.st_size;
        img.ehdr = map;

        f = calloc(1, sizeof(ElfFile));
        if (!f) {
                r = -ENOMEM;
                goto finish;
        }
        f->machine = img.ehdr->e_machine;
        f->type = img.ehdr->e_type;

        if (img.ehdr->e_phentsize != sizeof(Elf64_Phdr) ||
            !range_ok(&img, img.ehdr->e_phoff, (uint64_t) img.ehdr->e_phnum * sizeof(Elf64_Phdr))) {
                r = -EBADMSG;
                goto finish;
        }
        img.phdr = (const Elf64_Phdr *) (img.data + img.ehdr->e_phoff);

        for (unsigned i = 0; i < img.ehdr->e_phnum; i++) {
                const Elf64_Phdr *p = img.phdr + i;

                if (p->p_type == PT_INTERP) {
                        if (!range_ok(&img, p->p_offset, p->p_filesz) || p->p_filesz == 0) {
                                r = -EBADMSG;
                                goto finish;
                        }
                        f->interp = strndup((const char *) img.data + p->p_offset, p->p_filesz);
                        if (!f->interp) {
                                r = -ENOMEM;
                                goto finish;
                        }
                } else if (p->p_type == PT_DYNAMIC) {
                        r = parse_dynamic(&img, p, f);
                        if (r < 0)
                                goto finish;
                }
        }

        r = parse_notes(&img, f);
        if (r < 0)
                goto finish;

        *ret = TAKE_PTR(f);
        r = 0;
finish:
        munmap(map, st.st_size);
        return r;
}

static int add_search_dir(char ***l, const char *dir) {
        _cleanup_free_ char *d = NULL;

        if (isempty(dir) || dir[0] != '/')
                return 0;
        d = path_merge_usr(dir);
        if (!d)
                return -ENOMEM;
        if (strv_contains(*l, d))
                return 0;
        return strv_consume(l, TAKE_PTR(d));
}

static int parse_ld_so_conf(const char *root, const char *path, char ***l, unsigned depth) {
        _cleanup_free_ char *full = NULL, *text = NULL;
        char *line, *saveptr = NULL;
        int r;

        if (depth > 8)
                return 0;

        r = path_in_root(root, path, false, &full);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = read_full_file(full, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;

        for (line = strtok_r(text, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
                char *hash = strchr(line, '#');
                const char *inc;

                if (hash)
                        *hash = 0;
                line += strspn(line, " \t");

                inc = startswith(line, "include");
                if (inc && (*inc == ' ' || *inc == '\t')) {
                        _cleanup_strv_free_ char **patterns = NULL;

                        r = strv_split(inc, " \t", &patterns);
                        if (r < 0)
                                return r;
                        for (char **p = patterns; *p; p++) {
                                _cleanup_free_ char *img = NULL, *dir = NULL, *real_dir = NULL, *pattern = NULL;
                                glob_t g = {};

                                /* The directory is resolved inside root and glob() only matches
                                 * names in it, so no host symlink is followed; a wildcard in a
                                 * directory part matches nothing. */
                                if ((*p)[0] == '/')
                                        img = strdup(*p);
                                else {
                                        dir = path_dirname(path);
                                        img = dir ? strjoin(dir, "/", *p) : NULL;
                                }
                                free(dir);
                                dir = img ? path_dirname(img) : NULL;
                                if (!dir)
                                        return -ENOMEM;
                                r = path_in_root(root, dir, false, &real_dir);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0)
                                        continue;
                                pattern = strjoin(real_dir, "/", path_basename(img));
                                if (!pattern)
                                        return -ENOMEM;

                                if (glob(pattern, 0, NULL, &g) == 0)
                                        for (size_t i = 0; i < g.gl_pathc; i++) {
                                                _cleanup_free_ char *conf = strjoin(dir, "/", path_basename(g.gl_pathv[i]));

                                                if (!conf) {
                                                        globfree(&g);
                                                        return -ENOMEM;
                                                }
                                                r = parse_ld_so_conf(root, conf, l, depth + 1);
                                                if (r < 0) {
                                                        globfree(&g);
                                                        return r;
                                                }
                                        }
                                globfree(&g);
                        }
                        continue;
                }
                if (startswith(line, "hwcap"))
                        continue;

                _cleanup_strv_free_ char **dirs = NULL;
                r = strv_split(line, " \t:,=", &dirs);
                if (r < 0)
                        return r;
                for (char **d = dirs; *d; d++) {
                        r = add_search_dir(l, *d);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int elf_search_path(const char *root, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        r = parse_ld_so_conf(isempty(root) ? "/" : root, "/etc/ld.so.conf", &l, 0);
        if (r < 0)
                return r;

        /* glibc's built-in trusted directories come after the cache. */
        FOREACH_STRING(d, "/lib64", "/usr/lib64", "/lib", "/usr/lib") {
                r = add_search_dir(&l, d);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(l);
        return 0;
}

static int candidate_matches(const char *root, const char *image_path, uint16_t machine) {
        _cleanup_free_ char *full = NULL;
        _cleanup_close_ int fd = -EBADF;
        unsigned char ident[EI_NIDENT + 4];
        Elf64_Half m;
        int r;

        r = path_in_root(root, image_path, false, &full);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        fd = open(full, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        r = read_ident(fd, ident);
        if (r < 0)
                return 0;
        if (pread(fd, &m, sizeof(m), offsetof(Elf64_Ehdr, e_machine)) != sizeof(m))
                return 0;
        return m == machine;
}

/* Expands $ORIGIN, ${ORIGIN}, $LIB and $PLATFORM in one RPATH/RUNPATH entry. */
static char *expand_dst(const char *entry, const char *origin_dir) {
        static const struct {
                const char *token;
                const char *value;
        } tokens[] = {
                { "$ORIGIN", NULL }, { "${ORIGIN}", NULL },
                { "$LIB", "lib64" }, { "${LIB}", "lib64" },
                { "$PLATFORM", "x86_64" }, { "${PLATFORM}", "x86_64" },
        };
        _cleanup_free_ char *out = strdup("");

        while (out && *entry) {
                bool matched = false;

                for (size_t i = 0; i < ELEMENTSOF(tokens); i++) {
                        const char *rest = startswith(entry, tokens[i].token);
                        char *t;

                        /* "$ORIGIN" must not match the prefix of "$ORIGINX". */
                        if (!rest || (tokens[i].token[1] != '{' && (isalnum((unsigned char) *rest) || *rest == '_')))
                                continue;
                        t = strjoin(out, tokens[i].value ?: origin_dir);
                        free(out);
                        out = t;
                        entry = rest;
                        matched = true;
                        break;
                }
                if (!matched) {
                        char c[2] = { *entry++, 0 };
                        char *t = strjoin(out, c);
                        free(out);
                        out = t;
                }
        }
        return TAKE_PTR(out);
}

static int try_dirs(const char *root, const char *name, char * const *dirs, const char *origin_dir,
                    uint16_t machine, char **ret) {
        int r;

        STRV_FOREACH(d, dirs) {
                _cleanup_free_ char *dir = NULL, *candidate = NULL, *merged = NULL;

                dir = expand_dst(*d, origin_dir);
                if (!dir)
                        return -ENOMEM;
                if (dir[0] != '/')
                        continue;
                candidate = strjoin(dir, "/", name);
                if (!candidate)
                        return -ENOMEM;
                merged = path_merge_usr(candidate);
                if (!merged)
                        return -ENOMEM;
                r = candidate_matches(root, merged, machine);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *ret = TAKE_PTR(merged);
                        return 1;
                }
        }
        return 0;
}

int elf_find_library(const char *root, const char *name, const ElfFile *requester,
                     const char *origin_dir, char * const *search_path, char **ret) {
        int r;

        if (strchr(name, '/')) {
                _cleanup_free_ char *merged = path_merge_usr(name);

                if (!merged)
                        return -ENOMEM;
                r = candidate_matches(root, merged, requester->machine);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -ENOENT;
                *ret = TAKE_PTR(merged);
                return 0;
        }

        if (!requester->runpath) {
                r = try_dirs(root, name, requester->rpath, origin_dir, requester->machine, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = try_dirs(root, name, requester->runpath, origin_dir, requester->machine, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        r = try_dirs(root, name, search_path, origin_dir, requester->machine, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        return -ENOENT;
}
