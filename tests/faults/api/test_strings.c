/* Silent data changes: NUL characters and numbers beyond 64 bits. */
#define _GNU_SOURCE
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* U+0000 inside JSON arguments reaches the server and comes back escaped, never as a raw NUL
 * that would end the C string early; the exact-text accessor refuses rather than truncate. */
static void nul_in_json_round_trips_escaped(void)
{
    mcp_client *c = client_json("{\"command\":\"%s\",\"args\":[\"--era\",\"modern\"]}", fixture());
    CHECK(c);
    char *res = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"echo\\u0000evil\"}", NULL, NULL, NULL,
                                         &res, &err);
    mcp_client_free(c);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK_CONTAINS(res, "echo\\u0000evil");
    char *text = NULL;
    st = mcp_json_string(res, "/content/0/text", &text, &err);
    if (st == MCP_OK)
        mcp_string_free(text);
    CHECK_STATUS(st, MCP_INVALID_ARG, err);
    CHECK_CONTAINS(mcp_error_message(err), "U+0000");
    mcp_error_free(err);
    err = NULL;
    char *raw = NULL;
    st = mcp_json_pointer(res, "/content/0/text", &raw, &err);
    mcp_string_free(res);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK(strcmp(raw, "\"echo\\u0000evil\"") == 0);
    mcp_string_free(raw);
}

/* A modern server whose input_required carries a requestState holding U+0000: the manual route
 * cannot hand it over as a C string, so the accessor gives NULL and the message says why (the
 * exact state stays readable in the result JSON, escaped); it is never handed over shortened. */
static void a_request_state_with_nul_is_never_shortened(void)
{
    char script[128];
    snprintf(script, sizeof script, "/tmp/mcp-faults-api-%d-state.sh", (int)getpid());
    FILE *f = fopen(script, "w");
    CHECK(f);
    fputs("read line\n"
          "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
          "\"capabilities\":{\"tools\":{}},\"resultType\":\"complete\"}}'\n"
          "read line\n"
          "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"input_required\","
          "\"inputRequests\":{\"a\":{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\","
          "\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}},"
          "\"requestState\":\"ab\\u0000cd\"}}'\n"
          "cat > /dev/null\n",
          f);
    fclose(f);
    mcp_client *c = client_json("{\"command\":\"/bin/sh\",\"args\":[\"%s\"],\"mode\":\"modern\"}", script);
    if (!c) {
        unlink(script);
        return;
    }
    char *res = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(c, "t", NULL, NULL, NULL, NULL, &res, &err);
    mcp_client_free(c);
    unlink(script);
    CHECK_STATUS(st, MCP_INPUT_REQUIRED, err);
    CHECK(mcp_error_request_state(err) == NULL);
    CHECK_CONTAINS(mcp_error_message(err), "requestState contains U+0000");
    CHECK_CONTAINS(mcp_error_result_json(err), "ab\\u0000cd");
    mcp_error_free(err);
}

/* Every path keeps the digits: one page (the server's bytes), all pages (decoded, merged), a
 * result through the MRTR driver, each over stdio and HTTP. */
static void check_numbers(mcp_client *c)
{
    static const char *const wanted[] = {"123456789012345678901234567890", "-18446744073709551616",
                                         "1.000000000000000000001"};
    char *page = NULL, *all = NULL, *call = NULL;
    mcp_error *err = NULL;
    /* 33 tools at 7 a page: big_numbers, listed just before typed, is on page 5. */
    mcp_status st = mcp_client_list(c, MCP_LIST_TOOLS, "page-5", NULL, &page, &err);
    CHECK_STATUS(st, MCP_OK, err);
    st = mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, &all, &err);
    CHECK_STATUS(st, MCP_OK, err);
    st = mcp_client_call_tool(c, "big_numbers", NULL, NULL, NULL, NULL, &call, &err);
    CHECK_STATUS(st, MCP_OK, err);
    /* Arguments going out keep their digits too (they are parsed before sending). */
    char *echo = NULL;
    st = mcp_client_call_tool(c, "schema_echo",
                              "{\"items\":[{\"id\":123456789012345678901234567890,"
                              "\"label\":\"-18446744073709551616 1.000000000000000000001\"}],"
                              "\"note\":\"x\"}",
                              NULL, NULL, NULL, &echo, &err);
    CHECK_STATUS(st, MCP_OK, err);
    CHECK_CONTAINS(echo, "\"id\":123456789012345678901234567890");
    for (size_t i = 0; i < 3; i++) {
        CHECK_CONTAINS(page, wanted[i]);
        CHECK_CONTAINS(all, wanted[i]);
        CHECK_CONTAINS(call, wanted[i]);
    }
    mcp_string_free(page);
    mcp_string_free(all);
    mcp_string_free(call);
    mcp_string_free(echo);
}

static void big_numbers_are_exact_over_stdio(void)
{
    for (int legacy = 0; legacy < 2; legacy++) {
        mcp_client *c = client_json("{\"command\":\"%s\",\"args\":[\"--era\",\"%s\",\"--page-size\",\"7\"]}",
                                    fixture(), legacy ? "legacy" : "modern");
        CHECK(c);
        check_numbers(c);
        mcp_client_free(c);
    }
}

static void big_numbers_are_exact_over_http(void)
{
    char url[256];
    int in = -1;
    static const char *const args[] = {"--page-size", "7", NULL};
    int pid = start_http_fixture(url, sizeof url, &in, args);
    CHECK(pid > 0);
    mcp_client *c = client_json("{\"url\":\"%s\"}", url);
    if (c) {
        check_numbers(c);
        mcp_client_free(c);
    }
    stop_http_fixture(pid, in);
}

const struct test_case string_tests[] = {
    {"strings/nul_in_json_round_trips_escaped", nul_in_json_round_trips_escaped},
    {"strings/a_request_state_with_nul_is_never_shortened", a_request_state_with_nul_is_never_shortened},
    {"numbers/big_numbers_are_exact_over_stdio", big_numbers_are_exact_over_stdio},
    {"numbers/big_numbers_are_exact_over_http", big_numbers_are_exact_over_http},
};
const size_t string_tests_count = sizeof string_tests / sizeof string_tests[0];
