/*
 * hostile: a deliberately misbehaving MCP server over stdio, one misbehaviour per mode, for the
 * I/O fault suite (faults.c). Plain C, no JSON library: it reads the client's requests just
 * well enough (the client writes `{"jsonrpc":"2.0","id":N,"method":"...",...}`) and writes
 * canned lines.
 *
 *   hostile MODE [N]
 *
 * Every mode answers the handshake (`server/discover` for modern modes, `initialize` for legacy
 * ones) and misbehaves on `tools/call` (some on `subscriptions/listen`):
 *   stop-reading     never reads stdin again after the handshake
 *   flood-progress   N notifications/progress for an unknown token, then the answer
 *   flood-message    N notifications/message (no listener asked for them), then the answer
 *   flood-stderr     N lines of 100 bytes on stderr, then the answer
 *   flood-listen     on subscriptions/listen: the acknowledgement, then N list_changed events
 *   ping-flood       legacy: N ping requests with 100 KB ids, never reading stdin again
 *   elicit-flood     modern: N elicitation/create requests, then an answer saying how many of
 *                    them were refused ("refused=K")
 *   deep             the first call gets a notification nested N deep, then a normal answer;
 *                    calls with {"depth":D} get a result nested D deep
 *   batch            legacy 2025-03-26: answers `[answer, ping]` in one batch line; the next
 *                    call is answered "ping answered" once the client answered that ping
 *   die-midline      writes half an answer and a line on stderr, then exits with status 3
 *   plain            behaves
 *
 * HOSTILE_PIDFILE, when set, receives the server's pid (the suite checks it is gone after
 * close).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode;
static long count;

static void out(const char *s) {
    fputs(s, stdout);
}

static void flush(void) {
    fflush(stdout);
}

/* The integer after the first `"id":` (the client's ids are integers), or -1. */
static long request_id(const char *line) {
    const char *p = strstr(line, "\"id\":");
    if (!p)
        return -1;
    p += 5;
    if (*p < '0' || *p > '9')
        return -1;
    return strtol(p, NULL, 10);
}

/* Whether the line is a request for `method`. */
static int is_method(const char *line, const char *method) {
    char needle[128];
    snprintf(needle, sizeof needle, "\"method\":\"%s\"", method);
    return strstr(line, needle) != NULL;
}

static void answer_text(long id, const char *text) {
    printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}}\n",
           id, text);
    flush();
}

static void nested(long depth) {
    for (long i = 0; i < depth; i++)
        putchar('[');
    for (long i = 0; i < depth; i++)
        putchar(']');
}

static int legacy(void) {
    return strcmp(mode, "ping-flood") == 0 || strcmp(mode, "batch") == 0;
}

static void handshake(const char *line, long id) {
    if (is_method(line, "server/discover")) {
        printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
               "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}}\n",
               id);
    } else {
        printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"protocolVersion\":\"2025-03-26\","
               "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}}\n",
               id);
    }
    flush();
}

static void stay_silent(void) {
    /* Never reads again: the client's writes fill the pipe. Killed by the client's close. */
    for (;;)
        pause();
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hostile MODE [N]\n");
        return 2;
    }
    mode = argv[1];
    count = argc > 2 ? atol(argv[2]) : 1000;
    const char *pidfile = getenv("HOSTILE_PIDFILE");
    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }
    char *line = NULL;
    size_t cap = 0;
    long calls = 0, refused = 0, held_call = -1;
    int ping_answered = 0;
    while (getline(&line, &cap, stdin) > 0) {
        long id = request_id(line);
        if (is_method(line, "server/discover") || is_method(line, "initialize")) {
            if (legacy() == is_method(line, "initialize")) {
                handshake(line, id);
                if (strcmp(mode, "stop-reading") == 0)
                    stay_silent();
            } else {
                printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"error\":{\"code\":-32601,\"message\":\"no\"}}\n", id);
                flush();
            }
            continue;
        }
        if (is_method(line, "notifications/initialized")) {
            if (strcmp(mode, "ping-flood") == 0) {
                /* Requests with 100 KB ids, and never a read again. */
                char *pad = malloc(100 * 1024 + 1);
                memset(pad, 'p', 100 * 1024);
                pad[100 * 1024] = 0;
                for (long i = 0; i < count; i++)
                    printf("{\"jsonrpc\":\"2.0\",\"id\":\"%ld-%s\",\"method\":\"ping\"}\n", i, pad);
                flush();
                free(pad);
                stay_silent();
            }
            continue;
        }
        if (strstr(line, "\"id\":\"srv-") && (strstr(line, "\"result\"") || strstr(line, "\"error\""))) {
            /* An answer to one of our requests. */
            if (strstr(line, "\"error\"") && strstr(line, "-32601"))
                refused++;
            if (strstr(line, "\"id\":\"srv-ping\"")) {
                ping_answered = 1;
                if (held_call >= 0) {
                    answer_text(held_call, "ping answered");
                    held_call = -1;
                }
            }
            if (strcmp(mode, "elicit-flood") == 0 && refused + 0 >= count && held_call >= 0) {
                char text[64];
                snprintf(text, sizeof text, "refused=%ld", refused);
                answer_text(held_call, text);
                held_call = -1;
            }
            continue;
        }
        if (is_method(line, "subscriptions/listen")) {
            printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":"
                   "{\"notifications\":{\"toolsListChanged\":true},\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%ld}}}\n",
                   id);
            for (long i = 0; i < count; i++)
                printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":"
                       "{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%ld}}}\n",
                       id);
            flush();
            continue;
        }
        if (!is_method(line, "tools/call")) {
            if (id >= 0) {
                printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{}}\n", id);
                flush();
            }
            continue;
        }
        calls++;
        if (strcmp(mode, "flood-progress") == 0 || strcmp(mode, "flood-message") == 0) {
            int progress = strcmp(mode, "flood-progress") == 0;
            for (long i = 0; i < count; i++) {
                if (progress)
                    printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                           "{\"progressToken\":\"nobody-%ld\",\"progress\":%ld,\"message\":\"flood\"}}\n",
                           i, i);
                else
                    printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
                           "{\"level\":\"info\",\"data\":\"flood %ld\"}}\n",
                           i);
            }
            answer_text(id, "after the flood");
        } else if (strcmp(mode, "flood-stderr") == 0) {
            static char buf[1 << 16];
            setvbuf(stderr, buf, _IOFBF, sizeof buf); /* whole pipe-sized writes, not one per line */
            for (long i = 0; i < count; i++)
                fprintf(stderr, "hostile: stderr flood line %09ld %070d\n", i, 0);
            fflush(stderr);
            answer_text(id, "after the flood");
        } else if (strcmp(mode, "elicit-flood") == 0) {
            for (long i = 0; i < count; i++)
                printf("{\"jsonrpc\":\"2.0\",\"id\":\"srv-%ld\",\"method\":\"elicitation/create\",\"params\":"
                       "{\"message\":\"?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n",
                       i);
            flush();
            held_call = id;
        } else if (strcmp(mode, "deep") == 0) {
            const char *d = strstr(line, "\"depth\":");
            if (d) {
                printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":", id);
                nested(atol(d + 8));
                out("}\n");
            } else {
                if (count > 0) {
                    out("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":");
                    nested(count);
                    out("}}\n");
                }
                answer_text(id, "after the deep notification");
            }
            flush();
        } else if (strcmp(mode, "batch") == 0) {
            if (calls == 1) {
                printf("[{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"first\"}]}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"srv-ping\",\"method\":\"ping\"}]\n",
                       id);
                flush();
            } else if (ping_answered) {
                answer_text(id, "ping answered");
            } else {
                held_call = id; /* answered when the ping's answer comes */
            }
        } else if (strcmp(mode, "die-midline") == 0) {
            printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"te", id);
            flush();
            fprintf(stderr, "hostile: fatal: the disk is on fire\n");
            fflush(stderr);
            _exit(3);
        } else {
            answer_text(id, "ok");
        }
    }
    free(line);
    return 0;
}
