/* Connecting, eras, the config reaching the child, lists, tools, prompts, resources, completion,
 * raw requests, errors, per-call options, logs and notifications, legacy-only calls and
 * subscriptions. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

#define ECHO_ARGS "{\"text\":\"hi\"}"

/* ---- connect and eras ------------------------------------------------------------------------ */

static void test_connect_modern(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    char *info = NULL, *again = NULL, *info2 = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_connect(c, NULL, &info, &err);
    EXPECT_STATUS(st, MCP_OK, err);
    EXPECT(err == NULL);
    EXPECT(mcp_client_era(c) == MCP_ERA_MODERN);
    EXPECT_CONTAINS(info, "\"era\":\"modern\"");
    EXPECT_CONTAINS(info, "\"protocolVersion\":\"2026-07-28\"");
    EXPECT_CONTAINS(info, "\"name\":\"mcp-fixture-server\"");
    EXPECT_CONTAINS(info, "\"instructions\":\"Fixture server for mcp_client tests.\"");
    EXPECT_CONTAINS(info, "\"capabilities\":{");
    EXPECT_CONTAINS(info, "\"raw\":{");
    EXPECT_CONTAINS(info, "supportedVersions");
    /* Idempotent, and server_info returns the same document. */
    EXPECT_STATUS(mcp_client_connect(c, NULL, &again, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_server_info(c, &info2, &err), MCP_OK, err);
    EXPECT(info && again && strcmp(info, again) == 0);
    EXPECT(info && info2 && strcmp(info, info2) == 0);
    mcp_string_free(info);
    mcp_string_free(again);
    mcp_string_free(info2);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* The first call connects implicitly. */
static void test_first_call_connects(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    CHECK(mcp_client_era(c) == MCP_ERA_NONE);
    char *out = tool_ok(c, "echo", ECHO_ARGS);
    EXPECT_CONTAINS(out, "\"text\":\"hi\"");
    EXPECT(mcp_client_era(c) == MCP_ERA_MODERN);
    mcp_string_free(out);
    mcp_client_free(c);
}

static void test_connect_legacy_fallback(void)
{
    mcp_client *c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    char *info = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_connect(c, NULL, &info, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    EXPECT_CONTAINS(info, "\"era\":\"legacy\"");
    EXPECT_CONTAINS(info, "\"protocolVersion\":\"2025-11-25\"");
    EXPECT_CONTAINS(info, "\"name\":\"mcp-fixture-server\"");
    mcp_string_free(info);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* Builds a client with one config setter applied. */
static mcp_client *client_with_mode(int mode, const char *version, const char *era_flag)
{
    mcp_config *cfg = era_flag ? fixture_config("--era", era_flag, (const char *)NULL)
                               : fixture_config(NULL);
    if (cfg == NULL)
        return NULL;
    mcp_error *err = NULL;
    mcp_status st = MCP_OK;
    if (mode >= 0)
        st = mcp_config_set_mode(cfg, mode, &err);
    if (st == MCP_OK && version)
        st = mcp_config_set_protocol_version(cfg, version, &err);
    if (st != MCP_OK) {
        EXPECT_STATUS(st, MCP_OK, err);
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    return client_from_config(cfg);
}

static void test_config_mode(void)
{
    char *info = NULL;
    mcp_error *err = NULL;
    /* legacy on a dual server */
    mcp_client *c = client_with_mode(MCP_MODE_LEGACY, NULL, NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    mcp_client_free(c);
    /* modern on a dual server */
    c = client_with_mode(MCP_MODE_MODERN, NULL, NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_MODERN);
    mcp_client_free(c);
    /* auto on a modern-only server */
    c = client_with_mode(MCP_MODE_AUTO, NULL, "modern");
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_MODERN);
    mcp_client_free(c);
    /* modern against a legacy-only server: no common era, a clean failure */
    c = client_with_mode(MCP_MODE_MODERN, NULL, "legacy");
    CHECK(c != NULL);
    info = SENTINEL_STR;
    mcp_status st = mcp_client_connect(c, NULL, &info, &err);
    EXPECT(st != MCP_OK);
    EXPECT(err != NULL && mcp_error_status(err) == st);
    EXPECT(info == SENTINEL_STR);
    EXPECT(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_error_free(err);
    err = NULL;
    mcp_client_free(c);
    /* legacy against a modern-only server */
    c = client_with_mode(MCP_MODE_LEGACY, NULL, "modern");
    CHECK(c != NULL);
    st = mcp_client_connect(c, NULL, NULL, &err);
    EXPECT(st != MCP_OK);
    EXPECT(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_config_protocol_version(void)
{
    char *info = NULL;
    mcp_error *err = NULL;
    mcp_client *c = client_with_mode(-1, "2025-06-18", NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, &info, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    EXPECT_CONTAINS(info, "\"protocolVersion\":\"2025-06-18\"");
    mcp_string_free(info);
    info = NULL;
    mcp_client_free(c);
    /* The pinned version overrides the mode. */
    c = client_with_mode(MCP_MODE_LEGACY, "2026-07-28", NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, &info, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_MODERN);
    EXPECT_CONTAINS(info, "\"protocolVersion\":\"2026-07-28\"");
    mcp_string_free(info);
    mcp_client_free(c);
    mcp_error_free(err);
}

/* A server that never answers the probe: auto mode falls back to initialize after the probe
 * timeout (set through the JSON config). */
static void test_probe_timeout_fallback(void)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"command\":\"%s\",\"args\":[\"--on-discover\",\"silent\"],"
             "\"probe_timeout_ms\":300,\"request_timeout_ms\":5000}",
             fixture_path_json());
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(json, &cfg, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    double took = now_ms() - t0;
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    EXPECT_MSG(took >= 250 && took < tscale(3000), "connect took %.0f ms", took);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* ---- the config reaches the child: env, env_mode, cwd --------------------------------------- */

/* What the probe writes before it runs the fixture: one `NAME=value` line per variable that is
 * set among these (a prefix, on Windows, lists every variable that starts with it), and the
 * working directory as `cwd=...`. POSIX: a /bin/sh script; Windows: a .cmd file run by cmd.exe,
 * whose `set PREFIX` prints without expanding the value (no quoting hazards). */
static const char *const probed[] = {"MCP_CTEST_VAR", "MCP_CTEST_PARENT", "LC_MCP_CTEST", "LC_MCP_CTEST_FN",
                                     "PATH", "HOME", "SystemRoot", "USERPROFILE", "TEMP", "APPDATA"};

/* Runs the fixture through the probe, which first writes what it sees to $MCP_CTEST_OUT. */
static char *run_env_probe(int env_mode, const char *cwd, bool *ok)
{
    char out[512];
    *ok = false;
    if (!temp_file(out, sizeof out, "env")) {
        t_fail(__FILE__, __LINE__, "temp_file");
        return NULL;
    }
    char script[2048];
    size_t k = 0;
#ifdef _WIN32
    char dir[512], probe[600];
    if (!temp_dir(dir, sizeof dir, "probe")) {
        t_fail(__FILE__, __LINE__, "temp_dir");
        return NULL;
    }
    k += (size_t)snprintf(script + k, sizeof script - k,
                          "@echo off\r\ncall :probe > \"%%MCP_CTEST_OUT%%\" 2>&1\r\n\"%%MCP_CTEST_FIXTURE%%\"\r\n"
                          "exit /b\r\n:probe\r\n");
    for (size_t i = 0; i < sizeof probed / sizeof probed[0]; i++)
        k += (size_t)snprintf(script + k, sizeof script - k, "set %s\r\n", probed[i]);
    snprintf(script + k, sizeof script - k, "echo cwd=%%CD%%\r\nexit /b\r\n");
    if (!write_cmd_file(dir, "probe", script, probe, sizeof probe)) {
        t_fail(__FILE__, __LINE__, "cannot write %s", probe);
        return NULL;
    }
#else
    k += (size_t)snprintf(script + k, sizeof script - k, "{ ");
    for (size_t i = 0; i < sizeof probed / sizeof probed[0]; i++)
        k += (size_t)snprintf(script + k, sizeof script - k,
                              "[ -z \"${%s+x}\" ] || printf '%%s=%%s\\n' %s \"$%s\"; ", probed[i], probed[i],
                              probed[i]);
    snprintf(script + k, sizeof script - k,
             "printf 'cwd=%%s\\n' \"$(pwd -P)\"; } > \"$MCP_CTEST_OUT\"; exec \"$MCP_CTEST_FIXTURE\"");
#endif
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(NULL, &cfg, &err);
#ifdef _WIN32
    if (st == MCP_OK)
        st = mcp_config_set_command(cfg, probe, &err);
#else
    if (st == MCP_OK)
        st = mcp_config_set_command(cfg, "/bin/sh", &err);
    if (st == MCP_OK)
        st = mcp_config_add_arg(cfg, "-c", &err);
    if (st == MCP_OK)
        st = mcp_config_add_arg(cfg, script, &err);
#endif
    if (st == MCP_OK)
        st = mcp_config_set_env(cfg, "MCP_CTEST_VAR", "value with spaces & 'quotes'", &err);
    if (st == MCP_OK)
        st = mcp_config_set_env(cfg, "MCP_CTEST_OUT", out, &err);
    if (st == MCP_OK)
        st = mcp_config_set_env(cfg, "MCP_CTEST_FIXTURE", fixture_path(), &err);
    if (st == MCP_OK && env_mode >= 0)
        st = mcp_config_set_env_mode(cfg, env_mode, &err);
    if (st == MCP_OK && cwd)
        st = mcp_config_set_cwd(cfg, cwd, &err);
    if (st == MCP_OK)
        st = mcp_config_set_request_timeout_ms(cfg, tscale(5000), &err);
    if (st != MCP_OK) {
        EXPECT_STATUS(st, MCP_OK, err);
        mcp_error_free(err);
        mcp_config_free(cfg);
        remove(out);
        return NULL;
    }
    mcp_client *c = client_from_config(cfg);
    char *text = NULL;
    if (c != NULL) {
        st = mcp_client_connect(c, NULL, NULL, &err);
        EXPECT_STATUS(st, MCP_OK, err);
        mcp_error_free(err);
        if (st == MCP_OK) {
            char *r = tool_ok(c, "echo", ECHO_ARGS);
            *ok = r != NULL;
            mcp_string_free(r);
        }
        mcp_client_free(c);
        text = slurp(out, NULL);
    }
    remove(out);
    return text;
}

/* The value of `name` in the probe's output (names match in any case on Windows, as there),
 * into buf; false when the server did not have it. */
static bool probe_value(const char *seen, const char *name, char *buf, size_t n)
{
    size_t len = strlen(name);
    for (const char *line = seen; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
#ifdef _WIN32
        bool same = _strnicmp(line, name, len) == 0;
#else
        bool same = strncmp(line, name, len) == 0;
#endif
        if (!same || line[len] != '=')
            continue;
        const char *v = line + len + 1;
        size_t vlen = strcspn(v, "\r\n");
        snprintf(buf, n, "%.*s", (int)vlen, v);
        return true;
    }
    return false;
}

/* Records a failure unless the server had `name` set to `want` (NULL: not set). */
static void expect_probe(int line, const char *seen, const char *name, const char *want)
{
    char got[1024];
    bool has = probe_value(seen, name, got, sizeof got);
    if (want == NULL && has)
        t_fail(__FILE__, line, "the server has %s=%s", name, got);
    else if (want != NULL && (!has || strcmp(got, want) != 0))
        t_fail(__FILE__, line, "the server has %s %s, not %s", name, has ? got : "unset", want);
}
#define EXPECT_PROBE(seen, name, want) expect_probe(__LINE__, (seen), (name), (want))

/* The host's environment holds a secret (MCP_CTEST_PARENT): by default a server gets only the
 * allowlist (PATH, HOME, ..., LANG, LC_*; on Windows SystemRoot, PATHEXT, USERPROFILE, TEMP,
 * APPDATA, ... in any case), never a value that is a shell function, plus what the host sets;
 * inheriting everything is an explicit choice. */
static void test_config_env_and_cwd(void)
{
    char dir[512], real[1024];
    CHECK(temp_dir(dir, sizeof dir, "cwd"));
    CHECK(real_path(dir, real, sizeof real));
    t_setenv("MCP_CTEST_PARENT", "from-parent");
    t_setenv("LC_MCP_CTEST", "C");
    t_setenv("LC_MCP_CTEST_FN", "() { :; }; touch /tmp/pwned");
    const char *var = "value with spaces & 'quotes'";

    bool ok = false;
    char *seen = run_env_probe(-1, real, &ok);
    CHECK(seen != NULL);
    EXPECT(ok);
    EXPECT_PROBE(seen, "MCP_CTEST_VAR", var);
    EXPECT_PROBE(seen, "MCP_CTEST_PARENT", NULL); /* the allowlist is the default */
    EXPECT_PROBE(seen, "LC_MCP_CTEST", "C");
    EXPECT_PROBE(seen, "LC_MCP_CTEST_FN", NULL);
    EXPECT_PROBE(seen, "PATH", getenv("PATH"));
#ifdef _WIN32
    /* Windows' own names, set by the system: passed on as the host has them. */
    const char *system[] = {"SystemRoot", "PATHEXT", "USERPROFILE", "TEMP", "APPDATA"};
    for (size_t i = 0; i < sizeof system / sizeof system[0]; i++) {
        EXPECT_MSG(getenv(system[i]) != NULL, "the host has no %s", system[i]);
        EXPECT_PROBE(seen, system[i], getenv(system[i]));
    }
#endif
    EXPECT_PROBE(seen, "cwd", real);
    free(seen);

    seen = run_env_probe(MCP_ENV_ALLOWLIST, NULL, &ok);
    CHECK(seen != NULL);
    EXPECT_PROBE(seen, "MCP_CTEST_PARENT", NULL);
    EXPECT_PROBE(seen, "PATH", getenv("PATH"));
    free(seen);

    seen = run_env_probe(MCP_ENV_INHERIT, NULL, &ok);
    CHECK(seen != NULL);
    EXPECT_PROBE(seen, "MCP_CTEST_PARENT", "from-parent");
    free(seen);

    /* replace: only the variables set */
    seen = run_env_probe(MCP_ENV_REPLACE, real, &ok);
    CHECK(seen != NULL);
    EXPECT(ok);
    EXPECT_PROBE(seen, "MCP_CTEST_VAR", var);
    EXPECT_PROBE(seen, "MCP_CTEST_PARENT", NULL);
    EXPECT_PROBE(seen, "LC_MCP_CTEST", NULL);
    EXPECT_PROBE(seen, "cwd", real);
    free(seen);
    t_setenv("MCP_CTEST_PARENT", NULL);
    t_setenv("LC_MCP_CTEST", NULL);
    t_setenv("LC_MCP_CTEST_FN", NULL);
}

/* ---- lists --------------------------------------------------------------------------------- */

static void test_list_single_page(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"tools\":[");
    EXPECT_CONTAINS(out, "\"name\":\"echo\"");
    EXPECT_CONTAINS(out, "\"name\":\"elicit_once\"");
    EXPECT_CONTAINS(out, "\"inputSchema\"");
    CHECK_NOT_CONTAINS(out, "nextCursor");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_PROMPTS, NULL, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"name\":\"greeting\"");
    EXPECT_CONTAINS(out, "\"name\":\"needs_input\"");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_RESOURCES, NULL, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "fixture://static");
    EXPECT_CONTAINS(out, "fixture://binary");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_RESOURCE_TEMPLATES, NULL, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"resourceTemplates\":[");
    EXPECT_CONTAINS(out, "fixture://items/{id}");
    mcp_string_free(out);
    out = SENTINEL_STR;
    /* Without --page-size any cursor is invalid: a JSON-RPC error, output untouched. */
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, "page-2", NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32602);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_list_pages(void)
{
    mcp_client *all1 = connected_client(NULL);
    mcp_client *c = connected_client("--page-size", "4", (const char *)NULL);
    CHECK(all1 != NULL && c != NULL);
    char *full = NULL, *merged = NULL, *page = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list(all1, MCP_LIST_TOOLS, NULL, NULL, &full, &err), MCP_OK, err);
    int total = count_occurrences(full, "\"inputSchema\"");
    EXPECT(total > 8);

    /* Page by page. */
    char cursor[64] = "";
    int pages = 0, seen = 0;
    for (;;) {
        page = NULL;
        mcp_status st =
            mcp_client_list(c, MCP_LIST_TOOLS, pages == 0 ? NULL : cursor, NULL, &page, &err);
        CHECK_STATUS(st, MCP_OK, err);
        pages++;
        int here = count_occurrences(page, "\"inputSchema\"");
        EXPECT(here <= 4 && here > 0);
        seen += here;
        bool more = json_string(page, "nextCursor", cursor, sizeof cursor);
        if (more) {
            char want[32];
            snprintf(want, sizeof want, "page-%d", pages + 1);
            EXPECT_MSG(strcmp(cursor, want) == 0, "cursor %s, want %s", cursor, want);
        }
        mcp_string_free(page);
        if (!more || pages > 50)
            break;
    }
    EXPECT_MSG(seen == total, "pages gave %d tools, one page %d", seen, total);
    EXPECT(pages == (total + 3) / 4);

    /* All pages merged. */
    EXPECT_STATUS(mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, &merged, &err), MCP_OK, err);
    EXPECT(count_occurrences(merged, "\"inputSchema\"") == total);
    EXPECT(strncmp(merged ? merged : "", "{\"tools\":[", 10) == 0);
    CHECK_NOT_CONTAINS(merged, "nextCursor");
    mcp_string_free(merged);
    merged = NULL;

    const struct {
        int kind;
        const char *key;
        const char *item;
    } kinds[] = {
        {MCP_LIST_PROMPTS, "{\"prompts\":[", "\"name\":\"plain\""},
        {MCP_LIST_RESOURCES, "{\"resources\":[", "fixture://binary"},
        {MCP_LIST_RESOURCE_TEMPLATES, "{\"resourceTemplates\":[", "fixture://items/{id}"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        merged = NULL;
        EXPECT_STATUS(mcp_client_list_all(c, kinds[i].kind, NULL, &merged, &err), MCP_OK, err);
        EXPECT(strncmp(merged ? merged : "", kinds[i].key, strlen(kinds[i].key)) == 0);
        EXPECT_CONTAINS(merged, kinds[i].item);
        mcp_string_free(merged);
    }
    /* A cursor the server never issued. */
    page = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, "page-999", NULL, &page, &err),
                  MCP_JSONRPC_ERROR, err);
    EXPECT(page == SENTINEL_STR);
    mcp_error_free(err);
    mcp_string_free(full);
    mcp_client_free(c);
    mcp_client_free(all1);
}

/* ---- tools, prompts, resources, completion, raw requests -------------------------------------- */

static void test_call_tool_basics(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = tool_ok(c, "echo", "{\"text\":\"h\xc3\xa9llo \\\"w\\\" \xf0\x9f\x94\x91\"}");
    char text[256];
    EXPECT(first_text(out, text, sizeof text) &&
           strcmp(text, "h\xc3\xa9llo \"w\" \xf0\x9f\x94\x91") == 0);
    mcp_string_free(out);
    /* Arguments travel as the caller's text: line breaks between tokens must not end the
       stdio message, escapes arrive decoded. */
    out = tool_ok(c, "echo", "{\n  \"text\" :\r\n\t\"caf\\u00e9 \\ud83d\\udd11 \\n\"\n}\n");
    EXPECT(first_text(out, text, sizeof text) && strcmp(text, "caf\xc3\xa9 \xf0\x9f\x94\x91 \n") == 0);
    mcp_string_free(out);
    out = tool_ok(c, "add", "{\"a\":2,\"b\":40}");
    EXPECT_CONTAINS(out, "\"text\":\"42\"");
    EXPECT_CONTAINS(out, "\"structuredContent\":{\"result\":42");
    mcp_string_free(out);
    /* arguments_json may be NULL */
    out = tool_ok(c, "roots_changed_count", NULL);
    EXPECT_CONTAINS(out, "\"text\":\"0\"");
    mcp_string_free(out);
    /* unknown fields of the result are preserved (resultType, _meta) */
    out = tool_ok(c, "echo", ECHO_ARGS);
    EXPECT_CONTAINS(out, "\"resultType\":\"complete\"");
    EXPECT_CONTAINS(out, "io.modelcontextprotocol/serverInfo");
    mcp_string_free(out);
    /* a tool error is MCP_OK with isError */
    out = tool_ok(c, "fail", NULL);
    EXPECT_CONTAINS(out, "\"isError\":true");
    EXPECT_CONTAINS(out, "tool failed on purpose");
    mcp_string_free(out);
    /* unknown tool and bad arguments: JSON-RPC -32602 */
    mcp_error *err = NULL;
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "no_such_tool", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32602);
    EXPECT_CONTAINS(mcp_error_message(err), "Unknown tool");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "add", "{\"a\":\"x\"}", NULL, NULL, NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32602);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_rpc_error(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_call_tool(c, "rpc_error", NULL, NULL, NULL, NULL, &out, &err),
                 MCP_JSONRPC_ERROR, err);
    CHECK(out == SENTINEL_STR);
    CHECK(mcp_error_status(err) == MCP_JSONRPC_ERROR);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code));
    EXPECT_MSG(code == -32050, "code %lld", (long long)code);
    EXPECT_CONTAINS(mcp_error_message(err), "fixture error");
    const char *data = mcp_error_data_json(err);
    EXPECT(data != NULL && strcmp(data, "{\"detail\":\"on purpose\"}") == 0);
    EXPECT(mcp_error_input_requests_json(err) == NULL);
    EXPECT(mcp_error_request_state(err) == NULL);
    EXPECT(mcp_error_result_json(err) == NULL);
    EXPECT(!mcp_status_is_transport(MCP_JSONRPC_ERROR));
    mcp_error_free(err);
    /* The connection survives. */
    out = tool_ok(c, "echo", ECHO_ARGS);
    EXPECT(out != NULL);
    mcp_string_free(out);
    mcp_client_free(c);
}

static void test_crash(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    double t0 = now_ms();
    mcp_status st = mcp_client_call_tool(c, "crash", NULL, NULL, NULL, NULL, &out, &err);
    EXPECT_STATUS(st, MCP_SERVER_EXITED, err);
    EXPECT(now_ms() - t0 < tscale(3000));
    EXPECT(mcp_status_is_transport(MCP_SERVER_EXITED));
    EXPECT(out == SENTINEL_STR);
    const char *msg = mcp_error_message(err);
    EXPECT_MSG(msg != NULL && (strstr(msg, "status 7") || strstr(msg, "code 7") ||
                               strstr(msg, "status: 7")),
               "message does not name exit status 7: %s", msg ? msg : "(null)");
    mcp_error_free(err);
    err = NULL;
    /* Later calls fail too (no hang, no crash). */
    st = mcp_client_call_tool(c, "echo", ECHO_ARGS, NULL, NULL, NULL, &out, &err);
    EXPECT(st != MCP_OK);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_prompts(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_get_prompt(c, "greeting", "{\"name\":\"Ann\"}", NULL, NULL, NULL,
                                        &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"messages\":[");
    EXPECT_CONTAINS(out, "Hello, Ann!");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_get_prompt(c, "plain", NULL, NULL, NULL, NULL, &out, &err), MCP_OK,
                  err);
    EXPECT_CONTAINS(out, "A plain prompt with no arguments.");
    mcp_string_free(out);
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_get_prompt(c, "greeting", "{}", NULL, NULL, NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32602);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_get_prompt(c, "nope", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_resources(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_read_resource(c, "fixture://static", NULL, NULL, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"text\":\"static content\"");
    EXPECT_CONTAINS(out, "text/plain");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_read_resource(c, "fixture://binary", NULL, NULL, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"blob\":\"AAECAw==\"");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(
        mcp_client_read_resource(c, "fixture://items/42", NULL, NULL, NULL, &out, &err), MCP_OK,
        err);
    EXPECT_CONTAINS(out, "item 42");
    mcp_string_free(out);
    out = SENTINEL_STR;
    EXPECT_STATUS(
        mcp_client_read_resource(c, "fixture://missing", NULL, NULL, NULL, &out, &err),
        MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32602);
    EXPECT_CONTAINS(mcp_error_data_json(err), "fixture://missing");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_complete(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_complete(c,
                                      "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greeting\"},"
                                      "\"argument\":{\"name\":\"name\",\"value\":\"al\"}}",
                                      NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"values\":[\"alice\",\"albert\"]");
    EXPECT_CONTAINS(out, "\"hasMore\":false");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(
        mcp_client_complete(c,
                            "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"fixture://items/{id}\"},"
                            "\"argument\":{\"name\":\"id\",\"value\":\"4\"}}",
                            NULL, &out, &err),
        MCP_OK, err);
    EXPECT_CONTAINS(out, "\"values\":[\"42\"]");
    mcp_string_free(out);
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_complete(c,
                                      "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"nope\"},"
                                      "\"argument\":{\"name\":\"x\",\"value\":\"\"}}",
                                      NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_raw_request(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_request(c, "tools/list", NULL, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"name\":\"echo\"");
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_request(c, "tools/call",
                                     "{\"name\":\"echo\",\"arguments\":{\"text\":\"raw\"}}", NULL,
                                     &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"text\":\"raw\"");
    mcp_string_free(out);
    out = NULL;
    /* the era's _meta is added to the caller's params (echo_meta shows what arrived) */
    EXPECT_STATUS(mcp_client_request(c, "tools/call",
                                     "{\"name\":\"echo_meta\",\"_meta\":{\"x-caller\":1}}", NULL,
                                     &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"x-caller\":1");
    EXPECT_CONTAINS(out, "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"");
    mcp_string_free(out);
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_request(c, "no/such/method", "{}", NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32601);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* ---- per-call options ----------------------------------------------------------------------- */

static void test_opts_timeout(void)
{
    struct fixture_signal sig;
    CHECK(fixture_signal_open(&sig));
    mcp_client *c = connected_client("--signal", sig.path, (const char *)NULL);
    CHECK(c != NULL);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = 200;
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    double t0 = now_ms();
    mcp_status st = mcp_client_call_tool(c, "hang", NULL, NULL, NULL, &opts, &out, &err);
    double took = now_ms() - t0;
    EXPECT_STATUS(st, MCP_TIMEOUT, err);
    EXPECT(mcp_status_is_transport(st));
    EXPECT_MSG(took >= 150 && took < tscale(2000), "timeout after %.0f ms", took);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    /* The client is still usable, and the server was told about the abandoned request. */
    out = tool_ok(c, "echo", ECHO_ARGS);
    EXPECT(out != NULL);
    mcp_string_free(out);
    EXPECT_MSG(fixture_signal_wait(&sig, "notification notifications/cancelled", 1, tscale(2000)),
               "no notifications/cancelled reached the server");
    out = tool_ok(c, "cancelled_ids", NULL);
    EXPECT_MSG(out && !strstr(out, "\"text\":\"[]\""), "no notifications/cancelled: %s",
               out ? out : "(null)");
    mcp_string_free(out);
    mcp_client_free(c);
    fixture_signal_close(&sig);
}

static void test_config_request_timeout(void)
{
    mcp_config *cfg = fixture_config(NULL);
    CHECK(cfg != NULL);
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_set_request_timeout_ms(cfg, 250, &err), MCP_OK, err);
    mcp_client *c = client_from_config(cfg);
    CHECK(c != NULL);
    CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    char *out = SENTINEL_STR;
    double t0 = now_ms();
    mcp_status st = mcp_client_call_tool(c, "hang", NULL, NULL, NULL, NULL, &out, &err);
    double took = now_ms() - t0;
    EXPECT_STATUS(st, MCP_TIMEOUT, err);
    EXPECT_MSG(took >= 200 && took < tscale(2000), "timeout after %.0f ms", took);
    mcp_error_free(err);
    err = NULL;
    /* A per-call timeout overrides the default: slow 400 ms passes with 3 s. */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = 3000;
    out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "slow", "{\"ms\":400}", NULL, NULL, &opts, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "slept 400");
    mcp_string_free(out);
    mcp_client_free(c);
}

struct progress_log {
    pthread_mutex_t lock;
    int count;
    double values[16];
    double totals[16];
    char messages[16][32];
    pthread_t caller;
    int on_caller_thread;
};

static void on_progress(void *userdata, double progress, double total, const char *message)
{
    struct progress_log *p = (struct progress_log *)userdata;
    pthread_mutex_lock(&p->lock);
    if (pthread_equal(pthread_self(), p->caller))
        p->on_caller_thread++;
    if (p->count < 16) {
        p->values[p->count] = progress;
        p->totals[p->count] = total;
        snprintf(p->messages[p->count], sizeof p->messages[0], "%s", message ? message : "(null)");
    }
    p->count++;
    pthread_mutex_unlock(&p->lock);
}

static void test_opts_progress(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    struct progress_log log;
    memset(&log, 0, sizeof log);
    pthread_mutex_init(&log.lock, NULL);
    log.caller = pthread_self();
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    /* 4 steps 100 ms apart (400 ms in all) under a 250 ms timeout: only progress resets let the
     * call finish. */
    opts.timeout_ms = 250;
    opts.reset_timeout_on_progress = true;
    opts.on_progress = on_progress;
    opts.progress_userdata = &log;
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "progress", "{\"steps\":4,\"delay_ms\":100}", NULL, NULL,
                                       &opts, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "progress done");
    mcp_string_free(out);
    pthread_mutex_lock(&log.lock);
    int count = log.count;
    EXPECT_MSG(count == 4, "%d progress callbacks", count);
    for (int i = 0; i < count && i < 4; i++) {
        char want[32];
        snprintf(want, sizeof want, "step %d", i + 1);
        EXPECT_MSG(log.values[i] == i + 1 && log.totals[i] == 4 &&
                       strcmp(log.messages[i], want) == 0,
                   "progress %d: %g/%g \"%s\"", i, log.values[i], log.totals[i],
                   log.messages[i]);
    }
    EXPECT(log.on_caller_thread == 0); /* callbacks run on the dispatcher thread */
    pthread_mutex_unlock(&log.lock);
    /* Never after the call returned: an absence window, nothing to wait on but time. */
    sleep_ms(50);
    EXPECT(ALOAD(&log.count) == count);

    /* Without resets the same call times out. */
    opts.reset_timeout_on_progress = false;
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "progress", "{\"steps\":4,\"delay_ms\":100}", NULL, NULL,
                                       &opts, &out, &err),
                  MCP_TIMEOUT, err);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    int after_timeout = ALOAD(&log.count);
    /* An absence window: the server still sends steps 3 and 4 (100 ms apart), none delivered. */
    sleep_ms(tscale(200));
    EXPECT(ALOAD(&log.count) == after_timeout);

    /* max_total_ms caps the whole call even while progress keeps resetting the timeout. */
    opts.reset_timeout_on_progress = true;
    opts.timeout_ms = 200;
    opts.max_total_ms = 350;
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_call_tool(c, "progress", "{\"steps\":20,\"delay_ms\":50}", NULL,
                                       NULL, &opts, &out, &err),
                  MCP_TIMEOUT, err);
    double took = now_ms() - t0;
    EXPECT_MSG(took >= 320 && took < tscale(1200), "max_total: %.0f ms", took);
    mcp_error_free(err);
    mcp_client_free(c);
    pthread_mutex_destroy(&log.lock);
}

static void test_opts_meta(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.meta_json = "{\"com.example/trace\":\"abc-123\",\"n\":7,"
                     "\"io.modelcontextprotocol/protocolVersion\":\"1999-01-01\"}";
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, &opts, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"com.example/trace\":\"abc-123\"");
    EXPECT_CONTAINS(out, "\"n\":7");
    /* the reserved keys win over the caller's */
    EXPECT_CONTAINS(out, "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"");
    CHECK_NOT_CONTAINS(out, "1999-01-01");
    mcp_string_free(out);
    out = NULL;
    /* log_level goes into _meta too */
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.log_level = "debug";
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, &opts, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"io.modelcontextprotocol/logLevel\":\"debug\"");
    mcp_string_free(out);
    out = NULL;
    /* without options: no caller keys */
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_OK, err);
    CHECK_NOT_CONTAINS(out, "com.example/trace");
    mcp_string_free(out);
    mcp_client_free(c);
}

/* ---- the host's trace context callback ---------------------------------------------------- */

struct trace_host {
    pthread_t thread;
    int asked, off_thread, freed;
    const char *parent;
    mcp_status set_status;
};

static void give_trace(void *userdata, mcp_trace_slot *slot)
{
    struct trace_host *h = (struct trace_host *)userdata;
    h->asked++;
    if (!pthread_equal(pthread_self(), h->thread)) h->off_thread++;
    mcp_error *err = NULL;
    h->set_status = mcp_trace_slot_set(slot, h->parent, "rojo=00f067aa0ba902b7", "userId=alice", &err);
    mcp_error_free(err);
}

static void free_trace_host(void *userdata)
{
    ((struct trace_host *)userdata)->freed++;
}

struct trace_done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    char result[4096];
};

static void on_trace_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                          const mcp_error *error)
{
    (void)result_len;
    (void)error;
    struct trace_done *d = (struct trace_done *)userdata;
    pthread_mutex_lock(&d->lock);
    snprintf(d->result, sizeof d->result, "%s", status == MCP_OK ? result_json : "failed");
    d->done = 1;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

#define TRACE_PARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* The callback is asked on the calling thread for blocking and started calls, its context
 * reaches the server, a call's own meta_json context wins, and an invalid value fails the call
 * unsent; userdata_free runs once. */
static void test_trace_context_callback(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    static struct trace_host host;
    memset(&host, 0, sizeof host);
    host.thread = pthread_self();
    host.parent = TRACE_PARENT;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_trace_context_fn(c, give_trace, &host, free_trace_host, &err), MCP_OK, err);
    char *out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"traceparent\":\"" TRACE_PARENT "\"");
    EXPECT_CONTAINS(out, "\"tracestate\":\"rojo=00f067aa0ba902b7\"");
    EXPECT_CONTAINS(out, "\"baggage\":\"userId=alice\"");
    mcp_string_free(out);
    out = NULL;
    EXPECT(host.asked == 1 && host.set_status == MCP_OK);
    /* the call's own context wins: the callback is not asked */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.meta_json = "{\"traceparent\":\"00-11111111111111111111111111111111-2222222222222222-00\"}";
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, &opts, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "00-11111111111111111111111111111111-2222222222222222-00");
    CHECK_NOT_CONTAINS(out, "rojo");
    mcp_string_free(out);
    out = NULL;
    EXPECT(host.asked == 1);
    /* a started call asks on the thread that starts it */
    static struct trace_done done;
    memset(&done, 0, sizeof done);
    pthread_mutex_init(&done.lock, NULL);
    pthread_cond_init(&done.cond, NULL);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo_meta", NULL, NULL, NULL, NULL, on_trace_done, &done, NULL,
                                             &err),
                  MCP_OK, err);
    pthread_mutex_lock(&done.lock);
    while (!done.done) pthread_cond_wait(&done.cond, &done.lock);
    pthread_mutex_unlock(&done.lock);
    EXPECT_CONTAINS(done.result, "\"traceparent\":\"" TRACE_PARENT "\"");
    EXPECT(host.asked == 2 && host.off_thread == 0);
    /* an invalid value is refused by the slot and fails the call, nothing sent */
    host.parent = "00-zz";
    char *bad = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, NULL, &bad, &err), MCP_INVALID_ARG, err);
    EXPECT(host.set_status == MCP_INVALID_ARG);
    EXPECT_CONTAINS(err ? mcp_error_message(err) : NULL, "traceparent");
    EXPECT(bad == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    /* removing it: asked no more, userdata freed once */
    EXPECT_STATUS(mcp_client_set_trace_context_fn(c, NULL, NULL, NULL, &err), MCP_OK, err);
    EXPECT(host.freed == 1);
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, NULL, &out, &err), MCP_OK, err);
    CHECK_NOT_CONTAINS(out, "traceparent");
    mcp_string_free(out);
    EXPECT(host.asked == 3);
    EXPECT(mcp_trace_slot_set(NULL, NULL, NULL, NULL, NULL) == MCP_NULL_ARG);
    mcp_client_free(c);
    pthread_mutex_destroy(&done.lock);
    pthread_cond_destroy(&done.cond);
}

/* ---- the span listener ------------------------------------------------------------------- */

struct span_log {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t caller;
    int count, on_caller, freed;
    char spans[4][2048];
};

static void on_span(void *userdata, const char *span_json, size_t span_len)
{
    struct span_log *l = (struct span_log *)userdata;
    pthread_mutex_lock(&l->lock);
    if (pthread_equal(pthread_self(), l->caller)) l->on_caller++;
    if (l->count < 4 && span_len == strlen(span_json)) snprintf(l->spans[l->count], sizeof l->spans[0], "%s", span_json);
    l->count++;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

static void free_span_log(void *userdata)
{
    ((struct span_log *)userdata)->freed++;
}

/* An empty log whose records count as on the caller's thread when they come on this one. */
static void span_log_init(struct span_log *l)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    l->caller = pthread_self();
}

static void span_log_destroy(struct span_log *l)
{
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
}

/* Each operation ends as one span record with the OpenTelemetry MCP conventions' name and
 * attributes, given on the calling thread before the blocking call returns; a tool error sets
 * error.type; removing the listener frees its userdata once and stops the records. */
static void test_span_listener(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    static struct span_log log;
    span_log_init(&log);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_span(c, on_span, &log, free_span_log, &err), MCP_OK, err);
    mcp_string_free(tool_ok(c, "echo", "{\"text\":\"s\"}"));
    /* delivered synchronously: the record is there when the call returns, no waiting */
    EXPECT(log.count == 1);
    mcp_string_free(tool_ok(c, "fail", NULL));
    EXPECT(log.count == 2);
    EXPECT(log.on_caller == 2);
    EXPECT_CONTAINS(log.spans[0], "\"record\":\"span\"");
    CHECK_NOT_CONTAINS(log.spans[0], "\"parent\"");
    EXPECT_CONTAINS(log.spans[0], "\"name\":\"tools/call echo\"");
    EXPECT_CONTAINS(log.spans[0], "\"kind\":\"client\"");
    EXPECT_CONTAINS(log.spans[0], "\"mcp.method.name\":\"tools/call\"");
    EXPECT_CONTAINS(log.spans[0], "\"gen_ai.tool.name\":\"echo\"");
    EXPECT_CONTAINS(log.spans[0], "\"gen_ai.operation.name\":\"execute_tool\"");
    EXPECT_CONTAINS(log.spans[0], "\"network.transport\":\"pipe\"");
    EXPECT_CONTAINS(log.spans[0], "\"jsonrpc.request.id\":\"");
    EXPECT_CONTAINS(log.spans[0], "\"start_unix_nano\":");
    CHECK_NOT_CONTAINS(log.spans[0], "error.type");
    EXPECT_CONTAINS(log.spans[1], "\"name\":\"tools/call fail\"");
    EXPECT_CONTAINS(log.spans[1], "\"error.type\":\"tool_error\"");
    EXPECT_CONTAINS(log.spans[1], "\"code\":\"error\"");
    EXPECT_STATUS(mcp_client_on_span(c, NULL, NULL, NULL, &err), MCP_OK, err);
    EXPECT(log.freed == 1);
    mcp_string_free(tool_ok(c, "echo", "{\"text\":\"t\"}"));
    EXPECT(log.count == 2);
    EXPECT(mcp_client_on_span(NULL, on_span, NULL, NULL, NULL) == MCP_NULL_ARG);
    mcp_client_free(c);
    span_log_destroy(&log);
}

/* A started call's record comes on the completion's thread just before its completion. */
struct span_order {
    struct span_log *log;
    int spans_at_done;
    int done;
    pthread_t done_thread, span_thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static struct span_order *order_now;

static void on_ordered_span(void *userdata, const char *span_json, size_t span_len)
{
    on_span(userdata, span_json, span_len);
    if (order_now) order_now->span_thread = pthread_self();
}

static void on_ordered_done(void *userdata, mcp_status status, const char *result_json, size_t result_len,
                            const mcp_error *error)
{
    (void)status;
    (void)result_json;
    (void)result_len;
    (void)error;
    struct span_order *o = (struct span_order *)userdata;
    pthread_mutex_lock(&o->lock);
    o->spans_at_done = o->log->count;
    o->done_thread = pthread_self();
    o->done = 1;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

/* Ready for one started call whose records go to `log`; made the current order (the one
 * on_ordered_span notes its thread in). */
static void span_order_init(struct span_order *o, struct span_log *log)
{
    memset(o, 0, sizeof *o);
    o->log = log;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cond, NULL);
    order_now = o;
}

static void span_order_wait(struct span_order *o)
{
    pthread_mutex_lock(&o->lock);
    while (!o->done) pthread_cond_wait(&o->cond, &o->lock);
    pthread_mutex_unlock(&o->lock);
}

static void span_order_destroy(struct span_order *o)
{
    order_now = NULL;
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->cond);
}

/* The trace context callback is asked once per operation (not per MRTR leg, not for a list
 * answered from the response cache), and the record names what it gave as its parent; a call's
 * own meta_json context is the parent too; a started call's record comes before its completion,
 * on the same thread. */
static void test_span_records(void)
{
    mcp_client *c = connected_client("--cache-ttl-ms", "60000", NULL);
    CHECK(c != NULL);
    static struct span_log log;
    span_log_init(&log);
    static struct trace_host host;
    memset(&host, 0, sizeof host);
    host.thread = pthread_self();
    host.parent = TRACE_PARENT;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_span(c, on_ordered_span, &log, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_set_trace_context_fn(c, give_trace, &host, NULL, &err), MCP_OK, err);
    char *out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "echo", "{\"text\":\"p\"}", NULL, NULL, NULL, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    EXPECT(host.asked == 1 && log.count == 1);
    EXPECT_CONTAINS(log.spans[0], "\"parent\":{\"traceparent\":\"" TRACE_PARENT "\",\"tracestate\":\"rojo=00f067aa0ba902b7\"}");
    /* a list from the server asks; the same list from the cache asks nothing and has no record */
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    EXPECT(host.asked == 2 && log.count == 2);
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    EXPECT(host.asked == 2 && log.count == 2);
    /* started, from the cache: not asked either */
    static struct span_order order;
    span_order_init(&order, &log);
    EXPECT_STATUS(mcp_client_list_start(c, MCP_LIST_TOOLS, NULL, NULL, on_ordered_done, &order, NULL, &err), MCP_OK,
                  err);
    span_order_wait(&order);
    EXPECT(host.asked == 2 && order.spans_at_done == 2);
    span_order_destroy(&order);
    /* a started tool call: asked on this thread; its record before its completion, same thread */
    span_order_init(&order, &log);
    EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "{\"text\":\"q\"}", NULL, NULL, NULL, on_ordered_done, &order,
                                             NULL, &err),
                  MCP_OK, err);
    span_order_wait(&order);
    EXPECT(host.asked == 3 && host.off_thread == 0);
    EXPECT(order.spans_at_done == 3);
    EXPECT(pthread_equal(order.span_thread, order.done_thread));
    EXPECT(!pthread_equal(order.done_thread, pthread_self()));
    span_order_destroy(&order);
    /* a call's own context: not asked, and it is the parent (without tracestate) */
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.meta_json = "{\"traceparent\":\"00-11111111111111111111111111111111-2222222222222222-01\"}";
    EXPECT_STATUS(mcp_client_call_tool(c, "fail", NULL, NULL, NULL, &opts, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    EXPECT(host.asked == 3 && log.count == 4);
    EXPECT_CONTAINS(log.spans[3], "\"parent\":{\"traceparent\":\"00-11111111111111111111111111111111-2222222222222222-01\"}");
    EXPECT_CONTAINS(log.spans[3], "\"error.type\":\"tool_error\"");
    mcp_client_free(c);
    span_order_destroy(&order);
    span_log_destroy(&log);
}

/* A call on a client not yet connected connects first: the handshake is a record of its own,
 * before the call's (a started call: both before its completion), with the call's parent; the
 * trace context callback is asked once, for the call. An explicit connect's record has no parent. */
static void test_span_handshake(void)
{
    static struct span_log log;
    static struct trace_host host;
    static struct span_order order;
    mcp_error *err = NULL;
    char *out = NULL;
    for (int started = 0; started < 2; started++) {
        mcp_client *c = fixture_client(NULL);
        CHECK(c != NULL);
        span_log_init(&log);
        memset(&host, 0, sizeof host);
        host.thread = pthread_self();
        host.parent = TRACE_PARENT;
        EXPECT_STATUS(mcp_client_on_span(c, on_ordered_span, &log, NULL, &err), MCP_OK, err);
        EXPECT_STATUS(mcp_client_set_trace_context_fn(c, give_trace, &host, NULL, &err), MCP_OK, err);
        if (started) {
            span_order_init(&order, &log);
            EXPECT_STATUS(mcp_client_call_tool_start(c, "echo", "{\"text\":\"h\"}", NULL, NULL, NULL, on_ordered_done,
                                                     &order, NULL, &err),
                          MCP_OK, err);
            span_order_wait(&order);
            EXPECT(order.spans_at_done == 2);
            span_order_destroy(&order);
        } else {
            EXPECT_STATUS(mcp_client_call_tool(c, "echo", "{\"text\":\"h\"}", NULL, NULL, NULL, &out, &err), MCP_OK,
                          err);
            mcp_string_free(out);
            out = NULL;
            /* both delivered on the calling thread, as a blocking call's record is */
            EXPECT(log.on_caller == 2);
        }
        EXPECT(host.asked == 1 && log.count == 2);
        EXPECT_CONTAINS(log.spans[0], "\"name\":\"server/discover\"");
        EXPECT_CONTAINS(log.spans[0], "\"mcp.method.name\":\"server/discover\"");
        EXPECT_CONTAINS(log.spans[0], "\"parent\":{\"traceparent\":\"" TRACE_PARENT "\"");
        EXPECT_CONTAINS(log.spans[1], "\"name\":\"tools/call echo\"");
        EXPECT_CONTAINS(log.spans[1], "\"parent\":{\"traceparent\":\"" TRACE_PARENT "\"");
        mcp_client_free(c);
        span_log_destroy(&log);
    }
    /* an explicit connect: its own operation, the callback not asked, no parent */
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    span_log_init(&log);
    memset(&host, 0, sizeof host);
    host.thread = pthread_self();
    host.parent = TRACE_PARENT;
    EXPECT_STATUS(mcp_client_on_span(c, on_ordered_span, &log, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_set_trace_context_fn(c, give_trace, &host, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(host.asked == 0 && log.count == 1);
    EXPECT_CONTAINS(log.spans[0], "\"name\":\"server/discover\"");
    EXPECT(strstr(log.spans[0], "\"parent\"") == NULL);
    mcp_client_free(c);
    span_log_destroy(&log);
}

static void test_opts_log_level(void)
{
    mcp_client *c = fixture_client(NULL);
    CHECK(c != NULL);
    struct collector *col = (struct collector *)malloc(sizeof *col);
    CHECK(col != NULL);
    collector_init(col);
    mcp_error *err = NULL;
    EXPECT_STATUS(
        mcp_client_set_notification_handler(c, collect_notification, col, collector_free, &err),
        MCP_OK, err);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.log_level = "info";
    char *out = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "progress", "{\"steps\":1,\"delay_ms\":1}", NULL, NULL,
                                       &opts, &out, &err),
                  MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    EXPECT(collector_wait(col, "progress tool ran", tscale(2000)));
    EXPECT(collector_count(col, "notifications/message") >= 1);
    /* progress is not a listener notification */
    EXPECT(collector_count(col, "notifications/progress") == 0);
    /* "error" filters the info message out */
    opts.log_level = "error";
    EXPECT_STATUS(mcp_client_call_tool(c, "progress", "{\"steps\":1,\"delay_ms\":1}", NULL, NULL,
                                       &opts, &out, &err),
                  MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    /* mcp_client_set_log_level on a modern server: later requests carry the level */
    EXPECT_STATUS(mcp_client_set_log_level(c, "warning", NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"io.modelcontextprotocol/logLevel\":\"warning\"");
    mcp_string_free(out);
    out = NULL;
    /* the per-call level overrides it */
    opts.log_level = "info";
    EXPECT_STATUS(mcp_client_call_tool(c, "echo_meta", NULL, NULL, NULL, &opts, &out, &err),
                  MCP_OK, err);
    EXPECT_CONTAINS(out, "\"io.modelcontextprotocol/logLevel\":\"info\"");
    mcp_string_free(out);
    /* An unknown per-call level: a clean failure of some kind, not a crash. */
    opts.log_level = "loud";
    out = SENTINEL_STR;
    mcp_status st = mcp_client_call_tool(c, "echo", ECHO_ARGS, NULL, NULL, &opts, &out, &err);
    EXPECT(st != MCP_OK);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    EXPECT(ALOAD(&col->bad_len) == 0);
    EXPECT(collector_count(col, "progress tool ran") == 1);
    mcp_client_free(c);
    EXPECT(col->ud.frees == 1);
    collector_destroy(col);
    free(col);
}

/* The server's stderr reaches the log listener. */
static void test_log_handler_stderr(void)
{
    mcp_client *c =
        fixture_client("--stderr-banner", "banner: hello from the fixture", (const char *)NULL);
    CHECK(c != NULL);
    struct collector *col = (struct collector *)malloc(sizeof *col);
    CHECK(col != NULL);
    collector_init(col);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_set_log_handler(c, collect_log, col, collector_free, &err), MCP_OK,
                  err);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(collector_wait(col, "info stderr banner: hello from the fixture", tscale(3000)));
    EXPECT(col->ud.frees == 0);
    /* Removing the listener releases its userdata; later lines go nowhere. */
    EXPECT_STATUS(mcp_client_set_log_handler(c, NULL, NULL, NULL, &err), MCP_OK, err);
    EXPECT(wait_count(&col->ud.frees, 1, tscale(2000)));
    mcp_error_free(err);
    mcp_client_free(c);
    EXPECT(col->ud.frees == 1);
    EXPECT(col->ud.after_free == 0);
    collector_destroy(col);
    free(col);
}

/* A listener that blocks delays only the call whose record it holds: another thread's calls on
 * the same client go on meanwhile. */
struct slow_listener {
    pthread_mutex_t lock;
    int in_listener, records;
};

static void on_slow_record(void *userdata, const char *json, size_t len)
{
    (void)len;
    struct slow_listener *l = (struct slow_listener *)userdata;
    bool slow = strstr(json, "\"gen_ai.tool.name\":\"fail\"") != NULL;
    pthread_mutex_lock(&l->lock);
    l->records++;
    if (slow) l->in_listener = 1;
    pthread_mutex_unlock(&l->lock);
    if (slow) {
        sleep_ms(tscale(1500));
        pthread_mutex_lock(&l->lock);
        l->in_listener = 0;
        pthread_mutex_unlock(&l->lock);
    }
}

struct slow_call {
    mcp_client *client;
    mcp_status status;
    int returned;
    pthread_mutex_t lock;
};

static void *call_fail(void *arg)
{
    struct slow_call *sc = (struct slow_call *)arg;
    char *out = NULL;
    mcp_status st = mcp_client_call_tool(sc->client, "fail", NULL, NULL, NULL, NULL, &out, NULL);
    mcp_string_free(out);
    pthread_mutex_lock(&sc->lock);
    sc->status = st;
    sc->returned = 1;
    pthread_mutex_unlock(&sc->lock);
    return NULL;
}

static void test_span_listener_that_blocks(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    static struct slow_listener l;
    memset(&l, 0, sizeof l);
    pthread_mutex_init(&l.lock, NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_on_span(c, on_slow_record, &l, NULL, &err), MCP_OK, err);
    static struct slow_call sc;
    memset(&sc, 0, sizeof sc);
    sc.client = c;
    pthread_mutex_init(&sc.lock, NULL);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, call_fail, &sc) == 0);
    /* wait until the other thread's listener holds its record */
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&l.lock);
        int in = l.in_listener;
        pthread_mutex_unlock(&l.lock);
        if (in) break;
        sleep_ms(5);
    }
    pthread_mutex_lock(&l.lock);
    EXPECT(l.in_listener == 1);
    pthread_mutex_unlock(&l.lock);
    for (int i = 0; i < 3; i++) {
        char *out = NULL;
        EXPECT_STATUS(mcp_client_call_tool(c, "echo", "{\"text\":\"meanwhile\"}", NULL, NULL, NULL, &out, &err), MCP_OK,
                      err);
        mcp_string_free(out);
    }
    pthread_mutex_lock(&l.lock);
    int still = l.in_listener, records = l.records;
    pthread_mutex_unlock(&l.lock);
    pthread_mutex_lock(&sc.lock);
    int returned = sc.returned;
    pthread_mutex_unlock(&sc.lock);
    EXPECT_MSG(still == 1 && returned == 0, "listener %d, returned %d", still, returned);
    EXPECT(records == 4);
    pthread_join(th, NULL);
    EXPECT(sc.returned == 1 && sc.status == MCP_OK);
    mcp_client_free(c);
    pthread_mutex_destroy(&l.lock);
    pthread_mutex_destroy(&sc.lock);
}

/* ---- span records for each outcome, and session records ---------------------------------- */

#define RECORDS_MAX 16

struct record_log {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int count, sessions;
    char records[RECORDS_MAX][4096];
};

static void on_record(void *userdata, const char *json, size_t len)
{
    struct record_log *l = (struct record_log *)userdata;
    pthread_mutex_lock(&l->lock);
    if (l->count < RECORDS_MAX && len == strlen(json)) snprintf(l->records[l->count], sizeof l->records[0], "%s", json);
    if (strstr(json, "\"record\":\"session\"")) l->sessions++;
    l->count++;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

/* The last record so far (under the lock: a session record may come from the dispatcher). */
static const char *last_record(struct record_log *l)
{
    pthread_mutex_lock(&l->lock);
    int n = l->count;
    pthread_mutex_unlock(&l->lock);
    return n > 0 && n <= RECORDS_MAX ? l->records[n - 1] : "";
}

/* Calls `tool` (its status must be `want`; the result and the error freed) and returns the last
 * record after it; the failure names the caller's line. */
static const char *call_record(const char *file, int line, mcp_client *c, struct record_log *l, const char *tool,
                               const char *args_json, const mcp_call_opts *opts, mcp_status want)
{
    char *out = NULL;
    mcp_error *err = NULL;
    char what[128];
    snprintf(what, sizeof what, "mcp_client_call_tool(%s)", tool);
    t_status(file, line, what, mcp_client_call_tool(c, tool, args_json, NULL, NULL, opts, &out, &err), want, err);
    mcp_string_free(out);
    mcp_error_free(err);
    return last_record(l);
}
#define CALL_RECORD(c, log, tool, args_json, opts, want)                                                              \
    call_record(__FILE__, __LINE__, (c), (log), (tool), (args_json), (opts), (want))

/* Waits (at most `ms`) until `n` session records came. */
static int sessions_seen(struct record_log *l, int n, long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->lock);
    while (l->sessions < n && pthread_cond_timedwait(&l->cond, &l->lock, &until) == 0) {
    }
    int seen = l->sessions;
    pthread_mutex_unlock(&l->lock);
    return seen;
}

/* The record of a success (with the opt-in payloads), a tool error, a JSON-RPC error, a
 * timeout, an MRTR call with two rounds and a call retried after the server exited (under a
 * reconnect policy); the lost session's record and the closed one's. */
static void test_span_outcomes(void)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"command\":\"%s\",\"args\":[\"--exit-after-lists\",\"2\"],\"request_timeout_ms\":%d,"
             "\"span_tool_payloads\":true,\"reconnect\":{\"max_attempts\":3}}",
             fixture_path_json(), tscale(5000));
    mcp_config *config = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_config_new(json, &config, &err), MCP_OK, err);
    mcp_client *c = client_from_config(config);
    CHECK(c != NULL);
    static struct record_log log;
    memset(&log, 0, sizeof log);
    pthread_mutex_init(&log.lock, NULL);
    pthread_cond_init(&log.cond, NULL);
    EXPECT_STATUS(mcp_client_on_span(c, on_record, &log, NULL, &err), MCP_OK, err);
    char *out = NULL;

    const char *r = CALL_RECORD(c, &log, "echo", "{\"text\":\"x\"}", NULL, MCP_OK);
    EXPECT_CONTAINS(r, "\"name\":\"tools/call echo\"");
    EXPECT_CONTAINS(r, "\"gen_ai.tool.call.arguments\":\"{\\\"text\\\":\\\"x\\\"}\"");
    EXPECT_CONTAINS(r, "\"gen_ai.tool.call.result\":\"{");
    EXPECT_CONTAINS(r, "\"status\":{\"code\":\"unset\"}");

    r = CALL_RECORD(c, &log, "fail", NULL, NULL, MCP_OK);
    EXPECT_CONTAINS(r, "\"error.type\":\"tool_error\"");
    CHECK_NOT_CONTAINS(r, "gen_ai.tool.call.result");

    r = CALL_RECORD(c, &log, "rpc_error", NULL, NULL, MCP_JSONRPC_ERROR);
    EXPECT_CONTAINS(r, "\"error.type\":\"-32050\"");
    EXPECT_CONTAINS(r, "\"rpc.response.status_code\":\"-32050\"");
    EXPECT_CONTAINS(r, "\"status\":{\"code\":\"error\",\"message\":\"fixture error\"}");

    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = tscale(200);
    r = CALL_RECORD(c, &log, "hang", NULL, &opts, MCP_TIMEOUT);
    EXPECT_CONTAINS(r, "\"name\":\"tools/call hang\"");
    EXPECT_CONTAINS(r, "\"error.type\":\"timeout\"");

    r = CALL_RECORD(c, &log, "state_only", NULL, NULL, MCP_OK);
    EXPECT(count_occurrences(r, "\"name\":\"mcp.mrtr.round\"") == 2);
    EXPECT_CONTAINS(r, "\"mcp.mrtr.round\":2");
    /* five calls and the first one's connect (a handshake record) */
    EXPECT(log.count == 6 && log.sessions == 0);
    EXPECT_CONTAINS(log.records[0], "\"name\":\"server/discover\"");

    /* the second list meets the server's exit: one record, retried after the reconnect */
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    EXPECT_STATUS(mcp_client_list(c, MCP_LIST_TOOLS, NULL, NULL, &out, &err), MCP_OK, err);
    mcp_string_free(out);
    out = NULL;
    EXPECT(sessions_seen(&log, 1, 5000) == 1);
    pthread_mutex_lock(&log.lock);
    int retried = 0, lost = 0;
    for (int i = 0; i < log.count && i < RECORDS_MAX; i++) {
        if (strstr(log.records[i], "\"name\":\"mcp.reconnect.retry\"")) retried++;
        if (strstr(log.records[i], "\"record\":\"session\"") &&
            strstr(log.records[i], "\"error.type\":\"server_exited\""))
            lost++;
    }
    int spans = log.count - log.sessions;
    pthread_mutex_unlock(&log.lock);
    EXPECT(retried == 1 && lost == 1);
    /* seven calls, the first connect and the reconnect's handshake */
    EXPECT_MSG(spans == 9, "%d span records", spans);

    /* the client's close ends the second session: its record is there when close returns */
    mcp_client_close(c);
    EXPECT(log.sessions == 2);
    r = last_record(&log);
    EXPECT_CONTAINS(r, "\"record\":\"session\"");
    EXPECT_CONTAINS(r, "\"network.transport\":\"pipe\"");
    EXPECT_CONTAINS(r, "\"mcp.protocol.version\":\"2026-07-28\"");
    CHECK_NOT_CONTAINS(r, "error.type");
    mcp_client_free(c);
    pthread_mutex_destroy(&log.lock);
    pthread_cond_destroy(&log.cond);
}

/* ---- legacy-only calls ---------------------------------------------------------------------- */

static void noop_roots(void *ud, const char *method, const char *params, size_t len,
                       mcp_responder *r)
{
    (void)ud;
    (void)method;
    (void)params;
    (void)len;
    mcp_status answered = mcp_responder_reply_json(r, "{\"roots\":[]}", NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void test_legacy_calls(void)
{
    mcp_client *c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    char *out = NULL;
    CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    CHECK(mcp_client_era(c) == MCP_ERA_LEGACY);
    EXPECT_STATUS(mcp_client_ping(c, NULL, &err), MCP_OK, err);
    mcp_call_opts opts;
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = 2000;
    EXPECT_STATUS(mcp_client_ping(c, &opts, &err), MCP_OK, err);

    out = tool_ok(c, "log_level", NULL);
    EXPECT_CONTAINS(out, "\"text\":\"unset\"");
    mcp_string_free(out);
    EXPECT_STATUS(mcp_client_set_log_level(c, "warning", &opts, &err), MCP_OK, err);
    out = tool_ok(c, "log_level", NULL);
    EXPECT_CONTAINS(out, "\"text\":\"warning\"");
    mcp_string_free(out);
    EXPECT_STATUS(mcp_client_set_log_level(c, "bogus", NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    err = NULL;

    /* Without a roots handler, notify_roots_changed sends nothing. */
    EXPECT_STATUS(mcp_client_notify_roots_changed(c, &err), MCP_OK, err);
    out = tool_ok(c, "roots_changed_count", NULL);
    EXPECT_CONTAINS(out, "\"text\":\"0\"");
    mcp_string_free(out);

    /* The server's ping is answered by the library. */
    out = tool_ok(c, "ping_client", NULL);
    EXPECT_CONTAINS(out, "client answered ping");
    mcp_string_free(out);
    /* Legacy results never carry resultType. */
    out = tool_ok(c, "echo", ECHO_ARGS);
    CHECK_NOT_CONTAINS(out, "resultType");
    mcp_string_free(out);
    mcp_client_free(c);

    /* With a roots handler (declared at initialize), the notification reaches the server. */
    struct fixture_signal sig;
    CHECK(fixture_signal_open(&sig));
    c = fixture_client("--era", "legacy", "--signal", sig.path, (const char *)NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_on_roots(c, noop_roots, NULL, NULL, &err), MCP_OK, err);
    CHECK_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_notify_roots_changed(c, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_notify_roots_changed(c, &err), MCP_OK, err);
    EXPECT(fixture_signal_wait(&sig, "notification notifications/roots/list_changed", 2,
                               tscale(2000)));
    out = tool_ok(c, "roots_changed_count", NULL);
    EXPECT_CONTAINS(out, "\"text\":\"2\"");
    mcp_string_free(out);
    mcp_error_free(err);
    mcp_client_free(c);
    fixture_signal_close(&sig);
}

static void test_legacy_subscribe_and_notifications(void)
{
    mcp_client *c = fixture_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    struct collector *col = (struct collector *)malloc(sizeof *col);
    CHECK(col != NULL);
    collector_init(col);
    mcp_error *err = NULL;
    EXPECT_STATUS(
        mcp_client_set_notification_handler(c, collect_notification, col, collector_free, &err),
        MCP_OK, err);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_subscribe_resource(c, "fixture://static", NULL, &err), MCP_OK, err);
    char *out = tool_ok(c, "touch", "{\"uri\":\"fixture://static\"}");
    EXPECT_CONTAINS(out, "touched");
    mcp_string_free(out);
    EXPECT(collector_wait(col, "notifications/resources/updated {\"uri\":\"fixture://static\"}",
                          tscale(2000)));
    EXPECT_STATUS(mcp_client_unsubscribe_resource(c, "fixture://static", NULL, &err), MCP_OK,
                  err);
    out = tool_ok(c, "touch", "{\"uri\":\"fixture://static\"}");
    mcp_string_free(out);
    /* list_changed notifications and a log message */
    out = tool_ok(c, "notify", NULL);
    EXPECT_CONTAINS(out, "notified");
    mcp_string_free(out);
    EXPECT(collector_wait(col, "notifications/message", tscale(2000)));
    EXPECT(collector_count(col, "notifications/tools/list_changed") == 1);
    EXPECT(collector_count(col, "notifications/prompts/list_changed") == 1);
    EXPECT(collector_count(col, "notifications/resources/list_changed") == 1);
    EXPECT(collector_count(col, "notified") >= 1);
    /* the second touch (after unsubscribe) was not delivered */
    EXPECT(collector_count(col, "notifications/resources/updated") == 1);
    EXPECT(ALOAD(&col->bad_len) == 0);
    /* Replacing the listener releases the old userdata. */
    EXPECT_STATUS(mcp_client_set_notification_handler(c, NULL, NULL, NULL, &err), MCP_OK, err);
    EXPECT(wait_count(&col->ud.frees, 1, tscale(2000)));
    mcp_error_free(err);
    mcp_client_free(c);
    EXPECT(col->ud.frees == 1);
    EXPECT(col->ud.after_free == 0);
    collector_destroy(col);
    free(col);
}

/* Legacy-only calls on a modern server: MCP_UNSUPPORTED; notify_roots_changed is a no-op. */
static void test_modern_rejects_legacy_calls(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_ping(c, NULL, &err), MCP_UNSUPPORTED, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_subscribe_resource(c, "fixture://static", NULL, &err),
                  MCP_UNSUPPORTED, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_unsubscribe_resource(c, "fixture://static", NULL, &err),
                  MCP_UNSUPPORTED, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_client_notify_roots_changed(c, &err), MCP_OK, err);
    EXPECT_STATUS(mcp_client_set_log_level(c, "debug", NULL, &err), MCP_OK, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* ---- subscriptions (modern) ------------------------------------------------------------------ */

static void test_listen(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_subscription *sub = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_listen(c,
                                   "{\"toolsListChanged\":true,"
                                   "\"resourceSubscriptions\":[\"fixture://static\"]}",
                                   NULL, &sub, &err),
                 MCP_OK, err);
    CHECK(sub != NULL);
    char *ack = NULL;
    EXPECT_STATUS(mcp_subscription_acknowledged(sub, &ack, &err), MCP_OK, err);
    EXPECT_CONTAINS(ack, "\"toolsListChanged\":true");
    EXPECT_CONTAINS(ack, "fixture://static");
    mcp_string_free(ack);
    ack = SENTINEL_STR;
    EXPECT_STATUS(mcp_subscription_acknowledged(sub, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;

    /* Nothing yet. */
    char *ev = SENTINEL_STR;
    double t0 = now_ms();
    EXPECT_STATUS(mcp_subscription_next(sub, 50, &ev, &err), MCP_TIMEOUT, err);
    EXPECT(now_ms() - t0 < tscale(1000));
    EXPECT(ev == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_subscription_next(sub, 0, &ev, &err), MCP_TIMEOUT, err);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_subscription_next(sub, 10, NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    err = NULL;

    /* notify: tools list_changed only (prompts and resources were not asked for) */
    char *out = tool_ok(c, "notify", NULL);
    mcp_string_free(out);
    ev = NULL;
    EXPECT_STATUS(mcp_subscription_next(sub, tscale(2000), &ev, &err), MCP_OK, err);
    EXPECT_CONTAINS(ev, "\"method\":\"notifications/tools/list_changed\"");
    EXPECT_CONTAINS(ev, "\"params\":");
    mcp_string_free(ev);
    /* touch: resources/updated for the subscribed uri only */
    out = tool_ok(c, "touch", "{\"uri\":\"fixture://other\"}");
    mcp_string_free(out);
    out = tool_ok(c, "touch", "{\"uri\":\"fixture://static\"}");
    mcp_string_free(out);
    ev = NULL;
    EXPECT_STATUS(mcp_subscription_next(sub, tscale(2000), &ev, &err), MCP_OK, err);
    EXPECT_CONTAINS(ev, "\"method\":\"notifications/resources/updated\"");
    EXPECT_CONTAINS(ev, "\"uri\":\"fixture://static\"");
    mcp_string_free(ev);
    ev = SENTINEL_STR;
    EXPECT_STATUS(mcp_subscription_next(sub, 100, &ev, &err), MCP_TIMEOUT, err);
    mcp_error_free(err);
    err = NULL;

    /* cancel: the server is told; next reports the end */
    EXPECT_STATUS(mcp_subscription_cancel(sub, &err), MCP_OK, err);
    mcp_status st = mcp_subscription_next(sub, tscale(1000), &ev, &err);
    EXPECT_MSG(st == MCP_CLOSED || st == MCP_CANCELLED, "next after cancel: %d", (int)st);
    EXPECT(ev == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    EXPECT_STATUS(mcp_subscription_cancel(sub, &err), MCP_OK, err); /* idempotent */
    /* the acknowledged filter is still readable */
    ack = NULL;
    EXPECT_STATUS(mcp_subscription_acknowledged(sub, &ack, &err), MCP_OK, err);
    mcp_string_free(ack);
    out = tool_ok(c, "cancelled_ids", NULL);
    EXPECT(out != NULL && !strstr(out, "\"text\":\"[]\""));
    mcp_string_free(out);
    mcp_subscription_free(sub);
    mcp_error_free(err);
    mcp_client_free(c);
}

static void test_listen_ended_by_server(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_subscription *sub = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_listen(c, "{\"promptsListChanged\":true}", NULL, &sub, &err), MCP_OK,
                 err);
    char *out = tool_ok(c, "end_listens", NULL);
    EXPECT_CONTAINS(out, "ended 1 listens");
    mcp_string_free(out);
    char *ev = SENTINEL_STR;
    EXPECT_STATUS(mcp_subscription_next(sub, tscale(2000), &ev, &err), MCP_CLOSED, err);
    EXPECT(ev == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    /* freeing an ended subscription is fine */
    mcp_subscription_free(sub);
    mcp_client_free(c);
}

struct next_waiter {
    mcp_subscription *sub;
    mcp_status st;
    double took;
    int done;
    long tid;
};

static void *wait_next(void *arg)
{
    struct next_waiter *w = (struct next_waiter *)arg;
    ASTORE(&w->tid, test_thread_id());
    char *ev = NULL;
    mcp_error *err = NULL;
    double t0 = now_ms();
    w->st = mcp_subscription_next(w->sub, tscale(5000), &ev, &err);
    w->took = now_ms() - t0;
    mcp_string_free(ev);
    mcp_error_free(err);
    ASTORE(&w->done, 1);
    return NULL;
}

/* Closing the client wakes a blocked next; the subscription outlives mcp_client_free. */
static void test_listen_close_wakes_next(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_subscription *sub = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &err), MCP_OK,
                 err);
    struct next_waiter w;
    memset(&w, 0, sizeof w);
    w.sub = sub;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, wait_next, &w) == 0);
    EXPECT_MSG(wait_thread_parked(&w.tid, tscale(3000)), "no thread parked in next");
    EXPECT(ALOAD(&w.done) == 0);
    double t0 = now_ms();
    mcp_client_close(c);
    EXPECT(now_ms() - t0 < tscale(3000));
    pthread_join(th, NULL);
    EXPECT_MSG(w.st == MCP_CLOSED || w.st == MCP_CANCELLED, "next after close: %d (%s)",
               (int)w.st, mcp_status_str(w.st));
    EXPECT_MSG(w.took < tscale(2500), "next woke after %.0f ms", w.took);
    mcp_client_free(c);
    char *ev = SENTINEL_STR;
    mcp_status st = mcp_subscription_next(sub, 100, &ev, &err);
    EXPECT(st == MCP_CLOSED || st == MCP_CANCELLED);
    EXPECT(ev == SENTINEL_STR);
    mcp_error_free(err);
    mcp_subscription_free(sub);
}

static void test_listen_on_legacy(void)
{
    mcp_client *c = connected_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    mcp_subscription *sub = (mcp_subscription *)SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &err),
                  MCP_UNSUPPORTED, err);
    EXPECT(sub == (mcp_subscription *)SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}


/* ---- failure modes of the server ---------------------------------------------------------- */

static mcp_client *json_config_client(const char *fmt_extra)
{
    char json[1024];
    snprintf(json, sizeof json, "{\"command\":\"%s\",\"request_timeout_ms\":5000%s}",
             fixture_path_json(), fmt_extra);
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(json, &cfg, &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, json, st, MCP_OK, err);
        mcp_error_free(err);
        return NULL;
    }
    return client_from_config(cfg);
}

static void test_message_size(void)
{
    mcp_client *c = json_config_client(",\"max_message_bytes\":4096");
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "big", "{\"bytes\":100000}", NULL, NULL, NULL, &out,
                                       &err),
                  MCP_MESSAGE_TOO_LARGE, err);
    EXPECT(mcp_status_is_transport(MCP_MESSAGE_TOO_LARGE));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    /* the oversized message was skipped; the connection goes on */
    out = tool_ok(c, "echo", ECHO_ARGS);
    EXPECT(out != NULL);
    mcp_string_free(out);
    mcp_client_free(c);

    /* 1 MiB within the default bound */
    c = connected_client(NULL);
    CHECK(c != NULL);
    out = tool_ok(c, "big", "{\"bytes\":1048576}");
    char *text = NULL;
    EXPECT_STATUS(mcp_json_string(out, "/content/0/text", &text, &err), MCP_OK, err);
    EXPECT(text != NULL && strlen(text) == 1048576 && text[0] == 'x' && text[1048575] == 'x');
    mcp_string_free(text);
    mcp_string_free(out);
    mcp_client_free(c);
}

static void test_result_types(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    /* modern result without resultType: complete (no retry) */
    char *out = tool_ok(c, "no_result_type", NULL);
    EXPECT_CONTAINS(out, "no resultType");
    mcp_string_free(out);
    /* an unknown resultType breaks the protocol */
    out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "bad_result_type", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_PROTOCOL_VIOLATION, err);
    EXPECT_CONTAINS(mcp_error_message(err), "bogus");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    out = tool_ok(c, "echo", ECHO_ARGS); /* only that call failed */
    EXPECT(out != NULL);
    mcp_string_free(out);
    mcp_client_free(c);
    c = connected_client("--era", "legacy", (const char *)NULL);
    CHECK(c != NULL);
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_call_tool(c, "bad_result_type", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_PROTOCOL_VIOLATION, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* A line that is not JSON on stdout ends the connection: every call fails promptly. */
static void test_garbage_on_stdout(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_call_tool(c, "garbage", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_PROTOCOL_VIOLATION, err);
    EXPECT_CONTAINS(mcp_error_message(err), "this is not json");
    mcp_error_free(err);
    err = NULL;
    mcp_status st = mcp_client_call_tool(c, "echo", ECHO_ARGS, NULL, NULL, NULL, &out, &err);
    EXPECT(st != MCP_OK);
    EXPECT(now_ms() - t0 < tscale(2000));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* A server that requires the elicitation capability. */
static void capability_handler(void *ud, const char *m, const char *p, size_t n, mcp_responder *r)
{
    (void)ud;
    (void)m;
    (void)p;
    (void)n;
    mcp_status answered = mcp_responder_reply_json(r, "{\"action\":\"accept\",\"content\":{\"name\":\"Cap\"}}", NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void test_capability_missing(void)
{
    mcp_client *c = connected_client("--require-elicitation", (const char *)NULL);
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "elicit_once", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_CAPABILITY_MISSING, err);
    int64_t code = 0;
    EXPECT(mcp_error_jsonrpc_code(err, &code) && code == -32021);
    EXPECT_CONTAINS(mcp_error_data_json(err), "requiredCapabilities");
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    /* registering the handler declares the capability on the next request */
    EXPECT_STATUS(mcp_client_on_elicitation(c, capability_handler, NULL, NULL, &err), MCP_OK, err);
    out = tool_ok(c, "elicit_once", NULL);
    EXPECT_CONTAINS(out, "Hello, Cap!");
    mcp_string_free(out);
    mcp_client_free(c);
}

static void test_era_detection_variants(void)
{
    mcp_error *err = NULL;
    /* the server exits on the probe: restarted, then initialize */
    mcp_client *c = fixture_client("--on-discover", "exit", (const char *)NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    char *out = tool_ok(c, "echo", ECHO_ARGS);
    EXPECT(out != NULL);
    mcp_string_free(out);
    mcp_client_free(c);
    /* discover is "Method not found": legacy */
    c = fixture_client("--on-discover", "not-found", (const char *)NULL);
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    mcp_client_free(c);
    /* no common modern version: auto falls back to legacy ... */
    c = json_config_client(",\"args\":[\"--supported-versions\",\"2099-01-01\"]");
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
    EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
    mcp_client_free(c);
    /* ... and modern mode fails with MCP_VERSION_MISMATCH */
    c = json_config_client(",\"mode\":\"modern\",\"args\":[\"--era\",\"modern\","
                           "\"--supported-versions\",\"2099-01-01\"]");
    CHECK(c != NULL);
    out = SENTINEL_STR;
    EXPECT_STATUS(mcp_client_connect(c, NULL, &out, &err), MCP_VERSION_MISMATCH, err);
    EXPECT_CONTAINS(mcp_error_message(err), "2099-01-01");
    EXPECT(out == SENTINEL_STR);
    EXPECT(mcp_client_era(c) == MCP_ERA_NONE);
    mcp_error_free(err);
    err = NULL;
    mcp_client_free(c);
    /* modern mode, a silent server: the request timeout applies to connecting */
    c = json_config_client(",\"mode\":\"modern\",\"request_timeout_ms\":300,"
                           "\"args\":[\"--on-discover\",\"silent\"]");
    CHECK(c != NULL);
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_TIMEOUT, err);
    EXPECT(now_ms() - t0 < tscale(2000));
    mcp_error_free(err);
    err = NULL;
    mcp_client_free(c);
    /* a pinned version this client does not speak */
    c = json_config_client(",\"protocol_version\":\"1999-01-01\"");
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_INVALID_ARG, err);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* mcp_client_connect with call options: the per-call cancel token and time caps end a connect that hangs
 * (a silent server in modern mode, with a long configured timeout), and NULL options connect
 * as mcp_client_connect does. */
struct cancel_later {
    mcp_cancel_token *token;
    struct fixture_signal *sig;
};

/* Cancels once the probe reached the (silent) server, so the connect is surely waiting. */
static void *cancel_later_run(void *arg)
{
    struct cancel_later *cl = (struct cancel_later *)arg;
    EXPECT(fixture_signal_wait(cl->sig, "request server/discover", 1, tscale(3000)));
    mcp_cancel_token_cancel(cl->token);
    return NULL;
}

static void test_connect_with_options(void)
{
    const char *silent = ",\"mode\":\"modern\",\"request_timeout_ms\":20000,"
                         "\"args\":[\"--on-discover\",\"silent\"]";
    mcp_error *err = NULL;
    char *out = SENTINEL_STR;
    mcp_call_opts opts;

    /* a total cap */
    mcp_client *c = json_config_client(silent);
    CHECK(c != NULL);
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.max_total_ms = 200;
    double t0 = now_ms();
    EXPECT_STATUS(mcp_client_connect(c, &opts, &out, &err), MCP_TIMEOUT, err);
    EXPECT(now_ms() - t0 < tscale(2000));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    /* timeout_ms caps the whole connect too */
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.timeout_ms = 200;
    t0 = now_ms();
    EXPECT_STATUS(mcp_client_connect(c, &opts, NULL, &err), MCP_TIMEOUT, err);
    EXPECT(now_ms() - t0 < tscale(2000));
    mcp_error_free(err);
    err = NULL;
    mcp_client_free(c);

    /* a token cancelled from another thread */
    struct fixture_signal sig;
    CHECK(fixture_signal_open(&sig));
    char signalled[1024], sig_path[600];
    snprintf(signalled, sizeof signalled,
             ",\"mode\":\"modern\",\"request_timeout_ms\":20000,"
             "\"args\":[\"--on-discover\",\"silent\",\"--signal\",\"%s\"]",
             json_escaped(sig.path, sig_path, sizeof sig_path));
    c = json_config_client(signalled);
    CHECK(c != NULL);
    struct cancel_later cl = {mcp_cancel_token_new(), &sig};
    CHECK(mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) == MCP_OK);
    opts.cancel = cl.token;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cancel_later_run, &cl) == 0);
    t0 = now_ms();
    EXPECT_STATUS(mcp_client_connect(c, &opts, NULL, &err), MCP_CANCELLED, err);
    EXPECT(now_ms() - t0 < tscale(2000));
    pthread_join(th, NULL);
    mcp_error_free(err);
    err = NULL;
    /* already cancelled: fails at once */
    t0 = now_ms();
    EXPECT_STATUS(mcp_client_connect(c, &opts, NULL, &err), MCP_CANCELLED, err);
    EXPECT(now_ms() - t0 < tscale(500));
    mcp_error_free(err);
    err = NULL;
    mcp_cancel_token_free(cl.token);
    mcp_client_free(c);
    fixture_signal_close(&sig);

    /* NULL options: a plain connect */
    c = json_config_client("");
    CHECK(c != NULL);
    EXPECT_STATUS(mcp_client_connect(c, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "protocolVersion");
    mcp_string_free(out);
    mcp_client_free(c);
}

static void test_max_pages(void)
{
    mcp_client *c = json_config_client(",\"max_pages\":2,\"args\":[\"--page-size\",\"2\"]");
    CHECK(c != NULL);
    char *out = SENTINEL_STR;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, &out, &err),
                  MCP_PROTOCOL_VIOLATION, err);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    err = NULL;
    out = NULL;
    EXPECT_STATUS(mcp_client_list_all(c, MCP_LIST_PROMPTS, NULL, &out, &err), MCP_OK, err);
    EXPECT_CONTAINS(out, "\"name\":\"greeting\"");
    EXPECT_CONTAINS(out, "\"name\":\"needs_input\"");
    EXPECT_CONTAINS(out, "\"name\":\"plain\""); /* 3 prompts: 2 pages */
    mcp_string_free(out);
    mcp_client_free(c);
}

/* mcp_client_free while another thread waits in mcp_subscription_next: it wakes. */
static void test_listen_free_client_wakes_next(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    mcp_subscription *sub = NULL;
    mcp_error *err = NULL;
    CHECK_STATUS(mcp_client_listen(c, "{\"toolsListChanged\":true}", NULL, &sub, &err), MCP_OK,
                 err);
    struct next_waiter w;
    memset(&w, 0, sizeof w);
    w.sub = sub;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, wait_next, &w) == 0);
    EXPECT_MSG(wait_thread_parked(&w.tid, tscale(3000)), "no thread parked in next");
    EXPECT(ALOAD(&w.done) == 0);
    double t0 = now_ms();
    mcp_client_free(c);
    double took = now_ms() - t0;
    pthread_join(th, NULL);
    EXPECT_MSG(w.st == MCP_CLOSED || w.st == MCP_CANCELLED, "next after free: %d (%s)", (int)w.st,
               mcp_status_str(w.st));
    EXPECT_MSG(w.took < tscale(2500), "next woke after %.0f ms", w.took);
    EXPECT_MSG(took < tscale(2500), "mcp_client_free took %.0f ms", took);
    mcp_subscription_free(sub);
}

/* ---- Streamable HTTP: url, headers, bearer token ------------------------------------------------ */

static mcp_client *http_client(const struct http_fixture *h)
{
    static const char *const headers[] = {"X-Ctest-One", "first", "X-Ctest-Two", "second", NULL};
    return http_fixture_client(h, headers, "s3cret-token");
}

static void http_handler(void *ud, const char *m, const char *p, size_t n, mcp_responder *r)
{
    (void)ud;
    (void)m;
    (void)p;
    (void)n;
    mcp_status answered = mcp_responder_reply_json(r, "{\"action\":\"accept\",\"content\":{\"name\":\"Http\"}}", NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

/* Occurrences of `needle` in the fixture's record file. */
static int record_count(const char *record, const char *needle)
{
    char *rec = slurp(record, NULL);
    int n = 0;
    for (const char *at = rec; at && (at = strstr(at, needle)) != NULL; at += strlen(needle))
        n++;
    free(rec);
    return n;
}

static void http_round_trip(const char *era, int want_era)
{
    struct http_fixture h;
    bool started = http_fixture_start(&h, era, false);
    EXPECT(started);
    mcp_client *c = started ? http_client(&h) : NULL;
    if (c != NULL) {
        mcp_error *err = NULL;
        EXPECT_STATUS(mcp_client_on_elicitation(c, http_handler, NULL, NULL, &err), MCP_OK, err);
        char *info = NULL;
        mcp_status st = mcp_client_connect(c, NULL, &info, &err);
        EXPECT_STATUS(st, MCP_OK, err);
        mcp_error_free(err);
        err = NULL;
        EXPECT_MSG(mcp_client_era(c) == want_era, "%s: era %d", era, (int)mcp_client_era(c));
        mcp_string_free(info);
        if (st == MCP_OK) {
            char *out = tool_ok(c, "echo", "{\"text\":\"over http\"}");
            EXPECT_CONTAINS(out, "over http");
            mcp_string_free(out);
            out = tool_ok(c, "elicit_once", NULL);
            EXPECT_CONTAINS(out, "Hello, Http!");
            mcp_string_free(out);
        }
        if (st == MCP_OK && want_era == MCP_ERA_MODERN) {
            /* Mcp-Param-* headers mirror the arguments text as the host passed it, once the
             * tool list has said which: the first POST carries them (no -32020 reload). */
            char *tools = NULL;
            EXPECT_STATUS(mcp_client_list_all(c, MCP_LIST_TOOLS, NULL, &tools, &err), MCP_OK, err);
            mcp_string_free(tools);
            char *out = tool_ok(c, "headers_echo", "{\"region\":\"us-west1\",\"priority\":42,\"query\":\"q\"}");
            EXPECT_CONTAINS(out, "\"mcp-param-region\":\"us-west1\"");
            EXPECT_CONTAINS(out, "\"mcp-param-priority\":\"42\"");
            mcp_string_free(out);
            EXPECT_MSG(record_count(h.record, "\"method\":\"tools/list\"") == 1, "tools/list sent %d times",
                       record_count(h.record, "\"method\":\"tools/list\""));
        }
        mcp_client_free(c);
        /* the configured headers and the bearer token went out with the requests */
        char *rec = slurp(h.record, NULL);
        EXPECT_CONTAINS(rec, "\"x-ctest-one\":\"first\"");
        EXPECT_CONTAINS(rec, "\"x-ctest-two\":\"second\"");
        EXPECT_CONTAINS(rec, "\"authorization\":\"Bearer s3cret-token\"");
        free(rec);
    }
    http_fixture_stop(&h);
}

/* `auto` remembers a legacy origin (the process's era cache): the second client skips the
 * server/discover probe; after mcp_client_clear_era_cache the next one probes again. */
static void test_http_era_cache_clear(void)
{
    struct http_fixture h;
    bool started = http_fixture_start(&h, "legacy", false);
    EXPECT(started);
    const char *probe = "\"method\":\"server/discover\"";
    for (int round = 0; started && round < 3; round++) {
        mcp_client *c = http_client(&h);
        CHECK(c != NULL);
        mcp_error *err = NULL;
        if (round == 2) {
            EXPECT_STATUS(mcp_client_clear_era_cache(c, &err), MCP_OK, err);
        }
        EXPECT_STATUS(mcp_client_connect(c, NULL, NULL, &err), MCP_OK, err);
        EXPECT(mcp_client_era(c) == MCP_ERA_LEGACY);
        mcp_error_free(err);
        mcp_client_free(c);
        int want = round == 0 ? 1 : round == 1 ? 1 : 2; /* probed first, not second, again after clear */
        EXPECT_MSG(record_count(h.record, probe) == want, "round %d: %d probes", round,
                   record_count(h.record, probe));
    }
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_clear_era_cache(NULL, &err), MCP_NULL_ARG, err);
    mcp_error_free(err);
    http_fixture_stop(&h);
}

static void test_http_transport(void)
{
    http_round_trip("dual", MCP_ERA_MODERN);
    http_round_trip("legacy", MCP_ERA_LEGACY);
}

/* Large echoes (200,000 bytes each way) over stdio and HTTP with JSON and SSE answers: the
 * result (handed over where it sits in the answer's buffer) reads as a whole string and is
 * freed by mcp_string_free like any other (the sanitizer and valgrind runs check the frees). */
static void large_echoes(mcp_client *c)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const size_t n = 200000;
    char *args = (char *)malloc(n + 16), *text = (char *)malloc(n + 1);
    CHECK(args != NULL && text != NULL);
    for (size_t k = 0; k < n; k++) text[k] = alphabet[(k * 7 + k / 64) % 64];
    text[n] = 0;
    snprintf(args, n + 16, "{\"text\":\"%s\"}", text);
    for (int round = 0; round < 3; round++) {
        char *out = NULL;
        mcp_error *err = NULL;
        EXPECT_STATUS(mcp_client_call_tool(c, "echo", args, NULL, NULL, NULL, &out, &err), MCP_OK, err);
        if (out) {
            const char *at = strstr(out, "\"text\":\"");
            EXPECT(at != NULL && strncmp(at + 8, text, n) == 0 && at[8 + n] == '"');
            EXPECT(out[0] == '{' && out[strlen(out) - 1] == '}');
        }
        mcp_string_free(out);
    }
    free(args);
    free(text);
}

static void test_large_echo(void)
{
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    large_echoes(c);
    mcp_client_free(c);
    for (int sse = 0; sse < 2; sse++) {
        struct http_fixture h;
        CHECK(http_fixture_start(&h, "modern", sse == 1));
        mcp_client *hc = http_fixture_client(&h, NULL, NULL);
        CHECK(hc != NULL);
        large_echoes(hc);
        mcp_client_free(hc);
        http_fixture_stop(&h);
    }
}

const struct test_case call_tests[] = {
    {"calls/connect_modern", test_connect_modern},
    {"calls/first_call_connects", test_first_call_connects},
    {"calls/connect_legacy_fallback", test_connect_legacy_fallback},
    {"calls/config_mode", test_config_mode},
    {"calls/config_protocol_version", test_config_protocol_version},
    {"calls/probe_timeout_fallback", test_probe_timeout_fallback},
    {"calls/config_env_and_cwd", test_config_env_and_cwd},
    {"calls/list_single_page", test_list_single_page},
    {"calls/list_pages", test_list_pages},
    {"calls/call_tool_basics", test_call_tool_basics},
    {"calls/rpc_error", test_rpc_error},
    {"calls/crash", test_crash},
    {"calls/prompts", test_prompts},
    {"calls/resources", test_resources},
    {"calls/complete", test_complete},
    {"calls/raw_request", test_raw_request},
    {"calls/opts_timeout", test_opts_timeout},
    {"calls/config_request_timeout", test_config_request_timeout},
    {"calls/opts_progress", test_opts_progress},
    {"calls/opts_meta", test_opts_meta},
    {"calls/trace_context_callback", test_trace_context_callback},
    {"calls/span_listener", test_span_listener},
    {"calls/span_records", test_span_records},
    {"calls/span_handshake", test_span_handshake},
    {"calls/span_outcomes", test_span_outcomes},
    {"calls/span_listener_that_blocks", test_span_listener_that_blocks},
    {"calls/opts_log_level", test_opts_log_level},
    {"calls/log_handler_stderr", test_log_handler_stderr},
    {"calls/legacy_calls", test_legacy_calls},
    {"calls/legacy_subscribe_and_notifications", test_legacy_subscribe_and_notifications},
    {"calls/modern_rejects_legacy_calls", test_modern_rejects_legacy_calls},
    {"calls/listen", test_listen},
    {"calls/listen_ended_by_server", test_listen_ended_by_server},
    {"calls/listen_close_wakes_next", test_listen_close_wakes_next},
    {"calls/listen_on_legacy", test_listen_on_legacy},
    {"calls/listen_free_client_wakes_next", test_listen_free_client_wakes_next},
    {"calls/message_size", test_message_size},
    {"calls/result_types", test_result_types},
    {"calls/garbage_on_stdout", test_garbage_on_stdout},
    {"calls/capability_missing", test_capability_missing},
    {"calls/era_detection_variants", test_era_detection_variants},
    {"calls/connect_with_options", test_connect_with_options},
    {"calls/max_pages", test_max_pages},
    {"calls/http_transport", test_http_transport},
    {"calls/large_echo", test_large_echo},
    {"calls/http_era_cache_clear", test_http_era_cache_clear},
};
const size_t call_tests_count = sizeof call_tests / sizeof call_tests[0];
