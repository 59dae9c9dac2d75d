/* The raw stdio baseline: spawn the server with pipes, write a pre-encoded tools/call line and
 * read the reply line, with no JSON work at all: the practical limit of pipe plus server.
 *
 *   raw_stdio [--duration S] [--warmup N] [--max-calls N] [--inflight N] -- SERVER [ARGS...]
 *
 * With --inflight N (> 1) it keeps N requests written ahead of the replies (a window: each reply
 * read lets one more request go): the in-flight baseline for one connection (test "conc").
 */
#include "common.h"
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                                           \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"0.1.0\"}}"
static const char DISCOVER[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}\n";
static const char CALL[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                           "\"arguments\":{\"text\":\"hi\"}," META "}}\n";

static int to_child, from_child;
static char buf[1 << 16];
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
    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl) {
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, buf + used, have - used);
            have -= used;
            return;
        }
        if (have == sizeof buf) die("reply line too long");
        ssize_t r = read(from_child, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the server closed its stdout");
        have += (size_t)r;
    }
}

int main(int argc, char **argv) {
    double duration = 2.0;
    long warmup = 500, max_calls = 200000, inflight = 1;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "--duration") && i + 1 < argc) duration = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-calls") && i + 1 < argc) max_calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--inflight") && i + 1 < argc) inflight = atol(argv[++i]);
        else die("usage: raw_stdio [--duration S] [--warmup N] [--max-calls N] -- SERVER [ARGS...]");
    }
    if (i + 1 >= argc) die("no server command");
    char **cmd = argv + i + 1;

    int in[2], out[2];
    if (pipe(in) || pipe(out)) die("pipe failed");
    pid_t pid = fork();
    if (pid < 0) die("fork failed");
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execvp(cmd[0], cmd);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    to_child = in[1];
    from_child = out[0];
    signal(SIGPIPE, SIG_IGN);

    write_all(DISCOVER, sizeof DISCOVER - 1);
    read_line();
    for (long k = 0; k < warmup; k++) {
        write_all(CALL, sizeof CALL - 1);
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
            write_all(CALL, sizeof CALL - 1);
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
                write_all(CALL, sizeof CALL - 1);
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
        write_all(CALL, sizeof CALL - 1);
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
