/* Lists the tools, prompts and resources of an MCP server.
 * Usage: list <server command> [args...] */
#include "common.h"

static int list(mcp_client *client, int32_t kind, const char *title) {
    char *json = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_list_all(client, kind, NULL, &json, &err);
    if (st != MCP_OK) return report_failure(title, st, err);
    printf("%s: %s\n\n", title, json);
    mcp_string_free(json);
    return 0;
}

int main(int argc, char **argv) {
    mcp_client *client = connect_from_args(argc, argv);
    if (!client) return 1;
    int failed = list(client, MCP_LIST_TOOLS, "tools") || list(client, MCP_LIST_PROMPTS, "prompts") ||
                 list(client, MCP_LIST_RESOURCES, "resources");
    mcp_client_free(client);
    return failed ? 1 : 0;
}
