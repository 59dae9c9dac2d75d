/* The dist-test host in C: starts the fixture server (argv[1]), calls its `echo` tool and checks
 * the answer. Built against an installed prefix by tests/dist/c.sh and cmake.sh. */
#include <stdio.h>
#include <string.h>

#include "mcp_client.h"

static int fail(const char *what, mcp_status st, mcp_error *err) {
    fprintf(stderr, "%s: %s: %s\n", what, mcp_status_str(st), err ? mcp_error_message(err) : "");
    mcp_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE\n", argv[0]);
        return 2;
    }
    mcp_error *err = NULL;
    mcp_config *cfg = NULL;
    mcp_status st = mcp_config_new("{\"request_timeout_ms\":20000}", &cfg, &err);
    if (st != MCP_OK) return fail("mcp_config_new", st, err);
    st = mcp_config_set_command(cfg, argv[1], &err);
    if (st != MCP_OK) return fail("mcp_config_set_command", st, err);
    mcp_client *client = NULL;
    st = mcp_client_new(cfg, &client, &err);
    mcp_config_free(cfg);
    if (st != MCP_OK) return fail("mcp_client_new", st, err);

    char *result = NULL;
    st = mcp_client_call_tool(client, "echo", "{\"text\":\"hello from C\"}", NULL, NULL, NULL, &result, &err);
    if (st != MCP_OK) {
        mcp_client_free(client);
        return fail("echo", st, err);
    }
    char *text = NULL;
    st = mcp_json_string(result, "/content/0/text", &text, &err);
    mcp_string_free(result);
    mcp_client_free(client);
    if (st != MCP_OK) return fail("mcp_json_string", st, err);
    int ok = strcmp(text, "hello from C") == 0;
    printf("%s: %s (%s)\n", ok ? "ok" : "WRONG ANSWER", text, mcp_version());
    mcp_string_free(text);
    return ok ? 0 : 1;
}
