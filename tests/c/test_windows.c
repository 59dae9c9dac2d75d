/* Windows: what differs from Linux, run under Wine here (make windows-test) beside the shared
 * suites: the stdio server (lookup through PATH and PATHEXT, .cmd shims, batch-file argument
 * refusal, the process tree in a Job Object, the exit status and stderr tail), and the host
 * loop's event HANDLE. Built only for Windows. */
#ifdef _WIN32
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define ECHO_ARGS "{\"text\":\"hi\"}"

/* A client of `command` with the fixture's arguments, the JSON settings `extra` (an object's
 * members, or NULL). */
static mcp_client *command_client(const char *command, const char *extra, const char *const *args)
{
    char json[512];
    snprintf(json, sizeof json, "{\"request_timeout_ms\":%d%s%s}", tscale(10000), extra ? "," : "",
             extra ? extra : "");
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(json, &cfg, &err);
    if (st == MCP_OK)
        st = mcp_config_set_command(cfg, command, &err);
    for (size_t i = 0; st == MCP_OK && args && args[i]; i++)
        st = mcp_config_add_arg(cfg, args[i], &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "config", st, MCP_OK, err);
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    return client_from_config(cfg);
}

/* Writes a .cmd shim named `name`.cmd in `dir` that runs the fixture with its arguments. */
static bool write_shim(const char *dir, const char *name, char *path, size_t n)
{
    char body[1024];
    snprintf(body, sizeof body, "@echo off\r\n\"%s\" %%*\r\n", fixture_path());
    return write_cmd_file(dir, name, body, path, n);
}

/* `npx` is `npx.cmd`: a name without extension is found on PATH through PATHEXT, and the
 * batch file runs under cmd.exe with its arguments. */
static void test_cmd_shim_through_path(void)
{
    char dir[MAX_PATH], shim[MAX_PATH];
    CHECK(temp_dir(dir, sizeof dir, "shim"));
    CHECK(write_shim(dir, "mcp-shim", shim, sizeof shim));
    char old_path[8192];
    DWORD had = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
    CHECK(had < sizeof old_path);
    char path[8192 + MAX_PATH];
    snprintf(path, sizeof path, "%s;%s", dir, had ? old_path : "");
    SetEnvironmentVariableA("PATH", path);
    const char *args[] = {"--era", "legacy", NULL};
    mcp_client *c = command_client("mcp-shim", NULL, args);
    /* The server starts with the first call (the lookup reads PATH then). */
    char *out = c ? tool_ok(c, "echo", ECHO_ARGS) : NULL;
    SetEnvironmentVariableA("PATH", had ? old_path : NULL);
    CHECK(c != NULL);
    EXPECT_CONTAINS(out, "hi");
    mcp_string_free(out);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    mcp_client_free(c);
}

/* cmd.exe cannot be given a line break in an argument safely: the start fails and says why. */
static void test_batch_argument_refused(void)
{
    char dir[MAX_PATH], shim[MAX_PATH];
    CHECK(temp_dir(dir, sizeof dir, "shim"));
    CHECK(write_shim(dir, "shim", shim, sizeof shim));
    const char *args[] = {"line\nbreak", NULL};
    mcp_client *c = command_client(shim, NULL, args);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_IO, err);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "batch file");
    mcp_error_free(err);
    mcp_client_free(c);
}

/* Starts `command` (the fixture, or a .cmd shim of it) as a server that ignores its stdin's end
 * and starts a child that would outlive it; closes the client; the child must be gone. */
static void check_close_ends_tree(const char *command)
{
    const char *args[] = {"--ignore-stdin-eof", "--spawn-grandchild", NULL};
    mcp_client *c = command_client(command, "\"shutdown_grace_ms\":150", args);
    CHECK(c != NULL);
    struct collector *col = (struct collector *)malloc(sizeof *col);
    CHECK(col != NULL);
    collector_init(col);
    DWORD pid = (DWORD)connect_for_grandchild(c, col, tscale(5000));
    HANDLE grandchild = pid ? OpenProcess(SYNCHRONIZE | PROCESS_TERMINATE, FALSE, pid) : NULL;
    EXPECT_MSG(grandchild != NULL, "cannot open the grandchild %lu", (unsigned long)pid);
    if (grandchild)
        EXPECT(WaitForSingleObject(grandchild, 0) == WAIT_TIMEOUT);
    double t0 = now_ms();
    mcp_client_close(c);
    double took = now_ms() - t0;
    EXPECT_MSG(took < tscale(3000), "close took %.0f ms", took);
    if (grandchild) {
        DWORD gone = WaitForSingleObject(grandchild, (DWORD)tscale(2000));
        EXPECT_MSG(gone == WAIT_OBJECT_0, "grandchild %lu still running after close",
                   (unsigned long)pid);
        if (gone != WAIT_OBJECT_0)
            TerminateProcess(grandchild, 1);
        CloseHandle(grandchild);
    }
    mcp_client_free(c);
    collector_destroy(col);
    free(col);
}

/* The process tree is a Job Object: a server that ignores its stdin's end and whose own child
 * would outlive it is gone after close, the child included. */
static void test_close_ends_the_process_tree(void)
{
    check_close_ends_tree(fixture_path());
}

/* The peers' failure: a server started through cmd.exe (a .cmd shim) whose real process, and
 * that process's child, outlive a kill of cmd.exe. In the job, all of them end at close. */
static void test_close_ends_a_shim_tree(void)
{
    char dir[MAX_PATH], shim[MAX_PATH];
    CHECK(temp_dir(dir, sizeof dir, "shim"));
    CHECK(write_shim(dir, "tree", shim, sizeof shim));
    check_close_ends_tree(shim);
}

/* A server that exits: the error says how, with its last stderr lines. */
static void test_exit_status_and_stderr_tail(void)
{
    const char *args[] = {"--no-such-flag", NULL};
    mcp_client *c = command_client(fixture_path(), NULL, args);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    EXPECT(mcp_client_connect(c, NULL, NULL, &err) != MCP_OK);
    const char *msg = err ? mcp_error_message(err) : NULL;
    EXPECT_CONTAINS(msg, "exited with status 2");
    EXPECT_CONTAINS(msg, "unknown argument '--no-such-flag'");
    mcp_error_free(err);
    mcp_client_free(c);
}

struct done {
    int calls;
    mcp_status status;
    char text[256];
};

static void on_done(void *userdata, mcp_status status, const char *result_json, size_t len,
                    const mcp_error *error)
{
    (void)len;
    (void)error;
    struct done *d = (struct done *)userdata;
    d->status = status;
    if (!first_text(result_json, d->text, sizeof d->text))
        d->text[0] = '\0';
    AINC(&d->calls);
}

/* The host loop on Windows: the int is an event HANDLE, signaled while work is queued. */
static void test_host_loop_event_handle(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    int fd = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_use_host_loop(c, &fd, &err), MCP_OK, err);
    HANDLE event = (HANDLE)(intptr_t)fd;
    EXPECT(WaitForSingleObject(event, 0) == WAIT_TIMEOUT);
    struct done d;
    memset(&d, 0, sizeof d);
    mcp_call *call = NULL;
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", ECHO_ARGS, NULL, NULL, NULL, on_done, &d,
                                             &call, &err),
                  MCP_OK, err);
    double end = now_ms() + tscale(10000);
    while (ALOAD(&d.calls) == 0 && now_ms() < end) {
        if (WaitForSingleObject(event, 200) != WAIT_OBJECT_0)
            continue;
        size_t left = 0;
        EXPECT_STATUS(mcp_client_dispatch(c, 0, &left, &err), MCP_OK, err);
    }
    EXPECT_MSG(d.calls == 1, "the completion never came through the event");
    EXPECT(strcmp(d.text, "hi") == 0);
    EXPECT(WaitForSingleObject(event, 0) == WAIT_TIMEOUT);
    mcp_call_free(call);
    mcp_error_free(err);
    mcp_client_free(c);
}

const struct test_case windows_tests[] = {
    {"windows/cmd_shim_through_path", test_cmd_shim_through_path},
    {"windows/batch_argument_refused", test_batch_argument_refused},
    {"windows/close_ends_the_process_tree", test_close_ends_the_process_tree},
    {"windows/close_ends_a_shim_tree", test_close_ends_a_shim_tree},
    {"windows/exit_status_and_stderr_tail", test_exit_status_and_stderr_tail},
    {"windows/host_loop_event_handle", test_host_loop_event_handle},
};
const size_t windows_tests_count = sizeof windows_tests / sizeof windows_tests[0];
#endif
