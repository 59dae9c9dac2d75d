/* The threading contract: concurrent calls, close waking blocked callers, re-entrant calls from
 * callbacks, close/free from callbacks, userdata_free accounting, no callback after free, fork,
 * SIGPIPE, and the server's process group at shutdown. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

#define ACCEPT_NAME(n) "{\"action\":\"accept\",\"content\":{\"name\":\"" n "\"}}"

/* A client whose config also carries JSON-only settings (e.g. shutdown_grace_ms). */
static mcp_client *json_client(const char *extra_json, const char *const *args)
{
    char json[2048];
    int n = snprintf(json, sizeof json, "{\"command\":\"%s\",\"request_timeout_ms\":5000%s%s,\"args\":[",
                     fixture_path_json(), extra_json ? "," : "", extra_json ? extra_json : "");
    for (int i = 0; args && args[i]; i++) {
        char arg[600];
        n += snprintf(json + n, sizeof json - (size_t)n, "%s\"%s\"", i ? "," : "",
                      json_escaped(args[i], arg, sizeof arg));
    }
    snprintf(json + n, sizeof json - (size_t)n, "]}");
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(json, &cfg, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_config_new", st, MCP_OK, err);
        mcp_error_free(err);
        return NULL;
    }
    return client_from_config(cfg);
}

#ifndef _WIN32 /* forked children: POSIX only */
/* Ends a forked child with `code` without running exit-time leak checks: the child inherits
 * the parent's clients, whose threads do not exist in it, so their memory can never be freed
 * there (valgrind and LeakSanitizer would report it). exec discards the image; _exit is the
 * fallback. */
static void child_exit(int code)
{
    char script[32];
    snprintf(script, sizeof script, "exit %d", code);
    execl("/bin/sh", "sh", "-c", script, (char *)NULL);
    _exit(code);
}

/* The child reports its progress through a pipe, so that a hang can be located. */
static int child_progress_fd = -1;
static int child_last_step;

static void child_step(int step)
{
    unsigned char b = (unsigned char)step;
    if (child_progress_fd >= 0 && write(child_progress_fd, &b, 1) != 1)
        child_progress_fd = -1;
}

/* Runs `fn` in a forked child and returns its wait status (-1: it hung and was killed after
 * timeout_ms); child_last_step is the last step it reported. The child ends with child_exit. */
static int run_in_child(void (*fn)(void *), void *arg, int timeout_ms)
{
    int fds[2];
    child_last_step = 0;
    if (pipe(fds) != 0)
        return -2;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -2;
    }
    if (pid == 0) {
        alarm(0);
        close(fds[0]);
        child_progress_fd = fds[1];
        fn(arg);
        child_exit(0);
    }
    close(fds[1]);
    double end = now_ms() + timeout_ms;
    int status = 0;
    int result;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            result = status;
            break;
        }
        if (r < 0 && errno != EINTR) {
            result = -2;
            break;
        }
        if (now_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            result = -1;
            break;
        }
        sleep_ms(5); /* polling the child's exit, bounded (waitpid has no timeout) */
    }
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        child_last_step = buf[n - 1];
    close(fds[0]);
    return result;
}

/* "exit 3", "killed by signal 13", "hung after step 4 (killed)" */
static const char *describe_child(int status, char *buf, size_t n)
{
    if (status == -1)
        snprintf(buf, n, "hung after step %d (killed)", child_last_step);
    else if (status < 0)
        snprintf(buf, n, "fork/wait failed");
    else if (WIFEXITED(status))
        snprintf(buf, n, "exit %d after step %d", WEXITSTATUS(status), child_last_step);
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d after step %d", WTERMSIG(status), child_last_step);
    else
        snprintf(buf, n, "status %d", status);
    return buf;
}

static bool child_ok(int status)
{
    return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#endif

/* ---- concurrency ----------------------------------------------------------------------------- */

#define N_THREADS 8
#define CALLS_PER_THREAD 10

struct worker {
    mcp_client *c;
    int index;
    int ok;
    int failures;
    char failure[256];
};

static void *echo_worker(void *arg)
{
    struct worker *w = (struct worker *)arg;
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        char args[192], want[128], text[128];
        snprintf(want, sizeof want, "thread %d call %d", w->index, i);
        snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
        bool slow = i == 3; /* a slow call, so requests overlap on the connection */
        char *out = NULL;
        mcp_error *err = NULL;
        mcp_status st = mcp_client_call_tool(w->c, slow ? "slow" : "echo",
                                             slow ? "{\"ms\":60}" : args, NULL, NULL, NULL, &out,
                                             &err);
        bool good = st == MCP_OK &&
                    (slow ? out && strstr(out, "slept 60") != NULL
                          : first_text(out, text, sizeof text) && strcmp(text, want) == 0);
        if (good)
            w->ok++;
        else if (w->failures++ == 0)
            snprintf(w->failure, sizeof w->failure, "call %d: status %d, %s", i, (int)st,
                     err ? mcp_error_message(err) : (out ? out : ""));
        mcp_string_free(out);
        mcp_error_free(err);
    }
    return NULL;
}

static void test_concurrent_calls(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    pthread_t th[N_THREADS];
    struct worker w[N_THREADS];
    memset(w, 0, sizeof w);
    int started = 0;
    for (int i = 0; i < N_THREADS; i++) {
        w[i].c = c;
        w[i].index = i;
        if (pthread_create(&th[i], NULL, echo_worker, &w[i]) == 0)
            started++;
        else
            break;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    EXPECT(started == N_THREADS);
    for (int i = 0; i < started; i++)
        EXPECT_MSG(w[i].ok == CALLS_PER_THREAD, "thread %d: %d ok; %s", i, w[i].ok,
                   w[i].failure);
    mcp_client_free(c);
}

/* Two host threads calling one client back to back, for a while: each call is now and then alone
 * on the connection while the other thread waits on the runtime the first drives. A lone call
 * read the server's output itself even from the thread that did not drive the runtime, racing
 * the reader task, and now and then missed its answer until the request timeout (before commit
 * 77612cb: within about three runs of a second). A call that ends with anything but its echo
 * fails. */
struct duo_worker {
    mcp_client *c;
    double until;
    int calls;
    int failures;
    char failure[256];
};

static void *duo_worker(void *arg)
{
    struct duo_worker *w = (struct duo_worker *)arg;
    while (now_ms() < w->until && w->failures == 0) {
        char *out = NULL;
        mcp_error *err = NULL;
        mcp_status st = mcp_client_call_tool(w->c, "echo", "{\"text\":\"duo\"}", NULL, NULL, NULL, &out, &err);
        if (st == MCP_OK && out && strstr(out, "duo"))
            w->calls++;
        else if (w->failures++ == 0)
            snprintf(w->failure, sizeof w->failure, "after %d calls: status %d, %s", w->calls, (int)st,
                     err ? mcp_error_message(err) : (out ? out : ""));
        mcp_string_free(out);
        mcp_error_free(err);
    }
    return NULL;
}

static void test_two_threads_back_to_back_on_one_client(void)
{
    /* request_timeout_ms 5000: a missed answer fails the call instead of hanging the test. */
    mcp_client *c = json_client(NULL, NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    pthread_t th[2];
    struct duo_worker w[2];
    memset(w, 0, sizeof w);
    double until = now_ms() + 1500;
    int started = 0;
    for (int i = 0; i < 2; i++) {
        w[i].c = c;
        w[i].until = until;
        if (pthread_create(&th[i], NULL, duo_worker, &w[i]) == 0) started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    EXPECT(started == 2);
    for (int i = 0; i < started; i++) {
        EXPECT_MSG(w[i].failures == 0, "thread %d: %s", i, w[i].failure);
        EXPECT_MSG(w[i].calls > 0, "thread %d made no call", i);
    }
    mcp_client_free(c);
}

/* Calls after idle gaps. After IDLE_GRACE (5 ms) without a call the client's driver thread drives
 * the runtime, and a lone call then polls its own request beside it and reads the server's pipe
 * itself (ffi/engine, base/driving). Every kind of call must end right there: a quick echo (read
 * beside), a slow one (longer than the grace: it takes the runtime over), one that times out,
 * one with progress notifications; and, with two threads now and then calling at once, a second
 * caller waiting while the first reads beside. A call that ends with anything but its expected
 * outcome fails. */
struct gap_worker {
    mcp_client *c;
    int index;
    int rounds;
    int ok;
    int progress;
    int failures;
    char failure[1024];
    int *finished; /* workers past their last round; each waits for all (see gap_worker) */
    int workers;
};

static void count_progress(void *userdata, double progress, double total, const char *message)
{
    (void)progress;
    (void)total;
    (void)message;
    __atomic_fetch_add((int *)userdata, 1, __ATOMIC_SEQ_CST);
}

static void *gap_worker(void *arg)
{
    struct gap_worker *w = (struct gap_worker *)arg;
    for (int i = 0; i < w->rounds && w->failures == 0; i++) {
        sleep_ms(6 + (i + w->index * 3) % 5); /* 6-10 ms: past the grace, in the driver's spell */
        char args[96], want[64], text[64];
        snprintf(want, sizeof want, "gap %d.%d", w->index, i);
        snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
        mcp_call_opts o;
        if (mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) != MCP_OK) {
            snprintf(w->failure, sizeof w->failure, "mcp_call_opts_init failed");
            w->failures++;
            break;
        }
        const char *tool = "echo", *targs = args;
        mcp_status want_st = MCP_OK;
        switch (i % 4) {
        case 1: tool = "slow"; targs = "{\"ms\":12}"; break;
        case 2: tool = "hang"; targs = "{}"; o.timeout_ms = 30; want_st = MCP_TIMEOUT; break;
        case 3:
            tool = "progress";
            targs = "{\"steps\":2,\"delay_ms\":1}";
            o.on_progress = count_progress;
            o.progress_userdata = &w->progress;
            break;
        }
        char *out = NULL;
        mcp_error *err = NULL;
        mcp_status st = mcp_client_call_tool(w->c, tool, targs, NULL, NULL, &o, &out, &err);
        bool good = st == want_st;
        if (good && i % 4 == 0)
            good = first_text(out, text, sizeof text) && strcmp(text, want) == 0;
        if (good && i % 4 == 1)
            good = out && strstr(out, "slept 12");
        if (good && i % 4 == 3)
            good = out && strstr(out, "progress done");
        if (good)
            w->ok++;
        else if (w->failures++ == 0)
            snprintf(w->failure, sizeof w->failure, "round %d (%s): status %d, %s", i, tool, (int)st,
                     err ? mcp_error_message(err) : (out ? out : ""));
        mcp_string_free(out);
        mcp_error_free(err);
    }
    /* No worker exits while another is in a call: Wine 8 loses the data of an overlapped read
     * whose thread exited before it completed (a worker reading beside the runtime starts the
     * pipe's or socket's next read), where Windows since Vista completes it (the handles are
     * on a completion port). */
    AINC(w->finished);
    while (ALOAD(w->finished) < w->workers)
        sleep_ms(1);
    return NULL;
}

/* Calls 6-10 ms apart, from one thread and from two: each finds the driver thread in its idle
 * spell and waits beside it, reading the server's pipe (stdio) or socket (HTTP, both wires)
 * itself. Quick answers, a call slower than the grace, a timeout, progress callbacks. */
static void test_calls_after_idle_gaps(void)
{
    const char *wires[] = {"stdio", "modern", "legacy"};
    for (size_t k = 0; k < sizeof wires / sizeof wires[0]; k++) {
        struct http_fixture h;
        bool http = strcmp(wires[k], "stdio") != 0;
        if (http && !http_fixture_start(&h, wires[k], true)) /* progress needs a stream */
            return;
        for (int threads = 1; threads <= 2; threads++) {
            mcp_client *c = http ? http_fixture_client(&h, NULL, NULL) : json_client(NULL, NULL);
            CHECK(c != NULL);
            mcp_error *err = NULL;
            CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
            pthread_t th[2];
            struct gap_worker w[2];
            memset(w, 0, sizeof w);
            int started = 0, finished = 0;
            for (int i = 0; i < threads; i++) {
                w[i].c = c;
                w[i].index = i;
                w[i].rounds = 24;
                w[i].finished = &finished;
                w[i].workers = threads;
                if (pthread_create(&th[i], NULL, gap_worker, &w[i]) == 0) started++;
            }
            __atomic_add_fetch(&finished, threads - started, __ATOMIC_SEQ_CST); /* none waits for those */
            for (int i = 0; i < started; i++)
                pthread_join(th[i], NULL);
            EXPECT(started == threads);
            for (int i = 0; i < started; i++) {
                EXPECT_MSG(w[i].failures == 0, "%s, %d threads, thread %d: %s", wires[k], threads, i,
                           w[i].failure);
                EXPECT_MSG(w[i].ok == w[i].rounds, "%s, %d threads, thread %d: %d of %d", wires[k], threads, i,
                           w[i].ok, w[i].rounds);
            }
            mcp_client_free(c); /* joins the dispatcher: every progress callback has run */
            for (int i = 0; i < started; i++)
                EXPECT_MSG(w[i].progress == 2 * (w[i].rounds / 4), "%s, thread %d: %d progress callbacks",
                           wires[k], i, w[i].progress);
        }
        if (http)
            http_fixture_stop(&h);
    }
}

/* 8 threads each drive an MRTR flow; one handler answers them all. */
struct name_handler {
    int calls;
};

static void answer_name(void *userdata, const char *method, const char *params,
                        size_t len, mcp_responder *r)
{
    (void)method;
    (void)params;
    (void)len;
    struct name_handler *h = (struct name_handler *)userdata;
    AINC(&h->calls);
    mcp_status answered = mcp_responder_reply_json(r, ACCEPT_NAME("Thread"), NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void *mrtr_worker(void *arg)
{
    struct worker *w = (struct worker *)arg;
    for (int i = 0; i < 3; i++) {
        char *out = NULL;
        mcp_error *err = NULL;
        mcp_status st =
            mcp_client_call_tool(w->c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err);
        if (st == MCP_OK && out && strstr(out, "Hello, Thread!"))
            w->ok++;
        else if (w->failures++ == 0)
            snprintf(w->failure, sizeof w->failure, "status %d, %s", (int)st,
                     err ? mcp_error_message(err) : (out ? out : ""));
        mcp_string_free(out);
        mcp_error_free(err);
    }
    return NULL;
}

static void test_concurrent_mrtr(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    struct name_handler h;
    memset(&h, 0, sizeof h);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_on_elicitation(c, answer_name, &h, NULL, &err), MCP_OK, err);
    pthread_t th[N_THREADS];
    struct worker w[N_THREADS];
    memset(w, 0, sizeof w);
    int started = 0;
    for (int i = 0; i < N_THREADS; i++) {
        w[i].c = c;
        w[i].index = i;
        if (pthread_create(&th[i], NULL, mrtr_worker, &w[i]) != 0)
            break;
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    EXPECT(started == N_THREADS);
    for (int i = 0; i < started; i++)
        EXPECT_MSG(w[i].ok == 3, "thread %d: %d ok; %s", i, w[i].ok, w[i].failure);
    EXPECT(wait_count(&h.calls, N_THREADS * 3, tscale(2000)));
    mcp_client_free(c);
}

/* Several clients created, used and freed at the same time. */
static void *client_worker(void *arg)
{
    struct worker *w = (struct worker *)arg;
    mcp_config *cfg = NULL;
    mcp_client *c = NULL;
    mcp_error *err = NULL;
    char *out = NULL;
    mcp_status st = mcp_config_new(NULL, &cfg, &err);
    if (st == MCP_OK)
        st = mcp_config_set_command(cfg, fixture_path(), &err);
    if (st == MCP_OK)
        st = mcp_config_set_request_timeout_ms(cfg, 5000, &err);
    if (st == MCP_OK)
        st = mcp_client_new(cfg, &c, &err);
    mcp_config_free(cfg);
    if (st == MCP_OK)
        st = mcp_client_call_tool(c, "echo", "{\"text\":\"many\"}", NULL, NULL, NULL, &out, &err);
    if (st == MCP_OK && out && strstr(out, "many"))
        w->ok = 1;
    else
        snprintf(w->failure, sizeof w->failure, "status %d %s", (int)st,
                 err ? mcp_error_message(err) : "");
    mcp_string_free(out);
    mcp_error_free(err);
    mcp_client_free(c);
    return NULL;
}

static void test_many_clients(void)
{
    enum { N = 4 };
    pthread_t th[N];
    struct worker w[N];
    memset(w, 0, sizeof w);
    int started = 0;
    for (int i = 0; i < N; i++) {
        if (pthread_create(&th[i], NULL, client_worker, &w[i]) != 0)
            break;
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    EXPECT(started == N);
    for (int i = 0; i < started; i++)
        EXPECT_MSG(w[i].ok == 1, "client %d: %s", i, w[i].failure);
}

/* ---- close wakes blocked callers ----------------------------------------------------------- */

struct blocked {
    mcp_client *c;
    const char *tool;
    mcp_status st;
    double returned_at;
    int done;
};

static void *blocked_call(void *arg)
{
    struct blocked *b = (struct blocked *)arg;
    mcp_call_opts opts;
    EXPECT(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = -1; /* no timeout: only close can end it */
    char *out = NULL;
    mcp_error *err = NULL;
    b->st = mcp_client_call_tool(b->c, b->tool, NULL, NULL, NULL, &opts, &out, &err);
    b->returned_at = now_ms();
    mcp_string_free(out);
    mcp_error_free(err);
    ASTORE(&b->done, 1);
    return NULL;
}

static void test_close_wakes_blocked_callers(void)
{
    struct fixture_signal sig;
    CHECK(fixture_signal_open(&sig));
    mcp_client *c = connected_client("--signal", sig.path, (const char *)NULL);
    CHECK(c != NULL);
    enum { N = 4 };
    pthread_t th[N];
    struct blocked b[N];
    memset(b, 0, sizeof b);
    int started = 0;
    for (int i = 0; i < N; i++) {
        b[i].c = c;
        b[i].tool = "hang";
        b[i].st = -1;
        if (pthread_create(&th[i], NULL, blocked_call, &b[i]) != 0)
            break;
        started++;
    }
    /* Every call reached the server, which never answers `hang`: all are blocked. */
    EXPECT(fixture_signal_wait(&sig, "request tools/call hang", started, tscale(3000)));
    for (int i = 0; i < started; i++)
        EXPECT(ALOAD(&b[i].done) == 0);
    double t0 = now_ms();
    mcp_client_close(c);
    fixture_signal_close(&sig);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    EXPECT(started == N);
    for (int i = 0; i < started; i++) {
        EXPECT_MSG(b[i].st == MCP_CLOSED, "caller %d: status %d", i, (int)b[i].st);
        EXPECT_MSG(b[i].returned_at - t0 < tscale(1500), "caller %d woke after %.0f ms", i,
                   b[i].returned_at - t0);
    }
    mcp_client_free(c);
}


/* One cancel token shared by several calls cancels them all. */
struct token_call {
    mcp_client *c;
    const mcp_cancel_token *tok;
    mcp_status st;
    double returned_at;
};

static void *call_with_token(void *arg)
{
    struct token_call *t = (struct token_call *)arg;
    mcp_call_opts opts;
    EXPECT(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.cancel = t->tok;
    opts.timeout_ms = -1;
    char *out = NULL;
    mcp_error *err = NULL;
    t->st = mcp_client_call_tool(t->c, "hang", NULL, NULL, NULL, &opts, &out, &err);
    t->returned_at = now_ms();
    mcp_string_free(out);
    mcp_error_free(err);
    return NULL;
}

static void test_shared_cancel_token(void)
{
    struct fixture_signal sig;
    CHECK(fixture_signal_open(&sig));
    mcp_client *c = connected_client("--signal", sig.path, (const char *)NULL);
    CHECK(c != NULL);
    mcp_cancel_token *tok = mcp_cancel_token_new();
    mcp_cancel_token *clone = mcp_cancel_token_clone(tok);
    enum { N = 3 };
    pthread_t th[N];
    struct token_call t[N];
    memset(t, 0, sizeof t);
    int started = 0;
    for (int i = 0; i < N; i++) {
        t[i].c = c;
        t[i].tok = i == 0 ? clone : tok;
        t[i].st = -1;
        if (pthread_create(&th[i], NULL, call_with_token, &t[i]) != 0)
            break;
        started++;
    }
    /* Cancel only once every call is in flight (the server got it and never answers). */
    EXPECT(fixture_signal_wait(&sig, "request tools/call hang", started, tscale(3000)));
    double t0 = now_ms();
    mcp_cancel_token_cancel(clone);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    EXPECT(started == N);
    for (int i = 0; i < started; i++) {
        EXPECT_MSG(t[i].st == MCP_CANCELLED, "call %d: status %d", i, (int)t[i].st);
        EXPECT_MSG(t[i].returned_at - t0 < tscale(1000), "call %d returned after %.0f ms", i,
                   t[i].returned_at - t0);
    }
    /* the server heard about each abandoned request */
    EXPECT(fixture_signal_wait(&sig, "notification notifications/cancelled", N, tscale(2000)));
    char *out = tool_ok(c, "cancelled_ids", NULL);
    EXPECT_MSG(out && count_occurrences(out, ",") >= N - 1, "cancelled ids: %s",
               out ? out : "(null)");
    mcp_string_free(out);
    /* later calls with the cancelled token fail at once; others work */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.cancel = tok;
    out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, NULL, &opts, &out,
                                       &err),
                  MCP_CANCELLED, err);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    out = tool_ok(c, "echo", "{\"text\":\"x\"}");
    EXPECT(out != NULL);
    mcp_string_free(out);
    mcp_cancel_token_free(tok);
    mcp_cancel_token_free(clone);
    mcp_client_free(c);
    fixture_signal_close(&sig);
}

/* Close while another thread is still connecting (the server never answers the probe). */
struct connecting {
    mcp_client *c;
    mcp_status st;
    double returned_at;
};

static void *connect_thread(void *arg)
{
    struct connecting *k = (struct connecting *)arg;
    mcp_error *err = NULL;
    k->st = mcp_client_connect(k->c, NULL, NULL, &err);
    k->returned_at = now_ms();
    mcp_error_free(err);
    return NULL;
}

static void test_close_during_connect(void)
{
    struct fixture_signal sig;
    CHECK(fixture_signal_open(&sig));
    const char *args[] = {"--on-discover", "silent", "--signal", sig.path, NULL};
    mcp_client *c = json_client("\"probe_timeout_ms\":5000", args);
    CHECK(c != NULL);
    struct connecting k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.st = -1;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, connect_thread, &k) == 0);
    /* The probe reached the (silent) server: the connect is blocked waiting for its answer. */
    EXPECT(fixture_signal_wait(&sig, "request server/discover", 1, tscale(3000)));
    fixture_signal_close(&sig);
    double t0 = now_ms();
    mcp_client_close(c);
    pthread_join(th, NULL);
    EXPECT_STATUS(k.st, MCP_CLOSED, NULL);
    EXPECT_MSG(k.returned_at - t0 < tscale(1500), "connect returned %.0f ms after close",
               k.returned_at - t0);
    EXPECT(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_client_free(c);
}

/* ---- callbacks: re-entrancy, close and free from inside ---------------------------------------- */

struct reentry {
    mcp_client *c;
    mcp_subscription *sub;
    mcp_status call_tool, list, connect, ping, listen, next, request, set_level;
    int era;
    mcp_status info;
    int ran;
};

static void reentry_init(struct reentry *r, mcp_client *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->call_tool = r->list = r->connect = r->ping = r->listen = r->next = r->request = -1;
    r->set_level = r->info = -1;
}

static void try_blocking_calls(struct reentry *r)
{
    char *out = NULL;
    mcp_error *err = NULL;
    mcp_subscription *sub = NULL;
#define TRY(field, call)                                                                       \
    do {                                                                                       \
        out = NULL;                                                                            \
        err = NULL;                                                                            \
        r->field = (call);                                                                     \
        mcp_string_free(out);                                                                  \
        mcp_error_free(err);                                                                   \
    } while (0)
    TRY(call_tool, mcp_client_call_tool(r->c, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out,
                                        &err));
    TRY(list, mcp_client_list(r->c, MCP_LIST_TOOLS, NULL, NULL, &out, &err));
    TRY(connect, mcp_client_connect(r->c, NULL, &out, &err));
    TRY(ping, mcp_client_ping(r->c, NULL, &err));
    TRY(request, mcp_client_request(r->c, "tools/list", NULL, NULL, &out, &err));
    TRY(set_level, mcp_client_set_log_level(r->c, "info", NULL, &err));
    TRY(listen, mcp_client_listen(r->c, "{\"toolsListChanged\":true}", NULL, &sub, &err));
    if (r->sub)
        TRY(next, mcp_subscription_next(r->sub, 10, &out, &err));
    /* non-blocking ones are fine */
    r->era = mcp_client_era(r->c);
    TRY(info, mcp_client_server_info(r->c, &out, &err));
#undef TRY
    if (sub != NULL)
        mcp_subscription_free(sub);
    AINC(&r->ran);
}

static void check_reentry(const char *where, struct reentry *r, bool with_sub,
                          bool connected)
{
    EXPECT_MSG(ALOAD(&r->ran) >= 1, "%s: the callback did not run", where);
    const struct {
        const char *name;
        mcp_status st;
    } got[] = {
        {"call_tool", r->call_tool}, {"list", r->list},       {"connect", r->connect},
        {"ping", r->ping},           {"request", r->request}, {"set_log_level", r->set_level},
        {"listen", r->listen},
    };
    for (size_t i = 0; i < sizeof got / sizeof got[0]; i++)
        EXPECT_MSG(got[i].st == MCP_REENTRANT_CALL, "%s: %s returned %d (%s)", where,
                   got[i].name, (int)got[i].st, mcp_status_str(got[i].st));
    if (with_sub)
        EXPECT_MSG(r->next == MCP_REENTRANT_CALL, "%s: subscription_next returned %d", where,
                   (int)r->next);
    if (connected) {
        EXPECT_MSG(r->era != MCP_ERA_NONE, "%s: era", where);
        EXPECT_MSG(r->info == MCP_OK, "%s: server_info returned %d", where, (int)r->info);
    }
}

static void reentrant_input(void *userdata, const char *method, const char *params, size_t len,
                            mcp_responder *responder)
{
    (void)method;
    (void)params;
    (void)len;
    struct reentry *r = (struct reentry *)userdata;
    try_blocking_calls(r);
    mcp_status answered = mcp_responder_reply_json(responder, ACCEPT_NAME("Reentrant"), NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void reentrant_progress(void *userdata, double p, double t, const char *m)
{
    (void)p;
    (void)t;
    (void)m;
    struct reentry *r = (struct reentry *)userdata;
    if (ALOAD(&r->ran) == 0)
        try_blocking_calls(r);
}

static void reentrant_notification(void *userdata, const char *method, const char *params,
                                   size_t len)
{
    (void)params;
    (void)len;
    struct reentry *r = (struct reentry *)userdata;
    /* the progress tool's log message (not the listen acknowledgement, which arrives while
     * the test is still setting up) */
    if (strcmp(method, "notifications/message") == 0 && ALOAD(&r->ran) == 0)
        try_blocking_calls(r);
}

static void reentrant_log(void *userdata, const char *level, const char *source,
                          const char *message)
{
    (void)level;
    (void)source;
    struct reentry *r = (struct reentry *)userdata;
    if (strstr(message, "reentry banner") && ALOAD(&r->ran) == 0)
        try_blocking_calls(r);
}

static void test_reentrant_calls(void)
{
    mcp_client *c = fixture_client("--stderr-banner", "reentry banner", (const char *)NULL);
    CHECK(c != NULL);
    struct reentry in, prog, note, logr;
    reentry_init(&in, c);
    reentry_init(&prog, c);
    reentry_init(&note, c);
    reentry_init(&logr, c);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_on_elicitation(c, reentrant_input, &in, NULL, &err), MCP_OK, err);
    CHECK_STATUS(mcp_client_set_notification_handler(c, reentrant_notification, &note, NULL, &err),
                 MCP_OK, err);
    CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    mcp_subscription *sub = NULL;
    CHECK_STATUS(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &err), MCP_OK,
                 err);
    in.sub = prog.sub = note.sub = logr.sub = sub;

    /* from an input handler */
    char *out = tool_ok(c, "elicit_once", NULL);
    EXPECT_CONTAINS(out, "Hello, Reentrant!");
    mcp_string_free(out);
    check_reentry("input handler", &in, true, true);

    /* from a progress callback */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.on_progress = reentrant_progress;
    opts.progress_userdata = &prog;
    opts.log_level = "info"; /* and from the notification listener (the log message) */
    out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "progress", "{\"steps\":2,\"delay_ms\":20}", NULL, NULL,
                                       &opts, &out, &err),
                  MCP_OK, err);
    mcp_string_free(out);
    check_reentry("progress callback", &prog, true, true);
    EXPECT(wait_count(&note.ran, 1, tscale(2000)));
    check_reentry("notification listener", &note, true, true);

    /* from a log listener (a fresh client: its banner is the first stderr line) */
    mcp_subscription_free(sub);
    mcp_client_free(c);

    c = fixture_client("--stderr-banner", "reentry banner", (const char *)NULL);
    CHECK(c != NULL);
    reentry_init(&logr, c);
    CHECK_STATUS(mcp_client_set_log_handler(c, reentrant_log, &logr, NULL, &err), MCP_OK, err);
    CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(wait_count(&logr.ran, 1, tscale(3000)));
    if (ALOAD(&logr.ran) >= 1)
        check_reentry("log listener", &logr, false, false); /* may run while connecting */
    mcp_client_free(c);
}

/* mcp_client_close from an input handler: the handler does not wait for the server to exit,
 * and the blocked call returns MCP_CLOSED. */
struct closing_handler {
    mcp_client *c;
    double took;
    int ran;
};

static void close_in_handler(void *userdata, const char *method, const char *params, size_t len,
                             mcp_responder *responder)
{
    (void)method;
    (void)params;
    (void)len;
    (void)responder; /* returning without a reply: the library still owns it */
    struct closing_handler *h = (struct closing_handler *)userdata;
    double t0 = now_ms();
    mcp_client_close(h->c);
    mcp_client_close(h->c);
    h->took = now_ms() - t0;
    AINC(&h->ran);
}

static void test_close_from_callback(void)
{
    /* A server that ignores stdin EOF and SIGTERM: waiting for it would take the whole grace. */
    const char *args[] = {"--ignore-stdin-eof", NULL};
    mcp_client *c = json_client("\"shutdown_grace_ms\":400", args);
    CHECK(c != NULL);
    struct closing_handler h;
    memset(&h, 0, sizeof h);
    h.c = c;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_on_elicitation(c, close_in_handler, &h, NULL, &err), MCP_OK, err);
    char *out = SENTINEL_STR;
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_CLOSED, err);
    EXPECT(now_ms() - t0 < tscale(1500));
    EXPECT(out == SENTINEL_STR);
    EXPECT(wait_count(&h.ran, 1, tscale(2000)));
    EXPECT_MSG(h.took < tscale(150), "mcp_client_close took %.0f ms inside the callback",
               h.took);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* mcp_client_free from inside a callback (log listener, notification listener). */
struct freeing_cb {
    mcp_client *c;
    int may_free; /* set by the test once its own call on the client has returned */
    int freed;
    double took;
    struct counted ud;
};

static void freeing_free(void *userdata)
{
    struct freeing_cb *f = (struct freeing_cb *)userdata;
    AINC(&f->ud.frees);
}

static void free_now(struct freeing_cb *f)
{
    if (ALOAD(&f->freed) != 0)
        return;
    /* The test thread must be done with the client first (free is not thread-safe). */
    if (!wait_count(&f->may_free, 1, tscale(3000)))
        return;
    ASTORE(&f->freed, 1);
    double t0 = now_ms();
    mcp_client_free(f->c);
    f->took = now_ms() - t0;
    ASTORE(&f->freed, 2);
}

static void free_in_log(void *userdata, const char *level, const char *source, const char *msg)
{
    (void)level;
    (void)source;
    if (strstr(msg, "free me"))
        free_now((struct freeing_cb *)userdata);
}

static void free_in_notification(void *userdata, const char *method, const char *params,
                                 size_t len)
{
    (void)method;
    (void)params;
    (void)len;
    free_now((struct freeing_cb *)userdata);
}

static void test_free_from_callback(void)
{
    struct freeing_cb f;
    memset(&f, 0, sizeof f);
    f.c = fixture_client("--stderr-banner", "free me", (const char *)NULL);
    CHECK(f.c != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_set_log_handler(f.c, free_in_log, &f, freeing_free, &err), MCP_OK,
                 err);
    mcp_status st = mcp_client_connect(f.c, NULL, NULL, &err);
    EXPECT_STATUS(st, MCP_OK, err);
    mcp_error_free(err);
    err = NULL;
    ASTORE(&f.may_free, 1); /* from here on the test does not touch f.c */
    EXPECT(wait_count(&f.freed, 2, tscale(5000)));
    EXPECT(wait_count(&f.ud.frees, 1, tscale(2000)));
    sleep_ms(20); /* an absence window (no second free): nothing to wait on but time */
    EXPECT(f.ud.frees == 1);
    EXPECT_MSG(f.took < tscale(2500), "mcp_client_free inside a callback took %.0f ms", f.took);

    /* from a notification listener (legacy notify) */
    memset(&f, 0, sizeof f);
    f.c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(f.c != NULL);
    CHECK_STATUS(
        mcp_client_set_notification_handler(f.c, free_in_notification, &f, freeing_free, &err),
        MCP_OK, err);
    char *out = tool_ok(f.c, "notify", NULL);
    EXPECT_CONTAINS(out, "notified");
    mcp_string_free(out);
    ASTORE(&f.may_free, 1);
    EXPECT(wait_count(&f.freed, 2, tscale(5000)));
    EXPECT(wait_count(&f.ud.frees, 1, tscale(2000)));
    sleep_ms(20); /* an absence window (no second free): nothing to wait on but time */
    EXPECT(f.ud.frees == 1);
}

/* ---- userdata_free accounting ----------------------------------------------------------------- */

static void input_noop(void *ud, const char *m, const char *p, size_t n, mcp_responder *r)
{
    (void)ud;
    (void)m;
    (void)p;
    (void)n;
    mcp_status answered = mcp_responder_reply_json(r, "{\"action\":\"decline\"}", NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void notification_noop(void *ud, const char *m, const char *p, size_t n)
{
    (void)ud;
    (void)m;
    (void)p;
    (void)n;
}

static void log_noop(void *ud, const char *l, const char *s, const char *m)
{
    (void)ud;
    (void)l;
    (void)s;
    (void)m;
}

/* Registers (handler != 0) or unregisters kind k's handler with `ud`. */
static mcp_status register_kind(mcp_client *c, int k, bool handler, struct counted *ud)
{
    mcp_error *err = NULL;
    mcp_userdata_free_fn fr = ud ? counted_free : NULL;
    mcp_status st;
    switch (k) {
    case 0: st = mcp_client_on_elicitation(c, handler ? input_noop : NULL, ud, fr, &err); break;
    case 1: st = mcp_client_on_sampling(c, handler ? input_noop : NULL, ud, fr, &err); break;
    case 2: st = mcp_client_on_roots(c, handler ? input_noop : NULL, ud, fr, &err); break;
    case 3:
        st = mcp_client_set_notification_handler(c, handler ? notification_noop : NULL, ud, fr,
                                                 &err);
        break;
    default:
        st = mcp_client_set_log_handler(c, handler ? log_noop : NULL, ud, fr, &err);
        break;
    }
    mcp_error_free(err);
    return st;
}

static void test_userdata_free_once(void)
{
    static const char *const kinds[] = {"elicitation", "sampling", "roots", "notification",
                                        "log"};
    for (int k = 0; k < 5; k++) {
        mcp_client *c = connected_client(NULL);
        CHECK(c != NULL);
        struct counted first, second, unreg, last, after_close;
        memset(&first, 0, sizeof first);
        memset(&second, 0, sizeof second);
        memset(&unreg, 0, sizeof unreg);
        memset(&last, 0, sizeof last);
        memset(&after_close, 0, sizeof after_close);

        EXPECT(register_kind(c, k, true, &first) == MCP_OK);
        EXPECT_MSG(first.frees == 0, "%s: freed while registered", kinds[k]);
        EXPECT(register_kind(c, k, true, &second) == MCP_OK); /* replaces `first` */
        EXPECT_MSG(wait_count(&first.frees, 1, tscale(1000)), "%s: replaced userdata not freed",
                   kinds[k]);
        EXPECT(second.frees == 0);
        /* unregister with a NULL handler: its own userdata is released at once, and so is
         * the registered one */
        EXPECT(register_kind(c, k, false, &unreg) == MCP_OK);
        EXPECT_MSG(wait_count(&unreg.frees, 1, tscale(1000)),
                   "%s: userdata of a NULL handler not freed", kinds[k]);
        EXPECT_MSG(wait_count(&second.frees, 1, tscale(1000)),
                   "%s: unregistered userdata not freed", kinds[k]);
        /* NULL userdata and NULL userdata_free are fine */
        EXPECT(register_kind(c, k, true, NULL) == MCP_OK);
        EXPECT(register_kind(c, k, true, &last) == MCP_OK);
        sleep_ms(10); /* an absence window (no early free): nothing to wait on but time */
        EXPECT(last.frees == 0);
        mcp_client_close(c);
        /* Registering on a closed client: whatever the status, freed exactly once. */
        (void)register_kind(c, k, true, &after_close);
        mcp_client_free(c);
        EXPECT_MSG(last.frees == 1, "%s: %d frees at mcp_client_free", kinds[k], last.frees);
        EXPECT_MSG(after_close.frees == 1, "%s: %d frees of the after-close userdata", kinds[k],
                   after_close.frees);
        sleep_ms(10);
        EXPECT(first.frees == 1 && second.frees == 1 && unreg.frees == 1 && last.frees == 1);
    }
}

/* A replaced handler's userdata is released only once its running callback returns. */
struct blocking_handler {
    int entered;
    int go;
    struct counted ud;
};

static void blocking_free(void *userdata)
{
    struct blocking_handler *b = (struct blocking_handler *)userdata;
    AINC(&b->ud.frees);
}

static void block_until_go(void *userdata, const char *m, const char *p, size_t n,
                           mcp_responder *r)
{
    (void)m;
    (void)p;
    (void)n;
    struct blocking_handler *b = (struct blocking_handler *)userdata;
    ASTORE(&b->entered, 1);
    wait_count(&b->go, 1, tscale(3000));
    if (ALOAD(&b->ud.frees) != 0)
        b->ud.after_free++;
    mcp_status answered = mcp_responder_reply_json(r, ACCEPT_NAME("Blocked"), NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void *call_elicit_once(void *arg)
{
    struct blocked *b = (struct blocked *)arg;
    char *out = NULL;
    mcp_error *err = NULL;
    b->st = mcp_client_call_tool(b->c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err);
    mcp_string_free(out);
    mcp_error_free(err);
    ASTORE(&b->done, 1);
    return NULL;
}

static void test_userdata_released_when_idle(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct blocking_handler a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_on_elicitation(c, block_until_go, &a, blocking_free, &err), MCP_OK,
                 err);
    struct blocked call;
    memset(&call, 0, sizeof call);
    call.c = c;
    call.st = -1;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, call_elicit_once, &call) == 0);
    EXPECT(wait_count(&a.entered, 1, tscale(3000)));
    /* replace while a's callback runs */
    EXPECT_STATUS(mcp_client_on_elicitation(c, block_until_go, &b, blocking_free, &err), MCP_OK,
                  err);
    sleep_ms(50); /* an absence window (no free while a's callback runs): only time shows it */
    EXPECT_MSG(ALOAD(&a.ud.frees) == 0, "userdata freed while its callback runs");
    ASTORE(&a.go, 1);
    pthread_join(th, NULL);
    EXPECT_STATUS(call.st, MCP_OK, NULL);
    EXPECT(wait_count(&a.ud.frees, 1, tscale(2000)));
    EXPECT(a.ud.after_free == 0);
    EXPECT(b.ud.frees == 0);
    ASTORE(&b.go, 1);
    mcp_client_free(c);
    EXPECT(a.ud.frees == 1 && b.ud.frees == 1);
}

/* A deferred responder outlives its client: it still must be (and can be) completed. */
struct defer_handler {
    mcp_responder *r;
    struct counted ud;
};

static void defer_free(void *userdata)
{
    AINC(&((struct defer_handler *)userdata)->ud.frees);
}

static void defer_it(void *userdata, const char *m, const char *p, size_t n, mcp_responder *r)
{
    (void)m;
    (void)p;
    (void)n;
    struct defer_handler *d = (struct defer_handler *)userdata;
    mcp_responder_defer(r);
    __atomic_store_n(&d->r, r, __ATOMIC_SEQ_CST);
}

static void test_responder_outlives_client(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct defer_handler d;
    memset(&d, 0, sizeof d);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_on_elicitation(c, defer_it, &d, defer_free, &err), MCP_OK, err);
    struct blocked call;
    memset(&call, 0, sizeof call);
    call.c = c;
    call.st = -1;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, call_elicit_once, &call) == 0);
    double end = now_ms() + tscale(3000);
    while (__atomic_load_n(&d.r, __ATOMIC_SEQ_CST) == NULL && now_ms() < end)
        sleep_ms(2);
    mcp_responder *r = __atomic_load_n(&d.r, __ATOMIC_SEQ_CST);
    EXPECT(r != NULL);
    mcp_client_close(c);
    pthread_join(th, NULL);
    EXPECT_STATUS(call.st, MCP_CLOSED, NULL);
    mcp_client_free(c);
    EXPECT(d.ud.frees == 1);
    if (r != NULL) {
        EXPECT(mcp_responder_is_cancelled(r));
        EXPECT_STATUS(mcp_responder_reply_json(r, ACCEPT_NAME("Orphan"), &err), MCP_CANCELLED,
                      err);
        mcp_error_free(err);
    }
}

/* ---- no callback after mcp_client_free --------------------------------------------------------- */

struct counting_cb {
    int count;
    int after_free;
    int frees;
    int delay_ms;
};

static void counting_free(void *userdata)
{
    AINC(&((struct counting_cb *)userdata)->frees);
}

static void count_log(void *userdata, const char *l, const char *s, const char *m)
{
    (void)l;
    (void)s;
    (void)m;
    struct counting_cb *k = (struct counting_cb *)userdata;
    if (ALOAD(&k->frees) != 0)
        AINC(&k->after_free);
    AINC(&k->count);
    if (k->delay_ms)
        sleep_ms(k->delay_ms); /* a deliberately slow listener, so work queues up behind it */
}

static void count_notification(void *userdata, const char *m, const char *p, size_t n)
{
    (void)n;
    count_log(userdata, m, p, p);
}

#ifndef _WIN32 /* the stderr writer is a /bin/sh loop */
/* The server (through a shell) writes to stderr non-stop (about 1000 lines a second, for at
 * most 30 s); the log listener counts, slowly. After mcp_client_free returns, the count never
 * moves again. */
static void test_no_log_callback_after_free(void)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    /* a short grace: the shell's loop is an orphan in the server's group at shutdown */
    CHECK_STATUS(mcp_config_new("{\"shutdown_grace_ms\":200}", &cfg, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_config_set_command(cfg, "/bin/sh", &err), MCP_OK, err);
    EXPECT_STATUS(mcp_config_add_arg(cfg, "-c", &err), MCP_OK, err);
    EXPECT_STATUS(mcp_config_add_arg(cfg,
                                     "i=0; while [ $i -lt 3000 ]; do "
                                     "for j in 0 1 2 3 4 5 6 7 8 9; do echo \"spam $i.$j\" >&2 "
                                     "|| exit 0; done; i=$((i+1)); sleep 0.01; "
                                     "done & exec \"$0\"",
                                     &err),
                  MCP_OK, err);
    EXPECT_STATUS(mcp_config_add_arg(cfg, fixture_path(), &err), MCP_OK, err);
    EXPECT_STATUS(mcp_config_set_request_timeout_ms(cfg, (uint64_t)tscale(5000), &err), MCP_OK,
                  err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    struct counting_cb k;
    memset(&k, 0, sizeof k);
    k.delay_ms = 1;
    EXPECT_STATUS(mcp_client_set_log_handler(c, count_log, &k, counting_free, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(wait_count(&k.count, 50, tscale(3000)));
    double t0 = now_ms();
    mcp_client_free(c);
    double took = now_ms() - t0;
    int at_free = ALOAD(&k.count);
    EXPECT(k.frees == 1);
    sleep_ms(150); /* an absence window (no callback after free): nothing to wait on but time */
    EXPECT_MSG(ALOAD(&k.count) == at_free, "%d callbacks after mcp_client_free returned",
               ALOAD(&k.count) - at_free);
    EXPECT(k.after_free == 0);
    EXPECT(k.frees == 1);
    EXPECT_MSG(took < tscale(3000), "mcp_client_free took %.0f ms", took);
    mcp_error_free(err);
}
#endif

/* Notifications still queued for a slow listener are dropped at mcp_client_free. */
static void test_no_notification_after_free(void)
{
    mcp_client *c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    struct counting_cb k;
    memset(&k, 0, sizeof k);
    k.delay_ms = 10;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_notification_handler(c, count_notification, &k, counting_free,
                                                      &err),
                  MCP_OK, err);
    for (int i = 0; i < 5; i++) {
        char *out = tool_ok(c, "notify", NULL);
        mcp_string_free(out);
    }
    /* Let the (slow) listener start on the queue, so the free below has queued work to drop;
     * bounded, since a loaded machine may start the dispatcher late. */
    for (int waited = 0; ALOAD(&k.count) < 1 && waited < tscale(3000); waited += 10) sleep_ms(10);
    mcp_client_free(c);
    int at_free = ALOAD(&k.count);
    EXPECT(k.frees == 1);
    sleep_ms(150); /* an absence window (no callback after free): nothing to wait on but time */
    EXPECT_MSG(ALOAD(&k.count) == at_free, "%d callbacks after mcp_client_free returned",
               ALOAD(&k.count) - at_free);
    EXPECT(k.after_free == 0);
    EXPECT(k.frees == 1);
    EXPECT(at_free >= 1);
}

#ifndef _WIN32 /* fork, SIGPIPE and process groups (Windows' tree: test_windows.c) */
/* ---- processes ------------------------------------------------------------------------------ */

struct fork_ctx {
    mcp_client *c;
    mcp_subscription *sub;
};

static void child_uses_parent_client(void *arg)
{
    struct fork_ctx *f = (struct fork_ctx *)arg;
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    child_step(1); /* a call on the inherited client */
    mcp_status st = mcp_client_call_tool(f->c, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out,
                                         &err);
    if (st != MCP_FORKED || out != SENTINEL_STR || mcp_error_status(err) != MCP_FORKED)
        child_exit(10);
    mcp_error_free(err);
    err = NULL;
    child_step(2);
    if (mcp_client_connect(f->c, NULL, NULL, NULL) != MCP_FORKED)
        child_exit(11);
    child_step(3);
    if (mcp_client_listen(f->c, "{\"toolsListChanged\":true}", NULL, NULL, NULL) == MCP_OK)
        child_exit(12);
    /* a client made in the child works */
    child_step(5);
    mcp_config *cfg = fixture_config(NULL);
    mcp_client *mine = NULL;
    if (cfg == NULL || mcp_client_new(cfg, &mine, NULL) != MCP_OK)
        child_exit(13);
    mcp_config_free(cfg);
    out = NULL;
    child_step(6);
    st = mcp_client_call_tool(mine, "echo", "{\"text\":\"child\"}", NULL, NULL, NULL, &out, NULL);
    if (st != MCP_OK || out == NULL || strstr(out, "child") == NULL)
        child_exit(14);
    mcp_string_free(out);
    child_step(7);
    mcp_client_free(mine);
    child_step(8);
    child_exit(0);
}

/* The parent's subscription in the child: an error (not a hang, not an event). */
static void child_uses_parent_subscription(void *arg)
{
    struct fork_ctx *f = (struct fork_ctx *)arg;
    char *ev = SENTINEL_STR;
    child_step(1);
    mcp_status st = mcp_subscription_next(f->sub, 200, &ev, NULL);
    if (st == MCP_OK || ev != SENTINEL_STR)
        child_exit(15);
    if (st != MCP_FORKED)
        child_exit(16);
    child_step(2);
    mcp_subscription_free(f->sub);
    child_step(3);
    child_exit(0);
}

static void child_frees_parent_client(void *arg)
{
    struct fork_ctx *f = (struct fork_ctx *)arg;
    child_step(1);
    mcp_client_close(f->c);
    child_step(2);
    mcp_client_free(f->c);
    child_step(3);
    child_exit(0);
}

static void test_fork(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct fork_ctx f;
    f.c = c;
    f.sub = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &f.sub, &err),
                  MCP_OK, err);
    mcp_error_free(err);
    /* steps: 1 call_tool, 2 connect, 3 listen, 5-8 a new client */
    int status = run_in_child(child_uses_parent_client, &f, tscale(3000));
    char why[96];
    EXPECT_MSG(child_ok(status), "forked child using the inherited client: %s",
               describe_child(status, why, sizeof why));
    /* steps: 1 subscription_next, 2 subscription_free */
    if (f.sub != NULL) {
        status = run_in_child(child_uses_parent_subscription, &f, tscale(3000));
        EXPECT_MSG(child_ok(status), "forked child using the inherited subscription: %s",
                   describe_child(status, why, sizeof why));
    }
    char *out = tool_ok(c, "echo", "{\"text\":\"parent\"}");
    EXPECT_CONTAINS(out, "parent");
    mcp_string_free(out);
    /* the parent's subscription still works */
    if (f.sub != NULL) {
        out = tool_ok(c, "notify", NULL);
        mcp_string_free(out);
        char *ev = NULL;
        err = NULL;
        EXPECT_STATUS(mcp_subscription_next(f.sub, tscale(2000), &ev, &err), MCP_OK, err);
        EXPECT_CONTAINS(ev, "notifications/tools/list_changed");
        mcp_string_free(ev);
        mcp_error_free(err);
        mcp_subscription_free(f.sub);
    }
    mcp_client_free(c);
}

/* A forked child that closes and frees the client it inherited (as a binding's finalizers do in
 * a forked worker): no hang, and no effect on the parent, whose server must survive. */
static void test_fork_child_frees_inherited_client(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct fork_ctx f;
    f.c = c;
    f.sub = NULL;
    /* The damage depends on timing inside the child: try a few children. */
    for (int round = 0; round < 3 && !t_failed(); round++) {
        int status = run_in_child(child_frees_parent_client, &f, tscale(3000));
        char why[96];
        EXPECT_MSG(child_ok(status), "forked child freeing the inherited client: %s",
                   describe_child(status, why, sizeof why));
        char *out = NULL;
        mcp_error *err = NULL;
        mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"parent\"}", NULL, NULL,
                                             NULL, &out, &err);
        EXPECT_MSG(st == MCP_OK,
                   "the parent's client after a forked child's mcp_client_free (child %d): "
                   "status %d (%s)",
                   round + 1, (int)st, err ? mcp_error_message(err) : "");
        mcp_string_free(out);
        mcp_error_free(err);
    }
    mcp_client_free(c);
}

/* A server that closes its stdin early: the next write fails. A host that keeps the default
 * SIGPIPE disposition must get an error status, not be killed. */
static void child_writes_to_closed_pipe(void *arg)
{
    (void)arg;
    signal(SIGPIPE, SIG_DFL);
    mcp_config *cfg = NULL;
    if (mcp_config_new("{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"exec 0<&-; exec sleep 3\"],"
                       "\"probe_timeout_ms\":200,\"request_timeout_ms\":1000,"
                       "\"shutdown_grace_ms\":100}",
                       &cfg, NULL) != MCP_OK)
        child_exit(20);
    mcp_client *c = NULL;
    if (mcp_client_new(cfg, &c, NULL) != MCP_OK)
        child_exit(21);
    mcp_config_free(cfg);
    mcp_status st = mcp_client_connect(c, NULL, NULL, NULL);
    mcp_client_free(c);
    child_exit(st == MCP_OK ? 22 : 0);
}

static void test_sigpipe(void)
{
    int status = run_in_child(child_writes_to_closed_pipe, NULL, tscale(8000));
    char why[96];
    EXPECT_MSG(!(status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE),
               "the host process was killed by SIGPIPE when the server closed its stdin");
    EXPECT_MSG(child_ok(status), "child: %s", describe_child(status, why, sizeof why));
}

/* True while `pid` exists and is not a zombie. */
static bool process_running(pid_t pid)
{
    if (kill(pid, 0) != 0)
        return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    char *stat = slurp(path, NULL);
    if (stat == NULL)
        return false;
    const char *close_paren = strrchr(stat, ')'); /* "pid (comm) S ..." */
    bool running = close_paren == NULL || (close_paren[1] == ' ' && close_paren[2] != 'Z' &&
                                           close_paren[2] != 'X');
    free(stat);
    return running;
}

/* Close shuts down the whole process group, a server that ignores stdin EOF and SIGTERM
 * included, within the configured grace. */
static void test_close_kills_process_group(void)
{
    const char *args[] = {"--ignore-stdin-eof", "--spawn-grandchild", NULL};
    mcp_client *c = json_client("\"shutdown_grace_ms\":150", args);
    CHECK(c != NULL);
    struct collector *col = (struct collector *)malloc(sizeof *col);
    CHECK(col != NULL);
    collector_init(col);
    long pid = connect_for_grandchild(c, col, tscale(3000));
    if (pid > 1)
        EXPECT(kill((pid_t)pid, 0) == 0);
    double t0 = now_ms();
    mcp_client_close(c);
    double took = now_ms() - t0;
    EXPECT_MSG(took < tscale(2000), "close took %.0f ms", took);
    if (pid > 1) {
        /* Dead means gone or a zombie (an init that does not reap leaves zombies behind). */
        double end = now_ms() + tscale(1000);
        while (process_running((pid_t)pid) && now_ms() < end)
            sleep_ms(10);
        EXPECT_MSG(!process_running((pid_t)pid), "grandchild %ld still running after close",
                   pid);
        if (process_running((pid_t)pid))
            kill((pid_t)pid, SIGKILL);
    }
    mcp_client_free(c);
    EXPECT(col->ud.frees == 1);
    collector_destroy(col);
    free(col);
}

#endif

const struct test_case thread_tests[] = {
    {"threads/concurrent_calls_8_threads", test_concurrent_calls},
    {"threads/two_threads_back_to_back_on_one_client", test_two_threads_back_to_back_on_one_client},
    {"threads/calls_after_idle_gaps", test_calls_after_idle_gaps},
    {"threads/concurrent_mrtr_8_threads", test_concurrent_mrtr},
    {"threads/many_clients", test_many_clients},
    {"threads/close_wakes_blocked_callers", test_close_wakes_blocked_callers},
    {"threads/shared_cancel_token", test_shared_cancel_token},
    {"threads/close_during_connect", test_close_during_connect},
    {"threads/reentrant_calls", test_reentrant_calls},
    {"threads/close_from_callback", test_close_from_callback},
    {"threads/free_from_callback", test_free_from_callback},
    {"threads/userdata_free_once", test_userdata_free_once},
    {"threads/userdata_released_when_idle", test_userdata_released_when_idle},
    {"threads/responder_outlives_client", test_responder_outlives_client},
#ifndef _WIN32
    {"threads/no_log_callback_after_free", test_no_log_callback_after_free},
#endif
    {"threads/no_notification_after_free", test_no_notification_after_free},
#ifndef _WIN32
    {"threads/fork", test_fork},
    {"threads/fork_child_frees_inherited_client", test_fork_child_frees_inherited_client},
    {"threads/sigpipe", test_sigpipe},
    {"threads/close_kills_process_group", test_close_kills_process_group},
#endif
};
const size_t thread_tests_count = sizeof thread_tests / sizeof thread_tests[0];
