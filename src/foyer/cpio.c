/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <search.h>
#include <string.h>
#include <sys/stat.h>

#include "cpio.h"
#include "log.h"

#define CPIO_HEADER_SIZE 110
#define CPIO_MAX_FIELD 0xffffffffULL

void cpio_writer_init(CpioWriter *w, Sink *sink, uint64_t mtime) {
        *w = (CpioWriter) {
                .sink = sink,
                .mtime = mtime,
                .next_ino = 1,
        };
}

uint32_t cpio_next_ino(CpioWriter *w) {
        return w->next_ino++;
}

static size_t padlen(uint64_t offset, size_t align) {
        return (align - (offset % align)) % align;
}

static int cpio_out(CpioWriter *w, const void *data, size_t size) {
        int r = sink_write(w->sink, data, size);

        if (r < 0)
                return r;
        w->offset += size;
        return 0;
}

static int cpio_pad(CpioWriter *w, size_t align) {
        static const uint8_t zeros[512] = {};

        return cpio_out(w, zeros, padlen(w->offset, align));
}

/* One header plus the name, padded so that the data starts 4-aligned. */
static int cpio_header_full(CpioWriter *w, const char *name, uint32_t ino, uint32_t mode, uint32_t nlink,
                            uint64_t filesize, uint32_t rmajor, uint32_t rminor) {
        char hdr[CPIO_HEADER_SIZE + 1];
        size_t namesize;
        int r;

        /* The image stores relative names, like the kernel's own archives. */
        while (*name == '/')
                name++;
        if (isempty(name))
                name = ".";
        namesize = strlen(name) + 1;

        if (filesize > CPIO_MAX_FIELD || w->mtime > CPIO_MAX_FIELD || namesize > CPIO_MAX_FIELD)
                return log_error_errno(SYNTHETIC_ERRNO(EFBIG), "%s: too large for the newc format.", name);

        snprintf(hdr, sizeof(hdr),
                 "070701"                      /* magic */
                 "%08" PRIX32                  /* ino */
                 "%08" PRIX32                  /* mode */
                 "%08" PRIX32                  /* uid */
                 "%08" PRIX32                  /* gid */
                 "%08" PRIX32                  /* nlink */
                 "%08" PRIX32                  /* mtime */
                 "%08" PRIX32                  /* filesize */
                 "%08" PRIX32                  /* devmajor */
                 "%08" PRIX32                  /* devminor */
                 "%08" PRIX32                  /* rdevmajor */
                 "%08" PRIX32                  /* rdevminor */
                 "%08" PRIX32                  /* namesize */
                 "%08" PRIX32,                 /* check */
                 ino, mode, (uint32_t) 0, (uint32_t) 0, nlink, (uint32_t) w->mtime, (uint32_t) filesize,
                 (uint32_t) 0, (uint32_t) 0, rmajor, rminor, (uint32_t) namesize, (uint32_t) 0);

        r = cpio_out(w, hdr, CPIO_HEADER_SIZE);
        if (r < 0)
                return r;
        r = cpio_out(w, name, namesize);
        if (r < 0)
                return r;
        return cpio_pad(w, 4);
}

static int cpio_header(CpioWriter *w, const char *name, uint32_t ino, uint32_t mode, uint32_t nlink,
                       uint64_t filesize) {
        return cpio_header_full(w, name, ino, mode, nlink, filesize, 0, 0);
}

int cpio_write_char_device(CpioWriter *w, const char *name, uint32_t mode, unsigned major, unsigned minor) {
        return cpio_header_full(w, name, cpio_next_ino(w), S_IFCHR | (mode & 07777), 1, 0, major, minor);
}

int cpio_write_directory(CpioWriter *w, const char *name, uint32_t mode) {
        return cpio_header(w, name, cpio_next_ino(w), S_IFDIR | (mode & 07777), 2, 0);
}

int cpio_write_symlink(CpioWriter *w, const char *name, const char *target) {
        size_t l = strlen(target);
        int r;

        r = cpio_header(w, name, cpio_next_ino(w), S_IFLNK | 0777, 1, l);
        if (r < 0)
                return r;
        r = cpio_out(w, target, l);
        if (r < 0)
                return r;
        return cpio_pad(w, 4);
}

int cpio_write_file(CpioWriter *w, const char *name, uint32_t mode, uint32_t ino, uint32_t nlink,
                    int fd, const void *data, uint64_t size) {
        uint64_t left = size;
        int r;

        r = cpio_header(w, name, ino ?: cpio_next_ino(w), S_IFREG | (mode & 07777), MAX(nlink, 1U), size);
        if (r < 0)
                return r;

        if (fd < 0)
                r = cpio_out(w, data, size);
        else {
                static uint8_t buf[1024 * 1024];

                while (left > 0) {
                        ssize_t n = read(fd, buf, MIN(left, (uint64_t) sizeof(buf)));

                        if (n < 0) {
                                if (errno == EINTR)
                                        continue;
                                return negative_errno();
                        }
                        /* The file shrank since it was planned: refuse, the size is in the header. */
                        if (n == 0)
                                return -EPIPE;
                        r = cpio_out(w, buf, n);
                        if (r < 0)
                                return r;
                        left -= n;
                }
        }
        if (r < 0)
                return r;
        return cpio_pad(w, 4);
}

int cpio_write_trailer(CpioWriter *w) {
        int r;

        r = cpio_header(w, "TRAILER!!!", 0, 0, 1, 0);
        if (r < 0)
                return r;
        return cpio_pad(w, 512);
}

/* Hard links: names whose sources are the same inode share one cpio inode; the data goes with the
 * last name in the archive's order. */
typedef struct LinkGroup {
        dev_t dev;
        ino_t ino;
        uint32_t nlink;         /* names in the image */
        uint32_t written;
        uint32_t cpio_ino;
} LinkGroup;

static int link_group_cmp(const void *a, const void *b) {
        const LinkGroup *x = a, *y = b;

        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return 0;
}

typedef struct EmitState {
        CpioWriter *w;
        Manifest *m;
        void *groups;
} EmitState;

static int count_link(Entry *e, void *userdata) {
        EmitState *s = userdata;
        LinkGroup key = { .dev = e->source_dev, .ino = e->source_ino }, **found, *g;

        if (e->type != ENTRY_FILE)
                return 0;

        found = tfind(&key, &s->groups, link_group_cmp);
        if (found) {
                (*found)->nlink++;
                return 0;
        }
        g = calloc(1, sizeof(LinkGroup));
        if (!g)
                return -ENOMEM;
        *g = key;
        g->nlink = 1;
        if (!tsearch(g, &s->groups, link_group_cmp)) {
                free(g);
                return -ENOMEM;
        }
        return 0;
}

static int emit_entry(Entry *e, void *userdata) {
        EmitState *s = userdata;
        int r;

        switch (e->type) {
        case ENTRY_DIRECTORY:
                r = cpio_write_directory(s->w, e->path, e->mode);
                break;
        case ENTRY_SYMLINK:
                r = cpio_write_symlink(s->w, e->path, e->target);
                break;
        case ENTRY_CHAR_DEVICE:
                r = cpio_write_char_device(s->w, e->path, e->mode, e->rdev_major, e->rdev_minor);
                break;
        case ENTRY_DATA:
                r = cpio_write_file(s->w, e->path, e->mode, 0, 1, -EBADF, e->data, e->size);
                break;
        case ENTRY_FILE: {
                LinkGroup key = { .dev = e->source_dev, .ino = e->source_ino }, *g;
                _cleanup_close_ int fd = -EBADF;
                struct stat st;
                bool last;

                g = *(LinkGroup **) tfind(&key, &s->groups, link_group_cmp);
                if (g->cpio_ino == 0)
                        g->cpio_ino = cpio_next_ino(s->w);
                last = ++g->written == g->nlink;

                if (!last) {
                        r = cpio_write_file(s->w, e->path, e->mode, g->cpio_ino, g->nlink, -EBADF, NULL, 0);
                        break;
                }

                /* The file planned, not whatever has its name now (logged). */
                fd = manifest_open_source(s->m, e);
                if (fd < 0)
                        return fd;
                if (fstat(fd, &st) < 0)
                        return log_error_errno(errno, "Failed to stat %s: %m", e->source);
                r = cpio_write_file(s->w, e->path, e->mode, g->cpio_ino, g->nlink, fd, NULL, st.st_size);
                if (r < 0)
                        return log_error_errno(r, "Failed to write %s from %s: %m", e->path, e->source);
                break;
        }
        default:
                r = -EINVAL;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to write %s to the archive: %m", e->path);
        return 0;
}

/* The order of the archive, for the compressor: the window holds what came shortly before, so
 * like files go together. First everything that is not a regular file (directories, symlinks,
 * devices) by path, so a file's directory is always there when the kernel unpacks the file; then
 * the regular files: data files by extension, kernel modules by path (a directory's drivers are
 * alike), then programs and then libraries, each by size. Measured on Debian 12's generic image at
 * the same level: 1.6 % smaller than the order of paths (dracut's files in this order: 0.9 %);
 * other orders tried (by type and name, by extension, programs and libraries mixed) gained less.
 * Ties go by path: the archive stays deterministic. */
typedef enum PackGroup {
        PACK_NOT_REGULAR,
        PACK_DATA,
        PACK_MODULE,
        PACK_PROGRAM,
        PACK_LIBRARY,
} PackGroup;

typedef struct PackKey {
        Entry *e;
        PackGroup group;
        const char *ext;        /* PACK_DATA: the file name's extension, "" for none */
} PackKey;

static bool is_library_name(const char *base) {
        /* libfoo.so, libfoo.so.1, ld-linux-x86-64.so.2; not foo.socket */
        for (const char *p = strstr(base, ".so"); p; p = strstr(p + 1, ".so"))
                if (p[3] == 0 || p[3] == '.')
                        return true;
        return false;
}

static PackKey pack_key(Entry *e) {
        const char *base = strrchr(e->path, '/'), *dot;

        base = base ? base + 1 : e->path;
        if (!IN_SET(e->type, ENTRY_FILE, ENTRY_DATA))
                return (PackKey) { e, PACK_NOT_REGULAR, "" };
        if (endswith(base, ".ko") || endswith(base, ".ko.xz") || endswith(base, ".ko.zst") || endswith(base, ".ko.gz"))
                return (PackKey) { e, PACK_MODULE, "" };
        if (is_library_name(base))
                return (PackKey) { e, PACK_LIBRARY, "" };
        if (e->mode & 0100)
                return (PackKey) { e, PACK_PROGRAM, "" };
        dot = strrchr(base, '.');
        return (PackKey) { e, PACK_DATA, dot ?: "" };
}

static int pack_key_cmp(const void *a, const void *b) {
        const PackKey *x = a, *y = b;
        int c;

        if (x->group != y->group)
                return x->group < y->group ? -1 : 1;
        if (IN_SET(x->group, PACK_PROGRAM, PACK_LIBRARY) && x->e->size != y->e->size)
                return x->e->size < y->e->size ? -1 : 1;
        c = strcmp(x->ext, y->ext);
        return c != 0 ? c : strcmp(x->e->path, y->e->path);
}

int cpio_write_manifest(CpioWriter *w, Manifest *m) {
        EmitState s = { .w = w, .m = m };
        _cleanup_free_ PackKey *keys = NULL;
        int r = 0;

        keys = malloc(sizeof(PackKey) * MAX(m->n_entries, (size_t) 1));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_entries; i++)
                keys[i] = pack_key(m->entries[i]);
        qsort(keys, m->n_entries, sizeof(PackKey), pack_key_cmp);

        for (size_t i = 0; r >= 0 && i < m->n_entries; i++)
                r = count_link(keys[i].e, &s);
        for (size_t i = 0; r >= 0 && i < m->n_entries; i++)
                r = emit_entry(keys[i].e, &s);
        tdestroy(s.groups, free);
        if (r < 0)
                return r;
        return cpio_write_trailer(w);
}

/* ---- reader ---- */

static int parse_hex8(const uint8_t *p, uint32_t *ret) {
        uint32_t v = 0;

        for (int i = 0; i < 8; i++) {
                int c = p[i], d;

                if (c >= '0' && c <= '9')
                        d = c - '0';
                else if (c >= 'a' && c <= 'f')
                        d = c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        d = c - 'A' + 10;
                else
                        return -EBADMSG;
                v = v << 4 | d;
        }
        *ret = v;
        return 0;
}

void cpio_reader_init(CpioReader *r, bool multi, int (*f)(const CpioEntry *e, void *userdata), void *userdata) {
        assert(r);

        *r = (CpioReader) {
                .f = f,
                .userdata = userdata,
                .multi = multi,
                /* A decompressed stream may start with zeros, like the gaps between archives. */
                .state = multi ? CPIO_READ_BETWEEN : CPIO_READ_HEADER,
                .need = multi ? 0 : CPIO_HEADER_SIZE,
        };
}

void cpio_reader_set_data_callback(CpioReader *r,
                                   int (*data_f)(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata)) {
        assert(r);
        r->data_f = data_f;
}

static void reader_enter(CpioReader *r, CpioReaderState state, uint64_t need) {
        r->state = state;
        r->need = need;
        r->fill = 0;
}

/* A complete header: check it and size the name. */
static int reader_header(CpioReader *r) {
        uint32_t fields[13];
        int k;

        if (memcmp(r->header, "070701", 6) != 0 && memcmp(r->header, "070702", 6) != 0)
                return -EBADMSG;
        for (int i = 0; i < 13; i++) {
                k = parse_hex8(r->header + 6 + 8 * i, &fields[i]);
                if (k < 0)
                        return k;
        }
        if (fields[11] == 0 || fields[11] > CPIO_PATH_MAX)
                return -EBADMSG;

        r->entry = (CpioEntry) {
                .name = r->name,
                .ino = fields[0],
                .mode = fields[1],
                .uid = fields[2],
                .gid = fields[3],
                .nlink = fields[4],
                .mtime = fields[5],
                .size = fields[6],
                .rdev_major = fields[9],
                .rdev_minor = fields[10],
        };
        reader_enter(r, CPIO_READ_NAME, fields[11]);
        return 0;
}

static bool entry_is_symlink(const CpioEntry *e) {
        return (e->mode & S_IFMT) == S_IFLNK;
}

/* A complete name: check it; the target of a symlink is kept, so it must fit. */
static int reader_name(CpioReader *r) {
        if (r->name[r->fill - 1] != '\0')
                return -EBADMSG;
        r->trailer = streq(r->name, "TRAILER!!!");
        if (!r->trailer && entry_is_symlink(&r->entry) && r->entry.size >= CPIO_PATH_MAX)
                return -EBADMSG;
        reader_enter(r, CPIO_READ_NAME_PAD, padlen(r->offset, 4));
        return 0;
}

/* The entry's data is complete: report the entry. */
static int reader_entry(CpioReader *r) {
        int k;

        if (!r->trailer && r->f) {
                if (entry_is_symlink(&r->entry)) {
                        r->target[r->entry.size] = '\0';
                        r->entry.link_target = r->target;
                }
                k = r->f(&r->entry, r->userdata);
                if (k < 0)
                        return k;
        }
        reader_enter(r, r->trailer ? CPIO_READ_TRAILER_PAD : CPIO_READ_DATA_PAD, padlen(r->offset, 4));
        return 0;
}

/* Moves on from a state whose bytes are all there. */
static int reader_advance(CpioReader *r) {
        switch (r->state) {
        case CPIO_READ_HEADER:
                return reader_header(r);
        case CPIO_READ_NAME:
                return reader_name(r);
        case CPIO_READ_NAME_PAD:
                reader_enter(r, CPIO_READ_DATA, r->entry.size);
                return 0;
        case CPIO_READ_DATA:
                return reader_entry(r);
        case CPIO_READ_DATA_PAD:
                reader_enter(r, CPIO_READ_HEADER, CPIO_HEADER_SIZE);
                return 0;
        case CPIO_READ_TRAILER_PAD:
                reader_enter(r, r->multi ? CPIO_READ_BETWEEN : CPIO_READ_DONE, 0);
                return 0;
        default:
                assert(!"no bytes to wait for in this state");
                return -EINVAL;
        }
}

/* Where the bytes of the current state go: the header, the name, a symlink's target, or nowhere. */
static uint8_t *reader_buffer(CpioReader *r) {
        switch (r->state) {
        case CPIO_READ_HEADER:
                return r->header;
        case CPIO_READ_NAME:
                return (uint8_t *) r->name;
        case CPIO_READ_DATA:
                return !r->trailer && entry_is_symlink(&r->entry) ? (uint8_t *) r->target : NULL;
        default:
                return NULL;
        }
}

int cpio_reader_feed(CpioReader *r, const uint8_t *data, size_t size, size_t *ret_used) {
        size_t pos = 0;
        int k;

        assert(r);
        assert(data || size == 0);
        assert(ret_used);

        while (r->state != CPIO_READ_DONE) {
                uint8_t *buf;
                size_t n;

                if (r->state == CPIO_READ_BETWEEN) {
                        while (pos < size && data[pos] == 0)
                                pos++;
                        if (pos == size)
                                break;
                        reader_enter(r, CPIO_READ_HEADER, CPIO_HEADER_SIZE);
                        r->offset = 0;
                        r->archive_start = r->total + pos;
                        continue;
                }
                if (r->need == 0) {
                        k = reader_advance(r);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (pos == size)
                        break;

                /* need fits in memory whenever bytes are kept: the header, a name and a target
                 * are bounded above. */
                n = (size_t) MIN((uint64_t) (size - pos), r->need);
                buf = reader_buffer(r);
                if (buf)
                        memcpy(buf + r->fill, data + pos, n);
                else if (r->state == CPIO_READ_DATA && r->data_f && !r->trailer &&
                         (r->entry.mode & S_IFMT) == S_IFREG) {
                        k = r->data_f(&r->entry, data + pos, n, r->userdata);
                        if (k < 0)
                                return k;
                }
                r->fill += n;
                r->need -= n;
                r->offset += n;
                pos += n;
        }

        r->total += pos;
        *ret_used = pos;
        return 0;
}

int cpio_reader_finish(const CpioReader *r) {
        assert(r);

        /* A trailer's padding may be cut off by the end of the input. */
        if (r->state == CPIO_READ_DONE || r->state == CPIO_READ_TRAILER_PAD || r->state == CPIO_READ_BETWEEN)
                return 0;
        return -EPIPE;
}

int cpio_parse(const uint8_t *data, size_t size, int (*f)(const CpioEntry *e, void *userdata),
               void *userdata, size_t *ret_consumed) {
        _cleanup_free_ CpioReader *r = NULL;
        size_t used;
        int k;

        assert(data || size == 0);
        assert(ret_consumed);

        r = malloc(sizeof(CpioReader));
        if (!r)
                return -ENOMEM;
        cpio_reader_init(r, false, f, userdata);
        k = cpio_reader_feed(r, data, size, &used);
        if (k < 0)
                return k;
        k = cpio_reader_finish(r);
        if (k < 0)
                return k;
        *ret_consumed = used;
        return 0;
}
