/* Manual Multi Round-Trip Requests: elicitation is declared as answered by hand (servers ask
 * only for declared input) and no handler is registered, so a call that needs input fails
 * with MCP_INPUT_REQUIRED; the error carries the unanswered input requests and the opaque
 * requestState. The host answers them itself and retries the same call with both.
 * Usage: mrtr_manual <server command> [args...]   (expects the fixture's `elicit_once` tool) */
#include "common.h"

int main(int argc, char **argv) {
    mcp_client *client = connect_from_args_manual(argc, argv, MCP_ELICITATION_FORM);
    if (!client) return 1;

    printf("calling elicit_once with no handler registered\n");
    char *result = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(client, "elicit_once", NULL, NULL, NULL, NULL, &result, &err);
    if (st != MCP_INPUT_REQUIRED) {
        if (st == MCP_OK) mcp_string_free(result);
        report_failure("expected MCP_INPUT_REQUIRED; elicit_once", st, err);
        mcp_client_free(client);
        return 1;
    }
    printf("  status: %s\n", mcp_status_str(st));
    printf("  unanswered requests: %s\n", mcp_error_unanswered_json(err));
    printf("  request state:  %s\n", mcp_error_request_state(err));

    /* Answer the request under its key ("name"), then retry with the byte-exact state. */
    const char *responses = "{\"name\":{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}}";
    printf("retrying with input responses %s\n", responses);
    st = mcp_client_call_tool(client, "elicit_once", NULL, responses, mcp_error_request_state(err), NULL, &result,
                              NULL);
    mcp_error_free(err);
    if (st != MCP_OK) {
        fprintf(stderr, "retry failed: %s\n", mcp_status_str(st));
        mcp_client_free(client);
        return 1;
    }
    printf("  final result: %s\n", result);
    mcp_string_free(result);
    mcp_client_free(client);
    return 0;
}
