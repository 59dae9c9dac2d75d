/* Multi Round-Trip Requests through the C ABI: handlers answering inside the callback, later
 * from another thread, never, wrongly, or after cancellation; manual driving with the error's
 * inputRequests / requestState; round limits. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

/* The fixture's requestState strings (tests/fixture-server/README.md), byte for byte: "\\n" is
 * a backslash and an n; \xc3\xa9 is "é"; \xf0\x9f\x94\x91 is the key emoji. */
#define STATE(flow, round, values, sum)                                                        \
    "st\xc3\xa9:" #round " {\"flow\":\"" flow "\",\"round\":" #round ",\"values\":[" values     \
    "]} +/=\\n \xf0\x9f\x94\x91#" sum
static const char STATE_ELICIT_ONCE[] = STATE("elicit_once", 1, "", "4bf93ac3968345b1");
static const char STATE_THREE_1[] = STATE("three_rounds", 1, "", "3ca41149c919ad5b");
static const char STATE_THREE_2_A[] = STATE("three_rounds", 2, "\"a\"", "786de8b116c83101");
static const char STATE_ELICIT_SAMPLE[] = STATE("elicit_and_sample", 1, "", "5aba1d9d4fd39a2c");
static const char STATE_ROOTS[] = STATE("roots", 1, "", "834eeac450e06050");
static const char STATE_SAMPLE_ONLY[] = STATE("sample_only", 1, "", "9fbc21247441f708");
static const char STATE_PROMPT[] = STATE("prompt:needs_input", 1, "", "6f3148e0fcc9ec09");
static const char STATE_RESOURCE[] = STATE("resource:needs-input", 1, "", "6e57aa8f7932cf65");

#define ACCEPT_NAME(n) "{\"action\":\"accept\",\"content\":{\"name\":\"" n "\"}}"
#define SAMPLING_REPLY                                                                         \
    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"A short summary\"},"    \
    "\"model\":\"c-test-model\",\"stopReason\":\"endTurn\"}"
#define ROOTS_REPLY "{\"roots\":[{\"uri\":\"file:///a\",\"name\":\"A\"},{\"uri\":\"file:///b\"}]}"

/* ---- a scriptable input handler --------------------------------------------------------------- */

enum script_mode { SCRIPT_REPLY, SCRIPT_ERROR, SCRIPT_SILENT, SCRIPT_DEFER, SCRIPT_URL };

struct script {
    enum script_mode mode;
    const char *replies[8]; /* reply i for call i; the last non-NULL one repeats */
    int64_t error_code;
    const char *error_message;
    pthread_t main_thread;
    /* observed */
    int calls; /* callbacks started */
    int done;  /* callbacks finished (their reply_status is set) */
    int on_main_thread;
    int bad_len;
    mcp_status reply_status[8];
    char method[64];
    char params[2048];
    mcp_responder *deferred; /* SCRIPT_DEFER: the last responder, for another thread */
    struct counted ud;
};

static void script_init(struct script *s, enum script_mode mode)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->main_thread = pthread_self();
    for (int i = 0; i < 8; i++)
        s->reply_status[i] = -1;
}

static void script_handler(void *userdata, const char *method, const char *params_json,
                           size_t params_len, mcp_responder *responder)
{
    struct script *s = (struct script *)userdata;
    int i = AINC(&s->calls) - 1;
    if (pthread_equal(pthread_self(), s->main_thread))
        AINC(&s->on_main_thread);
    if (params_json == NULL || strlen(params_json) != params_len)
        AINC(&s->bad_len);
    snprintf(s->method, sizeof s->method, "%s", method ? method : "(null)");
    snprintf(s->params, sizeof s->params, "%s", params_json ? params_json : "(null)");
    mcp_status st = MCP_OK;
    switch (s->mode) {
    case SCRIPT_REPLY: {
        const char *reply = NULL;
        for (int k = i < 7 ? i : 7; k >= 0 && reply == NULL; k--)
            reply = s->replies[k];
        st = mcp_responder_reply_json(responder, reply ? reply : "{}", NULL);
        break;
    }
    case SCRIPT_ERROR:
        st = mcp_responder_reply_error(responder, s->error_code, s->error_message, NULL);
        break;
    case SCRIPT_SILENT:
        break;
    case SCRIPT_URL: /* the authorization callback's answer, given to an input responder */
        st = mcp_responder_reply_url(responder, "http://127.0.0.1:1/cb?code=x", NULL);
        break;
    case SCRIPT_DEFER:
        mcp_responder_defer(responder);
        __atomic_store_n(&s->deferred, responder, __ATOMIC_SEQ_CST);
        break;
    }
    if (i >= 0 && i < 8)
        s->reply_status[i] = st;
    AINC(&s->done);
}

/* Waits for `n` finished callbacks (a reply can release the call before its callback returns),
 * then checks that exactly `n` ran. */
static bool settled(struct script *s, int n)
{
    return wait_count(&s->done, n, tscale(2000)) && ALOAD(&s->calls) == n && ALOAD(&s->done) == n;
}

static void script_free(void *userdata)
{
    struct script *s = (struct script *)userdata;
    AINC(&s->ud.frees);
}

static mcp_responder *wait_deferred(struct script *s, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    mcp_responder *r;
    while ((r = __atomic_load_n(&s->deferred, __ATOMIC_SEQ_CST)) == NULL && now_ms() < end)
        sleep_ms(2);
    return r;
}

static bool register_input(mcp_client *c, const char *kind, struct script *s)
{
    mcp_error *err = NULL;
    mcp_status st;
    if (strcmp(kind, "elicitation") == 0)
        st = mcp_client_on_elicitation(c, script_handler, s, script_free, &err);
    else if (strcmp(kind, "sampling") == 0)
        st = mcp_client_on_sampling(c, script_handler, s, script_free, &err);
    else
        st = mcp_client_on_roots(c, script_handler, s, script_free, &err);
    bool ok = t_status(__FILE__, __LINE__, kind, st, MCP_OK, err);
    mcp_error_free(err);
    return ok;
}

/* Calls `tool` and returns its first text block in `text` (MCP_OK expected). */
static bool call_text(mcp_client *c, const char *tool, const char *args, char *text, size_t n)
{
    char *out = tool_ok(c, tool, args);
    bool ok = out != NULL && first_text(out, text, n);
    if (out != NULL && !ok)
        t_fail(__FILE__, __LINE__, "no text in %s", out);
    mcp_string_free(out);
    return ok;
}

/* ---- automatic driving ----------------------------------------------------------------------- */

static void elicit_once_in(const char *era)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "mrtr-args"));
    mcp_client *c = fixture_client("--era", era, "--record", rec, (const char *)NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_REPLY);
    s.replies[0] = ACCEPT_NAME("Ada");
    CHECK(register_input(c, "elicitation", &s));
    char text[256];
    /* (The tool ignores its arguments; each leg must still carry them.) */
    EXPECT(call_text(c, "elicit_once", "{\"tag\": \"leg\\u00e9\",\n\"n\":[1]}", text, sizeof text) &&
           strcmp(text, "Hello, Ada!") == 0);
    char *log = slurp(rec, NULL);
    /* modern: the first leg and the retry (MRTR); legacy: one request, the server asks back */
    EXPECT(count_occurrences(log, "\"arguments\":{\"tag\": \"leg\\u00e9\", \"n\":[1]}") ==
           (strcmp(era, "modern") == 0 ? 2 : 1));
    free(log);
    remove(rec);
    EXPECT(settled(&s, 1));
    EXPECT(strcmp(s.method, "elicitation/create") == 0);
    EXPECT_CONTAINS(s.params, "What is your name?");
    EXPECT_CONTAINS(s.params, "\"requestedSchema\"");
    EXPECT(s.bad_len == 0);
    EXPECT(s.on_main_thread == 0);
    EXPECT(s.reply_status[0] == MCP_OK);
    mcp_client_free(c);
    EXPECT(s.ud.frees == 1);
}

static void test_elicit_once_modern(void) { elicit_once_in("modern"); }
static void test_elicit_once_legacy(void) { elicit_once_in("legacy"); }

static void test_elicit_other_flows(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_REPLY);
    s.replies[0] = "{\"action\":\"accept\",\"content\":{\"value\":\"a\"}}";
    s.replies[1] = "{\"action\":\"accept\",\"content\":{\"value\":\"b\"}}";
    s.replies[2] = "{\"action\":\"decline\"}";
    CHECK(register_input(c, "elicitation", &s));
    char text[256];
    EXPECT(call_text(c, "three_rounds", NULL, text, sizeof text) &&
           strcmp(text, "steps: a,b,(decline)") == 0);
    EXPECT(settled(&s, 3));

    /* prompts/get and resources/read drive MRTR too */
    s.calls = s.done = 0;
    memset(s.replies, 0, sizeof s.replies);
    s.replies[0] = "{\"action\":\"accept\",\"content\":{\"topic\":\"C ABIs\"}}";
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_get_prompt(c, "needs_input", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "Topic: C ABIs");
    mcp_string_free(out);
    out = NULL;
    s.replies[0] = "{\"action\":\"accept\",\"content\":{\"password\":\"hunter2\"}}";
    EXPECT_STATUS(
        mcp_client_read_resource(c, "fixture://needs-input", NULL, NULL, NULL, &out, &err),
        MCP_OK, err);
    EXPECT_CONTAINS(out, "secret accepted");
    mcp_string_free(out);
    out = NULL;
    /* and a raw tools/call request */
    s.replies[0] = ACCEPT_NAME("Raw");
    EXPECT_STATUS(mcp_client_request(c, "tools/call", "{\"name\":\"elicit_once\"}", NULL, &out,
                                     &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "Hello, Raw!");
    mcp_string_free(out);
    /* state-only rounds need no handler at all */
    EXPECT(call_text(c, "state_only", NULL, text, sizeof text) &&
           strcmp(text, "done after 2 state-only rounds") == 0);
    /* a flow without requestState */
    s.replies[0] = "{\"action\":\"accept\",\"content\":{\"ok\":true}}";
    EXPECT(call_text(c, "no_state", NULL, text, sizeof text) && strcmp(text, "no state ok") == 0);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void sample_and_roots_in(const char *era)
{
    mcp_client *c = fixture_client("--era", era, (const char *)NULL);
    CHECK(c != NULL);
    struct script el, sa, ro;
    script_init(&el, SCRIPT_REPLY);
    script_init(&sa, SCRIPT_REPLY);
    script_init(&ro, SCRIPT_REPLY);
    el.replies[0] = "{\"action\":\"accept\",\"content\":{\"confirmed\":true}}";
    sa.replies[0] = SAMPLING_REPLY;
    ro.replies[0] = ROOTS_REPLY;
    CHECK(register_input(c, "elicitation", &el));
    CHECK(register_input(c, "sampling", &sa));
    CHECK(register_input(c, "roots", &ro));
    char text[256];
    EXPECT(call_text(c, "elicit_and_sample", NULL, text, sizeof text) &&
           strcmp(text, "confirm=accept; summary=A short summary") == 0);
    EXPECT(settled(&el, 1) && settled(&sa, 1));
    EXPECT(strcmp(sa.method, "sampling/createMessage") == 0);
    EXPECT_CONTAINS(sa.params, "Summarise the fixture");
    EXPECT(call_text(c, "roots", NULL, text, sizeof text) &&
           strcmp(text, "roots: file:///a,file:///b") == 0);
    EXPECT(settled(&ro, 1));
    EXPECT(strcmp(ro.method, "roots/list") == 0);
    /* the server sent no params: the handler sees {} */
    EXPECT_MSG(strcmp(ro.params, "{}") == 0, "roots/list params: %s", ro.params);
    EXPECT(call_text(c, "sample_only", NULL, text, sizeof text) &&
           strcmp(text, "sampled: A short summary") == 0);
    EXPECT(el.bad_len == 0 && sa.bad_len == 0 && ro.bad_len == 0);
    mcp_client_free(c);
}

/* Sampling with tools (SEP-1577): mcp_config_set_sampling_tools declares sampling.tools; the
 * handler's params carry tools and toolChoice; its tool_use answer goes back to the server,
 * which follows with a round carrying the tool_result. */
#define TOOL_USE_REPLY                                                                           \
    "{\"role\":\"assistant\",\"model\":\"m\",\"stopReason\":\"toolUse\",\"content\":[{\"type\":"   \
    "\"tool_use\",\"id\":\"c-1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}]}"
static void sampling_with_tools_in(const char *era)
{
    mcp_config *cfg = fixture_config("--era", era, (const char *)NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_set_sampling_tools(cfg, true, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    struct script sa;
    script_init(&sa, SCRIPT_REPLY);
    sa.replies[0] = TOOL_USE_REPLY;
    sa.replies[1] = "{\"role\":\"assistant\",\"model\":\"m\",\"content\":{\"type\":\"text\",\"text\":\"mild\"}}";
    CHECK(register_input(c, "sampling", &sa));
    char text[256];
    EXPECT(call_text(c, "sample_with_tools", NULL, text, sizeof text) &&
           strcmp(text, "weather: mild; tool get_weather({\"city\":\"Paris\"}) id c-1") == 0);
    EXPECT(settled(&sa, 2));
    /* the last request: the tool result, tools still offered, their use forbidden */
    EXPECT_CONTAINS(sa.params, "\"toolUseId\":\"c-1\"");
    EXPECT_CONTAINS(sa.params, "\"name\":\"get_weather\"");
    EXPECT_CONTAINS(sa.params, "\"toolChoice\":{\"mode\":\"none\"}");
    mcp_client_free(c);

    /* Without sampling.tools no tools are offered, and the handler never runs. */
    c = fixture_client("--era", era, (const char *)NULL);
    CHECK(c != NULL);
    struct script bad;
    script_init(&bad, SCRIPT_REPLY);
    bad.replies[0] = TOOL_USE_REPLY;
    CHECK(register_input(c, "sampling", &bad));
    char *out = NULL;
    mcp_status st = mcp_client_call_tool(c, "sample_with_tools", NULL, NULL, NULL, NULL, &out, &err);
    if (strcmp(era, "modern") == 0) {
        /* without sampling.tools the server asks for the capability */
        EXPECT_STATUS(st, MCP_CAPABILITY_MISSING, err);
    } else {
        EXPECT(st == MCP_OK && out != NULL && strstr(out, "client lacks sampling.tools") != NULL);
    }
    mcp_error_free(err);
    mcp_string_free(out);
    EXPECT(ALOAD(&bad.calls) == 0);
    mcp_client_free(c);
}

static void test_sampling_with_tools_modern(void) { sampling_with_tools_in("modern"); }
static void test_sampling_with_tools_legacy(void) { sampling_with_tools_in("legacy"); }

static void test_sampling_and_roots_modern(void) { sample_and_roots_in("modern"); }
static void test_sampling_and_roots_legacy(void) { sample_and_roots_in("legacy"); }

/* A handler that returns without replying: elicitation means "decline"; sampling and roots
 * have no such default and fail the call. */
static void test_handler_returns_without_reply(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_SILENT);
    CHECK(register_input(c, "elicitation", &s));
    CHECK(register_input(c, "sampling", &s));
    char text[256];
    EXPECT(call_text(c, "elicit_once", NULL, text, sizeof text) &&
           strcmp(text, "Hello, stranger (declined)") == 0);
    EXPECT(settled(&s, 1));
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "sample_only", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_HANDLER_FAILED, err);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_reply_error(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_ERROR);
    s.error_code = -32001;
    s.error_message = "the user closed the dialog";
    CHECK(register_input(c, "elicitation", &s));
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_HANDLER_FAILED, err);
    EXPECT(out == SENTINEL_STR);
    EXPECT_CONTAINS(mcp_error_message(err), "the user closed the dialog");
    EXPECT(settled(&s, 1) && s.reply_status[0] == MCP_OK);
    mcp_error_free(err);
    err = NULL;
    /* NULL message and code 0: a generic error, same outcome */
    s.error_code = 0;
    s.error_message = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_HANDLER_FAILED, err);
    mcp_error_free(err);
    mcp_client_free(c);

    /* Legacy: the server receives the JSON-RPC error and reports it as a tool error. (Legacy
     * capabilities are declared at initialize: register before connecting.) */
    c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    s.error_code = -32001;
    s.error_message = "the user closed the dialog";
    s.calls = s.done = 0;
    CHECK(register_input(c, "elicitation", &s));
    out = tool_ok(c, "elicit_once", NULL);
    EXPECT_CONTAINS(out, "\"isError\":true");
    EXPECT_CONTAINS(out, "client error: the user closed the dialog");
    mcp_string_free(out);
    mcp_client_free(c);
}

/* Unusable replies: the reply call says why, and the call fails with MCP_HANDLER_FAILED. */
static void test_reply_bad_json(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_REPLY);
    CHECK(register_input(c, "elicitation", &s));
    const struct {
        const char *reply;
        mcp_status want;
    } cases[] = {
        {"{\"action\":", MCP_INVALID_JSON},
        {"[\"accept\"]", MCP_INVALID_ARG},
        {"\xff\xfe", MCP_INVALID_UTF8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s.calls = s.done = 0;
        s.replies[0] = cases[i].reply;
        char *out = SENTINEL_STR;
        mcp_error *err = NULL;
        EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                      MCP_HANDLER_FAILED, err);
        EXPECT(out == SENTINEL_STR);
        EXPECT(settled(&s, 1));
        EXPECT_MSG(s.reply_status[0] == cases[i].want, "reply %zu: status %d, want %d", i,
                   (int)s.reply_status[0], (int)cases[i].want);
        mcp_error_free(err);
    }
    mcp_client_free(c);
}

/* One responder type serves input handlers and the authorization callback: an input answered
 * with a redirect URL is refused (MCP_INVALID_ARG to the handler) and the call fails at once. */
static void test_reply_of_the_wrong_kind(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_URL);
    CHECK(register_input(c, "elicitation", &s));
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_HANDLER_FAILED, err);
    EXPECT(out == SENTINEL_STR);
    EXPECT(settled(&s, 1));
    EXPECT_MSG(s.reply_status[0] == MCP_INVALID_ARG, "status %d", (int)s.reply_status[0]);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* The handler defers; a thread answers once the handler returned (the call is then waiting). */
struct later_ctx {
    struct script *s;
    const char *reply;
    mcp_status st;
    int was_cancelled;
    int got;
};

static void *answer_later(void *arg)
{
    struct later_ctx *l = (struct later_ctx *)arg;
    mcp_responder *r = wait_deferred(l->s, tscale(3000));
    if (r == NULL)
        return NULL;
    ASTORE(&l->got, 1);
    wait_count(&l->s->done, 1, tscale(3000)); /* the handler returned without an answer */
    l->was_cancelled = mcp_responder_is_cancelled(r);
    mcp_error *err = NULL;
    l->st = mcp_responder_reply_json(r, l->reply, &err);
    mcp_error_free(err);
    return NULL;
}

static void test_defer_reply_from_thread(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_DEFER);
    CHECK(register_input(c, "elicitation", &s));
    struct later_ctx l;
    memset(&l, 0, sizeof l);
    l.s = &s;
    l.reply = ACCEPT_NAME("Later");
    l.st = -1;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, answer_later, &l) == 0);
    char *out = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err);
    pthread_join(th, NULL);
    EXPECT_STATUS(st, MCP_OK, err);
    EXPECT_CONTAINS(out, "Hello, Later!");
    EXPECT(l.got == 1);
    EXPECT(l.was_cancelled == 0);
    EXPECT(l.st == MCP_OK);
    mcp_string_free(out);
    mcp_error_free(err);

    /* Deferred sampling and roots answers, in the legacy era too. */
    mcp_client_free(c);
    c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    script_init(&s, SCRIPT_DEFER);
    CHECK(register_input(c, "roots", &s));
    memset(&l, 0, sizeof l);
    l.s = &s;
    l.reply = ROOTS_REPLY;
    l.st = -1;
    CHECK(pthread_create(&th, NULL, answer_later, &l) == 0);
    out = NULL;
    st = mcp_client_call_tool(c, "roots", NULL, NULL, NULL, NULL, &out, &err);
    pthread_join(th, NULL);
    EXPECT_STATUS(st, MCP_OK, err);
    EXPECT_CONTAINS(out, "roots: file:///a,file:///b");
    EXPECT(l.st == MCP_OK);
    mcp_string_free(out);
    mcp_client_free(c);
}

/* The handler never answers; another thread closes the client: the blocked call returns
 * MCP_CLOSED promptly, and the late reply is refused with MCP_CANCELLED. */
struct closer_ctx {
    struct script *s;
    mcp_client *c;
    double closed_at;
    int closed;
};

static void *close_when_deferred(void *arg)
{
    struct closer_ctx *x = (struct closer_ctx *)arg;
    if (wait_deferred(x->s, tscale(3000)) == NULL)
        return NULL;
    wait_count(&x->s->done, 1, tscale(3000)); /* the handler returned: the call waits */
    x->closed_at = now_ms();
    mcp_client_close(x->c);
    ASTORE(&x->closed, 1);
    return NULL;
}

static void test_close_unblocks_pending_input(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_DEFER);
    CHECK(register_input(c, "elicitation", &s));
    struct closer_ctx x;
    memset(&x, 0, sizeof x);
    x.s = &s;
    x.c = c;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, close_when_deferred, &x) == 0);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err);
    double returned = now_ms();
    pthread_join(th, NULL);
    EXPECT_STATUS(st, MCP_CLOSED, err);
    EXPECT(x.closed == 1);
    EXPECT_MSG(returned - x.closed_at < tscale(1500), "returned %.0f ms after close",
               returned - x.closed_at);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    mcp_responder *r = wait_deferred(&s, 0);
    CHECK(r != NULL);
    EXPECT(mcp_responder_is_cancelled(r));
    EXPECT_STATUS(mcp_responder_reply_json(r, ACCEPT_NAME("Too late"), &err), MCP_CANCELLED,
                  err);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* The call is cancelled while the handler holds the responder: the call returns
 * MCP_CANCELLED, and the reply afterwards is refused with MCP_CANCELLED. */
struct cancel_ctx {
    struct script *s;
    mcp_cancel_token *token;
    double cancelled_at;
};

static void *cancel_when_deferred(void *arg)
{
    struct cancel_ctx *x = (struct cancel_ctx *)arg;
    if (wait_deferred(x->s, tscale(3000)) == NULL)
        return NULL;
    wait_count(&x->s->done, 1, tscale(3000)); /* the handler returned: the call waits */
    x->cancelled_at = now_ms();
    mcp_cancel_token_cancel(x->token);
    return NULL;
}

static void test_reply_after_cancel(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_DEFER);
    CHECK(register_input(c, "elicitation", &s));
    struct cancel_ctx x;
    memset(&x, 0, sizeof x);
    x.s = &s;
    x.token = mcp_cancel_token_new();
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.cancel = x.token;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cancel_when_deferred, &x) == 0);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, &opts, &out, &err);
    double returned = now_ms();
    pthread_join(th, NULL);
    EXPECT_STATUS(st, MCP_CANCELLED, err);
    EXPECT(returned - x.cancelled_at < tscale(1500));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    mcp_responder *r = wait_deferred(&s, 0);
    CHECK(r != NULL);
    EXPECT(mcp_responder_is_cancelled(r));
    EXPECT_STATUS(mcp_responder_reply_json(r, ACCEPT_NAME("Late"), &err), MCP_CANCELLED, err);
    mcp_error_free(err);
    err = NULL;

    /* Same after a timeout, with reply_error. */
    script_init(&s, SCRIPT_DEFER);
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = 200;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, &opts, &out, &err),
                  MCP_TIMEOUT, err);
    mcp_error_free(err);
    err = NULL;
    r = wait_deferred(&s, tscale(1000));
    CHECK(r != NULL);
    EXPECT(mcp_responder_is_cancelled(r));
    EXPECT_STATUS(mcp_responder_reply_error(r, -32000, "late", &err), MCP_CANCELLED, err);
    mcp_error_free(err);
    /* The client still works. */
    script_init(&s, SCRIPT_REPLY);
    s.replies[0] = ACCEPT_NAME("Again");
    char text[128];
    EXPECT(call_text(c, "elicit_once", NULL, text, sizeof text) &&
           strcmp(text, "Hello, Again!") == 0);
    mcp_cancel_token_free(x.token);
    mcp_client_free(c);
}

/* A cancel token cancelled before the call: MCP_CANCELLED at once, nothing to wait for. */
static void test_precancelled_token(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_cancel_token *tok = mcp_cancel_token_new();
    mcp_cancel_token_cancel(tok);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.cancel = tok;
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_call_tool(c, "hang", NULL, NULL, NULL, &opts, &out, &err),
                  MCP_CANCELLED, err);
    EXPECT(now_ms() - t0 < tscale(1000));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_cancel_token_free(tok);
    mcp_client_free(c);
}


/* mcp_cancel_token_cancel returns only after a running handler of the cancelled call has
 * returned (the host may then free what it uses), and a handler may cancel its own call without
 * waiting for itself. */
struct slow_handler {
    mcp_cancel_token *token;
    int self_cancel;
    int started;
    int finished;
};

static void slow_handler_cb(void *userdata, const char *method, const char *params_json, size_t params_len,
                            mcp_responder *responder)
{
    (void)method, (void)params_json, (void)params_len;
    struct slow_handler *h = (struct slow_handler *)userdata;
    ASTORE(&h->started, 1);
    if (h->self_cancel)
        mcp_cancel_token_cancel(h->token); /* must not wait for this very callback */
    else
        sleep_ms(300); /* deliberately slow: the cancel under test must wait for it */
    ASTORE(&h->finished, 1);
    mcp_status answered = mcp_responder_reply_json(responder, ACCEPT_NAME("Slow"), NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

struct slow_call {
    mcp_client *c;
    mcp_call_opts *opts;
    mcp_status st;
};

static void *slow_call_run(void *arg)
{
    struct slow_call *sc = (struct slow_call *)arg;
    char *out = NULL;
    mcp_error *err = NULL;
    sc->st = mcp_client_call_tool(sc->c, "elicit_once", NULL, NULL, NULL, sc->opts, &out, &err);
    mcp_string_free(out);
    mcp_error_free(err);
    return NULL;
}

static void test_cancel_waits_for_running_handler(void)
{
    for (int self_cancel = 0; self_cancel <= 1; self_cancel++) {
        mcp_client *c = connected_client(NULL);
        CHECK(c != NULL);
        struct slow_handler h = {mcp_cancel_token_new(), self_cancel, 0, 0};
        mcp_error *err = NULL;
        EXPECT_STATUS(mcp_client_on_elicitation(c, slow_handler_cb, &h, NULL, &err), MCP_OK, err);
        mcp_call_opts opts;
        CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
        opts.cancel = h.token;
        struct slow_call sc = {c, &opts, -1};
        pthread_t th;
        CHECK(pthread_create(&th, NULL, slow_call_run, &sc) == 0);
        if (!self_cancel) {
            CHECK(wait_count(&h.started, 1, tscale(3000)));
            mcp_cancel_token_cancel(h.token);
            /* The callback was running when cancel began; it has returned now. */
            EXPECT(ALOAD(&h.finished) == 1);
        }
        pthread_join(th, NULL);
        EXPECT_STATUS(sc.st, MCP_CANCELLED, NULL);
        /* A self-cancelled call returns while its handler still runs (cancel does not wait for
         * the calling callback); mcp_client_free waits for it. */
        mcp_client_free(c);
        EXPECT(ALOAD(&h.finished) == 1);
        mcp_cancel_token_free(h.token);
    }
}

/* Two inputs in one round: when the sampling handler fails, the elicitation still held by
 * another thread is no longer wanted. */
static void test_sibling_failure_cancels_responder(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct script el, sa;
    script_init(&el, SCRIPT_DEFER);
    script_init(&sa, SCRIPT_ERROR);
    sa.error_code = -32603;
    sa.error_message = "no model available";
    CHECK(register_input(c, "elicitation", &el));
    CHECK(register_input(c, "sampling", &sa));
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_and_sample", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_HANDLER_FAILED, err);
    EXPECT_CONTAINS(mcp_error_message(err), "no model available");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    mcp_responder *r = wait_deferred(&el, tscale(1000));
    EXPECT(r != NULL);
    if (r != NULL) {
        EXPECT(mcp_responder_is_cancelled(r));
        EXPECT_STATUS(mcp_responder_reply_json(
                          r, "{\"action\":\"accept\",\"content\":{\"confirmed\":true}}", &err),
                      MCP_CANCELLED, err);
        mcp_error_free(err);
    }
    mcp_client_free(c);
}

/* A responder deferred and then answered within the same callback (defer is idempotent). */
static void defer_then_reply(void *userdata, const char *m, const char *p, size_t n,
                             mcp_responder *r)
{
    (void)m;
    (void)p;
    (void)n;
    int *was_cancelled = (int *)userdata;
    *was_cancelled = mcp_responder_is_cancelled(r) ? 1 : 0;
    mcp_responder_defer(r);
    mcp_responder_defer(r); /* idempotent */
    mcp_status answered = mcp_responder_reply_json(r, ACCEPT_NAME("Deferred inline"), NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void test_defer_then_reply_inline(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    int was_cancelled = -1;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_on_elicitation(c, defer_then_reply, &was_cancelled, NULL, &err),
                 MCP_OK, err);
    char *out = tool_ok(c, "elicit_once", NULL);
    EXPECT_CONTAINS(out, "Hello, Deferred inline!");
    EXPECT(was_cancelled == 0);
    mcp_string_free(out);
    mcp_client_free(c);
}

/* ---- manual driving ------------------------------------------------------------------------- */

/* A fixture client declaring `kinds` as answered by hand (mcp_config_set_manual_input): the
 * fixture, like the SDK servers, only asks for declared input. `record` may be NULL. */
static mcp_client *manual_client(uint32_t kinds, const char *record)
{
    mcp_config *cfg = record ? fixture_config("--record", record, (const char *)NULL)
                             : fixture_config((const char *)NULL);
    if (cfg == NULL) return NULL;
    mcp_error *err = NULL;
    if (mcp_config_set_manual_input(cfg, kinds, &err) != MCP_OK) {
        t_fail(__FILE__, __LINE__, "manual_input: %s", mcp_error_message(err));
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    return client_from_config(cfg);
}

#define ALL_MANUAL (MCP_ELICITATION_FORM | MCP_INPUT_SAMPLING | MCP_INPUT_ROOTS)

/* Expects MCP_INPUT_REQUIRED with `state` (NULL: none) and an inputRequests key; copies the
 * state out. */
static bool input_required(mcp_status st, mcp_error *err, const char *key, const char *state,
                           char *state_out, size_t n)
{
    if (!t_status(__FILE__, __LINE__, "manual MRTR leg", st, MCP_INPUT_REQUIRED, err))
        return false;
    bool ok = true;
    const char *reqs = mcp_error_input_requests_json(err);
    const char *got = mcp_error_request_state(err);
    const char *raw = mcp_error_result_json(err);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":{", key);
    if (reqs == NULL || strstr(reqs, quoted) == NULL) {
        t_fail(__FILE__, __LINE__, "inputRequests lacks %s: %s", key, reqs ? reqs : "(null)");
        ok = false;
    }
    if (state == NULL ? got != NULL : (got == NULL || strcmp(got, state) != 0)) {
        t_fail(__FILE__, __LINE__, "requestState \"%s\", want \"%s\"", got ? got : "(null)",
               state ? state : "(null)");
        ok = false;
    }
    if (raw == NULL || strstr(raw, "\"resultType\":\"input_required\"") == NULL ||
        strstr(raw, "\"inputRequests\"") == NULL) {
        t_fail(__FILE__, __LINE__, "result_json: %s", raw ? raw : "(null)");
        ok = false;
    }
    int64_t code = 0;
    if (mcp_error_jsonrpc_code(err, &code)) {
        t_fail(__FILE__, __LINE__, "an input_required error has no JSON-RPC code");
        ok = false;
    }
    if (state_out != NULL)
        snprintf(state_out, n, "%s", got ? got : "");
    return ok;
}

static void test_manual_elicit_once(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "mrtr"));
    mcp_client *c = manual_client(ALL_MANUAL, rec);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    char state[512];
    mcp_status st = mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err);
    CHECK(input_required(st, err, "name", STATE_ELICIT_ONCE, state, sizeof state));
    EXPECT_CONTAINS(mcp_error_input_requests_json(err), "\"method\":\"elicitation/create\"");
    EXPECT_CONTAINS(mcp_error_input_requests_json(err), "What is your name?");
    EXPECT(mcp_error_status(err) == MCP_INPUT_REQUIRED);
    EXPECT(mcp_error_message(err) != NULL);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    /* The retry: same call, the answers and the state. */
    out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, "{\"name\":" ACCEPT_NAME("Bob") "}",
                                       state, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "Hello, Bob!");
    mcp_string_free(out);
    /* A state that was never issued is refused by the server. */
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, "{\"name\":" ACCEPT_NAME("Eve") "}",
                                       "st\xc3\xa9:1 forged", NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32602);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
    /* The recorded retry carries the state; the UTF-8 went out raw or escaped, never mangled. */
    char *log = slurp(rec, NULL);
    EXPECT(count_occurrences(log, "\"requestState\"") == 2);
    EXPECT(count_occurrences(log, "4bf93ac3968345b1") == 1);
    free(log);
    remove(rec);
}

static void test_manual_other_flows(void)
{
    mcp_client *c = manual_client(ALL_MANUAL, NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    char state[512];
    mcp_status st;

    /* three_rounds: round 1, then round 2 (whose state depends on the first value) */
    st = mcp_client_call_tool(c, "three_rounds", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "step1", STATE_THREE_1, state, sizeof state));
    mcp_error_free(err);
    err = NULL;
    st = mcp_client_call_tool(c, "three_rounds", NULL,
                              "{\"step1\":{\"action\":\"accept\",\"content\":{\"value\":\"a\"}}}",
                              state, NULL, &out, &err);
    EXPECT(input_required(st, err, "step2", STATE_THREE_2_A, state, sizeof state));
    mcp_error_free(err);
    err = NULL;

    /* prompt and resource */
    st = mcp_client_get_prompt(c, "needs_input", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "topic", STATE_PROMPT, state, sizeof state));
    mcp_error_free(err);
    err = NULL;
    out = NULL;
    EXPECT_STATUS(mcp_client_get_prompt(
                      c, "needs_input", NULL,
                      "{\"topic\":{\"action\":\"accept\",\"content\":{\"topic\":\"manual\"}}}",
                      state, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "Topic: manual");
    mcp_string_free(out);
    out = SENTINEL_STR;
    st = mcp_client_read_resource(c, "fixture://needs-input", NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "password", STATE_RESOURCE, state, sizeof state));
    mcp_error_free(err);
    err = NULL;
    out = NULL;
    EXPECT_STATUS(mcp_client_read_resource(c, "fixture://needs-input",
                                           "{\"password\":{\"action\":\"decline\"}}", state, NULL,
                                           &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "secret refused");
    mcp_string_free(out);
    out = SENTINEL_STR;

    /* sampling and roots requests with no handler */
    st = mcp_client_call_tool(c, "sample_only", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "s", STATE_SAMPLE_ONLY, NULL, 0));
    EXPECT_CONTAINS(mcp_error_input_requests_json(err), "sampling/createMessage");
    mcp_error_free(err);
    err = NULL;
    st = mcp_client_call_tool(c, "roots", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "roots", STATE_ROOTS, state, sizeof state));
    EXPECT_CONTAINS(mcp_error_input_requests_json(err), "roots/list");
    mcp_error_free(err);
    err = NULL;
    out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "roots", NULL, "{\"roots\":" ROOTS_REPLY "}", state,
                                       NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "roots: file:///a,file:///b");
    mcp_string_free(out);
    out = SENTINEL_STR;

    /* no requestState at all */
    st = mcp_client_call_tool(c, "no_state", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "ok", NULL, NULL, 0));
    mcp_error_free(err);
    err = NULL;
    out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "no_state", NULL,
                                       "{\"ok\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}",
                                       NULL, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "no state ok");
    mcp_string_free(out);
    mcp_client_free(c);
}

/* Only some handlers: the elicitation is answered, the sampling request is not, so the call
 * surfaces MCP_INPUT_REQUIRED. */
static void test_manual_partial_handlers(void)
{
    mcp_client *c = manual_client(MCP_INPUT_SAMPLING, NULL);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_REPLY);
    s.replies[0] = "{\"action\":\"accept\",\"content\":{\"confirmed\":true}}";
    CHECK(register_input(c, "elicitation", &s));
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    char state[512];
    mcp_status st = mcp_client_call_tool(c, "elicit_and_sample", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT(input_required(st, err, "summary", STATE_ELICIT_SAMPLE, state, sizeof state));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    /* Finish by hand with both answers. */
    out = NULL;
    EXPECT_STATUS(
        mcp_client_call_tool(c, "elicit_and_sample", NULL,
                             "{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirmed\":true}},"
                             "\"summary\":" SAMPLING_REPLY "}",
                             state, NULL, &out, &err),
        MCP_OK, err);
    EXPECT_CONTAINS(out, "confirm=accept; summary=A short summary");
    mcp_string_free(out);
    mcp_client_free(c);
}

static void test_rounds_exceeded(void)
{
    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_set_input_required_max_rounds(cfg, 2, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    struct script s;
    script_init(&s, SCRIPT_REPLY);
    s.replies[0] = "{\"action\":\"accept\",\"content\":{\"value\":\"v\"}}";
    CHECK(register_input(c, "elicitation", &s));
    char *out = SENTINEL_STR;
    mcp_status st = mcp_client_call_tool(c, "always_input", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT_STATUS(st, MCP_INPUT_ROUNDS_EXCEEDED, err);
    EXPECT(out == SENTINEL_STR);
    const char *state = mcp_error_request_state(err);
    EXPECT_MSG(state && strcmp(state, "loop-3") == 0, "requestState %s",
               state ? state : "(null)");
    EXPECT_CONTAINS(mcp_error_input_requests_json(err), "\"again\":{");
    EXPECT_CONTAINS(mcp_error_result_json(err), "loop-3");
    EXPECT(settled(&s, 2));
    mcp_error_free(err);
    err = NULL;
    /* Manual driving from the last state continues the count. */
    mcp_client_free(c);
    c = manual_client(MCP_ELICITATION_FORM, NULL);
    CHECK(c != NULL);
    st = mcp_client_call_tool(c, "always_input", NULL,
                              "{\"again\":{\"action\":\"accept\",\"content\":{\"value\":\"v\"}}}",
                              "loop-3", NULL, &out, &err);
    EXPECT(input_required(st, err, "again", "loop-4", NULL, 0));
    mcp_error_free(err);
    mcp_client_free(c);
}

const struct test_case mrtr_tests[] = {
    {"mrtr/elicit_once_modern", test_elicit_once_modern},
    {"mrtr/elicit_once_legacy", test_elicit_once_legacy},
    {"mrtr/elicit_other_flows", test_elicit_other_flows},
    {"mrtr/sampling_and_roots_modern", test_sampling_and_roots_modern},
    {"mrtr/sampling_and_roots_legacy", test_sampling_and_roots_legacy},
    {"mrtr/sampling_with_tools_modern", test_sampling_with_tools_modern},
    {"mrtr/sampling_with_tools_legacy", test_sampling_with_tools_legacy},
    {"mrtr/handler_returns_without_reply", test_handler_returns_without_reply},
    {"mrtr/reply_error", test_reply_error},
    {"mrtr/reply_of_the_wrong_kind", test_reply_of_the_wrong_kind},
    {"mrtr/reply_bad_json", test_reply_bad_json},
    {"mrtr/defer_reply_from_thread", test_defer_reply_from_thread},
    {"mrtr/close_unblocks_pending_input", test_close_unblocks_pending_input},
    {"mrtr/reply_after_cancel", test_reply_after_cancel},
    {"mrtr/precancelled_token", test_precancelled_token},
    {"mrtr/cancel_waits_for_running_handler", test_cancel_waits_for_running_handler},
    {"mrtr/sibling_failure_cancels_responder", test_sibling_failure_cancels_responder},
    {"mrtr/defer_then_reply_inline", test_defer_then_reply_inline},
    {"mrtr/manual_elicit_once", test_manual_elicit_once},
    {"mrtr/manual_other_flows", test_manual_other_flows},
    {"mrtr/manual_partial_handlers", test_manual_partial_handlers},
    {"mrtr/rounds_exceeded", test_rounds_exceeded},
};
const size_t mrtr_tests_count = sizeof mrtr_tests / sizeof mrtr_tests[0];
