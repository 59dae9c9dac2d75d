/* Hosts: no SIGCHLD handler ever, and mcp_client_free from a thread-exit
 * destructor still closes the server gracefully. */
#define _GNU_SOURCE
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static bool sigchld_is_default(void)
{
    struct sigaction now;
    return sigaction(SIGCHLD, NULL, &now) == 0 && now.sa_handler == SIG_DFL &&
           !(now.sa_flags & SA_SIGINFO);
}

/* A Go runtime aborts on a signal handler installed without SA_ONSTACK: the library installs
 * none for its children, whether the server lives, exits or is killed. */
static void no_sigchld_handler_is_installed(void)
{
    CHECK(sigchld_is_default());
    mcp_client *c = client_json("{\"command\":\"%s\"}", fixture());
    CHECK(c);
    mcp_error *err = NULL;
    mcp_status st = mcp_client_connect(c, NULL, NULL, &err);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK(sigchld_is_default());
    char *res = NULL;
    st = mcp_client_call_tool(c, "crash", NULL, NULL, NULL, NULL, &res, &err);
    CHECK_STATUS(st, MCP_SERVER_EXITED, err);
    /* The exit was seen (status 7) without any SIGCHLD handler. */
    CHECK_CONTAINS(mcp_error_message(err), "status 7");
    mcp_error_free(err);
    mcp_client_free(c);
    CHECK(sigchld_is_default());
}

struct key_case {
    char marker[256];
};

static pthread_key_t free_key;

static void free_at_thread_exit(void *client)
{
    mcp_client_free((mcp_client *)client);
}

static void *thread_owning_a_client(void *arg)
{
    struct key_case *k = (struct key_case *)arg;
    /* The server runs under sh, which records how the fixture ended: "exit 0" only after a
     * graceful close (stdin EOF); a killed group writes nothing. */
    mcp_client *c = client_json("{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"\\\"$0\\\"; echo exit $? > \\\"$1\\\"\","
                                "\"%s\",\"%s\"],\"shutdown_grace_ms\":3000}",
                                fixture(), k->marker);
    if (!c)
        return NULL;
    mcp_error *err = NULL;
    char *res = NULL;
    /* Used on this thread, so tokio's thread-locals exist here and are destroyed at exit. */
    if (mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &res, &err) != MCP_OK)
        t_fail(__FILE__, __LINE__, "echo: %s", mcp_error_message(err));
    mcp_string_free(res);
    mcp_error_free(err);
    pthread_setspecific(free_key, c);
    return NULL;
}

static void free_from_a_thread_exit_destructor_closes_gracefully(void)
{
    struct key_case k;
    snprintf(k.marker, sizeof k.marker, "/tmp/mcp-faults-api-%d-key", (int)getpid());
    unlink(k.marker);
    CHECK(pthread_key_create(&free_key, free_at_thread_exit) == 0);
    pthread_t t;
    double t0 = now_ms();
    CHECK(pthread_create(&t, NULL, thread_owning_a_client, &k) == 0);
    pthread_join(t, NULL);
    pthread_key_delete(free_key);
    CHECK_MSG(now_ms() - t0 < 10000, "the thread-exit free took %.0f ms", now_ms() - t0);
    /* free returned: the close sequence ran, so the marker is there already. */
    FILE *f = fopen(k.marker, "r");
    CHECK_MSG(f, "the server did not end by a graceful close (no marker %s)", k.marker);
    char line[64] = {0};
    (void)!fgets(line, sizeof line, f);
    fclose(f);
    unlink(k.marker);
    CHECK_CONTAINS(line, "exit 0");
}

const struct test_case host_tests[] = {
    {"hosts/no_sigchld_handler_is_installed", no_sigchld_handler_is_installed},
    {"hosts/free_from_a_thread_exit_destructor_closes_gracefully",
     free_from_a_thread_exit_destructor_closes_gracefully},
};
const size_t host_tests_count = sizeof host_tests / sizeof host_tests[0];
