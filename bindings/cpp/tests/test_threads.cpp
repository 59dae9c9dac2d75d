// Threads: deferred responders, cancellation, close with calls in flight, concurrent calls,
// move semantics.
#include "harness.hpp"

#include <atomic>
#include <thread>

using namespace std::chrono_literals;

using t::Workers;

namespace {

const char* kAcceptAda = R"({"action":"accept","content":{"name":"Ada"}})";


}  // namespace

TEST(threads, deferred_reply_from_another_thread) {
    std::atomic<bool> replied{false};
    std::thread::id handler_thread, reply_thread;
    Workers workers;
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        handler_thread = std::this_thread::get_id();
        workers.spawn([&, r = std::move(r)]() mutable {
            // A deliberately late reply (checked below); nothing waits for this thread by it.
            std::this_thread::sleep_for(100ms);
            reply_thread = std::this_thread::get_id();
            replied = r.reply_json(kAcceptAda);
        });
    });
    auto start = std::chrono::steady_clock::now();
    CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");
    CHECK(t::elapsed_ms(start) >= 100);
    workers.join();
    CHECK(replied.load());
    CHECK(handler_thread != reply_thread);
    CHECK(handler_thread != std::this_thread::get_id());
}

TEST(threads, deferred_reply_three_rounds_and_sampling) {
    std::atomic<int> n{0};
    Workers workers;
    auto client = t::fixture();
    client.on_elicitation([&](const std::string& p, mcp::Responder r) {
        workers.spawn([&, p, r = std::move(r)]() mutable {
            std::this_thread::sleep_for(10ms);  // a deliberately late reply
            if (p.find("confirmed") != std::string::npos)
                r.reply_json(R"({"action":"accept","content":{"confirmed":false}})");
            else
                r.reply_json(R"({"action":"accept","content":{"value":"t)" + std::to_string(++n) + "\"}}");
        });
    });
    client.on_sampling([&](const std::string&, mcp::Responder r) {
        workers.spawn([r = std::move(r)]() mutable {
            r.reply_json(R"({"role":"assistant","content":{"type":"text","text":"later"},"model":"m"})");
        });
    });
    CHECK_CONTAINS(client.call_tool("three_rounds"), "steps: t1,t2,t3");
    CHECK_CONTAINS(client.call_tool("elicit_and_sample"), "summary=later");
    workers.join();
}

TEST(threads, responder_destroyed_unanswered_elsewhere) {
    Workers workers;
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        workers.spawn([r = std::move(r)]() mutable {
            std::this_thread::sleep_for(50ms);  // dropped late, while the call waits
            mcp::Responder dropped = std::move(r);  // destroyed without a reply
        });
    });
    auto start = std::chrono::steady_clock::now();
    auto e = EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
    CHECK(t::elapsed_ms(start) < 3000);
    CHECK_CONTAINS(e.message(), "destroyed without a reply");
    workers.join();
}

TEST(threads, cancel_from_another_thread) {
    t::FixtureSignal signal;
    auto client = t::fixture(signal.args());
    client.connect();
    mcp::CancelToken token;
    mcp::CallOptions o;
    o.cancel = token;  // a clone of the same token
    std::thread canceller([token, &signal] {
        signal.wait("request tools/call hang");  // the call reached the server: it waits
        token.cancel();
    });
    auto start = std::chrono::steady_clock::now();
    std::optional<mcp::CancelledError> e;
    try {
        client.call_tool("hang", "", o);
    } catch (const mcp::CancelledError& c) {
        e = c;
    } catch (...) {
    }
    auto ms = t::elapsed_ms(start);
    canceller.join();  // before any CHECK, so a failure never leaves the thread running
    CHECK(e.has_value());
    CHECK(ms < 3000);
    CHECK_EQ(e->status(), MCP_CANCELLED);
    CHECK(token.is_cancelled());
    // A call started with a cancelled token fails at once.
    EXPECT_THROW(mcp::CancelledError, client.call_tool("echo", R"({"text":"x"})", o));
    // The client itself is fine.
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"fine"})"), "fine");
}

TEST(threads, cancel_while_handler_deferred) {
    mcp::CancelToken token;
    std::atomic<bool> saw_cancel{false}, reply_result{true};
    Workers workers;
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        workers.spawn([&, r = std::move(r)]() mutable {
            saw_cancel = t::wait_until([&] { return r.is_cancelled(); }, 3000ms);
            reply_result = r.reply_json(kAcceptAda);  // no longer wanted: false, no throw
        });
        token.cancel();  // from the callback itself: does not wait for itself
    });
    mcp::CallOptions o;
    o.cancel = token;
    EXPECT_THROW(mcp::CancelledError, client.call_tool("elicit_once", "", o));
    workers.join();
    CHECK(saw_cancel.load());
    CHECK(!reply_result.load());
}

TEST(threads, close_with_calls_in_flight) {
    t::FixtureSignal signal;
    auto client = t::fixture(signal.args());
    client.connect();
    constexpr int kCalls = 4;
    std::atomic<int> closed{0}, other{0};
    std::vector<std::thread> callers;
    std::vector<long long> times(kCalls, -1);
    std::atomic<int> started{0};
    std::chrono::steady_clock::time_point closed_at;
    for (int i = 0; i < kCalls; i++) {
        callers.emplace_back([&, i] {
            started++;
            try {
                client.call_tool(i % 2 ? "hang" : "slow", i % 2 ? "" : R"({"ms":20000})");
                other++;
            } catch (const mcp::ClosedError&) {
                closed++;
            } catch (...) {
                other++;
            }
            times[static_cast<size_t>(i)] = t::elapsed_ms(closed_at);
        });
    }
    bool all_started = t::wait_until([&] { return started.load() == kCalls; });
    // Every call reached the server (which answers none in time): all are blocked.
    all_started = all_started && signal.wait("request tools/call ", kCalls);
    closed_at = std::chrono::steady_clock::now();
    client.close();
    for (auto& th : callers) th.join();
    CHECK(all_started);
    CHECK_EQ(closed.load(), kCalls);
    CHECK_EQ(other.load(), 0);
    for (auto ms : times) CHECK(ms < 2000);
    // Later calls fail with ClosedError; close is idempotent.
    EXPECT_THROW(mcp::ClosedError, client.call_tool("echo", R"({"text":"x"})"));
    client.close();
}

TEST(threads, close_from_a_callback) {
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder) { client.close(); });
    auto start = std::chrono::steady_clock::now();
    bool threw = false;
    try {
        client.call_tool("elicit_once");
    } catch (const mcp::ClosedError&) {
        threw = true;
    } catch (const mcp::HandlerError&) {
        threw = true;  // the responder's error may win the race with close
    }
    CHECK(threw);
    CHECK(t::elapsed_ms(start) < 3000);
    // (That later calls then fail with ClosedError is checked by bugs/close_from_callback_...:
    // from a callback the library closes asynchronously.)
    CHECK(t::wait_until([&] {
        try {
            client.call_tool("echo", R"({"text":"x"})");
            return false;
        } catch (const mcp::ClosedError&) {
            return true;
        }
    }));
}

TEST(threads, concurrent_calls_on_one_client) {
    auto client = t::fixture();
    client.connect();
    constexpr int kThreads = 8;
    std::atomic<int> ok{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < kThreads; i++) {
        ts.emplace_back([&, i] {
            try {
                for (int j = 0; j < 5; j++) {
                    std::string text = "t" + std::to_string(i) + "-" + std::to_string(j);
                    std::string r = client.call_tool("echo", mcp::json::object({{"text", mcp::json::quote(text)}}));
                    if (r.find("\"" + text + "\"") != std::string::npos) ok++;
                }
            } catch (...) {
            }
        });
    }
    for (auto& th : ts) th.join();
    CHECK_EQ(ok.load(), kThreads * 5);
}

TEST(threads, deferred_responder_outlives_client) {
    std::atomic<bool> reply_result{true};
    mcp::Responder kept;
    std::mutex kept_mutex;
    std::atomic<bool> have{false};
    bool got = false;
    Workers workers;
    {
        auto client = t::fixture();
        client.on_elicitation([&](const std::string&, mcp::Responder r) {
            std::lock_guard<std::mutex> lock(kept_mutex);
            kept = std::move(r);
            have = true;
        });
        workers.spawn([&] {
            try {
                client.call_tool("elicit_once");
            } catch (...) {
            }
        });
        got = t::wait_until([&] { return have.load(); });
        client.close();
        workers.join();
    }  // client freed while the responder is still held
    CHECK(got);
    std::lock_guard<std::mutex> lock(kept_mutex);
    CHECK(kept.is_cancelled());
    reply_result = kept.reply_json(kAcceptAda);
    CHECK(!reply_result.load());
}

TEST(threads, move_semantics) {
    auto a = t::fixture();
    a.connect();
    mcp::Client b = std::move(a);
    CHECK(!a);
    CHECK(b);
    CHECK(a.era() == mcp::Era::None);
    EXPECT_THROW(mcp::InvalidArgumentError, a.call_tool("echo", R"({"text":"x"})"));
    a.close();  // no-op on a moved-from client
    CHECK_CONTAINS(b.call_tool("echo", R"({"text":"moved"})"), "moved");

    // Handlers registered before a move keep working.
    auto c = t::fixture();
    c.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    mcp::Client d(std::move(c));
    CHECK_CONTAINS(d.call_tool("elicit_once"), "Hello, Ada!");

    // Move-assignment frees the old client; self-move is harmless.
    b = std::move(d);
    CHECK(!d);
    CHECK_CONTAINS(b.call_tool("elicit_once"), "Hello, Ada!");
    mcp::Client& alias = b;
    b = std::move(alias);
    CHECK(b);
    CHECK_CONTAINS(b.call_tool("echo", R"({"text":"self"})"), "self");

    // Moved-from clients (a, c, d) are destroyed at scope end without effect.
    mcp::Client e = t::fixture();
    { mcp::Client f = std::move(e); }
    CHECK(!e);
}

TEST(threads, cancel_token_copies) {
    mcp::CancelToken a;
    mcp::CancelToken b = a;
    mcp::CancelToken c;
    c = b;
    CHECK(!a.is_cancelled());
    c.cancel();
    CHECK(a.is_cancelled());
    CHECK(b.is_cancelled());
    mcp::CancelToken d = std::move(a);
    CHECK(d.is_cancelled());
    CHECK(a.native() == nullptr);
    CHECK(!a.is_cancelled());  // a moved-from token is inert
    a.cancel();
    mcp::CancelToken fresh;
    CHECK(!fresh.is_cancelled());
}

TEST(threads, handler_boxes_are_released) {
    // Each std::function lives in a heap box the library frees through userdata_free: when a
    // handler is replaced (once idle) and when the client is destroyed.
    auto sentinel = std::make_shared<int>(0);
    {
        auto client = t::fixture();
        client.on_elicitation([sentinel](const std::string&) { return std::string(kAcceptAda); });
        client.on_sampling([sentinel](const std::string&, mcp::Responder r) { r.decline(); });
        client.on_roots([sentinel](const std::string&) { return std::string(R"({"roots":[]})"); });
        client.on_notification([sentinel](const std::string&, const std::string&) {});
        client.on_log([sentinel](const std::string&, const std::string&, const std::string&) {});
        CHECK_EQ(sentinel.use_count(), 6L);
        CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");
        client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });  // replaces
        CHECK(t::wait_until([&] { return sentinel.use_count() == 5L; }));
        client.on_roots(nullptr);
        CHECK(t::wait_until([&] { return sentinel.use_count() == 4L; }));
    }
    CHECK_EQ(sentinel.use_count(), 1L);
}

TEST(threads, free_waits_for_running_callback) {
    // close() wakes the caller while the handler still runs; destroying the client then waits
    // for that callback, and releases the handler box, before returning.
    std::atomic<bool> in_callback{false}, callback_done{false};
    auto sentinel = std::make_shared<int>(0);
    std::optional<mcp::Client> client(t::fixture());
    client->on_elicitation([&, sentinel](const std::string&, mcp::Responder r) {
        in_callback = true;
        std::this_thread::sleep_for(300ms);  // deliberately slow: the free under test waits for it
        callback_done = true;
        r.decline();
    });
    std::thread closer([&] {
        t::wait_until([&] { return in_callback.load(); });
        client->close();
    });
    bool closed = false;
    try {
        client->call_tool("elicit_once");
    } catch (const mcp::ClosedError&) {
        closed = true;
    } catch (...) {
    }
    closer.join();
    client.reset();
    CHECK(closed);
    CHECK(callback_done.load());
    CHECK_EQ(sentinel.use_count(), 1L);
}

TEST(threads, handler_throws_after_moving_responder) {
    // The handler hands the responder to a worker, then throws: the binding answers with the
    // exception at once; the worker's late reply returns false instead of throwing.
    std::atomic<int> late_reply{-1};
    std::atomic<bool> go{false};
    Workers workers;
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        workers.spawn([&, r = std::move(r)]() mutable {
            t::wait_until([&] { return go.load(); });
            try {
                late_reply = r.reply_json(kAcceptAda) ? 1 : 0;
            } catch (...) {
                late_reply = 2;
            }
        });
        throw std::runtime_error("thrown after handing off");
    });
    auto e = EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
    go = true;
    workers.join();
    CHECK_CONTAINS(e.message(), "thrown after handing off");
    CHECK_EQ(late_reply.load(), 0);
}
