/* Waiting on the fixture server's --signal FIFO (see harness.h), so a test knows a request
 * reached the server (for example: another thread is now blocked in a `hang` call) instead of
 * sleeping and hoping the other thread got there. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <errno.h>
#include <stdio.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

bool fixture_signal_open(struct fixture_signal *s)
{
    memset(s, 0, sizeof *s);
#ifndef _WIN32
    s->fd = -1;
#endif
    if (!temp_dir(s->dir, sizeof s->dir, "signal"))
        return false;
#ifdef _WIN32
    /* Windows has no FIFO: the server appends to a plain file, read from where we stopped. */
    snprintf(s->path, sizeof s->path, "%s\\signal.txt", s->dir);
    HANDLE f = CreateFileA(s->path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
    s->file = f == INVALID_HANDLE_VALUE ? NULL : f;
    return s->file != NULL;
#else
    snprintf(s->path, sizeof s->path, "%s/signal.fifo", s->dir);
    if (mkfifo(s->path, 0600) != 0)
        return false;
    /* Read-write: the open does not wait for the server, and the FIFO never reports EOF when a
     * server exits, so every wait ends by a line or by its timeout. */
    s->fd = open(s->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    return s->fd >= 0;
#endif
}

/* Takes one complete line out of the buffer into `line`; false when none is buffered. */
static bool take_line(struct fixture_signal *s, char *line, size_t n)
{
    char *nl = (char *)memchr(s->buf, '\n', s->len);
    if (nl == NULL)
        return false;
    size_t len = (size_t)(nl - s->buf);
    snprintf(line, n, "%.*s", (int)len, s->buf);
    s->len -= len + 1;
    memmove(s->buf, nl + 1, s->len);
    return true;
}

bool fixture_signal_wait(struct fixture_signal *s, const char *prefix, int count, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    char line[512];
    while (count > 0) {
        while (count > 0 && take_line(s, line, sizeof line))
            if (strncmp(line, prefix, strlen(prefix)) == 0)
                count--;
        if (count == 0)
            break;
        int left = (int)(end - now_ms());
        if (left <= 0)
            return false;
#ifdef _WIN32
        DWORD got = 0;
        if (!ReadFile((HANDLE)s->file, s->buf + s->len, (DWORD)(sizeof s->buf - s->len), &got, NULL) || got == 0)
            sleep_ms(left < 2 ? left : 2); /* nothing new in the file yet */
        s->len += got;
#else
        struct pollfd p = {s->fd, POLLIN, 0};
        int r = poll(&p, 1, left);
        if (r < 0 && errno != EINTR)
            return false;
        ssize_t got = r > 0 ? read(s->fd, s->buf + s->len, sizeof s->buf - s->len) : 0;
        if (got > 0)
            s->len += (size_t)got;
#endif
        if (s->len == sizeof s->buf) /* a line longer than the buffer: drop it */
            s->len = 0;
    }
    return true;
}

void fixture_signal_close(struct fixture_signal *s)
{
#ifdef _WIN32
    if (s->file)
        CloseHandle((HANDLE)s->file);
    s->file = NULL; /* the file and its directory go with the test's temporaries */
#else
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (s->path[0])
        unlink(s->path);
    if (s->dir[0])
        rmdir(s->dir);
#endif
}
