/* The raw Streamable HTTP baseline: one keep-alive TCP connection to 127.0.0.1, a pre-encoded
 * POST of tools/call and the reply read to its end (Content-Length for JSON, the last chunk for
 * SSE), with no JSON work: the practical limit of loopback TCP plus server.
 *
 *   raw_http [--duration S] [--warmup N] [--max-calls N] [--gap-us N] [--payload N]
 *            --url http://127.0.0.1:PORT/PATH
 *
 * With --payload N the echo's text is N bytes (each way; see payload_args in common.h).
 */
#include "common.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                                           \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"0.1.0\"}}"
static const char BODY[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                           "\"arguments\":{\"text\":\"hi\"}," META "}}";

static int sock;
static char *buf;
static size_t buf_cap = 1 << 16; /* with --payload N, room for a response carrying it */

static void send_all(const char *p, size_t n) {
    while (n) {
        ssize_t w = send(sock, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("send failed");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Reads one response: the head, then a Content-Length body or a chunked body to its last chunk. */
static void read_response(void) {
    size_t have = 0;
    size_t need = 0; /* total bytes of a Content-Length response, once known */
    int chunked = 0;
    for (;;) {
        if (have + 1 >= buf_cap) die("response too large");
        ssize_t r = recv(sock, buf + have, buf_cap - 1 - have, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the server closed the connection");
        have += (size_t)r;
        buf[have] = 0;
        if (!need && !chunked) {
            char *end = strstr(buf, "\r\n\r\n");
            if (!end) continue;
            size_t head = (size_t)(end - buf) + 4;
            char *cl = strcasestr(buf, "\r\ncontent-length:");
            if (cl && cl < end) need = head + (size_t)strtoul(cl + 17, NULL, 10);
            else if (strcasestr(buf, "\r\ntransfer-encoding: chunked")) chunked = 1;
            else die("response without a length");
        }
        if (need && have >= need) return;
        if (chunked && have >= 5 && memcmp(buf + have - 5, "0\r\n\r\n", 5) == 0) return;
    }
}

int main(int argc, char **argv) {
    double duration = 2.0;
    long warmup = 500, max_calls = 200000, gap_us = 0, payload = 0;
    const char *url = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--duration") && i + 1 < argc) duration = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-calls") && i + 1 < argc) max_calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--gap-us") && i + 1 < argc) gap_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--url") && i + 1 < argc) url = argv[++i];
        else if (!strcmp(argv[i], "--payload") && i + 1 < argc) payload = atol(argv[++i]);
        else die("usage: raw_http [--duration S] [--warmup N] [--max-calls N] [--gap-us N] [--payload N] --url URL");
    }
    if (!url || strncmp(url, "http://127.0.0.1:", 17) != 0) die("--url must be http://127.0.0.1:PORT/...");
    int port = atoi(url + 17);
    const char *path = strchr(url + 17, '/');
    if (!path) path = "/";

    const char *body = BODY;
    size_t body_len = sizeof BODY - 1;
    if (payload > 0) {
        /* The same request with the N-byte text as its arguments, built once. */
        char *args = payload_args(payload), *b = malloc((size_t)payload + 1024);
        if (!args || !b) die("out of memory");
        int bn = snprintf(b, (size_t)payload + 1024,
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                          "\"arguments\":%s," META "}}", args);
        free(args);
        body = b, body_len = (size_t)bn;
        buf_cap = 2 * (size_t)payload + (1 << 16);
    }
    if (!(buf = malloc(buf_cap))) die("out of memory");
    size_t req_cap = body_len + 4096;
    char *req = malloc(req_cap);
    if (!req) die("out of memory");
    int n = snprintf(req, req_cap,
                     "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: application/json, text/event-stream\r\n"
                     "Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                     "Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %zu\r\n\r\n%s",
                     path, port, body_len, body);
    if (n <= 0 || (size_t)n >= req_cap) die("request too large");

    sock = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect failed");

    for (long k = 0; k < warmup; k++) {
        send_all(req, (size_t)n);
        read_response();
    }
    samples s;
    samples_init(&s, (size_t)max_calls);
    double cpu0 = cpu_us();
    uint64_t start = now_ns(), deadline = start + (uint64_t)(duration * 1e9), t = start;
    size_t calls = 0;
    while (calls < (size_t)max_calls && t < deadline) {
        if (gap_us > 0) { /* calls after an idle gap, as cabi's --gap-us */
            usleep((useconds_t)gap_us);
            t = now_ns();
        }
        send_all(req, (size_t)n);
        read_response();
        uint64_t t2 = now_ns();
        samples_add(&s, t2 - t);
        t = t2;
        calls++;
    }
    double secs = (double)(t - start) / 1e9, cpu = cpu_us() - cpu0;
    close(sock);
    printf("{\"runner\":\"raw\",\"test\":\"seq\",");
    print_series("", calls, secs, &s);
    printf(",\"cpu_us_per_call\":%.2f,\"rss_kb\":%ld}\n", calls ? cpu / (double)calls : 0.0, rss_kb());
    return 0;
}
