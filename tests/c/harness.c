/* The test runner and shared helpers (see harness.h). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE

#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef _WIN32
#include <dirent.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#endif

#ifndef FIXTURE_PATH
#define FIXTURE_PATH "../../target/debug/mcp-fixture-server"
#endif

#ifndef TEST_LINKAGE
#define TEST_LINKAGE "static"
#endif

/* Each test must finish within this many seconds, or the whole run stops as failed. */
#define WATCHDOG_SECONDS 30

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int current_failed;
static char current_reason[1024];
static const char *current_name = "";
static int passed_total;
static int failed_total;

void t_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&fail_lock);
    if (!current_failed) {
        const char *base = strrchr(file, '/');
        snprintf(current_reason, sizeof current_reason, "%s:%d: %s", base ? base + 1 : file,
                 line, msg);
    }
    current_failed = 1;
    pthread_mutex_unlock(&fail_lock);
    /* Extra failures are still useful while debugging. */
    fprintf(stderr, "#   %s: %s:%d: %s\n", current_name, file, line, msg);
}

bool t_failed(void)
{
    pthread_mutex_lock(&fail_lock);
    bool f = current_failed != 0;
    pthread_mutex_unlock(&fail_lock);
    return f;
}

bool t_status(const char *file, int line, const char *expr, mcp_status got, mcp_status want,
              const mcp_error *err)
{
    if (got == want)
        return true;
    const char *msg = err ? mcp_error_message(err) : NULL;
    t_fail(file, line, "%s: status %d (%s), expected %d (%s)%s%s", expr, (int)got,
           mcp_status_str(got), (int)want, mcp_status_str(want), msg ? "; error: " : "",
           msg ? msg : "");
    return false;
}

bool t_contains(const char *file, int line, const char *what, const char *hay,
                const char *needle)
{
    if (hay != NULL && strstr(hay, needle) != NULL)
        return true;
    t_fail(file, line, "%s does not contain \"%s\": %.400s", what, needle,
           hay ? hay : "(null)");
    return false;
}

/* ---- time ----------------------------------------------------------------------------------- */

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

int tscale(int ms)
{
    static int factor = 0;
    if (factor == 0) {
        const char *slow = getenv("MCP_TEST_SLOW");
        factor = slow && *slow && strcmp(slow, "0") != 0 ? 8 : 1;
    }
    return ms * factor;
}

void sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

bool wait_count(const int *counter, int at_least, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    while (ALOAD(counter) < at_least) {
        if (now_ms() > end)
            return false;
        sleep_ms(2);
    }
    return true;
}

/* ---- platform seams (Windows: harness_windows.c) ------------------------------------------------ */

#ifndef _WIN32
int wait_wakeup(int fd, int timeout_ms)
{
    struct pollfd p;
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    int r = poll(&p, 1, timeout_ms);
    return r < 0 ? -1 : (r == 1 && (p.revents & POLLIN)) ? 1 : 0;
}

int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

void t_setenv(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

bool real_path(const char *path, char *buf, size_t n)
{
    char *r = realpath(path, NULL);
    if (r == NULL)
        return false;
    bool fits = strlen(r) < n;
    if (fits)
        snprintf(buf, n, "%s", r);
    free(r);
    return fits;
}
#endif

/* ---- fixture ---------------------------------------------------------------------------------- */

const char *fixture_path(void)
{
    const char *env = getenv("MCP_FIXTURE");
    return env && *env ? env : FIXTURE_PATH;
}

const char *json_escaped(const char *text, char *buf, size_t n)
{
    size_t k = 0;
    for (; *text && k + 2 < n; text++) {
        if (*text == '\\' || *text == '"')
            buf[k++] = '\\';
        buf[k++] = *text;
    }
    buf[k] = '\0';
    return buf;
}

const char *fixture_path_json(void)
{
    static char escaped[2048];
    return json_escaped(fixture_path(), escaped, sizeof escaped);
}

static mcp_config *config_va(const char *first, va_list ap)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(NULL, &cfg, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_config_new", st, MCP_OK, err);
        mcp_error_free(err);
        return NULL;
    }
    st = mcp_config_set_command(cfg, fixture_path(), NULL);
    if (st == MCP_OK)
        st = mcp_config_set_request_timeout_ms(cfg, (int64_t)tscale(5000), NULL);
    for (const char *a = first; st == MCP_OK && a != NULL; a = va_arg(ap, const char *))
        st = mcp_config_add_arg(cfg, a, NULL);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "fixture config", st, MCP_OK, NULL);
        mcp_config_free(cfg);
        return NULL;
    }
    return cfg;
}

mcp_config *fixture_config(const char *first_arg, ...)
{
    va_list ap;
    va_start(ap, first_arg);
    mcp_config *cfg = config_va(first_arg, ap);
    va_end(ap);
    return cfg;
}

mcp_client *client_from_config(mcp_config *config)
{
    if (config == NULL)
        return NULL;
    mcp_client *client = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_new(config, &client, &err);
    mcp_config_free(config);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_client_new", st, MCP_OK, err);
        mcp_error_free(err);
        return NULL;
    }
    return client;
}

mcp_client *fixture_client(const char *first_arg, ...)
{
    va_list ap;
    va_start(ap, first_arg);
    mcp_config *cfg = config_va(first_arg, ap);
    va_end(ap);
    return client_from_config(cfg);
}

mcp_client *connected_client(const char *first_arg, ...)
{
    va_list ap;
    va_start(ap, first_arg);
    mcp_config *cfg = config_va(first_arg, ap);
    va_end(ap);
    mcp_client *client = client_from_config(cfg);
    if (client == NULL)
        return NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_connect(client, NULL, NULL, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_client_connect", st, MCP_OK, err);
        mcp_error_free(err);
        mcp_client_free(client);
        return NULL;
    }
    return client;
}

char *tool_ok(mcp_client *client, const char *tool, const char *args_json)
{
    char *out = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(client, tool, args_json, NULL, NULL, NULL, &out, &err);
    if (st != MCP_OK) {
        char what[128];
        snprintf(what, sizeof what, "call_tool(%s)", tool);
        t_status(__FILE__, __LINE__, what, st, MCP_OK, err);
        mcp_error_free(err);
        return NULL;
    }
    return out;
}

/* Copies a JSON string body starting after its opening quote, unescaping the simple escapes. */
static bool copy_json_string(const char *p, char *buf, size_t n)
{
    size_t k = 0;
    if (n == 0)
        return false;
    while (*p && *p != '"') {
        char c = *p++;
        if (c == '\\') {
            char e = *p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            default: return false; /* \uXXXX and friends: not needed by these tests */
            }
        }
        if (k + 1 >= n)
            return false;
        buf[k++] = c;
    }
    buf[k] = '\0';
    return *p == '"';
}

bool json_string(const char *json, const char *key, char *buf, size_t n)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (p == NULL)
        return false;
    return copy_json_string(p + strlen(pat), buf, n);
}

bool first_text(const char *result_json, char *buf, size_t n)
{
    const char *p = result_json ? strstr(result_json, "\"type\":\"text\"") : NULL;
    if (p == NULL)
        return false;
    return json_string(p, "text", buf, n);
}

int count_occurrences(const char *hay, const char *needle)
{
    int count = 0;
    size_t len = strlen(needle);
    if (hay == NULL || len == 0)
        return 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + len, needle))
        count++;
    return count;
}

/* ---- files ------------------------------------------------------------------------------------ */

/* Windows: temp_file, temp_dir, settle_temps, the watchdog and the HTTP fixture are in
 * harness_windows.c. */
#ifndef _WIN32
static const char *tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* Every temporary file and directory a test made, removed after the test (kept, and named,
 * when it failed: they are often what explains the failure). Tests run one at a time. */
#define TEMP_MAX 64
static char temp_paths[TEMP_MAX][256];
static size_t temp_count;

static void remember_temp(const char *path)
{
    if (temp_count < TEMP_MAX)
        snprintf(temp_paths[temp_count++], sizeof temp_paths[0], "%s", path);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void settle_temps(bool keep)
{
    for (size_t i = 0; i < temp_count; i++) {
        if (keep)
            printf("# kept %s\n", temp_paths[i]);
        else
            nftw(temp_paths[i], remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
    temp_count = 0;
}

bool temp_file(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "%s/mcp-ctest-%s-XXXXXX", tmp_root(), tag);
    int fd = mkstemp(buf);
    if (fd < 0)
        return false;
    close(fd);
    remember_temp(buf);
    return true;
}

bool temp_dir(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "%s/mcp-ctest-%s-XXXXXX", tmp_root(), tag);
    if (mkdtemp(buf) == NULL)
        return false;
    remember_temp(buf);
    return true;
}
#endif

char *slurp(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *data = (char *)malloc(cap);
    size_t got;
    while (data != NULL && (got = fread(data + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *bigger = (char *)realloc(data, cap * 2);
            if (bigger == NULL) {
                free(data);
                data = NULL;
                break;
            }
            data = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (data == NULL)
        return NULL;
    data[len] = '\0';
    if (len_out)
        *len_out = len;
    return data;
}

void counted_free(void *userdata)
{
    struct counted *c = (struct counted *)userdata;
    AINC(&c->frees);
}

/* ---- collectors ------------------------------------------------------------------------------- */

void collector_init(struct collector *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
}

void collector_destroy(struct collector *c)
{
    pthread_mutex_destroy(&c->lock);
}

static void collector_append(struct collector *c, const char *a, const char *b, const char *d)
{
    pthread_mutex_lock(&c->lock);
    if (ALOAD(&c->ud.frees) > 0)
        c->ud.after_free++;
    c->count++;
    int n = snprintf(c->buf + c->len, sizeof c->buf - c->len, "%s %s%s%s\n", a, b, d ? " " : "",
                     d ? d : "");
    if (n > 0)
        c->len += (size_t)n < sizeof c->buf - c->len ? (size_t)n : sizeof c->buf - c->len - 1;
    pthread_mutex_unlock(&c->lock);
}

void collect_notification(void *userdata, const char *method, const char *params_json,
                          size_t params_len)
{
    struct collector *c = (struct collector *)userdata;
    if (params_json == NULL || strlen(params_json) != params_len)
        AINC(&c->bad_len);
    collector_append(c, method ? method : "(null)", params_json ? params_json : "(null)", NULL);
}

void collect_log(void *userdata, const char *level, const char *source, const char *message)
{
    collector_append((struct collector *)userdata, level ? level : "(null)",
                     source ? source : "(null)", message ? message : "(null)");
}

void collector_free(void *userdata)
{
    struct collector *c = (struct collector *)userdata;
    AINC(&c->ud.frees);
}

bool collector_wait(struct collector *c, const char *needle, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        bool found = strstr(c->buf, needle) != NULL;
        pthread_mutex_unlock(&c->lock);
        if (found)
            return true;
        if (now_ms() > end)
            return false;
        sleep_ms(2);
    }
}

int collector_count(struct collector *c, const char *needle)
{
    pthread_mutex_lock(&c->lock);
    int n = count_occurrences(c->buf, needle);
    pthread_mutex_unlock(&c->lock);
    return n;
}

char *collector_text(struct collector *c)
{
    pthread_mutex_lock(&c->lock);
    char *copy = (char *)malloc(c->len + 1);
    if (copy) {
        memcpy(copy, c->buf, c->len);
        copy[c->len] = '\0';
    }
    pthread_mutex_unlock(&c->lock);
    return copy;
}

long connect_for_grandchild(mcp_client *c, struct collector *col, int timeout_ms)
{
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_log_handler(c, collect_log, col, collector_free, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    mcp_error_free(err);
    const char *tag = "grandchild pid ";
    EXPECT(collector_wait(col, tag, timeout_ms));
    char *text = collector_text(col);
    const char *p = text ? strstr(text, tag) : NULL;
    long pid = p ? strtol(p + strlen(tag), NULL, 10) : 0;
    free(text);
    EXPECT_MSG(pid > 1, "no grandchild pid from the server");
    return pid > 1 ? pid : 0;
}

/* ---- the runner --------------------------------------------------------------------------------- */

static void write_str(const char *s)
{
    ssize_t r = write(STDOUT_FILENO, s, strlen(s));
    (void)r;
}

static void write_int(int v)
{
    char buf[16];
    int i = (int)sizeof buf;
    buf[--i] = '\0';
    if (v == 0)
        buf[--i] = '0';
    while (v > 0 && i > 0) {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    }
    write_str(buf + i);
}

static void summary_line(int passed, int failed)
{
    if (strcmp(TEST_LINKAGE, "static") != 0) {
        /* Only the main (static) run prints the line CI reads. */
        write_str(TEST_LINKAGE " link: ");
        write_int(passed);
        write_str(" ok, ");
        write_int(failed);
        write_str(" not ok\n");
        return;
    }
    write_int(passed);
    write_str(" passed, ");
    write_int(failed);
    write_str(" failed\n");
}

#ifndef _WIN32
static void on_watchdog(int sig)
{
    (void)sig;
    write_str("not ok - ");
    write_str(current_name);
    write_str(": watchdog: the test did not finish within the time limit\n");
    summary_line(passed_total, failed_total + 1);
    _exit(1);
}

static void watchdog_arm(unsigned seconds)
{
    alarm(seconds);
}
#else
/* Called by harness_windows.c's watchdog thread. */
void watchdog_expired(void)
{
    printf("not ok - %s: watchdog: the test did not finish within the time limit\n", current_name);
    summary_line(passed_total, failed_total + 1);
    fflush(stdout);
    _exit(1);
}
#endif

static bool selected(const char *name, int argc, char **argv)
{
    if (argc <= 1)
        return true;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]) != NULL)
            return true;
    return false;
}

#ifdef _WIN32
/* Cases of the shared suites that do not hold under Wine yet (about 1 run in 3 fails there),
 * each with what was seen; printed as skipped (TAP's `# SKIP`), never counted as passed. */
static const char *const not_under_wine[][2] = {
    {"async/timeout_and_token", "flaky: some runs see no 30 ms timeout beat a cancel up to 39 ms later"},
    {"async/task_calls_started", "flaky: the fixture sometimes sees two task polls under 40 ms apart (50 ms asked)"},
};

static const char *skip_reason(const char *name)
{
    for (size_t i = 0; i < sizeof not_under_wine / sizeof not_under_wine[0]; i++)
        if (strcmp(name, not_under_wine[i][0]) == 0)
            return not_under_wine[i][1];
    return NULL;
}

/* Wine on a loaded machine now and then fails CreateProcess with ERROR_INTERNAL_ERROR (1359)
 * before the server starts (seen once in 177 cases, under a clean-clone run beside other
 * builds): a case whose failure is only that runs once more, and says so. Any other failure, or
 * that one twice, stays a failure. */
static bool worth_retrying(const char *reason)
{
    return strstr(reason, "(os error 1359)") != NULL;
}
#else
static const char *skip_reason(const char *name)
{
    (void)name;
    return NULL;
}

static bool worth_retrying(const char *reason)
{
    (void)reason;
    return false;
}
#endif

/* Runs one case under the watchdog; true when it passed. */
static bool run_case(const struct test_case *test, double *took)
{
    pthread_mutex_lock(&fail_lock);
    current_failed = 0;
    current_reason[0] = '\0';
    current_name = test->name;
    pthread_mutex_unlock(&fail_lock);
    double start = now_ms();
    watchdog_arm((unsigned)tscale(WATCHDOG_SECONDS));
    test->fn();
    watchdog_arm(0);
    *took = now_ms() - start;
    settle_temps(t_failed());
    return !t_failed();
}

static void run_suite(const struct test_case *tests, size_t count, int argc, char **argv)
{
    for (size_t i = 0; i < count; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        const char *skip = skip_reason(tests[i].name);
        if (skip) {
            printf("ok - %s # SKIP %s\n", tests[i].name, skip);
            continue;
        }
        double took = 0;
        bool passed = run_case(&tests[i], &took);
        if (!passed && worth_retrying(current_reason)) {
            printf("# %s: retried once after: %s\n", tests[i].name, current_reason);
            passed = run_case(&tests[i], &took);
        }
        if (!passed) {
            failed_total++;
            printf("not ok - %s: %s\n", tests[i].name, current_reason);
        } else {
            passed_total++;
            printf("ok - %s", tests[i].name);
            if (took > 500)
                printf(" # %.0f ms", took);
            printf("\n");
        }
        fflush(stdout);
    }
}

/* One list for both platforms: the cases that need POSIX (fork, signals, process groups,
 * /bin/sh) are left out of Windows builds inside their files; test_windows.c's cases are
 * Windows' own. */
int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
#ifndef _WIN32
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watchdog;
    sigaction(SIGALRM, &sa, NULL);
    /* A server that dies while the library writes to it raises SIGPIPE in this process (see
     * threads/sigpipe, which checks the default disposition in a child of its own). Ignore it
     * here so that one such race cannot kill the whole run and hide the summary. */
    signal(SIGPIPE, SIG_IGN);
    printf("# mcp_client C ABI tests (%s link), fixture %s\n", TEST_LINKAGE, fixture_path());
#else
    printf("# mcp_client C ABI tests on Windows (%s link), fixture %s\n", TEST_LINKAGE, fixture_path());
#endif
    run_suite(api_tests, api_tests_count, argc, argv);
    run_suite(call_tests, call_tests_count, argc, argv);
    run_suite(mrtr_tests, mrtr_tests_count, argc, argv);
    run_suite(thread_tests, thread_tests_count, argc, argv);
    run_suite(auth_tests, auth_tests_count, argc, argv);
    run_suite(skills_tests, skills_tests_count, argc, argv);
    run_suite(elicit_tasks_tests, elicit_tasks_tests_count, argc, argv);
    run_suite(cache_tests, cache_tests_count, argc, argv);
    run_suite(export_tests, export_tests_count, argc, argv);
    run_suite(pins_tests, pins_tests_count, argc, argv);
    run_suite(async_tests, async_tests_count, argc, argv);
    run_suite(shared_rt_tests, shared_rt_tests_count, argc, argv);
    run_suite(hub_tests, hub_tests_count, argc, argv);
#ifdef _WIN32
    run_suite(windows_tests, windows_tests_count, argc, argv);
#endif
    fflush(stdout);
    summary_line(passed_total, failed_total);
    return failed_total == 0 && passed_total > 0 ? 0 : 1;
}

#ifndef _WIN32
/* ---- the fixture over HTTP ---------------------------------------------------------------- */

bool http_fixture_start(struct http_fixture *h, const char *era, bool sse_responses)
{
    memset(h, 0, sizeof *h);
    h->pid = -1;
    h->stdin_fd = -1;
    if (!temp_file(h->record, sizeof h->record, "http"))
        return false;
    int in[2], out[2];
    if (pipe(in) != 0)
        return false;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return false;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl(fixture_path(), fixture_path(), "--http", "127.0.0.1:0", "--era", era, "--record", h->record,
              sse_responses ? "--sse-responses" : (char *)NULL, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    h->pid = pid;
    h->stdin_fd = in[1];
    if (pid < 0) {
        close(out[0]);
        return false;
    }
    /* one line: "fixture: listening on http://127.0.0.1:PORT/mcp" */
    char line[512];
    size_t len = 0;
    double end = now_ms() + tscale(5000);
    while (len + 1 < sizeof line && now_ms() < end) {
        struct pollfd pfd;
        pfd.fd = out[0];
        pfd.events = POLLIN;
        pfd.revents = 0;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        ssize_t n = read(out[0], line + len, 1);
        if (n <= 0)
            break;
        if (line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    close(out[0]);
    const char *prefix = "fixture: listening on ";
    if (strncmp(line, prefix, strlen(prefix)) != 0) {
        t_fail(__FILE__, __LINE__, "no URL from the HTTP fixture: \"%s\"", line);
        return false;
    }
    snprintf(h->url, sizeof h->url, "%s", line + strlen(prefix));
    return true;
}

void http_fixture_stop(struct http_fixture *h)
{
    if (h->stdin_fd >= 0)
        close(h->stdin_fd); /* stdin EOF ends the server */
    if (h->pid > 0) {
        int status;
        double end = now_ms() + tscale(3000);
        while (waitpid(h->pid, &status, WNOHANG) == 0) {
            if (now_ms() > end) {
                kill(h->pid, SIGKILL);
                waitpid(h->pid, &status, 0);
                break;
            }
            sleep_ms(5);
        }
    }
    if (h->record[0])
        remove(h->record);
}
#endif

mcp_client *http_fixture_client(const struct http_fixture *h, const char *const *headers, const char *bearer)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(NULL, &cfg, &err);
    if (st == MCP_OK)
        st = mcp_config_set_url(cfg, h->url, &err);
    for (size_t i = 0; headers && headers[i] && st == MCP_OK; i += 2)
        st = mcp_config_add_header(cfg, headers[i], headers[i + 1], &err);
    if (st == MCP_OK && bearer)
        st = mcp_config_set_bearer_token(cfg, bearer, &err);
    if (st == MCP_OK)
        st = mcp_config_set_request_timeout_ms(cfg, tscale(5000), &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "http config", st, MCP_OK, err);
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    return client_from_config(cfg);
}
