/* Connecting: a slow modern server, a silent server, and the
 * errors a newcomer meets at connect, each saying what happened and what to do. */
#define _GNU_SOURCE
#include "harness.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Connects; returns the status and leaves the error (if any) in *err. */
static mcp_status try_connect(mcp_client *c, mcp_error **err)
{
    char *info = NULL;
    mcp_status st = mcp_client_connect(c, NULL, &info, err);
    mcp_string_free(info);
    return st;
}

/* Silence on the probe is not evidence of a legacy server: a modern-only server that starts
 * after the probe timeout is still found (its late discover answer wins). */
static void a_modern_server_slower_than_the_probe_connects(void)
{
    mcp_client *c = client_json("{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"sleep 1; exec \\\"$0\\\" --era modern\",\"%s\"],"
                                "\"probe_timeout_ms\":200}",
                                fixture());
    CHECK(c);
    mcp_error *err = NULL;
    mcp_status st = try_connect(c, &err);
    int era = mcp_client_era(c);
    char *res = NULL;
    mcp_status call = st == MCP_OK ? mcp_client_call_tool(c, "echo", "{\"text\":\"late\"}", NULL, NULL, NULL, &res, &err)
                                   : st;
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK(era == MCP_ERA_MODERN);
    CHECK_STATUS(call, MCP_OK, err);
    CHECK_CONTAINS(res, "late");
    mcp_string_free(res);
}

/* The converse still holds: a legacy server that never answers server/discover is reached by
 * initialize once the probe timeout passes. */
static void a_legacy_server_ignoring_the_probe_connects(void)
{
    mcp_client *c = client_json("{\"command\":\"%s\",\"args\":[\"--era\",\"legacy\",\"--on-discover\",\"silent\"],"
                                "\"probe_timeout_ms\":200}",
                                fixture());
    CHECK(c);
    mcp_error *err = NULL;
    double t0 = now_ms();
    mcp_status st = try_connect(c, &err);
    int era = mcp_client_era(c);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK(era == MCP_ERA_LEGACY);
    CHECK_MSG(now_ms() - t0 < 5000, "connect took %.0f ms", now_ms() - t0);
}

/* A server that never writes to stdout fails connect within connect_timeout_ms, saying that
 * nothing came on stdout and quoting its stderr; its process group is gone afterwards. */
static void a_silent_server_fails_connect_within_its_bound(void)
{
    char pidfile[128];
    snprintf(pidfile, sizeof pidfile, "/tmp/mcp-faults-api-%d-silent", (int)getpid());
    mcp_client *c = client_json("{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"echo $$ > %s; echo booting the silent server >&2; exec sleep 60\"],"
                                "\"connect_timeout_ms\":1000,\"probe_timeout_ms\":300}",
                                pidfile);
    CHECK(c);
    mcp_error *err = NULL;
    double t0 = now_ms();
    mcp_status st = try_connect(c, &err);
    double took = now_ms() - t0;
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_TIMEOUT, err);
    CHECK_MSG(took < 4000, "connect took %.0f ms for a 1000 ms bound", took);
    const char *msg = mcp_error_message(err);
    CHECK_CONTAINS(msg, "wrote nothing on stdout");
    CHECK_CONTAINS(msg, "connect_timeout_ms");
    CHECK_CONTAINS(msg, "booting the silent server");
    mcp_error_free(err);
    FILE *f = fopen(pidfile, "r");
    CHECK(f);
    int pid = 0;
    CHECK(fscanf(f, "%d", &pid) == 1);
    fclose(f);
    unlink(pidfile);
    /* Killed with its group when the client went; reaped by the library's waiter thread. */
    double until = now_ms() + 3000;
    while (kill(pid, 0) == 0 && now_ms() < until)
        usleep(10000);
    CHECK_MSG(kill(pid, 0) != 0, "the silent server (pid %d) is still running", pid);
}

/* The bound is a non-negative number of milliseconds (0: none; default 60000). */
static void connect_timeout_is_validated(void)
{
    mcp_config *cfg = NULL;
    mcp_client *c = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new("{\"command\":\"x\",\"connect_timeout_ms\":-1}", &cfg, &err);
    if (st == MCP_OK)
        st = mcp_client_new(cfg, &c, &err);
    mcp_config_free(cfg);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_INVALID_ARG, err);
    CHECK_CONTAINS(mcp_error_message(err), "connect_timeout_ms");
    mcp_error_free(err);
}

/* HTTP refusals at connect keep their status and say what to check, without repeating. */
static void http_errors_at_connect_say_what_to_do(void)
{
    char url[256];
    int in = -1;
    int pid = start_http_fixture(url, sizeof url, &in, NULL);
    CHECK(pid > 0);
    char base[256];
    snprintf(base, sizeof base, "%s", url);
    char *slash = strstr(base + strlen("http://"), "/");
    if (slash)
        *slash = 0;

    struct {
        const char *fmt;
        mcp_status want;
        int http;
        const char *hint;
    } cases[] = {
        /* The fixture answers 404 at /sse unless it serves HTTP+SSE. */
        {"{\"url\":\"%s/sse\"}", MCP_HTTP_STATUS, 404, "check its path"},
        {"{\"url\":\"%s/sse\",\"mode\":\"legacy\"}", MCP_HTTP_STATUS, 404, "check its path"},
        {"{\"url\":\"%s/sse\",\"mode\":\"modern\"}", MCP_HTTP_STATUS, 404, "check its path"},
        {"{\"url\":\"%s/mcp\",\"mode\":\"modern\",\"headers\":{}}", MCP_OK, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcp_client *c = client_json(cases[i].fmt, base);
        if (!c)
            break;
        mcp_error *err = NULL;
        mcp_status st = try_connect(c, &err);
        mcp_client_free(c);
        if (st != cases[i].want) {
            t_fail(__FILE__, __LINE__, "case %zu: status %d, want %d (%s)", i, st, cases[i].want,
                   err ? mcp_error_message(err) : "");
            mcp_error_free(err);
            break;
        }
        if (cases[i].hint) {
            uint16_t status = 0;
            const char *msg = mcp_error_message(err);
            bool ok = mcp_error_http_status(err, &status) && status == cases[i].http &&
                      strstr(msg, cases[i].hint) && !strstr(msg, "initialize: initialize:");
            if (!ok)
                t_fail(__FILE__, __LINE__, "case %zu: http_status %u, message %s", i, status, msg);
        }
        mcp_error_free(err);
    }
    /* HTTPS to the plain-HTTP port. */
    char https[300];
    snprintf(https, sizeof https, "https%s", base + strlen("http"));
    mcp_client *c = client_json("{\"url\":\"%s/mcp\",\"connect_timeout_ms\":5000}", https);
    mcp_error *err = NULL;
    mcp_status st = c ? try_connect(c, &err) : MCP_INTERNAL;
    mcp_client_free(c);
    stop_http_fixture(pid, in);
    CHECK_STATUS(st, MCP_IO, err);
    CHECK_CONTAINS(mcp_error_message(err), "does not speak TLS");
    mcp_error_free(err);
}

/* Nothing listening: "is the server running?". */
static void http_connection_refused_says_so(void)
{
    /* A port that was just free: bind-and-close is racy, so use port 1 (privileged, unused). */
    mcp_client *c = client_json("{\"url\":\"http://127.0.0.1:1/mcp\",\"connect_timeout_ms\":5000}");
    CHECK(c);
    mcp_error *err = NULL;
    mcp_status st = try_connect(c, &err);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_IO, err);
    CHECK_CONTAINS(mcp_error_message(err), "is the server running");
    mcp_error_free(err);
}

/* mode "modern" against a legacy server: the -32601 is kept and explained. */
static void modern_mode_against_a_legacy_server_explains(void)
{
    mcp_client *c = client_json("{\"command\":\"%s\",\"args\":[\"--era\",\"legacy\"],\"mode\":\"modern\"}", fixture());
    CHECK(c);
    mcp_error *err = NULL;
    mcp_status st = try_connect(c, &err);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    CHECK(mcp_error_jsonrpc_code(err, &code) && code == -32601);
    CHECK_CONTAINS(mcp_error_message(err), "speaks only the legacy protocol");
    CHECK_CONTAINS(mcp_error_message(err), "mode \"auto\"");
    mcp_error_free(err);
}

const struct test_case connect_tests[] = {
    {"connect/a_modern_server_slower_than_the_probe_connects", a_modern_server_slower_than_the_probe_connects},
    {"connect/a_legacy_server_ignoring_the_probe_connects", a_legacy_server_ignoring_the_probe_connects},
    {"connect/a_silent_server_fails_connect_within_its_bound", a_silent_server_fails_connect_within_its_bound},
    {"connect/connect_timeout_is_validated", connect_timeout_is_validated},
    {"connect/http_errors_at_connect_say_what_to_do", http_errors_at_connect_say_what_to_do},
    {"connect/http_connection_refused_says_so", http_connection_refused_says_so},
    {"connect/modern_mode_against_a_legacy_server_explains", modern_mode_against_a_legacy_server_explains},
};
const size_t connect_tests_count = sizeof connect_tests / sizeof connect_tests[0];
