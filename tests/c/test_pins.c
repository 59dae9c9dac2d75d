/* Tool pinning through the C ABI (the `tool_pinning` configuration key): the fixture changes
 * `echo`'s description after the first listing; under `block` it leaves the list and its calls
 * fail with MCP_TOOL_PIN_CHANGED until mcp_client_approve_tool_pin; the hook gets the event
 * (old, new, diff) on the dispatcher thread and, under `ask`, decides. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A client whose pins follow `policy`, kept in `store_dir` (NULL: in memory). */
static mcp_client *pinned_client_in(const char *policy, const char *store_dir)
{
    char json[2048], dir[1024], store[1100] = "";
    if (store_dir)
        snprintf(store, sizeof store, ", \"store_dir\": \"%s\"", json_escaped(store_dir, dir, sizeof dir));
    snprintf(json, sizeof json,
             "{\"command\": \"%s\", \"mode\": \"legacy\", \"request_timeout_ms\": 10000,"
             " \"tool_pinning\": {\"policy\": \"%s\"%s}}",
             fixture_path_json(), policy, store);
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_config_new(json, &cfg, &err), MCP_OK, err);
    mcp_error_free(err);
    return cfg ? client_from_config(cfg) : NULL;
}

static mcp_client *pinned_client(const char *policy)
{
    return pinned_client_in(policy, NULL);
}

static char *tools(mcp_client *c)
{
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, &out, &err), MCP_OK, err);
    mcp_error_free(err);
    return out;
}

struct seen {
    int events;
    bool approve;
    char last[4096];
};

static bool on_pin(void *userdata, const char *event_json)
{
    struct seen *s = (struct seen *)userdata;
    s->events++;
    snprintf(s->last, sizeof s->last, "%s", event_json);
    return s->approve;
}

static void test_block_withholds_until_approved(void)
{
    mcp_client *c = pinned_client("block");
    CHECK(c != NULL);
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_tool_pin(c, on_pin, &seen, NULL, &err), MCP_OK, err);
    char *list = tools(c);
    EXPECT_CONTAINS(list, "\"name\":\"echo\"");
    mcp_string_free(list);
    mcp_string_free(tool_ok(c, "redefine", "{\"mode\":\"description\"}"));
    list = tools(c);
    EXPECT(list && !strstr(list, "\"name\":\"echo\""));
    EXPECT_CONTAINS(list, "\"name\":\"add\"");
    mcp_string_free(list);
    EXPECT(seen.events == 1);
    EXPECT_CONTAINS(seen.last, "\"change\":\"changed\"");
    EXPECT_CONTAINS(seen.last, "\"diff\":\"description: ");
    EXPECT_CONTAINS(seen.last, "id_rsa");

    char *out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out, &err),
                  MCP_TOOL_PIN_CHANGED, err);
    EXPECT(out == NULL);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "withheld");
    EXPECT_CONTAINS(mcp_status_name(MCP_TOOL_PIN_CHANGED), "MCP_TOOL_PIN_CHANGED");
    mcp_error_free(err);
    err = NULL;

    char *pins = NULL;
    EXPECT_STATUS(mcp_client_tool_pins(c, &pins, &err), MCP_OK, err);
    EXPECT_CONTAINS(pins, "\"state\":\"withheld\"");
    mcp_string_free(pins);
    EXPECT_STATUS(mcp_client_approve_tool_pin(c, "echo", &err), MCP_OK, err);
    list = tools(c);
    EXPECT_CONTAINS(list, "\"name\":\"echo\"");
    mcp_string_free(list);
    mcp_string_free(tool_ok(c, "echo", "{\"text\":\"x\"}"));
    EXPECT_STATUS(mcp_client_approve_tool_pin(c, "echo", &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_forget_tool_pin(c, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_approve_tool_pin(c, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_ask_lets_the_hook_decide(void)
{
    mcp_client *c = pinned_client("ask");
    CHECK(c != NULL);
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    seen.approve = true;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_tool_pin(c, on_pin, &seen, NULL, &err), MCP_OK, err);
    mcp_string_free(tools(c));
    mcp_string_free(tool_ok(c, "redefine", "{\"mode\":\"param\"}"));
    char *list = tools(c);
    EXPECT_CONTAINS(list, "\"context\"");
    mcp_string_free(list);
    EXPECT(seen.events == 1);
    EXPECT_CONTAINS(seen.last, "inputSchema.properties.context: added");
    mcp_error_free(err);
    mcp_client_free(c);
}

/* Pins in a store directory outlive the client (a file per server, written under the store's
 * lock: flock on POSIX, LockFileEx on Windows): a change approved by one client is what the next
 * client, with a fresh server that still has the old definition, compares against. */
static void test_store_dir_outlives_the_client(void)
{
    char dir[512];
    CHECK(temp_dir(dir, sizeof dir, "pins"));
    mcp_client *c = pinned_client_in("ask", dir);
    CHECK(c != NULL);
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    seen.approve = true;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_tool_pin(c, on_pin, &seen, NULL, &err), MCP_OK, err);
    mcp_string_free(tools(c));
    mcp_string_free(tool_ok(c, "redefine", "{\"mode\":\"description\"}"));
    mcp_string_free(tools(c));
    EXPECT(seen.events == 1); /* approved: the changed definition is the pin now */
    mcp_client_free(c);

    c = pinned_client_in("block", dir);
    CHECK(c != NULL);
    memset(&seen, 0, sizeof seen);
    EXPECT_STATUS(mcp_client_on_tool_pin(c, on_pin, &seen, NULL, &err), MCP_OK, err);
    char *list = tools(c); /* a new server: echo as it first was, not as pinned */
    EXPECT(list && !strstr(list, "\"name\":\"echo\""));
    EXPECT_CONTAINS(list, "\"name\":\"add\"");
    mcp_string_free(list);
    EXPECT_MSG(seen.events == 1, "%d pin events on the first listing", seen.events);
    EXPECT_CONTAINS(seen.last, "\"change\":\"changed\"");
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_off_has_no_pins(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    char *pins = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_tool_pins(c, &pins, &err), MCP_UNSUPPORTED, err);
    EXPECT(pins == NULL);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_on_tool_pin(c, on_pin, NULL, NULL, &err), MCP_UNSUPPORTED, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

const struct test_case pins_tests[] = {
    {"pins/block_withholds_until_approved", test_block_withholds_until_approved},
    {"pins/ask_lets_the_hook_decide", test_ask_lets_the_hook_decide},
    {"pins/store_dir_outlives_the_client", test_store_dir_outlives_the_client},
    {"pins/off_has_no_pins", test_off_has_no_pins},
};
const size_t pins_tests_count = sizeof pins_tests / sizeof pins_tests[0];
