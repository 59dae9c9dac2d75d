/* A C host reading a Claude Desktop configuration file as it is (test_hub_config.py builds and
 * runs it): usage `hub_config CONFIG [TOOL ARGS_JSON EXPECTED]...`. Creates the hub from the
 * file, starts every member, prints the members and the warnings, then calls each TOOL with
 * ARGS_JSON and checks that its result holds EXPECTED. Exits 0 when every member connected and
 * every call answered as expected; prints "N connected, M calls answered". */
#include <mcp_client.h>

#include <stdio.h>
#include <string.h>

static int failed(const char *what, mcp_status st, mcp_error *err)
{
    fprintf(stderr, "%s: %s (%d): %s\n", what, mcp_status_name(st), st, err ? mcp_error_message(err) : "");
    mcp_error_free(err);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc - 2) % 3 != 0) {
        fprintf(stderr, "usage: %s CONFIG [TOOL ARGS_JSON EXPECTED]...\n", argv[0]);
        return 2;
    }
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    mcp_hub_read_opts read;
    mcp_status st = mcp_hub_read_opts_init(&read, MCP_HUB_READ_OPTS_VERSION);
    if (st != MCP_OK)
        return failed("mcp_hub_read_opts_init", st, NULL);
    st = mcp_hub_new_from_file(argv[1], "{\"defaults\":{\"request_timeout_ms\":15000}}", &read, &hub, &err);
    if (st != MCP_OK)
        return failed("mcp_hub_new_from_file", st, err);
    int bad = 0;
    st = mcp_hub_start(hub, &err);
    if (st != MCP_OK)
        bad = failed("mcp_hub_start", st, err);

    char *members = NULL, *warnings = NULL;
    int connected = 0, total = 0;
    if (!bad && (st = mcp_hub_members_json(hub, &members, &err)) != MCP_OK)
        bad = failed("mcp_hub_members_json", st, err);
    if (members) {
        printf("members: %s\n", members);
        for (const char *p = members; (p = strstr(p, "\"state\":")) != NULL; p++)
            total++;
        for (const char *p = members; (p = strstr(p, "\"state\":\"connected\"")) != NULL; p++)
            connected++;
        mcp_string_free(members);
    }
    if (!bad && (st = mcp_hub_warnings_json(hub, &warnings, &err)) != MCP_OK)
        bad = failed("mcp_hub_warnings_json", st, err);
    if (warnings) {
        printf("warnings: %s\n", warnings);
        mcp_string_free(warnings);
    }
    if (connected != total)
        bad = 1;

    int answered = 0;
    for (int i = 2; !bad && i + 2 < argc; i += 3) {
        char *result = NULL;
        st = mcp_hub_call_tool(hub, argv[i], argv[i + 1], NULL, &result, &err);
        if (st != MCP_OK) {
            bad = failed(argv[i], st, err);
            break;
        }
        printf("%s: %s\n", argv[i], result);
        if (strstr(result, "\"isError\":true") == NULL && strstr(result, argv[i + 2]) != NULL)
            answered++;
        else
            bad = 1;
        mcp_string_free(result);
    }
    printf("%d connected, %d calls answered\n", connected, answered);

    st = mcp_hub_close(hub, &err);
    if (st != MCP_OK)
        bad = failed("mcp_hub_close", st, err);
    mcp_hub_free(hub);
    return bad;
}
