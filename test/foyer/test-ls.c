/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer ls on hostile images: a small zstd stream that expands to a gigabyte is listed in bounded
 * memory (or refused past a cap), a symlink entry with a size of 2 GiB is refused as malformed,
 * and control characters in names and link targets reach the output escaped. Each listing runs
 * in a child, under an address-space limit where the sanitizers allow one, and the child's peak
 * RSS is checked. */

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "compress.h"
#include "cpio.h"
#include "ls.h"
#include "tests.h"
#include "util.h"

#if defined(__SANITIZE_ADDRESS__)
#  define UNDER_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define UNDER_ASAN 1
#  endif
#endif

#define ZSTD_BLOCK (128U * 1024U)
#define MiB (1024U * 1024U)

static char dir_template[] = "/tmp/test-ls.XXXXXX";
static const char *dir;

static void remove_dir(void) {
        _cleanup_free_ char *cmd = NULL;

        /* system() is warn_unused_result under _FORTIFY_SOURCE (Debian's package build). */
        if (asprintf(&cmd, "rm -rf '%s'", dir) > 0 && system(cmd) != 0)
                fprintf(stderr, "test-ls: could not remove %s\n", dir);
}

/* The scratch directory, made on first use and removed at exit. */
static const char *scratch(void) {
        if (!dir) {
                ASSERT_TRUE(mkdtemp(dir_template));
                dir = dir_template;
                ASSERT_TRUE(atexit(remove_dir) == 0);
        }
        return dir;
}

typedef struct Bytes {
        uint8_t *data;
        size_t size, allocated;
} Bytes;

static void bytes_add(Bytes *b, const void *p, size_t n) {
        /* Grown by doubling: the bombs are made of thousands of 4-byte blocks, and a realloc each
         * would leave ASan's quarantine (and so this process's RSS, which the child inherits)
         * holding hundreds of MiB. */
        if (b->allocated - b->size < n) {
                b->allocated = MAX(b->allocated * 2, b->size + n);
                b->data = realloc(b->data, b->allocated);
                ASSERT_TRUE(b->data);
        }
        memcpy(b->data + b->size, p, n);
        b->size += n;
}

static void zstd_block(Bytes *b, unsigned type, uint32_t size, bool last, const void *p, size_t n) {
        uint32_t h = size << 3 | type << 1 | last;
        uint8_t hdr[3] = { h, h >> 8, h >> 16 };

        bytes_add(b, hdr, 3);
        bytes_add(b, p, n);
}

/* A zstd frame by hand: prefix as a raw block, then zeros zeros as RLE blocks (4 bytes for each
 * 128 KiB), then suffix as a raw block. About 32 KiB of input per GiB of output. */
static Bytes zstd_bomb(const void *prefix, size_t prefix_size, uint64_t zeros, const void *suffix, size_t suffix_size) {
        static const uint8_t frame[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38 };   /* window 128 KiB */
        static const uint8_t zero = 0;
        Bytes b = {};

        bytes_add(&b, frame, sizeof frame);
        zstd_block(&b, 0, prefix_size, false, prefix, prefix_size);
        for (; zeros > 0; zeros -= MIN(zeros, (uint64_t) ZSTD_BLOCK))
                zstd_block(&b, 1, MIN(zeros, (uint64_t) ZSTD_BLOCK), false, &zero, 1);
        zstd_block(&b, 0, suffix_size, true, suffix, suffix_size);
        return b;
}

/* One newc header and name, padded to 4 bytes, as the writer would put it. */
static void newc_header(Bytes *b, const char *name, uint32_t mode, uint32_t size) {
        char hdr[120];
        static const uint8_t pad[4] = {};
        size_t namesize = strlen(name) + 1;

        snprintf(hdr, sizeof hdr, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
                 1u, mode, 0u, 0u, 1u, 0u, size, 0u, 0u, 0u, 0u, (uint32_t) namesize, 0u);
        bytes_add(b, hdr, 110);
        bytes_add(b, name, namesize);
        bytes_add(b, pad, (4 - (110 + namesize) % 4) % 4);
}

static Bytes newc_trailer(void) {
        Bytes b = {};

        newc_header(&b, "TRAILER!!!", 0, 0);
        return b;
}

static char *write_image(const char *name, const Bytes *b) {
        char *path = strjoin(scratch(), "/", name);
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, b->data, b->size) == (ssize_t) b->size);
        return path;
}

typedef struct Run {
        int status;             /* exit status, or -1 if killed */
        long maxrss_kib;
        char *out, *err;
} Run;

/* foyer ls PATH in a child: stdout and stderr captured, address space limited to 512 MiB where
 * that works (ASan maps terabytes of shadow, so there only the peak RSS tells). */
static Run run_ls(const char *path) {
        _cleanup_free_ char *out = strjoin(scratch(), "/stdout"), *err = strjoin(scratch(), "/stderr");
        struct rusage ru;
        Run run = {};
        int status;
        pid_t pid;

        ASSERT_TRUE(out && err);
        fflush(NULL);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
#ifndef UNDER_ASAN
                struct rlimit rl = { 512 * MiB, 512 * MiB };
                if (setrlimit(RLIMIT_AS, &rl) < 0)
                        _exit(3);
#endif
                if (!freopen(out, "we", stdout) || !freopen(err, "we", stderr))
                        _exit(4);
                int r = ls_image(path);
                fflush(NULL);
                _exit(r < 0 ? 1 : 0);
        }
        ASSERT_TRUE(wait4(pid, &status, 0, &ru) == pid);
        run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        run.maxrss_kib = ru.ru_maxrss;
        ASSERT_OK(read_full_file(out, &run.out, NULL));
        ASSERT_OK(read_full_file(err, &run.err, NULL));
        fprintf(stderr, "  exit %d, peak RSS %ld KiB, stderr: %s", run.status, run.maxrss_kib, run.err);
        return run;
}

static void run_done(Run *run) {
        free(run->out);
        free(run->err);
}

/* The image lists, and memory stays far below what the content would take. */
TEST(zstd_bomb_streams) {
        _cleanup_free_ char *path = NULL;
        Bytes head = {}, tail = newc_trailer(), bomb;
        const uint64_t big = 1024ULL * MiB;
        Run run;

        newc_header(&head, "big", S_IFREG | 0644, big);
        bomb = zstd_bomb(head.data, head.size, big, tail.data, tail.size);
        ASSERT_TRUE(bomb.size < 64 * 1024);
        path = write_image("bomb.zst", &bomb);

        run = run_ls(path);
        ASSERT_EQ(run.status, 0);
        ASSERT_STREQ(run.out, "-rw-r--r-- 1073741824 big\n");
        ASSERT_TRUE(run.maxrss_kib < 192 * 1024);
        run_done(&run);

        /* With a cap (what the fuzzer sets), the same stream is refused, naming the file. */
        {
                _cleanup_fclose_ FILE *null = fopen("/dev/null", "we");

                ASSERT_TRUE(null);
                ASSERT_EQ(ls_data("bomb.zst", bomb.data, bomb.size, null, 16 * MiB), -EFBIG);
        }
        free(head.data);
        free(tail.data);
        free(bomb.data);
}

/* A symlink whose size field says 2 GiB (here the stream really holds that many bytes) is
 * refused as a malformed entry, before anything is kept or printed. */
TEST(huge_symlink_refused) {
        _cleanup_free_ char *path = NULL;
        Bytes head = {}, tail = newc_trailer(), bomb;
        const uint64_t big = 2048ULL * MiB;
        Run run;

        newc_header(&head, "link", S_IFLNK | 0777, (uint32_t) big);
        bomb = zstd_bomb(head.data, head.size, big, tail.data, tail.size);
        path = write_image("symlink.zst", &bomb);

        run = run_ls(path);
        ASSERT_EQ(run.status, 1);
        ASSERT_TRUE(strstr(run.err, "symlink.zst: corrupt cpio archive"));
        ASSERT_STREQ(run.out, "");
        ASSERT_TRUE(run.maxrss_kib < 192 * 1024);
        run_done(&run);
        free(head.data);
        free(tail.data);
        free(bomb.data);
}

static int collect_target(const CpioEntry *e, void *userdata) {
        char **target = userdata;

        ASSERT_TRUE(e->link_target);
        ASSERT_EQ(strlen(e->link_target), e->size);
        *target = strdup(e->link_target);
        return 0;
}

/* The in-memory reader: a link target is checked against the archive and bounded. */
TEST(symlink_sizes) {
        _cleanup_free_ char *target = NULL;
        Bytes a = {}, tail = newc_trailer();
        char *long_target = malloc(CPIO_PATH_MAX + 1);
        size_t consumed;

        newc_header(&a, "l", S_IFLNK | 0777, 7);
        bytes_add(&a, "usr/bin\0", 8);
        bytes_add(&a, tail.data, tail.size);
        ASSERT_OK(cpio_parse(a.data, a.size, collect_target, &target, &consumed));
        ASSERT_STREQ(target, "usr/bin");
        ASSERT_EQ(consumed, a.size);

        /* Longer than the archive holds: truncated. */
        ASSERT_EQ(cpio_parse(a.data, 110 + 4 + 3, collect_target, &target, &consumed), -EPIPE);

        /* Longer than a path: refused, even though the archive holds it. */
        free(a.data);
        a = (Bytes) {};
        ASSERT_TRUE(long_target);
        memset(long_target, 'x', CPIO_PATH_MAX + 1);
        newc_header(&a, "l", S_IFLNK | 0777, CPIO_PATH_MAX + 1);
        bytes_add(&a, long_target, CPIO_PATH_MAX + 1);
        bytes_add(&a, "\0\0\0", 3);
        bytes_add(&a, tail.data, tail.size);
        ASSERT_EQ(cpio_parse(a.data, a.size, NULL, NULL, &consumed), -EBADMSG);
        free(long_target);
        free(a.data);
        free(tail.data);
}

/* An ESC in a name and in a link target (what starts a terminal escape sequence) is printed as
 * \x1b, and no raw control byte reaches the output. */
TEST(control_characters_escaped) {
        _cleanup_(sink_freep) Sink *sink = NULL;
        _cleanup_free_ char *path = strjoin(scratch(), "/escapes.cpio");
        _cleanup_close_ int fd = -EBADF;
        CpioWriter w;
        Run run;

        ASSERT_TRUE(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(sink_new(COMPRESSION_NONE, -1, fd, &sink));
        cpio_writer_init(&w, sink, 0);
        ASSERT_OK(cpio_write_directory(&w, "a\033]0;owned\007b", 0755));
        ASSERT_OK(cpio_write_symlink(&w, "link\r", "\033[2J\033[Hx"));
        ASSERT_OK(cpio_write_trailer(&w));
        ASSERT_OK(sink_finish(sink));

        run = run_ls(path);
        ASSERT_EQ(run.status, 0);
        for (const char *p = run.out; *p; p++)
                ASSERT_TRUE(*p == '\n' || (unsigned char) *p >= ' ');
        ASSERT_TRUE(strstr(run.out, " a\\x1b]0;owned\\x07b\n"));
        ASSERT_TRUE(strstr(run.out, " link\\x0d -> \\x1b[2J\\x1b[Hx\n"));
        run_done(&run);
}

TEST_MAIN()
