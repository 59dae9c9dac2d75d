/* See harness.h. */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failed_now;
static char reason[2048];
static int passed_total, failed_total;

void t_fail(const char *file, int line, const char *fmt, ...)
{
    if (failed_now++)
        return;
    int n = snprintf(reason, sizeof reason, "%s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason + n, sizeof reason - (size_t)n, fmt, ap);
    va_end(ap);
}

const char *fixture(void)
{
    const char *env = getenv("MCP_FIXTURE");
    return env && *env ? env : FIXTURE_PATH;
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

mcp_client *client_json(const char *fmt, ...)
{
    char json[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(json, sizeof json, fmt, ap);
    va_end(ap);
    mcp_config *cfg = NULL;
    mcp_client *client = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(json, &cfg, &err);
    if (st == MCP_OK)
        st = mcp_client_new(cfg, &client, &err);
    if (st != MCP_OK)
        t_fail(__FILE__, __LINE__, "client %s: %d %s", json, st, err ? mcp_error_message(err) : "");
    mcp_error_free(err);
    mcp_config_free(cfg);
    return client;
}

int start_http_fixture(char *url, size_t n, int *stdin_fd, const char *const *args)
{
    return start_http_fixture_at("127.0.0.1:0", url, n, stdin_fd, args);
}

int start_http_fixture_at(const char *addr, char *url, size_t n, int *stdin_fd, const char *const *args)
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        const char *argv[24] = {fixture(), "--http", addr};
        int i = 3;
        for (; args && *args && i < 23; args++)
            argv[i++] = *args;
        argv[i] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    /* One line: "fixture: listening on http://127.0.0.1:<port>/mcp". */
    char line[256];
    size_t len = 0;
    while (len + 1 < sizeof line && read(out[0], line + len, 1) == 1 && line[len] != '\n')
        len++;
    line[len] = 0;
    close(out[0]);
    const char *at = strstr(line, "http://");
    if (!at) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(in[1]);
        return -1;
    }
    snprintf(url, n, "%s", at);
    *stdin_fd = in[1];
    return pid;
}

void stop_http_fixture(int pid, int stdin_fd)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (stdin_fd >= 0)
        close(stdin_fd);
}

static bool selected(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return true;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]))
            return true;
    return false;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "not ok - watchdog: a test ran past 120 s\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(2);
}

static void run(const struct test_case *tests, size_t count, int argc, char **argv)
{
    for (size_t i = 0; i < count; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        failed_now = 0;
        alarm(120);
        double t0 = now_ms();
        tests[i].fn();
        alarm(0);
        if (failed_now) {
            failed_total++;
            printf("not ok - %s: %s\n", tests[i].name, reason);
        } else {
            passed_total++;
            printf("ok - %s (%.0f ms)\n", tests[i].name, now_ms() - t0);
        }
        fflush(stdout);
    }
}

/* Children of this process still alive (zombies included): every server a test started must be
 * gone once its client is freed. */
static int live_children(void)
{
    int n = 0;
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        int pid = atoi(e->d_name);
        if (pid <= 0)
            continue;
        char path[64], stat[512] = {0};
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[len] = 0;
        const char *rest = strrchr(stat, ')');
        char state = 0;
        int ppid = 0;
        if (rest && sscanf(rest + 1, " %c %d", &state, &ppid) == 2 && ppid == (int)getpid())
            n++;
    }
    closedir(proc);
    return n;
}

int main(int argc, char **argv)
{
    signal(SIGALRM, on_alarm);
    setvbuf(stdout, NULL, _IOLBF, 0);
    run(string_tests, string_tests_count, argc, argv);
    run(host_tests, host_tests_count, argc, argv);
    run(connect_tests, connect_tests_count, argc, argv);
    run(reconnect_tests, reconnect_tests_count, argc, argv);
    /* Nothing left running: allow the library's waiter threads a moment to reap. */
    double until = now_ms() + 3000;
    int left = live_children();
    while (left > 0 && now_ms() < until) {
        usleep(20000);
        left = live_children();
    }
    if (left > 0) {
        failed_total++;
        printf("not ok - %d child process(es) of the suite still exist after every client was freed\n", left);
    }
    printf("%d passed, %d failed\n", passed_total, failed_total);
    return failed_total ? 1 : 0;
}
