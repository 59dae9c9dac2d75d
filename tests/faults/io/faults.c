/*
 * The I/O fault suite: the C ABI against hostile servers (hostile.c). Each case runs in its own
 * forked process, so a hang is caught (the case is killed at CASE_LIMIT_S and reported), memory
 * is measured per case (peak RSS, bounded by RSS_LIMIT_MB), and a crash fails only its case.
 * After each case the server's process must be gone.
 *
 *   faults HOSTILE_PATH [case-name-filter...]
 *
 * Prints `ok - name (seconds, peak RSS)` or `not ok - name: reason`, then `N passed, M failed`.
 */
#define _GNU_SOURCE
#include "mcp_client.h"
#include "http_hostile.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Every case ends well within this, or it is killed and fails as hung. */
#define CASE_LIMIT_S 120
/* The bound on each case's peak RSS (the whole test process: library, runtime, buffers). */
#define RSS_LIMIT_MB 160

static const char *hostile;
static char pidfile[256];
static int failed_case;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("    ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failed_case = 1;
}

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fail("%s:%d: %s", __FILE__, __LINE__, #cond);                                      \
            fail(__VA_ARGS__);                                                                 \
            return;                                                                            \
        }                                                                                      \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *msg(const mcp_error *err) {
    return err ? mcp_error_message(err) : "(no error object)";
}

/* A client for `hostile MODE N` in `era` ("modern" or "legacy"). */
static mcp_client *client_for(const char *mode, long n, const char *era) {
    char json[1024];
    snprintf(pidfile, sizeof pidfile, "/tmp/mcp-faults-io-%ld.pid", (long)getpid());
    unlink(pidfile);
    snprintf(json, sizeof json,
             "{\"command\":\"%s\",\"args\":[\"%s\",\"%ld\"],\"mode\":\"%s\","
             "\"env\":{\"HOSTILE_PIDFILE\":\"%s\"},\"shutdown_grace_ms\":500}",
             hostile, mode, n, era, pidfile);
    mcp_config *cfg = NULL;
    mcp_client *client = NULL;
    mcp_error *err = NULL;
    if (mcp_config_new(json, &cfg, &err) != MCP_OK || mcp_client_new(cfg, &client, &err) != MCP_OK) {
        fail("cannot create the client: %s", msg(err));
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    mcp_config_free(cfg);
    char *info = NULL;
    mcp_status st = mcp_client_connect(client, NULL, &info, &err);
    mcp_string_free(info);
    if (st != MCP_OK) {
        fail("connect failed: %s", msg(err));
        mcp_error_free(err);
        mcp_client_free(client);
        return NULL;
    }
    return client;
}

/* Frees the client and checks the server it started is gone. */
static void finish(mcp_client *client) {
    mcp_client_free(client);
    FILE *f = fopen(pidfile, "r");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    unlink(pidfile);
    if (pid > 0 && kill((pid_t)pid, 0) == 0)
        fail("the server (pid %ld) is still running after mcp_client_free", pid);
}

/* One call_tool; returns the status, the result in *out (freed by the caller). */
static mcp_status call(mcp_client *c, const char *args, const mcp_call_opts *o, char **out, mcp_error **err) {
    *out = NULL;
    *err = NULL;
    return mcp_client_call_tool(c, "t", args, NULL, NULL, o, out, err);
}

/* {"blob":"xxx..."} of about `size` bytes. */
static char *blob_args(size_t size) {
    char *s = malloc(size + 32);
    strcpy(s, "{\"blob\":\"");
    size_t at = strlen(s);
    memset(s + at, 'x', size);
    strcpy(s + at + size, "\"}");
    return s;
}

/* ---- 1. a server that stops reading its stdin ----------------------------------------------- */

struct later {
    double after_s;
    mcp_cancel_token *token;
    mcp_client *client;
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    int done; /* the call returned: nothing left to do */
};

/* Cancels `token` or closes `client` after `after_s`, unless the call returned first. */
static void *act_later(void *arg) {
    struct later *l = (struct later *)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double at = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + l->after_s;
    until.tv_sec = (time_t)at;
    until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&l->lock);
    while (!l->done && pthread_cond_timedwait(&l->done_cond, &l->lock, &until) == 0) {
    }
    int act = !l->done;
    pthread_mutex_unlock(&l->lock);
    if (act && l->token)
        mcp_cancel_token_cancel(l->token);
    if (act && l->client)
        mcp_client_close(l->client);
    return NULL;
}

/* A 1 MB call to a server that reads nothing, under `timeout`, `total` and a cancel at
 * `cancel_s` (or a close at `close_s`): the first bound to fire ends it with `want`. */
static void blocked_write(int64_t timeout_ms, int64_t total_ms, double cancel_s, double close_s, mcp_status want,
                          double within_s) {
    mcp_client *c = client_for("stop-reading", 0, "modern");
    if (!c)
        return;
    mcp_cancel_token *token = mcp_cancel_token_new();
    struct later l = {cancel_s > 0 ? cancel_s : close_s, cancel_s > 0 ? token : NULL, close_s > 0 ? c : NULL,
                      PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t th;
    pthread_create(&th, NULL, act_later, &l);
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
    o.timeout_ms = timeout_ms;
    o.max_total_ms = total_ms;
    o.cancel = token;
    char *args = blob_args(1 << 20), *out;
    mcp_error *err;
    double t0 = now_s();
    mcp_status st = call(c, args, &o, &out, &err);
    double took = now_s() - t0;
    pthread_mutex_lock(&l.lock);
    l.done = 1;
    pthread_cond_signal(&l.done_cond);
    pthread_mutex_unlock(&l.lock);
    pthread_join(th, NULL);
    if (st != want || took > within_s)
        fail("status %d (%s) after %.2f s; wanted %d within %.1f s", st, msg(err), took, want, within_s);
    mcp_string_free(out);
    mcp_error_free(err);
    free(args);
    mcp_cancel_token_free(token);
    finish(c);
}

static void stop_reading_timeout(void) {
    blocked_write(2000, 3000, 5, 0, MCP_TIMEOUT, 2.8);
}
static void stop_reading_total_cap(void) {
    blocked_write(-1, 3000, 5, 0, MCP_TIMEOUT, 3.8);
}
static void stop_reading_cancel(void) {
    blocked_write(-1, 0, 1, 0, MCP_CANCELLED, 1.8);
}
static void stop_reading_close(void) {
    blocked_write(-1, 0, 0, 1, MCP_CLOSED, 1.8);
}

static void stop_reading_small_calls(void) {
    mcp_client *c = client_for("stop-reading", 0, "modern");
    if (!c)
        return;
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
    o.timeout_ms = 50;
    char *args = blob_args(2048), *out;
    mcp_error *err;
    for (int i = 0; i < 200 && !failed_case; i++) {
        double t0 = now_s();
        mcp_status st = call(c, args, &o, &out, &err);
        double took = now_s() - t0;
        if (st != MCP_TIMEOUT || took > 1.0)
            fail("call %d: status %d (%s) after %.2f s", i, st, msg(err), took);
        mcp_string_free(out);
        mcp_error_free(err);
    }
    free(args);
    finish(c);
}

/* What waits for the pipe is bounded: past 16 MiB, sends fail at once with MCP_IO. */
static void stop_reading_queue_bounded(void) {
    mcp_client *c = client_for("stop-reading", 0, "modern");
    if (!c)
        return;
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
    o.timeout_ms = 10;
    char *args = blob_args(1 << 20), *out;
    mcp_error *err;
    int refused = 0;
    for (int i = 0; i < 40; i++) {
        mcp_status st = call(c, args, &o, &out, &err);
        if (st == MCP_IO && strstr(msg(err), "not reading its stdin"))
            refused++;
        else if (st != MCP_TIMEOUT)
            fail("call %d: status %d (%s)", i, st, msg(err));
        mcp_string_free(out);
        mcp_error_free(err);
    }
    free(args);
    if (refused < 20)
        fail("only %d of 40 calls were refused once 16 MiB waited", refused);
    finish(c);
}

/* ---- 2. floods -------------------------------------------------------------------------------- */

static void flood_call(const char *mode, long n) {
    mcp_client *c = client_for(mode, n, "modern");
    if (!c)
        return;
    char *out;
    mcp_error *err;
    mcp_status st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK || !strstr(out, "after the flood"))
        fail("status %d (%s), result %s", st, msg(err), out ? out : "-");
    mcp_string_free(out);
    mcp_error_free(err);
    finish(c);
}

/* Flood sizes: 300k by default (40 MB of JSON; buffered as decoded values that was over 300 MB,
 * twice the RSS bound), FAULTS_FLOOD=1000000 for the size of the original report. */
static long flood_size(void) {
    const char *n = getenv("FAULTS_FLOOD");
    return n && atol(n) > 0 ? atol(n) : 300000;
}

static void flood_progress_unknown_tokens(void) {
    flood_call("flood-progress", flood_size());
}
static void flood_message_no_listener(void) {
    flood_call("flood-message", flood_size());
}

/* stderr lines skip the session's queue (no order with stdout to keep): without a listener they
 * only feed the bounded stderr tail. */
static void flood_stderr_no_listener(void) {
    flood_call("flood-stderr", flood_size());
}

/* A listener slower than the flood (200 µs a callback): at most 4096 callbacks wait for the
 * dispatcher, the rest are dropped and counted, and the call's answer still comes. */
static void slow_listener(void *ud, const char *method, const char *params, size_t len) {
    (void)ud, (void)method, (void)params, (void)len;
    usleep(200);
}

static void slow_log_listener(void *ud, const char *level, const char *source, const char *message) {
    (void)ud, (void)level, (void)source, (void)message;
    usleep(200);
}

static mcp_status listen_notifications(mcp_client *c, mcp_error **err) {
    return mcp_client_set_notification_handler(c, slow_listener, NULL, NULL, err);
}

static mcp_status listen_logs(mcp_client *c, mcp_error **err) {
    return mcp_client_set_log_handler(c, slow_log_listener, NULL, NULL, err);
}

static void flood_slow_listener(const char *mode, mcp_status (*install)(mcp_client *, mcp_error **)) {
    mcp_client *c = client_for(mode, 200000, "modern");
    if (!c)
        return;
    mcp_error *err = NULL;
    CHECK(install(c, &err) == MCP_OK, "listener");
    char *out;
    mcp_status st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK || !strstr(out, "after the flood"))
        fail("status %d (%s), result %s", st, msg(err), out ? out : "-");
    uint64_t dropped = mcp_client_dropped_callbacks(c);
    if (dropped == 0 || dropped >= 200000)
        fail("%" PRIu64 " of 200000 listener callbacks were dropped; expected some but not all", dropped);
    mcp_string_free(out);
    mcp_error_free(err);
    finish(c);
}

static void flood_message_slow_listener(void) {
    flood_slow_listener("flood-message", listen_notifications);
}

static void flood_stderr_slow_listener(void) {
    flood_slow_listener("flood-stderr", listen_logs);
}

static void flood_listen_unread(void) {
    mcp_client *c = client_for("flood-listen", flood_size(), "modern");
    if (!c)
        return;
    mcp_subscription *sub = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &err);
    CHECK(st == MCP_OK, "listen: %d %s", st, msg(err));
    /* The host reads nothing while the flood arrives; a call still goes through it. */
    char *out;
    st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK)
        fail("a call behind the flood: %d (%s)", st, msg(err));
    mcp_string_free(out);
    mcp_error_free(err);
    /* Then the queued events, and the subscription's end, which says why. */
    long events = 0;
    char *ev = NULL;
    for (;;) {
        err = NULL;
        st = mcp_subscription_next(sub, 5000, &ev, &err);
        if (st != MCP_OK)
            break;
        mcp_string_free(ev);
        events++;
    }
    if (st == MCP_TIMEOUT || !strstr(msg(err), "events were waiting") || events > 1024)
        fail("after %ld events: status %d (%s)", events, st, msg(err));
    mcp_error_free(err);
    mcp_subscription_free(sub);
    finish(c);
}

static void legacy_ping_flood(void) {
    mcp_client *c = client_for("ping-flood", 3000, "legacy");
    if (!c)
        return;
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
    o.timeout_ms = 1000;
    /* The server reads nothing more: our pings time out while its 300 MB of requests arrive
     * and their answers pile up against its unread stdin (bounded). */
    for (int i = 0; i < 6; i++) {
        mcp_error *err = NULL;
        mcp_status st = mcp_client_ping(c, &o, &err);
        if (st != MCP_TIMEOUT && st != MCP_IO)
            fail("ping %d: %d (%s)", i, st, msg(err));
        mcp_error_free(err);
    }
    finish(c);
}

/* ---- 3. requests from a modern server --------------------------------------------------------- */

static int handler_runs;

static void count_handler(void *ud, const char *method, const char *params, size_t len, mcp_responder *r) {
    (void)ud, (void)method, (void)params, (void)len;
    __atomic_add_fetch(&handler_runs, 1, __ATOMIC_SEQ_CST);
    mcp_status st = mcp_responder_reply_json(r, "{\"action\":\"decline\"}", NULL);
    (void)st; /* the server counts what reached it */
}

static void modern_server_requests_refused(void) {
    mcp_client *c = client_for("elicit-flood", 1000, "modern");
    if (!c)
        return;
    mcp_error *err = NULL;
    CHECK(mcp_client_on_elicitation(c, count_handler, NULL, NULL, &err) == MCP_OK, "handler");
    char *out;
    mcp_status st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK || !strstr(out, "refused=1000"))
        fail("status %d (%s), result %s", st, msg(err), out ? out : "-");
    if (handler_runs != 0)
        fail("the elicitation handler ran %d times", handler_runs);
    mcp_string_free(out);
    mcp_error_free(err);
    finish(c);
}

/* ---- 6. nesting ------------------------------------------------------------------------------- */

static void deep_notification(void) {
    mcp_client *c = client_for("deep", 130, "modern");
    if (!c)
        return;
    for (int i = 0; i < 3; i++) {
        char *out;
        mcp_error *err;
        mcp_status st = call(c, "{}", NULL, &out, &err);
        if (st != MCP_OK)
            fail("call %d after a notification nested 130 deep: %d (%s)", i, st, msg(err));
        mcp_string_free(out);
        mcp_error_free(err);
    }
    finish(c);
}

static void deep_result(void) {
    mcp_client *c = client_for("deep", 0, "modern");
    if (!c)
        return;
    char *out;
    mcp_error *err;
    mcp_status st = call(c, "{\"depth\":10000}", NULL, &out, &err);
    if (st != MCP_PROTOCOL_VIOLATION || !strstr(msg(err), "nested"))
        fail("a result 10000 deep: %d (%s)", st, msg(err));
    mcp_string_free(out);
    mcp_error_free(err);
    /* 127 levels in the message (126 in the result) is the deepest that is accepted, and what is
     * accepted the library reads again. */
    st = call(c, "{\"depth\":126}", NULL, &out, &err);
    if (st != MCP_OK) {
        fail("a result 126 deep: %d (%s)", st, msg(err));
    } else {
        char *value = NULL;
        mcp_error *perr = NULL;
        if (mcp_json_pointer(out, "", &value, &perr) != MCP_OK)
            fail("mcp_json_pointer refuses what the call returned: %s", msg(perr));
        mcp_string_free(value);
        mcp_error_free(perr);
    }
    mcp_string_free(out);
    mcp_error_free(err);
    st = call(c, "{\"depth\":127}", NULL, &out, &err);
    if (st != MCP_PROTOCOL_VIOLATION)
        fail("a result 127 deep (128 with its envelope): %d (%s)", st, msg(err));
    mcp_string_free(out);
    mcp_error_free(err);
    st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK)
        fail("the connection after deep results: %d (%s)", st, msg(err));
    mcp_string_free(out);
    mcp_error_free(err);
    finish(c);
}

/* ---- 7. batches ------------------------------------------------------------------------------- */

/* A server answering with a batch [answer, ping]: the first call gets its answer, the second
 * call's result says whether the ping in the batch was answered. Shared by stdio and HTTP. */
static void expect_batch_handled(mcp_client *c, int64_t timeout_ms) {
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
    o.timeout_ms = timeout_ms;
    char *out;
    mcp_error *err;
    mcp_status st = call(c, "{}", &o, &out, &err);
    if (st != MCP_OK || !strstr(out, "first"))
        fail("the answer in a batch: %d (%s) %s", st, msg(err), out ? out : "-");
    mcp_string_free(out);
    mcp_error_free(err);
    st = call(c, "{}", &o, &out, &err);
    if (st != MCP_OK || !strstr(out, "ping answered"))
        fail("the ping in the batch was not answered: %d (%s) %s", st, msg(err), out ? out : "-");
    mcp_string_free(out);
    mcp_error_free(err);
}

static void legacy_batch(void) {
    mcp_client *c = client_for("batch", 0, "legacy");
    if (!c)
        return;
    expect_batch_handled(c, 5000);
    finish(c);
}

/* ---- over HTTP ------------------------------------------------------------------------------- */

static mcp_client *http_client(const char *mode, long n, const char *era) {
    int port = http_hostile_start(mode, n);
    if (port < 0) {
        fail("cannot start the HTTP server");
        return NULL;
    }
    char json[256];
    snprintf(json, sizeof json, "{\"url\":\"http://127.0.0.1:%d/mcp\",\"mode\":\"%s\"}", port, era);
    mcp_config *cfg = NULL;
    mcp_client *client = NULL;
    mcp_error *err = NULL;
    if (mcp_config_new(json, &cfg, &err) != MCP_OK || mcp_client_new(cfg, &client, &err) != MCP_OK) {
        fail("cannot create the client: %s", msg(err));
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    mcp_config_free(cfg);
    return client;
}

static void http_flood_sse(void) {
    mcp_client *c = http_client("flood-sse", 300000, "modern");
    if (!c)
        return;
    char *out;
    mcp_error *err;
    mcp_status st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK || !strstr(out, "after the flood"))
        fail("status %d (%s), result %s", st, msg(err), out ? out : "-");
    mcp_string_free(out);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void http_legacy_batch(void) {
    mcp_client *c = http_client("batch", 0, "legacy");
    if (!c)
        return;
    expect_batch_handled(c, 10000);
    mcp_client_free(c);
}

/* A legacy HTTP server that answers neither the call nor its cancellation notice: the call's
 * timeout still holds (the notice is awaited at most 0.5 s). */
static void http_cancel_notice_unanswered(void) {
    mcp_client *c = http_client("hang", 0, "legacy");
    if (!c)
        return;
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
    o.timeout_ms = 1000;
    char *out;
    mcp_error *err;
    double t0 = now_s();
    mcp_status st = call(c, "{}", &o, &out, &err);
    double took = now_s() - t0;
    if (st != MCP_TIMEOUT || took > 3.0)
        fail("status %d (%s) after %.2f s; wanted MCP_TIMEOUT within 3 s (connect included)", st, msg(err), took);
    mcp_string_free(out);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* ---- 8. deaths and configuration -------------------------------------------------------------- */

static void death_mid_line(void) {
    mcp_client *c = client_for("die-midline", 0, "modern");
    if (!c)
        return;
    char *out;
    mcp_error *err;
    mcp_status st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_SERVER_EXITED || !strstr(msg(err), "status 3") || !strstr(msg(err), "disk is on fire") ||
        !strstr(msg(err), "middle of a message"))
        fail("status %d (%s)", st, msg(err));
    mcp_string_free(out);
    mcp_error_free(err);
    finish(c);
}

static mcp_status new_client(const char *json, mcp_error **err) {
    mcp_config *cfg = NULL;
    mcp_client *client = NULL;
    mcp_status st = mcp_config_new(json, &cfg, err);
    if (st == MCP_OK)
        st = mcp_client_new(cfg, &client, err);
    mcp_config_free(cfg);
    mcp_client_free(client);
    return st;
}

static void config_refusals(void) {
    static const char *bad[] = {
        "{\"command\":\"x\",\"env\":{\"A=B\":\"1\"}}",
        "{\"command\":\"x\",\"env\":{\"\":\"1\"}}",
        "{\"command\":\"x\",\"request_timeout_ms\":2199023255552}",
        "{\"command\":\"x\",\"probe_timeout_ms\":18446744073709551615}",
        "{\"command\":\"x\",\"shutdown_grace_ms\":18000000000000000000}",
        "{\"command\":\"x\",\"stderr_tail_lines\":1000000000000}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mcp_error *err = NULL;
        mcp_status st = new_client(bad[i], &err);
        if (st != MCP_INVALID_ARG)
            fail("%s: %d (%s)", bad[i], st, msg(err));
        mcp_error_free(err);
    }
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    CHECK(mcp_config_new("{\"command\":\"x\"}", &cfg, NULL) == MCP_OK, "config");
    if (mcp_config_set_request_timeout_ms(cfg, (uint64_t)MCP_MAX_TIMEOUT_MS + 1, &err) != MCP_INVALID_ARG)
        fail("the setter took a timeout past MCP_MAX_TIMEOUT_MS");
    mcp_error_free(err);
    err = NULL;
    if (mcp_config_set_request_timeout_ms(cfg, (uint64_t)MCP_MAX_TIMEOUT_MS, &err) != MCP_OK)
        fail("the setter refused MCP_MAX_TIMEOUT_MS: %s", msg(err));
    mcp_error_free(err);
    err = NULL;
    if (mcp_config_set_env(cfg, "A=B", "1", &err) != MCP_INVALID_ARG)
        fail("the setter took an env name with '='");
    mcp_error_free(err);
    mcp_config_free(cfg);

    /* Call options: refused before anything is sent, the connection unharmed. */
    mcp_client *c = client_for("plain", 0, "modern");
    if (!c)
        return;
    int64_t too_long[] = {MCP_MAX_TIMEOUT_MS + 1, INT64_MAX};
    for (int i = 0; i < 2; i++) {
        for (int field = 0; field < 2; field++) {
            mcp_call_opts o;
            CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK, "mcp_call_opts_init");
            if (field == 0)
                o.timeout_ms = too_long[i];
            else
                o.max_total_ms = too_long[i];
            char *out;
            mcp_status st = call(c, "{}", &o, &out, &err);
            if (st != MCP_INVALID_ARG)
                fail("%s = %" PRId64 ": %d (%s)", field ? "max_total_ms" : "timeout_ms", too_long[i], st, msg(err));
            mcp_string_free(out);
            mcp_error_free(err);
        }
    }
    char *out;
    mcp_status st = call(c, "{}", NULL, &out, &err);
    if (st != MCP_OK)
        fail("a call after the refusals: %d (%s)", st, msg(err));
    mcp_string_free(out);
    mcp_error_free(err);
    finish(c);
}

/* ---- runner ----------------------------------------------------------------------------------- */

struct fault_case {
    const char *name;
    void (*fn)(void);
};

static const struct fault_case cases[] = {
    {"stop-reading/timeout", stop_reading_timeout},
    {"stop-reading/total-cap", stop_reading_total_cap},
    {"stop-reading/cancel", stop_reading_cancel},
    {"stop-reading/close", stop_reading_close},
    {"stop-reading/200-small-calls", stop_reading_small_calls},
    {"stop-reading/queue-bounded", stop_reading_queue_bounded},
    {"flood/progress-unknown-tokens", flood_progress_unknown_tokens},
    {"flood/message-no-listener", flood_message_no_listener},
    {"flood/message-slow-listener", flood_message_slow_listener},
    {"flood/stderr-no-listener", flood_stderr_no_listener},
    {"flood/stderr-slow-listener", flood_stderr_slow_listener},
    {"flood/listen-unread", flood_listen_unread},
    {"flood/legacy-pings-unread", legacy_ping_flood},
    {"modern/server-requests-refused", modern_server_requests_refused},
    {"nesting/deep-notification", deep_notification},
    {"nesting/deep-result", deep_result},
    {"batch/legacy-answer-and-ping", legacy_batch},
    {"http/flood-sse", http_flood_sse},
    {"http/legacy-batch", http_legacy_batch},
    {"http/cancel-notice-unanswered", http_cancel_notice_unanswered},
    {"death/mid-line", death_mid_line},
    {"config/refusals", config_refusals},
};

static int selected(const char *name, int argc, char **argv) {
    if (argc <= 2)
        return 1;
    for (int i = 2; i < argc; i++)
        if (strstr(name, argv[i]))
            return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: faults HOSTILE_PATH [case-filter...]\n");
        return 2;
    }
    hostile = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (!selected(cases[i].name, argc, argv))
            continue;
        double t0 = now_s();
        pid_t pid = fork();
        if (pid == 0) {
            cases[i].fn();
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            long peak_mb = ru.ru_maxrss / 1024;
            if (peak_mb > RSS_LIMIT_MB)
                fail("peak RSS %ld MB is over the %d MB bound", peak_mb, RSS_LIMIT_MB);
            printf("    (peak RSS %ld MB)\n", peak_mb);
            _exit(failed_case ? 1 : 0);
        }
        int status = 0;
        int hung = 1;
        while (now_s() - t0 < CASE_LIMIT_S) {
            pid_t got = waitpid(pid, &status, WNOHANG);
            if (got == pid) {
                hung = 0;
                break;
            }
            usleep(10000);
        }
        if (hung) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            /* Leave nothing running: the hung case's server, with its process group. */
            char path[256];
            snprintf(path, sizeof path, "/tmp/mcp-faults-io-%ld.pid", (long)pid);
            FILE *f = fopen(path, "r");
            long server = 0;
            if (f) {
                if (fscanf(f, "%ld", &server) == 1 && server > 0)
                    killpg((pid_t)server, SIGKILL);
                fclose(f);
                unlink(path);
            }
        }
        double took = now_s() - t0;
        if (!hung && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            printf("ok - %s (%.1f s)\n", cases[i].name, took);
            passed++;
        } else {
            printf("not ok - %s: %s (%.1f s)\n", cases[i].name,
                   hung ? "hung, killed" : WIFSIGNALED(status) ? "crashed" : "failed", took);
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
