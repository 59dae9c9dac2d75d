/* Started calls: exactly-once completion under cancel / timeout / close races, free
 * with calls in flight, host-loop delivery (callbacks only on the host's thread, the descriptor
 * readable exactly while work waits), re-entrancy, pushed responder cancellation, and 10,000
 * started calls from one thread.
 *
 * Every completion's userdata is a heap record that the completion frees: a second completion
 * is a use-after-free and a missing one a leak under ASan/LSan, besides the explicit counts. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <dirent.h>
#include <poll.h>
#include <unistd.h>
#endif

/* ---- a tally of completions shared by the calls of one test ------------------------------- */

struct tally {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;                 /* completions so far */
    int ok, cancelled, timeout, closed, other;
    int off_thread;           /* completions not on `thread` (when `check_thread`) */
    bool check_thread;
    pthread_t thread;
    int restart;              /* completions that start one more call (re-entrancy test) */
    mcp_client *client;
    char last[512];           /* the last result or error message */
    mcp_status last_status;
    char input_requests[512]; /* for MCP_INPUT_REQUIRED */
};

static void tally_init(struct tally *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
}

static void tally_destroy(struct tally *t)
{
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
}

/* Waits until `n` completions arrived (thread mode); false after the bound. */
static bool tally_wait(struct tally *t, int n, int timeout_ms)
{
    double end = now_ms() + tscale(timeout_ms);
    pthread_mutex_lock(&t->lock);
    while (t->done < n) {
        double left = end - now_ms();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(left * 1e6);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&t->cond, &t->lock, &ts);
    }
    bool reached = t->done >= n;
    pthread_mutex_unlock(&t->lock);
    return reached;
}

static int tally_done(struct tally *t)
{
    pthread_mutex_lock(&t->lock);
    int n = t->done;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* One started call's userdata: freed by its completion. */
struct rec {
    struct tally *tally;
    int completions;
};

static struct rec *rec_new(struct tally *t)
{
    struct rec *r = (struct rec *)calloc(1, sizeof *r);
    r->tally = t;
    return r;
}

static void on_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                    const mcp_error *error);

static void on_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                    const mcp_error *error)
{
    struct rec *r = (struct rec *)userdata;
    struct tally *t = r->tally;
    r->completions++;
    if (r->completions != 1)
        t_fail(__FILE__, __LINE__, "a call completed %d times", r->completions);
    if (status == MCP_OK && (result_json == NULL || strlen(result_json) != result_len || error))
        t_fail(__FILE__, __LINE__, "MCP_OK without a well-formed result");
    if (status != MCP_OK && (error == NULL || result_json != NULL || mcp_error_status(error) != status))
        t_fail(__FILE__, __LINE__, "failure %d without a matching error", status);
    int restart = 0;
    pthread_mutex_lock(&t->lock);
    switch (status) {
    case MCP_OK: t->ok++; break;
    case MCP_CANCELLED: t->cancelled++; break;
    case MCP_TIMEOUT: t->timeout++; break;
    case MCP_CLOSED: t->closed++; break;
    default: t->other++; break;
    }
    if (t->check_thread && !pthread_equal(pthread_self(), t->thread))
        t->off_thread++;
    t->last_status = status;
    snprintf(t->last, sizeof t->last, "%s", status == MCP_OK ? result_json : mcp_error_message(error));
    if (status == MCP_INPUT_REQUIRED && mcp_error_input_requests_json(error))
        snprintf(t->input_requests, sizeof t->input_requests, "%s", mcp_error_input_requests_json(error));
    if (t->restart > 0) {
        t->restart--;
        restart = 1;
    }
    t->done++;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    if (restart) {
        /* Starting a call from a completion is allowed; a blocking call is not. */
        char *out = NULL;
        mcp_error *err = NULL;
        EXPECT_STATUS(mcp_client_call_tool(t->client, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out,
                                           &err),
                      MCP_REENTRANT_CALL, err);
        mcp_error_free(err);
        err = NULL;
        EXPECT_STATUS(mcp_client_call_tool_start(t->client, "echo", "{\"text\":\"again\"}", NULL, NULL, NULL,
                                                 on_done, rec_new(t), NULL, &err),
                      MCP_OK, err);
        mcp_error_free(err);
    }
    free(r);
}

static mcp_status start_echo(mcp_client *c, struct tally *t, mcp_call **call_out)
{
    mcp_error *err = NULL;
    struct rec *r = rec_new(t);
    mcp_status st =
        mcp_client_call_tool_start(c, "echo", "{\"text\":\"hi\"}", NULL, NULL, NULL, on_done, r, call_out, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_client_call_tool_start", st, MCP_OK, err);
        free(r); /* userdata changes hands only on success */
    }
    mcp_error_free(err);
    return st;
}

static mcp_status start_tool(mcp_client *c, struct tally *t, const char *tool, const char *args,
                             const mcp_call_opts *opts, mcp_call **call_out)
{
    mcp_error *err = NULL;
    struct rec *r = rec_new(t);
    mcp_status st = mcp_client_call_tool_start(c, tool, args, NULL, NULL, opts, on_done, r, call_out, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "mcp_client_call_tool_start", st, MCP_OK, err);
        free(r);
    }
    mcp_error_free(err);
    return st;
}

/* Runs the host loop until `n` completions arrived: a wait on the wake-up, then dispatch. */
static bool host_loop_until(mcp_client *c, int fd, struct tally *t, int n, int timeout_ms)
{
    double end = now_ms() + tscale(timeout_ms);
    while (tally_done(t) < n) {
        int left = (int)(end - now_ms());
        if (left <= 0)
            return false;
        if (wait_wakeup(fd, left) < 0)
            return false;
        mcp_error *err = NULL;
        mcp_status st = mcp_client_dispatch(c, 0, NULL, &err);
        if (st != MCP_OK) {
            t_status(__FILE__, __LINE__, "mcp_client_dispatch", st, MCP_OK, err);
            mcp_error_free(err);
            return false;
        }
    }
    return true;
}

static bool readable(int fd)
{
    return wait_wakeup(fd, 0) == 1;
}

/* ---- thread mode ------------------------------------------------------------------------------ */

static void test_started_call_basics(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    CHECK(mcp_abi_version() == 2 && MCP_ABI_VERSION == 2);
    struct tally t;
    tally_init(&t);
    t.check_thread = true;
    t.thread = pthread_self();
    mcp_call *call = NULL;
    /* Before connecting: the call connects. */
    EXPECT(start_echo(c, &t, &call) == MCP_OK && call != NULL);
    EXPECT(tally_wait(&t, 1, 5000));
    EXPECT(t.ok == 1);
    EXPECT_CONTAINS(t.last, "\"text\":\"hi\"");
    EXPECT(t.off_thread == 1); /* the dispatcher thread, never the caller */
    /* Cancel and free after completion: no-ops. */
    EXPECT(mcp_call_cancel(call) == MCP_OK);
    mcp_call_free(call);
    EXPECT(t.done == 1 && t.cancelled == 0);

    /* Checks fail at once and keep the userdata with the caller (done never runs). */
    mcp_error *err = NULL;
    struct rec *r = rec_new(&t);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "{", NULL, NULL, NULL, on_done, r, NULL, &err),
                  MCP_INVALID_JSON, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", NULL, NULL, NULL, NULL, NULL, r, NULL, &err),
                  MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_call_tool_start(NULL, "echo", NULL, NULL, NULL, NULL, on_done, r, NULL, &err),
                  MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    mcp_call_opts bad;
    CHECK(mcp_call_opts_init(&bad, MCP_CALL_OPTS_VERSION) == MCP_OK);
    bad.version = 99;
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", NULL, NULL, NULL, &bad, on_done, r, NULL, &err),
                  MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_list_start(c, 42, NULL, NULL, on_done, r, NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    free(r);
    EXPECT(mcp_call_cancel(NULL) == MCP_NULL_ARG);
    mcp_call_free(NULL);
    sleep_ms(20);
    EXPECT(tally_done(&t) == 1);

    /* A tool error is MCP_OK; a JSON-RPC error arrives with its accessors. */
    EXPECT(start_tool(c, &t, "fail", NULL, NULL, NULL) == MCP_OK);
    EXPECT(tally_wait(&t, 2, 5000) && t.last_status == MCP_OK);
    EXPECT_CONTAINS(t.last, "\"isError\":true");
    EXPECT(start_tool(c, &t, "rpc_error", NULL, NULL, NULL) == MCP_OK);
    EXPECT(tally_wait(&t, 3, 5000) && t.last_status == MCP_JSONRPC_ERROR);
    /* The arguments are checked and copied as text at the start: the host may overwrite and
       free its buffer at once; line breaks between tokens do not end the stdio message. */
    char *args = (char *)malloc(64);
    CHECK(args != NULL);
    snprintf(args, 64, "%s", "{\n \"text\" :\r\n \"copied\\u0021\"\n}");
    EXPECT(start_tool(c, &t, "echo", args, NULL, NULL) == MCP_OK);
    memset(args, 'x', 63);
    free(args);
    EXPECT(tally_wait(&t, 4, 5000) && t.last_status == MCP_OK);
    EXPECT_CONTAINS(t.last, "\"text\":\"copied!\"");
    err = NULL;
    r = rec_new(&t);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "[1]", NULL, NULL, NULL, on_done, r, NULL, &err),
                  MCP_INVALID_ARG, err);
    mcp_error_free(err);
    free(r);
    mcp_client_free(c);
    tally_destroy(&t);
}

/* Each kind of started call once (and the connect). */
static void test_every_started_operation(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_connect_start(c, NULL, on_done, rec_new(&t), NULL, &err), MCP_OK, err);
    CHECK(tally_wait(&t, 1, 5000));
    EXPECT(t.last_status == MCP_OK);
    EXPECT_CONTAINS(t.last, "\"era\":\"modern\"");
    EXPECT_STATUS(mcp_client_list_start(c, MCP_LIST_TOOLS, NULL, NULL, on_done, rec_new(&t), NULL, &err),
                  MCP_OK, err);
    CHECK(tally_wait(&t, 2, 5000));
    EXPECT_CONTAINS(t.last, "\"name\":\"echo\"");
    EXPECT_STATUS(mcp_client_list_all_start(c, MCP_LIST_PROMPTS, NULL, on_done, rec_new(&t), NULL, &err),
                  MCP_OK, err);
    CHECK(tally_wait(&t, 3, 5000));
    EXPECT_CONTAINS(t.last, "\"prompts\":[");
    EXPECT_STATUS(mcp_client_get_prompt_start(c, "greeting", "{\"name\":\"Ann\"}", NULL, NULL, NULL, on_done,
                                              rec_new(&t), NULL, &err),
                  MCP_OK, err);
    CHECK(tally_wait(&t, 4, 5000));
    EXPECT_CONTAINS(t.last, "Ann");
    EXPECT_STATUS(mcp_client_read_resource_start(c, "fixture://static", NULL, NULL, NULL, on_done, rec_new(&t),
                                                 NULL, &err),
                  MCP_OK, err);
    CHECK(tally_wait(&t, 5, 5000));
    EXPECT_CONTAINS(t.last, "fixture://static");
    EXPECT_STATUS(mcp_client_complete_start(c,
                                            "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greeting\"},"
                                            "\"argument\":{\"name\":\"name\",\"value\":\"al\"}}",
                                            NULL, on_done, rec_new(&t), NULL, &err),
                  MCP_OK, err);
    CHECK(tally_wait(&t, 6, 5000));
    EXPECT_CONTAINS(t.last, "\"values\":[\"alice\",\"albert\"]");
    EXPECT_STATUS(mcp_client_request_start(c, "tools/call", "{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}",
                                           NULL, on_done, rec_new(&t), NULL, &err),
                  MCP_OK, err);
    CHECK(tally_wait(&t, 7, 5000));
    EXPECT_CONTAINS(t.last, "5");
    EXPECT(t.ok == 7);

    /* Subscription next: a timeout, then a notification, then a cancelled one. */
    mcp_subscription *sub = NULL;
    CHECK_STATUS(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_subscription_next_start(sub, 30, on_done, rec_new(&t), NULL, &err), MCP_OK, err);
    CHECK(tally_wait(&t, 8, 5000));
    EXPECT(t.last_status == MCP_TIMEOUT);
    EXPECT_STATUS(mcp_subscription_next_start(sub, -1, on_done, rec_new(&t), NULL, &err), MCP_OK, err);
    char *out = tool_ok(c, "notify", NULL);
    mcp_string_free(out);
    CHECK(tally_wait(&t, 9, 5000));
    EXPECT(t.last_status == MCP_OK);
    EXPECT_CONTAINS(t.last, "notifications/tools/list_changed");
    mcp_call *next = NULL;
    EXPECT_STATUS(mcp_subscription_next_start(sub, -1, on_done, rec_new(&t), &next, &err), MCP_OK, err);
    EXPECT(mcp_call_cancel(next) == MCP_OK);
    CHECK(tally_wait(&t, 10, 5000));
    EXPECT(t.last_status == MCP_CANCELLED);
    mcp_call_free(next);
    /* In flight while the subscription is freed: completes once. */
    EXPECT_STATUS(mcp_subscription_next_start(sub, -1, on_done, rec_new(&t), NULL, &err), MCP_OK, err);
    mcp_subscription_free(sub);
    mcp_client_free(c);
    EXPECT(tally_done(&t) == 11);
    tally_destroy(&t);
}

/* Ping and the log level, started: legacy servers answer; a modern server has no ping; a bad level
   or a NULL argument is refused at once (no completion). */
static void test_ping_and_log_level_started(void)
{
    struct tally t;
    tally_init(&t);
    mcp_error *err = NULL;
    mcp_client *legacy = connected_client("--era", "legacy", (const char *)NULL);
    CHECK(legacy != NULL);
    EXPECT_STATUS(mcp_client_ping_start(legacy, NULL, on_done, rec_new(&t), NULL, &err), MCP_OK, err);
    CHECK(tally_wait(&t, 1, 5000));
    EXPECT(t.last_status == MCP_OK);
    EXPECT(strcmp(t.last, "{}") == 0);
    EXPECT_STATUS(mcp_client_set_log_level_start(legacy, "debug", NULL, on_done, rec_new(&t), NULL, &err), MCP_OK,
                  err);
    CHECK(tally_wait(&t, 2, 5000));
    EXPECT(t.last_status == MCP_OK);
    struct rec *r = rec_new(&t);
    EXPECT_STATUS(mcp_client_set_log_level_start(legacy, "loud", NULL, on_done, r, NULL, &err), MCP_INVALID_ARG,
                  err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_set_log_level_start(legacy, NULL, NULL, on_done, r, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_ping_start(NULL, NULL, on_done, r, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    free(r);
    mcp_client_free(legacy);

    mcp_client *modern = connected_client(NULL);
    CHECK(modern != NULL);
    EXPECT_STATUS(mcp_client_ping_start(modern, NULL, on_done, rec_new(&t), NULL, &err), MCP_OK, err);
    CHECK(tally_wait(&t, 3, 5000));
    EXPECT(t.last_status == MCP_UNSUPPORTED);
    mcp_call *call = NULL;
    EXPECT_STATUS(mcp_client_set_log_level_start(modern, "info", NULL, on_done, rec_new(&t), &call, &err), MCP_OK,
                  err);
    CHECK(tally_wait(&t, 4, 5000));
    EXPECT(t.last_status == MCP_OK);
    mcp_call_free(call);
    mcp_client_free(modern);
    EXPECT(tally_done(&t) == 4);
    tally_destroy(&t);
}

/* Cancel races the answer at many offsets: each call completes once, OK or CANCELLED. */
static void test_cancel_race_exactly_once(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    const int n = 1000;
    for (int i = 0; i < n; i++) {
        mcp_call *call = NULL;
        if (start_echo(c, &t, &call) != MCP_OK)
            break;
        /* spin a varying while: before the send, in flight, around the answer */
        for (volatile int k = 0; k < (i % 50) * 200; k++) {
        }
        if (i % 3 == 0) {
            EXPECT(mcp_call_cancel(call) == MCP_OK);
            mcp_call_free(call);
        } else {
            mcp_call_free(call); /* free implies cancel */
        }
    }
    EXPECT(tally_wait(&t, n, 20000));
    EXPECT_MSG(t.ok + t.cancelled == n, "ok %d cancelled %d other %d", t.ok, t.cancelled, t.other);
    EXPECT(t.cancelled > 0);
    /* The connection survived the cancellations. */
    char *out = tool_ok(c, "echo", "{\"text\":\"after\"}");
    mcp_string_free(out);
    mcp_client_free(c);
    EXPECT(tally_done(&t) == n);
    tally_destroy(&t);
}

/* Timeouts, racing cancels, and a cancel token shared through the options. */
static void test_timeout_and_token(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    mcp_call_opts o;
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK);
    o.timeout_ms = 30;
    const int n = 40;
    for (int i = 0; i < n; i++) {
        mcp_call *call = NULL;
        if (start_tool(c, &t, "hang", NULL, &o, &call) != MCP_OK)
            break;
        if (i % 2)
            sleep_ms(i % 40); /* cancel before, around and after the timeout */
        EXPECT(mcp_call_cancel(call) == MCP_OK);
        mcp_call_free(call);
    }
    EXPECT(tally_wait(&t, n, 10000));
    EXPECT_MSG(t.timeout + t.cancelled == n && t.timeout > 0 && t.cancelled > 0,
               "timeout %d cancelled %d other %d", t.timeout, t.cancelled, t.other);

    /* A token in the options cancels every call using it, each once. */
    mcp_cancel_token *tok = mcp_cancel_token_new();
    CHECK(mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION) == MCP_OK);
    o.cancel = tok;
    for (int i = 0; i < 5; i++)
        EXPECT(start_tool(c, &t, "hang", NULL, &o, NULL) == MCP_OK);
    sleep_ms(20);
    EXPECT(tally_done(&t) == n);
    mcp_cancel_token_cancel(tok);
    EXPECT(tally_wait(&t, n + 5, 5000));
    EXPECT(t.cancelled >= 5);
    mcp_cancel_token_free(tok);
    /* The server was told: the hang ids are in its cancelled list. */
    char *out = tool_ok(c, "cancelled_ids", NULL);
    EXPECT(out && count_occurrences(out, ",") >= 4);
    mcp_string_free(out);
    mcp_client_free(c);
    tally_destroy(&t);
}

/* Close completes every pending call with MCP_CLOSED; later starts fail at once. */
static void test_close_completes_pending(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    const int n = 100;
    for (int i = 0; i < n; i++)
        EXPECT(start_tool(c, &t, i % 2 ? "hang" : "echo", "{\"text\":\"x\"}", NULL, NULL) == MCP_OK);
    mcp_client_close(c);
    EXPECT(tally_wait(&t, n, 5000));
    EXPECT_MSG(t.ok + t.closed == n && t.closed >= n / 2, "ok %d closed %d other %d", t.ok, t.closed, t.other);
    mcp_error *err = NULL;
    struct rec *r = rec_new(&t);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", NULL, NULL, NULL, NULL, on_done, r, NULL, &err),
                  MCP_CLOSED, err);
    mcp_error_free(err);
    free(r);
    mcp_client_free(c);
    EXPECT(tally_done(&t) == n);
    tally_destroy(&t);
}

/* Free with calls in flight: every completion has run when free returns; handles outlive it. */
static void test_free_with_calls_in_flight(void)
{
    for (int round = 0; round < 2; round++) {
        mcp_client *c = connected_client(NULL);
        CHECK(c != NULL);
        struct tally t;
        tally_init(&t);
        const int n = 64;
        mcp_call *calls[64];
        for (int i = 0; i < n; i++) {
            calls[i] = NULL;
            EXPECT(start_tool(c, &t, i % 4 ? "hang" : "echo", "{\"text\":\"x\"}", NULL, &calls[i]) == MCP_OK);
        }
        for (int i = 0; i < n / 2; i++) {
            mcp_call_free(calls[i]); /* before the client, some before completion */
            calls[i] = NULL;
        }
        mcp_client_free(c);
        EXPECT_MSG(tally_done(&t) == n, "%d of %d completed when free returned", tally_done(&t), n);
        for (int i = n / 2; i < n; i++)
            mcp_call_free(calls[i]); /* after the client: still valid */
        sleep_ms(20);
        EXPECT(tally_done(&t) == n);
        tally_destroy(&t);
    }
}

/* Completions may start calls; blocking calls from them are refused. */
static void test_reentrant_completion(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    t.client = c;
    t.restart = 3;
    EXPECT(start_echo(c, &t, NULL) == MCP_OK);
    EXPECT(tally_wait(&t, 4, 5000));
    EXPECT(t.ok == 4);
    mcp_client_free(c);
    tally_destroy(&t);
}

/* MRTR in a started call: answered by the handler, or MCP_INPUT_REQUIRED with its accessors. */
static void elicit_handler(void *userdata, const char *method, const char *params_json, size_t params_len,
                           mcp_responder *responder)
{
    struct tally *t = (struct tally *)userdata;
    (void)method;
    (void)params_json;
    (void)params_len;
    if (t->check_thread && !pthread_equal(pthread_self(), t->thread))
        AINC(&t->off_thread);
    EXPECT(mcp_responder_reply_json(responder, "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}", NULL) == MCP_OK);
}

static void test_mrtr_started(void)
{
    /* Lax: the fixture asks for undeclared input, as before manual_input existed. */
    mcp_client *c = connected_client("--lax-capabilities", (const char *)NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    EXPECT(start_tool(c, &t, "elicit_once", NULL, NULL, NULL) == MCP_OK);
    CHECK(tally_wait(&t, 1, 5000));
    EXPECT(t.last_status == MCP_INPUT_REQUIRED);
    EXPECT_CONTAINS(t.input_requests, "elicitation/create");
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_elicitation(c, elicit_handler, &t, NULL, &err), MCP_OK, err);
    EXPECT(start_tool(c, &t, "elicit_once", NULL, NULL, NULL) == MCP_OK);
    CHECK(tally_wait(&t, 2, 5000));
    EXPECT(t.last_status == MCP_OK);
    EXPECT_CONTAINS(t.last, "Hello, Ada!");
    mcp_client_free(c);
    tally_destroy(&t);
}

/* ---- host-loop mode ------------------------------------------------------------------------------ */

static void test_host_loop_thread_and_descriptor(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    size_t remaining = 99;
    EXPECT_STATUS(mcp_client_dispatch(c, 0, &remaining, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    int fd = -1, fd2 = -2;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    CHECK(fd >= 0);
    EXPECT_STATUS(mcp_client_use_host_loop(c, &fd2, &err), MCP_OK, err);
    EXPECT(fd2 == fd);
    EXPECT(!readable(fd));
    /* Spurious dispatches are harmless. */
    EXPECT_STATUS(mcp_client_dispatch(c, 0, &remaining, &err), MCP_OK, err);
    EXPECT(remaining == 0);

    struct tally t;
    tally_init(&t);
    t.check_thread = true;
    t.thread = pthread_self();
    EXPECT_STATUS(mcp_client_on_elicitation(c, elicit_handler, &t, NULL, &err), MCP_OK, err);
    const int n = 20;
    for (int i = 0; i < n; i++)
        EXPECT(start_tool(c, &t, i % 4 ? "echo" : "elicit_once", "{\"text\":\"x\"}", NULL, NULL) == MCP_OK);
    /* Nothing runs until the host dispatches. */
    EXPECT(wait_wakeup(fd, tscale(5000)) == 1);
    EXPECT(tally_done(&t) == 0);
    /* Take them one at a time: readable while any is left. (Not the converse: an answer can
     * arrive between the dispatch that emptied the queue and the look; the idle check below is
     * made once nothing is in flight.) */
    double end = now_ms() + tscale(5000);
    while (tally_done(&t) < n && now_ms() < end) {
        EXPECT(readable(fd));
        remaining = 0;
        EXPECT_STATUS(mcp_client_dispatch(c, 1, &remaining, &err), MCP_OK, err);
        if (remaining > 0)
            EXPECT(readable(fd));
        if (remaining == 0 && tally_done(&t) < n)
            wait_wakeup(fd, tscale(1000));
    }
    EXPECT(tally_done(&t) == n);
    EXPECT(t.ok == n);
    EXPECT(t.off_thread == 0); /* completions and handlers ran only on this thread */
    EXPECT(!readable(fd));
    mcp_client_free(c);
    tally_destroy(&t);
}

/* A completion that dispatches is refused; one that closes the client is allowed. */
struct loop_reentry {
    mcp_client *client;
    mcp_status dispatch_status;
    int completions;
};

static void reenter_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                         const mcp_error *error)
{
    struct loop_reentry *r = (struct loop_reentry *)userdata;
    (void)status;
    (void)result_json;
    (void)result_len;
    (void)error;
    r->dispatch_status = mcp_client_dispatch(r->client, 0, NULL, NULL);
    r->completions++;
    mcp_client_close(r->client);
}

static void test_host_loop_reentry_and_close(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    int fd = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    struct loop_reentry r;
    memset(&r, 0, sizeof r);
    r.client = c;
    struct tally t;
    tally_init(&t);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "{\"text\":\"a\"}", NULL, NULL, NULL, reenter_done, &r,
                                             NULL, &err),
                  MCP_OK, err);
    for (int i = 0; i < 10; i++)
        EXPECT(start_tool(c, &t, "hang", NULL, NULL, NULL) == MCP_OK);
    double end = now_ms() + tscale(5000);
    while (r.completions == 0 && now_ms() < end) {
        wait_wakeup(fd, 100);
        EXPECT_STATUS(mcp_client_dispatch(c, 1, NULL, &err), MCP_OK, err);
    }
    EXPECT(r.completions == 1);
    EXPECT(r.dispatch_status == MCP_REENTRANT_CALL);
    /* The close from the completion completed the hanging calls: queued, delivered here. */
    EXPECT(host_loop_until(c, fd, &t, 10, 5000));
    EXPECT(t.closed == 10);
    mcp_client_free(c);
    tally_destroy(&t);
}

/* A completion that frees its own client (host mode): the rest complete inline, once each. */
struct free_in_done {
    mcp_client *client;
    struct tally *tally;
    bool start_first; /* start a call from the completion, then free */
};

static void free_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                      const mcp_error *error)
{
    struct free_in_done *f = (struct free_in_done *)userdata;
    (void)status;
    (void)result_json;
    (void)result_len;
    (void)error;
    if (f->start_first)
        EXPECT(start_echo(f->client, f->tally, NULL) == MCP_OK);
    mcp_client_free(f->client);
    f->client = NULL;
}

static void free_from_completion(bool start_first)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    int fd = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    struct tally t;
    tally_init(&t);
    struct free_in_done f;
    f.client = c;
    f.tally = &t;
    f.start_first = start_first;
    for (int i = 0; i < 10; i++)
        EXPECT(start_tool(c, &t, "hang", NULL, NULL, NULL) == MCP_OK);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "{\"text\":\"a\"}", NULL, NULL, NULL, free_done, &f,
                                             NULL, &err),
                  MCP_OK, err);
    double end = now_ms() + tscale(5000);
    while (f.client != NULL && now_ms() < end) {
        wait_wakeup(fd, 100);
        EXPECT_STATUS(mcp_client_dispatch(c, 0, NULL, &err), MCP_OK, err);
    }
    CHECK(f.client == NULL);
    /* The hanging calls completed inside that free, on this thread, once each; so did a call
       started in the same dispatch batch (held until the batch ends, so never sent). */
    int n = start_first ? 11 : 10;
    EXPECT_MSG(tally_done(&t) == n, "%d of %d completed", tally_done(&t), n);
    EXPECT(t.closed == n);
    tally_destroy(&t);
}

static void test_host_loop_free_from_completion(void) { free_from_completion(false); }

/* A completion starts a call, then frees the client: the started call completes once (closed),
   and its held-back future is dropped with nothing leaked (ASan/LSan). */
static void test_host_loop_start_then_free_from_completion(void) { free_from_completion(true); }

/* Free in host mode delivers the leftovers inline, on the calling thread. */
static void test_host_loop_free_delivers_inline(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    int fd = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    struct tally t;
    tally_init(&t);
    t.check_thread = true;
    t.thread = pthread_self();
    for (int i = 0; i < 50; i++)
        EXPECT(start_tool(c, &t, i % 2 ? "hang" : "echo", "{\"text\":\"x\"}", NULL, NULL) == MCP_OK);
    mcp_client_free(c);
    EXPECT(tally_done(&t) == 50);
    EXPECT(t.off_thread == 0);
    EXPECT(t.closed >= 25);
    tally_destroy(&t);
}

/* Pushed cancellation: a deferred responder hears that its answer is no longer wanted. */
struct deferred {
    mcp_responder *responder;
    int cancel_calls;
    int ud_frees;
    pthread_t cancel_thread;
};

static void on_responder_cancel(void *userdata)
{
    struct deferred *d = (struct deferred *)userdata;
    d->cancel_thread = pthread_self();
    d->cancel_calls++;
    /* Answering now is refused, and consumes the responder. */
    EXPECT(mcp_responder_reply_json(d->responder, "{\"action\":\"decline\"}", NULL) == MCP_CANCELLED);
    d->responder = NULL;
}

static void count_free(void *userdata) { ((struct deferred *)userdata)->ud_frees++; }

static void defer_handler(void *userdata, const char *method, const char *params_json, size_t params_len,
                          mcp_responder *responder)
{
    struct deferred *d = (struct deferred *)userdata;
    (void)method;
    (void)params_json;
    (void)params_len;
    d->responder = responder;
    mcp_responder_defer(responder);
    EXPECT(mcp_responder_on_cancel(responder, on_responder_cancel, d, count_free, NULL) == MCP_OK);
}

static void test_responder_cancel_pushed(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    int fd = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    struct deferred d;
    memset(&d, 0, sizeof d);
    EXPECT_STATUS(mcp_client_on_elicitation(c, defer_handler, &d, NULL, &err), MCP_OK, err);
    struct tally t;
    tally_init(&t);
    mcp_call *call = NULL;
    EXPECT(start_tool(c, &t, "elicit_once", NULL, NULL, &call) == MCP_OK);
    double end = now_ms() + tscale(5000);
    while (d.responder == NULL && now_ms() < end) {
        wait_wakeup(fd, 100);
        EXPECT(mcp_client_dispatch(c, 0, NULL, NULL) == MCP_OK);
    }
    CHECK(d.responder != NULL);
    EXPECT(d.cancel_calls == 0);
    EXPECT(mcp_call_cancel(call) == MCP_OK);
    mcp_call_free(call);
    EXPECT(host_loop_until(c, fd, &t, 1, 5000));
    EXPECT(t.cancelled == 1);
    end = now_ms() + tscale(5000);
    while (d.cancel_calls == 0 && now_ms() < end) {
        wait_wakeup(fd, 100);
        EXPECT(mcp_client_dispatch(c, 0, NULL, NULL) == MCP_OK);
    }
    EXPECT(d.cancel_calls == 1);
    EXPECT(pthread_equal(d.cancel_thread, pthread_self()));
    EXPECT(d.ud_frees == 1);
    EXPECT(d.responder == NULL);
    /* A responder answered normally never hears of cancellation; its userdata is still freed. */
    mcp_client_free(c);
    EXPECT(d.cancel_calls == 1 && d.ud_frees == 1);
    tally_destroy(&t);
}

/* The wakeup callback (for hosts that cannot watch a descriptor): runs off the host's thread when
 * work is queued onto an empty queue; the host then dispatches until nothing remains. */
struct wake {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int wakeups;
    int frees;
};

static void on_wakeup(void *userdata)
{
    struct wake *w = (struct wake *)userdata;
    pthread_mutex_lock(&w->lock);
    w->wakeups++;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void wake_free(void *userdata) { ((struct wake *)userdata)->frees++; }

static void test_host_loop_wakeup(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct wake w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_wakeup(c, on_wakeup, &w, wake_free, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT(w.frees == 1); /* userdata_free runs even when the call fails */
    int fd = -1;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    CHECK_STATUS(mcp_client_set_wakeup(c, on_wakeup, &w, wake_free, &err), MCP_OK, err);
    struct tally t;
    tally_init(&t);
    t.check_thread = true;
    t.thread = pthread_self();
    const int n = 10;
    for (int i = 0; i < n; i++)
        EXPECT(start_echo(c, &t, NULL) == MCP_OK);
    double end = now_ms() + tscale(5000);
    while (tally_done(&t) < n && now_ms() < end) {
        pthread_mutex_lock(&w.lock);
        while (w.wakeups == 0)
            pthread_cond_wait(&w.cond, &w.lock);
        w.wakeups = 0;
        pthread_mutex_unlock(&w.lock);
        size_t remaining = 1;
        while (remaining > 0)
            EXPECT_STATUS(mcp_client_dispatch(c, 0, &remaining, &err), MCP_OK, err);
    }
    EXPECT(t.ok == n && t.off_thread == 0);
    mcp_client_free(c);
    EXPECT(w.frees == 2);
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    tally_destroy(&t);
}

/* ---- scale ----------------------------------------------------------------------------------- */


/* 10,000 started calls from one thread (host loop); the thread count stays flat throughout.
 * Under Wine, where a pipe's round trip is many times slower, 1,000 (all are in flight at once,
 * each within the 5 s request timeout). */
static void test_ten_thousand_started_calls(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    int fd = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    struct tally t;
    tally_init(&t);
#ifdef _WIN32
    const int n = 1000;
#else
    const int n = 10000;
#endif
    int before = thread_count();
    for (int i = 0; i < n; i++)
        if (start_echo(c, &t, NULL) != MCP_OK)
            break;
    int during = thread_count();
    EXPECT(host_loop_until(c, fd, &t, n, 60000));
    EXPECT_MSG(t.ok == n, "ok %d of %d (other %d: %s)", t.ok, n, t.other, t.last);
    EXPECT_MSG(during <= before, "threads: %d before, %d with %d calls in flight", before, during, n);

    /* 1,000 calls hanging at once: still no new thread. */
    for (int i = 0; i < 1000; i++)
        if (start_tool(c, &t, "hang", NULL, NULL, NULL) != MCP_OK)
            break;
    sleep_ms(50);
    EXPECT_MSG(thread_count() <= before, "threads: %d before, %d with 1000 hanging", before, thread_count());
    mcp_client_free(c);
    EXPECT(tally_done(&t) == n + 1000);
    tally_destroy(&t);
}

/* Task status events seen by the client's listener (dispatcher thread). */
struct task_events {
    pthread_mutex_t lock;
    int count;
    char statuses[256];
};

static void on_task_status(void *userdata, const char *task_json, size_t task_len)
{
    struct task_events *e = (struct task_events *)userdata;
    (void)task_len;
    const char *at = strstr(task_json, "\"status\":\"");
    pthread_mutex_lock(&e->lock);
    e->count++;
    if (at != NULL) {
        at += strlen("\"status\":\"");
        size_t n = strcspn(at, "\"");
        size_t used = strlen(e->statuses);
        snprintf(e->statuses + used, sizeof e->statuses - used, "%.*s,", (int)n, at);
    }
    pthread_mutex_unlock(&e->lock);
}

/* The tasks extension through a started call: the completion carries the task's final result
 * and the client's status listener saw the task through (working ... completed). */
static void test_task_followed_by_started_call(void)
{
    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_set_tasks(cfg, true, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    struct task_events ev;
    memset(&ev, 0, sizeof ev);
    pthread_mutex_init(&ev.lock, NULL);
    EXPECT_STATUS(mcp_client_on_task_status(c, on_task_status, &ev, NULL, &err), MCP_OK, err);
    struct tally t;
    tally_init(&t);
    EXPECT(start_tool(c, &t, "task_echo", "{\"text\":\"started\"}", NULL, NULL) == MCP_OK);
    EXPECT(tally_wait(&t, 1, 10000));
    EXPECT_MSG(t.last_status == MCP_OK, "status %d: %s", (int)t.last_status, t.last);
    EXPECT_CONTAINS(t.last, "task: started");
    mcp_client_free(c); /* the listener's callbacks have all run once free returns */
    EXPECT_MSG(ev.count >= 2, "%d task events", ev.count);
    EXPECT_CONTAINS(ev.statuses, "working,");
    EXPECT_CONTAINS(ev.statuses, "completed,");
    mcp_error_free(err);
    pthread_mutex_destroy(&ev.lock);
    tally_destroy(&t);
}

/* ---- the started forms of tasks, skills, listen and the legacy subscription requests ---------- */

/* One started call's completion, its result or message copied whole (t.last keeps 512 bytes). */
struct one {
    int done;
    mcp_status status;
    char *text; /* the result JSON on MCP_OK, else the error message */
};

static void one_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                     const mcp_error *error)
{
    struct one *o = (struct one *)userdata;
    (void)result_len;
    free(o->text);
    o->text = strdup(status == MCP_OK ? result_json : mcp_error_message(error));
    o->status = status;
    __atomic_add_fetch(&o->done, 1, __ATOMIC_SEQ_CST);
}

/* Waits for the completion of the call `o` was started with; its status (-1 without one). */
static mcp_status one_wait(struct one *o)
{
    if (!wait_count(&o->done, 1, tscale(10000)))
        return (mcp_status)-1;
    if (o->done != 1)
        t_fail(__FILE__, __LINE__, "%d completions", o->done);
    o->done = 0;
    return o->status;
}

/* A task's id from a status listener, the latest event with `status` kept. */
struct task_ids {
    pthread_mutex_t lock;
    char input_required[64];
    char any[64];
};

static void on_task_id(void *userdata, const char *task_json, size_t task_len)
{
    struct task_ids *ids = (struct task_ids *)userdata;
    (void)task_len;
    pthread_mutex_lock(&ids->lock);
    json_string(task_json, "taskId", ids->any, sizeof ids->any);
    if (strstr(task_json, "\"status\":\"input_required\""))
        json_string(task_json, "taskId", ids->input_required, sizeof ids->input_required);
    pthread_mutex_unlock(&ids->lock);
}

static bool task_id_wait(struct task_ids *ids, char *field, char *out, size_t n)
{
    double end = now_ms() + tscale(5000);
    for (;;) {
        pthread_mutex_lock(&ids->lock);
        bool got = field[0] != '\0';
        if (got)
            snprintf(out, n, "%s", field);
        field[0] = '\0';
        pthread_mutex_unlock(&ids->lock);
        if (got)
            return true;
        if (now_ms() > end)
            return false;
        sleep_ms(2);
    }
}

/* tasks/update, resume, get and cancel as started calls: an input the host answers by hand (manual
 * input), then a slow task cancelled; checks at the start leave `done` unrun. */
static void test_task_calls_started(void)
{
    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_set_tasks(cfg, true, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_manual_input(cfg, MCP_ELICITATION_FORM, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    struct task_ids ids;
    memset(&ids, 0, sizeof ids);
    pthread_mutex_init(&ids.lock, NULL);
    EXPECT_STATUS(mcp_client_on_task_status(c, on_task_id, &ids, NULL, &err), MCP_OK, err);
    struct one o;
    memset(&o, 0, sizeof o);
    char id[64] = "";

    EXPECT_STATUS(mcp_client_call_tool_start(c, "task_input", NULL, NULL, NULL, NULL, one_done, &o, NULL, &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_INPUT_REQUIRED);
    CHECK(task_id_wait(&ids, ids.input_required, id, sizeof id));
    EXPECT_STATUS(mcp_client_update_task_start(c, id, "{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirmed\":true}}}",
                                               NULL, one_done, &o, NULL, &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT(o.text && strcmp(o.text, "{}") == 0);
    sleep_ms(60); /* the fixture flags polls closer than its pollIntervalMs */
    EXPECT_STATUS(mcp_client_resume_task_start(c, id, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT_MSG(one_wait(&o) == MCP_OK, "resume: %s", o.text ? o.text : "(none)");
    EXPECT_CONTAINS(o.text, "confirmed:");
    EXPECT_STATUS(mcp_client_get_task_start(c, id, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "\"status\":\"completed\"");

    /* A slow task: the call gives up (total cap), then get, cancel, and a resume that sees it
       cancelled; a started resume cancelled by the host completes with MCP_CANCELLED. */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.max_total_ms = 20;
    EXPECT_STATUS(mcp_client_call_tool_start(c, "task_slow", NULL, NULL, NULL, &opts, one_done, &o, NULL, &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_TIMEOUT);
    CHECK(task_id_wait(&ids, ids.any, id, sizeof id));
    mcp_call *call = NULL;
    EXPECT_STATUS(mcp_client_resume_task_start(c, id, NULL, one_done, &o, &call, &err), MCP_OK, err);
    EXPECT(mcp_call_cancel(call) == MCP_OK);
    EXPECT(one_wait(&o) == MCP_CANCELLED);
    mcp_call_free(call);
    EXPECT_STATUS(mcp_client_get_task_start(c, id, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "\"status\":\"");
    EXPECT_STATUS(mcp_client_cancel_task_start(c, id, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_STATUS(mcp_client_get_task_start(c, id, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "\"status\":\"cancelled\"");
    EXPECT_STATUS(mcp_client_resume_task_start(c, id, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_CANCELLED);
    EXPECT_STATUS(mcp_client_cancel_task_start(c, "task-none", NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_JSONRPC_ERROR);

    /* Checked at the start: no completion. */
    EXPECT_STATUS(mcp_client_resume_task_start(c, NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_get_task_start(c, NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_cancel_task_start(c, "t", NULL, NULL, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_update_task_start(c, "t", "[1]", NULL, one_done, &o, NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_update_task_start(c, "t", NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    sleep_ms(20);
    EXPECT(o.done == 0);
    mcp_client_free(c);
    pthread_mutex_destroy(&ids.lock);
    free(o.text);
}

/* MCP Apps: a tool's UI link (pure), the verified read of a view blocking and started, and the
 * checks a view fails (MIME type, size bound, a URI that is not ui://, refused before sending). */
static void test_apps_calls(void)
{
    char *ui = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_tool_ui("{\"name\":\"t\",\"_meta\":{\"ui\":{\"resourceUri\":\"ui://a\","
                              "\"visibility\":[\"app\"]}}}", &ui, &err), MCP_OK, err);
    EXPECT_MSG(ui && strcmp(ui, "{\"resourceUri\":\"ui://a\",\"visibility\":[\"app\"],\"model\":false,"
                                "\"app\":true}") == 0, "%s", ui ? ui : "(null)");
    mcp_string_free(ui);
    EXPECT_STATUS(mcp_tool_ui("{\"name\":\"plain\"}", &ui, &err), MCP_OK, err);
    EXPECT(ui && strcmp(ui, "null") == 0);
    mcp_string_free(ui);
    EXPECT_STATUS(mcp_tool_ui("{", &ui, &err), MCP_INVALID_JSON, err);
    mcp_error_free(err);
    err = NULL;

    mcp_config *cfg = fixture_config("--apps", (const char *)NULL);
    CHECK(cfg != NULL);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    char *out = NULL;
    EXPECT_STATUS(mcp_client_read_app(c, "ui://fixture/weather", 0, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "weather app</body>");
    EXPECT_CONTAINS(out, "\"prefersBorder\":true");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_read_app(c, "ui://fixture/plain-html", 0, NULL, &out, &err), MCP_PROTOCOL_VIOLATION,
                  err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_read_app(c, "ui://fixture/big", 1000, NULL, &out, &err), MCP_MESSAGE_TOO_LARGE, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_read_app(c, "https://x.example/", 0, NULL, &out, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT(out == NULL);
    struct one o;
    memset(&o, 0, sizeof o);
    char uri[] = "ui://fixture/blob";
    EXPECT_STATUS(mcp_client_read_app_start(c, uri, 0, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    memset(uri, 'x', sizeof uri - 1); /* copied at the start */
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "weather app</body>");
    EXPECT_STATUS(mcp_client_read_app_start(c, "ui://fixture/other-uri", 0, NULL, one_done, &o, NULL, &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_PROTOCOL_VIOLATION);
    free(o.text);
    mcp_client_free(c);
}

/* The skills calls started: list, get, a verified read; a NULL entry is refused at the start. */
static void test_skill_calls_started(void)
{
    mcp_config *cfg = fixture_config("--skills", "genuine", (const char *)NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_set_skills(cfg, true, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    struct one o;
    memset(&o, 0, sizeof o);
    EXPECT_STATUS(mcp_client_list_skills_start(c, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "skill://fixture/hello-world/SKILL.md");
    EXPECT_CONTAINS(o.text, "\"rejected\":[]");
    EXPECT_STATUS(mcp_client_get_skill_start(c, "skill://fixture/hello-world/SKILL.md", NULL, one_done, &o, NULL,
                                             &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "\"name\":\"hello-world\"");
    char *entry = o.text ? strdup(o.text) : NULL;
    CHECK(entry != NULL);
    EXPECT_STATUS(mcp_client_read_skill_file_start(c, entry, NULL, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    memset(entry, 'x', strlen(entry)); /* copied at the start */
    free(entry);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "Say hello");
    EXPECT_STATUS(mcp_client_get_skill_start(c, "skill://nope/SKILL.md", NULL, one_done, &o, NULL, &err), MCP_OK,
                  err);
    EXPECT(one_wait(&o) == MCP_JSONRPC_ERROR);
    EXPECT_STATUS(mcp_client_read_skill_file_start(c, NULL, NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_get_skill_start(c, NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    sleep_ms(20);
    EXPECT(o.done == 0);
    mcp_client_free(c);

    /* A server without the extension: the completion says so. */
    c = fixture_client(NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_list_skills_start(c, NULL, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_UNSUPPORTED);
    mcp_client_free(c);
    free(o.text);
}

/* A started listen: the subscription handle comes at once and reads once acknowledged; freed
 * before the acknowledgement it gives the listen up (one completion still); a bad filter is
 * refused at the start; a legacy server completes with MCP_UNSUPPORTED. The legacy subscription
 * requests and the roots notification, started. */
static void test_listen_and_legacy_requests_started(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct one o, next;
    memset(&o, 0, sizeof o);
    memset(&next, 0, sizeof next);
    mcp_error *err = NULL;
    mcp_subscription *sub = NULL;
    mcp_call *call = NULL;
    EXPECT_STATUS(mcp_client_listen_start(c, "{\"toolsListChanged\":true}", NULL, one_done, &o, &sub, &call, &err),
                  MCP_OK, err);
    CHECK(sub != NULL && call != NULL);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_CONTAINS(o.text, "toolsListChanged");
    mcp_call_free(call);
    char *ack = NULL;
    EXPECT_STATUS(mcp_subscription_acknowledged(sub, &ack, &err), MCP_OK, err);
    EXPECT_CONTAINS(ack, "toolsListChanged");
    mcp_string_free(ack);
    EXPECT_STATUS(mcp_subscription_next_start(sub, -1, one_done, &next, NULL, &err), MCP_OK, err);
    char *out = tool_ok(c, "notify", NULL);
    mcp_string_free(out);
    EXPECT(one_wait(&next) == MCP_OK);
    EXPECT_CONTAINS(next.text, "notifications/tools/list_changed");
    mcp_subscription_free(sub);

    /* Freed before anything was read, then the call: the completion runs once. */
    sub = NULL;
    EXPECT_STATUS(mcp_client_listen_start(c, "{\"toolsListChanged\":true}", NULL, one_done, &o, &sub, NULL, &err),
                  MCP_OK, err);
    mcp_subscription_free(sub);
    mcp_status st = one_wait(&o);
    EXPECT_MSG(st == MCP_OK || st == MCP_CANCELLED, "listen given up: %d", (int)st);

    /* Refused at the start: outputs untouched, no completion. */
    sub = (mcp_subscription *)&o;
    EXPECT_STATUS(mcp_client_listen_start(c, "[1]", NULL, one_done, &o, &sub, NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT(sub == (mcp_subscription *)&o);
    EXPECT_STATUS(mcp_client_listen_start(c, "{}", NULL, one_done, &o, NULL, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_listen_start(c, NULL, NULL, one_done, &o, &sub, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    sleep_ms(20);
    EXPECT(o.done == 0);
    /* Modern servers: the legacy requests are unsupported, the roots notification a no-op. */
    EXPECT_STATUS(mcp_client_subscribe_resource_start(c, "fixture://static", NULL, one_done, &o, NULL, &err), MCP_OK,
                  err);
    EXPECT(one_wait(&o) == MCP_UNSUPPORTED);
    EXPECT_STATUS(mcp_client_notify_roots_changed_start(c, one_done, &o, NULL, &err), MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    mcp_client_free(c);

    mcp_client *legacy = connected_client("--era", "legacy", (const char *)NULL);
    CHECK(legacy != NULL);
    sub = NULL;
    EXPECT_STATUS(mcp_client_listen_start(legacy, "{\"toolsListChanged\":true}", NULL, one_done, &o, &sub, NULL,
                                          &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_UNSUPPORTED);
    /* Nothing to read after a failed listen. */
    EXPECT_STATUS(mcp_subscription_next_start(sub, 0, one_done, &next, NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    mcp_subscription_free(sub);
    EXPECT_STATUS(mcp_client_subscribe_resource_start(legacy, "fixture://static", NULL, one_done, &o, NULL, &err),
                  MCP_OK, err);
    EXPECT_MSG(one_wait(&o) == MCP_OK, "subscribe: %s", o.text ? o.text : "(none)");
    EXPECT(o.text && strcmp(o.text, "{}") == 0);
    EXPECT_STATUS(mcp_client_unsubscribe_resource_start(legacy, "fixture://static", NULL, one_done, &o, NULL, &err),
                  MCP_OK, err);
    EXPECT(one_wait(&o) == MCP_OK);
    EXPECT_STATUS(mcp_client_subscribe_resource_start(legacy, NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_unsubscribe_resource_start(legacy, NULL, NULL, one_done, &o, NULL, &err), MCP_NULL_ARG,
                  err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_notify_roots_changed_start(NULL, one_done, &o, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    mcp_client_free(legacy);
    free(o.text);
    free(next.text);
}

#ifdef __linux__
/* Threads of this process named `name` (their /proc/self/task/N/comm). */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* exited meanwhile */
        if (fgets(comm, sizeof comm, f) && strncmp(comm, name, strlen(name)) == 0 && comm[strlen(name)] == '\n')
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* Whether the process has `n` threads named `name` within `timeout_ms` (a joined thread may
 * still be listed for a moment). */
static bool threads_named_reach(const char *name, int n, int timeout_ms)
{
    double end = now_ms() + tscale(timeout_ms);
    while (threads_named(name) != n) {
        if (now_ms() > end)
            return false;
        sleep_ms(1);
    }
    return true;
}

/* A client's runtime thread starts when something needs it, not with the client: no thread for
 * a client made, closed and freed without a call; a started call as a fresh client's first act
 * is answered (the thread drives for it); after a blocking connect to a stdio server it runs (the
 * server's output is read between calls), and free stops it. (A new thread names itself once it
 * runs: counts of named threads are awaited.) */
static void test_runtime_thread_on_demand(void)
{
    const char *name = "mcp-runtime";
    int named = threads_named(name), all = thread_count();
    CHECK(named >= 0 && all > 0);
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    EXPECT_MSG(thread_count() == all, "%d threads after new, %d before", thread_count(), all);
    mcp_client_close(c);
    EXPECT_MSG(thread_count() == all, "%d threads after close, %d before", thread_count(), all);
    mcp_client_free(c);

    c = fixture_client(NULL);
    CHECK(c != NULL);
    struct tally t;
    tally_init(&t);
    EXPECT(start_echo(c, &t, NULL) == MCP_OK);
    EXPECT(tally_wait(&t, 1, 5000));
    EXPECT_MSG(t.ok == 1, "started call: %s", t.last);
    EXPECT_MSG(threads_named_reach(name, named + 1, 2000), "%d runtime threads with a started call, %d before",
               threads_named(name), named);
    mcp_client_free(c);
    tally_destroy(&t);
    EXPECT(threads_named_reach(name, named, 2000));

    c = connected_client(NULL);
    CHECK(c != NULL);
    EXPECT_MSG(threads_named_reach(name, named + 1, 2000), "%d runtime threads after connect, %d before",
               threads_named(name), named);
    char *out = tool_ok(c, "echo", "{\"text\":\"after\"}");
    EXPECT_CONTAINS(out, "after");
    mcp_string_free(out);
    mcp_client_free(c);
    EXPECT(threads_named_reach(name, named, 2000));
}

/* Over HTTP to a modern server (JSON replies) nothing runs between calls: the connect and the
 * calls start no runtime thread, and a call after an idle gap is answered all the same (the
 * caller drives; its pooled connection is looked at in its socket). */
static void test_http_client_runs_without_runtime_thread(void)
{
    const char *name = "mcp-runtime";
    int named = threads_named(name);
    struct http_fixture h;
    CHECK(http_fixture_start(&h, "dual", false));
    mcp_client *c = http_fixture_client(&h, NULL, NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    char *out = tool_ok(c, "echo", "{\"text\":\"first\"}");
    EXPECT_CONTAINS(out, "first");
    mcp_string_free(out);
    sleep_ms(30);
    out = tool_ok(c, "echo", "{\"text\":\"after a gap\"}");
    EXPECT_CONTAINS(out, "after a gap");
    mcp_string_free(out);
    EXPECT_MSG(threads_named(name) == named, "%d runtime threads, %d before", threads_named(name), named);
    mcp_client_free(c);
    http_fixture_stop(&h);
}
#endif

const struct test_case async_tests[] = {
    {"async/started_call_basics", test_started_call_basics},
    {"async/every_started_operation", test_every_started_operation},
    {"async/ping_and_log_level_started", test_ping_and_log_level_started},
    {"async/cancel_race_exactly_once", test_cancel_race_exactly_once},
    {"async/timeout_and_token", test_timeout_and_token},
    {"async/close_completes_pending", test_close_completes_pending},
    {"async/free_with_calls_in_flight", test_free_with_calls_in_flight},
    {"async/reentrant_completion", test_reentrant_completion},
    {"async/mrtr_started", test_mrtr_started},
    {"async/host_loop_thread_and_descriptor", test_host_loop_thread_and_descriptor},
    {"async/host_loop_reentry_and_close", test_host_loop_reentry_and_close},
    {"async/host_loop_free_delivers_inline", test_host_loop_free_delivers_inline},
    {"async/host_loop_free_from_completion", test_host_loop_free_from_completion},
    {"async/host_loop_start_then_free_from_completion", test_host_loop_start_then_free_from_completion},
    {"async/responder_cancel_pushed", test_responder_cancel_pushed},
    {"async/host_loop_wakeup", test_host_loop_wakeup},
    {"async/ten_thousand_started_calls", test_ten_thousand_started_calls},
    {"async/task_followed_by_started_call", test_task_followed_by_started_call},
    {"async/task_calls_started", test_task_calls_started},
    {"async/skill_calls_started", test_skill_calls_started},
    {"async/apps_calls", test_apps_calls},
    {"async/listen_and_legacy_requests_started", test_listen_and_legacy_requests_started},
#ifdef __linux__
    {"async/runtime_thread_on_demand", test_runtime_thread_on_demand},
    {"async/http_client_runs_without_runtime_thread", test_http_client_runs_without_runtime_thread},
#endif
};
const size_t async_tests_count = sizeof async_tests / sizeof async_tests[0];
