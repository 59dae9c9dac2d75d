/* The hub runner (libmcp_client's mcp_hub_* through include/mcp_client.h).
 *
 *   hub --members N [--iterations I] [--list-duration S] [--max-calls N] -- SERVER [ARGS...]
 *
 * I times: a hub with N members, each starting `SERVER ARGS` (its own process), on the shared
 * runtime (the hub's default); mcp_hub_start is timed (every member connected concurrently:
 * spawn, discover and, on a server whose lists change, the listen stream's acknowledgement),
 * then every member must be `connected`, then the process's threads are counted
 * (/proc/self/task), then mcp_hub_free is timed (every member closed, every server reaped).
 * The process's CPU time during each start is measured too (the library's own share of the
 * machine while the servers start). mcp_hub_new and the adds are untimed: the first hub of the process starts the shared runtime.
 * With --list-duration, the first hub then times the merged tools/list (mcp_hub_list) for S
 * seconds after one untimed call that fetches every member's list: each call until its JSON
 * text is in hand and freed. One JSON line on stdout.
 */
#include "common.h"
#include "mcp_client.h"

static void check(mcp_status st, mcp_error *err, const char *what) {
    if (st != MCP_OK) {
        fprintf(stderr, "bench: %s: %s: %s\n", what, mcp_status_str(st), err ? mcp_error_message(err) : "");
        exit(3);
    }
}

static size_t count(const char *text, const char *needle) {
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(text, needle); p; p = strstr(p + len, needle)) n++;
    return n;
}

/* One merged tools/list into *json (free it with mcp_string_free). */
static void merged_tools(mcp_hub *hub, char **json) {
    mcp_error *err = NULL;
    check(mcp_hub_list(hub, MCP_LIST_TOOLS, json, &err), err, "mcp_hub_list");
}

/* The merged tools/list, timed call by call for `secs` (or max_calls); the first call (untimed)
 * fetches every member's list. Prints its fields into the result line. */
static void list_series(mcp_hub *hub, double secs, long max_calls) {
    uint64_t t0 = now_ns();
    char *first = NULL;
    merged_tools(hub, &first);
    double fill_us = (double)(now_ns() - t0) / 1e3;
    size_t tools = count(first, "\"mcp-client/server\""), bytes = strlen(first);
    mcp_string_free(first);
    samples s;
    samples_init(&s, (size_t)max_calls);
    uint64_t start = now_ns(), deadline = start + (uint64_t)(secs * 1e9), t = start;
    size_t calls = 0;
    while (calls < (size_t)max_calls && t < deadline) {
        char *json = NULL;
        merged_tools(hub, &json);
        mcp_string_free(json);
        uint64_t t2 = now_ns();
        samples_add(&s, t2 - t);
        t = t2;
        calls++;
    }
    printf(",\"tools\":%zu,\"list_bytes\":%zu,\"list_fill_us\":%.1f,", tools, bytes, fill_us);
    print_series("list_", calls, (double)(t - start) / 1e9, &s);
    free(s.v);
}

int main(int argc, char **argv) {
    long members = 1, iterations = 5, max_calls = 200000;
    double list_secs = 0;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "--members") && i + 1 < argc) members = atol(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atol(argv[++i]);
        else if (!strcmp(argv[i], "--list-duration") && i + 1 < argc) list_secs = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-calls") && i + 1 < argc) max_calls = atol(argv[++i]);
        else die("usage: hub --members N [--iterations I] [--list-duration S] [--max-calls N] -- SERVER [ARGS...]");
    }
    if (i + 1 >= argc) die("no server command");
    if (members < 1 || members > 999 || iterations < 1 || max_calls < 1) die("--members 1..999, --iterations >= 1");
    char *config = stdio_config_json(argv + i + 1);
    int threads_before = task_count(), threads_hub = 0;
    samples start_ns, start_cpu, free_ns; /* start_cpu: this process's CPU (all threads) during the start, ns */
    samples_init(&start_ns, (size_t)iterations), samples_init(&start_cpu, (size_t)iterations);
    samples_init(&free_ns, (size_t)iterations);
    printf("{\"runner\":\"hub\",\"members\":%ld", members);
    for (long k = 0; k < iterations; k++) {
        mcp_hub *hub = NULL;
        mcp_error *err = NULL;
        check(mcp_hub_new(NULL, &hub, &err), err, "mcp_hub_new");
        for (long m = 0; m < members; m++) {
            char name[16];
            snprintf(name, sizeof name, "m%03ld", m);
            check(mcp_hub_add_member(hub, name, config, &err), err, "mcp_hub_add_member");
        }
        double cpu0 = cpu_us();
        uint64_t t0 = now_ns();
        check(mcp_hub_start(hub, &err), err, "mcp_hub_start");
        samples_add(&start_ns, now_ns() - t0);
        samples_add(&start_cpu, (uint64_t)((cpu_us() - cpu0) * 1e3));
        char *states = NULL;
        check(mcp_hub_members_json(hub, &states, &err), err, "mcp_hub_members_json");
        if (count(states, "\"state\":\"connected\"") != (size_t)members) {
            fprintf(stderr, "bench: not every member connected: %s\n", states);
            exit(3);
        }
        mcp_string_free(states);
        int n = task_count();
        if (n > threads_hub) threads_hub = n;
        if (k == 0 && list_secs > 0) list_series(hub, list_secs, max_calls);
        t0 = now_ns();
        mcp_hub_free(hub);
        samples_add(&free_ns, now_ns() - t0);
    }
    printf(",\"iterations\":%ld,\"threads_before\":%d,\"threads_hub\":%d,\"connect_p50_us\":%.1f,"
           "\"connect_min_us\":%.1f,\"connect_max_us\":%.1f,\"connect_cpu_p50_us\":%.1f,\"close_p50_us\":%.1f}\n",
           iterations, threads_before, threads_hub, samples_pct_us(&start_ns, 50), samples_pct_us(&start_ns, 0),
           samples_pct_us(&start_ns, 100), samples_pct_us(&start_cpu, 50), samples_pct_us(&free_ns, 50));
    free(config);
    return 0;
}
