/* Shared helpers of the C bench runners: clocks, latency statistics, RSS, the result line.
 * Every runner prints exactly one JSON object on stdout (its result) and diagnostics on stderr. */
#ifndef MCP_BENCH_COMMON_H
#define MCP_BENCH_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/resource.h>

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time (user + system, all threads) of this process so far, in microseconds. */
static inline double cpu_us(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec * 1e6 +
           (double)ru.ru_stime.tv_usec;
}

/* Latency samples in nanoseconds; bounded so a runner's memory does not grow with its speed. */
typedef struct {
    uint64_t *v;
    size_t n, cap;
} samples;

static inline void samples_init(samples *s, size_t cap) {
    s->v = (uint64_t *)malloc(cap * sizeof(uint64_t));
    s->n = 0;
    s->cap = s->v ? cap : 0;
}

static inline void samples_add(samples *s, uint64_t ns) {
    if (s->n < s->cap) s->v[s->n++] = ns;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Percentile p (0..100) in microseconds; sorts in place. */
static inline double samples_pct_us(samples *s, double p) {
    if (s->n == 0) return 0.0;
    qsort(s->v, s->n, sizeof(uint64_t), cmp_u64);
    size_t i = (size_t)(p / 100.0 * (double)(s->n - 1) + 0.5);
    if (i >= s->n) i = s->n - 1;
    return (double)s->v[i] / 1000.0;
}

static inline double samples_mean_us(const samples *s) {
    if (s->n == 0) return 0.0;
    double sum = 0;
    for (size_t i = 0; i < s->n; i++) sum += (double)s->v[i];
    return sum / (double)s->n / 1000.0;
}

/* Resident set size of this process in KiB (VmRSS), or -1. */
static inline long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* `"calls":..,"seconds":..,"per_sec":..,"p50_us":..,"p99_us":..,"mean_us":..` for one series. */
static inline void print_series(const char *prefix, size_t calls, double seconds, samples *s) {
    double mean = samples_mean_us(s);
    double p50 = samples_pct_us(s, 50), p99 = samples_pct_us(s, 99);
    printf("\"%scalls\":%zu,\"%sseconds\":%.4f,\"%sper_sec\":%.1f,\"%sp50_us\":%.2f,\"%sp99_us\":%.2f,"
           "\"%smean_us\":%.2f",
           prefix, calls, prefix, seconds, prefix, seconds > 0 ? (double)calls / seconds : 0.0, prefix, p50,
           prefix, p99, prefix, mean);
}

/* Threads of this process (entries of /proc/self/task), or -1. */
static inline int task_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static inline void append(char **out, size_t *len, size_t *cap, const char *s) {
    size_t n = strlen(s);
    while (*len + n + 1 >= *cap) *cap *= 2, *out = (char *)realloc(*out, *cap);
    memcpy(*out + *len, s, n + 1);
    *len += n;
}

/* JSON string escaping for the few characters a path may hold. */
static inline void append_json_str(char **out, size_t *len, size_t *cap, const char *s) {
    for (; *s; s++) {
        if (*len + 8 >= *cap) {
            *cap *= 2;
            *out = (char *)realloc(*out, *cap);
        }
        if (*s == '"' || *s == '\\') (*out)[(*len)++] = '\\';
        (*out)[(*len)++] = *s;
    }
    (*out)[*len] = 0;
}

/* `{"command": cmd[0], "args": [cmd[1], ...]}` (cmd ends with NULL, as argv does), malloc'd:
 * the stdio configuration of a client (or hub member) starting that server. */
static inline char *stdio_config_json(char **cmd) {
    size_t len = 0, cap = 256;
    char *out = (char *)malloc(cap);
    out[0] = 0;
    append(&out, &len, &cap, "{\"command\":\"");
    append_json_str(&out, &len, &cap, cmd[0]);
    append(&out, &len, &cap, "\",\"args\":[");
    for (int k = 1; cmd[k]; k++) {
        append(&out, &len, &cap, k > 1 ? ",\"" : "\"");
        append_json_str(&out, &len, &cap, cmd[k]);
        append(&out, &len, &cap, "\"");
    }
    append(&out, &len, &cap, "]}");
    return out;
}

/* `--payload N`: the echo's text, N characters of the base64 alphabet (what a screenshot or a
 * file read carries; nothing JSON must escape), so a call carries N bytes each way. */
static inline char *payload_text(long n) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *t = (char *)malloc((size_t)n + 1);
    if (!t) return NULL;
    for (long k = 0; k < n; k++) t[k] = alphabet[(k * 7 + k / 64) % 64];
    t[n] = 0;
    return t;
}

/* `{"text":"<payload_text(n)>"}`, the echo's arguments with an N-byte text. */
static inline char *payload_args(long n) {
    char *t = payload_text(n), *a = (char *)malloc((size_t)n + 16);
    if (!t || !a) return NULL;
    snprintf(a, (size_t)n + 16, "{\"text\":\"%s\"}", t);
    free(t);
    return a;
}

static inline void die(const char *what) {
    fprintf(stderr, "bench: %s\n", what);
    exit(2);
}

#endif
