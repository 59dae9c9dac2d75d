/* Tools for the model over the C ABI: a tool list exported to an API's format, the model's calls
 * found in its reply, dispatched on the fixture (blocking and started), a result converted. */
#include "harness.h"

#include <stdio.h>
#include <string.h>

static const char *const REPLY =
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"adding\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"add\",\"input\":{\"a\":2,\"b\":3}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"media\",\"input\":{}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_3\",\"name\":\"add\",\"input\":{\"a\":\"two\"}}]}";

/* The fixture's tools exported for Anthropic. */
static char *exported_for(mcp_client *c, const char *options)
{
    char *tools = NULL, *exported = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, &tools, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_export_tools(tools, options, NULL, &exported, &err), MCP_OK, err);
    mcp_string_free(tools);
    return exported;
}

static void test_export_find_and_dispatch(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *exported = exported_for(c, "{\"format\":\"anthropic\"}");
    CHECK(exported != NULL);
    EXPECT_CONTAINS(exported, "\"input_schema\"");
    EXPECT_CONTAINS(exported, "\"report\"");

    mcp_error *err = NULL;
    char *calls = NULL;
    CHECK_STATUS(mcp_export_calls(exported, REPLY, &calls, &err), MCP_OK, err);
    char *messages[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        char pointer[16], *call = NULL;
        snprintf(pointer, sizeof pointer, "/%d", i);
        CHECK_STATUS(mcp_json_pointer(calls, pointer, &call, &err), MCP_OK, err);
        EXPECT_STATUS(mcp_client_export_dispatch(c, exported, call, NULL, NULL, &messages[i], &err), MCP_OK, err);
        mcp_string_free(call);
    }
    EXPECT_CONTAINS(messages[0], "\"tool_use_id\":\"toolu_1\"");
    EXPECT_CONTAINS(messages[0], "\"text\":\"5\"");
    EXPECT_CONTAINS(messages[1], "\"media_type\":\"image/png\"");
    EXPECT_CONTAINS(messages[2], "\"is_error\":true");
    EXPECT_CONTAINS(messages[2], "is missing");
    for (int i = 0; i < 3; i++) mcp_string_free(messages[i]);

    /* A result the host got itself. */
    char *message = NULL;
    EXPECT_STATUS(mcp_export_result(exported, "{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"echo\",\"input\":{}}",
                                    "{\"content\":[{\"type\":\"text\",\"text\":\"0123456789\"}]}",
                                    "{\"max_chars\":4}", &message, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(message, "[truncated: 4 of 10 characters shown]");
    mcp_string_free(message);

    /* Bad input is refused with the reason; nothing is written. */
    char *none = NULL;
    EXPECT_STATUS(mcp_export_tools("[]", "{\"format\":\"cohere\"}", NULL, &none, &err), MCP_INVALID_ARG, err);
    EXPECT_CONTAINS(mcp_error_message(err), "cohere");
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_export_tools("{not json", NULL, NULL, &none, &err), MCP_INVALID_JSON, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_export_calls(NULL, REPLY, &none, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_export_dispatch(c, exported, "{\"type\":\"text\"}", NULL, NULL, &none, &err),
                  MCP_INVALID_ARG, err);
    EXPECT(none == NULL);
    mcp_error_free(err);
    mcp_string_free(calls);
    mcp_string_free(exported);
    mcp_client_free(c);
}

struct done_box {
    int count;
    mcp_status status;
    char text[4096];
};

static void on_done(void *userdata, mcp_status status, const char *json, size_t len, const mcp_error *error)
{
    (void)error;
    struct done_box *box = (struct done_box *)userdata;
    box->status = status;
    if (json) snprintf(box->text, sizeof box->text, "%.*s", (int)len, json);
    AINC(&box->count);
}

static void test_export_dispatch_started(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *exported = exported_for(c, "{\"format\":\"openai-chat\",\"strict\":true}");
    CHECK(exported != NULL);
    struct done_box box;
    memset(&box, 0, sizeof box);
    mcp_call *call = NULL;
    mcp_error *err = NULL;
    const char *tool_call =
        "{\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"later\\\"}\"}}";
    CHECK_STATUS(mcp_client_export_dispatch_start(c, exported, tool_call, NULL, NULL, on_done, &box, &call, &err),
                 MCP_OK, err);
    CHECK(wait_count(&box.count, 1, 5000));
    EXPECT_STATUS(box.status, MCP_OK, NULL);
    EXPECT_CONTAINS(box.text, "\"role\":\"tool\"");
    EXPECT_CONTAINS(box.text, "\"tool_call_id\":\"call_9\"");
    EXPECT_CONTAINS(box.text, "\"content\":\"later\"");
    mcp_call_free(call);
    mcp_string_free(exported);
    mcp_client_free(c);
}

/* A hub of two fixture members, one of each era, the legacy one withholding "add": its merged
 * list exported with each tool's member, calls routed to the member the export names (blocking
 * and started), a withheld or unknown name answered for the model without a call. */
static void test_hub_export_dispatch(void)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"mcpServers\": {\"new\": {\"command\": \"%s\", \"args\": [\"--era\", \"modern\"]},"
             " \"old\": {\"command\": \"%s\", \"args\": [\"--era\", \"legacy\"],"
             " \"mcp_client\": {\"tools\": {\"deny\": [\"add\"]}}}}}",
             fixture_path_json(), fixture_path_json());
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new_from_text(text, NULL, NULL, &hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    char *tools = NULL, *exported = NULL;
    CHECK_STATUS(mcp_hub_list(hub, MCP_LIST_TOOLS, &tools, &err), MCP_OK, err);
    CHECK_STATUS(mcp_export_tools(tools, "{\"format\":\"openai-responses\"}", NULL, &exported, &err), MCP_OK, err);
    mcp_string_free(tools);
    EXPECT_CONTAINS(exported, "\"old__echo\":{\"server\":\"old\",\"tool\":\"echo\"");
    EXPECT(strstr(exported, "\"old__add\"") == NULL);

    static const char *const calls[][2] = {
        {"new__echo", "from new"},
        {"old__echo", "from old"},
        {"old__add", "There is no tool named"},
        {"nobody__echo", "There is no tool named"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char call[512], *message = NULL;
        snprintf(call, sizeof call,
                 "{\"type\":\"function_call\",\"call_id\":\"c%zu\",\"name\":\"%s\","
                 "\"arguments\":\"{\\\"text\\\":\\\"%s\\\"}\"}",
                 i, calls[i][0], calls[i][1]);
        EXPECT_STATUS(mcp_hub_export_dispatch(hub, exported, call, NULL, NULL, &message, &err), MCP_OK, err);
        EXPECT_CONTAINS(message, "\"type\":\"function_call_output\"");
        EXPECT_CONTAINS(message, calls[i][1]);
        mcp_string_free(message);
    }
    /* Each member's server got its call: the modern one's request carries the modern version. */
    const char *const metas[][2] = {{"new__echo_meta", "2026-07-28"}, {"old__echo_meta", "}"}};
    for (size_t i = 0; i < 2; i++) {
        char call[256], *message = NULL;
        snprintf(call, sizeof call, "{\"type\":\"function_call\",\"call_id\":\"m\",\"name\":\"%s\",\"arguments\":\"{}\"}",
                 metas[i][0]);
        EXPECT_STATUS(mcp_hub_export_dispatch(hub, exported, call, NULL, NULL, &message, &err), MCP_OK, err);
        EXPECT_CONTAINS(message, metas[i][1]);
        EXPECT((strstr(message, "2026-07-28") != NULL) == (i == 0));
        mcp_string_free(message);
    }

    struct done_box box;
    memset(&box, 0, sizeof box);
    mcp_call *started = NULL;
    const char *later = "{\"type\":\"function_call\",\"call_id\":\"s\",\"name\":\"new__echo\","
                        "\"arguments\":\"{\\\"text\\\":\\\"started\\\"}\"}";
    CHECK_STATUS(mcp_hub_export_dispatch_start(hub, exported, later, NULL, NULL, on_done, &box, &started, &err),
                 MCP_OK, err);
    CHECK(wait_count(&box.count, 1, 5000));
    EXPECT_STATUS(box.status, MCP_OK, NULL);
    EXPECT_CONTAINS(box.text, "\"call_id\":\"s\"");
    EXPECT_CONTAINS(box.text, "started");
    mcp_call_free(started);

    char *none = NULL;
    EXPECT_STATUS(mcp_hub_export_dispatch(NULL, exported, later, NULL, NULL, &none, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_hub_export_dispatch(hub, "{}", later, NULL, NULL, &none, &err), MCP_INVALID_ARG, err);
    EXPECT(none == NULL);
    mcp_error_free(err);
    mcp_string_free(exported);
    mcp_hub_free(hub);
}

const struct test_case export_tests[] = {
    {"export/find_and_dispatch", test_export_find_and_dispatch},
    {"export/dispatch_started", test_export_dispatch_started},
    {"export/hub_dispatch", test_hub_export_dispatch},
};
const size_t export_tests_count = sizeof export_tests / sizeof export_tests[0];
