// subscriptions/listen (modern): events, graceful end, cancel, close.
#include "harness.hpp"

#include <thread>

using namespace std::chrono_literals;

TEST(listen, list_changed_and_resource_updates) {
    auto client = t::fixture();
    auto sub = client.listen(R"({"toolsListChanged":true,"resourceSubscriptions":["fixture://static"]})");
    CHECK(sub);
    std::string ack = sub.acknowledged();
    CHECK_CONTAINS(ack, "toolsListChanged");
    CHECK_CONTAINS(ack, "fixture://static");

    CHECK(!sub.next(50ms).has_value());  // nothing yet: a bounded wait returns nullopt

    CHECK_CONTAINS(client.call_tool("notify"), "notified");
    auto ev = sub.next(3000ms);
    CHECK(ev.has_value());
    CHECK_CONTAINS(*ev, "notifications/tools/list_changed");
    CHECK_NOT_CONTAINS(*ev, "prompts/list_changed");  // not asked for

    CHECK_CONTAINS(client.call_tool("touch", R"({"uri":"fixture://static"})"), "touched");
    auto ev2 = sub.next(3000ms);
    CHECK(ev2.has_value());
    CHECK_CONTAINS(*ev2, "notifications/resources/updated");
    CHECK_CONTAINS(*ev2, "fixture://static");

    // The server ends every listen: next() reports the graceful end.
    CHECK_CONTAINS(client.call_tool("end_listens"), "ended 1 listens");
    EXPECT_THROW(mcp::ClosedError, sub.next(3000ms));
}

TEST(listen, cancel_from_another_thread) {
    auto client = t::fixture();
    auto sub = client.listen(R"({"toolsListChanged":true})");
    std::atomic<long> me{t::thread_id()};
    std::thread canceller([&] {
        t::wait_parked(me);  // this thread waits in next() (below)
        sub.cancel();
    });
    auto start = std::chrono::steady_clock::now();
    bool ended = false;
    try {
        auto ev = sub.next(5000ms);
        (void)ev;
    } catch (const mcp::CancelledError&) {
        ended = true;
    } catch (const mcp::ClosedError&) {
        ended = true;
    }
    canceller.join();
    CHECK(ended);
    CHECK(t::elapsed_ms(start) < 3000);
    // The server was told (notifications/cancelled for the listen id).
    CHECK(t::wait_until([&] { return client.call_tool("cancelled_ids").find("[]") == std::string::npos; }));
    CHECK_CONTAINS(client.call_tool("end_listens"), "ended 0 listens");
}

TEST(listen, close_ends_subscription_and_outlives_client) {
    mcp::Subscription sub;
    {
        auto client = t::fixture();
        sub = client.listen(R"({"promptsListChanged":true})");
        client.close();
        bool ended = false;
        try {
            sub.next(3000ms);
        } catch (const mcp::Error&) {
            ended = true;
        }
        CHECK(ended);
    }
    // The client is gone; the subscription handle is still safe to use and destroy.
    bool threw = false;
    try {
        sub.next(10ms);
    } catch (const mcp::Error&) {
        threw = true;
    }
    CHECK(threw);
    mcp::Subscription moved = std::move(sub);
    CHECK(!sub);
    CHECK(moved);
}
