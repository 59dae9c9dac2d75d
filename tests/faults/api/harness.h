/*
 * The C-ABI fault suite's small harness (tests/faults/api): a runner with a per-test watchdog,
 * check macros, and helpers that build clients from flat JSON configurations. Each test is a
 * `void fn(void)`; a failed CHECK records the reason and returns.
 */
#ifndef FAULTS_API_HARNESS_H
#define FAULTS_API_HARNESS_H

#include "mcp_client.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

extern const struct test_case string_tests[];
extern const size_t string_tests_count;
extern const struct test_case host_tests[];
extern const size_t host_tests_count;
extern const struct test_case connect_tests[];
extern const size_t connect_tests_count;
extern const struct test_case reconnect_tests[];
extern const size_t reconnect_tests_count;

void t_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            t_fail(__FILE__, __LINE__, "%s", #cond);                                           \
            return;                                                                            \
        }                                                                                      \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            t_fail(__FILE__, __LINE__, __VA_ARGS__);                                           \
            return;                                                                            \
        }                                                                                      \
    } while (0)

/* `st` must be `want`; on a mismatch the error's message is printed. */
#define CHECK_STATUS(st, want, err)                                                            \
    do {                                                                                       \
        mcp_status got_ = (st);                                                                \
        if (got_ != (want)) {                                                                  \
            t_fail(__FILE__, __LINE__, "%s = %d, want %d (%s)", #st, got_, (want),             \
                   (err) ? mcp_error_message(err) : "no error object");                        \
            return;                                                                            \
        }                                                                                      \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                            \
    do {                                                                                       \
        const char *h_ = (hay);                                                                \
        if (h_ == NULL || strstr(h_, (needle)) == NULL) {                                      \
            t_fail(__FILE__, __LINE__, "%s lacks \"%s\": %s", #hay, (needle),                  \
                   h_ ? h_ : "(null)");                                                        \
            return;                                                                            \
        }                                                                                      \
    } while (0)

/* The fixture server binary ($MCP_FIXTURE, else the path the Makefile compiled in). */
const char *fixture(void);
double now_ms(void);
/* A client from a flat JSON configuration (printf-style); NULL with a failure recorded. */
mcp_client *client_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Starts `fixture --http 127.0.0.1:0 <args>` with stdin a pipe; writes its URL (…/mcp) to
 * url. Returns the pid, or -1. `stdin_fd` receives the write end: closing it stops the server. */
int start_http_fixture(char *url, size_t n, int *stdin_fd, const char *const *args);
/* As start_http_fixture, on `addr` (e.g. "127.0.0.1:41234", to restart a server on its port). */
int start_http_fixture_at(const char *addr, char *url, size_t n, int *stdin_fd, const char *const *args);
/* Stops a server from start_http_fixture (SIGKILL, then reaps it). */
void stop_http_fixture(int pid, int stdin_fd);

#endif
