/* The raw stdio baseline: spawn the server with pipes, write a pre-encoded tools/call line and
 * read the reply line, with no JSON work at all: the practical limit of pipe plus server.
 *
 *   raw_stdio [--duration S] [--warmup N] [--max-calls N] [--inflight N] [--connect N [--parallel M]]
 *             [--servers N] [--gap-us N] [--payload N]
 *             -- SERVER [ARGS...]
 *
 * With --inflight N (> 1) it keeps N requests written ahead of the replies (a window: each reply
 * read lets one more request go): the in-flight baseline for one connection (test "conc").
 * With --servers N (test "many") it starts N servers and measures --inflight calls in
 * flight on one server (a window) vs --inflight threads each calling its share of all N servers
 * in turn: what spreading calls over many server processes costs the machine, with no client
 * library in the way (the floor of `cabi many`'s "all ÷ one"). With --connect N --parallel M it
 * connects M servers at once, N times (the floor of `hub`'s connect). With --payload N the echo's
 * text is N bytes (each way); the reply is still only read up to its newline.
 */
#include "common.h"
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                                           \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"0.1.0\"}}"
static const char DISCOVER[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}\n";
static const char CALL_HI[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                              "\"arguments\":{\"text\":\"hi\"}," META "}}\n";
/* The call line: CALL_HI, or with --payload N the same call with an N-byte text (payload_args). */
static const char *CALL = CALL_HI;
static size_t CALL_LEN = sizeof CALL_HI - 1;

static int to_child, from_child;
static char *buf;
static size_t buf_cap = 1 << 16; /* with --payload N, room for a reply carrying it */
static size_t have; /* bytes buffered after the last consumed line */

static void write_all(const char *p, size_t n) {
    while (n) {
        ssize_t w = write(to_child, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("write to the server failed");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Reads up to and including the next '\n'; keeps what follows for the next line. */
static void read_line(void) {
    size_t seen = 0; /* bytes already searched for the newline */
    for (;;) {
        char *nl = memchr(buf + seen, '\n', have - seen);
        seen = have;
        if (nl) {
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, buf + used, have - used);
            have -= used;
            return;
        }
        if (have == buf_cap) die("reply line too long");
        ssize_t r = read(from_child, buf + have, buf_cap - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the server closed its stdout");
        have += (size_t)r;
    }
}

/* Spawns the server with its stdin and stdout on pipes (to_child, from_child). posix_spawn, as
 * Rust's std::process and libuv do (vfork-like: the parent waits until the exec), so that this
 * floor starts its server the way the clients it is compared with do. */
static pid_t spawn(char **cmd) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) die("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    pid_t pid;
    if (posix_spawnp(&pid, cmd[0], &fa, NULL, cmd, environ)) die("spawn failed");
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]), close(out[1]);
    to_child = in[1];
    from_child = out[0];
    have = 0;
    return pid;
}

/* Test "connect" (--connect N): N times spawn + discover, one call, close + reap; the floor for
 * every client's connect and first-call times. */
static int connect_loop(char **cmd, long n, double duration) {
    samples conn, first, close_;
    samples_init(&conn, (size_t)n), samples_init(&first, (size_t)n), samples_init(&close_, (size_t)n);
    uint64_t deadline = now_ns() + (uint64_t)(duration * 1e9);
    long k = 0;
    for (; k < n && now_ns() < deadline; k++) {
        uint64_t t0 = now_ns();
        pid_t pid = spawn(cmd);
        write_all(DISCOVER, sizeof DISCOVER - 1);
        read_line();
        uint64_t t1 = now_ns();
        write_all(CALL, CALL_LEN);
        read_line();
        uint64_t tf = now_ns();
        close(to_child), close(from_child);
        int status;
        waitpid(pid, &status, 0);
        uint64_t t2 = now_ns();
        samples_add(&conn, t1 - t0), samples_add(&first, tf - t0), samples_add(&close_, t2 - tf);
    }
    printf("{\"runner\":\"raw\",\"test\":\"connect\",\"iterations\":%ld,\"connect_p50_us\":%.1f,"
           "\"connect_p99_us\":%.1f,\"first_p50_us\":%.1f,\"first_p99_us\":%.1f,\"close_p50_us\":%.1f,"
           "\"close_p99_us\":%.1f}\n",
           k, samples_pct_us(&conn, 50), samples_pct_us(&conn, 99), samples_pct_us(&first, 50),
           samples_pct_us(&first, 99), samples_pct_us(&close_, 50), samples_pct_us(&close_, 99));
    return 0;
}

/* ---- many: calls spread over --servers servers ---- */

typedef struct {
    int to, from;
    char buf[4096];
    size_t have;
} server_conn;

static void conn_write(server_conn *c) {
    for (size_t n = CALL_LEN, off = 0; off < n;) {
        ssize_t w = write(c->to, CALL + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) die("write to the server failed");
        off += (size_t)w;
    }
}

static void conn_read(server_conn *c) {
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->have);
        if (nl) {
            size_t used = (size_t)(nl - c->buf) + 1;
            memmove(c->buf, c->buf + used, c->have - used);
            c->have -= used;
            return;
        }
        if (c->have == sizeof c->buf) die("reply line too long");
        ssize_t r = read(c->from, c->buf + c->have, sizeof c->buf - c->have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the server closed its stdout");
        c->have += (size_t)r;
    }
}

static void conn_call(server_conn *c) {
    conn_write(c);
    conn_read(c);
}

/* Test "connect" with --parallel M (--connect N --parallel M): N times spawn M servers, each
 * sent its discover line as soon as it is spawned, and read every reply (servers start and
 * answer concurrently); the time until the last reply is the connect. Then close + reap,
 * untimed. The floor for a hub connecting M members at once. */
static int connect_parallel(char **cmd, long n, long m, double duration) {
    server_conn *conns = calloc((size_t)m, sizeof *conns);
    pid_t *pids = calloc((size_t)m, sizeof *pids);
    samples conn, cpu; /* cpu: this process's CPU during the connect, ns */
    samples_init(&conn, (size_t)n), samples_init(&cpu, (size_t)n);
    uint64_t deadline = now_ns() + (uint64_t)(duration * 1e9);
    long k = 0;
    for (; k < n && now_ns() < deadline; k++) {
        double cpu0 = cpu_us();
        uint64_t t0 = now_ns();
        for (long j = 0; j < m; j++) {
            pids[j] = spawn(cmd);
            conns[j].to = to_child, conns[j].from = from_child, conns[j].have = 0;
            write_all(DISCOVER, sizeof DISCOVER - 1);
        }
        for (long j = 0; j < m; j++) conn_read(&conns[j]);
        samples_add(&conn, now_ns() - t0);
        samples_add(&cpu, (uint64_t)((cpu_us() - cpu0) * 1e3));
        for (long j = 0; j < m; j++) close(conns[j].to), close(conns[j].from);
        for (long j = 0; j < m; j++) waitpid(pids[j], NULL, 0);
    }
    printf("{\"runner\":\"raw\",\"test\":\"connect\",\"servers\":%ld,\"iterations\":%ld,\"connect_p50_us\":%.1f,"
           "\"connect_min_us\":%.1f,\"connect_max_us\":%.1f,\"connect_cpu_p50_us\":%.1f}\n",
           m, k, samples_pct_us(&conn, 50), samples_pct_us(&conn, 0), samples_pct_us(&conn, 100),
           samples_pct_us(&cpu, 50));
    return 0;
}

typedef struct {
    server_conn *conns;
    long first, step, count;
    double secs;
    size_t calls;
    pthread_barrier_t *go;
} many_arg;

static double many_duration, many_cpu_us; /* many_cpu_us: CPU per call of the last series */

static void *many_thread(void *p) {
    many_arg *a = (many_arg *)p;
    pthread_barrier_wait(a->go);
    uint64_t start = now_ns(), deadline = start + (uint64_t)(many_duration * 1e9), t = start;
    long k = a->first;
    while (t < deadline) {
        conn_call(&a->conns[k]);
        k += a->step;
        if (k >= a->count) k = a->first;
        if ((++a->calls & 15) == 0) t = now_ns();
    }
    a->secs = (double)(now_ns() - start) / 1e9;
    return NULL;
}

/* Calls/s of one thread keeping `window` calls in flight on one server (as `conc`). */
static double many_window(server_conn *c, long window) {
    double cpu0 = cpu_us();
    uint64_t start = now_ns(), deadline = start + (uint64_t)(many_duration * 1e9), t = start;
    size_t calls = 0;
    long out = 0;
    for (; out < window; out++) conn_write(c);
    while (out > 0) {
        conn_read(c);
        out--;
        if ((++calls & 15) == 0) t = now_ns();
        if (t < deadline) conn_write(c), out++;
    }
    double secs = (double)(now_ns() - start) / 1e9;
    many_cpu_us = (cpu_us() - cpu0) / (double)calls;
    return (double)calls / secs;
}

/* Calls/s of `threads` threads; thread i calls servers i, i+step, .. below count. */
static double many_series(server_conn *conns, long count, long step, long threads) {
    pthread_t th[64];
    many_arg args[64];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)threads);
    double cpu0 = cpu_us();
    for (long i = 0; i < threads; i++) {
        args[i] = (many_arg){conns, i, step, count, 0, 0, &go};
        pthread_create(&th[i], NULL, many_thread, &args[i]);
    }
    double total = 0;
    size_t calls = 0;
    for (long i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        total += (double)args[i].calls / args[i].secs;
        calls += args[i].calls;
    }
    many_cpu_us = calls ? (cpu_us() - cpu0) / (double)calls : 0.0;
    pthread_barrier_destroy(&go);
    return total;
}

static int many_loop(char **cmd, long servers, long threads, double duration) {
    if (threads < 1 || threads > 64 || threads > servers) die("--inflight must be 1..64 and at most --servers");
    server_conn *conns = calloc((size_t)servers, sizeof *conns);
    pid_t *pids = calloc((size_t)servers, sizeof *pids);
    for (long k = 0; k < servers; k++) {
        pids[k] = spawn(cmd);
        conns[k].to = to_child, conns[k].from = from_child;
        write_all(DISCOVER, sizeof DISCOVER - 1);
        read_line();
        conn_call(&conns[k]);
    }
    many_duration = duration;
    /* `threads` calls in flight on one server (a window from one thread: a pipe has one reader),
     * then `threads` threads each calling its share of all servers in turn. */
    double one = many_window(&conns[0], threads);
    double one_cpu = many_cpu_us;
    double all = many_series(conns, servers, threads, threads);
    double all_cpu = many_cpu_us;
    for (long k = 0; k < servers; k++) close(conns[k].to), close(conns[k].from);
    for (long k = 0; k < servers; k++) waitpid(pids[k], NULL, 0);
    printf("{\"runner\":\"raw\",\"test\":\"many\",\"servers\":%ld,\"host_threads\":%ld,"
           "\"one_server_per_sec\":%.1f,\"all_servers_per_sec\":%.1f,\"one_cpu_us_per_call\":%.2f,"
           "\"all_cpu_us_per_call\":%.2f}\n", servers, threads, one, all, one_cpu, all_cpu);
    return 0;
}

int main(int argc, char **argv) {
    double duration = 2.0;
    long warmup = 500, max_calls = 200000, inflight = 1, connects = 0, servers = 0, gap_us = 0, parallel = 0;
    long payload = 0;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "--duration") && i + 1 < argc) duration = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-calls") && i + 1 < argc) max_calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--gap-us") && i + 1 < argc) gap_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--inflight") && i + 1 < argc) inflight = atol(argv[++i]);
        else if (!strcmp(argv[i], "--connect") && i + 1 < argc) connects = atol(argv[++i]);
        else if (!strcmp(argv[i], "--servers") && i + 1 < argc) servers = atol(argv[++i]);
        else if (!strcmp(argv[i], "--parallel") && i + 1 < argc) parallel = atol(argv[++i]);
        else if (!strcmp(argv[i], "--payload") && i + 1 < argc) payload = atol(argv[++i]);
        else die("usage: raw_stdio [--duration S] [--warmup N] [--max-calls N] -- SERVER [ARGS...]");
    }
    if (i + 1 >= argc) die("no server command");
    char **cmd = argv + i + 1;
    if (payload > 0) {
        /* The same request with the N-byte text as its arguments, built once. */
        char *args = payload_args(payload), *line = malloc((size_t)payload + 1024);
        if (!args || !line) die("out of memory");
        int n = snprintf(line, (size_t)payload + 1024,
                         "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                         "\"arguments\":%s," META "}}\n", args);
        free(args);
        CALL = line, CALL_LEN = (size_t)n;
        buf_cap = 2 * (size_t)payload + (1 << 16);
    }
    if (!(buf = malloc(buf_cap))) die("out of memory");

    signal(SIGPIPE, SIG_IGN);
    if (connects > 0 && parallel > 0) return connect_parallel(cmd, connects, parallel, duration);
    if (connects > 0) return connect_loop(cmd, connects, duration);
    if (servers > 0) return many_loop(cmd, servers, inflight, duration);
    pid_t pid = spawn(cmd);
    write_all(DISCOVER, sizeof DISCOVER - 1);
    read_line();
    for (long k = 0; k < warmup; k++) {
        write_all(CALL, CALL_LEN);
        read_line();
    }
    samples s;
    samples_init(&s, (size_t)max_calls);
    if (inflight > 1) {
        /* Window of `inflight` requests; each sample is one request's write-to-reply time
         * (replies come in order from the --fast fixture, so a FIFO of send times suffices). */
        uint64_t *sent = calloc((size_t)inflight, sizeof(uint64_t));
        size_t head = 0, tail = 0, out = 0, calls = 0;
        uint64_t start = now_ns(), deadline = start + (uint64_t)(duration * 1e9), t = start;
        for (; out < (size_t)inflight; out++) {
            sent[tail] = now_ns();
            tail = (tail + 1) % (size_t)inflight;
            write_all(CALL, CALL_LEN);
        }
        while (out > 0) {
            read_line();
            t = now_ns();
            samples_add(&s, t - sent[head]);
            head = (head + 1) % (size_t)inflight;
            out--;
            calls++;
            if (t < deadline && calls + out < (size_t)max_calls) {
                sent[tail] = t;
                tail = (tail + 1) % (size_t)inflight;
                write_all(CALL, CALL_LEN);
                out++;
            }
        }
        double secs = (double)(t - start) / 1e9;
        close(to_child);
        int status;
        waitpid(pid, &status, 0);
        printf("{\"runner\":\"raw\",\"test\":\"conc\",\"inflight\":%ld,", inflight);
        print_series("", calls, secs, &s);
        printf("}\n");
        return 0;
    }
    double cpu0 = cpu_us();
    uint64_t start = now_ns(), deadline = start + (uint64_t)(duration * 1e9);
    size_t calls = 0;
    uint64_t t = start;
    while (calls < (size_t)max_calls && t < deadline) {
        if (gap_us > 0) { /* calls after an idle gap, as cabi's --gap-us */
            usleep((useconds_t)gap_us);
            t = now_ns();
        }
        write_all(CALL, CALL_LEN);
        read_line();
        uint64_t t2 = now_ns();
        samples_add(&s, t2 - t);
        t = t2;
        calls++;
    }
    double secs = (double)(t - start) / 1e9;
    double cpu = cpu_us() - cpu0;
    close(to_child);
    int status;
    waitpid(pid, &status, 0);
    printf("{\"runner\":\"raw\",\"test\":\"seq\",");
    print_series("", calls, secs, &s);
    printf(",\"cpu_us_per_call\":%.2f,\"rss_kb\":%ld}\n", calls ? cpu / (double)calls : 0.0, rss_kb());
    return 0;
}
