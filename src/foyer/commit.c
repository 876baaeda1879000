/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <sys/stat.h>

#include "commit.h"
#include "log.h"
#include "util.h"

int output_file_open(const char *path, OutputFile *ret) {
        _cleanup_free_ char *dir = NULL, *temp = NULL, *final = NULL;
        int fd;

        final = strdup(path);
        dir = path_dirname(path);
        if (!final || !dir)
                return log_oom();
        if (!strchr(path, '/')) {
                free(dir);
                dir = strdup(".");
                if (!dir)
                        return log_oom();
        }

        temp = strjoin(dir, "/.#", path_basename(path), ".XXXXXX");
        if (!temp)
                return log_oom();

        fd = mkostemp(temp, O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Cannot write the image into %s: %m", dir);

        *ret = (OutputFile) {
                .path = TAKE_PTR(final),
                .temp_path = TAKE_PTR(temp),
                .fd = fd,
        };
        return 0;
}

int output_file_commit(OutputFile *o, mode_t mode) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dfd = -EBADF;

        if (fchmod(o->fd, mode) < 0)
                return log_error_errno(errno, "Failed to set the mode of %s: %m", o->temp_path);
        if (fsync(o->fd) < 0)
                return log_error_errno(errno, "Failed to write %s: %m", o->temp_path);
        if (rename(o->temp_path, o->path) < 0)
                return log_error_errno(errno, "Failed to rename %s to %s: %m", o->temp_path, o->path);
        free(o->temp_path);
        o->temp_path = NULL;

        dir = strchr(o->path, '/') ? path_dirname(o->path) : strdup(".");
        if (!dir)
                return log_oom();
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) < 0)
                return log_error_errno(errno, "Failed to sync directory %s: %m", dir);
        return 0;
}

void output_file_done(OutputFile *o) {
        if (o->fd >= 0)
                close(o->fd);
        o->fd = -EBADF;
        if (o->temp_path)
                (void) unlink(o->temp_path);
        free(o->temp_path);
        free(o->path);
        o->temp_path = o->path = NULL;
}
