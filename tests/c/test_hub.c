/* The hub (mcp_hub_*): fixture members and a member that cannot start, the merged list under
 * namespaced names, routed calls, states as JSON, events on the listener, close and free. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The flat client configuration of a fixture member (the fixture's own flags: none). */
static void fixture_member_json(char *buf, size_t n)
{
    snprintf(buf, n, "{\"command\":\"%s\",\"probe_timeout_ms\":500,\"shutdown_grace_ms\":500}",
             fixture_path());
}

struct hub_events {
    int states;
    int connected;
    int freed;
};

static void on_hub_event(void *userdata, const char *event_json)
{
    struct hub_events *ev = (struct hub_events *)userdata;
    if (strstr(event_json, "\"type\":\"state\"")) {
        AINC(&ev->states);
        if (strstr(event_json, "\"state\":\"connected\""))
            AINC(&ev->connected);
    }
}

static void free_hub_events(void *userdata)
{
    AINC(&((struct hub_events *)userdata)->freed);
}

static void test_members_lists_calls(void)
{
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new("{\"separator\":\"__\"}", &hub, &err), MCP_OK, err);
    static struct hub_events ev;
    memset(&ev, 0, sizeof ev);
    CHECK_STATUS(mcp_hub_on_event(hub, on_hub_event, &ev, free_hub_events, &err), MCP_OK, err);

    char member[1024];
    fixture_member_json(member, sizeof member);
    CHECK_STATUS(mcp_hub_add_member(hub, "fix", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_add_member(hub, "other", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_add_member(hub, "missing", "{\"command\":\"/nonexistent/mcp-server\"}", &err),
                 MCP_OK, err);
    EXPECT_STATUS(mcp_hub_add_member(hub, "fix", member, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;

    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    char *states = NULL;
    CHECK_STATUS(mcp_hub_members_json(hub, &states, &err), MCP_OK, err);
    EXPECT_CONTAINS(states, "{\"name\":\"fix\",\"state\":\"connected\"");
    EXPECT_CONTAINS(states, "{\"name\":\"missing\",\"state\":\"failed\",\"error\":\"member `missing`: ");
    mcp_string_free(states);
    EXPECT(wait_count(&ev.connected, 2, tscale(5000)));

    char *tools = NULL;
    CHECK_STATUS(mcp_hub_list(hub, MCP_LIST_TOOLS, &tools, &err), MCP_OK, err);
    EXPECT_CONTAINS(tools, "\"name\":\"fix__echo\"");
    EXPECT_CONTAINS(tools, "\"name\":\"other__echo\"");
    EXPECT_CONTAINS(tools, "\"mcp-client/server\":\"other\"");
    mcp_string_free(tools);

    char *result = NULL;
    CHECK_STATUS(mcp_hub_call_tool(hub, "other__echo", "{\"text\":\"routed\"}", NULL, &result, &err), MCP_OK,
                 err);
    char text[64];
    EXPECT(first_text(result, text, sizeof text) && strcmp(text, "routed") == 0);
    mcp_string_free(result);
    result = NULL;

    EXPECT_STATUS(mcp_hub_call_tool(hub, "fix__ecko", NULL, NULL, &result, &err), MCP_INVALID_ARG, err);
    if (err)
        EXPECT_CONTAINS(mcp_error_message(err), "`fix__echo`");
    mcp_error_free(err);
    err = NULL;

    CHECK_STATUS(mcp_hub_get_prompt(hub, "fix__greeting", "{\"name\":\"C\"}", NULL, &result, &err), MCP_OK, err);
    EXPECT_CONTAINS(result, "Hello, C!");
    mcp_string_free(result);
    CHECK_STATUS(mcp_hub_read_resource(hub, "other", "fixture://static", NULL, &result, &err), MCP_OK, err);
    EXPECT_CONTAINS(result, "static content");
    mcp_string_free(result);

    CHECK_STATUS(mcp_hub_close(hub, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_hub_list(hub, MCP_LIST_TOOLS, &tools, &err), MCP_CLOSED, err);
    mcp_error_free(err);
    mcp_hub_free(hub);
    EXPECT(ALOAD(&ev.freed) == 1);
    mcp_hub_free(NULL);
}

struct hub_done {
    int calls;
    mcp_status status;
    char text[64];
};

static void on_hub_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                        const mcp_error *error)
{
    (void)result_len;
    (void)error;
    struct hub_done *d = (struct hub_done *)userdata;
    d->status = status;
    if (status == MCP_OK && !first_text(result_json, d->text, sizeof d->text))
        d->text[0] = '\0';
    AINC(&d->calls);
}

/* Started calls, then members set and removed one at a time, as reloads. */
static void test_started_calls_and_member_changes(void)
{
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new(NULL, &hub, &err), MCP_OK, err);
    char member[1024];
    fixture_member_json(member, sizeof member);
    CHECK_STATUS(mcp_hub_add_member(hub, "fix", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);

    static struct hub_done done;
    memset(&done, 0, sizeof done);
    mcp_call *call = NULL;
    CHECK_STATUS(mcp_hub_call_tool_start(hub, "fix__echo", "{\"text\":\"started\"}", NULL, on_hub_done, &done,
                                         &call, &err),
                 MCP_OK, err);
    CHECK(wait_count(&done.calls, 1, tscale(5000)));
    EXPECT(done.status == MCP_OK && strcmp(done.text, "started") == 0);
    mcp_call_free(call);
    memset(&done, 0, sizeof done);
    CHECK_STATUS(mcp_hub_get_prompt_start(hub, "fix__greeting", "{\"name\":\"S\"}", NULL, on_hub_done, &done,
                                          NULL, &err),
                 MCP_OK, err);
    CHECK(wait_count(&done.calls, 1, tscale(5000)));
    EXPECT(done.status == MCP_OK);
    memset(&done, 0, sizeof done);
    CHECK_STATUS(mcp_hub_read_resource_start(hub, "nobody", "fixture://static", NULL, on_hub_done, &done, NULL,
                                             &err),
                 MCP_OK, err);
    CHECK(wait_count(&done.calls, 1, tscale(5000)));
    EXPECT(done.status == MCP_INVALID_ARG);
    memset(&done, 0, sizeof done);
    CHECK_STATUS(mcp_hub_read_resource_start(hub, "fix", "fixture://static", NULL, on_hub_done, &done, NULL, &err),
                 MCP_OK, err);
    CHECK(wait_count(&done.calls, 1, tscale(5000)));
    EXPECT(done.status == MCP_OK);

    /* set_member: a new member starts; an equal one stays; remove_member closes one. */
    CHECK_STATUS(mcp_hub_set_member(hub, "more", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_set_member(hub, "fix", member, &err), MCP_OK, err);
    char *states = NULL;
    CHECK_STATUS(mcp_hub_members_json(hub, &states, &err), MCP_OK, err);
    EXPECT_CONTAINS(states, "{\"name\":\"more\",\"state\":\"connected\"");
    mcp_string_free(states);
    char *result = NULL;
    CHECK_STATUS(mcp_hub_call_tool(hub, "more__echo", "{\"text\":\"more\"}", NULL, &result, &err), MCP_OK, err);
    mcp_string_free(result);
    CHECK_STATUS(mcp_hub_remove_member(hub, "fix", &err), MCP_OK, err);
    EXPECT_STATUS(mcp_hub_remove_member(hub, "fix", &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    CHECK_STATUS(mcp_hub_members_json(hub, &states, &err), MCP_OK, err);
    CHECK_NOT_CONTAINS(states, "\"fix\"");
    mcp_string_free(states);

    /* Free with a started call in flight: it completes (MCP_CLOSED) before free returns. */
    memset(&done, 0, sizeof done);
    CHECK_STATUS(mcp_hub_call_tool_start(hub, "more__hang", NULL, NULL, on_hub_done, &done, NULL, &err), MCP_OK,
                 err);
    mcp_hub_free(hub);
    EXPECT(ALOAD(&done.calls) == 1 && done.status == MCP_CLOSED);
}

static void test_bad_options(void)
{
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    EXPECT_STATUS(mcp_hub_new("{\"separater\":\"-\"}", &hub, &err), MCP_INVALID_ARG, err);
    EXPECT(hub == NULL);
    if (err)
        EXPECT_CONTAINS(mcp_error_message(err), "separater");
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_hub_new(NULL, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
}

const struct test_case hub_tests[] = {
    {"hub/members_lists_calls", test_members_lists_calls},
    {"hub/started_calls_and_member_changes", test_started_calls_and_member_changes},
    {"hub/bad_options", test_bad_options},
};
const size_t hub_tests_count = sizeof hub_tests / sizeof hub_tests[0];
