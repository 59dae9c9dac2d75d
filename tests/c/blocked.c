/* Waiting until another thread is parked inside the library (see harness.h), for the tests of
 * "X wakes a thread blocked in Y" where no request reaches the server to signal it (a thread
 * waiting in mcp_subscription_next). Linux: /proc/self/task/<tid>/syscall names the system call
 * a sleeping thread is in: a futex (condition variables, channels, a runtime's park) or an
 * epoll wait (a thread driving the library's I/O runtime while it blocks). Windows has no such
 * view under Wine: there the wait is for the thread to have started, then a settling time (a
 * weaker check: a thread that had not reached the wait yet would see the close at once). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef _WIN32
#include <windows.h>

long test_thread_id(void)
{
    return (long)GetCurrentThreadId();
}

bool wait_thread_parked(const long *tid, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    while (ALOAD(tid) == 0) {
        if (now_ms() > end)
            return false;
        sleep_ms(2);
    }
    sleep_ms(100);
    return true;
}
#else
#include <sys/syscall.h>
#include <unistd.h>

long test_thread_id(void)
{
    return (long)syscall(SYS_gettid);
}

static bool waiting_call(long nr)
{
    switch (nr) {
    case SYS_futex:
    case SYS_epoll_pwait:
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
        return true;
    default:
        return false;
    }
}

/* True when thread `tid` of this process is sleeping in a waiting system call. */
static bool in_futex(long tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char line[64] = "";
    bool parked = fgets(line, sizeof line, f) != NULL && line[0] >= '0' && line[0] <= '9' &&
                  waiting_call(strtol(line, NULL, 10));
    fclose(f);
    return parked;
}

bool wait_thread_parked(const long *tid, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    int seen = 0;
    /* Polled, as no event marks "now asleep"; seen twice in a row, so a brief lock wait on the
     * way in does not count. */
    while (now_ms() < end) {
        long t = ALOAD(tid);
        seen = t != 0 && in_futex(t) ? seen + 1 : 0;
        if (seen == 2)
            return true;
        sleep_ms(2);
    }
    return false;
}
#endif
