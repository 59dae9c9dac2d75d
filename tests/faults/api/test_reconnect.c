/* Reconnecting: the opt-in policy re-establishes a lost stdio connection,
 * retries only idempotent requests, and tells the host each state change. */
#define _GNU_SOURCE
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The states, one letter each (C connected, D disconnected, R<n> reconnecting, F failed). */
struct states {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    char seq[256];
    char last_detail[512];
};

static void on_state(void *userdata, int32_t state, uint32_t attempt, const char *detail)
{
    struct states *s = (struct states *)userdata;
    pthread_mutex_lock(&s->lock);
    size_t len = strlen(s->seq);
    if (len + 4 < sizeof s->seq) {
        switch (state) {
        case MCP_CONNECTION_CONNECTED: strcat(s->seq, "C "); break;
        case MCP_CONNECTION_DISCONNECTED: strcat(s->seq, "D "); break;
        case MCP_CONNECTION_RECONNECTING:
            snprintf(s->seq + len, sizeof s->seq - len, "R%u ", attempt);
            break;
        case MCP_CONNECTION_FAILED: strcat(s->seq, "F "); break;
        default: strcat(s->seq, "? "); break;
        }
    }
    snprintf(s->last_detail, sizeof s->last_detail, "%s", detail ? detail : "(null)");
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

static void states_init(struct states *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
}

/* Waits (bounded) until the sequence is exactly `want`; true on success. */
static bool states_wait(struct states *s, const char *want, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->lock);
    while (strcmp(s->seq, want) != 0) {
        if (pthread_cond_timedwait(&s->changed, &s->lock, &until) != 0)
            break;
    }
    bool ok = strcmp(s->seq, want) == 0;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

static mcp_client *with_states(mcp_client *c, struct states *s)
{
    mcp_error *err = NULL;
    if (c && mcp_client_on_connection_state(c, on_state, s, NULL, &err) != MCP_OK) {
        t_fail(__FILE__, __LINE__, "on_connection_state: %s", mcp_error_message(err));
        mcp_error_free(err);
    }
    return c;
}

static mcp_status list_tools(mcp_client *c, mcp_error **err)
{
    char *res = NULL;
    mcp_status st = mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &res, err);
    if (st == MCP_OK && !strstr(res, "\"echo\""))
        st = MCP_INTERNAL;
    mcp_string_free(res);
    return st;
}

#define POLICY "\"reconnect\":{\"max_attempts\":3,\"initial_backoff_ms\":50,\"max_backoff_ms\":200}"

/* A tools/call whose server crashed is not retried (it may have run) and says so; the next
 * list reconnects and succeeds. */
static void a_crashed_server_is_reconnected_for_the_next_call(void)
{
    struct states s;
    states_init(&s);
    mcp_client *c = with_states(client_json("{\"command\":\"%s\"," POLICY "}", fixture()), &s);
    CHECK(c);
    mcp_error *err = NULL;
    mcp_status st = list_tools(c, &err);
    CHECK_STATUS(st, MCP_OK, err);
    char *res = NULL;
    st = mcp_client_call_tool(c, "crash", NULL, NULL, NULL, NULL, &res, &err);
    mcp_status again = MCP_INTERNAL;
    mcp_error *err2 = NULL;
    if (st == MCP_SERVER_EXITED)
        again = list_tools(c, &err2);
    bool seq = states_wait(&s, "C D R1 C ", 5000);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_SERVER_EXITED, err);
    CHECK_CONTAINS(mcp_error_message(err), "tools/call was not retried");
    CHECK_CONTAINS(mcp_error_message(err), "status 7");
    mcp_error_free(err);
    CHECK_STATUS(again, MCP_OK, err2);
    CHECK_MSG(seq, "state sequence \"%s\", want \"C D R1 C \"", s.seq);
}

/* The server killed from outside between calls: the next list succeeds on a new server. */
static void a_killed_server_is_replaced_transparently_for_a_list(void)
{
    char pidfile[128];
    snprintf(pidfile, sizeof pidfile, "/tmp/mcp-faults-api-%d-killed", (int)getpid());
    struct states s;
    states_init(&s);
    mcp_client *c = with_states(
        client_json("{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"echo $$ > %s; exec \\\"$0\\\"\",\"%s\"]," POLICY "}",
                    pidfile, fixture()),
        &s);
    CHECK(c);
    mcp_error *err = NULL;
    mcp_status st = list_tools(c, &err);
    CHECK_STATUS(st, MCP_OK, err);
    FILE *f = fopen(pidfile, "r");
    int pid = 0;
    bool read_pid = f && fscanf(f, "%d", &pid) == 1;
    if (f)
        fclose(f);
    if (read_pid)
        kill(pid, SIGKILL);
    /* Whether the loss is noticed before this list or by it, the list succeeds. */
    st = list_tools(c, &err);
    char *res = NULL;
    mcp_status call = mcp_client_call_tool(c, "echo", "{\"text\":\"after\"}", NULL, NULL, NULL, &res, NULL);
    mcp_string_free(res);
    bool seq = states_wait(&s, "C D R1 C ", 5000);
    mcp_client_free(c);
    unlink(pidfile);
    CHECK(read_pid);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK(call == MCP_OK);
    CHECK_MSG(seq, "state sequence \"%s\", want \"C D R1 C \"", s.seq);
}

/* A server that cannot be started again: every attempt fails, the host hears FAILED, and the
 * call's error says the client gave up (the next call would start over). */
static void a_server_that_stays_down_fails_after_the_attempts(void)
{
    char marker[128];
    snprintf(marker, sizeof marker, "/tmp/mcp-faults-api-%d-once", (int)getpid());
    unlink(marker);
    struct states s;
    states_init(&s);
    mcp_client *c = with_states(
        client_json("{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"if [ -e %s ]; then echo gone for good >&2; exit 1; fi; "
                    ": > %s; exec \\\"$0\\\"\",\"%s\"],"
                    "\"reconnect\":{\"max_attempts\":2,\"initial_backoff_ms\":20}}",
                    marker, marker, fixture()),
        &s);
    CHECK(c);
    mcp_error *err = NULL;
    char *res = NULL;
    mcp_status st = mcp_client_call_tool(c, "crash", NULL, NULL, NULL, NULL, &res, &err);
    mcp_error_free(err);
    err = NULL;
    double t0 = now_ms();
    mcp_status again = st == MCP_SERVER_EXITED ? list_tools(c, &err) : MCP_INTERNAL;
    double took = now_ms() - t0;
    bool seq = states_wait(&s, "C D R1 R2 F ", 5000);
    mcp_client_free(c);
    unlink(marker);
    CHECK_STATUS(st, MCP_SERVER_EXITED, NULL);
    CHECK_MSG(again == MCP_SERVER_EXITED, "list after the crash: %d (%s)", again, err ? mcp_error_message(err) : "");
    CHECK_CONTAINS(mcp_error_message(err), "gave up reconnecting after 2 attempts");
    CHECK_CONTAINS(mcp_error_message(err), "gone for good");
    mcp_error_free(err);
    CHECK_MSG(took < 5000, "giving up took %.0f ms", took);
    CHECK_MSG(seq, "state sequence \"%s\", want \"C D R1 R2 F \"", s.seq);
}

/* Without a policy nothing changes: a lost connection stays lost, and only CONNECTED is told. */
static void without_a_policy_a_lost_connection_stays_lost(void)
{
    struct states s;
    states_init(&s);
    mcp_client *c = with_states(client_json("{\"command\":\"%s\"}", fixture()), &s);
    CHECK(c);
    mcp_error *err = NULL;
    char *res = NULL;
    mcp_status st = mcp_client_call_tool(c, "crash", NULL, NULL, NULL, NULL, &res, &err);
    mcp_error_free(err);
    err = NULL;
    mcp_status again = list_tools(c, &err);
    bool seq = states_wait(&s, "C ", 2000);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_SERVER_EXITED, NULL);
    CHECK_STATUS(again, MCP_SERVER_EXITED, err);
    mcp_error_free(err);
    CHECK_MSG(seq, "state sequence \"%s\", want \"C \"", s.seq);
}

/* An HTTP server restarted on its port (each era): with the policy the next list succeeds. */
static void an_http_server_restart_is_survived(void)
{
    static const char *const eras[] = {"modern", "legacy"};
    for (int i = 0; i < 2; i++) {
        const char *const args[] = {"--era", eras[i], NULL};
        char url[256], again_url[256];
        int in = -1, in2 = -1;
        int pid = start_http_fixture(url, sizeof url, &in, args);
        CHECK(pid > 0);
        struct states s;
        states_init(&s);
        mcp_client *c = with_states(client_json("{\"url\":\"%s\"," POLICY "}", url), &s);
        mcp_error *err = NULL;
        mcp_status first = c ? list_tools(c, &err) : MCP_INTERNAL;
        stop_http_fixture(pid, in);
        /* The same port again: "http://127.0.0.1:<port>/mcp". */
        char addr[64] = {0};
        const char *host = url + strlen("http://");
        size_t len = (size_t)(strchr(host, '/') - host);
        memcpy(addr, host, len < sizeof addr ? len : sizeof addr - 1);
        int pid2 = start_http_fixture_at(addr, again_url, sizeof again_url, &in2, args);
        mcp_status second = c && pid2 > 0 ? list_tools(c, &err) : MCP_INTERNAL;
        mcp_client_free(c);
        stop_http_fixture(pid2, in2);
        if (first != MCP_OK || second != MCP_OK) {
            t_fail(__FILE__, __LINE__, "%s: first list %d, after the restart %d (%s)", eras[i], first, second,
                   err ? mcp_error_message(err) : "");
            mcp_error_free(err);
            return;
        }
        mcp_error_free(err);
    }
}

const struct test_case reconnect_tests[] = {
    {"reconnect/an_http_server_restart_is_survived", an_http_server_restart_is_survived},
    {"reconnect/a_crashed_server_is_reconnected_for_the_next_call", a_crashed_server_is_reconnected_for_the_next_call},
    {"reconnect/a_killed_server_is_replaced_transparently_for_a_list",
     a_killed_server_is_replaced_transparently_for_a_list},
    {"reconnect/a_server_that_stays_down_fails_after_the_attempts", a_server_that_stays_down_fails_after_the_attempts},
    {"reconnect/without_a_policy_a_lost_connection_stays_lost", without_a_policy_a_lost_connection_stays_lost},
};
const size_t reconnect_tests_count = sizeof reconnect_tests / sizeof reconnect_tests[0];
