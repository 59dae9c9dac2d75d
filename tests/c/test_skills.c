/* The skills extension (SEP-2640) through the C ABI, against the fixture's --skills modes:
 * list (every page, nothing fetched), get, verified reads, tampered files rejected with
 * MCP_SKILL_VERIFICATION_FAILED, and the declaration gate. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

#define HELLO "skill://fixture/hello-world/SKILL.md"
#define USAGE "skill://fixture/hello-world/notes/usage.md"

/* The fixture with --skills MODE, the extension declared, optionally recording the wire. */
static mcp_client *skills_client(const char *mode, const char *record)
{
    mcp_config *cfg = record ? fixture_config("--skills", mode, "--page-size", "1", "--record", record,
                                              (const char *)NULL)
                             : fixture_config("--skills", mode, "--page-size", "1", (const char *)NULL);
    if (!cfg) return NULL;
    mcp_error *err = NULL;
    if (mcp_config_set_skills(cfg, true, &err) != MCP_OK) {
        t_fail(__FILE__, __LINE__, "skills setting: %s", mcp_error_message(err));
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    return client_from_config(cfg);
}

/* The entry of `uri` in a skills/list result (malloc'd by the library), or NULL. */
static char *entry_of(const char *list, const char *uri)
{
    for (int i = 0;; i++) {
        char pointer[64], *got = NULL, *entry = NULL;
        snprintf(pointer, sizeof pointer, "/skills/%d/uri", i);
        if (mcp_json_string(list, pointer, &got, NULL) != MCP_OK) return NULL;
        int match = strcmp(got, uri) == 0;
        mcp_string_free(got);
        snprintf(pointer, sizeof pointer, "/skills/%d", i);
        if (match && mcp_json_pointer(list, pointer, &entry, NULL) == MCP_OK) return entry;
    }
}

static void test_list_get_and_verified_reads(void)
{
    char record[512];
    CHECK(temp_file(record, sizeof record, "skills-record"));
    mcp_client *c = skills_client("genuine", record);
    CHECK(c != NULL);
    char *list = NULL, *entry = NULL, *md = NULL, *usage = NULL, *got = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list_skills(c, NULL, &list, &err), MCP_OK, err);
    EXPECT_CONTAINS(list, "\"rejected\":[]");
    EXPECT_CONTAINS(list, "skill://live-data/SKILL.md");
    char *wire = slurp(record, NULL);
    EXPECT(wire && count_occurrences(wire, "\"skills/list\"") == 2); /* two pages */
    EXPECT(wire && count_occurrences(wire, "resources/read") == 0);  /* nothing prefetched */
    free(wire);

    entry = list ? entry_of(list, HELLO) : NULL;
    EXPECT(entry != NULL);
    if (entry) {
        EXPECT_STATUS(mcp_client_read_skill_file(c, entry, NULL, NULL, &md, &err), MCP_OK, err);
        EXPECT_CONTAINS(md, "Say hello");
        EXPECT_STATUS(mcp_client_read_skill_file(c, entry, USAGE, NULL, &usage, &err), MCP_OK, err);
        EXPECT_CONTAINS(usage, "Use a friendly tone.");
    }
    EXPECT_STATUS(mcp_client_get_skill(c, HELLO, NULL, &got, &err), MCP_OK, err);
    EXPECT_CONTAINS(got, "\"name\":\"hello-world\"");
    char *out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_get_skill(c, "skill://nope/SKILL.md", NULL, &out, &err), MCP_JSONRPC_ERROR, err);
    EXPECT(out == SENTINEL_STR);
    int64_t code = 0;
    EXPECT(err && mcp_error_jsonrpc_code(err, &code) && code == -32602);
    mcp_error_free(err);
    err = NULL;
    /* Bad arguments: nothing sent, outputs untouched. */
    EXPECT_STATUS(mcp_client_read_skill_file(c, NULL, NULL, NULL, &out, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_read_skill_file(c, "[1]", NULL, NULL, &out, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_get_skill(c, NULL, NULL, &out, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    EXPECT(out == SENTINEL_STR);
    mcp_string_free(list);
    mcp_string_free(entry);
    mcp_string_free(md);
    mcp_string_free(usage);
    mcp_string_free(got);
    mcp_client_free(c);
}

static void test_tampered_files_fail_verification(void)
{
    static const char *const modes[][2] = {
        {"digest", "digest mismatch"}, {"size", "size mismatch"}, {"frontmatter", "frontmatter mismatch"}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        mcp_client *c = skills_client(modes[i][0], NULL);
        CHECK(c != NULL);
        char *list = NULL, *entry = NULL, *out = SENTINEL_STR;
        mcp_error *err = NULL;
        EXPECT_STATUS(mcp_client_list_skills(c, NULL, &list, &err), MCP_OK, err);
        entry = list ? entry_of(list, HELLO) : NULL;
        EXPECT(entry != NULL);
        if (entry) {
            mcp_status st = mcp_client_read_skill_file(c, entry, NULL, NULL, &out, &err);
            EXPECT_STATUS(st, MCP_SKILL_VERIFICATION_FAILED, err);
            EXPECT(out == SENTINEL_STR);
            EXPECT(err && mcp_error_status(err) == MCP_SKILL_VERIFICATION_FAILED);
            EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, modes[i][1]);
        }
        mcp_error_free(err);
        mcp_string_free(list);
        mcp_string_free(entry);
        mcp_client_free(c);
    }
}

static void test_undeclared_server_is_unsupported(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list_skills(c, NULL, &out, &err), MCP_UNSUPPORTED, err);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "io.modelcontextprotocol/skills");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

const struct test_case skills_tests[] = {
    {"skills/list_get_and_verified_reads", test_list_get_and_verified_reads},
    {"skills/tampered_files_fail_verification", test_tampered_files_fail_verification},
    {"skills/undeclared_server_is_unsupported", test_undeclared_server_is_unsupported},
};
const size_t skills_tests_count = sizeof skills_tests / sizeof skills_tests[0];
