/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <ctype.h>
#include <elf.h>
#include <stddef.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "elf-dlopen.h"
#include "elf-file.h"
#include "log.h"
#include "util.h"


/* The file's bytes may sit at any alignment (a mapping is page-aligned, but e_phoff, e_shoff and
 * the other offsets come from the file): every structure is copied into an aligned local with
 * memcpy() after its range has been checked, never read through a cast pointer. */
typedef struct Image {
        const uint8_t *data;
        size_t size;
        Elf64_Ehdr ehdr;
} Image;

ElfFile *elf_file_free(ElfFile *f) {
        if (!f)
                return NULL;
        free(f->interp);
        strv_free(f->needed);
        strv_free(f->rpath);
        strv_free(f->runpath);
        strv_free(f->dlopen);
        dlopen_features_free(f->dlopen_features, f->n_dlopen_features);
        elf_version_needs_free(f->version_needs, f->n_version_needs);
        strv_free(f->version_defs);
        free(f);
        return NULL;
}

static bool range_ok(const Image *img, uint64_t offset, uint64_t size) {
        return offset <= img->size && size <= img->size - offset;
}

/* Copies size bytes at offset into ret, or -EBADMSG if the file does not hold them. */
static int image_read(const Image *img, uint64_t offset, void *ret, size_t size) {
        if (!range_ok(img, offset, size))
                return -EBADMSG;
        memcpy(ret, img->data + offset, size);
        return 0;
}

/* Program header i; the table's range was checked when the image was opened. */
static Elf64_Phdr image_phdr(const Image *img, unsigned i) {
        Elf64_Phdr p;

        memcpy(&p, img->data + img->ehdr.e_phoff + (uint64_t) i * sizeof(Elf64_Phdr), sizeof(p));
        return p;
}

/* Maps a virtual address to a file offset through the PT_LOAD segments. */
static int vaddr_to_offset(const Image *img, uint64_t vaddr, uint64_t *ret) {
        for (unsigned i = 0; i < img->ehdr.e_phnum; i++) {
                Elf64_Phdr p = image_phdr(img, i);

                if (p.p_type != PT_LOAD)
                        continue;
                if (vaddr >= p.p_vaddr && vaddr - p.p_vaddr < p.p_filesz) {
                        if (p.p_offset > UINT64_MAX - (vaddr - p.p_vaddr))
                                return -EBADMSG;
                        *ret = p.p_offset + (vaddr - p.p_vaddr);
                        return 0;
                }
        }
        return -EBADMSG;
}

/* The NUL-terminated string at index in the string table [strtab, strtab + strsz), or NULL if it
 * runs off the table's end. */
static const char *image_string(const Image *img, uint64_t strtab, uint64_t strsz, uint64_t index) {
        if (index >= strsz)
                return NULL;
        if (!memchr(img->data + strtab + index, 0, strsz - index))
                return NULL;
        return (const char *) img->data + strtab + index;
}

/* Each list is set once: a second DT_RPATH or DT_RUNPATH makes the file malformed (ld.so would
 * read only one of them, and which one is not ours to guess). */
static int set_path_list(char ***list, const char *s) {
        if (*list)
                return -EBADMSG;
        return strv_split(s, ":", list);
}

/* A version table's tag (DT_VERNEED, DT_VERDEF) and count (DT_VERNEEDNUM, DT_VERDEFNUM) as the
 * dynamic section gives them: each at most once, and neither without the other. */
typedef struct VersionTable {
        uint64_t vaddr, count;
        bool have_vaddr, have_count;
} VersionTable;

static int version_table_set(bool *have, uint64_t *field, uint64_t value) {
        if (*have)
                return -EBADMSG;
        *have = true;
        *field = value;
        return 0;
}

/* The table's bytes run from its address to the end of the file: the parsers check every entry
 * against that. */
static int version_table_locate(const Image *img, const VersionTable *t, uint64_t *ret_off) {
        if (!t->have_vaddr && !t->have_count)
                return 0;
        if (!t->have_vaddr || !t->have_count)
                return -EBADMSG;
        /* The segment's p_offset comes from the file too: the address may map beyond its end. */
        if (vaddr_to_offset(img, t->vaddr, ret_off) < 0 || !range_ok(img, *ret_off, 0))
                return -EBADMSG;
        return 1;
}

static int parse_versions(const Image *img, const VersionTable *need, const VersionTable *def,
                          uint64_t strtab_off, uint64_t strsz, ElfFile *f) {
        uint64_t off;
        int r;

        r = version_table_locate(img, need, &off);
        if (r < 0)
                return r;
        if (r > 0) {
                /* A second PT_DYNAMIC with its own table: as for DT_RPATH, not ours to pick one. */
                if (f->n_version_needs > 0)
                        return -EBADMSG;
                r = elf_verneed_parse(img->data + off, img->size - off, need->count, img->data + strtab_off, strsz,
                                      &f->version_needs, &f->n_version_needs);
                if (r < 0)
                        return r;
        }
        r = version_table_locate(img, def, &off);
        if (r < 0)
                return r;
        if (r > 0) {
                if (f->has_version_defs)
                        return -EBADMSG;
                r = elf_verdef_parse(img->data + off, img->size - off, def->count, img->data + strtab_off, strsz,
                                     &f->version_defs);
                if (r < 0)
                        return r;
                f->has_version_defs = true;
        }
        return 0;
}

static int parse_dynamic(const Image *img, const Elf64_Phdr *dyn, ElfFile *f) {
        uint64_t strtab_vaddr = 0, strtab_off, strsz = 0, n;
        VersionTable need = {}, def = {};
        bool have_strtab = false;
        Elf64_Dyn d;
        int r;

        if (!range_ok(img, dyn->p_offset, dyn->p_filesz))
                return -EBADMSG;
        n = dyn->p_filesz / sizeof(Elf64_Dyn);

        for (uint64_t i = 0; i < n; i++) {
                memcpy(&d, img->data + dyn->p_offset + i * sizeof(Elf64_Dyn), sizeof(d));
                if (d.d_tag == DT_NULL)
                        break;
                r = 0;
                switch (d.d_tag) {
                case DT_STRTAB:
                        strtab_vaddr = d.d_un.d_ptr;
                        have_strtab = true;
                        break;
                case DT_STRSZ:
                        strsz = d.d_un.d_val;
                        break;
                case DT_VERNEED:
                        r = version_table_set(&need.have_vaddr, &need.vaddr, d.d_un.d_ptr);
                        break;
                case DT_VERNEEDNUM:
                        r = version_table_set(&need.have_count, &need.count, d.d_un.d_val);
                        break;
                case DT_VERDEF:
                        r = version_table_set(&def.have_vaddr, &def.vaddr, d.d_un.d_ptr);
                        break;
                case DT_VERDEFNUM:
                        r = version_table_set(&def.have_count, &def.count, d.d_un.d_val);
                        break;
                }
                if (r < 0)
                        return r;
        }
        if (!have_strtab) {
                /* Version names live in the string table. */
                if (need.have_vaddr || need.have_count || def.have_vaddr || def.have_count)
                        return -EBADMSG;
                return 0;
        }

        r = vaddr_to_offset(img, strtab_vaddr, &strtab_off);
        if (r < 0)
                return r;
        if (!range_ok(img, strtab_off, strsz))
                return -EBADMSG;

        for (uint64_t i = 0; i < n; i++) {
                const char *s;

                memcpy(&d, img->data + dyn->p_offset + i * sizeof(Elf64_Dyn), sizeof(d));
                if (d.d_tag == DT_NULL)
                        break;
                if (d.d_tag != DT_NEEDED && d.d_tag != DT_RPATH && d.d_tag != DT_RUNPATH)
                        continue;
                s = image_string(img, strtab_off, strsz, d.d_un.d_val);
                if (!s)
                        return -EBADMSG;

                switch (d.d_tag) {
                case DT_NEEDED:
                        r = strv_extend(&f->needed, s);
                        break;
                case DT_RPATH:
                        r = set_path_list(&f->rpath, s);
                        break;
                case DT_RUNPATH:
                        r = set_path_list(&f->runpath, s);
                        break;
                }
                if (r < 0)
                        return r;
        }

        return parse_versions(img, &need, &def, strtab_off, strsz, f);
}

/* The note's features, and their sonames flattened into f->dlopen in order. */
static int parse_dlopen_note(const char *json, size_t len, ElfFile *f) {
        size_t first = f->n_dlopen_features;
        int r;

        r = dlopen_note_parse(json, len, &f->dlopen_features, &f->n_dlopen_features);
        if (r < 0)
                return r;
        for (size_t i = first; i < f->n_dlopen_features; i++)
                STRV_FOREACH(s, f->dlopen_features[i].sonames)
                        if (strv_extend(&f->dlopen, *s) < 0)
                                return -ENOMEM;
        return 0;
}

static int parse_note_section(const Image *img, const Elf64_Shdr *sh, ElfFile *f) {
        uint64_t off, end, align;
        int r;

        if (!range_ok(img, sh->sh_offset, sh->sh_size))
                return -EBADMSG;

        align = sh->sh_addralign == 8 ? 8 : 4;
        off = sh->sh_offset;
        end = off + sh->sh_size;        /* within the file: no overflow */
        while (end - off >= sizeof(Elf64_Nhdr)) {
                Elf64_Nhdr n;
                uint64_t name_off = off + sizeof(Elf64_Nhdr), desc_off;

                memcpy(&n, img->data + off, sizeof(n));
                /* 32-bit sizes aligned in 64 bits: no overflow before the comparison. */
                if (ALIGN_TO((uint64_t) n.n_namesz, align) > end - name_off)
                        break;
                desc_off = name_off + ALIGN_TO((uint64_t) n.n_namesz, align);
                if (n.n_descsz > end - desc_off)
                        break;
                if (n.n_type == NOTE_FDO_DLOPEN && n.n_namesz == 4 &&
                    memcmp(img->data + name_off, "FDO", 4) == 0) {
                        r = parse_dlopen_note((const char *) img->data + desc_off, n.n_descsz, f);
                        if (r < 0)
                                return r;
                }
                if (ALIGN_TO((uint64_t) n.n_descsz, align) >= end - desc_off)
                        break;
                off = desc_off + ALIGN_TO((uint64_t) n.n_descsz, align);
        }
        return 0;
}

static int parse_notes(const Image *img, ElfFile *f) {
        const Elf64_Ehdr *e = &img->ehdr;
        int r;

        if (e->e_shoff == 0 || e->e_shnum == 0)
                return 0;
        if (e->e_shentsize != sizeof(Elf64_Shdr) ||
            !range_ok(img, e->e_shoff, (uint64_t) e->e_shnum * sizeof(Elf64_Shdr)))
                return -EBADMSG;

        for (unsigned i = 0; i < e->e_shnum; i++) {
                Elf64_Shdr sh;

                memcpy(&sh, img->data + e->e_shoff + (uint64_t) i * sizeof(Elf64_Shdr), sizeof(sh));
                if (sh.sh_type != SHT_NOTE)
                        continue;
                r = parse_note_section(img, &sh, f);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_ident(const unsigned char *ident, size_t size) {
        if (size < EI_NIDENT + 4 || memcmp(ident, ELFMAG, SELFMAG) != 0)
                return -ENOEXEC;
        if (ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB)
                return -ENOEXEC;
        /* e_type follows e_ident; relocatable objects (kernel modules) need nothing. */
        if (ident[EI_NIDENT] != ET_EXEC && ident[EI_NIDENT] != ET_DYN)
                return -ENOEXEC;
        return 0;
}

static int read_ident(int fd, unsigned char ident[static EI_NIDENT + 4]) {
        ssize_t n = pread(fd, ident, EI_NIDENT + 4, 0);

        if (n < 0)
                return negative_errno();
        return check_ident(ident, n);
}

int elf_file_parse(const uint8_t *data, size_t size, ElfFile **ret) {
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        Image img = { .data = data, .size = size };
        int r;

        assert(data || size == 0);
        assert(ret);

        r = check_ident(data, size);
        if (r < 0)
                return r;
        r = image_read(&img, 0, &img.ehdr, sizeof(img.ehdr));
        if (r < 0)
                return r;

        f = calloc(1, sizeof(ElfFile));
        if (!f)
                return -ENOMEM;
        f->machine = img.ehdr.e_machine;
        f->type = img.ehdr.e_type;

        if (img.ehdr.e_phentsize != sizeof(Elf64_Phdr) ||
            !range_ok(&img, img.ehdr.e_phoff, (uint64_t) img.ehdr.e_phnum * sizeof(Elf64_Phdr)))
                return -EBADMSG;

        for (unsigned i = 0; i < img.ehdr.e_phnum; i++) {
                Elf64_Phdr p = image_phdr(&img, i);

                if (p.p_type == PT_INTERP) {
                        /* One interpreter: a second PT_INTERP makes the file malformed. */
                        if (f->interp || !range_ok(&img, p.p_offset, p.p_filesz) || p.p_filesz == 0)
                                return -EBADMSG;
                        f->interp = strndup((const char *) img.data + p.p_offset, p.p_filesz);
                        if (!f->interp)
                                return -ENOMEM;
                } else if (p.p_type == PT_DYNAMIC) {
                        /* A second PT_DYNAMIC would repeat its DT_RPATH: refused there. */
                        r = parse_dynamic(&img, &p, f);
                        if (r < 0)
                                return r;
                }
        }

        r = parse_notes(&img, f);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(f);
        return 0;
}

int elf_file_read_fd(int fd, ElfFile **ret) {
        unsigned char ident[EI_NIDENT + 4];
        struct stat st;
        void *map;
        int r;

        assert(fd >= 0);
        assert(ret);

        /* Most files the resolver looks at are not ELF: decide that without mapping them. */
        r = read_ident(fd, ident);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((size_t) st.st_size < sizeof(Elf64_Ehdr))
                return -EBADMSG;

        map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return negative_errno();
        r = elf_file_parse(map, st.st_size, ret);
        munmap(map, st.st_size);
        return r;
}

int elf_file_read(const char *path, ElfFile **ret) {
        _cleanup_close_ int fd = -EBADF;

        assert(path);
        assert(ret);

        fd = open_regular_at(AT_FDCWD, path, 0, NULL);
        if (fd < 0)
                return fd;
        return elf_file_read_fd(fd, ret);
}

int elf_file_read_entry(Manifest *m, const Entry *e, const ElfFile **ret) {
        _cleanup_close_ int fd = -EBADF;
        Entry *w = (Entry *) e;         /* the cache is the entry's own, not part of its value */
        int r;

        assert(m);
        assert(e);
        assert(ret);

        /* Each file is parsed once per build: the resolver, the closure check and the planners ask
         * for the same programs and libraries. */
        if (!e->elf && e->elf_error == 0) {
                fd = manifest_open_source(m, e);
                r = fd < 0 ? fd : elf_file_read_fd(fd, &w->elf);
                /* libsystemd-shared before 256 has no .note.dlopen: its features come from a table,
                 * by the name it has in the image. */
                if (r >= 0 && dlopen_legacy_features(path_basename(e->path), &w->elf->dlopen_features,
                                                     &w->elf->n_dlopen_features) < 0)
                        r = -ENOMEM;
                if (r < 0) {
                        elf_file_free(w->elf);
                        w->elf = NULL;
                }
                w->elf_error = r < 0 ? r : 1;
        }
        if (!e->elf)
                return e->elf_error;
        *ret = e->elf;
        return 0;
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
        _cleanup_free_ char *text = NULL;
        char *line, *saveptr = NULL;
        int r;

        if (depth > 8)
                return 0;

        r = read_full_file_in_root(root, path, &text, NULL);
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

        /* A FIFO or a device node at a library's name is refused, not opened: opening a FIFO would
         * hang the build, a device node may act on it. */
        fd = open_regular_in_root(root, image_path, 0, NULL);
        if (fd == -ENOMEM)
                return fd;
        if (fd == -EBADFD) {
                _cleanup_close_ int path_fd = -EBADF;
                struct stat st = {};

                if (open_in_root(root, image_path, 0, &path_fd) >= 0)
                        (void) fstat(path_fd, &st);
                full = path_prefix_root(root, image_path);
                return log_error_errno(fd, "Library %s is %s, not a regular file: refusing to open it.",
                                       full ?: image_path, file_type_name(st.st_mode));
        }
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
