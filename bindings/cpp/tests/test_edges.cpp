// Edge cases: timeouts with progress resets and caps, close during connect, destruction while
// another thread waits on a subscription, shutdown escalation, extra configuration keys.
#include "harness.hpp"

#include <atomic>
#include <thread>

using namespace std::chrono_literals;

TEST(edges, timeout_reset_on_progress_and_total_cap) {
    auto client = t::fixture();
    client.connect();
    // 4 steps, 120 ms apart: a 300 ms timeout survives only because progress restarts it.
    const std::string args = R"({"steps":4,"delay_ms":120})";
    mcp::CallOptions reset;
    reset.timeout = 300ms;
    reset.reset_timeout_on_progress = true;
    CHECK_CONTAINS(client.call_tool("progress", args, reset), "progress done");

    mcp::CallOptions plain;
    plain.timeout = 200ms;
    plain.on_progress = [](const mcp::Progress&) {};
    EXPECT_THROW(mcp::TimeoutError, client.call_tool("progress", R"({"steps":4,"delay_ms":100})", plain));

    mcp::CallOptions capped = reset;
    capped.max_total = 250ms;
    auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(mcp::TimeoutError, client.call_tool("progress", args, capped));
    CHECK(t::elapsed_ms(start) < 2000);

    mcp::CallOptions none;
    none.timeout = mcp::CallOptions::no_timeout;
    CHECK_CONTAINS(client.call_tool("slow", R"({"ms":50})", none), "slept 50");
}

TEST(edges, client_default_timeout) {
    mcp::Options o;
    o.request_timeout = 200ms;
    auto client = t::fixture({}, o);
    client.connect();
    auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(mcp::TimeoutError, client.call_tool("hang"));
    CHECK(t::elapsed_ms(start) < 3000);
    mcp::CallOptions longer;
    longer.timeout = 2000ms;
    CHECK_CONTAINS(client.call_tool("slow", R"({"ms":300})", longer), "slept 300");
}

TEST(edges, close_interrupts_connect) {
    mcp::Options o;
    o.extra_json = R"({"probe_timeout_ms": 10000})";
    t::FixtureSignal signal;
    auto args = signal.args();
    args.insert(args.begin(), {"--on-discover", "silent"});
    auto client = t::fixture(args, o);
    std::atomic<int> outcome{-1};
    std::thread connector([&] {
        try {
            client.connect();
            outcome = 0;
        } catch (const mcp::Error& e) {
            outcome = e.status();
        }
    });
    CHECK(signal.wait("request server/discover"));  // the connect waits for the silent server
    auto start = std::chrono::steady_clock::now();
    client.close();
    connector.join();
    CHECK(t::elapsed_ms(start) < 3000);
    CHECK_EQ(outcome.load(), MCP_CLOSED);
}

TEST(edges, auto_mode_falls_back_to_legacy) {
    auto client = t::fixture({"--on-discover", "not-found"});
    client.connect();
    CHECK(client.era() == mcp::Era::Legacy);
    client.ping();
}

TEST(edges, destroying_client_wakes_subscription_reader) {
    std::optional<mcp::Client> client(t::fixture());
    auto sub = client->listen(R"({"toolsListChanged":true})");
    std::atomic<int> status{-1};
    std::atomic<long long> waited{-1};
    std::atomic<long> reader_id{0};
    std::thread reader([&] {
        reader_id = t::thread_id();
        auto start = std::chrono::steady_clock::now();
        try {
            auto ev = sub.next(10000ms);
            status = ev ? 0 : MCP_TIMEOUT;
        } catch (const mcp::Error& e) {
            status = e.status();
        }
        waited = t::elapsed_ms(start);
    });
    CHECK(t::wait_parked(reader_id));  // the reader waits in next()
    client.reset();  // mcp_client_free: closes, so the reader wakes
    reader.join();
    CHECK(status.load() != 0);
    CHECK(status.load() != MCP_TIMEOUT);
    CHECK(waited.load() < 5000);
}

TEST(edges, stubborn_server_is_killed_on_close) {
    mcp::Options o;
    o.extra_json = R"({"shutdown_grace_ms": 100})";
    auto client = t::fixture({"--ignore-stdin-eof"}, o);
    client.connect();
    auto start = std::chrono::steady_clock::now();
    client.close();  // stdin closed (ignored), SIGTERM (ignored), then SIGKILL
    CHECK(t::elapsed_ms(start) < 5000);
    EXPECT_THROW(mcp::ClosedError, client.call_tool("echo", R"({"text":"x"})"));
}

TEST(edges, invalid_options_and_filters) {
    auto client = t::fixture();
    mcp::CallOptions bad_meta;
    bad_meta.meta_json = "[1]";
    EXPECT_THROW(mcp::InvalidArgumentError, client.call_tool("echo", R"({"text":"x"})", bad_meta));
    EXPECT_THROW(mcp::InvalidArgumentError, client.listen("{nope"));
    mcp::Options o;
    o.extra_json = R"({"no_such_key": 1})";
    EXPECT_THROW(mcp::InvalidArgumentError, t::fixture({}, o));
    mcp::Subscription empty;
    EXPECT_THROW(mcp::InvalidArgumentError, empty.next(10ms));
}
