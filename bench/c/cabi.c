/* The C ABI runner (libmcp_client through include/mcp_client.h).
 *
 *   cabi TEST [--duration S] [--warmup N] [--max-calls N] [--inflight N] [--iterations N]
 *        [--calls N] [--gap-us N] [--payload N] [--spans] [--block N] (--url URL | -- SERVER [ARGS...])
 *
 * TEST: seq (sequential tools/call echo; with --gap-us, the host sleeps that long before each
 * call, untimed: calls after an idle gap; with --payload N the echo's text is N bytes each way,
 * checked once before the loop), conc (--inflight threads on one client), mrtr (a
 * call needing one elicitation round vs a plain call), connect (new + connect, then free until
 * the child is reaped), mem (RSS idle, then growth over --calls calls), cache (tools/list
 * answered from the response cache vs sent with MCP_CACHE_BYPASS; the server needs a TTL,
 * e.g. --cache-ttl-ms 600000, and the driver counts what reached it in its --record file),
 * started (--inflight
 * started calls kept in flight from ONE thread: host-loop mode, poll() on the client's descriptor
 * and mcp_client_dispatch; reports the process's thread count at the end), many (--clients
 * clients, each with its own server, on --runtime shared|isolated: threads, RSS per idle client,
 * connect time per client, then calls/s from --inflight threads on one client vs spread over
 * all clients). --runtime shared puts every other test's client on the shared runtime too.
 * spans: sequential calls in alternating blocks of --block calls, without a span listener and
 * with a no-op one (mcp_client_on_span; it only counts), the process's CPU per call for each;
 * --spans gives seq's client the no-op listener. Built with -DCABI_NO_SPANS (against a library
 * that predates spans) neither exists.
 */
#include "common.h"
#include "mcp_client.h"
#include <poll.h>
#include <pthread.h>
#include <malloc.h>
#include <unistd.h>
#ifndef CABI_NO_SPANS
#include <stdatomic.h>
#endif

static const char *ECHO_ARGS = "{\"text\":\"hi\"}";
/* --payload N: the echo carries an N-byte text (see payload_args); 0: "hi". */
static long payload = 0;

static double duration = 2.0;
static long gap_us = 0; /* seq: idle time before each call */
static long warmup = 500, max_calls = 200000, inflight = 1, iterations = 50, mem_calls = 100000;
static char *config_json;
static long n_clients = 200;
static int32_t runtime = MCP_RUNTIME_ISOLATED;
static int with_spans = 0; /* seq: set the no-op span listener */
static long span_block = 1000;

static void check(mcp_status st, mcp_error *err, const char *what) {
    if (st != MCP_OK) {
        fprintf(stderr, "bench: %s: %s: %s\n", what, mcp_status_str(st), err ? mcp_error_message(err) : "");
        exit(3);
    }
}

static mcp_client *open_client(int connect) {
    mcp_config *cfg = NULL;
    mcp_client *c = NULL;
    mcp_error *err = NULL;
    check(mcp_config_new(config_json, &cfg, &err), err, "mcp_config_new");
    if (runtime == MCP_RUNTIME_SHARED) check(mcp_config_set_runtime(cfg, runtime, &err), err, "mcp_config_set_runtime");
    check(mcp_client_new(cfg, &c, &err), err, "mcp_client_new");
    mcp_config_free(cfg);
    if (connect) check(mcp_client_connect(c, NULL, NULL, &err), err, "mcp_client_connect");
    return c;
}

#ifndef CABI_NO_SPANS
/* The no-op span consumer: counts the records so the driver can check that every call made one. */
static atomic_long spans_seen;

static void on_span(void *ud, const char *span_json, size_t len) {
    (void)ud, (void)span_json, (void)len;
    atomic_fetch_add_explicit(&spans_seen, 1, memory_order_relaxed);
}

static void set_span_listener(mcp_client *c, int on) {
    mcp_error *err = NULL;
    check(mcp_client_on_span(c, on ? on_span : NULL, NULL, NULL, &err), err, "mcp_client_on_span");
}
#endif

static void call(mcp_client *c, const char *tool) {
    char *res = NULL;
    mcp_error *err = NULL;
    check(mcp_client_call_tool(c, tool, ECHO_ARGS, NULL, NULL, NULL, &res, &err), err, "call_tool");
    mcp_string_free(res);
}

static void on_elicit(void *ud, const char *method, const char *params, size_t len, mcp_responder *r) {
    (void)ud, (void)method, (void)params, (void)len;
    if (mcp_responder_reply_json(r, "{\"action\":\"accept\",\"content\":{\"name\":\"bench\"}}", NULL) != MCP_OK)
        fprintf(stderr, "bench: the elicitation reply failed\n");
}

/* Calls `tool` for `secs` (or max_calls), recording each latency. */
static size_t timed_loop(mcp_client *c, const char *tool, double secs, samples *s, double *elapsed) {
    uint64_t start = now_ns(), deadline = start + (uint64_t)(secs * 1e9), t = start;
    size_t calls = 0;
    while (calls < (size_t)max_calls && t < deadline) {
        if (gap_us > 0) {
            usleep((useconds_t)gap_us);
            t = now_ns();
        }
        call(c, tool);
        uint64_t t2 = now_ns();
        samples_add(s, t2 - t);
        t = t2;
        calls++;
    }
    *elapsed = (double)(t - start) / 1e9;
    return calls;
}

static int test_seq(void) {
    mcp_client *c = open_client(1);
    if (payload > 0) {
        /* Once, untimed: the echo really carries the payload back. */
        char *res = NULL;
        mcp_error *err = NULL;
        check(mcp_client_call_tool(c, "echo", ECHO_ARGS, NULL, NULL, NULL, &res, &err), err, "call_tool");
        if (strlen(res) < (size_t)payload) die("the echo's result is shorter than its payload");
        mcp_string_free(res);
    }
#ifndef CABI_NO_SPANS
    if (with_spans) set_span_listener(c, 1);
#endif
    for (long k = 0; k < warmup; k++) call(c, "echo");
    samples s;
    samples_init(&s, (size_t)max_calls);
    double secs, cpu0 = cpu_us();
    size_t calls = timed_loop(c, "echo", duration, &s, &secs);
    double cpu = cpu_us() - cpu0;
    long rss = rss_kb();
    mcp_client_free(c);
    printf("{\"runner\":\"cabi\",\"test\":\"seq\",");
    print_series("", calls, secs, &s);
#ifndef CABI_NO_SPANS
    printf(",\"spans\":%ld", with_spans ? atomic_load(&spans_seen) : -1L);
#endif
    printf(",\"cpu_us_per_call\":%.2f,\"rss_kb\":%ld}\n", calls ? cpu / (double)calls : 0.0, rss);
    return 0;
}

#ifndef CABI_NO_SPANS
/* Blocks of span_block calls, without and with the no-op listener in turn (an even number of
 * blocks, so both see the same stretch of machine state), for 2 x duration: the process's CPU
 * per call and the latencies of each. */
static int test_spans(void) {
    mcp_client *c = open_client(1);
    for (long k = 0; k < warmup; k++) {
        if (k == 0 || k == warmup / 2) set_span_listener(c, k != 0);
        call(c, "echo");
    }
    samples s[2];
    double cpu[2] = {0, 0}, secs[2] = {0, 0};
    size_t calls[2] = {0, 0};
    long blocks = 0;
    samples_init(&s[0], (size_t)max_calls);
    samples_init(&s[1], (size_t)max_calls);
    uint64_t deadline = now_ns() + (uint64_t)(2 * duration * 1e9);
    for (int on = 0;; on ^= 1) {
        if (!on && now_ns() >= deadline) break;
        set_span_listener(c, on);
        double cpu0 = cpu_us();
        uint64_t t = now_ns(), start = t;
        for (long k = 0; k < span_block; k++) {
            call(c, "echo");
            uint64_t t2 = now_ns();
            samples_add(&s[on], t2 - t);
            t = t2;
        }
        cpu[on] += cpu_us() - cpu0;
        secs[on] += (double)(t - start) / 1e9;
        calls[on] += (size_t)span_block;
        blocks++;
    }
    set_span_listener(c, 0);
    mcp_client_free(c); /* after it, every record the calls made has been delivered */
    long seen = atomic_load(&spans_seen);
    printf("{\"runner\":\"cabi\",\"test\":\"spans\",\"block\":%ld,\"blocks\":%ld,", span_block, blocks);
    print_series("off_", calls[0], secs[0], &s[0]);
    printf(",");
    print_series("on_", calls[1], secs[1], &s[1]);
    printf(",\"spans\":%ld,\"warmup_spans\":%ld,\"off_cpu_us_per_call\":%.3f,\"on_cpu_us_per_call\":%.3f}\n",
           seen, warmup - warmup / 2, calls[0] ? cpu[0] / (double)calls[0] : 0.0,
           calls[1] ? cpu[1] / (double)calls[1] : 0.0);
    return 0;
}
#endif

/* tools/list for `secs` (or max_calls) with one cache mode, recording each latency. */
static size_t list_loop(mcp_client *c, uint32_t mode, double secs, samples *s, double *elapsed) {
    mcp_call_opts opts;
    if (mcp_call_opts_init(&opts, MCP_CALL_OPTS_VERSION) != MCP_OK) die("mcp_call_opts_init");
    opts.cache_mode = mode;
    uint64_t start = now_ns(), deadline = start + (uint64_t)(secs * 1e9), t = start;
    size_t calls = 0;
    while (calls < (size_t)max_calls && t < deadline) {
        char *res = NULL;
        mcp_error *err = NULL;
        check(mcp_client_list(c, MCP_LIST_TOOLS, NULL, &opts, &res, &err), err, "list tools");
        mcp_string_free(res);
        uint64_t t2 = now_ns();
        samples_add(s, t2 - t);
        t = t2;
        calls++;
    }
    *elapsed = (double)(t - start) / 1e9;
    return calls;
}

static int test_cache(void) {
    mcp_client *c = open_client(1);
    samples cached, sent;
    samples_init(&cached, (size_t)max_calls);
    samples_init(&sent, (size_t)max_calls);
    double cached_secs, sent_secs;
    /* The bypass series first: the cache's one fill is the last request the server sees. */
    size_t sent_calls = list_loop(c, MCP_CACHE_BYPASS, duration, &sent, &sent_secs);
    size_t cached_calls = list_loop(c, MCP_CACHE_USE, duration, &cached, &cached_secs);
    mcp_client_free(c);
    printf("{\"runner\":\"cabi\",\"test\":\"cache\",");
    print_series("cached_", cached_calls, cached_secs, &cached);
    printf(",");
    print_series("sent_", sent_calls, sent_secs, &sent);
    printf("}\n");
    return 0;
}

typedef struct {
    mcp_client *c;
    pthread_barrier_t *go;
    uint64_t deadline;
    size_t calls;
    samples s;
} worker;

static void *work(void *arg) {
    worker *w = (worker *)arg;
    pthread_barrier_wait(w->go);
    uint64_t t = now_ns();
    while (t < w->deadline) {
        call(w->c, "echo");
        uint64_t t2 = now_ns();
        samples_add(&w->s, t2 - t);
        t = t2;
        w->calls++;
    }
    return NULL;
}

static int test_conc(void) {
    mcp_client *c = open_client(1);
    for (long k = 0; k < warmup; k++) call(c, "echo");
    int n = (int)inflight;
    worker *ws = calloc((size_t)n, sizeof(worker));
    pthread_t *th = calloc((size_t)n, sizeof(pthread_t));
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)n + 1);
    for (int k = 0; k < n; k++) {
        ws[k].c = c;
        ws[k].go = &go;
        samples_init(&ws[k].s, (size_t)(max_calls / n + 1));
        pthread_create(&th[k], NULL, work, &ws[k]);
    }
    uint64_t start = now_ns();
    for (int k = 0; k < n; k++) ws[k].deadline = start + (uint64_t)(duration * 1e9);
    pthread_barrier_wait(&go);
    size_t calls = 0;
    for (int k = 0; k < n; k++) pthread_join(th[k], NULL);
    double secs = (double)(now_ns() - start) / 1e9;
    samples all;
    samples_init(&all, (size_t)max_calls + (size_t)n);
    for (int k = 0; k < n; k++) {
        calls += ws[k].calls;
        for (size_t j = 0; j < ws[k].s.n; j++) samples_add(&all, ws[k].s.v[j]);
    }
    mcp_client_free(c);
    printf("{\"runner\":\"cabi\",\"test\":\"conc\",\"inflight\":%d,", n);
    print_series("", calls, secs, &all);
    printf("}\n");
    return 0;
}

/* ---- started calls from one thread ---- */

typedef struct {
    mcp_client *c;
    uint64_t deadline;
    size_t calls, outstanding;
    samples s;
} started_run;

typedef struct {
    started_run *run;
    uint64_t t0;
} started_call;

static void start_one(started_run *r, started_call *sc);

static void on_started_done(void *ud, mcp_status st, const char *result, size_t len, const mcp_error *err) {
    (void)result, (void)len;
    started_call *sc = (started_call *)ud;
    started_run *r = sc->run;
    if (st != MCP_OK) check(st, (mcp_error *)err, "started call");
    uint64_t t = now_ns();
    samples_add(&r->s, t - sc->t0);
    r->calls++;
    r->outstanding--;
    if (t < r->deadline && r->calls + r->outstanding < (size_t)max_calls) start_one(r, sc); /* reuses sc */
    else free(sc);
}

static void start_one(started_run *r, started_call *sc) {
    mcp_error *err = NULL;
    sc->run = r;
    sc->t0 = now_ns();
    check(mcp_client_call_tool_start(r->c, "echo", ECHO_ARGS, NULL, NULL, NULL, on_started_done, sc, NULL, &err),
          err, "call_tool_start");
    r->outstanding++;
}

static int test_started(void) {
    mcp_client *c = open_client(1);
    int fd = -1;
    mcp_error *err = NULL;
    check(mcp_client_use_host_loop(c, &fd, &err), err, "use_host_loop");
    for (long k = 0; k < warmup; k++) call(c, "echo");
    started_run r = {0};
    r.c = c;
    samples_init(&r.s, (size_t)max_calls + (size_t)inflight);
    int threads_before = task_count(), threads_max = threads_before;
    double cpu0 = cpu_us();
    uint64_t start = now_ns();
    r.deadline = start + (uint64_t)(duration * 1e9);
    for (long k = 0; k < inflight; k++) start_one(&r, (started_call *)malloc(sizeof(started_call)));
    {
        int n = task_count(); /* every call started, none dispatched yet */
        if (n > threads_max) threads_max = n;
    }
    while (r.outstanding > 0) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 1000);
        check(mcp_client_dispatch(c, 0, NULL, &err), err, "dispatch");
        if ((r.calls & 1023) == 0) {
            int n = task_count();
            if (n > threads_max) threads_max = n;
        }
    }
    double secs = (double)(now_ns() - start) / 1e9, cpu = cpu_us() - cpu0;
    mcp_client_free(c);
    printf("{\"runner\":\"cabi\",\"test\":\"started\",\"inflight\":%ld,", inflight);
    print_series("", r.calls, secs, &r.s);
    printf(",\"cpu_us_per_call\":%.2f,\"threads_before\":%d,\"threads_max\":%d}\n",
           r.calls ? cpu / (double)r.calls : 0.0, threads_before, threads_max);
    return 0;
}

static int test_mrtr(void) {
    mcp_client *c = open_client(0);
    mcp_error *err = NULL;
    check(mcp_client_on_elicitation(c, on_elicit, NULL, NULL, &err), err, "on_elicitation");
    check(mcp_client_connect(c, NULL, NULL, &err), err, "connect");
    for (long k = 0; k < warmup; k++) call(c, "echo"), call(c, "elicit_once");
    samples plain, mrtr;
    samples_init(&plain, (size_t)max_calls);
    samples_init(&mrtr, (size_t)max_calls);
    double ps, ms;
    size_t pc = timed_loop(c, "echo", duration / 2, &plain, &ps);
    size_t mc = timed_loop(c, "elicit_once", duration / 2, &mrtr, &ms);
    mcp_client_free(c);
    printf("{\"runner\":\"cabi\",\"test\":\"mrtr\",");
    print_series("plain_", pc, ps, &plain);
    printf(",");
    print_series("mrtr_", mc, ms, &mrtr);
    printf("}\n");
    return 0;
}

static int test_connect(void) {
    samples conn, first, close_;
    samples_init(&conn, (size_t)iterations);
    samples_init(&first, (size_t)iterations);
    samples_init(&close_, (size_t)iterations);
    uint64_t deadline = now_ns() + (uint64_t)(duration * 1e9);
    long k = 0;
    for (; k < iterations && now_ns() < deadline; k++) {
        uint64_t t0 = now_ns();
        mcp_client *c = open_client(1);
        uint64_t t1 = now_ns();
        call(c, "echo"); /* the first call: what a host waits for from spawn to its first result */
        uint64_t tf = now_ns();
        mcp_client_free(c); /* closes: stdin closed, the child exits and is reaped */
        uint64_t t2 = now_ns();
        samples_add(&conn, t1 - t0);
        samples_add(&first, tf - t0);
        samples_add(&close_, t2 - tf);
    }
    printf("{\"runner\":\"cabi\",\"test\":\"connect\",\"iterations\":%ld,\"connect_p50_us\":%.1f,"
           "\"connect_p99_us\":%.1f,",
           k, samples_pct_us(&conn, 50), samples_pct_us(&conn, 99));
    printf("\"first_p50_us\":%.1f,\"first_p99_us\":%.1f,", samples_pct_us(&first, 50), samples_pct_us(&first, 99));
    printf("\"close_p50_us\":%.1f,\"close_p99_us\":%.1f}\n", samples_pct_us(&close_, 50),
           samples_pct_us(&close_, 99));
    return 0;
}

static int test_mem(void) {
    long before = rss_kb();
    mcp_client *c = open_client(1);
    long idle = rss_kb();
    for (long k = 0; k < warmup; k++) call(c, "echo");
    long warm = rss_kb();
    uint64_t start = now_ns(), deadline = start + (uint64_t)(duration * 1e9);
    long k = 0;
    for (; k < mem_calls && now_ns() < deadline; k++) call(c, "echo");
    double secs = (double)(now_ns() - start) / 1e9;
    long after = rss_kb();
    mcp_client_free(c);
    printf("{\"runner\":\"cabi\",\"test\":\"mem\",\"rss_before_kb\":%ld,\"rss_idle_kb\":%ld,"
           "\"client_idle_kb\":%ld,\"rss_warm_kb\":%ld,\"rss_after_kb\":%ld,\"calls\":%ld,"
           "\"seconds\":%.3f,\"growth_kb\":%ld}\n",
           before, idle, idle - before, warm, after, k, secs, after - warm);
    return 0;
}

/* ---- many: clients spread over servers ---- */

typedef struct {
    mcp_client **clients;
    long first, step, count; /* this thread calls clients first, first+step, .. round robin */
    pthread_barrier_t *go;
    double secs;
    size_t calls;
} spread_arg;

static void *spread_thread(void *p) {
    spread_arg *a = (spread_arg *)p;
    pthread_barrier_wait(a->go);
    uint64_t start = now_ns(), deadline = start + (uint64_t)(duration * 1e9), t = start;
    long k = a->first;
    while (t < deadline) {
        call(a->clients[k], "echo");
        k += a->step;
        if (k >= a->count) k = a->first;
        a->calls++;
        if ((a->calls & 15) == 0) t = now_ns();
    }
    a->secs = (double)(now_ns() - start) / 1e9;
    return NULL;
}

/* Client CPU (this process, every thread) per call of the last spread(), in µs. */
static double spread_cpu_us;

/* Aggregate calls/s of `threads` host threads over `count` clients (thread i: i, i+threads, ..). */
static double spread(mcp_client **clients, long count, long threads) {
    pthread_t th[64];
    spread_arg args[64];
    pthread_barrier_t go;
    if (threads > 64) threads = 64;
    pthread_barrier_init(&go, NULL, (unsigned)threads);
    double cpu0 = cpu_us();
    for (long i = 0; i < threads; i++) {
        args[i] = (spread_arg){clients, count > 1 ? i % count : 0, count > 1 ? threads : 1, count, &go, 0, 0};
        pthread_create(&th[i], NULL, spread_thread, &args[i]);
    }
    double total = 0;
    size_t calls = 0;
    for (long i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        total += (double)args[i].calls / args[i].secs;
        calls += args[i].calls;
    }
    spread_cpu_us = calls ? (cpu_us() - cpu0) / (double)calls : 0.0;
    pthread_barrier_destroy(&go);
    return total;
}

static int test_many(void) {
    mcp_client **clients = calloc((size_t)n_clients, sizeof *clients);
    samples connect;
    samples_init(&connect, (size_t)n_clients);
    int threads0 = task_count(), threads1 = 0;
    long rss1 = 0;
    for (long i = 0; i < n_clients; i++) {
        mcp_config *cfg = NULL;
        mcp_error *err = NULL;
        uint64_t t = now_ns();
        check(mcp_config_new(config_json, &cfg, &err), err, "mcp_config_new");
        check(mcp_config_set_runtime(cfg, runtime, &err), err, "mcp_config_set_runtime");
        check(mcp_client_new(cfg, &clients[i], &err), err, "mcp_client_new");
        mcp_config_free(cfg);
        check(mcp_client_connect(clients[i], NULL, NULL, &err), err, "mcp_client_connect");
        samples_add(&connect, now_ns() - t);
        call(clients[i], "echo"); /* each client has made a call: what an idle one holds */
        if (i == 0) threads1 = task_count(), malloc_trim(0), rss1 = rss_kb();
    }
    int threads_n = task_count();
    long rss_n = rss_kb();
    /* The same after giving free heap pages back: what the clients hold, not connect's garbage. */
    malloc_trim(0);
    long rss_n_trim = rss_kb();
    double one = spread(clients, 1, inflight);
    double one_cpu = spread_cpu_us;
    /* Host thread i calls clients i, i+N, .. of a shuffled list: in connection order, its share
       would line up with the shared runtime's round-robin engines (N threads and N engines: a
       thread of its own per engine; 2 engines: always two threads per engine), which no host
       arranges. A fixed seed keeps the order the same in every round. */
    mcp_client **order = malloc((size_t)n_clients * sizeof *order);
    memcpy(order, clients, (size_t)n_clients * sizeof *order);
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (long i = n_clients - 1; i > 0; i--) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        long j = (long)(seed % (uint64_t)(i + 1));
        mcp_client *tmp = order[i];
        order[i] = order[j], order[j] = tmp;
    }
    double all = spread(order, n_clients, inflight);
    double all_cpu = spread_cpu_us;
    free(order);
    uint64_t t = now_ns();
    for (long i = 0; i < n_clients; i++) mcp_client_free(clients[i]);
    double free_ms = (double)(now_ns() - t) / 1e6;
    printf("{\"runner\":\"cabi\",\"test\":\"many\",\"runtime\":\"%s\",\"clients\":%ld,\"host_threads\":%ld,"
           "\"threads_before\":%d,\"threads_one\":%d,\"threads_all\":%d,\"rss_one_kb\":%ld,\"rss_all_kb\":%ld,"
           "\"rss_per_client_kb\":%.1f,\"connect_p50_ms\":%.3f,\"connect_p99_ms\":%.3f,\"connect_mean_ms\":%.3f,"
           "\"rss_per_client_trimmed_kb\":%.1f,\"one_client_per_sec\":%.1f,\"all_clients_per_sec\":%.1f,"
           "\"free_all_ms\":%.1f,\"one_cpu_us_per_call\":%.2f,\"all_cpu_us_per_call\":%.2f}\n",
           runtime == MCP_RUNTIME_SHARED ? "shared" : "isolated", n_clients, inflight, threads0, threads1,
           threads_n, rss1, rss_n, n_clients > 1 ? (double)(rss_n - rss1) / (double)(n_clients - 1) : 0.0,
           samples_pct_us(&connect, 50) / 1e3, samples_pct_us(&connect, 99) / 1e3, samples_mean_us(&connect) / 1e3,
           n_clients > 1 ? (double)(rss_n_trim - rss1) / (double)(n_clients - 1) : 0.0, one, all, free_ms,
           one_cpu, all_cpu);
    free(clients);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: cabi seq|conc|mrtr|connect|mem [options] (--url URL | -- SERVER ARGS...)");
    const char *test = argv[1];
    const char *url = NULL;
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "--duration") && i + 1 < argc) duration = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-calls") && i + 1 < argc) max_calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--inflight") && i + 1 < argc) inflight = atol(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atol(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) mem_calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--gap-us") && i + 1 < argc) gap_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--url") && i + 1 < argc) url = argv[++i];
        else if (!strcmp(argv[i], "--payload") && i + 1 < argc) payload = atol(argv[++i]);
        else if (!strcmp(argv[i], "--clients") && i + 1 < argc) n_clients = atol(argv[++i]);
        else if (!strcmp(argv[i], "--spans")) with_spans = 1;
        else if (!strcmp(argv[i], "--block") && i + 1 < argc) span_block = atol(argv[++i]);
        else if (!strcmp(argv[i], "--runtime") && i + 1 < argc)
            runtime = !strcmp(argv[++i], "shared") ? MCP_RUNTIME_SHARED : MCP_RUNTIME_ISOLATED;
        else die("unknown option");
    }
    if (payload > 0 && !(ECHO_ARGS = payload_args(payload))) die("out of memory");
    if (url) {
        size_t len = 0, cap = 256;
        config_json = malloc(cap);
        config_json[0] = 0;
        append(&config_json, &len, &cap, "{\"url\":\"");
        append_json_str(&config_json, &len, &cap, url);
        append(&config_json, &len, &cap, "\"}");
    } else {
        if (i + 1 >= argc) die("no server command");
        config_json = stdio_config_json(argv + i + 1);
    }
    if (!strcmp(test, "seq")) return test_seq();
    if (!strcmp(test, "conc")) return test_conc();
    if (!strcmp(test, "mrtr")) return test_mrtr();
    if (!strcmp(test, "connect")) return test_connect();
    if (!strcmp(test, "mem")) return test_mem();
    if (!strcmp(test, "cache")) return test_cache();
    if (!strcmp(test, "started")) return test_started();
    if (!strcmp(test, "many")) return test_many();
#ifndef CABI_NO_SPANS
    if (!strcmp(test, "spans")) return test_spans();
#else
    if (with_spans) die("--spans: this runner's library predates spans");
#endif
    die("unknown test");
    return 2;
}
