/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <limits.h>
#include <lz4.h>
#include <lz4frame.h>
#include <lz4hc.h>
#include <lzma.h>
#include <sched.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "compress.h"
#include "fileio.h"
#include "log.h"

/* The kernel unpacks lz4 initrds only in the legacy format (what "lz4 -l" writes): a magic,
 * then blocks that each decompress to 8 MiB, each preceded by its compressed size. */
#define LZ4_LEGACY_MAGIC 0x184C2102U
#define LZ4_LEGACY_BLOCK (8U * 1024U * 1024U)

#define OUT_CHUNK (256U * 1024U)

struct Sink {
        Compression type;
        int fd;
        uint64_t bytes_in;
        ZSTD_CCtx *zstd;
        lzma_stream lzma;
        z_stream zlib;
        uint8_t *lz4_in;        /* pending input for one legacy block */
        size_t lz4_fill;
        uint8_t *out;
        size_t out_size;
        bool finished;
};

static const char *const compression_table[_COMPRESSION_MAX] = {
        [COMPRESSION_NONE] = "none",
        [COMPRESSION_ZSTD] = "zstd",
        [COMPRESSION_XZ] = "xz",
        [COMPRESSION_GZIP] = "gzip",
        [COMPRESSION_LZ4] = "lz4",
};

const char *compression_to_string(Compression c) {
        return c >= 0 && c < _COMPRESSION_MAX ? compression_table[c] : NULL;
}

Compression compression_from_string(const char *s) {
        for (Compression c = 0; c < _COMPRESSION_MAX; c++)
                if (streq(s, compression_table[c]))
                        return c;
        return _COMPRESSION_INVALID;
}

/* The CPUs this process may run on (taskset, a cgroup's cpuset), not all the machine has: threads
 * beyond them only wait. */
static long nproc(void) {
        cpu_set_t set;
        long n;

        if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
                return CPU_COUNT(&set);
        n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? n : 1;
}

int sink_new(Compression c, int level, int fd, Sink **ret) {
        _cleanup_(sink_freep) Sink *s = NULL;

        s = calloc(1, sizeof(Sink));
        if (!s)
                return -ENOMEM;
        s->type = c;
        s->fd = fd;
        s->out_size = OUT_CHUNK;
        s->out = malloc(s->out_size);
        if (!s->out)
                return -ENOMEM;

        switch (c) {
        case COMPRESSION_NONE:
                break;

        case COMPRESSION_ZSTD: {
                size_t z;

                s->zstd = ZSTD_createCCtx();
                if (!s->zstd)
                        return -ENOMEM;
                /* 12 with a 16 MiB window: the modules and libraries of a generic image repeat one
                 * another at distances beyond level 12's own 4 MiB window, and a larger window (and
                 * jobs that overlap by a whole window) finds those repeats for 1.5 s of the build,
                 * where level 16 (btopt) costs 9 s more for a similar gain. The kernel allocates the
                 * window while it unpacks the image, so the window stays at 16 MiB. */
                bool tuned = level < 0;
                if (tuned)
                        level = 12;
                z = ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_compressionLevel, level);
                if (ZSTD_isError(z))
                        return -EINVAL;
                /* The default is level 12 searching less but for shorter matches (level 12 looks 64
                 * candidates deep for matches of 5 bytes or more; here 32 deep, 4 bytes or more):
                 * on Debian 12's images as small or a little smaller (generic 21.07 MB against
                 * 21.08, host-only 10.27 against 10.31) for a third less compression time, with the
                 * same hash table (the memory of each worker). Measured with zstd's own command on
                 * the uncompressed archives (docs/performance.md). An explicit level is taken as is. */
                if (tuned) {
                        z = ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_searchLog, 5);
                        if (!ZSTD_isError(z))
                                z = ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_minMatch, 4);
                        if (ZSTD_isError(z))
                                return -EINVAL;
                }
                /* Levels up to 19 have at most an 8 MiB window of their own; 20 to 22 have more. */
                if (level <= 19) {
                        z = ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_windowLog, 24);
                        if (ZSTD_isError(z))
                                return -EINVAL;
                }
                /* The checksum lets the kernel and foyer ls catch corruption. */
                (void) ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_checksumFlag, 1);
                /* Worker count does not change the output as long as it is ≥ 1, so builds stay
                 * reproducible across machines. Without thread support this fails: stay serial. */
                z = ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_nbWorkers, (int) MAX(nproc(), 1L));
                if (ZSTD_isError(z))
                        log_debug("zstd without thread support, compressing in one thread.");
                else {
                        /* Each job starts with the whole window of the one before it, as a single
                         * thread would see it: smaller output, and still the same bytes whatever
                         * the worker count. */
                        (void) ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_overlapLog, 9);
                        /* zstd's own job size is four windows (64 MiB): a generic image (about
                         * 75 MB) made two jobs of 64 and 11 MB, and a host-only one (30 MB) one,
                         * so the build compressed in one thread most of the time. Jobs of 20 MiB
                         * (a window is the least zstd takes with a whole-window overlap) keep two
                         * cores busy for both, at a few hundred bytes more: the generic image's
                         * compression 4.0 -> 3.1 s, the host-only one's 1.9 -> 1.4 s (2 cores). A
                         * fixed size, so the bytes still do not depend on the worker count. */
                        (void) ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_jobSize, 20 << 20);
                }
                break;
        }

        case COMPRESSION_XZ: {
                /* The kernel's xz decoder takes CRC32 checks only. The multi-threaded encoder cuts the
                 * input into blocks of a size fixed by the preset, so the output does not depend on
                 * the thread count; the kernel decodes multi-block streams. */
                lzma_mt mt = {
                        .threads = (uint32_t) MAX(nproc(), 1L),
                        .preset = level < 0 ? 6 : (uint32_t) level,
                        .check = LZMA_CHECK_CRC32,
                };
                lzma_ret lr = lzma_stream_encoder_mt(&s->lzma, &mt);
                if (lr != LZMA_OK)
                        return lr == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
                break;
        }

        case COMPRESSION_GZIP:
                /* windowBits 15 + 16: gzip wrapper with a zero mtime in the header. */
                if (deflateInit2(&s->zlib, level < 0 ? 6 : level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                        return -ENOMEM;
                break;

        case COMPRESSION_LZ4: {
                uint8_t magic[4];
                uint32_t m = LZ4_LEGACY_MAGIC;
                int r;

                s->lz4_in = malloc(LZ4_LEGACY_BLOCK);
                free(s->out);
                s->out_size = LZ4_compressBound(LZ4_LEGACY_BLOCK);
                s->out = malloc(s->out_size);
                if (!s->lz4_in || !s->out)
                        return -ENOMEM;
                for (int i = 0; i < 4; i++)
                        magic[i] = (m >> (8 * i)) & 0xff;
                r = write_all(fd, magic, 4);
                if (r < 0)
                        return r;
                break;
        }

        default:
                return -EINVAL;
        }

        *ret = TAKE_PTR(s);
        return 0;
}

static int lz4_flush_block(Sink *s) {
        int n;
        uint8_t len[4];
        int r;

        if (s->lz4_fill == 0)
                return 0;
        n = LZ4_compress_HC((const char *) s->lz4_in, (char *) s->out, (int) s->lz4_fill, (int) s->out_size,
                            LZ4HC_CLEVEL_DEFAULT);
        if (n <= 0)
                return -EIO;
        for (int i = 0; i < 4; i++)
                len[i] = ((uint32_t) n >> (8 * i)) & 0xff;
        r = write_all(s->fd, len, 4);
        if (r < 0)
                return r;
        r = write_all(s->fd, s->out, n);
        if (r < 0)
                return r;
        s->lz4_fill = 0;
        return 0;
}

static int sink_push(Sink *s, const void *data, size_t size, bool end) {
        int r;

        switch (s->type) {
        case COMPRESSION_NONE:
                return write_all(s->fd, data, size);

        case COMPRESSION_ZSTD: {
                ZSTD_inBuffer in = { data, size, 0 };

                for (;;) {
                        ZSTD_outBuffer out = { s->out, s->out_size, 0 };
                        size_t rem = ZSTD_compressStream2(s->zstd, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);

                        if (ZSTD_isError(rem))
                                return log_debug_errno(SYNTHETIC_ERRNO(EIO), "zstd: %s", ZSTD_getErrorName(rem));
                        r = write_all(s->fd, s->out, out.pos);
                        if (r < 0)
                                return r;
                        if (end ? rem == 0 : in.pos == in.size)
                                return 0;
                }
        }

        case COMPRESSION_XZ:
                s->lzma.next_in = data;
                s->lzma.avail_in = size;
                for (;;) {
                        lzma_ret lr;

                        s->lzma.next_out = s->out;
                        s->lzma.avail_out = s->out_size;
                        lr = lzma_code(&s->lzma, end ? LZMA_FINISH : LZMA_RUN);
                        if (lr != LZMA_OK && lr != LZMA_STREAM_END)
                                return -EIO;
                        r = write_all(s->fd, s->out, s->out_size - s->lzma.avail_out);
                        if (r < 0)
                                return r;
                        if (end ? lr == LZMA_STREAM_END : s->lzma.avail_in == 0)
                                return 0;
                }

        case COMPRESSION_GZIP:
                s->zlib.next_in = (Bytef *) data;
                s->zlib.avail_in = size;
                for (;;) {
                        int zr;

                        s->zlib.next_out = s->out;
                        s->zlib.avail_out = s->out_size;
                        zr = deflate(&s->zlib, end ? Z_FINISH : Z_NO_FLUSH);
                        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
                                return -EIO;
                        r = write_all(s->fd, s->out, s->out_size - s->zlib.avail_out);
                        if (r < 0)
                                return r;
                        if (end ? zr == Z_STREAM_END : s->zlib.avail_in == 0)
                                return 0;
                }

        case COMPRESSION_LZ4: {
                const uint8_t *p = data;

                while (size > 0) {
                        size_t n = MIN(size, LZ4_LEGACY_BLOCK - s->lz4_fill);

                        memcpy(s->lz4_in + s->lz4_fill, p, n);
                        s->lz4_fill += n;
                        p += n;
                        size -= n;
                        if (s->lz4_fill == LZ4_LEGACY_BLOCK) {
                                r = lz4_flush_block(s);
                                if (r < 0)
                                        return r;
                        }
                }
                return end ? lz4_flush_block(s) : 0;
        }

        default:
                return -EINVAL;
        }
}

int sink_write(Sink *s, const void *data, size_t size) {
        if (s->finished)
                return -ESTALE;
        s->bytes_in += size;
        return size > 0 ? sink_push(s, data, size, false) : 0;
}

int sink_finish(Sink *s) {
        int r;

        if (s->finished)
                return 0;
        r = sink_push(s, NULL, 0, true);
        if (r < 0)
                return r;
        s->finished = true;
        return 0;
}

uint64_t sink_bytes_in(const Sink *s) {
        return s->bytes_in;
}

Sink *sink_free(Sink *s) {
        if (!s)
                return NULL;
        ZSTD_freeCCtx(s->zstd);
        if (s->type == COMPRESSION_XZ)
                lzma_end(&s->lzma);
        if (s->type == COMPRESSION_GZIP)
                deflateEnd(&s->zlib);
        free(s->lz4_in);
        free(s->out);
        free(s);
        return NULL;
}

/* ---- decompression, for foyer ls ---- */

int decompress_detect(const uint8_t *data, size_t size, Compression *ret_type) {
        static const struct {
                Compression type;
                const char *magic;
                size_t len;
        } magics[] = {
                { COMPRESSION_NONE, "070701", 6 },
                { COMPRESSION_ZSTD, "\x28\xb5\x2f\xfd", 4 },
                { COMPRESSION_XZ, "\xfd" "7zXZ\0", 6 },
                { COMPRESSION_GZIP, "\x1f\x8b", 2 },
                { COMPRESSION_LZ4, "\x02\x21\x4c\x18", 4 },       /* legacy */
                { COMPRESSION_LZ4, "\x04\x22\x4d\x18", 4 },       /* frame */
        };

        for (size_t i = 0; i < ELEMENTSOF(magics); i++)
                if (size >= magics[i].len && memcmp(data, magics[i].magic, magics[i].len) == 0) {
                        *ret_type = magics[i].type;
                        return 0;
                }
        return -EBADMSG;
}

/* The decompressors hand their output to f in pieces of at most OUT_CHUNK bytes (one legacy
 * block for lz4), so memory use is fixed by the format, never by the input: a small stream that
 * expands to gigabytes is listed in the same few megabytes as any other. */
typedef struct Output {
        int (*f)(const void *chunk, size_t n, void *userdata);
        void *userdata;
        uint8_t *buf;
        size_t size;
} Output;

static int output_emit(Output *o, size_t n) {
        return n > 0 ? o->f(o->buf, n, o->userdata) : 0;
}

/* A window larger than libzstd accepts is a memory limit, not corruption. */
static bool zstd_error_is_memory(ZSTD_ErrorCode e) {
        return e == ZSTD_error_memory_allocation || e == ZSTD_error_frameParameter_windowTooLarge;
}

static int decompress_zstd(const uint8_t *data, size_t size, Output *o, size_t *ret_consumed) {
        ZSTD_DCtx *d = ZSTD_createDCtx();
        ZSTD_inBuffer in = { data, size, 0 };
        size_t rem = 1;
        int r = 0;

        if (!d)
                return -ENOMEM;

        /* Decode consecutive zstd frames; stop at the first byte that starts no frame. The
         * window is bounded by libzstd's default limit (ZSTD_d_windowLogMax, 128 MiB). */
        while (in.pos < in.size) {
                if (rem == 0) {
                        if (in.size - in.pos < 4 || memcmp(data + in.pos, "\x28\xb5\x2f\xfd", 4) != 0)
                                break;
                }
                ZSTD_outBuffer out = { o->buf, o->size, 0 };
                rem = ZSTD_decompressStream(d, &out, &in);
                if (ZSTD_isError(rem)) {
                        r = zstd_error_is_memory(ZSTD_getErrorCode(rem)) ? -ENOMEM : -EBADMSG;
                        break;
                }
                r = output_emit(o, out.pos);
                if (r < 0)
                        break;
                if (rem != 0 && in.pos == in.size && out.pos < out.size) {
                        r = -EPIPE;
                        break;
                }
        }
        if (r == 0 && rem != 0)
                r = -EPIPE;
        ZSTD_freeDCtx(d);
        *ret_consumed = in.pos;
        return r;
}

/* The dictionary an xz header asks for is allocated up front; xz -9 needs 64 MiB, and a header
 * that asks for more is refused rather than believed. */
#define XZ_MEMLIMIT (128U * 1024U * 1024U)

static int decompress_xz(const uint8_t *data, size_t size, Output *o, size_t *ret_consumed) {
        lzma_stream s = LZMA_STREAM_INIT;
        lzma_ret lr;
        int r = 0;

        if (lzma_stream_decoder(&s, XZ_MEMLIMIT, 0) != LZMA_OK)
                return -ENOMEM;
        s.next_in = data;
        s.avail_in = size;
        for (;;) {
                s.next_out = o->buf;
                s.avail_out = o->size;
                lr = lzma_code(&s, LZMA_FINISH);
                r = output_emit(o, o->size - s.avail_out);
                if (r < 0)
                        break;
                if (lr == LZMA_STREAM_END)
                        break;
                if (lr == LZMA_BUF_ERROR && s.avail_in == 0) {
                        r = -EPIPE;
                        break;
                }
                if (lr != LZMA_OK) {
                        r = lr == LZMA_MEM_ERROR || lr == LZMA_MEMLIMIT_ERROR ? -ENOMEM : -EBADMSG;
                        break;
                }
        }
        *ret_consumed = size - s.avail_in;
        lzma_end(&s);
        return r;
}

static int decompress_gzip(const uint8_t *data, size_t size, Output *o, size_t *ret_consumed) {
        z_stream z = {};
        int r = 0, zr;

        if (inflateInit2(&z, 15 + 16) != Z_OK)
                return -ENOMEM;
        /* zlib counts in uInt; the input of one call is bounded by it, later calls continue. */
        z.next_in = (Bytef *) data;
        z.avail_in = (uInt) MIN(size, (size_t) UINT_MAX);
        for (;;) {
                z.next_out = o->buf;
                z.avail_out = o->size;
                zr = inflate(&z, Z_NO_FLUSH);
                r = output_emit(o, o->size - z.avail_out);
                if (r < 0)
                        break;
                if (zr == Z_STREAM_END)
                        break;
                if (zr == Z_BUF_ERROR && z.avail_in == 0) {
                        if (z.total_in < size) {
                                z.avail_in = (uInt) MIN(size - z.total_in, (size_t) UINT_MAX);
                                continue;
                        }
                        r = -EPIPE;
                        break;
                }
                if (zr != Z_OK && zr != Z_BUF_ERROR) {
                        r = zr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
                        break;
                }
        }
        *ret_consumed = z.total_in;
        inflateEnd(&z);
        return r;
}

static uint32_t le32(const uint8_t *p) {
        return p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static int decompress_lz4_legacy(const uint8_t *data, size_t size, Output *o, size_t *ret_consumed) {
        size_t pos = 4;
        int r;

        assert(o->size >= LZ4_LEGACY_BLOCK);

        /* Blocks continue until the end of input, or until a "size" that is another magic. */
        while (size - pos >= 4) {
                uint32_t n = le32(data + pos);
                int k;

                if (n == LZ4_LEGACY_MAGIC) {
                        pos += 4;
                        continue;
                }
                if (n == 0 || n > (uint32_t) LZ4_compressBound(LZ4_LEGACY_BLOCK))
                        break;  /* not a block: the archive after this stream */
                if (size - pos - 4 < n)
                        return -EPIPE;
                k = LZ4_decompress_safe((const char *) data + pos + 4, (char *) o->buf, (int) n,
                                        LZ4_LEGACY_BLOCK);
                if (k < 0)
                        return -EBADMSG;
                r = output_emit(o, k);
                if (r < 0)
                        return r;
                pos += 4 + n;
        }
        *ret_consumed = pos;
        return 0;
}

static int decompress_lz4_frame(const uint8_t *data, size_t size, Output *o, size_t *ret_consumed) {
        LZ4F_dctx *d = NULL;
        size_t pos = 0, hint = 1;
        int r = 0;

        if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
                return -ENOMEM;
        while (pos < size && hint != 0) {
                size_t in = size - pos, out = o->size;

                hint = LZ4F_decompress(d, o->buf, &out, data + pos, &in, NULL);
                if (LZ4F_isError(hint)) {
                        r = -EBADMSG;
                        break;
                }
                pos += in;
                r = output_emit(o, out);
                if (r < 0)
                        break;
        }
        if (r == 0 && hint != 0)
                r = -EPIPE;
        LZ4F_freeDecompressionContext(d);
        *ret_consumed = pos;
        return r;
}

int decompress_foreach(Compression c, const uint8_t *data, size_t size,
                       int (*f)(const void *chunk, size_t n, void *userdata), void *userdata,
                       size_t *ret_consumed) {
        _cleanup_free_ uint8_t *buf = NULL;
        bool legacy = c == COMPRESSION_LZ4 && size >= 4 && le32(data) == LZ4_LEGACY_MAGIC;
        Output o = { .f = f, .userdata = userdata, .size = legacy ? LZ4_LEGACY_BLOCK : OUT_CHUNK };
        size_t consumed = 0;
        int r;

        assert(data || size == 0);
        assert(f);
        assert(ret_consumed);

        buf = o.buf = malloc(o.size);
        if (!buf)
                return -ENOMEM;

        switch (c) {
        case COMPRESSION_ZSTD:
                r = decompress_zstd(data, size, &o, &consumed);
                break;
        case COMPRESSION_XZ:
                r = decompress_xz(data, size, &o, &consumed);
                break;
        case COMPRESSION_GZIP:
                r = decompress_gzip(data, size, &o, &consumed);
                break;
        case COMPRESSION_LZ4:
                if (legacy)
                        r = decompress_lz4_legacy(data, size, &o, &consumed);
                else
                        r = decompress_lz4_frame(data, size, &o, &consumed);
                break;
        default:
                r = -EINVAL;
        }
        if (r < 0)
                return r;

        *ret_consumed = consumed;
        return 0;
}
