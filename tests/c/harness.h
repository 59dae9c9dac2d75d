/*
 * A tiny test harness for the mcp_client C ABI tests: a runner, check macros, and helpers to
 * start the fixture server. No external framework. The same sources compile as C11 and C++17.
 *
 * Each test is a `void fn(void)`. A failed CHECK records the reason and returns from the test;
 * a failed EXPECT records the reason and carries on (use it where returning early would leave a
 * thread running on the test's stack). The runner prints `ok - name` / `not ok - name: reason`
 * and, at the end, one line `N passed, M failed`.
 */
#ifndef MCP_TEST_HARNESS_H
#define MCP_TEST_HARNESS_H

#include "mcp_client.h"

#include <pthread.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*test_fn)(void);

struct test_case {
    const char *name;
    test_fn fn;
};

/* Suites, defined in the test_*.c files. */
extern const struct test_case api_tests[];
extern const size_t api_tests_count;
extern const struct test_case call_tests[];
extern const size_t call_tests_count;
extern const struct test_case mrtr_tests[];
extern const size_t mrtr_tests_count;
extern const struct test_case thread_tests[];
extern const size_t thread_tests_count;
extern const struct test_case auth_tests[];
extern const size_t auth_tests_count;
extern const struct test_case skills_tests[];
extern const size_t skills_tests_count;
extern const struct test_case elicit_tasks_tests[];
extern const size_t elicit_tasks_tests_count;
extern const struct test_case cache_tests[];
extern const size_t cache_tests_count;
extern const struct test_case async_tests[];
extern const size_t async_tests_count;
extern const struct test_case shared_rt_tests[];
extern const size_t shared_rt_tests_count;
extern const struct test_case hub_tests[];
extern const size_t hub_tests_count;
extern const struct test_case export_tests[];
extern const size_t export_tests_count;
extern const struct test_case pins_tests[];
extern const size_t pins_tests_count;
extern const struct test_case windows_tests[];
extern const size_t windows_tests_count;

/* Runner internals with one implementation per platform (harness.c, harness_windows.c). */
void settle_temps(bool keep);
#ifdef _WIN32
void watchdog_arm(unsigned seconds);
void watchdog_expired(void);
#endif

/* ---- failure reporting ------------------------------------------------------------------- */

#if defined(__MINGW32__) /* built with __USE_MINGW_ANSI_STDIO: C99 formats such as %zu */
#define T_PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#elif defined(__GNUC__)
#define T_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define T_PRINTF(a, b)
#endif

/* Records a failure of the running test (the first reason is the one printed). Thread-safe. */
void t_fail(const char *file, int line, const char *fmt, ...) T_PRINTF(3, 4);
/* True once the running test has failed. */
bool t_failed(void);
/* Reports a status mismatch (with the error's message); true when `got == want`. */
bool t_status(const char *file, int line, const char *expr, mcp_status got, mcp_status want,
              const mcp_error *err);
/* Reports a missing substring; true when `hay` contains `needle`. */
bool t_contains(const char *file, int line, const char *what, const char *hay,
                const char *needle);

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            t_fail(__FILE__, __LINE__, "%s", #cond);                                           \
            return;                                                                            \
        }                                                                                      \
    } while (0)

#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond))                                                                           \
            t_fail(__FILE__, __LINE__, "%s", #cond);                                           \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            t_fail(__FILE__, __LINE__, __VA_ARGS__);                                           \
            return;                                                                            \
        }                                                                                      \
    } while (0)

#define EXPECT_MSG(cond, ...)                                                                  \
    do {                                                                                       \
        if (!(cond))                                                                           \
            t_fail(__FILE__, __LINE__, __VA_ARGS__);                                           \
    } while (0)

/* `st` must equal `want`; `err` (may be NULL) explains a mismatch. */
#define CHECK_STATUS(st, want, err)                                                            \
    do {                                                                                       \
        if (!t_status(__FILE__, __LINE__, #st, (st), (want), (err)))                           \
            return;                                                                            \
    } while (0)
#define EXPECT_STATUS(st, want, err) ((void)t_status(__FILE__, __LINE__, #st, (st), (want), (err)))

#define CHECK_CONTAINS(hay, needle)                                                            \
    do {                                                                                       \
        if (!t_contains(__FILE__, __LINE__, #hay, (hay), (needle)))                            \
            return;                                                                            \
    } while (0)
#define EXPECT_CONTAINS(hay, needle) ((void)t_contains(__FILE__, __LINE__, #hay, (hay), (needle)))

#define CHECK_NOT_CONTAINS(hay, needle)                                                        \
    do {                                                                                       \
        if ((hay) == NULL || strstr((hay), (needle)) != NULL) {                                \
            t_fail(__FILE__, __LINE__, "%s should not contain \"%s\": %s", #hay, (needle),     \
                   (hay) ? (hay) : "(null)");                                                  \
            return;                                                                            \
        }                                                                                      \
    } while (0)

/* ---- atomics usable from C and C++ -------------------------------------------------------- */

#define ALOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ASTORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define AINC(p) __atomic_add_fetch((p), 1, __ATOMIC_SEQ_CST)

/* ---- time ---------------------------------------------------------------------------------- */

double now_ms(void);
/* A time bound scaled for slow runs (valgrind sets MCP_TEST_SLOW=1: bounds x8). */
int tscale(int ms);
void sleep_ms(int ms);
/* Polls until *counter >= at_least or timeout_ms passes; true on success. For events a
 * callback counts (the library ran it): a wait on the event, polled, never a guessed time. */
bool wait_count(const int *counter, int at_least, int timeout_ms);

/* ---- platform seams (harness.c on POSIX, harness_windows.c on Windows) ----------------------- */

/* Waits up to timeout_ms for the host loop's wake-up (mcp_client_use_host_loop: a descriptor
 * on POSIX, an event HANDLE on Windows): 1 when it is readable or signaled, 0 on timeout, -1 on
 * error. */
int wait_wakeup(int fd, int timeout_ms);
/* The number of threads of this process (-1 when it cannot be read). */
int thread_count(void);
/* Sets the host's environment variable `name` (removes it when value is NULL). */
void t_setenv(const char *name, const char *value);
/* The absolute path of the existing `path` (symbolic links resolved on POSIX); false on error. */
bool real_path(const char *path, char *buf, size_t n);

#ifdef _WIN32
/* Writes `body` (lines ending in CRLF) to dir\\name.cmd, whose path goes to `path`. */
bool write_cmd_file(const char *dir, const char *name, const char *body, char *path, size_t n);
#endif

/* ---- the fixture server ------------------------------------------------------------------ */

/* The fixture binary: $MCP_FIXTURE, else the FIXTURE_PATH the Makefile compiled in. */
const char *fixture_path(void);
/* The same, escaped for a JSON string (Windows paths have backslashes). */
const char *fixture_path_json(void);
/* `text` escaped for a JSON string (backslashes and quotes) into buf; returns buf. */
const char *json_escaped(const char *text, char *buf, size_t n);

/* A config that runs the fixture with the given arguments (NULL-terminated list) and a default
 * request timeout of 5 s (scaled by tscale), so that a bug fails a test instead of hanging it. */
mcp_config *fixture_config(const char *first_arg, ...);

/* A client for fixture_config(args...); NULL (with a failure recorded) on error. */
mcp_client *fixture_client(const char *first_arg, ...);

/* Creates a client from `config` and frees the config. */
mcp_client *client_from_config(mcp_config *config);

/* As fixture_client, and connects. */
mcp_client *connected_client(const char *first_arg, ...);

/* Calls `tool`; on MCP_OK returns the CallToolResult JSON (free with mcp_string_free), else
 * records a failure and returns NULL. */
char *tool_ok(mcp_client *client, const char *tool, const char *args_json);

/* The text of a CallToolResult's first text block, unescaped into `buf`. */
bool first_text(const char *result_json, char *buf, size_t n);

/* The first string value of `"key":"..."` in compact JSON, unescaped into `buf`. */
bool json_string(const char *json, const char *key, char *buf, size_t n);

int count_occurrences(const char *hay, const char *needle);

/* ---- fixture signals (fixture_signal.c) ------------------------------------------------------ */

/* The fixture's --signal FIFO (Windows: a plain file, polled): the server writes "request <method> <name>" when it reads a
 * request and "notification <method>" after a notification took effect. Pass `path` as
 * "--signal", path to the fixture; wait instead of sleeping until another thread's request
 * reached the server. */
struct fixture_signal {
    char dir[256];
    char path[300];
#ifdef _WIN32
    void *file; /* HANDLE */
#else
    int fd;
#endif
    size_t len;
    char buf[4096];
};
/* Makes and opens the FIFO (before the fixture starts); false on error. */
bool fixture_signal_open(struct fixture_signal *s);
/* Consumes lines until `count` of them started with `prefix` (true), or timeout_ms passes. */
bool fixture_signal_wait(struct fixture_signal *s, const char *prefix, int count, int timeout_ms);
void fixture_signal_close(struct fixture_signal *s);

/* ---- threads parked in the library (blocked.c) ------------------------------------------------ */

/* The calling thread's kernel id (store it where wait_thread_parked can read it). */
long test_thread_id(void);
/* Waits until the thread whose id *tid holds (0: not yet known) sleeps in the kernel in a
 * futex or epoll wait, i.e. is parked inside the library; false after timeout_ms. For waits
 * no fixture signal can mark (mcp_subscription_next). Windows (Wine): until the id is known,
 * then 100 ms (no view of where a thread sleeps there). */
bool wait_thread_parked(const long *tid, int timeout_ms);

/* ---- the fixture over HTTP ---------------------------------------------------------------- */

/* The fixture serving Streamable HTTP on a free loopback port (`--era` era, recording into a
 * temporary file; with sse_responses, modern answers come as event streams, which can carry
 * progress), its stdin held open by us: closing it ends the server. */
struct http_fixture {
#ifdef _WIN32
    void *process;   /* HANDLE */
    void *stdin_w;   /* HANDLE */
#else
    pid_t pid;
    int stdin_fd;
#endif
    char url[512];
    char record[512];
};

/* Starts it; false (the test failed) when it gives no URL. Stop it with http_fixture_stop. */
bool http_fixture_start(struct http_fixture *h, const char *era, bool sse_responses);
/* Ends it (stdin EOF, then SIGKILL after 3 s) and removes its record. */
void http_fixture_stop(struct http_fixture *h);
/* A client of it with a 5 s request timeout (tscale), the extra headers (name, value, ...,
 * NULL; or NULL) and the bearer token (or NULL); NULL (the test failed) if a setter refused. */
mcp_client *http_fixture_client(const struct http_fixture *h, const char *const *headers, const char *bearer);

/* ---- files --------------------------------------------------------------------------------- */

/* A new empty temporary file; its path goes to `buf`. The harness removes it after the test
 * (keeps it, and prints its path, if the test failed); so for temp_dir, with its contents. */
bool temp_file(char *buf, size_t n, const char *tag);
/* A new temporary directory. */
bool temp_dir(char *buf, size_t n, const char *tag);
/* The whole file, NUL-terminated (malloc'd; free()); NULL when unreadable. */
char *slurp(const char *path, size_t *len_out);

/* ---- userdata accounting -------------------------------------------------------------------- */

/* Userdata whose destructor counts its calls. */
struct counted {
    int frees;        /* calls of counted_free */
    int calls;        /* free for the test's own use */
    int after_free;   /* callbacks that ran after the destructor (must stay 0) */
    void *extra;
};
void counted_free(void *userdata);

/* ---- collecting callbacks ------------------------------------------------------------------ */

/* Appends what listeners receive, one line per event: "method params" (notifications) or
 * "level source message" (logs). Thread-safe; the buffer keeps the first 64 KiB. */
struct collector {
    pthread_mutex_t lock;
    int count;
    int bad_len;        /* notifications whose params_len disagreed with strlen(params) */
    size_t len;
    char buf[65536];
    struct counted ud;  /* userdata accounting when registered with collector_free */
};
void collector_init(struct collector *c);
void collector_destroy(struct collector *c);
/* mcp_notification_fn / mcp_log_fn that append to the collector given as userdata. */
void collect_notification(void *userdata, const char *method, const char *params_json,
                          size_t params_len);
void collect_log(void *userdata, const char *level, const char *source, const char *message);
/* userdata_free for a collector: counts in c->ud.frees. */
void collector_free(void *userdata);
/* Waits until the collected text contains `needle` (true) or timeout_ms passes (false). */
bool collector_wait(struct collector *c, const char *needle, int timeout_ms);
int collector_count(struct collector *c, const char *needle);
/* A malloc'd copy of the collected text (free()). */
char *collector_text(struct collector *c);
/* Connects `c`, whose fixture runs with --spawn-grandchild, with `col` as its log handler
 * (released through collector_free), and returns the process id the server logs for its own
 * child on stderr; 0, with a failure recorded, when none came within timeout_ms. */
long connect_for_grandchild(mcp_client *c, struct collector *col, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* MCP_TEST_HARNESS_H */
