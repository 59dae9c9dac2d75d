/* The shared runtime: many clients on the process-wide runtime and dispatcher
 * threads keep the thread count flat, each client's callbacks stay serial, blocking calls from
 * a shared callback are refused, freeing one client leaves the others working, and free with
 * calls in flight completes each started call once. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif


/* A fixture client on the shared runtime, connected; NULL (failure recorded) on error. */
static mcp_client *shared_client(void)
{
    mcp_config *cfg = fixture_config(NULL);
    if (!cfg)
        return NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_set_runtime(cfg, MCP_RUNTIME_SHARED, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_config_set_runtime", st, MCP_OK, err);
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    mcp_client *c = client_from_config(cfg);
    if (!c)
        return NULL;
    st = mcp_client_connect(c, NULL, NULL, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_client_connect", st, MCP_OK, err);
        mcp_error_free(err);
        mcp_client_free(c);
        return NULL;
    }
    return c;
}

/* ---- completions: a per-client record that catches overlapping callbacks ------------------ */

struct owner {
    mcp_client *client;
    mcp_client *other;       /* a blocking call on it from a callback must be refused */
    int inside;              /* callbacks of this client running now */
    int overlaps;            /* a callback started while another of this client ran */
    int done, ok, closed, other_status, reentry_refused;
    pthread_t thread;        /* the thread of the first callback */
    int thread_set, off_thread;
};

struct rec {
    struct owner *owner;
    int completions;
};

static void on_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                    const mcp_error *error)
{
    struct rec *r = (struct rec *)userdata;
    struct owner *o = r->owner;
    (void)result_json;
    (void)result_len;
    (void)error;
    if (++r->completions != 1)
        t_fail(__FILE__, __LINE__, "a call completed %d times", r->completions);
    if (AINC(&o->inside) != 1)
        AINC(&o->overlaps);
    if (!__atomic_exchange_n(&o->thread_set, 1, __ATOMIC_SEQ_CST))
        o->thread = pthread_self();
    else if (!pthread_equal(o->thread, pthread_self()))
        AINC(&o->off_thread);
    if (o->other && status == MCP_OK) {
        char *out = NULL;
        mcp_error *err = NULL;
        if (mcp_client_call_tool(o->other, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out, &err) ==
            MCP_REENTRANT_CALL)
            AINC(&o->reentry_refused);
        mcp_string_free(out);
        mcp_error_free(err);
    }
    sleep_ms(1); /* widen the window in which an overlap would show */
    switch (status) {
    case MCP_OK: AINC(&o->ok); break;
    case MCP_CLOSED:
    case MCP_CANCELLED: AINC(&o->closed); break;
    default: AINC(&o->other_status); break;
    }
    __atomic_sub_fetch(&o->inside, 1, __ATOMIC_SEQ_CST);
    AINC(&o->done);
    free(r);
}

static bool start(struct owner *o, const char *tool, mcp_call **call_out)
{
    struct rec *r = (struct rec *)calloc(1, sizeof *r);
    r->owner = o;
    mcp_error *err = NULL;
    mcp_status st =
        mcp_client_call_tool_start(o->client, tool, "{\"text\":\"hi\"}", NULL, NULL, NULL, on_done, r, call_out, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_client_call_tool_start", st, MCP_OK, err);
        free(r);
    }
    mcp_error_free(err);
    return st == MCP_OK;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* 200 connected clients, each making a call, add no thread to what one client needs: not even
 * for their servers' exits (one reaper thread; on Windows one per 63 servers). Under Wine,
 * where starting a server takes about half a second, 16. */
#ifdef _WIN32
#define MANY 16
#else
#define MANY 200
#endif

static void test_many_clients_threads_flat(void)
{
    static mcp_client *clients[MANY];
    memset(clients, 0, sizeof clients);
    clients[0] = shared_client();
    CHECK(clients[0] != NULL);
    free(tool_ok(clients[0], "echo", "{\"text\":\"x\"}"));
    int one = thread_count();
    int made = 1;
    for (; made < MANY; made++) {
        clients[made] = shared_client();
        if (!clients[made])
            break;
        char *out = tool_ok(clients[made], "echo", "{\"text\":\"x\"}");
        if (!out)
            break;
        mcp_string_free(out);
    }
    EXPECT(made == MANY);
    int many = thread_count();
    EXPECT_MSG(many <= one, "threads: %d with one shared client, %d with %d", one, many, made);
    /* Every client still answers after all were connected. */
    for (int i = 0; i < made; i += 17)
        mcp_string_free(tool_ok(clients[i], "echo", "{\"text\":\"y\"}"));
    for (int i = 0; i < made; i++)
        mcp_client_free(clients[i]);
    EXPECT_MSG(thread_count() <= one, "threads after free: %d (one client: %d)", thread_count(), one);
}

/* Two clients' completions, from many calls at once: never two of one client at a time, all
 * on the one shared dispatcher thread, and a blocking call from them is refused. */
static void test_callbacks_serial_per_client(void)
{
    struct owner a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.client = shared_client();
    b.client = shared_client();
    CHECK(a.client && b.client);
    a.other = b.client;
    b.other = a.client;
    const int n = 100;
    for (int i = 0; i < n; i++) {
        EXPECT(start(&a, "echo", NULL));
        EXPECT(start(&b, "echo", NULL));
    }
    EXPECT(wait_count(&a.done, n, tscale(10000)));
    EXPECT(wait_count(&b.done, n, tscale(10000)));
    EXPECT_MSG(a.overlaps == 0 && b.overlaps == 0, "overlapping callbacks: %d, %d", a.overlaps, b.overlaps);
    EXPECT(a.ok == n && b.ok == n);
    EXPECT(a.off_thread == 0 && b.off_thread == 0);
    EXPECT(pthread_equal(a.thread, b.thread)); /* the one shared dispatcher */
    EXPECT_MSG(a.reentry_refused == n && b.reentry_refused == n, "refused: %d, %d", a.reentry_refused,
               b.reentry_refused);
    mcp_client_free(a.client);
    mcp_client_free(b.client);
}

/* Freeing a client with calls hanging completes each once and leaves another client working. */
static void test_free_one_keeps_others(void)
{
    struct owner a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.client = shared_client();
    b.client = shared_client();
    CHECK(a.client && b.client);
    const int n = 32;
    mcp_call *calls[32];
    for (int i = 0; i < n; i++)
        EXPECT(start(&a, i % 4 ? "hang" : "echo", &calls[i]));
    EXPECT(start(&b, "hang", NULL));
    for (int i = 0; i < n / 2; i++)
        mcp_call_free(calls[i]);
    mcp_client_free(a.client);
    EXPECT_MSG(a.done == n, "%d of %d completed when free returned", a.done, n);
    EXPECT(a.ok + a.closed == n && a.overlaps == 0);
    for (int i = n / 2; i < n; i++)
        mcp_call_free(calls[i]);
    /* b: its hanging call still pending, new calls work both ways. */
    EXPECT(b.done == 0);
    mcp_string_free(tool_ok(b.client, "echo", "{\"text\":\"still\"}"));
    EXPECT(start(&b, "echo", NULL));
    EXPECT(wait_count(&b.ok, 1, tscale(5000)));
    mcp_client_free(b.client);
    EXPECT(b.done == 2 && b.closed == 1);
}

/* Free from inside a shared callback does not wait for itself (no deadlock), and completes. */
static void on_done_free(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                         const mcp_error *error)
{
    mcp_client **c = (mcp_client **)userdata;
    (void)status;
    (void)result_json;
    (void)result_len;
    (void)error;
    mcp_client_free(*c);
    *c = NULL;
}

static void test_free_from_callback(void)
{
    mcp_client *c = shared_client();
    CHECK(c != NULL);
    mcp_client *volatile holder = c;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, on_done_free,
                                             (void *)&holder, NULL, &err),
                  MCP_OK, err);
    mcp_error_free(err);
    double end = now_ms() + tscale(5000);
    while (holder != NULL && now_ms() < end)
        sleep_ms(1);
    EXPECT(holder == NULL);
    /* The shared dispatcher still serves other clients. */
    struct owner o;
    memset(&o, 0, sizeof o);
    o.client = shared_client();
    CHECK(o.client != NULL);
    EXPECT(start(&o, "echo", NULL));
    EXPECT(wait_count(&o.ok, 1, tscale(5000)));
    mcp_client_free(o.client);
}

#ifndef _WIN32
/* After fork the parent's shared clients fail with MCP_FORKED, and the child gets shared
 * threads of its own: a new shared client works there. */
static void test_fork(void)
{
    mcp_client *parent = shared_client();
    CHECK(parent != NULL);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int code = 0;
        char *out = NULL;
        mcp_error *err = NULL;
        if (mcp_client_call_tool(parent, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out, &err) != MCP_FORKED)
            code = 1;
        mcp_error_free(err);
        mcp_client *c = code ? NULL : shared_client();
        err = NULL;
        if (!c || mcp_client_call_tool(c, "echo", "{\"text\":\"child\"}", NULL, NULL, NULL, &out, &err) != MCP_OK)
            code = code ? code : 2;
        mcp_string_free(out);
        mcp_error_free(err);
        if (c)
            mcp_client_free(c);
        /* exec ends the image without exit-time leak checks (the parent's client is inherited). */
        char script[32];
        snprintf(script, sizeof script, "exit %d", code);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(code);
    }
    int status = 0;
    double end = now_ms() + tscale(20000);
    pid_t got = 0;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
        sleep_ms(5);
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    EXPECT_MSG(got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: got %d, status %d", (int)got,
               status);
    mcp_string_free(tool_ok(parent, "echo", "{\"text\":\"parent\"}"));
    mcp_client_free(parent);
}
#endif

static void test_runtime_setting_checked(void)
{
    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_config_set_runtime(cfg, 7, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_config_set_runtime(NULL, MCP_RUNTIME_SHARED, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_config_set_runtime(cfg, MCP_RUNTIME_ISOLATED, &err), MCP_OK, err);
    mcp_error_free(err);
    mcp_config_free(cfg);
    mcp_config *bad = NULL;
    err = NULL;
    EXPECT_STATUS(mcp_config_new("{\"command\":\"x\",\"runtime\":\"pooled\"}", &bad, &err), MCP_OK, err);
    mcp_error_free(err);
    err = NULL;
    mcp_client *c = NULL;
    mcp_status st = mcp_client_new(bad, &c, &err);
    EXPECT(st != MCP_OK && c == NULL);
    if (err)
        CHECK_CONTAINS(mcp_error_message(err), "runtime");
    mcp_error_free(err);
    mcp_config_free(bad);
}

const struct test_case shared_rt_tests[] = {
    {"shared/runtime_setting_checked", test_runtime_setting_checked},
    {"shared/callbacks_serial_per_client", test_callbacks_serial_per_client},
    {"shared/free_one_keeps_others", test_free_one_keeps_others},
    {"shared/free_from_callback", test_free_from_callback},
#ifndef _WIN32
    {"shared/fork", test_fork},
#endif
    {"shared/many_clients_threads_flat", test_many_clients_threads_flat},
};
const size_t shared_rt_tests_count = sizeof shared_rt_tests / sizeof shared_rt_tests[0];
