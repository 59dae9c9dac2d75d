// OAuth 2.1 against `mcp-fixture-server --http 127.0.0.1:0 --oauth` (the fixture is both the
// protected MCP endpoint and its authorization server; /authorize approves at once and redirects,
// so a handler can answer with mcp::fetch_redirect instead of a browser).
#include "harness.hpp"

#include <atomic>
#include <map>
#include <thread>

using namespace std::chrono_literals;

namespace {

/// `--oauth` plus `extra` fixture flags.
std::vector<std::string> oauth_flags(std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), "--oauth");
    return extra;
}

#define REQUIRE_STARTED(var) \
    if (var.url().empty()) t::fail(__FILE__, __LINE__, "OAuth fixture did not start: " + var.error())

mcp::Options oauth_options(const std::string& oauth_json = "{}") {
    mcp::Options o;
    o.oauth = oauth_json;
    o.request_timeout = 10000ms;
    return o;
}

/// The fixture's issuer (its URL without "/mcp"): pre-registered secrets are configured for it.
std::string issuer_of(const t::HttpFixture& server) {
    return server.url().substr(0, server.url().size() - 4);
}

/// A token store shared by several clients (what a keychain would be), thread-safe.
struct MemoryStore {
    std::mutex m;
    std::map<std::string, std::string> records;
    std::vector<std::string> loads, saves;

    void install(mcp::Client& client) {
        client.set_token_store(
            [this](const std::string& issuer) -> std::optional<std::string> {
                std::lock_guard<std::mutex> lock(m);
                loads.push_back(issuer);
                auto it = records.find(issuer);
                if (it == records.end()) return std::nullopt;
                return it->second;
            },
            [this](const std::string& issuer, const std::optional<std::string>& record) {
                std::lock_guard<std::mutex> lock(m);
                saves.push_back(issuer);
                if (record)
                    records[issuer] = *record;
                else
                    records.erase(issuer);
            });
    }
    size_t save_count() {
        std::lock_guard<std::mutex> lock(m);
        return saves.size();
    }
    size_t load_count() {
        std::lock_guard<std::mutex> lock(m);
        return loads.size();
    }
    std::map<std::string, std::string> snapshot() {
        std::lock_guard<std::mutex> lock(m);
        return records;
    }
};

}  // namespace

// The full handler form: the responder moves to a worker thread, which reads the redirect
// (fetch_redirect, as the conformance client does) and completes it later.
TEST(oauth, authorization_code_flow_deferred_responder) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    t::Workers workers;
    std::atomic<int> calls{0};
    std::mutex m;
    std::string seen_url;
    std::optional<std::string> seen_redirect;
    std::atomic<bool> replied{false};
    auto client = mcp::Client::http(server.url(), {}, oauth_options());
    client.on_authorization([&](const std::string& url, const std::optional<std::string>& redirect_uri,
                                mcp::AuthResponder responder) {
        calls++;
        {
            std::lock_guard<std::mutex> lock(m);
            seen_url = url;
            seen_redirect = redirect_uri;
        }
        workers.spawn([url, r = std::move(responder), &replied]() mutable {
            std::this_thread::sleep_for(30ms);  // a deliberately late reply
            try {
                replied = r.reply(mcp::fetch_redirect(url, 5000ms));
            } catch (const std::exception& e) {
                r.fail(e.what());
            }
        });
    });
    std::string result = client.call_tool("echo", R"({"text":"authorized"})");
    CHECK_EQ(t::text(result), std::string("authorized"));
    workers.join();
    CHECK(replied.load());
    CHECK_EQ(calls.load(), 1);
    {
        std::lock_guard<std::mutex> lock(m);
        CHECK_CONTAINS(seen_url, "/authorize?");
        CHECK_CONTAINS(seen_url, "code_challenge_method=S256");
        CHECK(seen_redirect.has_value());
        CHECK_CONTAINS(seen_redirect.value_or(""), "http://127.0.0.1:");  // the loopback listener
    }
    // The token is reused: no second authorization.
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"again"})")), std::string("again"));
    CHECK_EQ(calls.load(), 1);
}

// The simple form: return the redirected-to URL.
TEST(oauth, authorization_code_flow_simple_handler) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    std::atomic<int> calls{0};
    auto client = mcp::Client::http(server.url(), {}, oauth_options());
    client.on_authorization([&](const std::string& url) {
        calls++;
        return mcp::fetch_redirect(url);
    });
    std::string info = client.connect();
    CHECK_CONTAINS(info, "mcp-fixture-server");
    CHECK_EQ(t::text(client.call_tool("add", R"({"a":2,"b":3})")), std::string("5"));
    CHECK_EQ(calls.load(), 1);
}

// The simple form returning "": the loopback listener receives the redirect. Here the "browser"
// is a second GET on the redirect URL, which reaches the listener (it answers 200, so
// fetch_redirect reports "not a redirect", as expected).
TEST(oauth, simple_handler_leaves_redirect_to_loopback_listener) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    std::atomic<int> calls{0};
    std::atomic<bool> listener_answered_200{false};
    auto client = mcp::Client::http(server.url(), {}, oauth_options());
    client.on_authorization([&](const std::string& url) {
        calls++;
        std::string location = mcp::fetch_redirect(url);
        try {
            mcp::fetch_redirect(location, 5000ms);
        } catch (const mcp::Error& e) {
            if (e.http_status() == 200) listener_answered_200 = true;
        }
        return std::string();
    });
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"via listener"})")), std::string("via listener"));
    CHECK_EQ(calls.load(), 1);
    CHECK(listener_answered_200.load());
}

// A host-handled redirect_uri (as the conformance client uses): the handler sees it and must
// reply; returning "" from the simple form then fails the flow (there is no loopback listener).
TEST(oauth, host_redirect_uri) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    const std::string redirect = "http://127.0.0.1:1/cpp-callback";
    std::mutex m;
    std::optional<std::string> seen;
    auto client = mcp::Client::http(server.url(), {}, oauth_options(R"({"redirect_uri":")" + redirect + R"("})"));
    client.on_authorization([&](const std::string& url, const std::optional<std::string>& redirect_uri,
                                mcp::AuthResponder r) {
        {
            std::lock_guard<std::mutex> lock(m);
            seen = redirect_uri;
        }
        r.reply(mcp::fetch_redirect(url));
    });
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"host redirect"})")), std::string("host redirect"));
    {
        std::lock_guard<std::mutex> lock(m);
        CHECK(seen == std::optional<std::string>(redirect));
    }

    auto empty = mcp::Client::http(server.url(), {}, oauth_options(R"({"redirect_uri":")" + redirect + R"("})"));
    empty.on_authorization([](const std::string&) { return std::string(); });
    EXPECT_THROW(mcp::AuthRequiredError, empty.call_tool("echo", R"({"text":"x"})"));
}

// Token store: the first client saves a record per issuer; a second client with the same store
// loads it and never calls its handler.
TEST(oauth, token_store_saves_and_second_client_reuses_record) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    MemoryStore store;
    std::atomic<int> first_calls{0}, second_calls{0};
    {
        auto first = mcp::Client::http(server.url(), {}, oauth_options());
        store.install(first);
        first.on_authorization([&](const std::string& url) {
            first_calls++;
            return mcp::fetch_redirect(url);
        });
        CHECK_EQ(t::text(first.call_tool("echo", R"({"text":"one"})")), std::string("one"));
        CHECK_EQ(first_calls.load(), 1);
    }
    CHECK(store.save_count() >= 1);
    auto records = store.snapshot();
    CHECK_EQ(records.size(), static_cast<size_t>(1));
    const std::string issuer = records.begin()->first;
    const std::string record = records.begin()->second;
    CHECK_CONTAINS(issuer, "http://127.0.0.1:");
    CHECK(mcp::json::find(record, "/client/client_id").has_value());  // dynamically registered
    CHECK_CONTAINS(record, "\"access_token\"");

    size_t loads_before = store.load_count();
    auto second = mcp::Client::http(server.url(), {}, oauth_options());
    store.install(second);
    second.on_authorization([&](const std::string& url, const std::optional<std::string>&, mcp::AuthResponder r) {
        second_calls++;
        r.fail("the second client must not need a browser");
        (void)url;
    });
    CHECK_EQ(t::text(second.call_tool("echo", R"({"text":"two"})")), std::string("two"));
    CHECK_EQ(second_calls.load(), 0);
    CHECK(store.load_count() > loads_before);
}

// A store whose load throws, or returns garbage, counts as empty: the flow still runs.
TEST(oauth, failing_token_store_counts_as_empty) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    std::atomic<int> calls{0}, saves{0};
    auto client = mcp::Client::http(server.url(), {}, oauth_options());
    client.set_token_store([](const std::string&) -> std::optional<std::string> { throw std::runtime_error("disk on fire"); },
                           [&](const std::string&, const std::optional<std::string>&) {
                               saves++;
                               throw std::runtime_error("still on fire");
                           });
    client.on_authorization([&](const std::string& url) {
        calls++;
        return mcp::fetch_redirect(url);
    });
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"store failed"})")), std::string("store failed"));
    CHECK_EQ(calls.load(), 1);
    CHECK(saves.load() >= 1);

    t::HttpFixture server2(oauth_flags());
    REQUIRE_STARTED(server2);
    auto other = mcp::Client::http(server2.url(), {}, oauth_options());
    other.set_token_store([](const std::string&) -> std::optional<std::string> { return std::string("not json"); },
                          [](const std::string&, const std::optional<std::string>&) {});
    other.on_authorization([&](const std::string& url) { return mcp::fetch_redirect(url); });
    CHECK_EQ(t::text(other.call_tool("echo", R"({"text":"garbage ignored"})")), std::string("garbage ignored"));

    EXPECT_THROW(mcp::InvalidArgumentError, client.set_token_store(mcp::TokenLoader(), [](const std::string&, const std::optional<std::string>&) {}));
    client.reset_token_store();
    client.set_token_store(nullptr, nullptr);  // both empty: the in-memory default again
}

// Every way a handler can fail ends the call with AuthRequiredError (nothing hangs).
TEST(oauth, handler_failures_fail_the_call_with_auth_error) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    mcp::Options o = oauth_options();

    {  // explicit fail()
        auto client = mcp::Client::http(server.url(), {}, o);
        std::atomic<bool> was_pending{false}, failed_ok{false}, returned{false};
        client.on_authorization([&](const std::string&, const std::optional<std::string>&, mcp::AuthResponder r) {
            was_pending = r.pending();
            failed_ok = r.fail("the user closed the browser");
            returned = true;
        });
        auto e = EXPECT_THROW(mcp::AuthRequiredError, client.call_tool("echo", R"({"text":"x"})"));
        // The call may end (on fail's answer) before the handler's thread stores fail's result.
        CHECK(t::wait_until([&] { return returned.load(); }));
        CHECK(was_pending.load());
        CHECK(failed_ok.load());
        CHECK_EQ(e.status(), MCP_AUTH_REQUIRED);
        CHECK_CONTAINS(e.message(), "the user closed the browser");
    }
    {  // the responder is dropped without an answer
        auto client = mcp::Client::http(server.url(), {}, o);
        client.on_authorization([](const std::string&, const std::optional<std::string>&, mcp::AuthResponder) {});
        auto e = EXPECT_THROW(mcp::AuthRequiredError, client.call_tool("echo", R"({"text":"x"})"));
        CHECK_CONTAINS(e.message(), "without replying");
    }
    {  // the full form throws: its what() reaches the error, nothing unwinds into C
        auto client = mcp::Client::http(server.url(), {}, o);
        client.on_authorization([](const std::string&, const std::optional<std::string>&, mcp::AuthResponder r) {
            mcp::AuthResponder keep = std::move(r);
            throw std::runtime_error("no browser available");
        });
        auto e = EXPECT_THROW(mcp::AuthRequiredError, client.call_tool("echo", R"({"text":"x"})"));
        CHECK_CONTAINS(e.message(), "no browser available");
    }
    {  // the simple form throws
        auto client = mcp::Client::http(server.url(), {}, o);
        client.on_authorization([](const std::string&) -> std::string { throw std::logic_error("simple handler broke"); });
        auto e = EXPECT_THROW(mcp::AuthRequiredError, client.call_tool("echo", R"({"text":"x"})"));
        CHECK_CONTAINS(e.message(), "simple handler broke");
    }
    {  // a non-std exception
        auto client = mcp::Client::http(server.url(), {}, o);
        client.on_authorization([](const std::string&) -> std::string { throw 42; });
        EXPECT_THROW(mcp::AuthRequiredError, client.call_tool("echo", R"({"text":"x"})"));
    }
    {  // failed later, from another thread
        t::Workers workers;
        auto client = mcp::Client::http(server.url(), {}, o);
        client.on_authorization([&](const std::string&, const std::optional<std::string>&, mcp::AuthResponder r) {
            workers.spawn([r = std::move(r)]() mutable {
                std::this_thread::sleep_for(50ms);  // a deliberately late failure
                r.fail("denied later");
            });
        });
        auto e = EXPECT_THROW(mcp::AuthRequiredError, client.call_tool("echo", R"({"text":"x"})"));
        CHECK_CONTAINS(e.message(), "denied later");
        workers.join();
    }
    {  // a redirect the flow cannot use: the call fails, the client is not poisoned
        auto client = mcp::Client::http(server.url(), {}, o);
        std::atomic<int> calls{0};
        client.on_authorization([&](const std::string& url) {
            return calls++ == 0 ? std::string("http://127.0.0.1:1/callback?code=forged&state=wrong")
                                : mcp::fetch_redirect(url);
        });
        bool failed = false;
        try {
            client.call_tool("echo", R"({"text":"x"})");
        } catch (const mcp::Error&) {
            failed = true;
        }
        CHECK(failed);
        CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"retry works"})")), std::string("retry works"));
    }
}

// Auto mode: an authorization that failed during the server/discover probe ends the connect; it
// is not repeated through initialize (the handler runs once per denial, in every mode).
TEST(oauth, failed_authorization_asks_the_handler_once_in_every_mode) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    for (mcp::Mode mode : {mcp::Mode::Auto, mcp::Mode::Modern, mcp::Mode::Legacy}) {
        mcp::Options o = oauth_options();
        o.mode = mode;
        auto client = mcp::Client::http(server.url(), {}, o);
        std::atomic<int> calls{0};
        client.on_authorization([&](const std::string&, const std::optional<std::string>&, mcp::AuthResponder r) {
            calls++;
            r.fail("the user denied the authorization");
        });
        auto e = EXPECT_THROW(mcp::AuthRequiredError, client.connect());
        CHECK_CONTAINS(e.message(), "the user denied the authorization");
        CHECK(e.http_status() == std::optional<int>(401));
        CHECK_EQ(calls.load(), 1);
    }
}

// Without oauth, the 401 surfaces as AuthRequiredError with the HTTP status and the challenge,
// read from the same mcp_error.
TEST(oauth, unauthorized_error_values) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    mcp::Options plain;
    plain.request_timeout = 10000ms;
    auto client = mcp::Client::http(server.url(), {}, plain);
    auto e = EXPECT_THROW(mcp::AuthRequiredError, client.connect());
    CHECK_EQ(e.status(), MCP_AUTH_REQUIRED);
    CHECK(e.is_transport());
    CHECK(e.http_status() == std::optional<int>(401));
    CHECK(e.www_authenticate().has_value());
    CHECK_CONTAINS(e.www_authenticate().value_or(""), "Bearer");
    CHECK_CONTAINS(e.www_authenticate().value_or(""), "resource_metadata=");
    CHECK_CONTAINS(e.www_authenticate().value_or(""), "/.well-known/oauth-protected-resource");

    // A wrong static token: also 401, with the invalid_token challenge.
    mcp::Options wrong = plain;
    wrong.bearer_token = "not-a-token";
    auto bad = mcp::Client::http(server.url(), {}, wrong);
    auto e2 = EXPECT_THROW(mcp::AuthRequiredError, bad.call_tool("echo", R"({"text":"x"})"));
    CHECK(e2.http_status() == std::optional<int>(401));
    CHECK_CONTAINS(e2.www_authenticate().value_or(""), "Bearer");

    // OAuth configured but no handler, and a host redirect_uri: nobody can do the browser step.
    auto nohandler = mcp::Client::http(server.url(), {},
                                       oauth_options(R"({"redirect_uri":"http://127.0.0.1:9/cb"})"));
    EXPECT_THROW(mcp::AuthRequiredError, nohandler.call_tool("echo", R"({"text":"x"})"));

    // Errors without an HTTP answer carry neither value.
    auto local = EXPECT_THROW(mcp::InvalidArgumentError, mcp::json::at("{", ""));
    CHECK(!local.http_status().has_value());
    CHECK(!local.www_authenticate().has_value());
}

// A pre-registered confidential client (--oauth-client ID:SECRET) with the
// client_credentials grant needs no handler at all.
TEST(oauth, client_credentials_grant) {
    t::HttpFixture server(oauth_flags({"--oauth-client", "cpp-app:cpp-secret"}));
    REQUIRE_STARTED(server);
    auto client = mcp::Client::http(
        server.url(), {},
        oauth_options(R"({"grant":"client_credentials","client_id":"cpp-app","client_secret":"cpp-secret","issuer":")" +
                      issuer_of(server) + R"("})"));
    std::atomic<int> calls{0};
    client.on_authorization([&](const std::string&) {
        calls++;
        return std::string();
    });
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"m2m"})")), std::string("m2m"));
    CHECK_EQ(calls.load(), 0);

    auto wrong = mcp::Client::http(
        server.url(), {},
        oauth_options(R"({"grant":"client_credentials","client_id":"cpp-app","client_secret":"wrong","issuer":")" +
                      issuer_of(server) + R"("})"));
    EXPECT_THROW(mcp::Error, wrong.call_tool("echo", R"({"text":"x"})"));
    try {
        wrong.call_tool("echo", R"({"text":"x"})");
        CHECK(false);
    } catch (const mcp::AuthRequiredError& e) {
        CHECK(e.oauth_error() == std::optional<std::string>("invalid_client"));
    }
}

// An assertion grant asks the provider for the workload's JWT; the fixture knows no jwt-bearer
// grant, so the refusal carries its OAuth error code (and never the JWT).
TEST(oauth, assertion_provider) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    auto client = mcp::Client::http(server.url(), {}, oauth_options(R"({"grant":"jwt_bearer"})"));
    std::vector<std::string> asked;
    std::mutex mu;
    client.set_assertion_provider([&](const std::string& kind, const std::string& audience) {
        std::lock_guard<std::mutex> lock(mu);
        asked.push_back(kind + " " + audience);
        return std::optional<std::string>("eyJ.workload.sig");
    });
    try {
        client.call_tool("echo", R"({"text":"x"})");
        CHECK(false);
    } catch (const mcp::AuthRequiredError& e) {
        CHECK(e.oauth_error() == std::optional<std::string>("unsupported_grant_type"));
        CHECK(std::string(e.what()).find("eyJ.workload.sig") == std::string::npos);
    }
    std::lock_guard<std::mutex> lock(mu);
    CHECK_EQ(asked.size(), size_t(1));
    CHECK_EQ(asked.at(0), "workload_jwt " + issuer_of(server));
    client.set_assertion_provider(nullptr);
}

// A pre-registered client with the authorization-code grant, and short-lived tokens: after
// expiry the library refreshes (the store sees the new token) without a second browser step.
TEST(oauth, preregistered_client_and_refresh_after_expiry) {
    t::HttpFixture server(oauth_flags({"--oauth-client", "cpp-app:cpp-secret", "--oauth-token-ttl", "1"}));
    REQUIRE_STARTED(server);
    MemoryStore store;
    std::atomic<int> calls{0};
    std::atomic<bool> preregistered_id{false};
    auto client = mcp::Client::http(server.url(), {},
                                     oauth_options(R"({"client_id":"cpp-app","client_secret":"cpp-secret","issuer":")" +
                                                   issuer_of(server) + R"("})"));
    store.install(client);
    client.on_authorization([&](const std::string& url) {
        calls++;
        if (url.find("client_id=cpp-app") != std::string::npos) preregistered_id = true;
        return mcp::fetch_redirect(url);
    });
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"first"})")), std::string("first"));
    CHECK_EQ(calls.load(), 1);
    CHECK(preregistered_id.load());
    auto before = store.snapshot();
    CHECK_EQ(before.size(), static_cast<size_t>(1));
    std::this_thread::sleep_for(1500ms);  // the token's lifetime runs out: the expiry under test
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"after expiry"})")), std::string("after expiry"));
    CHECK_EQ(calls.load(), 1);
    auto after = store.snapshot();
    CHECK(after.size() == 1 && after.begin()->second != before.begin()->second);  // a new token was saved
}

// A responder completed after its flow ended (here: the authorization timed out) reports false;
// is_cancelled() says so beforehand. Answering twice throws AlreadyUsedError.
TEST(oauth, late_responder_is_cancelled) {
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    std::mutex m;
    std::optional<mcp::AuthResponder> kept;
    std::string kept_url;
    auto client = mcp::Client::http(server.url(), {}, oauth_options(R"({"authorization_timeout_ms":300})"));
    client.on_authorization([&](const std::string& url, const std::optional<std::string>&, mcp::AuthResponder r) {
        std::lock_guard<std::mutex> lock(m);
        kept = std::move(r);
        kept_url = url;
    });
    auto start = std::chrono::steady_clock::now();
    bool threw = false;
    try {
        client.call_tool("echo", R"({"text":"x"})");
    } catch (const mcp::Error&) {
        threw = true;
    }
    CHECK(threw);
    CHECK(t::elapsed_ms(start) < 5000);
    std::lock_guard<std::mutex> lock(m);
    CHECK(kept.has_value());
    CHECK(kept->pending());
    CHECK(t::wait_until([&] { return kept->is_cancelled(); }));
    CHECK(!kept->reply(mcp::fetch_redirect(kept_url)));
    CHECK(!kept->pending());
    EXPECT_THROW(mcp::AlreadyUsedError, kept->fail());
}

// Step-up: a tool that needs more scope answers 403 insufficient_scope; the library authorizes
// again (a second browser step) and retries.
TEST(oauth, step_up_reauthorizes) {
    t::HttpFixture server(oauth_flags({"--oauth-step-up-tool", "add"}));
    REQUIRE_STARTED(server);
    std::atomic<int> calls{0};
    std::mutex m;
    std::vector<std::string> urls;
    auto client = mcp::Client::http(server.url(), {}, oauth_options());
    client.on_authorization([&](const std::string& url) {
        calls++;
        {
            std::lock_guard<std::mutex> lock(m);
            urls.push_back(url);
        }
        return mcp::fetch_redirect(url);
    });
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"low scope"})")), std::string("low scope"));
    CHECK_EQ(calls.load(), 1);
    CHECK_EQ(t::text(client.call_tool("add", R"({"a":1,"b":2})")), std::string("3"));
    CHECK_EQ(calls.load(), 2);
    std::lock_guard<std::mutex> lock(m);
    CHECK_CONTAINS(urls.back(), "admin");
}

TEST(oauth, config_and_fetch_redirect_errors) {
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::Client::http("http://127.0.0.1:9/mcp", {}, oauth_options(R"({"nope":1})")));
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::Client::http("http://127.0.0.1:9/mcp", {}, oauth_options("[]")));
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::Client::http("http://127.0.0.1:9/mcp", {}, oauth_options("{")));
    mcp::Config config;
    config.url("http://127.0.0.1:9/mcp")
        .oauth(R"({"grant":"client_credentials","client_id":"a","client_secret":"b","issuer":"http://127.0.0.1:9"})");
    mcp::Client ok(config);
    CHECK(static_cast<bool>(ok));

    EXPECT_THROW(mcp::InvalidArgumentError, mcp::fetch_redirect("not a url"));
    t::HttpFixture server(oauth_flags());
    REQUIRE_STARTED(server);
    // The MCP endpoint answers 401 to a GET, not a redirect.
    auto e = EXPECT_THROW(mcp::Error, mcp::fetch_redirect(server.url(), 3000ms));
    CHECK(e.http_status().has_value());
}
