/* The conformance client: drives the C ABI through the official MCP conformance suite's client
 * scenarios. Contract: the server URL is the last argument; MCP_CONFORMANCE_SCENARIO,
 * MCP_CONFORMANCE_PROTOCOL_VERSION and MCP_CONFORMANCE_CONTEXT describe the run; exit 0 on
 * success. Diagnostics go to stderr. */
#define _POSIX_C_SOURCE 200809L /* getaddrinfo */
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "mcp_client.h"

static mcp_client *client;
static const char *scenario = "";

/* A reply the library refused (other than "no longer wanted") fails the scenario: say why. */
static void answered(mcp_status st) {
    if (st != MCP_OK && st != MCP_CANCELLED)
        fprintf(stderr, "conformance client: a reply was refused: %s\n", mcp_status_str(st));
}

static int fail(const char *what, mcp_status st, mcp_error *err) {
    fprintf(stderr, "conformance client: %s failed: %s (%d): %s\n", what, mcp_status_str(st), st,
            err ? mcp_error_message(err) : "");
    mcp_error_free(err);
    return 1;
}

/* Calls a tool and prints its result; non-zero on failure. */
static int call_tool(const char *name, const char *args) {
    char *result = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_call_tool(client, name, args, NULL, NULL, NULL, &result, &err);
    if (st != MCP_OK) return fail(name, st, err);
    fprintf(stderr, "%s -> %s\n", name, result);
    mcp_string_free(result);
    return 0;
}

/* Lists one kind (all pages); the JSON goes to *out when out is non-NULL. */
static int list(int32_t kind, char **out) {
    char *result = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_list_all(client, kind, NULL, &result, &err);
    if (st != MCP_OK) return fail("list", st, err);
    fprintf(stderr, "list %d -> %s\n", kind, result);
    if (out) *out = result;
    else mcp_string_free(result);
    return 0;
}

/* ---- input handlers ---------------------------------------------------------------- */

static void *call_unrelated_then_reply(void *responder) {
    /* sep-2322: an unrelated call between the input_required answer and the retry must carry
     * neither inputResponses nor requestState. */
    call_tool("test_mrtr_unrelated", "{}");
    answered(mcp_responder_reply_json(responder, "{\"action\":\"accept\",\"content\":{\"confirmed\":true}}", NULL));
    return NULL;
}

static void on_elicitation(void *ud, const char *method, const char *params, size_t len, mcp_responder *r) {
    (void)ud; (void)method; (void)len;
    fprintf(stderr, "elicitation: %s\n", params);
    static int first = 1;
    if (strcmp(scenario, "sep-2322-client-request-state") == 0 && first) {
        first = 0;
        pthread_t t;
        mcp_responder_defer(r);
        if (pthread_create(&t, NULL, call_unrelated_then_reply, r) == 0) {
            pthread_detach(t);
            return;
        }
        call_unrelated_then_reply(r); /* cannot happen in practice; keep the flow going */
        return;
    }
    if (strcmp(scenario, "sep-2322-client-request-state") == 0) {
        answered(mcp_responder_reply_json(r, "{\"action\":\"accept\",\"content\":{\"confirmed\":true}}", NULL));
        return;
    }
    /* Accept; the library fills omitted fields from the schema defaults (SEP-1034). */
    answered(mcp_responder_reply_json(r, "{\"action\":\"accept\",\"content\":{}}", NULL));
}

static void on_sampling(void *ud, const char *method, const char *params, size_t len, mcp_responder *r) {
    (void)ud; (void)method; (void)params; (void)len;
    answered(mcp_responder_reply_json(r, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"ok\"},"
                                         "\"model\":\"conformance-client\",\"stopReason\":\"endTurn\"}", NULL));
}

static void on_roots(void *ud, const char *method, const char *params, size_t len, mcp_responder *r) {
    (void)ud; (void)method; (void)params; (void)len;
    answered(mcp_responder_reply_json(r, "{\"roots\":[{\"uri\":\"file:///test/root\",\"name\":\"Test Root\"}]}", NULL));
}

/* ---- OAuth (the auth scenarios) ------------------------------------------------------- */

/* The suite's authorization servers redirect at once, without a login page: the client must GET
 * the authorization URL itself, without following the redirect, and read code, state and iss
 * from Location (spec digest section 17.3). A real host opens a browser here instead. */
static void on_authorization(void *ud, const char *url, const char *redirect_uri, mcp_responder *r) {
    (void)ud;
    char *location = NULL;
    mcp_error *err = NULL;
    fprintf(stderr, "authorization: redirect expected at %s\n", redirect_uri);
    mcp_status st = mcp_auth_fetch_redirect(url, 10000, &location, &err);
    if (st != MCP_OK) {
        fprintf(stderr, "authorization: %s\n", mcp_error_message(err));
        answered(mcp_responder_reply_error(r, 0, mcp_error_message(err), NULL));
        mcp_error_free(err);
        return;
    }
    answered(mcp_responder_reply_url(r, location, NULL));
    mcp_string_free(location);
}

/* Appends `,"key":<value of /key in context>` to buf when the context has that key. */
static void add_context_key(char *buf, size_t cap, const char *context, const char *key) {
    char pointer[64];
    char *value = NULL;
    snprintf(pointer, sizeof pointer, "/%s", key);
    if (!context || mcp_json_pointer(context, pointer, &value, NULL) != MCP_OK) return;
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, ",\"%s\":%s", key, value);
    mcp_string_free(value);
}

/* GETs http://host:port<path> (HTTP/1.0, plain http only) and returns the body; malloc'd. */
static char *http_get(const char *url, const char *path) {
    char host[256], port[8] = "80";
    if (strncmp(url, "http://", 7) != 0) return NULL;
    const char *h = url + 7;
    size_t n = strcspn(h, ":/");
    if (n == 0 || n >= sizeof host) return NULL;
    memcpy(host, h, n);
    host[n] = 0;
    if (h[n] == ':') {
        size_t p = strcspn(h + n + 1, "/");
        if (p == 0 || p >= sizeof port) return NULL;
        memcpy(port, h + n + 1, p);
        port[p] = 0;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) return NULL;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) return NULL;
    char req[1024];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\nAccept: application/json\r\n\r\n",
                       path, host, port);
    size_t cap = 65536, got = 0;
    char *buf = malloc(cap + 1);
    if (!buf || len <= 0 || (size_t)len >= sizeof req || write(fd, req, (size_t)len) != len) {
        free(buf);
        close(fd);
        return NULL;
    }
    ssize_t r;
    while (got < cap && (r = read(fd, buf + got, cap - got)) > 0) got += (size_t)r;
    close(fd);
    buf[got] = 0;
    char *body = strstr(buf, "\r\n\r\n");
    if (strncmp(buf, "HTTP/1.1 200", 12) != 0 || !body) {
        free(buf);
        return NULL;
    }
    memmove(buf, body + 4, strlen(body + 4) + 1);
    return buf;
}

/* The authorization server the MCP server's protected resource metadata names first (the
 * path-aware well-known URL, then the root one); malloc'd JSON string, or NULL. The library
 * sends a client secret or key only to the issuer the host names: a real host knows its
 * authorization server; this harness takes the suite's word for it, since the suite's context
 * does not say. */
static char *issuer_from_metadata(const char *url) {
    const char *h = strstr(url, "://");
    const char *path = h ? strchr(h + 3, '/') : NULL;
    char well_known[512];
    snprintf(well_known, sizeof well_known, "/.well-known/oauth-protected-resource%s", path ? path : "");
    const char *candidates[] = {well_known, "/.well-known/oauth-protected-resource"};
    for (size_t i = 0; i < 2; i++) {
        char *doc = http_get(url, candidates[i]);
        char *issuer = NULL;
        if (doc && mcp_json_pointer(doc, "/authorization_servers/0", &issuer, NULL) == MCP_OK) {
            free(doc);
            return issuer;
        }
        free(doc);
    }
    return NULL;
}

/* The "oauth" configuration of an auth scenario, from its context; malloc'd. */
static char *oauth_config(const char *context, const char *url) {
    size_t cap = 16384 + (context ? strlen(context) : 0);
    char *buf = malloc(cap);
    if (!buf) return NULL;
    if (strstr(scenario, "client-credentials"))
        snprintf(buf, cap, "{\"grant\":\"client_credentials\"");
    else if (strcmp(scenario, "auth/wif-jwt-bearer") == 0) {
        /* Workload identity federation: the workload's JWT (the suite's valid one) is the grant. */
        char *jwt = NULL;
        if (!context || mcp_json_pointer(context, "/valid_jwt", &jwt, NULL) != MCP_OK) {
            free(buf);
            return NULL;
        }
        snprintf(buf, cap, "{\"grant\":\"jwt_bearer\",\"workload_jwt\":%s", jwt);
        mcp_string_free(jwt);
    } else if (strcmp(scenario, "auth/enterprise-managed-authorization") == 0) {
        /* Enterprise-managed authorization: the user's ID token from the enterprise IdP (the
         * suite's), exchanged there for an ID-JAG, then the JWT-bearer grant with the client's
         * own credentials (client_id, client_secret below; issuer from the metadata). */
        char *id_token = NULL, *endpoint = NULL;
        if (!context || mcp_json_pointer(context, "/idp_id_token", &id_token, NULL) != MCP_OK ||
            mcp_json_pointer(context, "/idp_token_endpoint", &endpoint, NULL) != MCP_OK) {
            mcp_string_free(id_token);
            free(buf);
            return NULL;
        }
        snprintf(buf, cap, "{\"grant\":\"enterprise\",\"id_token\":%s,\"idp_token_endpoint\":%s", id_token,
                 endpoint);
        mcp_string_free(id_token);
        mcp_string_free(endpoint);
        add_context_key(buf, cap, context, "idp_client_id");
    } else if (strncmp(scenario, "auth/dpop", 9) == 0)
        /* DPoP (RFC 9449) is opt-in: a key generated for this client signs every proof. */
        snprintf(buf, cap, "{\"dpop\":true,\"redirect_uri\":\"http://localhost:3000/callback\"");
    else
        /* The redirect is read by on_authorization; the CIMD URL is used where advertised. */
        snprintf(buf, cap, "{\"redirect_uri\":\"http://localhost:3000/callback\","
                           "\"client_metadata_url\":\"https://conformance-test.local/client-metadata.json\"");
    static const char *const keys[] = {"client_id", "client_secret", "issuer", "private_key_pem",
                                       "signing_algorithm"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) add_context_key(buf, cap, context, keys[i]);
    char *probe = NULL;
    int has_issuer = context && mcp_json_pointer(context, "/issuer", &probe, NULL) == MCP_OK;
    mcp_string_free(probe);
    int has_secret = strstr(buf, "\"client_secret\"") || strstr(buf, "\"private_key_pem\"");
    if (has_secret && !has_issuer) {
        char *issuer = issuer_from_metadata(url);
        if (issuer) {
            size_t len = strlen(buf);
            snprintf(buf + len, cap - len, ",\"issuer\":%s", issuer);
            mcp_string_free(issuer);
        }
    }
    strcat(buf, "}");
    return buf;
}

/* ---- scenarios ---------------------------------------------------------------------- */

/* http-custom-headers: call each tool of context.toolCalls with exactly its arguments. */
static int run_context_tool_calls(const char *context) {
    if (!context) return fail("reading MCP_CONFORMANCE_CONTEXT", MCP_NULL_ARG, NULL);
    for (int i = 0;; i++) {
        char pointer[64];
        char *name = NULL, *args = NULL;
        snprintf(pointer, sizeof pointer, "/toolCalls/%d/name", i);
        if (mcp_json_string(context, pointer, &name, NULL) != MCP_OK) return i == 0;
        snprintf(pointer, sizeof pointer, "/toolCalls/%d/arguments", i);
        mcp_status st = mcp_json_pointer(context, pointer, &args, NULL);
        int failed = st != MCP_OK ? fail("reading tool arguments", st, NULL) : call_tool(name, args);
        mcp_string_free(name);
        mcp_string_free(args);
        if (failed) return 1;
    }
}

/* json-schema-2020-12-preservation: echo the focal tool's inputSchema back verbatim. */
static int run_schema_echo(void) {
    char *tools = NULL;
    if (list(MCP_LIST_TOOLS, &tools)) return 1;
    int failed = 1;
    for (int i = 0;; i++) {
        char pointer[64];
        char *name = NULL;
        snprintf(pointer, sizeof pointer, "/tools/%d/name", i);
        if (mcp_json_string(tools, pointer, &name, NULL) != MCP_OK) break;
        int focal = strcmp(name, "json_schema_2020_12_tool") == 0;
        mcp_string_free(name);
        if (!focal) continue;
        char *schema = NULL;
        snprintf(pointer, sizeof pointer, "/tools/%d/inputSchema", i);
        if (mcp_json_pointer(tools, pointer, &schema, NULL) == MCP_OK) {
            size_t n = strlen(schema) + 16;
            char *args = malloc(n);
            if (args) {
                snprintf(args, n, "{\"schema\":%s}", schema);
                failed = call_tool("json_schema_echo", args);
                free(args);
            }
            mcp_string_free(schema);
        }
        break;
    }
    mcp_string_free(tools);
    return failed;
}

static int read_resource(const char *uri) {
    char *result = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_read_resource(client, uri, NULL, NULL, NULL, &result, &err);
    if (st != MCP_OK) return fail(uri, st, err);
    mcp_string_free(result);
    return 0;
}

static int get_prompt(const char *name) {
    char *result = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_get_prompt(client, name, NULL, NULL, NULL, NULL, &result, &err);
    if (st != MCP_OK) return fail(name, st, err);
    mcp_string_free(result);
    return 0;
}

/* Reads one file of a skill, verified against the held entry (file_uri NULL: its SKILL.md).
 * Returns 0 when verified, 1 on any other failure, and 2 when the file failed verification:
 * a host then discards the skill and goes on, so that is not a failure of this client. */
static int read_skill_file(const char *entry, const char *file_uri) {
    char *content = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_read_skill_file(client, entry, file_uri, NULL, &content, &err);
    if (st == MCP_SKILL_VERIFICATION_FAILED) {
        fprintf(stderr, "skill rejected, not loaded: %s\n", mcp_error_message(err));
        mcp_error_free(err);
        return 2;
    }
    if (st != MCP_OK) return fail(file_uri ? file_uri : "SKILL.md", st, err);
    fprintf(stderr, "verified %s -> %s\n", file_uri ? file_uri : "SKILL.md", content);
    mcp_string_free(content);
    return 0;
}

/* sep-2640-client-*: list the skills (which fetches no file); unless the scenario is
 * no-prefetch, load pdf-processing (its SKILL.md, verified) and, only once it verified, read
 * the other files its held entry lists, each verified. */
static int run_skills(void) {
    char *list = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_client_list_skills(client, NULL, &list, &err);
    if (st != MCP_OK) return fail("skills/list", st, err);
    fprintf(stderr, "skills -> %s\n", list);
    int failed = 0;
    for (int i = 0; strcmp(scenario, "sep-2640-client-no-prefetch") != 0; i++) {
        char pointer[64];
        char *name = NULL, *entry = NULL;
        snprintf(pointer, sizeof pointer, "/skills/%d/frontmatter/name", i);
        if (mcp_json_string(list, pointer, &name, NULL) != MCP_OK) break;
        int wanted = strcmp(name, "pdf-processing") == 0;
        mcp_string_free(name);
        snprintf(pointer, sizeof pointer, "/skills/%d", i);
        if (!wanted || mcp_json_pointer(list, pointer, &entry, NULL) != MCP_OK) continue;
        char *skill_md = NULL;
        int loaded = mcp_json_string(entry, "/uri", &skill_md, NULL) == MCP_OK ? read_skill_file(entry, NULL) : 1;
        failed = loaded == 1;
        for (int j = 0; loaded == 0 && !failed; j++) {
            char *file = NULL;
            snprintf(pointer, sizeof pointer, "/resources/%d/uri", j);
            if (mcp_json_string(entry, pointer, &file, NULL) != MCP_OK) break;
            if (strcmp(file, skill_md) != 0) failed = read_skill_file(entry, file) == 1;
            mcp_string_free(file);
        }
        mcp_string_free(skill_md);
        mcp_string_free(entry);
        break;
    }
    mcp_string_free(list);
    return failed;
}

static int run_scenario(const char *context) {
    if (strcmp(scenario, "tools_call") == 0)
        return list(MCP_LIST_TOOLS, NULL) || call_tool("add_numbers", "{\"a\":5,\"b\":3}");
    if (strcmp(scenario, "sep-2322-client-request-state") == 0)
        return list(MCP_LIST_TOOLS, NULL) || call_tool("test_mrtr_echo_state", "{}") ||
               call_tool("test_mrtr_no_state", "{}") || call_tool("test_mrtr_no_result_type", "{}");
    if (strcmp(scenario, "http-standard-headers") == 0)
        return list(MCP_LIST_TOOLS, NULL) || call_tool("test_headers", "{}") ||
               call_tool("my-hyphenated-tool", "{}") || list(MCP_LIST_RESOURCES, NULL) ||
               read_resource("file:///path/to/file%20name.txt") ||
               read_resource("https://example.com/resource?id=123") || list(MCP_LIST_PROMPTS, NULL) ||
               get_prompt("test_prompt");
    if (strcmp(scenario, "http-custom-headers") == 0)
        return list(MCP_LIST_TOOLS, NULL) || run_context_tool_calls(context);
    if (strcmp(scenario, "http-invalid-tool-headers") == 0)
        return list(MCP_LIST_TOOLS, NULL) || call_tool("valid_tool", "{\"region\":\"us-west1\"}");
    if (strcmp(scenario, "json-schema-2020-12-preservation") == 0) return run_schema_echo();
    if (strcmp(scenario, "elicitation-sep1034-client-defaults") == 0)
        return list(MCP_LIST_TOOLS, NULL) || call_tool("test_client_elicitation_defaults", "{}");
    if (strcmp(scenario, "sse-retry") == 0)
        /* The tool's SSE response closes after a priming event; the answer comes on the GET
         * stream the client reopens after `retry:` with Last-Event-ID. */
        return list(MCP_LIST_TOOLS, NULL) || call_tool("test_reconnection", "{}");
    if (strncmp(scenario, "sep-2640-client-", 16) == 0) return run_skills();
    if (strncmp(scenario, "auth/", 5) == 0)
        /* Authorized on the way (connect); then the tools of the protected endpoint. */
        return list(MCP_LIST_TOOLS, NULL) || call_tool("test-tool", "{}");
    /* initialize, request-metadata, json-schema-ref-no-deref, and anything else: list tools. */
    return list(MCP_LIST_TOOLS, NULL);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s [args...] <server url>\n", argv[0]);
        return 2;
    }
    const char *url = argv[argc - 1];
    const char *version = getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
    const char *context = getenv("MCP_CONFORMANCE_CONTEXT");
    if (getenv("MCP_CONFORMANCE_SCENARIO")) scenario = getenv("MCP_CONFORMANCE_SCENARIO");
    if (!version || !*version) version = "2026-07-28";
    fprintf(stderr, "conformance client: scenario %s, version %s, url %s\n", scenario, version, url);

    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    /* The skills scenarios declare the extension, as a host that loads skills itself does. */
    int skills = strncmp(scenario, "sep-2640-", 9) == 0;
    mcp_status st = mcp_config_new(skills ? "{\"client_info\":{\"name\":\"mcp_client-conformance\",\"version\":\"0.1.0\"},"
                                            "\"request_timeout_ms\":20000,\"skills\":true}"
                                          : "{\"client_info\":{\"name\":\"mcp_client-conformance\",\"version\":\"0.1.0\"},"
                                            "\"request_timeout_ms\":20000}",
                                   &cfg, &err);
    if (st == MCP_OK) st = mcp_config_set_url(cfg, url, &err);
    if (st == MCP_OK) st = mcp_config_set_protocol_version(cfg, version, &err);
    if (st == MCP_OK && strncmp(scenario, "auth/", 5) == 0) {
        char *oauth = oauth_config(context, url);
        st = oauth ? mcp_config_set_oauth(cfg, oauth, &err) : MCP_INTERNAL;
        free(oauth);
    }
    if (st == MCP_OK) st = mcp_client_new(cfg, &client, &err);
    mcp_config_free(cfg);
    if (st != MCP_OK) return fail("creating the client", st, err);
    if ((st = mcp_client_on_elicitation(client, on_elicitation, NULL, NULL, &err)) != MCP_OK ||
        (st = mcp_client_on_sampling(client, on_sampling, NULL, NULL, &err)) != MCP_OK ||
        (st = mcp_client_on_roots(client, on_roots, NULL, NULL, &err)) != MCP_OK ||
        (st = mcp_client_on_authorization(client, on_authorization, NULL, NULL, &err)) != MCP_OK)
        return fail("registering handlers", st, err);

    char *info = NULL;
    st = mcp_client_connect(client, NULL, &info, &err);
    if (st != MCP_OK && err && mcp_error_www_authenticate(err))
        fprintf(stderr, "WWW-Authenticate: %s\n", mcp_error_www_authenticate(err));
    int failed = st != MCP_OK ? fail("connect", st, err) : 0;
    if (!failed) {
        fprintf(stderr, "connected: %s\n", info);
        mcp_string_free(info);
        failed = run_scenario(context);
    }
    mcp_client_free(client);
    fprintf(stderr, "conformance client: %s\n", failed ? "FAILED" : "done");
    return failed;
}
