/* A minimal stdio MCP server for the bench (`run.py --server minimal`): it answers
 * `server/discover` and `tools/call` with canned modern-era replies carrying the request's id,
 * ignores notifications, and answers any other request with an empty result. No JSON parsing, no
 * threads: the floor of what a server costs, to tell server cost from client cost when the
 * fixture server (`mcp-fixture-server --fast`) and a second harness's own server disagree.
 *
 *   mini_server        (reads requests on stdin, one per line; exits at end of input)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char DISCOVER[] =
    "\"result\":{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"],"
    "\"capabilities\":{\"tools\":{}},\"ttlMs\":0,\"cacheScope\":\"private\","
    "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":"
    "{\"name\":\"mini-server\",\"version\":\"0.1.0\"}}}}\n";
static const char ECHO[] = "\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n";
static const char EMPTY[] = "\"result\":{}}\n";

static void write_all(const char *p, size_t n) {
    while (n) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) exit(0); /* the client went away */
        p += w;
        n -= (size_t)w;
    }
}

int main(void) {
    char *line = NULL, out[4096];
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        /* The first "id": of a request line is its JSON-RPC id (params carry no "id" key here). */
        const char *id = strstr(line, "\"id\":");
        if (!id || !strstr(line, "\"method\"")) continue; /* a notification, or a response */
        id += 5;
        size_t n = strcspn(id, ",}");
        const char *body = strstr(line, "\"method\":\"server/discover\"") ? DISCOVER
                           : strstr(line, "\"method\":\"tools/call\"")     ? ECHO
                                                                           : EMPTY;
        int k = snprintf(out, sizeof out, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,%s", (int)n, id, body);
        if (k > 0 && (size_t)k < sizeof out) write_all(out, (size_t)k);
    }
    free(line);
    return 0;
}
