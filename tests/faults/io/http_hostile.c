/*
 * A hostile MCP server over HTTP, run on threads inside the test process (so its port is known
 * without a handshake). One request per connection (`Connection: close`); just enough HTTP for
 * the library's client.
 *
 *   flood-sse  modern: tools/call answers with an SSE stream of N notifications/message, then
 *              the answer
 *   batch      legacy 2025-03-26: tools/call answers `[answer, ping]` in one JSON body; the next
 *              call is answered "ping answered" once the client POSTed the ping's answer
 *   hang       legacy: tools/call and notifications/cancelled are never answered (the
 *              connection is held open)
 */
#define _GNU_SOURCE
#include "http_hostile.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct {
    const char *mode;
    long count;
    int listener;
    long calls;
    int ping_answered;
    pthread_mutex_t lock;
    pthread_cond_t changed;
} srv = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static int send_all(int fd, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_str(int fd, const char *s) {
    return send_all(fd, s, strlen(s));
}

static void reply(int fd, const char *status, const char *type, const char *body) {
    char head[256];
    snprintf(head, sizeof head,
             "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
             type, strlen(body));
    send_str(fd, head);
    send_str(fd, body);
}

static long request_id(const char *body) {
    const char *p = strstr(body, "\"id\":");
    return p && p[5] >= '0' && p[5] <= '9' ? strtol(p + 5, NULL, 10) : -1;
}

static int has(const char *body, const char *s) {
    return strstr(body, s) != NULL;
}

static void serve(int fd) {
    /* Headers, then Content-Length bytes of body. */
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    char *end = NULL;
    while (!end) {
        ssize_t r = recv(fd, buf + len, cap - len, 0);
        if (r <= 0)
            goto done;
        len += (size_t)r;
        buf[len] = 0;
        end = strstr(buf, "\r\n\r\n");
        if (!end && len == cap)
            goto done;
    }
    const char *cl = strcasestr(buf, "content-length:");
    size_t want = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
    size_t head = (size_t)(end + 4 - buf);
    if (head + want > cap) {
        cap = head + want;
        buf = realloc(buf, cap + 1);
    }
    while (len < head + want) {
        ssize_t r = recv(fd, buf + len, cap - len, 0);
        if (r <= 0)
            goto done;
        len += (size_t)r;
    }
    buf[len] = 0;
    const char *body = buf + head;
    if (strncmp(buf, "POST", 4) != 0) {
        reply(fd, "405 Method Not Allowed", "text/plain", "");
        goto done;
    }
    long id = request_id(body);
    int legacy = strcmp(srv.mode, "batch") == 0 || strcmp(srv.mode, "hang") == 0;
    if (strcmp(srv.mode, "hang") == 0 &&
        (has(body, "\"method\":\"tools/call\"") || has(body, "\"method\":\"notifications/cancelled\""))) {
        sleep(60); /* holds the connection; the test process ends first */
        goto done;
    }
    char out[512];
    if (has(body, "\"method\":\"server/discover\"")) {
        if (legacy) {
            snprintf(out, sizeof out, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"error\":{\"code\":-32601,\"message\":\"no\"}}", id);
        } else {
            snprintf(out, sizeof out,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
                     "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}}",
                     id);
        }
        reply(fd, "200 OK", "application/json", out);
    } else if (has(body, "\"method\":\"initialize\"")) {
        snprintf(out, sizeof out,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"protocolVersion\":\"2025-03-26\","
                 "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}}",
                 id);
        reply(fd, "200 OK", "application/json", out);
    } else if (has(body, "\"id\":\"srv-ping\"")) {
        pthread_mutex_lock(&srv.lock);
        srv.ping_answered = 1;
        pthread_cond_broadcast(&srv.changed);
        pthread_mutex_unlock(&srv.lock);
        reply(fd, "202 Accepted", "text/plain", "");
    } else if (!has(body, "\"method\":\"tools/call\"")) {
        reply(fd, "202 Accepted", "text/plain", "");
    } else if (!legacy) {
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
        static const char note[] = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                                   "\"params\":{\"level\":\"info\",\"data\":\"flood\"}}\n\n";
        /* Batched writes: the flood is the client's problem, not the socket calls'. */
        enum { PER = 256 };
        char *chunk = malloc(sizeof note * PER);
        for (int i = 0; i < PER; i++)
            memcpy(chunk + i * (sizeof note - 1), note, sizeof note - 1);
        long sent = 0;
        while (sent < srv.count) {
            long n = srv.count - sent < PER ? srv.count - sent : PER;
            if (send_all(fd, chunk, (size_t)n * (sizeof note - 1)) != 0)
                break;
            sent += n;
        }
        free(chunk);
        snprintf(out, sizeof out,
                 "data: {\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\","
                 "\"text\":\"after the flood\"}]}}\n\n",
                 id);
        send_str(fd, out);
    } else {
        pthread_mutex_lock(&srv.lock);
        long call = ++srv.calls;
        if (call == 1) {
            pthread_mutex_unlock(&srv.lock);
            snprintf(out, sizeof out,
                     "[{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"first\"}]}},"
                     "{\"jsonrpc\":\"2.0\",\"id\":\"srv-ping\",\"method\":\"ping\"}]",
                     id);
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 5;
            while (!srv.ping_answered)
                if (pthread_cond_timedwait(&srv.changed, &srv.lock, &until) != 0)
                    break;
            int answered = srv.ping_answered;
            pthread_mutex_unlock(&srv.lock);
            snprintf(out, sizeof out,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}}",
                     id, answered ? "ping answered" : "ping unanswered");
        }
        reply(fd, "200 OK", "application/json", out);
    }
done:
    free(buf);
    close(fd);
}

static void *connection(void *arg) {
    serve((int)(long)arg);
    return NULL;
}

static void *accept_loop(void *arg) {
    (void)arg;
    for (;;) {
        int fd = accept(srv.listener, NULL, NULL);
        if (fd < 0)
            return NULL;
        pthread_t th;
        pthread_create(&th, NULL, connection, (void *)(long)fd);
        pthread_detach(th);
    }
}

int http_hostile_start(const char *mode, long count) {
    srv.mode = mode;
    srv.count = count;
    srv.listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    if (bind(srv.listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(srv.listener, 64) != 0 ||
        getsockname(srv.listener, (struct sockaddr *)&addr, &alen) != 0)
        return -1;
    pthread_t th;
    pthread_create(&th, NULL, accept_loop, NULL);
    pthread_detach(th);
    return ntohs(addr.sin_port);
}
