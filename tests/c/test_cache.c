/* The C ABI's response caching (SEP-2549: a second tools/list within the TTL
 * sends nothing; bypass, partition, clear and the client-wide switch) and output schema
 * validation (MCP_OUTPUT_SCHEMA_INVALID with the raw result; off per call and per client). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many tools/list requests the record file holds. */
static int tools_lists(const char *record)
{
    char *wire = slurp(record, NULL);
    int n = wire ? count_occurrences(wire, "\"tools/list\"") : -1;
    free(wire);
    return n;
}

static void list_tools(mcp_client *c, const mcp_call_opts *opts)
{
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, opts, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"ttlMs\":60000");
    mcp_string_free(out);
    mcp_error_free(err);
}

static void test_second_list_within_ttl_sends_nothing(void)
{
    char record[512];
    CHECK(temp_file(record, sizeof record, "cache-record"));
    mcp_client *c = fixture_client("--cache-ttl-ms", "60000", "--cache-scope", "private", "--record", record,
                                   (const char *)NULL);
    CHECK(c != NULL);
    list_tools(c, NULL);
    list_tools(c, NULL);
    EXPECT(tools_lists(record) == 1);

    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    EXPECT(opts.cache_mode == MCP_CACHE_USE && !opts.skip_output_validation);
    opts.cache_mode = MCP_CACHE_BYPASS;
    list_tools(c, &opts);
    EXPECT(tools_lists(record) == 2);
    opts.cache_mode = MCP_CACHE_REFRESH;
    list_tools(c, &opts);
    EXPECT(tools_lists(record) == 3);
    list_tools(c, NULL);
    EXPECT(tools_lists(record) == 3);

    /* A private entry belongs to its authorization context. */
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_cache_partition(c, "user-b", &err), MCP_OK, err);
    list_tools(c, NULL);
    EXPECT(tools_lists(record) == 4);
    list_tools(c, NULL);
    EXPECT(tools_lists(record) == 4);
    EXPECT_STATUS(mcp_client_clear_cache(c, &err), MCP_OK, err);
    list_tools(c, NULL);
    EXPECT(tools_lists(record) == 5);

    opts.cache_mode = 7;
    char *out = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, &opts, &out, &err), MCP_INVALID_ARG, err);
    EXPECT(out == NULL);
    mcp_error_free(err); /* each failing call writes a new error */
    err = NULL;
    EXPECT_STATUS(mcp_client_set_cache_partition(c, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_clear_cache(NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_client_wide_switch(void)
{
    char record[512];
    CHECK(temp_file(record, sizeof record, "cache-off-record"));
    mcp_config *cfg = fixture_config("--cache-ttl-ms", "60000", "--record", record, (const char *)NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_config_set_response_cache(cfg, false, 512, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    list_tools(c, NULL);
    list_tools(c, NULL);
    EXPECT(tools_lists(record) == 2);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_output_schema_validation(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    char *ok = tool_ok(c, "typed", "{\"value\":5}");
    EXPECT_CONTAINS(ok, "\"structuredContent\":{\"result\":5}");
    mcp_string_free(ok);

    EXPECT_STATUS(mcp_client_call_tool(c, "typed", "{\"value\":\"five\"}", NULL, NULL, NULL, &out, &err),
                  MCP_OUTPUT_SCHEMA_INVALID, err);
    EXPECT(out == NULL);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "/result");
    EXPECT_CONTAINS(err ? mcp_error_result_json(err) : NULL, "\"structuredContent\":{\"result\":\"five\"}");
    EXPECT_CONTAINS(mcp_status_str(MCP_OUTPUT_SCHEMA_INVALID), "output schema");
    mcp_error_free(err);
    err = NULL;

    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.skip_output_validation = true;
    EXPECT_STATUS(mcp_client_call_tool(c, "typed", "{\"value\":\"five\"}", NULL, NULL, &opts, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"five\"");
    mcp_string_free(out);
    mcp_error_free(err);
    mcp_client_free(c);

    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    err = NULL;
    EXPECT_STATUS(mcp_config_set_validate_output_schema(cfg, false, &err), MCP_OK, err);
    c = client_from_config(cfg);
    CHECK(c != NULL);
    ok = tool_ok(c, "typed", "{\"value\":\"five\"}");
    EXPECT_CONTAINS(ok, "\"five\"");
    mcp_string_free(ok);
    mcp_error_free(err);
    mcp_client_free(c);
}

const struct test_case cache_tests[] = {
    {"cache/second_list_within_ttl_sends_nothing", test_second_list_within_ttl_sends_nothing},
    {"cache/client_wide_switch", test_client_wide_switch},
    {"cache/output_schema_validation", test_output_schema_validation},
};
const size_t cache_tests_count = sizeof cache_tests / sizeof cache_tests[0];
