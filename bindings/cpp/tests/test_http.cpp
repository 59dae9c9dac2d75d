// Streamable HTTP against `mcp-fixture-server --http 127.0.0.1:0`. If the fixture does not
// support --http yet, the tests say so in their failure reason.
#include "harness.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace std::chrono_literals;

namespace {
const char* kAcceptAda = R"({"action":"accept","content":{"name":"Ada"}})";

std::string read_lowercase(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}
}  // namespace

TEST(http, connect_call_and_mrtr) {
    std::string record = "/tmp/mcp_cpp_http_record_" + std::to_string(getpid()) + ".jsonl";
    std::remove(record.c_str());
    t::HttpFixture server({"--record", record});
    if (server.url().empty()) t::fail(__FILE__, __LINE__, "HTTP fixture did not start: " + server.error());
    mcp::Options options;
    options.bearer_token = "cpp-test-token";
    options.extra_json = R"({"manual_input":["elicitation"]})";  // answered by hand below
    auto client = mcp::Client::http(server.url(), {{"X-Test-Header", "cpp"}}, options);
    std::string info = client.connect();
    CHECK_CONTAINS(info, "mcp-fixture-server");
    CHECK(client.era() != mcp::Era::None);
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"over http"})"), "over http");
    CHECK_CONTAINS(client.list_all(mcp::ListKind::Tools), "\"elicit_once\"");
    CHECK_CONTAINS(client.read_resource("fixture://static"), "static content");

    auto e = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("elicit_once"));
    CHECK(e.request_state().has_value());
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");

    auto rpc = EXPECT_THROW(mcp::RpcError, client.call_tool("rpc_error"));
    CHECK_EQ(rpc.code(), -32050);
    client.close();
    EXPECT_THROW(mcp::ClosedError, client.call_tool("echo", R"({"text":"x"})"));

    // The custom header and the bearer token went out with the requests.
    std::string wire = read_lowercase(record);
    std::remove(record.c_str());
    CHECK_CONTAINS(wire, "x-test-header");
    CHECK_CONTAINS(wire, "bearer cpp-test-token");
}

TEST(http, timeout_cancel_and_close_in_flight) {
    t::FixtureSignal signal;
    t::HttpFixture server(signal.args());
    if (server.url().empty()) t::fail(__FILE__, __LINE__, "HTTP fixture did not start: " + server.error());
    auto client = mcp::Client::http(server.url());
    client.connect();
    mcp::CallOptions quick;
    quick.timeout = std::chrono::milliseconds(200);
    auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(mcp::TimeoutError, client.call_tool("hang", "", quick));
    CHECK(t::elapsed_ms(start) < 3000);

    mcp::CancelToken token;
    mcp::CallOptions cancellable;
    cancellable.cancel = token;
    std::thread canceller([token, &signal] {
        signal.wait("request tools/call hang", 2);  // the second hang reached the server
        token.cancel();
    });
    start = std::chrono::steady_clock::now();
    bool cancelled = false;
    try {
        client.call_tool("hang", "", cancellable);
    } catch (const mcp::CancelledError&) {
        cancelled = true;
    } catch (...) {
    }
    canceller.join();
    CHECK(cancelled);
    CHECK(t::elapsed_ms(start) < 3000);

    std::atomic<int> closed{0};
    std::thread caller([&] {
        try {
            client.call_tool("hang");
        } catch (const mcp::ClosedError&) {
            closed++;
        } catch (...) {
        }
    });
    CHECK(signal.wait("request tools/call hang"));  // the third hang is in flight
    start = std::chrono::steady_clock::now();
    client.close();
    caller.join();
    CHECK(t::elapsed_ms(start) < 3000);
    CHECK_EQ(closed.load(), 1);
}

TEST(http, listen_and_deferred_handler) {
    t::HttpFixture server;
    if (server.url().empty()) t::fail(__FILE__, __LINE__, "HTTP fixture did not start: " + server.error());
    t::Workers workers;
    auto client = mcp::Client::http(server.url());
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        workers.spawn([r = std::move(r)]() mutable {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a deliberately late reply
            r.reply_json(kAcceptAda);
        });
    });
    CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");
    workers.join();
    auto sub = client.listen(R"({"toolsListChanged":true})");
    CHECK_CONTAINS(client.call_tool("notify"), "notified");
    auto ev = sub.next(std::chrono::milliseconds(3000));
    CHECK(ev.has_value());
    CHECK_CONTAINS(*ev, "notifications/tools/list_changed");
}

TEST(http, legacy_era) {
    t::HttpFixture server({"--era", "legacy"});
    if (server.url().empty()) t::fail(__FILE__, __LINE__, "HTTP fixture did not start: " + server.error());
    auto client = mcp::Client::http(server.url());
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    client.connect();
    CHECK(client.era() == mcp::Era::Legacy);
    client.ping();
    CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");
}

TEST(http, unreachable_server_fails_fast) {
    mcp::Options o;
    o.request_timeout = 3000ms;
    // Port 9 (discard) on localhost: nothing listens there in the test environment.
    auto client = mcp::Client::http("http://127.0.0.1:9/mcp", {}, o);
    auto start = std::chrono::steady_clock::now();
    bool threw = false;
    try {
        client.connect();
    } catch (const mcp::Error& e) {
        threw = true;
        CHECK(e.status() != MCP_OK);
    }
    CHECK(threw);
    CHECK(t::elapsed_ms(start) < 10000);
}

namespace {

/// The same short session against one HTTP fixture variant.
void http_session(const std::vector<std::string>& flags, mcp::Era want) {
    t::HttpFixture server(flags);
    if (server.url().empty()) t::fail(__FILE__, __LINE__, "HTTP fixture did not start: " + server.error());
    auto client = mcp::Client::http(server.url());
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    client.on_sampling([](const std::string&, mcp::Responder r) {
        r.reply_json(R"({"role":"assistant","content":{"type":"text","text":"sampled over http"},"model":"m"})");
    });
    client.connect();
    CHECK(client.era() == want);
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"variant"})"), "variant");
    CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");
    CHECK_CONTAINS(client.call_tool("sample_only"), "sampled: sampled over http");
    std::atomic<int> progress{0};
    mcp::CallOptions o;
    o.on_progress = [&](const mcp::Progress&) { progress++; };
    CHECK_CONTAINS(client.call_tool("progress", R"({"steps":3,"delay_ms":20})", o), "progress done");
    CHECK_EQ(progress.load(), 3);
    auto rpc = EXPECT_THROW(mcp::RpcError, client.call_tool("rpc_error"));
    CHECK_EQ(rpc.code(), -32050);
    mcp::CallOptions quick;
    quick.timeout = std::chrono::milliseconds(150);
    EXPECT_THROW(mcp::TimeoutError, client.call_tool("hang", "", quick));
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"after timeout"})"), "after timeout");
}

}  // namespace

TEST(http, variant_sse_responses_modern) { http_session({"--era", "modern", "--sse-responses"}, mcp::Era::Modern); }
TEST(http, variant_sse_responses_legacy) { http_session({"--era", "legacy", "--sse-responses"}, mcp::Era::Legacy); }
TEST(http, variant_legacy_json) { http_session({"--era", "legacy"}, mcp::Era::Legacy); }
TEST(http, variant_legacy_http_sse_2024) { http_session({"--era", "legacy", "--legacy-sse"}, mcp::Era::Legacy); }
