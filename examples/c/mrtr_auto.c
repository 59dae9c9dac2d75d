/* Automatic Multi Round-Trip Requests: the server asks for input (`input_required`), the
 * elicitation handler answers, and the library retries until the result is final. The handler
 * asks on the terminal, or uses canned answers when stdin is not a terminal.
 * Usage: mrtr_auto <server command> [args...]   (expects the fixture's tools) */
#include <string.h>
#include <unistd.h>
#include "common.h"

static int rounds;

/* Pulls `"message":"..."` out of the params for display (a real host would parse the JSON). */
static void print_message(const char *params_json) {
    const char *m = strstr(params_json, "\"message\":\"");
    if (!m) return;
    m += strlen("\"message\":\"");
    const char *end = strchr(m, '"');
    printf("  round %d: the server asks: %.*s\n", ++rounds, (int)(end ? end - m : 0), m);
}

/* The fixture's elicitations ask for one string field ("name" or "value"). */
static const char *field_of(const char *params_json) {
    return strstr(params_json, "\"name\"") ? "name" : "value";
}

static void on_elicitation(void *userdata, const char *method, const char *params_json, size_t params_len,
                           mcp_responder *responder) {
    (void)userdata; (void)method; (void)params_len;
    print_message(params_json);
    static const char *canned[] = {"Ada", "red", "green", "blue"};
    char answer[128];
    if (isatty(STDIN_FILENO)) {
        printf("  your answer: ");
        fflush(stdout);
        if (!fgets(answer, sizeof answer, stdin)) answer[0] = '\0';
        answer[strcspn(answer, "\r\n\"\\")] = '\0';
    } else {
        snprintf(answer, sizeof answer, "%s", canned[(rounds - 1) % 4]);
        printf("  answering (stdin is not a terminal): %s\n", answer);
    }
    char reply[256];
    snprintf(reply, sizeof reply, "{\"action\":\"accept\",\"content\":{\"%s\":\"%s\"}}", field_of(params_json), answer);
    mcp_error *err = NULL;
    mcp_status st = mcp_responder_reply_json(responder, reply, &err);
    if (st != MCP_OK) report_failure("reply", st, err);
}

static int call(mcp_client *client, const char *tool) {
    printf("calling %s\n", tool);
    rounds = 0;
    char *result = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(client, tool, NULL, NULL, NULL, NULL, &result, &err);
    if (st != MCP_OK) return report_failure(tool, st, err);
    printf("  final result after %d round(s): %s\n\n", rounds, result);
    mcp_string_free(result);
    return 0;
}

int main(int argc, char **argv) {
    mcp_client *client = connect_from_args(argc, argv);
    if (!client) return 1;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_on_elicitation(client, on_elicitation, NULL, NULL, &err);
    int failed = st != MCP_OK ? report_failure("registering the handler", st, err)
                              : call(client, "elicit_once") || call(client, "three_rounds");
    mcp_client_free(client);
    return failed ? 1 : 0;
}
