/* API surface: versions, statuses, NULL handling, the config builder, call options, cancel
 * tokens, argument validation (nothing sent on bad input) and closed clients. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* The by-value struct's layout is part of the ABI (LP64 targets). */
#if defined(__LP64__)
STATIC_ASSERT(offsetof(mcp_call_opts, version) == 0, "version offset");
STATIC_ASSERT(offsetof(mcp_call_opts, timeout_ms) == 8, "timeout_ms offset");
STATIC_ASSERT(offsetof(mcp_call_opts, max_total_ms) == 16, "max_total_ms offset");
STATIC_ASSERT(offsetof(mcp_call_opts, reset_timeout_on_progress) == 24, "reset offset");
STATIC_ASSERT(offsetof(mcp_call_opts, cancel) == 32, "cancel offset");
STATIC_ASSERT(offsetof(mcp_call_opts, meta_json) == 40, "meta_json offset");
STATIC_ASSERT(offsetof(mcp_call_opts, log_level) == 48, "log_level offset");
STATIC_ASSERT(offsetof(mcp_call_opts, on_progress) == 56, "on_progress offset");
STATIC_ASSERT(offsetof(mcp_call_opts, progress_userdata) == 64, "progress_userdata offset");
STATIC_ASSERT(offsetof(mcp_call_opts, cache_mode) == 72, "cache_mode offset");
STATIC_ASSERT(offsetof(mcp_call_opts, skip_output_validation) == 76, "skip_output_validation offset");
STATIC_ASSERT(sizeof(mcp_call_opts) == 80, "mcp_call_opts size");
#endif
STATIC_ASSERT(sizeof(mcp_status) == 4, "mcp_status is int32_t");
STATIC_ASSERT(MCP_OK == 0, "MCP_OK is 0");

#define BAD_UTF8 "\xff\xfe bad"
#define BAD_JSON "{\"a\":"

/* Sentinels: an output written on failure would replace them. */
static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

/* Every status with its constant's name (test_status_names checks that the library names no
 * other, so a status added to the library fails here until it is listed). */
#define S(status) {status, #status}
static const struct {
    mcp_status value;
    const char *name;
} status_table[] = {
    S(MCP_OK), S(MCP_NULL_ARG), S(MCP_INVALID_UTF8), S(MCP_INVALID_JSON), S(MCP_INVALID_ARG),
    S(MCP_CLOSED), S(MCP_REENTRANT_CALL), S(MCP_UNSUPPORTED), S(MCP_FORKED), S(MCP_NOT_CONNECTED),
    S(MCP_IO), S(MCP_TIMEOUT), S(MCP_CANCELLED), S(MCP_SERVER_EXITED), S(MCP_HTTP_STATUS),
    S(MCP_AUTH_REQUIRED), S(MCP_MESSAGE_TOO_LARGE), S(MCP_JSONRPC_ERROR),
    S(MCP_PROTOCOL_VIOLATION), S(MCP_VERSION_MISMATCH), S(MCP_CAPABILITY_MISSING),
    S(MCP_INPUT_REQUIRED), S(MCP_INPUT_ROUNDS_EXCEEDED), S(MCP_HANDLER_FAILED),
    S(MCP_URL_ELICITATION_REQUIRED), S(MCP_SKILL_VERIFICATION_FAILED),
    S(MCP_OUTPUT_SCHEMA_INVALID), S(MCP_TOOL_PIN_CHANGED), S(MCP_INTERNAL), S(MCP_PANIC),
};
#undef S
#define N_STATUSES (sizeof status_table / sizeof status_table[0])

static void test_version_and_abi(void)
{
    CHECK(mcp_abi_version() == MCP_ABI_VERSION);
    const char *v = mcp_version();
    CHECK(v != NULL);
    CHECK(mcp_version() == v); /* static */
    char want[64];
    snprintf(want, sizeof want, "mcp_client/%d.%d.%d", MCP_VERSION_MAJOR, MCP_VERSION_MINOR,
             MCP_VERSION_PATCH);
    CHECK_MSG(strncmp(v, want, strlen(want)) == 0, "mcp_version() = \"%s\", want \"%s\"", v,
              want);
    CHECK(MCP_CALL_OPTS_VERSION >= 1);
    CHECK(strcmp(MCP_RESULT_TYPE_COMPLETE, "complete") == 0);
    CHECK(strcmp(MCP_RESULT_TYPE_INPUT_REQUIRED, "input_required") == 0);
}

static void test_status_strings(void)
{
    const char *unknown = mcp_status_str(12345);
    CHECK(unknown != NULL && *unknown != '\0');
    CHECK(strcmp(mcp_status_str(-1), unknown) == 0);
    CHECK(strcmp(mcp_status_str(INT32_MAX), unknown) == 0);
    CHECK(strcmp(mcp_status_str(INT32_MIN), unknown) == 0);
    CHECK(strcmp(mcp_status_str(99), unknown) == 0);
    CHECK(strcmp(mcp_status_str(MCP_OK), "ok") == 0);
    for (size_t i = 0; i < N_STATUSES; i++) {
        const char *s = mcp_status_str(status_table[i].value);
        CHECK_MSG(s != NULL && *s != '\0', "status %d has no text", (int)status_table[i].value);
        CHECK_MSG(strcmp(s, unknown) != 0, "status %d is \"unknown\"", (int)status_table[i].value);
        CHECK(mcp_status_str(status_table[i].value) == s); /* static storage */
        for (size_t j = 0; j < i; j++)
            CHECK_MSG(strcmp(s, mcp_status_str(status_table[j].value)) != 0,
                      "statuses %d and %d share a text", (int)status_table[i].value,
                      (int)status_table[j].value);
    }
}

static void test_status_names(void)
{
    /* Each status's name is its constant's, in static storage. */
    for (size_t i = 0; i < N_STATUSES; i++) {
        const char *name = mcp_status_name(status_table[i].value);
        CHECK_MSG(name != NULL && strcmp(name, status_table[i].name) == 0,
                  "mcp_status_name(%d) = \"%s\", want \"%s\"", (int)status_table[i].value,
                  name ? name : "(null)", status_table[i].name);
        CHECK(mcp_status_name(status_table[i].value) == name);
    }
    /* A value that is no status has the stable answer, never NULL. */
    const mcp_status unknown[] = {-1, 7, 99, 12345, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        CHECK(strcmp(mcp_status_name(unknown[i]), "MCP_UNKNOWN") == 0);
    /* The library names exactly the statuses listed above. */
    size_t named = 0;
    for (mcp_status s = 0; s < 1000; s++)
        named += strcmp(mcp_status_name(s), "MCP_UNKNOWN") != 0;
    CHECK_MSG(named == N_STATUSES, "the library names %zu statuses, this test lists %zu", named,
              (size_t)N_STATUSES);
}

static void test_status_is_transport(void)
{
    for (size_t i = 0; i < N_STATUSES; i++) {
        mcp_status s = status_table[i].value;
        bool want = s >= 100 && s <= 199;
        CHECK_MSG(mcp_status_is_transport(s) == want, "mcp_status_is_transport(%d)", (int)s);
    }
    CHECK(mcp_status_is_transport(100));
    CHECK(mcp_status_is_transport(199));
    CHECK(!mcp_status_is_transport(99));
    CHECK(!mcp_status_is_transport(200));
    CHECK(!mcp_status_is_transport(-100));
    CHECK(!mcp_status_is_transport(12345));
}

static void test_free_null_is_noop(void)
{
    mcp_string_free(NULL);
    mcp_error_free(NULL);
    mcp_config_free(NULL);
    mcp_client_free(NULL);
    mcp_subscription_free(NULL);
    mcp_cancel_token_free(NULL);
    /* Other NULL-tolerant entry points. */
    mcp_client_close(NULL);
    CHECK(mcp_call_opts_init(NULL, MCP_CALL_OPTS_VERSION) == MCP_NULL_ARG);
    mcp_responder_defer(NULL);
    mcp_cancel_token_cancel(NULL);
    CHECK(!mcp_cancel_token_is_cancelled(NULL));
    CHECK(mcp_cancel_token_clone(NULL) == NULL);
    CHECK(mcp_client_era(NULL) == MCP_ERA_NONE);
    CHECK(mcp_client_dropped_callbacks(NULL) == 0);
    CHECK(mcp_responder_is_cancelled(NULL));
}

static void test_error_accessors_on_null(void)
{
    CHECK(mcp_error_status(NULL) == MCP_INVALID_ARG);
    CHECK(mcp_error_message(NULL) == NULL);
    int64_t code = 42;
    CHECK(!mcp_error_jsonrpc_code(NULL, &code));
    CHECK(code == 42);
    CHECK(mcp_error_data_json(NULL) == NULL);
    CHECK(mcp_error_jsonrpc_message(NULL) == NULL);
    CHECK(mcp_error_input_requests_json(NULL) == NULL);
    CHECK(mcp_error_request_state(NULL) == NULL);
    CHECK(mcp_error_result_json(NULL) == NULL);
}

static void test_error_object_of_api_failure(void)
{
    /* An API failure's error: status, message; no JSON-RPC or MRTR details. */
    mcp_config *cfg = (mcp_config *)SENTINEL_STR;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(BAD_JSON, &cfg, &err), MCP_INVALID_JSON, err);
    CHECK(cfg == (mcp_config *)SENTINEL_STR);
    CHECK(err != NULL);
    CHECK(mcp_error_status(err) == MCP_INVALID_JSON);
    CHECK(mcp_error_message(err) != NULL && *mcp_error_message(err) != '\0');
    int64_t code = 7;
    CHECK(!mcp_error_jsonrpc_code(err, &code));
    CHECK(code == 7);
    CHECK(!mcp_error_jsonrpc_code(err, NULL));
    CHECK(mcp_error_data_json(err) == NULL);
    CHECK(mcp_error_jsonrpc_message(err) == NULL);
    CHECK(mcp_error_input_requests_json(err) == NULL);
    CHECK(mcp_error_request_state(err) == NULL);
    CHECK(mcp_error_result_json(err) == NULL);
    mcp_error_free(err);

    /* err_out may be NULL: the status alone. */
    cfg = NULL;
    CHECK(mcp_config_new(BAD_JSON, &cfg, NULL) == MCP_INVALID_JSON);
    CHECK(cfg == NULL);
    /* On success err_out is left alone. */
    err = NULL;
    CHECK_STATUS(mcp_config_new("{}", &cfg, &err), MCP_OK, err);
    CHECK(err == NULL && cfg != NULL);
    mcp_config_free(cfg);

    /* An unknown key fails mcp_client_new: the message names it and the nearest known key, in
     * nested objects too. */
    const struct {
        const char *json, *message;
    } unknown_keys[] = {
        {"{\"command\":\"x\",\"request_timeout\":5}",
         "unknown configuration key \"request_timeout\"; did you mean \"request_timeout_ms\"?"},
        {"{\"command\":\"x\",\"reconnect\":{\"max_attempt\":2}}",
         "unknown reconnect key \"max_attempt\"; did you mean \"max_attempts\"?"},
        {"{\"command\":\"x\",\"telepathy\":true}", "unknown configuration key \"telepathy\""},
    };
    for (size_t i = 0; i < sizeof unknown_keys / sizeof unknown_keys[0]; i++) {
        err = NULL;
        cfg = NULL;
        CHECK_STATUS(mcp_config_new(unknown_keys[i].json, &cfg, &err), MCP_OK, err);
        mcp_client *client = NULL;
        CHECK_STATUS(mcp_client_new(cfg, &client, &err), MCP_INVALID_ARG, err);
        mcp_config_free(cfg);
        CHECK(client == NULL);
        CHECK_MSG(err && strcmp(mcp_error_message(err), unknown_keys[i].message) == 0,
                  "message \"%s\", want \"%s\"", err ? mcp_error_message(err) : "(none)",
                  unknown_keys[i].message);
        mcp_error_free(err);
    }
}

static void test_call_opts_init(void)
{
    mcp_call_opts opts;
    memset(&opts, 0xAB, sizeof opts);
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    CHECK(opts.version == MCP_CALL_OPTS_VERSION);
    CHECK(opts.timeout_ms == 0);
    CHECK(opts.max_total_ms == 0);
    CHECK(!opts.reset_timeout_on_progress);
    CHECK(opts.cancel == NULL);
    CHECK(opts.meta_json == NULL);
    CHECK(opts.log_level == NULL);
    CHECK(opts.on_progress == NULL);
    CHECK(opts.progress_userdata == NULL);

    /* A version the library does not know (0, or a header newer than the library) is refused
     * and the struct is left as it was; every version up to the current one is accepted. */
    memset(&opts, 0xAB, sizeof opts);
    CHECK(mcp_call_opts_init(&opts, 0) == MCP_INVALID_ARG);
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION + 1) == MCP_INVALID_ARG);
    CHECK(opts.timeout_ms == (int64_t)0xABABABABABABABABull);
    for (uint32_t v = 1; v <= MCP_CALL_OPTS_VERSION; v++) {
        CHECK(mcp_call_opts_init(&opts, v) == MCP_OK);
        CHECK(opts.version == v);
    }
    CHECK(MCP_TIMEOUT_DEFAULT == 0 && MCP_TIMEOUT_NONE < 0);
}

static void test_cancel_token(void)
{
    mcp_cancel_token *a = mcp_cancel_token_new();
    CHECK(a != NULL);
    CHECK(!mcp_cancel_token_is_cancelled(a));
    mcp_cancel_token *b = mcp_cancel_token_clone(a);
    CHECK(b != NULL && b != a);
    CHECK(!mcp_cancel_token_is_cancelled(b));
    mcp_cancel_token_cancel(b);
    EXPECT(mcp_cancel_token_is_cancelled(a));
    EXPECT(mcp_cancel_token_is_cancelled(b));
    mcp_cancel_token_cancel(a); /* idempotent */
    mcp_cancel_token_cancel(b);
    EXPECT(mcp_cancel_token_is_cancelled(a));
    mcp_cancel_token_free(b);
    EXPECT(mcp_cancel_token_is_cancelled(a)); /* the other handle lives on */
    mcp_cancel_token *c = mcp_cancel_token_clone(a);
    mcp_cancel_token_free(a);
    EXPECT(mcp_cancel_token_is_cancelled(c));
    mcp_cancel_token_free(c);
    /* A fresh token is independent. */
    mcp_cancel_token *d = mcp_cancel_token_new();
    EXPECT(!mcp_cancel_token_is_cancelled(d));
    mcp_cancel_token_free(d);
}

static void test_config_builder(void)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(NULL, &cfg, &err), MCP_OK, err);
    CHECK(cfg != NULL);
    CHECK_STATUS(mcp_config_set_command(cfg, fixture_path(), &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_add_arg(cfg, "--era", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_add_arg(cfg, "dual", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_env(cfg, "MCP_CTEST_A", "1", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_env(cfg, "MCP_CTEST_A", "2", &err), MCP_OK, err); /* replace */
    CHECK_STATUS(mcp_config_set_env(cfg, "MCP_CTEST_EMPTY", "", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_env_mode(cfg, MCP_ENV_REPLACE, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_env_mode(cfg, MCP_ENV_INHERIT, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_env_mode(cfg, MCP_ENV_ALLOWLIST, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_cwd(cfg, "/", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_mode(cfg, MCP_MODE_LEGACY, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_mode(cfg, MCP_MODE_MODERN, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_mode(cfg, MCP_MODE_AUTO, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_request_timeout_ms(cfg, 4000, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_request_timeout_ms(cfg, MCP_TIMEOUT_DEFAULT, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_request_timeout_ms(cfg, MCP_TIMEOUT_NONE, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_config_set_request_timeout_ms(cfg, MCP_MAX_TIMEOUT_MS + 1, &err),
                  MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    CHECK_STATUS(mcp_config_set_request_timeout_ms(cfg, 5000, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_input_required_max_rounds(cfg, 3, &err), MCP_OK, err);
    CHECK(err == NULL);

    mcp_client *client = NULL;
    CHECK_STATUS(mcp_client_new(cfg, &client, &err), MCP_OK, err);
    /* The client copied the config: editing or freeing it now changes nothing. */
    CHECK_STATUS(mcp_config_set_command(cfg, "/nonexistent/server", &err), MCP_OK, err);
    mcp_config_free(cfg);
    CHECK(client != NULL);
    CHECK(mcp_client_era(client) == MCP_ERA_NONE);
    char *out = NULL;
    mcp_status st = mcp_client_connect(client, NULL, NULL, &err);
    EXPECT_STATUS(st, MCP_OK, err);
    mcp_error_free(err);
    err = NULL;
    if (st == MCP_OK) {
        out = tool_ok(client, "echo", "{\"text\":\"built\"}");
        EXPECT_CONTAINS(out, "built");
        mcp_string_free(out);
    }
    mcp_client_free(client);
}

static void test_config_from_json(void)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"command\":\"%s\",\"args\":[\"--era\",\"legacy\"],\"env\":{\"X\":\"y\"},"
             "\"env_mode\":\"inherit\",\"cwd\":\"/\",\"mode\":\"auto\","
             "\"client_info\":{\"name\":\"c-tests\",\"version\":\"9\"},"
             "\"request_timeout_ms\":5000,\"probe_timeout_ms\":2000,"
             "\"input_required_max_rounds\":4,\"max_pages\":10,\"max_message_bytes\":1048576,"
             "\"stderr_tail_lines\":5,\"shutdown_grace_ms\":500}",
             fixture_path_json());
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(json, &cfg, &err), MCP_OK, err);
    mcp_client *client = client_from_config(cfg);
    CHECK(client != NULL);
    char *info = NULL;
    mcp_status st = mcp_client_connect(client, NULL, &info, &err);
    EXPECT_STATUS(st, MCP_OK, err);
    mcp_error_free(err);
    EXPECT(mcp_client_era(client) == MCP_ERA_LEGACY);
    EXPECT_CONTAINS(info, "\"era\":\"legacy\"");
    mcp_string_free(info);
    mcp_client_free(client);
}

static void test_config_null_args(void)
{
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(NULL, NULL, &err), MCP_NULL_ARG, err);
    CHECK(err != NULL && mcp_error_status(err) == MCP_NULL_ARG);
    mcp_error_free(err);
    err = NULL;

#define NULL_CFG(call)                                                                         \
    do {                                                                                       \
        mcp_error *e_ = NULL;                                                                  \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, MCP_NULL_ARG, e_);                                                   \
        EXPECT(e_ != NULL && mcp_error_status(e_) == MCP_NULL_ARG);                            \
        mcp_error_free(e_);                                                                    \
    } while (0)
    NULL_CFG(mcp_config_set_command(NULL, "x", &e_));
    NULL_CFG(mcp_config_add_arg(NULL, "x", &e_));
    NULL_CFG(mcp_config_set_env(NULL, "A", "b", &e_));
    NULL_CFG(mcp_config_set_env_mode(NULL, MCP_ENV_INHERIT, &e_));
    NULL_CFG(mcp_config_set_cwd(NULL, "/", &e_));
    NULL_CFG(mcp_config_set_mode(NULL, MCP_MODE_AUTO, &e_));
    NULL_CFG(mcp_config_set_protocol_version(NULL, "2025-06-18", &e_));
    NULL_CFG(mcp_config_set_request_timeout_ms(NULL, 1, &e_));
    NULL_CFG(mcp_config_set_input_required_max_rounds(NULL, 1, &e_));
    NULL_CFG(mcp_config_set_url(NULL, "http://127.0.0.1:1/mcp", &e_));
    NULL_CFG(mcp_config_add_header(NULL, "X-A", "b", &e_));
    NULL_CFG(mcp_config_set_bearer_token(NULL, "t", &e_));

    mcp_config *cfg = NULL;
    CHECK_STATUS(mcp_config_new(NULL, &cfg, &err), MCP_OK, err);
    NULL_CFG(mcp_config_set_command(cfg, NULL, &e_));
    NULL_CFG(mcp_config_add_arg(cfg, NULL, &e_));
    NULL_CFG(mcp_config_set_env(cfg, NULL, "b", &e_));
    NULL_CFG(mcp_config_set_env(cfg, "A", NULL, &e_));
    NULL_CFG(mcp_config_set_cwd(cfg, NULL, &e_));
    NULL_CFG(mcp_config_set_protocol_version(cfg, NULL, &e_));
    NULL_CFG(mcp_config_set_url(cfg, NULL, &e_));
    NULL_CFG(mcp_config_add_header(cfg, NULL, "b", &e_));
    NULL_CFG(mcp_config_add_header(cfg, "X-A", NULL, &e_));
    NULL_CFG(mcp_config_set_bearer_token(cfg, NULL, &e_));
#undef NULL_CFG
    mcp_config_free(cfg);
}

static void test_config_bad_strings(void)
{
    mcp_config *cfg = (mcp_config *)SENTINEL_STR;
    mcp_error *err = NULL;
    /* mcp_config_new: bad UTF-8, bad JSON, not an object; output untouched. */
    CHECK_STATUS(mcp_config_new(BAD_UTF8, &cfg, &err), MCP_INVALID_UTF8, err);
    CHECK(mcp_error_status(err) == MCP_INVALID_UTF8);
    mcp_error_free(err);
    err = NULL;
    CHECK_STATUS(mcp_config_new(BAD_JSON, &cfg, &err), MCP_INVALID_JSON, err);
    mcp_error_free(err);
    err = NULL;
    CHECK_STATUS(mcp_config_new("[1,2]", &cfg, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    CHECK_STATUS(mcp_config_new("\"text\"", &cfg, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    CHECK(cfg == (mcp_config *)SENTINEL_STR);

    cfg = NULL;
    CHECK_STATUS(mcp_config_new(NULL, &cfg, &err), MCP_OK, err);
#define BAD(call, want)                                                                        \
    do {                                                                                       \
        mcp_error *e_ = NULL;                                                                  \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, want, e_);                                                           \
        EXPECT(e_ != NULL && mcp_error_status(e_) == (want));                                  \
        mcp_error_free(e_);                                                                    \
    } while (0)
    BAD(mcp_config_set_command(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_add_arg(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_set_env(cfg, BAD_UTF8, "v", &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_set_env(cfg, "A", BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_set_cwd(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_set_protocol_version(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_set_url(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_add_header(cfg, BAD_UTF8, "v", &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_add_header(cfg, "X-A", BAD_UTF8, &e_), MCP_INVALID_UTF8);
    BAD(mcp_config_set_bearer_token(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    /* Invalid values. */
    BAD(mcp_config_set_env(cfg, "", "v", &e_), MCP_INVALID_ARG);
    BAD(mcp_config_set_env(cfg, "A=B", "v", &e_), MCP_INVALID_ARG);
    BAD(mcp_config_set_env_mode(cfg, 7, &e_), MCP_INVALID_ARG);
    BAD(mcp_config_set_env_mode(cfg, -1, &e_), MCP_INVALID_ARG);
    BAD(mcp_config_set_mode(cfg, 3, &e_), MCP_INVALID_ARG);
    BAD(mcp_config_set_mode(cfg, -1, &e_), MCP_INVALID_ARG);
#undef BAD
    /* None of the failures above stored anything: the config is still empty, so creating a
     * client fails for the missing command (and not for a bad value). */
    mcp_client *client = (mcp_client *)SENTINEL_STR;
    CHECK_STATUS(mcp_client_new(cfg, &client, &err), MCP_INVALID_ARG, err);
    CHECK_CONTAINS(mcp_error_message(err), "command");
    CHECK(client == (mcp_client *)SENTINEL_STR);
    mcp_error_free(err);
    mcp_config_free(cfg);
}

static void test_client_new_errors(void)
{
    mcp_client *client = (mcp_client *)SENTINEL_STR;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_new(NULL, &client, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    CHECK(client == (mcp_client *)SENTINEL_STR);

    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    CHECK_STATUS(mcp_client_new(cfg, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    mcp_config_free(cfg);

    /* Unknown keys and wrongly typed values are rejected when the client is made. */
    const char *bad[] = {
        "{\"command\":\"x\",\"comand\":\"typo\"}",
        "{\"command\":42}",
        "{\"command\":\"x\",\"args\":\"not-an-array\"}",
        "{\"command\":\"x\",\"request_timeout_ms\":-5}",
        "{\"command\":\"x\",\"mode\":\"sideways\"}",
        "{\"command\":\"x\",\"env_mode\":\"sometimes\"}",
        "{}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg = NULL;
        CHECK_STATUS(mcp_config_new(bad[i], &cfg, &err), MCP_OK, err);
        client = (mcp_client *)SENTINEL_STR;
        mcp_status st = mcp_client_new(cfg, &client, &err);
        mcp_config_free(cfg);
        CHECK_MSG(st == MCP_INVALID_ARG, "config %s: status %d, want MCP_INVALID_ARG", bad[i],
                  (int)st);
        CHECK(client == (mcp_client *)SENTINEL_STR);
        mcp_error_free(err);
        err = NULL;
    }
}

/* HTTP settings: the setters accept their values; a client for a URL nobody listens on either
 * is refused at creation (a build without that transport) or fails to connect with a transport
 * status, promptly. */
static void test_config_http_settings(void)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(NULL, &cfg, &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_url(cfg, "http://127.0.0.1:1/mcp", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_add_header(cfg, "X-Test", "one", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_add_header(cfg, "X-Test", "two", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_add_header(cfg, "X-Other", "", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_bearer_token(cfg, "secret-token", &err), MCP_OK, err);
    CHECK_STATUS(mcp_config_set_request_timeout_ms(cfg, 2000, &err), MCP_OK, err);
    mcp_client *client = (mcp_client *)SENTINEL_STR;
    mcp_status st = mcp_client_new(cfg, &client, &err);
    mcp_config_free(cfg);
    if (st != MCP_OK) {
        CHECK_MSG(st == MCP_INVALID_ARG || st == MCP_UNSUPPORTED,
                  "mcp_client_new(url): status %d (%s)", (int)st, mcp_error_message(err));
        CHECK(client == (mcp_client *)SENTINEL_STR);
        mcp_error_free(err);
        return;
    }
    double t0 = now_ms();
    char *info = SENTINEL_STR;
    st = mcp_client_connect(client, NULL, &info, &err);
    EXPECT_MSG(mcp_status_is_transport(st), "connect to a closed port: status %d (%s)", (int)st,
               err ? mcp_error_message(err) : "");
    EXPECT(now_ms() - t0 < tscale(4000));
    EXPECT(info == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(client);
}

/* A command that does not exist: the client is made, connecting fails with a transport error. */
static void test_spawn_failure(void)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new("{\"command\":\"/nonexistent/mcp-server-xyz\"}", &cfg, &err),
                 MCP_OK, err);
    mcp_client *client = client_from_config(cfg);
    CHECK(client != NULL);
    char *info = SENTINEL_STR;
    mcp_status st = mcp_client_connect(client, NULL, &info, &err);
    EXPECT(st != MCP_OK);
    EXPECT(err != NULL && mcp_error_status(err) == st);
    EXPECT(info == SENTINEL_STR);
    EXPECT(mcp_client_era(client) == MCP_ERA_NONE);
    mcp_error_free(err);
    mcp_client_free(client);
}

/* Every function that takes a client, with NULL: MCP_NULL_ARG, outputs untouched. */
static void test_null_client(void)
{
    mcp_error *e_ = NULL;
    char *out = SENTINEL_STR;
#define NULL_CLIENT(call)                                                                      \
    do {                                                                                       \
        e_ = NULL;                                                                             \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, MCP_NULL_ARG, e_);                                                   \
        EXPECT(e_ != NULL && mcp_error_status(e_) == MCP_NULL_ARG);                            \
        mcp_error_free(e_);                                                                    \
    } while (0)
    NULL_CLIENT(mcp_client_connect(NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_server_info(NULL, &out, &e_));
    NULL_CLIENT(mcp_client_list(NULL, MCP_LIST_TOOLS, NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_list_all(NULL, MCP_LIST_TOOLS, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_call_tool(NULL, "echo", NULL, NULL, NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_get_prompt(NULL, "plain", NULL, NULL, NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_read_resource(NULL, "fixture://static", NULL, NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_complete(NULL, "{}", NULL, &out, &e_));
    NULL_CLIENT(mcp_client_request(NULL, "tools/list", NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_ping(NULL, NULL, &e_));
    NULL_CLIENT(mcp_client_set_log_level(NULL, "info", NULL, &e_));
    NULL_CLIENT(mcp_client_subscribe_resource(NULL, "fixture://static", NULL, &e_));
    NULL_CLIENT(mcp_client_unsubscribe_resource(NULL, "fixture://static", NULL, &e_));
    NULL_CLIENT(mcp_client_notify_roots_changed(NULL, &e_));
    NULL_CLIENT(mcp_client_list_skills(NULL, NULL, &out, &e_));
    NULL_CLIENT(mcp_client_get_skill(NULL, "skill://a/SKILL.md", NULL, &out, &e_));
    NULL_CLIENT(mcp_client_read_skill_file(NULL, "{}", NULL, NULL, &out, &e_));
    mcp_subscription *sub = (mcp_subscription *)SENTINEL_STR;
    NULL_CLIENT(mcp_client_listen(NULL, "{\"toolsListChanged\":true}", NULL, &sub, &e_));
    CHECK(sub == (mcp_subscription *)SENTINEL_STR);
    CHECK(out == SENTINEL_STR);

    /* Registration on NULL fails, yet userdata_free still runs exactly once. */
    struct counted ud[5];
    memset(ud, 0, sizeof ud);
    NULL_CLIENT(mcp_client_on_elicitation(NULL, NULL, &ud[0], counted_free, &e_));
    NULL_CLIENT(mcp_client_on_sampling(NULL, NULL, &ud[1], counted_free, &e_));
    NULL_CLIENT(mcp_client_on_roots(NULL, NULL, &ud[2], counted_free, &e_));
    NULL_CLIENT(mcp_client_set_notification_handler(NULL, NULL, &ud[3], counted_free, &e_));
    NULL_CLIENT(mcp_client_set_log_handler(NULL, NULL, &ud[4], counted_free, &e_));
    for (int i = 0; i < 5; i++)
        EXPECT(ud[i].frees == 1);

    /* Subscriptions and responders. */
    NULL_CLIENT(mcp_subscription_acknowledged(NULL, &out, &e_));
    NULL_CLIENT(mcp_subscription_next(NULL, 0, &out, &e_));
    NULL_CLIENT(mcp_subscription_cancel(NULL, &e_));
    NULL_CLIENT(mcp_responder_reply_json(NULL, "{}", &e_));
    NULL_CLIENT(mcp_responder_reply_error(NULL, -1, "x", &e_));
    CHECK(out == SENTINEL_STR);
#undef NULL_CLIENT
    /* With err_out NULL too. */
    CHECK(mcp_client_connect(NULL, NULL, NULL, NULL) == MCP_NULL_ARG);
    CHECK(mcp_client_call_tool(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MCP_NULL_ARG);
}

/* NULL required arguments on a real client: MCP_NULL_ARG, nothing started. */
static void test_null_args_on_client(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    mcp_error *e_ = NULL;
    char *out = SENTINEL_STR;
#define NULL_ARG(call)                                                                         \
    do {                                                                                       \
        e_ = NULL;                                                                             \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, MCP_NULL_ARG, e_);                                                   \
        mcp_error_free(e_);                                                                    \
    } while (0)
    NULL_ARG(mcp_client_server_info(c, NULL, &e_));
    NULL_ARG(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, NULL, &e_));
    NULL_ARG(mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, NULL, &e_));
    NULL_ARG(mcp_client_call_tool(c, NULL, NULL, NULL, NULL, NULL, &out, &e_));
    NULL_ARG(mcp_client_call_tool(c, "echo", NULL, NULL, NULL, NULL, NULL, &e_));
    NULL_ARG(mcp_client_get_prompt(c, NULL, NULL, NULL, NULL, NULL, &out, &e_));
    NULL_ARG(mcp_client_get_prompt(c, "plain", NULL, NULL, NULL, NULL, NULL, &e_));
    NULL_ARG(mcp_client_read_resource(c, NULL, NULL, NULL, NULL, &out, &e_));
    NULL_ARG(mcp_client_read_resource(c, "fixture://static", NULL, NULL, NULL, NULL, &e_));
    NULL_ARG(mcp_client_complete(c, NULL, NULL, &out, &e_));
    NULL_ARG(mcp_client_complete(c, "{}", NULL, NULL, &e_));
    NULL_ARG(mcp_client_request(c, NULL, NULL, NULL, &out, &e_));
    NULL_ARG(mcp_client_request(c, "tools/list", NULL, NULL, NULL, &e_));
    NULL_ARG(mcp_client_set_log_level(c, NULL, NULL, &e_));
    NULL_ARG(mcp_client_subscribe_resource(c, NULL, NULL, &e_));
    NULL_ARG(mcp_client_unsubscribe_resource(c, NULL, NULL, &e_));
    mcp_subscription *sub = (mcp_subscription *)SENTINEL_STR;
    NULL_ARG(mcp_client_listen(c, NULL, NULL, &sub, &e_));
    NULL_ARG(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, NULL, &e_));
#undef NULL_ARG
    CHECK(out == SENTINEL_STR);
    CHECK(sub == (mcp_subscription *)SENTINEL_STR);
    /* Nothing connected: still no server info, no era. */
    CHECK(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_client_free(c);
}

static void test_server_info_before_connect(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    /* Not connected yet is its own status, distinct from a closed client. */
    EXPECT_STATUS(mcp_client_server_info(c, &out, &err), MCP_NOT_CONNECTED, err);
    EXPECT(out == SENTINEL_STR);
    EXPECT(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* Bad UTF-8, bad JSON and non-object JSON are refused before anything is sent: the record of
 * the server's stdin shows no tools/call (or other request) for them. */
static void test_invalid_input_nothing_sent(void)
{
    char rec[512];
    CHECK(temp_file(rec, sizeof rec, "record"));
    mcp_client *c = connected_client("--record", rec, (const char *)NULL);
    CHECK(c != NULL);
    size_t before_len = 0;
    char *before = slurp(rec, &before_len);
    CHECK(before != NULL);
    free(before);

    char *out = SENTINEL_STR;
    mcp_error *e_ = NULL;
    mcp_subscription *sub = (mcp_subscription *)SENTINEL_STR;
    mcp_call_opts opts;
#define REFUSED(call, want)                                                                    \
    do {                                                                                       \
        e_ = NULL;                                                                             \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, want, e_);                                                           \
        EXPECT(e_ != NULL && mcp_error_status(e_) == (want));                                  \
        mcp_error_free(e_);                                                                    \
    } while (0)
    /* tools/call */
    REFUSED(mcp_client_call_tool(c, BAD_UTF8, NULL, NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_UTF8);
    REFUSED(mcp_client_call_tool(c, "echo", BAD_UTF8, NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_UTF8);
    REFUSED(mcp_client_call_tool(c, "echo", BAD_JSON, NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_JSON);
    REFUSED(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"} trailing", NULL, NULL, NULL, &out,
                                 &e_),
            MCP_INVALID_JSON);
    REFUSED(mcp_client_call_tool(c, "echo", "[\"not\",\"an object\"]", NULL, NULL, NULL, &out,
                                 &e_),
            MCP_INVALID_ARG);
    REFUSED(mcp_client_call_tool(c, "echo", "null", NULL, NULL, NULL, &out, &e_), MCP_INVALID_ARG);
    REFUSED(mcp_client_call_tool(c, "echo", " \"{}\"", NULL, NULL, NULL, &out, &e_), MCP_INVALID_ARG);
    /* A lone surrogate escape is refused as the decoder refuses it (arguments travel as text). */
    REFUSED(mcp_client_call_tool(c, "echo", "{\"text\":\"\\ud800\"}", NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_JSON);
    REFUSED(mcp_client_call_tool(c, "echo", "{}", BAD_JSON, NULL, NULL, &out, &e_),
            MCP_INVALID_JSON);
    REFUSED(mcp_client_call_tool(c, "echo", "{}", "42", NULL, NULL, &out, &e_),
            MCP_INVALID_ARG);
    REFUSED(mcp_client_call_tool(c, "echo", "{}", NULL, BAD_UTF8, NULL, &out, &e_),
            MCP_INVALID_UTF8);
    /* Bad options. */
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.meta_json = BAD_JSON;
    REFUSED(mcp_client_call_tool(c, "echo", "{}", NULL, NULL, &opts, &out, &e_),
            MCP_INVALID_JSON);
    opts.meta_json = BAD_UTF8;
    REFUSED(mcp_client_call_tool(c, "echo", "{}", NULL, NULL, &opts, &out, &e_),
            MCP_INVALID_UTF8);
    opts.meta_json = "[1]";
    REFUSED(mcp_client_call_tool(c, "echo", "{}", NULL, NULL, &opts, &out, &e_),
            MCP_INVALID_ARG);
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.log_level = BAD_UTF8;
    REFUSED(mcp_client_call_tool(c, "echo", "{}", NULL, NULL, &opts, &out, &e_),
            MCP_INVALID_UTF8);
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.version = 999; /* not initialised by mcp_call_opts_init */
    REFUSED(mcp_client_call_tool(c, "echo", "{}", NULL, NULL, &opts, &out, &e_),
            MCP_INVALID_ARG);
    /* The other calls. */
    REFUSED(mcp_client_get_prompt(c, BAD_UTF8, NULL, NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_UTF8);
    REFUSED(mcp_client_get_prompt(c, "greeting", BAD_JSON, NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_JSON);
    REFUSED(mcp_client_get_prompt(c, "greeting", "{}", "{", NULL, NULL, &out, &e_),
            MCP_INVALID_JSON);
    REFUSED(mcp_client_read_resource(c, BAD_UTF8, NULL, NULL, NULL, &out, &e_),
            MCP_INVALID_UTF8);
    REFUSED(mcp_client_read_resource(c, "fixture://static", NULL, BAD_UTF8, NULL, &out, &e_),
            MCP_INVALID_UTF8);
    REFUSED(mcp_client_complete(c, BAD_JSON, NULL, &out, &e_), MCP_INVALID_JSON);
    REFUSED(mcp_client_complete(c, BAD_UTF8, NULL, &out, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_complete(c, "[]", NULL, &out, &e_), MCP_INVALID_ARG);
    REFUSED(mcp_client_request(c, BAD_UTF8, NULL, NULL, &out, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_request(c, "tools/list", BAD_JSON, NULL, &out, &e_), MCP_INVALID_JSON);
    REFUSED(mcp_client_list(c, MCP_LIST_TOOLS, BAD_UTF8, NULL, &out, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_list(c, 42, NULL, NULL, &out, &e_), MCP_INVALID_ARG);
    REFUSED(mcp_client_list(c, -1, NULL, NULL, &out, &e_), MCP_INVALID_ARG);
    REFUSED(mcp_client_list_all(c, 42, NULL, &out, &e_), MCP_INVALID_ARG);
    REFUSED(mcp_client_set_log_level(c, BAD_UTF8, NULL, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_set_log_level(c, "loud", NULL, &e_), MCP_INVALID_ARG);
    REFUSED(mcp_client_subscribe_resource(c, BAD_UTF8, NULL, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_unsubscribe_resource(c, BAD_UTF8, NULL, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_listen(c, BAD_JSON, NULL, &sub, &e_), MCP_INVALID_JSON);
    REFUSED(mcp_client_listen(c, BAD_UTF8, NULL, &sub, &e_), MCP_INVALID_UTF8);
    REFUSED(mcp_client_listen(c, "[true]", NULL, &sub, &e_), MCP_INVALID_ARG);
#undef REFUSED
    CHECK(out == SENTINEL_STR);
    CHECK(sub == (mcp_subscription *)SENTINEL_STR);

    size_t mid_len = 0;
    char *mid = slurp(rec, &mid_len);
    EXPECT(mid != NULL && mid_len == before_len);
    free(mid);

    /* One good call afterwards: it is the only tools/call the server ever read. */
    out = tool_ok(c, "echo", "{\"text\":\"the only call\"}");
    EXPECT_CONTAINS(out, "the only call");
    mcp_string_free(out);
    char *after = slurp(rec, NULL);
    CHECK(after != NULL);
    EXPECT(count_occurrences(after, "\"tools/call\"") == 1);
    EXPECT(count_occurrences(after, "\"prompts/get\"") == 0);
    EXPECT(count_occurrences(after, "\"resources/read\"") == 0);
    EXPECT(count_occurrences(after, "\"completion/complete\"") == 0);
    EXPECT(count_occurrences(after, "subscriptions/listen") == 0);
    EXPECT(count_occurrences(after, "\xff") == 0);
    free(after);
    mcp_client_free(c);
    remove(rec);
}

/* After mcp_client_close every call returns MCP_CLOSED and writes nothing. */
static void test_closed_client(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_client_close(c);
    mcp_client_close(c); /* idempotent */
    char *out = SENTINEL_STR;
    mcp_error *e_ = NULL;
    mcp_subscription *sub = (mcp_subscription *)SENTINEL_STR;
#define CLOSED(call)                                                                           \
    do {                                                                                       \
        e_ = NULL;                                                                             \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, MCP_CLOSED, e_);                                                     \
        EXPECT(e_ != NULL && mcp_error_status(e_) == MCP_CLOSED);                              \
        mcp_error_free(e_);                                                                    \
    } while (0)
    CLOSED(mcp_client_connect(c, NULL, &out, &e_));
    CLOSED(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &out, &e_));
    CLOSED(mcp_client_list_all(c, MCP_LIST_PROMPTS, NULL, &out, &e_));
    CLOSED(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, NULL, NULL, &out, &e_));
    CLOSED(mcp_client_get_prompt(c, "plain", NULL, NULL, NULL, NULL, &out, &e_));
    CLOSED(mcp_client_read_resource(c, "fixture://static", NULL, NULL, NULL, &out, &e_));
    CLOSED(mcp_client_complete(
        c, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greeting\"},"
           "\"argument\":{\"name\":\"name\",\"value\":\"a\"}}",
        NULL, &out, &e_));
    CLOSED(mcp_client_request(c, "tools/list", NULL, NULL, &out, &e_));
    CLOSED(mcp_client_ping(c, NULL, &e_));
    CLOSED(mcp_client_set_log_level(c, "info", NULL, &e_));
    CLOSED(mcp_client_subscribe_resource(c, "fixture://static", NULL, &e_));
    CLOSED(mcp_client_unsubscribe_resource(c, "fixture://static", NULL, &e_));
    CLOSED(mcp_client_notify_roots_changed(c, &e_));
    CLOSED(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &e_));
#undef CLOSED
    EXPECT(out == SENTINEL_STR);
    EXPECT(sub == (mcp_subscription *)SENTINEL_STR);
    mcp_client_free(c);

    /* Closing a client that never connected: nothing is started later. */
    c = fixture_client(NULL);
    CHECK(c != NULL);
    mcp_client_close(c);
    e_ = NULL;
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &e_), MCP_CLOSED, e_);
    mcp_error_free(e_);
    EXPECT(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_client_free(c);
}

/* The JSON pointer helpers (RFC 6901). */
static void test_json_helpers(void)
{
    const char *doc = "{\"content\":[{\"type\":\"text\",\"text\":\"h\\u00e9 \\\"q\\\" \\n\"},"
                      "{\"n\":42}],\"a/b\":{\"m~n\":true},\"nil\":null}";
    char *out = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_json_pointer(doc, "/content/1/n", &out, &err), MCP_OK, err);
    EXPECT(out && strcmp(out, "42") == 0);
    mcp_string_free(out);
    out = NULL;
    CHECK_STATUS(mcp_json_pointer(doc, "/content/1", &out, &err), MCP_OK, err);
    EXPECT(out && strcmp(out, "{\"n\":42}") == 0);
    mcp_string_free(out);
    out = NULL;
    CHECK_STATUS(mcp_json_pointer(doc, "", &out, &err), MCP_OK, err); /* the whole document */
    EXPECT_CONTAINS(out, "\"a/b\":{\"m~n\":true}");
    mcp_string_free(out);
    out = NULL;
    CHECK_STATUS(mcp_json_pointer(doc, "/a~1b/m~0n", &out, &err), MCP_OK, err); /* escapes */
    EXPECT(out && strcmp(out, "true") == 0);
    mcp_string_free(out);
    out = NULL;
    CHECK_STATUS(mcp_json_pointer(doc, "/nil", &out, &err), MCP_OK, err);
    EXPECT(out && strcmp(out, "null") == 0);
    mcp_string_free(out);
    out = NULL;
    CHECK_STATUS(mcp_json_pointer(doc, "/content/0/text", &out, &err), MCP_OK, err);
    EXPECT(out && strcmp(out, "\"h\xc3\xa9 \\\"q\\\" \\n\"") == 0); /* JSON text, re-encoded */
    mcp_string_free(out);
    out = NULL;
    /* mcp_json_string: unquoted and unescaped */
    CHECK_STATUS(mcp_json_string(doc, "/content/0/text", &out, &err), MCP_OK, err);
    EXPECT(out && strcmp(out, "h\xc3\xa9 \"q\" \n") == 0);
    mcp_string_free(out);

    /* failures: output untouched, the right status */
    out = SENTINEL_STR;
#define JBAD(call, want)                                                                       \
    do {                                                                                       \
        mcp_error *e_ = NULL;                                                                  \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, want, e_);                                                           \
        EXPECT(e_ != NULL && mcp_error_status(e_) == (want));                                  \
        mcp_error_free(e_);                                                                    \
    } while (0)
    JBAD(mcp_json_pointer(doc, "/missing", &out, &e_), MCP_INVALID_ARG);
    JBAD(mcp_json_pointer(doc, "/content/7", &out, &e_), MCP_INVALID_ARG);
    JBAD(mcp_json_pointer(doc, "no-leading-slash", &out, &e_), MCP_INVALID_ARG);
    JBAD(mcp_json_pointer(BAD_JSON, "", &out, &e_), MCP_INVALID_JSON);
    JBAD(mcp_json_pointer(BAD_UTF8, "", &out, &e_), MCP_INVALID_UTF8);
    JBAD(mcp_json_pointer(doc, BAD_UTF8, &out, &e_), MCP_INVALID_UTF8);
    JBAD(mcp_json_pointer(NULL, "", &out, &e_), MCP_NULL_ARG);
    JBAD(mcp_json_pointer(doc, NULL, &out, &e_), MCP_NULL_ARG);
    JBAD(mcp_json_pointer(doc, "", NULL, &e_), MCP_NULL_ARG);
    JBAD(mcp_json_string(doc, "/content/1/n", &out, &e_), MCP_INVALID_ARG); /* not a string */
    JBAD(mcp_json_string(doc, "/nil", &out, &e_), MCP_INVALID_ARG);
    JBAD(mcp_json_string(doc, "/missing", &out, &e_), MCP_INVALID_ARG);
    JBAD(mcp_json_string(BAD_JSON, "", &out, &e_), MCP_INVALID_JSON);
    JBAD(mcp_json_string(BAD_UTF8, "", &out, &e_), MCP_INVALID_UTF8);
    JBAD(mcp_json_string(NULL, "", &out, &e_), MCP_NULL_ARG);
    JBAD(mcp_json_string(doc, NULL, &out, &e_), MCP_NULL_ARG);
    JBAD(mcp_json_string(doc, "/content/0/text", NULL, &e_), MCP_NULL_ARG);
#undef JBAD
    EXPECT(out == SENTINEL_STR);
    EXPECT(mcp_json_pointer(doc, "/missing", &out, NULL) == MCP_INVALID_ARG);

    /* on a real result */
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *result = tool_ok(c, "echo", "{\"text\":\"via pointer\"}");
    out = NULL;
    EXPECT_STATUS(mcp_json_string(result, "/content/0/text", &out, &err), MCP_OK, err);
    EXPECT(out && strcmp(out, "via pointer") == 0);
    mcp_string_free(out);
    mcp_string_free(result);
    mcp_client_free(c);
}

/* Objects may be freed in any order: errors and strings outlive their client. */
static void test_free_order(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL, *info = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_server_info(c, &info, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_call_tool(c, "rpc_error", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    mcp_client_free(c);
    EXPECT(err != NULL && mcp_error_status(err) == MCP_JSONRPC_ERROR);
    EXPECT_CONTAINS(mcp_error_data_json(err), "on purpose");
    /* The server's message as sent; mcp_error_message wraps it with context. */
    EXPECT(mcp_error_jsonrpc_message(err) != NULL && strcmp(mcp_error_jsonrpc_message(err), "fixture error") == 0);
    EXPECT_CONTAINS(mcp_error_message(err), "fixture error");
    EXPECT(strcmp(mcp_error_message(err), "fixture error") != 0);
    EXPECT_CONTAINS(info, "mcp-fixture-server");
    mcp_error_free(err);
    mcp_string_free(info);
}

const struct test_case api_tests[] = {
    {"api/version_and_abi", test_version_and_abi},
    {"api/status_strings", test_status_strings},
    {"api/status_names", test_status_names},
    {"api/status_is_transport", test_status_is_transport},
    {"api/free_null_is_noop", test_free_null_is_noop},
    {"api/error_accessors_on_null", test_error_accessors_on_null},
    {"api/error_object_of_api_failure", test_error_object_of_api_failure},
    {"api/call_opts_init", test_call_opts_init},
    {"api/cancel_token", test_cancel_token},
    {"api/config_builder", test_config_builder},
    {"api/config_from_json", test_config_from_json},
    {"api/config_null_args", test_config_null_args},
    {"api/config_bad_strings", test_config_bad_strings},
    {"api/client_new_errors", test_client_new_errors},
    {"api/config_http_settings", test_config_http_settings},
    {"api/spawn_failure", test_spawn_failure},
    {"api/null_client", test_null_client},
    {"api/null_args_on_client", test_null_args_on_client},
    {"api/server_info_before_connect", test_server_info_before_connect},
    {"api/invalid_input_nothing_sent", test_invalid_input_nothing_sent},
    {"api/closed_client", test_closed_client},
    {"api/json_helpers", test_json_helpers},
    {"api/free_order", test_free_order},
};
const size_t api_tests_count = sizeof api_tests / sizeof api_tests[0];
