/* The hub (mcp_hub_*): fixture members and a member that cannot start, the merged list under
 * namespaced names, routed calls, states as JSON, events on the listener, close and free; hubs
 * read from host configuration files, their warnings and reloads. */
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
             fixture_path_json());
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

/* ---- the hub's span listener and trace context callback ----------------------------------- */

/* Span records, one a line, and how many came on the thread that made the hub's call. */
struct hub_spans {
    struct collector col;
    pthread_t caller;
    int on_caller;
    int freed;
};

static void on_hub_span(void *userdata, const char *span_json, size_t span_len)
{
    struct hub_spans *s = (struct hub_spans *)userdata;
    pthread_mutex_lock(&s->col.lock);
    if (pthread_equal(pthread_self(), s->caller))
        s->on_caller++;
    size_t room = sizeof s->col.buf - s->col.len;
    if (span_len == strlen(span_json) && span_len + 2 <= room) {
        memcpy(s->col.buf + s->col.len, span_json, span_len);
        s->col.len += span_len;
        s->col.buf[s->col.len++] = '\n';
        s->col.buf[s->col.len] = '\0';
    }
    s->col.count++;
    pthread_mutex_unlock(&s->col.lock);
}

static void free_hub_spans(void *userdata)
{
    AINC(&((struct hub_spans *)userdata)->freed);
}

/* The records so far, and how many came on the caller's thread (read under the lock). */
static int span_count(struct hub_spans *s, int *on_caller)
{
    pthread_mutex_lock(&s->col.lock);
    int n = s->col.count;
    if (on_caller)
        *on_caller = s->on_caller;
    pthread_mutex_unlock(&s->col.lock);
    return n;
}

/* Drops the records collected so far. */
static void hub_spans_reset(struct hub_spans *s)
{
    pthread_mutex_lock(&s->col.lock);
    s->col.len = 0;
    s->col.buf[0] = '\0';
    s->col.count = 0;
    s->on_caller = 0;
    s->caller = pthread_self();
    pthread_mutex_unlock(&s->col.lock);
}

/* The host's "current span": each ask gives a new span id (0..), counted, on the asking thread. */
struct hub_trace {
    int asked;
    int on_caller;
    int freed;
    pthread_t caller;
    char last[64];
};

static void hub_traceparent(int n, char *buf, size_t len)
{
    snprintf(buf, len, "00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", (unsigned)(0x1000 + n));
}

static void give_hub_trace(void *userdata, mcp_trace_slot *slot)
{
    struct hub_trace *t = (struct hub_trace *)userdata;
    if (pthread_equal(pthread_self(), t->caller))
        t->on_caller++;
    hub_traceparent(t->asked++, t->last, sizeof t->last);
    if (mcp_trace_slot_set(slot, t->last, "rojo=00f067aa0ba902b7", "member=any", NULL) != MCP_OK)
        t->asked += 1000; /* shows as a wrong count */
}

static void free_hub_trace(void *userdata)
{
    AINC(&((struct hub_trace *)userdata)->freed);
}

/* The record (one line of `text`) whose span name is `name` and that names member `server`, in
 * `out`; false when there is none. */
static bool hub_record(const char *text, const char *name, const char *server, char *out, size_t n)
{
    char want_name[128], want_server[128];
    snprintf(want_name, sizeof want_name, "\"name\":\"%s\"", name);
    snprintf(want_server, sizeof want_server, "\"mcp.server.name\":\"%s\"", server);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len < n) {
            memcpy(out, line, len);
            out[len] = '\0';
            if (strstr(out, want_name) && strstr(out, want_server))
                return true;
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

/* One listener and one trace context callback on the hub cover every member, added later ones
 * included: each record names its member (mcp.server.name), a routed call carries the host's
 * context to the member's request _meta (and its record names it as parent), each context
 * given has its record, records of blocking calls come on the calling thread before the call
 * returns, a started call's before its completion; removing either frees its userdata once. */
static void test_spans_and_trace_context(void)
{
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new(NULL, &hub, &err), MCP_OK, err);
    static struct hub_spans spans;
    memset(&spans, 0, sizeof spans);
    collector_init(&spans.col);
    spans.caller = pthread_self();
    static struct hub_trace trace;
    memset(&trace, 0, sizeof trace);
    trace.caller = pthread_self();
    char member[1024];
    fixture_member_json(member, sizeof member);
    CHECK_STATUS(mcp_hub_add_member(hub, "fix", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_add_member(hub, "alt", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_on_span(hub, on_hub_span, &spans, free_hub_spans, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_set_trace_context_fn(hub, give_hub_trace, &trace, free_hub_trace, &err), MCP_OK, err);

    /* The start's connects: a handshake record per member, named by it; no context asked. */
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    CHECK(collector_wait(&spans.col, "\"mcp.server.name\":\"alt\"", tscale(5000)));
    CHECK(collector_wait(&spans.col, "\"mcp.server.name\":\"fix\"", tscale(5000)));
    char *text = collector_text(&spans.col);
    EXPECT_CONTAINS(text, "\"name\":\"server/discover\"");
    CHECK_NOT_CONTAINS(text, "\"parent\"");
    free(text);
    EXPECT(trace.asked == 0);

    /* A merged list: one tools/list per member, each under a context of its own. */
    hub_spans_reset(&spans);
    char *result = NULL;
    CHECK_STATUS(mcp_hub_list(hub, MCP_LIST_PROMPTS, &result, &err), MCP_OK, err);
    mcp_string_free(result);
    int on_caller = 0;
    EXPECT(span_count(&spans, &on_caller) == 2 && on_caller == 2);
    EXPECT(trace.asked == 2 && trace.on_caller == 2);
    text = collector_text(&spans.col);
    char record[2048], parent[64];
    EXPECT(hub_record(text, "prompts/list", "fix", record, sizeof record));
    EXPECT(hub_record(text, "prompts/list", "alt", record, sizeof record));
    for (int i = 0; i < 2; i++) {
        hub_traceparent(i, parent, sizeof parent);
        EXPECT(count_occurrences(text, parent) == 1);
    }
    free(text);

    /* A routed blocking call: the member's request carries the context its record names. The
     * tool list it routes by is fetched first (asked too); every context has its record. */
    hub_spans_reset(&spans);
    int before = trace.asked;
    CHECK_STATUS(mcp_hub_call_tool(hub, "alt__echo_meta", NULL, NULL, &result, &err), MCP_OK, err);
    EXPECT_CONTAINS(result, "rojo=00f067aa0ba902b7");
    EXPECT_CONTAINS(result, "member=any");
    EXPECT_CONTAINS(result, trace.last); /* the last ask was the tools/call's */
    text = collector_text(&spans.col);
    EXPECT(hub_record(text, "tools/call echo_meta", "alt", record, sizeof record));
    EXPECT_CONTAINS(record, trace.last);
    EXPECT_CONTAINS(record, "\"gen_ai.tool.name\":\"echo_meta\"");
    EXPECT(hub_record(text, "tools/list", "fix", record, sizeof record));
    EXPECT(hub_record(text, "tools/list", "alt", record, sizeof record));
    EXPECT(trace.asked - before == 3); /* fix's and alt's tools/list, the tools/call */
    for (int i = before; i < trace.asked; i++) {
        hub_traceparent(i, parent, sizeof parent);
        EXPECT_MSG(strstr(text, parent) != NULL, "no record has context %d", i);
    }
    EXPECT(span_count(&spans, &on_caller) == on_caller);
    EXPECT(count_occurrences(text, "\"parent\"") == span_count(&spans, NULL));
    free(text);
    mcp_string_free(result);

    /* Per-call context wins: nothing asked, the record's parent is the call's. */
    hub_spans_reset(&spans);
    before = trace.asked;
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.meta_json = "{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}";
    CHECK_STATUS(mcp_hub_call_tool(hub, "fix__echo", "{\"text\":\"own\"}", &opts, &result, &err), MCP_OK, err);
    mcp_string_free(result);
    EXPECT(trace.asked == before);
    text = collector_text(&spans.col);
    EXPECT(hub_record(text, "tools/call echo", "fix", record, sizeof record));
    EXPECT_CONTAINS(record, "b7ad6b7169203331");
    free(text);

    /* A started call: asked once inside *_start, its record before its completion. */
    hub_spans_reset(&spans);
    before = trace.asked;
    static struct hub_done done;
    memset(&done, 0, sizeof done);
    CHECK_STATUS(mcp_hub_call_tool_start(hub, "fix__echo_meta", NULL, NULL, on_hub_done, &done, NULL, &err),
                 MCP_OK, err);
    EXPECT(trace.asked == before + 1);
    CHECK(wait_count(&done.calls, 1, tscale(5000)));
    EXPECT(done.status == MCP_OK);
    EXPECT(span_count(&spans, NULL) == 1); /* delivered before the completion ran */
    text = collector_text(&spans.col);
    EXPECT(hub_record(text, "tools/call echo_meta", "fix", record, sizeof record));
    EXPECT_CONTAINS(record, trace.last);
    free(text);

    /* A member added later, by a reload: the same listener and callback. */
    CHECK_STATUS(mcp_hub_set_member(hub, "late", member, &err), MCP_OK, err);
    hub_spans_reset(&spans);
    CHECK_STATUS(mcp_hub_call_tool(hub, "late__echo_meta", NULL, NULL, &result, &err), MCP_OK, err);
    EXPECT_CONTAINS(result, trace.last);
    mcp_string_free(result);
    text = collector_text(&spans.col);
    EXPECT(hub_record(text, "tools/call echo_meta", "late", record, sizeof record));
    EXPECT_CONTAINS(record, trace.last);
    free(text);

    /* Closing ends each member's session: a session record per member, named by it. */
    hub_spans_reset(&spans);
    CHECK_STATUS(mcp_hub_close(hub, &err), MCP_OK, err);
    CHECK(collector_wait(&spans.col, "\"record\":\"session\"", tscale(5000)));
    for (int i = 0; i < 50 && collector_count(&spans.col, "\"record\":\"session\"") < 3; i++)
        sleep_ms(tscale(20));
    text = collector_text(&spans.col);
    EXPECT(count_occurrences(text, "\"record\":\"session\"") == 3);
    EXPECT_CONTAINS(text, "\"mcp.server.name\":\"late\"");
    EXPECT_CONTAINS(text, "\"mcp.server.name\":\"fix\"");
    EXPECT_CONTAINS(text, "\"mcp.server.name\":\"alt\"");
    free(text);

    /* Removing either frees its userdata once; NULL arguments are refused. */
    CHECK_STATUS(mcp_hub_on_span(hub, NULL, NULL, NULL, &err), MCP_OK, err);
    EXPECT(ALOAD(&spans.freed) == 1);
    CHECK_STATUS(mcp_hub_set_trace_context_fn(hub, NULL, NULL, NULL, &err), MCP_OK, err);
    EXPECT(ALOAD(&trace.freed) == 1);
    EXPECT(mcp_hub_on_span(NULL, on_hub_span, NULL, NULL, NULL) == MCP_NULL_ARG);
    EXPECT(mcp_hub_set_trace_context_fn(NULL, give_hub_trace, NULL, NULL, NULL) == MCP_NULL_ARG);
    mcp_hub_free(hub);
    EXPECT(ALOAD(&spans.freed) == 1 && ALOAD(&trace.freed) == 1);
    collector_destroy(&spans.col);
}

/* Freeing the hub frees the listener's and the callback's userdata, once each. */
static void test_spans_freed_with_hub(void)
{
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new(NULL, &hub, &err), MCP_OK, err);
    static struct hub_spans spans;
    memset(&spans, 0, sizeof spans);
    collector_init(&spans.col);
    static struct hub_trace trace;
    memset(&trace, 0, sizeof trace);
    CHECK_STATUS(mcp_hub_on_span(hub, on_hub_span, &spans, free_hub_spans, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_set_trace_context_fn(hub, give_hub_trace, &trace, free_hub_trace, &err), MCP_OK, err);
    /* Replacing one frees the one it replaces. */
    static struct hub_spans other;
    memset(&other, 0, sizeof other);
    collector_init(&other.col);
    CHECK_STATUS(mcp_hub_on_span(hub, on_hub_span, &other, free_hub_spans, &err), MCP_OK, err);
    EXPECT(ALOAD(&spans.freed) == 1);
    mcp_hub_free(hub);
    EXPECT(ALOAD(&spans.freed) == 1 && ALOAD(&other.freed) == 1 && ALOAD(&trace.freed) == 1);
    collector_destroy(&spans.col);
    collector_destroy(&other.col);
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


/* ---- hubs from a host's configuration file -------------------------------------------------- */

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

struct asked {
    int calls;
    bool password;
    char id[32];
    char description[64];
    char options[128];
    const char *answer; /* NULL declines */
};

static void on_input(void *userdata, const char *id, const char *description, bool password,
                     const char *default_value, mcp_hub_input_slot *slot)
{
    (void)default_value;
    struct asked *a = (struct asked *)userdata;
    a->calls++;
    a->password = password;
    snprintf(a->id, sizeof a->id, "%s", id);
    snprintf(a->description, sizeof a->description, "%s", description);
    char *options = NULL;
    mcp_error *oerr = NULL;
    CHECK_STATUS(mcp_hub_input_slot_options_json(slot, &options, &oerr), MCP_OK, oerr);
    snprintf(a->options, sizeof a->options, "%s", options);
    mcp_string_free(options);
    if (a->answer) {
        mcp_error *err = NULL;
        CHECK_STATUS(mcp_hub_input_slot_set(slot, a->answer, &err), MCP_OK, err);
    }
}

/* The three shapes (Claude Desktop, .mcp.json with `type`, VS Code with inputs), each read from
 * a file: fixture members connect, a disabled one stays disabled, an unset variable fails only
 * its own server, other hosts' keys are warnings, an input is asked once and reaches the server. */
static void test_from_file_shapes(void)
{
    char dir[512], path[600], text[4096];
    CHECK(temp_dir(dir, sizeof dir, "hubfile"));
    snprintf(path, sizeof path, "%s/claude_desktop_config.json", dir);
    const char *fix = fixture_path_json();
    snprintf(text, sizeof text,
             "{\n  // Claude Desktop, with another host's keys\n"
             "  \"mcpServers\": {\n"
             "    \"fix\": {\"command\": \"%s\", \"args\": [], \"autoApprove\": [\"echo\"]},\n"
             "    \"broken\": {\"command\": \"${MCP_CTEST_UNSET_VARIABLE}\"},\n"
             "    \"off\": {\"command\": \"%s\", \"disabled\": true},\n"
             "  },\n  \"globalShortcut\": \"\"\n}\n",
             fix, fix);
    CHECK(write_text(path, text));
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new_from_file(path, NULL, NULL, &hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    char *json = NULL;
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"fix\",\"state\":\"connected\"");
    EXPECT_CONTAINS(json, "{\"name\":\"broken\",\"state\":\"failed\"");
    EXPECT_CONTAINS(json, "MCP_CTEST_UNSET_VARIABLE");
    EXPECT_CONTAINS(json, "{\"name\":\"off\",\"state\":\"disabled\"");
    mcp_string_free(json);
    CHECK_STATUS(mcp_hub_warnings_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "autoApprove");
    EXPECT_CONTAINS(json, "\\\"fix\\\"");
    mcp_string_free(json);
    char *result = NULL;
    CHECK_STATUS(mcp_hub_call_tool(hub, "fix__echo", "{\"text\":\"from a file\"}", NULL, &result, &err), MCP_OK,
                 err);
    char got[64];
    EXPECT(first_text(result, got, sizeof got) && strcmp(got, "from a file") == 0);
    mcp_string_free(result);
    mcp_hub_free(hub);

    /* Claude Code's .mcp.json: `type` given; the working directory is the workspace folder. */
    snprintf(path, sizeof path, "%s/.mcp.json", dir);
    snprintf(text, sizeof text,
             "{\"mcpServers\": {\"typed\": {\"type\": \"stdio\", \"command\": \"%s\", "
             "\"args\": [\"--era\", \"legacy\"], \"cwd\": \"${workspaceFolder}\"}}}",
             fix);
    CHECK(write_text(path, text));
    mcp_hub_read_opts read;
    CHECK(mcp_hub_read_opts_init(&read, MCP_HUB_READ_OPTS_VERSION) == MCP_OK);
    read.workspace_folder = dir;
    CHECK_STATUS(mcp_hub_new_from_file(path, "{\"separator\":\"-\"}", &read, &hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"typed\",\"state\":\"connected\",\"era\":\"legacy\"");
    mcp_string_free(json);
    CHECK_STATUS(mcp_hub_call_tool(hub, "typed-echo", "{\"text\":\"typed\"}", NULL, &result, &err), MCP_OK, err);
    mcp_string_free(result);
    mcp_hub_free(hub);

    /* VS Code: `servers` and `inputs`; one input used by two servers is asked once. */
    snprintf(path, sizeof path, "%s/mcp.json", dir);
    snprintf(text, sizeof text,
             "{\"inputs\": [{\"type\": \"promptString\", \"id\": \"era\", \"description\": \"Protocol era\", "
             "\"password\": true}],\n"
             " \"servers\": {\"asked\": {\"type\": \"stdio\", \"command\": \"%s\", \"args\": [\"--era\", "
             "\"${input:era}\"]},\n"
             "             \"again\": {\"command\": \"%s\", \"args\": [\"--era=${input:era}\"]}}}",
             fix, fix);
    CHECK(write_text(path, text));
    struct asked asked;
    memset(&asked, 0, sizeof asked);
    asked.answer = "legacy";
    read.on_input = on_input;
    read.input_userdata = &asked;
    CHECK_STATUS(mcp_hub_new_from_file(path, NULL, &read, &hub, &err), MCP_OK, err);
    EXPECT(asked.calls == 1 && asked.password);
    EXPECT(strcmp(asked.id, "era") == 0 && strcmp(asked.description, "Protocol era") == 0);
    EXPECT(strcmp(asked.options, "[]") == 0);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"asked\",\"state\":\"connected\",\"era\":\"legacy\"");
    EXPECT_CONTAINS(json, "{\"name\":\"again\",\"state\":\"connected\",\"era\":\"legacy\"");
    mcp_string_free(json);
    mcp_hub_free(hub);

    /* Declined: the servers that use the input fail; the hub is still made. */
    memset(&asked, 0, sizeof asked);
    CHECK_STATUS(mcp_hub_new_from_file(path, NULL, &read, &hub, &err), MCP_OK, err);
    EXPECT(asked.calls == 1);
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"asked\",\"state\":\"failed\"");
    mcp_string_free(json);
    mcp_hub_free(hub);

    /* A pickString: the callback reads its options; an answer outside them fails its servers. */
    snprintf(text, sizeof text,
             "{\"inputs\": [{\"type\": \"pickString\", \"id\": \"era\", \"description\": \"Era\", "
             "\"options\": [\"legacy\", \"modern\"]}],\n"
             " \"servers\": {\"picked\": {\"command\": \"%s\", \"args\": [\"--era\", \"${input:era}\"]}}}",
             fix);
    CHECK(write_text(path, text));
    for (int round = 0; round < 2; round++) {
        memset(&asked, 0, sizeof asked);
        asked.answer = round == 0 ? "legacy" : "ancient";
        CHECK_STATUS(mcp_hub_new_from_file(path, NULL, &read, &hub, &err), MCP_OK, err);
        EXPECT(asked.calls == 1 && strcmp(asked.options, "[\"legacy\",\"modern\"]") == 0);
        CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
        CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
        EXPECT_CONTAINS(json, round == 0 ? "{\"name\":\"picked\",\"state\":\"connected\",\"era\":\"legacy\""
                                         : "not one of the input's options");
        mcp_string_free(json);
        mcp_hub_free(hub);
    }
}

/* Text instead of a file, and what fails the call itself: not JSON, no servers, no file. */
static void test_from_text_and_errors(void)
{
    char text[1024];
    snprintf(text, sizeof text, "{\"mcpServers\": {\"fix\": {\"command\": \"%s\"}}}", fixture_path_json());
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new_from_text(text, NULL, NULL, &hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    char *json = NULL;
    CHECK_STATUS(mcp_hub_list(hub, MCP_LIST_TOOLS, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "\"name\":\"fix__echo\"");
    mcp_string_free(json);
    CHECK_STATUS(mcp_hub_warnings_json(hub, &json, &err), MCP_OK, err);
    EXPECT(strcmp(json, "[]") == 0);
    mcp_string_free(json);
    mcp_hub_free(hub);

    /* A member set or removed one at a time leaves an entry the file could not build as it was. */
    snprintf(text, sizeof text,
             "{\"mcpServers\": {\"fix\": {\"command\": \"%s\"}, \"broken\": {\"command\": \"${MCP_CTEST_UNSET}\"}}}",
             fixture_path_json());
    CHECK_STATUS(mcp_hub_new_from_text(text, NULL, NULL, &hub, &err), MCP_OK, err);
    char member[1024];
    fixture_member_json(member, sizeof member);
    CHECK_STATUS(mcp_hub_set_member(hub, "more", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_remove_member(hub, "fix", &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"broken\",\"state\":\"failed\"");
    EXPECT_CONTAINS(json, "MCP_CTEST_UNSET");
    mcp_string_free(json);
    CHECK_STATUS(mcp_hub_set_member(hub, "broken", member, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"broken\",\"state\":\"connected\"");
    mcp_string_free(json);
    mcp_hub_free(hub);

    hub = NULL;
    EXPECT_STATUS(mcp_hub_new_from_text("{\"mcpServers\": ", NULL, NULL, &hub, &err), MCP_INVALID_ARG, err);
    EXPECT(hub == NULL);
    if (err)
        EXPECT_CONTAINS(mcp_error_message(err), "not JSON");
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_hub_new_from_text("{\"theme\": \"dark\"}", NULL, NULL, &hub, &err), MCP_INVALID_ARG, err);
    if (err)
        EXPECT_CONTAINS(mcp_error_message(err), "\"mcpServers\" or \"servers\"");
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_hub_new_from_file("/nonexistent/mcp.json", NULL, NULL, &hub, &err), MCP_IO, err);
    mcp_error_free(err);
    err = NULL;
    mcp_hub_read_opts read;
    EXPECT(mcp_hub_read_opts_init(&read, MCP_HUB_READ_OPTS_VERSION + 1) == MCP_INVALID_ARG);
    CHECK(mcp_hub_read_opts_init(&read, MCP_HUB_READ_OPTS_VERSION) == MCP_OK);
    read.version = 99;
    EXPECT_STATUS(mcp_hub_new_from_text(text, NULL, &read, &hub, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_hub_new_from_text(NULL, NULL, NULL, &hub, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
}

/* Reload from a changed file: unchanged members keep their connection, added ones start,
 * removed ones close, changed ones restart; an unreadable file changes nothing. */
/* A hub keeps the answers of its reads: a reload asks only for new or changed inputs. */
static void test_reload_asks_only_new_inputs(void)
{
    const char *fix = fixture_path_json();
    char text[2048];
    const char *one = "{\"type\": \"promptString\", \"id\": \"era\", \"description\": \"Era\"}";
    snprintf(text, sizeof text, "{\"inputs\": [%s], \"servers\": {\"a\": {\"command\": \"%s\", \"args\": [\"--era=${input:era}\"]}}}",
             one, fix);
    struct asked asked;
    memset(&asked, 0, sizeof asked);
    asked.answer = "legacy";
    mcp_hub_read_opts read;
    CHECK(mcp_hub_read_opts_init(&read, MCP_HUB_READ_OPTS_VERSION) == MCP_OK);
    read.on_input = on_input;
    read.input_userdata = &asked;
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new_from_text(text, NULL, &read, &hub, &err), MCP_OK, err);
    EXPECT(asked.calls == 1);
    CHECK_STATUS(mcp_hub_reload_from_text(hub, text, &read, NULL, &err), MCP_OK, err);
    EXPECT(asked.calls == 1);
    /* A new input is asked; the kept one is not, and still reaches its server. */
    snprintf(text, sizeof text,
             "{\"inputs\": [%s, {\"type\": \"promptString\", \"id\": \"more\", \"description\": \"More\"}],"
             " \"servers\": {\"a\": {\"command\": \"%s\", \"args\": [\"--era=${input:era}\"]},"
             " \"b\": {\"command\": \"%s\", \"args\": [\"--era=${input:more}\"]}}}",
             one, fix, fix);
    CHECK_STATUS(mcp_hub_reload_from_text(hub, text, &read, NULL, &err), MCP_OK, err);
    EXPECT(asked.calls == 2 && strcmp(asked.id, "more") == 0);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    char *json = NULL;
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"a\",\"state\":\"connected\",\"era\":\"legacy\"");
    mcp_string_free(json);
    /* A changed declaration is asked again; a new hub asks afresh. */
    char *changed = strstr(text, "\"Era\"");
    CHECK(changed != NULL);
    changed[1] = 'e';
    CHECK_STATUS(mcp_hub_reload_from_text(hub, text, &read, NULL, &err), MCP_OK, err);
    EXPECT(asked.calls == 3 && strcmp(asked.id, "era") == 0);
    mcp_hub_free(hub);
    CHECK_STATUS(mcp_hub_new_from_text(text, NULL, &read, &hub, &err), MCP_OK, err);
    EXPECT(asked.calls == 5);
    mcp_hub_free(hub);
}

static void test_reload_from_file(void)
{
    char dir[512], path[600], text[4096];
    CHECK(temp_dir(dir, sizeof dir, "hubreload"));
    snprintf(path, sizeof path, "%s/.mcp.json", dir);
    const char *fix = fixture_path_json();
    snprintf(text, sizeof text,
             "{\"mcpServers\": {\"keep\": {\"command\": \"%s\"}, \"change\": {\"command\": \"%s\"}, "
             "\"gone\": {\"command\": \"%s\"}}}",
             fix, fix, fix);
    CHECK(write_text(path, text));
    mcp_error *err = NULL;
    mcp_hub *hub = NULL;
    CHECK_STATUS(mcp_hub_new_from_file(path, NULL, NULL, &hub, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_start(hub, &err), MCP_OK, err);
    static struct hub_events ev;
    memset(&ev, 0, sizeof ev);
    CHECK_STATUS(mcp_hub_on_event(hub, on_hub_event, &ev, free_hub_events, &err), MCP_OK, err);

    snprintf(text, sizeof text,
             "{\"mcpServers\": {\"keep\": {\"command\": \"%s\"}, \"change\": {\"command\": \"%s\", "
             "\"args\": [\"--era\", \"legacy\"], \"alwaysAllow\": []}, \"new\": {\"command\": \"%s\"}}}",
             fix, fix, fix);
    CHECK(write_text(path, text));
    char *report = NULL;
    CHECK_STATUS(mcp_hub_reload_from_file(hub, path, NULL, &report, &err), MCP_OK, err);
    EXPECT_CONTAINS(report, "\"added\":[\"new\"]");
    EXPECT_CONTAINS(report, "\"removed\":[\"gone\"]");
    EXPECT_CONTAINS(report, "\"restarted\":[\"change\"]");
    EXPECT_CONTAINS(report, "\"unchanged\":[\"keep\"]");
    mcp_string_free(report);
    /* Two members connected again (change, new); keep's connection was never touched. */
    EXPECT(wait_count(&ev.connected, 2, tscale(5000)));
    char *json = NULL;
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "{\"name\":\"change\",\"state\":\"connected\",\"era\":\"legacy\"");
    CHECK_NOT_CONTAINS(json, "\"gone\"");
    mcp_string_free(json);
    CHECK_STATUS(mcp_hub_warnings_json(hub, &json, &err), MCP_OK, err);
    EXPECT_CONTAINS(json, "alwaysAllow");
    mcp_string_free(json);
    char *result = NULL;
    CHECK_STATUS(mcp_hub_call_tool(hub, "new__echo", "{\"text\":\"n\"}", NULL, &result, &err), MCP_OK, err);
    mcp_string_free(result);

    /* The same text again: nothing restarts. Broken text: an error, members untouched. */
    CHECK_STATUS(mcp_hub_reload_from_text(hub, text, NULL, &report, &err), MCP_OK, err);
    EXPECT_CONTAINS(report, "\"unchanged\":[\"keep\",\"change\",\"new\"]");
    mcp_string_free(report);
    EXPECT_STATUS(mcp_hub_reload_from_text(hub, "{", NULL, NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    CHECK_STATUS(mcp_hub_reload_from_file(hub, path, NULL, NULL, &err), MCP_OK, err);
    CHECK_STATUS(mcp_hub_members_json(hub, &json, &err), MCP_OK, err);
    EXPECT(count_occurrences(json, "\"state\":\"connected\"") == 3);
    mcp_string_free(json);
    mcp_hub_free(hub);
}

const struct test_case hub_tests[] = {
    {"hub/members_lists_calls", test_members_lists_calls},
    {"hub/started_calls_and_member_changes", test_started_calls_and_member_changes},
    {"hub/bad_options", test_bad_options},
    {"hub/spans_and_trace_context", test_spans_and_trace_context},
    {"hub/spans_freed_with_hub", test_spans_freed_with_hub},
    {"hub/from_file_shapes", test_from_file_shapes},
    {"hub/from_text_and_errors", test_from_text_and_errors},
    {"hub/reload_from_file", test_reload_from_file},
    {"hub/reload_asks_only_new_inputs", test_reload_asks_only_new_inputs},
};
const size_t hub_tests_count = sizeof hub_tests / sizeof hub_tests[0];
