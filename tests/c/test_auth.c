/* HTTP authorization through the C ABI: the OAuth configuration and callbacks (argument
 * handling, userdata accounting), HTTP statuses on errors (401 with its challenge, 500), and
 * mcp_auth_fetch_redirect, against a tiny loopback HTTP server written here. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#ifdef _WIN32
#include <winsock2.h> /* before harness.h's headers pull in windows.h */
#endif

#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
/* Winsock's names for the few calls that differ (the tiny server's sockets only). */
typedef SOCKET sock_t;
typedef int socklen_t;
#define BAD_SOCKET INVALID_SOCKET
#define poll WSAPoll
#define sock_close closesocket
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
typedef int sock_t;
#define BAD_SOCKET (-1)
#define sock_close close
#endif

static char sentinel_byte;
#define SENTINEL_STR ((char *)&sentinel_byte)

#define BAD_UTF8 "\xff\xfe bad"

/* ---- a tiny HTTP server: one canned response to every request ---------------------------- */

struct tiny_http {
    sock_t listen_fd;
    int port;
    char response[2048];
    int served;
    int stop;
    pthread_mutex_t lock;
    char last_request[8192];
    pthread_t thread;
};

/* Reads one request (headers and a Content-Length body) within ~2 s. */
static size_t read_request(sock_t fd, char *buf, size_t cap)
{
    size_t len = 0;
    double end = now_ms() + 2000;
    long body = -1;
    size_t header_end = 0;
    while (len + 1 < cap && now_ms() < end) {
        struct pollfd p;
        p.fd = fd;
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, 50) <= 0)
            continue;
        int n = (int)recv(fd, buf + len, (int)(cap - len - 1), 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (header_end == 0) {
            char *h = strstr(buf, "\r\n\r\n");
            if (h == NULL)
                continue;
            header_end = (size_t)(h - buf) + 4;
            const char *cl = strstr(buf, "content-length:");
            if (cl == NULL)
                cl = strstr(buf, "Content-Length:");
            body = cl ? strtol(cl + 15, NULL, 10) : 0;
        }
        if (header_end && len >= header_end + (size_t)body)
            break;
    }
    buf[len] = '\0';
    return len;
}

static void *tiny_http_loop(void *arg)
{
    struct tiny_http *h = (struct tiny_http *)arg;
    while (!ALOAD(&h->stop)) {
        struct pollfd p;
        p.fd = h->listen_fd;
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, 20) <= 0)
            continue;
        sock_t conn = accept(h->listen_fd, NULL, NULL);
        if (conn == BAD_SOCKET)
            continue;
        char req[8192];
        read_request(conn, req, sizeof req);
        pthread_mutex_lock(&h->lock);
        snprintf(h->last_request, sizeof h->last_request, "%s", req);
        pthread_mutex_unlock(&h->lock);
        size_t off = 0, total = strlen(h->response);
        while (off < total) {
            int n = (int)send(conn, h->response + off, (int)(total - off), 0);
            if (n <= 0)
                break;
            off += (size_t)n;
        }
        AINC(&h->served);
        sock_close(conn);
    }
    return NULL;
}

/* `status_line_and_headers` ends before the blank line; the body is `body`. */
static bool tiny_http_start(struct tiny_http *h, const char *status_line_and_headers,
                            const char *body)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    snprintf(h->response, sizeof h->response,
             "%s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", status_line_and_headers,
             strlen(body), body);
#ifdef _WIN32
    WSADATA wsa;
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0)
        return false;
#endif
    h->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (h->listen_fd == BAD_SOCKET)
        return false;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t alen = sizeof addr;
    if (bind(h->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(h->listen_fd, 16) != 0 ||
        getsockname(h->listen_fd, (struct sockaddr *)&addr, &alen) != 0) {
        sock_close(h->listen_fd);
        return false;
    }
    h->port = ntohs(addr.sin_port);
    if (pthread_create(&h->thread, NULL, tiny_http_loop, h) != 0) {
        sock_close(h->listen_fd);
        return false;
    }
    return true;
}

static void tiny_http_stop(struct tiny_http *h)
{
    ASTORE(&h->stop, 1);
    pthread_join(h->thread, NULL);
    sock_close(h->listen_fd);
    pthread_mutex_destroy(&h->lock);
}

static char *tiny_http_last(struct tiny_http *h)
{
    pthread_mutex_lock(&h->lock);
    size_t n = strlen(h->last_request);
    char *copy = (char *)malloc(n + 1);
    if (copy)
        memcpy(copy, h->last_request, n + 1);
    pthread_mutex_unlock(&h->lock);
    return copy;
}

static mcp_client *url_client(const char *url, const char *bearer)
{
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(NULL, &cfg, &err);
    if (st == MCP_OK)
        st = mcp_config_set_url(cfg, url, &err);
    if (st == MCP_OK && bearer)
        st = mcp_config_set_bearer_token(cfg, bearer, &err);
    if (st == MCP_OK)
        st = mcp_config_set_request_timeout_ms(cfg, (int64_t)tscale(3000), &err);
    if (st != MCP_OK) {
        t_status(__FILE__, __LINE__, "url config", st, MCP_OK, err);
        mcp_error_free(err);
        mcp_config_free(cfg);
        return NULL;
    }
    return client_from_config(cfg);
}

/* ---- HTTP statuses on errors ------------------------------------------------------------------ */

static void test_http_401(void)
{
    struct tiny_http h;
    CHECK(tiny_http_start(&h,
                          "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                          "WWW-Authenticate: Bearer realm=\"ctest\", error=\"invalid_token\"",
                          "{\"error\":\"invalid_token\"}"));
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", h.port);
    mcp_client *c = url_client(url, "expired-token");
    if (c != NULL) {
        char *info = SENTINEL_STR;
        mcp_error *err = NULL;
        mcp_status st = mcp_client_connect(c, NULL, &info, &err);
        EXPECT_STATUS(st, MCP_AUTH_REQUIRED, err);
        EXPECT(mcp_status_is_transport(MCP_AUTH_REQUIRED));
        EXPECT(info == SENTINEL_STR);
        uint16_t code = 0;
        EXPECT(mcp_error_http_status(err, &code));
        EXPECT_MSG(code == 401, "http status %u", (unsigned)code);
        const char *challenge = mcp_error_www_authenticate(err);
        EXPECT_CONTAINS(challenge, "Bearer");
        EXPECT_CONTAINS(challenge, "invalid_token");
        /* the challenge never carries the credentials */
        EXPECT(challenge == NULL || strstr(challenge, "expired-token") == NULL);
        EXPECT(strstr(mcp_error_message(err), "expired-token") == NULL);
        mcp_error_free(err);
        mcp_client_free(c);
        char *req = tiny_http_last(&h);
        EXPECT_CONTAINS(req, "Bearer expired-token"); /* the static token was sent */
        free(req);
    }
    tiny_http_stop(&h);
}

static void test_http_500(void)
{
    struct tiny_http h;
    CHECK(tiny_http_start(&h, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain",
                          "broken"));
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", h.port);
    mcp_client *c = url_client(url, NULL);
    if (c != NULL) {
        mcp_error *err = NULL;
        mcp_status st = mcp_client_connect(c, NULL, NULL, &err);
        EXPECT_MSG(st != MCP_OK && mcp_status_is_transport(st), "status %d (%s)", (int)st,
                   err ? mcp_error_message(err) : "");
        uint16_t code = 0;
        EXPECT(mcp_error_http_status(err, &code) && code == 500);
        EXPECT(mcp_error_www_authenticate(err) == NULL);
        mcp_error_free(err);
        mcp_client_free(c);
    }
    tiny_http_stop(&h);
}

/* Errors that did not come from an HTTP answer have no HTTP status. */
static void test_http_status_absent(void)
{
    uint16_t code = 77;
    EXPECT(!mcp_error_http_status(NULL, &code));
    EXPECT(code == 77);
    EXPECT(mcp_error_www_authenticate(NULL) == NULL);
    mcp_client *c = connected_client(NULL);
    CHECK(c != NULL);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_client_call_tool(c, "rpc_error", NULL, NULL, NULL, NULL, &out, &err),
                  MCP_JSONRPC_ERROR, err);
    EXPECT(!mcp_error_http_status(err, &code));
    EXPECT(code == 77);
    EXPECT(!mcp_error_http_status(err, NULL));
    EXPECT(mcp_error_www_authenticate(err) == NULL);
    mcp_error_free(err);
    mcp_client_free(c);
}

/* ---- mcp_auth_fetch_redirect ------------------------------------------------------------------ */

static void test_fetch_redirect(void)
{
    struct tiny_http h;
    CHECK(tiny_http_start(&h, "HTTP/1.1 302 Found\r\nLocation: /callback?code=abc&state=xyz", ""));
    char url[128], want[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/authorize?client_id=c1", h.port);
    snprintf(want, sizeof want, "http://127.0.0.1:%d/callback?code=abc&state=xyz", h.port);
    char *out = NULL;
    mcp_error *err = NULL;
    EXPECT_STATUS(mcp_auth_fetch_redirect(url, (uint32_t)tscale(2000), &out, &err), MCP_OK, err);
    EXPECT_MSG(out && strcmp(out, want) == 0, "redirect %s, want %s", out ? out : "(null)", want);
    mcp_string_free(out);
    char *req = tiny_http_last(&h);
    EXPECT(req && strncmp(req, "GET /authorize?client_id=c1 HTTP/1.1\r\n", 38) == 0);
    free(req);
    tiny_http_stop(&h);

    /* not a redirect: an error with the HTTP status, output untouched */
    CHECK(tiny_http_start(&h, "HTTP/1.1 200 OK\r\nContent-Type: text/html", "<html></html>"));
    snprintf(url, sizeof url, "http://127.0.0.1:%d/authorize", h.port);
    out = SENTINEL_STR;
    err = NULL;
    mcp_status st = mcp_auth_fetch_redirect(url, (uint32_t)tscale(2000), &out, &err);
    EXPECT(st != MCP_OK);
    uint16_t code = 0;
    EXPECT(mcp_error_http_status(err, &code) && code == 200);
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);
    tiny_http_stop(&h);

    /* nobody listening: a transport error, promptly */
    err = NULL;
    double t0 = now_ms();
    st = mcp_auth_fetch_redirect("http://127.0.0.1:1/authorize", (uint32_t)tscale(2000), &out,
                                 &err);
    EXPECT_MSG(mcp_status_is_transport(st), "closed port: status %d", (int)st);
    EXPECT(now_ms() - t0 < tscale(3000));
    EXPECT(out == SENTINEL_STR);
    mcp_error_free(err);

    /* argument checks */
#define FBAD(call, want)                                                                       \
    do {                                                                                       \
        mcp_error *e_ = NULL;                                                                  \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, want, e_);                                                           \
        mcp_error_free(e_);                                                                    \
    } while (0)
    FBAD(mcp_auth_fetch_redirect(NULL, 100, &out, &e_), MCP_NULL_ARG);
    FBAD(mcp_auth_fetch_redirect("http://127.0.0.1:1/", 100, NULL, &e_), MCP_NULL_ARG);
    FBAD(mcp_auth_fetch_redirect(BAD_UTF8, 100, &out, &e_), MCP_INVALID_UTF8);
    FBAD(mcp_auth_fetch_redirect("not a url", 100, &out, &e_), MCP_INVALID_ARG);
    FBAD(mcp_auth_fetch_redirect("ftp://127.0.0.1/x", 100, &out, &e_), MCP_INVALID_ARG);
#undef FBAD
    EXPECT(out == SENTINEL_STR);
}

/* ---- the OAuth configuration and callbacks: arguments and userdata ---------------------------- */

static void auth_cb(void *ud, const char *url, const char *redirect, mcp_responder *r)
{
    (void)ud;
    (void)url;
    (void)redirect;
    mcp_status answered = mcp_responder_reply_error(r, 0, "not in this test", NULL);
    (void)answered; /* a refused or unwanted answer fails the call, which the test checks */
}

static void load_cb(void *ud, const char *issuer, mcp_token_slot *slot)
{
    (void)ud;
    (void)issuer;
    (void)slot;
}

static void save_cb(void *ud, const char *issuer, const char *record)
{
    (void)ud;
    (void)issuer;
    (void)record;
}

static void test_oauth_api(void)
{
    mcp_error *e_ = NULL;
#define ST(call, want)                                                                         \
    do {                                                                                       \
        e_ = NULL;                                                                             \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, want, e_);                                                           \
        mcp_error_free(e_);                                                                    \
    } while (0)
    /* responders and slots: NULL */
    ST(mcp_responder_reply_url(NULL, "http://127.0.0.1/cb", &e_), MCP_NULL_ARG);
    ST(mcp_responder_reply_error(NULL, 0, "no", &e_), MCP_NULL_ARG);
    mcp_responder_defer(NULL);
    EXPECT(mcp_responder_is_cancelled(NULL));
    ST(mcp_token_slot_set(NULL, "{}", &e_), MCP_NULL_ARG);

    /* mcp_config_set_oauth */
    mcp_config *cfg = NULL;
    ST(mcp_config_new(NULL, &cfg, &e_), MCP_OK);
    ST(mcp_config_set_oauth(NULL, "{}", &e_), MCP_NULL_ARG);
    ST(mcp_config_set_oauth(cfg, NULL, &e_), MCP_NULL_ARG);
    ST(mcp_config_set_oauth(cfg, "{\"grant\":", &e_), MCP_INVALID_JSON);
    ST(mcp_config_set_oauth(cfg, BAD_UTF8, &e_), MCP_INVALID_UTF8);
    ST(mcp_config_set_oauth(cfg, "[\"grant\"]", &e_), MCP_INVALID_ARG);
    ST(mcp_config_set_url(cfg, "http://127.0.0.1:1/mcp", &e_), MCP_OK);
    ST(mcp_config_set_oauth(cfg, "{\"grant\":\"sideways\"}", &e_), MCP_OK); /* checked later */
    mcp_client *c = (mcp_client *)SENTINEL_STR;
    ST(mcp_client_new(cfg, &c, &e_), MCP_INVALID_ARG);
    EXPECT(c == (mcp_client *)SENTINEL_STR);
    /* a secret without the issuer it belongs to (it would go to any server's choice) */
    ST(mcp_config_set_oauth(cfg, "{\"grant\":\"client_credentials\",\"client_id\":\"id\","
                                 "\"client_secret\":\"secret\"}",
                            &e_),
       MCP_OK);
    ST(mcp_client_new(cfg, &c, &e_), MCP_INVALID_ARG);
    EXPECT(c == (mcp_client *)SENTINEL_STR);
    ST(mcp_config_set_oauth(cfg, "{\"grant\":\"client_credentials\",\"client_id\":\"id\","
                                 "\"client_secret\":\"secret\",\"issuer\":\"http://127.0.0.1:1\"}",
                            &e_),
       MCP_OK);
    c = NULL;
    ST(mcp_client_new(cfg, &c, &e_), MCP_OK);
    mcp_config_free(cfg);
    CHECK(c != NULL);

    /* callbacks: NULL client, then userdata accounting on a client */
    struct counted a, b, d, s1, s2, bad, nul;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    memset(&bad, 0, sizeof bad);
    memset(&nul, 0, sizeof nul);
    struct counted n1, n2;
    memset(&n1, 0, sizeof n1);
    memset(&n2, 0, sizeof n2);
    ST(mcp_client_on_authorization(NULL, auth_cb, &n1, counted_free, &e_), MCP_NULL_ARG);
    ST(mcp_client_set_token_store(NULL, load_cb, save_cb, &n2, counted_free, &e_), MCP_NULL_ARG);
    EXPECT(n1.frees == 1 && n2.frees == 1);

    ST(mcp_client_on_authorization(c, auth_cb, &a, counted_free, &e_), MCP_OK);
    ST(mcp_client_on_authorization(c, auth_cb, &b, counted_free, &e_), MCP_OK);
    EXPECT(wait_count(&a.frees, 1, tscale(1000)));
    ST(mcp_client_on_authorization(c, NULL, &nul, counted_free, &e_), MCP_OK);
    EXPECT(wait_count(&nul.frees, 1, tscale(1000)));
    EXPECT(wait_count(&b.frees, 1, tscale(1000)));
    ST(mcp_client_on_authorization(c, auth_cb, &d, counted_free, &e_), MCP_OK);

    ST(mcp_client_set_token_store(c, load_cb, save_cb, &s1, counted_free, &e_), MCP_OK);
    ST(mcp_client_set_token_store(c, load_cb, NULL, &bad, counted_free, &e_), MCP_INVALID_ARG);
    EXPECT(bad.frees == 1); /* freed even though the call failed */
    EXPECT(s1.frees == 0);  /* and the store in place stays */
    ST(mcp_client_set_token_store(c, NULL, NULL, NULL, NULL, &e_), MCP_OK); /* default store */
    EXPECT(wait_count(&s1.frees, 1, tscale(1000)));
    ST(mcp_client_set_token_store(c, load_cb, save_cb, &s2, counted_free, &e_), MCP_OK);
    EXPECT(d.frees == 0 && s2.frees == 0);
    mcp_client_free(c);
    EXPECT(d.frees == 1 && s2.frees == 1);
    EXPECT(a.frees == 1 && b.frees == 1 && nul.frees == 1 && s1.frees == 1);
#undef ST
}

/* ---- the authorization extensions: assertion provider, locking store, OAuth error codes ------ */

static void assertion_cb(void *ud, const char *kind, const char *audience, mcp_assertion_slot *slot)
{
    (void)ud;
    (void)kind;
    (void)audience;
    (void)slot;
}

static void lock_cb(void *ud, const char *issuer, bool acquire)
{
    (void)ud;
    (void)issuer;
    (void)acquire;
}

static void test_auth_ext_api(void)
{
    mcp_error *e_ = NULL;
#define ST(call, want)                                                                         \
    do {                                                                                       \
        e_ = NULL;                                                                             \
        mcp_status s_ = (call);                                                                \
        EXPECT_STATUS(s_, want, e_);                                                           \
        mcp_error_free(e_);                                                                    \
    } while (0)
    ST(mcp_assertion_slot_set(NULL, "a.b.c", &e_), MCP_NULL_ARG);
    EXPECT(mcp_error_oauth_error(NULL) == NULL);

    /* The grants and DPoP are configuration: bad combinations are refused at mcp_client_new. */
    mcp_config *cfg = NULL;
    mcp_client *c = NULL;
    ST(mcp_config_new(NULL, &cfg, &e_), MCP_OK);
    ST(mcp_config_set_url(cfg, "http://127.0.0.1:1/mcp", &e_), MCP_OK);
    ST(mcp_config_set_oauth(cfg, "{\"workload_jwt\":\"a.b.c\"}", &e_), MCP_OK);
    ST(mcp_client_new(cfg, &c, &e_), MCP_INVALID_ARG);
    ST(mcp_config_set_oauth(cfg, "{\"dpop\":true,\"dpop_private_key_pem\":\"nope\"}", &e_), MCP_OK);
    ST(mcp_client_new(cfg, &c, &e_), MCP_INVALID_ARG);
    /* A configuration error is not an OAuth error. */
    e_ = NULL;
    EXPECT(mcp_client_new(cfg, &c, &e_) == MCP_INVALID_ARG && e_ && mcp_error_oauth_error(e_) == NULL);
    mcp_error_free(e_);
    ST(mcp_config_set_oauth(cfg, "{\"grant\":\"jwt_bearer\",\"dpop\":true}", &e_), MCP_OK);
    ST(mcp_client_new(cfg, &c, &e_), MCP_OK);
    mcp_config_free(cfg);
    CHECK(c != NULL);

    struct counted p1, p2, n1, n2, s1, bad;
    memset(&p1, 0, sizeof p1);
    memset(&p2, 0, sizeof p2);
    memset(&n1, 0, sizeof n1);
    memset(&n2, 0, sizeof n2);
    memset(&s1, 0, sizeof s1);
    memset(&bad, 0, sizeof bad);
    ST(mcp_client_set_assertion_provider(NULL, assertion_cb, &n1, counted_free, &e_), MCP_NULL_ARG);
    ST(mcp_client_set_locking_token_store(NULL, load_cb, save_cb, lock_cb, &n2, counted_free, &e_), MCP_NULL_ARG);
    EXPECT(n1.frees == 1 && n2.frees == 1);

    ST(mcp_client_set_assertion_provider(c, assertion_cb, &p1, counted_free, &e_), MCP_OK);
    ST(mcp_client_set_assertion_provider(c, assertion_cb, &p2, counted_free, &e_), MCP_OK);
    EXPECT(wait_count(&p1.frees, 1, tscale(1000)));
    ST(mcp_client_set_assertion_provider(c, NULL, NULL, NULL, &e_), MCP_OK); /* removed */
    EXPECT(wait_count(&p2.frees, 1, tscale(1000)));

    ST(mcp_client_set_locking_token_store(c, load_cb, save_cb, lock_cb, &s1, counted_free, &e_), MCP_OK);
    ST(mcp_client_set_locking_token_store(c, NULL, NULL, lock_cb, &bad, counted_free, &e_), MCP_INVALID_ARG);
    EXPECT(bad.frees == 1 && s1.frees == 0);
    ST(mcp_client_set_locking_token_store(c, NULL, NULL, NULL, NULL, NULL, &e_), MCP_OK); /* default */
    EXPECT(wait_count(&s1.frees, 1, tscale(1000)));
    mcp_client_free(c);
#undef ST
}

const struct test_case auth_tests[] = {
    {"auth/http_401", test_http_401},
    {"auth/http_500", test_http_500},
    {"auth/http_status_absent", test_http_status_absent},
    {"auth/fetch_redirect", test_fetch_redirect},
    {"auth/oauth_api", test_oauth_api},
    {"auth/auth_ext_api", test_auth_ext_api},
};
const size_t auth_tests_count = sizeof auth_tests / sizeof auth_tests[0];
