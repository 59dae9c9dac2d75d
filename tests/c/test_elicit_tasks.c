/* The C ABI against the fixture server: URL-mode elicitation (modes,
 * -32042 with its elicitations, the completion notification), manual input mode (declared
 * kinds, the unanswered requests), and the tasks extension (blocking follow, status listener,
 * failure, input through tasks/update, cancel, resume by id, the call's timeout). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

/* An input handler that replies with the JSON given as userdata and counts its calls in a
 * static counter. */
static int url_calls;
static char url_params[1024];
static void reply_with(void *userdata, const char *method, const char *params, size_t len,
                       mcp_responder *responder)
{
    (void)method;
    (void)len;
    AINC(&url_calls);
    snprintf(url_params, sizeof url_params, "%s", params);
    mcp_status st = mcp_responder_reply_json(responder, (const char *)userdata, NULL);
    (void)st;
}

static mcp_client *client_with(mcp_config *cfg)
{
    return cfg ? client_from_config(cfg) : NULL;
}

static void test_url_mode_modern(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "url"));
    mcp_client *c = fixture_client("--record", rec, (const char *)NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    ASTORE(&url_calls, 0);
    /* Content on a URL accept is dropped by the library. */
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, MCP_ELICITATION_URL, reply_with,
                                                  (void *)"{\"action\":\"accept\",\"content\":{\"x\":1}}",
                                                  NULL, &err),
                  MCP_OK, err);
    char *out = tool_ok(c, "url_login", NULL);
    EXPECT_CONTAINS(out, "url login: accept");
    EXPECT(ALOAD(&url_calls) == 1);
    EXPECT_CONTAINS(url_params, "\"mode\":\"url\"");
    mcp_string_free(out);
    char *wire = slurp(rec, NULL);
    EXPECT_CONTAINS(wire, "\"elicitation\":{\"url\":{}}");
    EXPECT_CONTAINS(wire, "\"inputResponses\":{\"login\":{\"action\":\"accept\"}}");
    free(wire);
    /* URL mode alone is declared: the server never sends a form request, the call fails -32021
     * saying what would declare form mode, and the handler is not called. */
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_CAPABILITY_MISSING, err);
    EXPECT(out == SENTINEL_STR);
    EXPECT(ALOAD(&url_calls) == 1);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL,
                    "; register an elicitation handler for form mode (mcp_client_on_elicitation;");
    mcp_error_free(err);
    err = NULL;
    /* No mode, or an unknown bit, is refused. */
    struct counted ud;
    memset(&ud, 0, sizeof ud);
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, 0, reply_with, &ud, counted_free, &err),
                  MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT(ud.frees == 1);
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, 0x10, reply_with, NULL, NULL, &err),
                  MCP_INVALID_ARG, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* A handler no request could reach is refused, its userdata freed once: a mode the
 * configuration's `capabilities` override does not declare. */
static void test_modes_the_override_lacks_are_refused(void)
{
    char json[1024];
    snprintf(json, sizeof json, "{\"command\":\"%s\",\"capabilities\":{\"elicitation\":{}}}",
             fixture_path_json());
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_config_new(json, &cfg, &err), MCP_OK, err);
    mcp_client *c = client_with(cfg);
    CHECK(c != NULL);
    struct counted ud;
    memset(&ud, 0, sizeof ud);
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, MCP_ELICITATION_URL, reply_with, &ud, counted_free, &err),
                  MCP_INVALID_ARG, err);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "lacks `elicitation.url`");
    mcp_error_free(err);
    err = NULL;
    EXPECT(ud.frees == 1);
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, MCP_ELICITATION_FORM, reply_with,
                                                  (void *)"{\"action\":\"accept\"}", NULL, &err),
                  MCP_OK, err);
    mcp_client_free(c);
}

static void test_form_handler_leaves_url_requests_unanswered(void)
{
    mcp_client *c = fixture_client("--lax-capabilities", (const char *)NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    ASTORE(&url_calls, 0);
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, MCP_ELICITATION_FORM, reply_with,
                                                  (void *)"{\"action\":\"accept\"}", NULL, &err),
                  MCP_OK, err);
    char *out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "url_login", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_INPUT_REQUIRED, err);
    EXPECT(out == SENTINEL_STR);
    EXPECT(ALOAD(&url_calls) == 0);
    EXPECT_CONTAINS(err ? mcp_error_unanswered_json(err) : NULL, "\"login\":{");
    EXPECT(err && mcp_error_elicitations_json(err) == NULL);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_legacy_url_required_and_completion(void)
{
    mcp_client *c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    struct collector *col = (struct collector *)malloc(sizeof *col);
    CHECK(col != NULL);
    collector_init(col);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_notification_handler(c, collect_notification, col, collector_free, &err),
                  MCP_OK, err);
    /* Registered before connecting: a legacy client declares its capabilities once. */
    ASTORE(&url_calls, 0);
    url_params[0] = '\0';
    EXPECT_STATUS(mcp_client_on_elicitation_modes(c, MCP_ELICITATION_URL | MCP_ELICITATION_FORM, reply_with,
                                                  (void *)"{\"action\":\"accept\"}", NULL, &err),
                  MCP_OK, err);
    char *out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "url_required", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_URL_ELICITATION_REQUIRED, err);
    int64_t code = 0;
    EXPECT(err && mcp_error_jsonrpc_code(err, &code) && code == MCP_JSONRPC_URL_ELICITATION_REQUIRED);
    const char *list = err ? mcp_error_elicitations_json(err) : NULL;
    EXPECT_CONTAINS(list, "\"elicitationId\":\"fixture-elicitation-1\"");
    EXPECT_CONTAINS(list, "\"url\":\"https://auth.example.com/login?session=fixture\"");
    EXPECT(list && list[0] == '[');
    mcp_error_free(err);
    err = NULL;
    /* Pushed URL elicitation, then the completion notification. */
    out = tool_ok(c, "url_login", NULL);
    EXPECT_CONTAINS(out, "url login: accept");
    EXPECT_CONTAINS(url_params, "\"elicitationId\":\"fixture-elicitation-1\"");
    mcp_string_free(out);
    EXPECT(collector_wait(col, "notifications/elicitation/complete", tscale(2000)));
    EXPECT(collector_wait(col, "fixture-elicitation-1", tscale(2000)));
    mcp_client_free(c);
    EXPECT(col->ud.frees == 1);
    collector_destroy(col);
    free(col);
}

static void test_manual_input_mode(void)
{
    /* Undeclared: the fixture, like the SDK servers, answers -32021. */
    mcp_client *c = fixture_client((const char *)NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_CAPABILITY_MISSING, err);
    mcp_error_free(err);
    err = NULL;
    mcp_client_free(c);

    mcp_config *cfg = fixture_config((const char *)NULL);
    CHECK(cfg != NULL);
    EXPECT_STATUS(mcp_config_set_manual_input(cfg, 0x100, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_config_set_manual_input(cfg, MCP_ELICITATION_FORM | MCP_INPUT_SAMPLING, &err), MCP_OK, err);
    c = client_with(cfg);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_INPUT_REQUIRED, err);
    const char *unanswered = err ? mcp_error_unanswered_json(err) : NULL;
    EXPECT_CONTAINS(unanswered, "\"name\":{\"method\":\"elicitation/create\"");
    char state[512] = "";
    if (err && mcp_error_request_state(err))
        snprintf(state, sizeof state, "%s", mcp_error_request_state(err));
    mcp_error_free(err);
    err = NULL;
    out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL,
                                       "{\"name\":{\"action\":\"accept\",\"content\":{\"name\":\"Hand\"}}}",
                                       state, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "Hello, Hand!");
    mcp_string_free(out);
    mcp_client_free(c);
}

/* ---- tasks --------------------------------------------------------------------------------- */

struct task_log {
    pthread_mutex_t lock;
    int count;
    char text[8192];
};

static void on_task(void *userdata, const char *task_json, size_t len)
{
    struct task_log *log = (struct task_log *)userdata;
    pthread_mutex_lock(&log->lock);
    size_t used = strlen(log->text);
    if (strlen(task_json) == len && used + len + 2 < sizeof log->text) {
        memcpy(log->text + used, task_json, len);
        log->text[used + len] = '\n';
        log->text[used + len + 1] = '\0';
    }
    pthread_mutex_unlock(&log->lock);
    AINC(&log->count);
}

static mcp_client *task_client(struct task_log *log, const char *record)
{
    mcp_config *cfg = record ? fixture_config("--record", record, (const char *)NULL)
                             : fixture_config((const char *)NULL);
    if (!cfg) return NULL;
    mcp_error *err = NULL;
    if (mcp_config_set_tasks(cfg, true, &err) != MCP_OK) {
        t_fail(__FILE__, __LINE__, "tasks setting: %s", mcp_error_message(err));
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    mcp_client *c = client_with(cfg);
    if (c && log) {
        memset(log, 0, sizeof *log);
        pthread_mutex_init(&log->lock, NULL);
        if (mcp_client_on_task_status(c, on_task, log, NULL, &err) != MCP_OK) {
            t_fail(__FILE__, __LINE__, "listener: %s", mcp_error_message(err));
            mcp_error_free(err);
        }
    }
    return c;
}

static void test_task_followed_to_its_result(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "tasks"));
    static struct task_log log;
    mcp_client *c = task_client(&log, rec);
    CHECK(c != NULL);
    char *out = tool_ok(c, "task_echo", "{\"text\":\"from C\"}");
    EXPECT_CONTAINS(out, "task: from C");
    EXPECT(out && strstr(out, "\"isError\":true") == NULL);
    mcp_string_free(out);
    EXPECT(wait_count(&log.count, 3, tscale(2000)));
    pthread_mutex_lock(&log.lock);
    EXPECT(count_occurrences(log.text, "\"status\":\"working\"") == 2);
    EXPECT(count_occurrences(log.text, "\"status\":\"completed\"") == 1);
    EXPECT(count_occurrences(log.text, "\"pollIntervalMs\":50") == 3);
    pthread_mutex_unlock(&log.lock);
    char *wire = slurp(rec, NULL);
    EXPECT_CONTAINS(wire, "\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}");
    EXPECT(wire && count_occurrences(wire, "\"tasks/get\"") == 2);
    free(wire);
    /* A failed task is its JSON-RPC error. */
    char *fail = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "task_fail", NULL, NULL, NULL, NULL, &fail, &err), MCP_JSONRPC_ERROR,
                  err);
    int64_t code = 0;
    EXPECT(err && mcp_error_jsonrpc_code(err, &code) && code == MCP_JSONRPC_INTERNAL_ERROR);
    EXPECT(fail == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
    pthread_mutex_destroy(&log.lock);
}

/* A call's trace context (SEP-414), given as meta_json's traceparent/tracestate/baggage, is on
 * the tools/call and on every tasks/get poll, exactly; an invalid value is refused before
 * anything is sent. */
static void test_task_polls_carry_the_trace_context(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "tasks-trace"));
    mcp_client *c = task_client(NULL, rec);
    CHECK(c != NULL);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.meta_json = "{\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\","
                     "\"tracestate\":\"rojo=00f067aa0ba902b7\",\"baggage\":\"userId=alice\",\"x\":1}";
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "task_echo", NULL, NULL, NULL, &opts, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    char *wire = slurp(rec, NULL);
    const char *members = "\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\","
                          "\"tracestate\":\"rojo=00f067aa0ba902b7\",\"baggage\":\"userId=alice\"";
    int polls = wire ? count_occurrences(wire, "\"method\":\"tasks/get\"") : -1;
    EXPECT_MSG(polls == 2, "%d polls", polls);
    /* the call and each poll; the other caller entry on the call only */
    EXPECT(wire && count_occurrences(wire, members) == polls + 1);
    EXPECT(wire && count_occurrences(wire, "\"x\":1") == 1);
    free(wire);
    out = SENTINEL_STR;
    opts.meta_json = "{\"traceparent\":\"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01\"}";
    EXPECT_STATUS(mcp_client_call_tool(c, "task_echo", NULL, NULL, NULL, &opts, &out, &err), MCP_INVALID_ARG,
                  err);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "traceparent");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    opts.meta_json = "{\"tracestate\":\"a=b\"}";
    EXPECT_STATUS(mcp_client_call_tool(c, "task_echo", NULL, NULL, NULL, &opts, &out, &err), MCP_INVALID_ARG,
                  err);
    mcp_error_free(err);
    wire = slurp(rec, NULL);
    EXPECT(wire && count_occurrences(wire, "\"method\":\"tools/call\"") == 1);
    free(wire);
    mcp_client_free(c);
}

static void test_task_input_goes_through_the_handlers(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "tasks-input"));
    mcp_client *c = task_client(NULL, rec);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    ASTORE(&url_calls, 0);
    EXPECT_STATUS(mcp_client_on_elicitation(c, reply_with,
                                            (void *)"{\"action\":\"accept\",\"content\":{\"confirmed\":true}}", NULL,
                                            &err),
                  MCP_OK, err);
    char *out = tool_ok(c, "task_input", NULL);
    EXPECT_CONTAINS(out, "confirmed: ");
    EXPECT(out && strstr(out, "\"isError\":true") == NULL);
    EXPECT(ALOAD(&url_calls) == 1);
    mcp_string_free(out);
    char *wire = slurp(rec, NULL);
    EXPECT(wire && count_occurrences(wire, "\"tasks/update\"") == 1);
    free(wire);
    mcp_client_free(c);
}

static void test_task_cancel_get_and_resume(void)
{
    static struct task_log log;
    mcp_client *c = task_client(&log, NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    /* Connected first: the 40 ms caps below are for the tasks, not for starting the server
     * (under the fixture's first poll at 50 ms, above a round trip under Wine). */
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    /* The call gives up (total cap); the task goes on server-side. */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.max_total_ms = 40;
    EXPECT_STATUS(mcp_client_call_tool(c, "task_slow", NULL, NULL, NULL, &opts, &out, &err), MCP_TIMEOUT, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT(wait_count(&log.count, 1, tscale(2000)));
    char id[64] = "";
    pthread_mutex_lock(&log.lock);
    EXPECT(json_string(log.text, "taskId", id, sizeof id));
    pthread_mutex_unlock(&log.lock);
    CHECK(id[0] != '\0');
    char *task = NULL;
    EXPECT_STATUS(mcp_client_get_task(c, id, NULL, &task, &err), MCP_OK, err);
    EXPECT_CONTAINS(task, "\"status\":\"working\"");
    mcp_string_free(task);
    task = NULL;
    EXPECT_STATUS(mcp_client_cancel_task(c, id, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_get_task(c, id, NULL, &task, &err), MCP_OK, err);
    EXPECT_CONTAINS(task, "\"status\":\"cancelled\"");
    mcp_string_free(task);
    EXPECT_STATUS(mcp_client_resume_task(c, id, NULL, &out, &err), MCP_CANCELLED, err);
    mcp_error_free(err);
    err = NULL;
    /* A capped echo task resumes to its result. */
    EXPECT_STATUS(mcp_client_call_tool(c, "task_echo", "{\"text\":\"resumed\"}", NULL, NULL, &opts, &out, &err),
                  MCP_TIMEOUT, err);
    mcp_error_free(err);
    err = NULL;
    /* slow created, slow cancelled (seen by the resume), echo created */
    EXPECT(wait_count(&log.count, 3, tscale(2000)));
    /* The newest task is the last one the listener saw. */
    pthread_mutex_lock(&log.lock);
    const char *newest = NULL;
    for (const char *p = strstr(log.text, "\"taskId\""); p; p = strstr(p + 1, "\"taskId\"")) newest = p;
    EXPECT(newest && json_string(newest, "taskId", id, sizeof id));
    pthread_mutex_unlock(&log.lock);
    out = NULL;
    EXPECT_STATUS(mcp_client_resume_task(c, id, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "task: resumed");
    mcp_string_free(out);
    /* Unknown ids, NULL ids, and a client without the extension. */
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_resume_task(c, "task-none", NULL, &out, &err), MCP_JSONRPC_ERROR, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_resume_task(c, NULL, NULL, &out, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT(out == SENTINEL_STR);
    mcp_client_free(c);
    pthread_mutex_destroy(&log.lock);
    c = fixture_client((const char *)NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_update_task(c, "task-1", "{}", NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* The call's timeout bounds the wait for a task that stays working: MCP_TIMEOUT at the bound,
 * the message naming the limit, tasks/cancel sent, and no tasks/get after the call returned —
 * for the blocking call and the started one. */
struct task_done {
    int done;
    mcp_status status;
    double at_ms;
    char message[1024];
};

static void on_task_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                         const mcp_error *error)
{
    (void)result_json;
    (void)result_len;
    struct task_done *d = (struct task_done *)userdata;
    d->status = status;
    d->at_ms = now_ms();
    snprintf(d->message, sizeof d->message, "%s", error ? mcp_error_message(error) : "");
    AINC(&d->done);
}

/* The record shows `n` tasks/cancel requests, and its tasks/get count stays put over six poll
 * intervals (nothing polls after the call ended). */
static void expect_cancelled_and_quiet(const char *rec, int n)
{
    char *wire = slurp(rec, NULL);
    EXPECT(wire && count_occurrences(wire, "\"method\":\"tasks/cancel\"") == n);
    int gets = wire ? count_occurrences(wire, "\"method\":\"tasks/get\"") : -1;
    free(wire);
    sleep_ms(300);
    wire = slurp(rec, NULL);
    EXPECT(wire && count_occurrences(wire, "\"method\":\"tasks/get\"") == gets);
    free(wire);
}

static void test_task_call_timeout_blocking_and_started(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "tasks-timeout"));
    mcp_client *c = task_client(NULL, rec);
    CHECK(c != NULL);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = 400;
    opts.max_total_ms = 6000; /* a safety cap: a task call that ignored its timeout ends here */
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    double start = now_ms();
    EXPECT_STATUS(mcp_client_call_tool(c, "task_stuck", NULL, NULL, NULL, &opts, &out, &err), MCP_TIMEOUT, err);
    double took = now_ms() - start;
    EXPECT(took >= 400 && took < tscale(2500));
    EXPECT(out == SENTINEL_STR);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "still working) timed out after 400 ms: the limit is "
                                                         "this call's timeout (timeout_ms in its call options");
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "; tasks/cancel sent");
    mcp_error_free(err);
    err = NULL;
    expect_cancelled_and_quiet(rec, 1);

    static struct task_done done;
    memset(&done, 0, sizeof done);
    start = now_ms();
    EXPECT_STATUS(mcp_client_call_tool_start(c, "task_stuck", NULL, NULL, NULL, &opts, on_task_done, &done, NULL,
                                             &err),
                  MCP_OK, err);
    EXPECT(wait_count(&done.done, 1, tscale(8000)));
    EXPECT(done.status == MCP_TIMEOUT);
    EXPECT(done.at_ms - start >= 400 && done.at_ms - start < tscale(2500));
    EXPECT_CONTAINS(done.message, "timed out after 400 ms");
    EXPECT_CONTAINS(done.message, "; tasks/cancel sent");
    expect_cancelled_and_quiet(rec, 2);
    mcp_client_free(c);
}

const struct test_case elicit_tasks_tests[] = {
    {"elicit_tasks/url_mode_modern", test_url_mode_modern},
    {"elicit_tasks/modes_the_override_lacks_are_refused", test_modes_the_override_lacks_are_refused},
    {"elicit_tasks/form_handler_leaves_url_requests_unanswered", test_form_handler_leaves_url_requests_unanswered},
    {"elicit_tasks/legacy_url_required_and_completion", test_legacy_url_required_and_completion},
    {"elicit_tasks/manual_input_mode", test_manual_input_mode},
    {"elicit_tasks/task_followed_to_its_result", test_task_followed_to_its_result},
    {"elicit_tasks/task_polls_carry_the_trace_context", test_task_polls_carry_the_trace_context},
    {"elicit_tasks/task_input_goes_through_the_handlers", test_task_input_goes_through_the_handlers},
    {"elicit_tasks/task_cancel_get_and_resume", test_task_cancel_get_and_resume},
    {"elicit_tasks/task_call_timeout_blocking_and_started", test_task_call_timeout_blocking_and_started},
};
const size_t elicit_tasks_tests_count = sizeof elicit_tasks_tests / sizeof elicit_tasks_tests[0];
