// Started calls through the C++ overloads: callbacks, std::future, cancel, close with calls in
// flight, and host-loop mode (completions only inside Client::dispatch on this thread).
#include "harness.hpp"

#include <poll.h>

#include <atomic>
#include <future>

namespace {
using namespace std::chrono_literals;

struct Tally {
    std::mutex mutex;
    std::condition_variable cv;
    int done = 0, ok = 0, cancelled = 0, closed = 0, other = 0;
    std::vector<std::string> results;
    void add(const mcp::Outcome& o) {
        std::lock_guard<std::mutex> lock(mutex);
        done++;
        if (o.ok()) {
            ok++;
            results.push_back(o.result);
        } else if (o.status == MCP_CANCELLED) {
            cancelled++;
        } else if (o.status == MCP_CLOSED) {
            closed++;
        } else {
            other++;
        }
        cv.notify_all();
    }
    bool wait(int n, std::chrono::milliseconds bound = 5000ms) {
        std::unique_lock<std::mutex> lock(mutex);
        return cv.wait_for(lock, bound, [&] { return done >= n; });
    }
};
}  // namespace

TEST(async, callback_and_future_overloads) {
    Tally tally;  // before the client, which outlives every completion callback's last touch
    auto client = t::fixture();
    auto info = client.connect(mcp::CallOptions(), mcp::use_future).get();
    CHECK_CONTAINS(info, "\"era\":\"modern\"");
    std::vector<mcp::Call> calls;
    for (int i = 0; i < 64; i++) {
        calls.push_back(client.call_tool("echo", mcp::json::object({{"text", mcp::json::quote(std::to_string(i))}}), {},
                                         [&](mcp::Outcome o) { tally.add(o); }));
    }
    CHECK(tally.wait(64));
    CHECK_EQ(tally.ok, 64);
    for (auto& c : calls) CHECK(c.done());
    CHECK_EQ(t::text(client.call_tool("echo", R"({"text":"f"})", {}, mcp::use_future).get()), std::string("f"));
    CHECK_CONTAINS(client.list(mcp::ListKind::Tools, std::nullopt, {}, mcp::use_future).get(), "\"echo\"");
    CHECK_CONTAINS(client.list_all(mcp::ListKind::Prompts, {}, mcp::use_future).get(), "\"prompts\"");
    CHECK_CONTAINS(client.get_prompt("greeting", R"({"name":"Ann"})", {}, mcp::use_future).get(), "Ann");
    CHECK_CONTAINS(client.read_resource("fixture://static", {}, mcp::use_future).get(), "fixture://static");
    CHECK_CONTAINS(client.complete(R"({"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":"al"}})",
                                   {}, mcp::use_future)
                       .get(),
                   "alice");
    CHECK_CONTAINS(client.request("tools/call", R"({"name":"add","arguments":{"a":2,"b":3}})", {}, mcp::use_future).get(),
                   "5");
    // Errors arrive as the blocking call's exception classes.
    auto rpc = client.call_tool("rpc_error", "", {}, mcp::use_future);
    EXPECT_THROW(mcp::RpcError, rpc.get());
    // Bad arguments throw at once and start nothing.
    EXPECT_THROW(mcp::InvalidArgumentError, client.call_tool("echo", "{", {}, [&](mcp::Outcome o) { tally.add(o); }));
}

TEST(async, ping_and_log_level_started) {
    Tally tally;
    auto legacy = t::fixture({"--era", "legacy"});
    legacy.connect(mcp::CallOptions(), mcp::use_future).get();
    CHECK_EQ(legacy.ping(mcp::CallOptions(), mcp::use_future).get(), std::string("{}"));
    CHECK_EQ(t::text(legacy.call_tool("log_level")), std::string("unset"));
    // An unknown level throws at once and starts nothing.
    EXPECT_THROW(mcp::InvalidArgumentError, legacy.set_log_level("loud", {}, mcp::use_future));
    mcp::Call c = legacy.set_log_level("debug", {}, [&](mcp::Outcome o) { tally.add(o); });
    CHECK(tally.wait(1));
    CHECK_EQ(tally.ok, 1);
    CHECK_EQ(t::text(legacy.call_tool("log_level")), std::string("debug"));
    // Modern servers removed ping: the future carries UnsupportedError.
    auto modern = t::fixture();
    modern.connect();
    auto ping = modern.ping(mcp::CallOptions(), mcp::use_future);
    EXPECT_THROW(mcp::UnsupportedError, ping.get());
}

TEST(async, cancel_and_close) {
    Tally tally;
    auto client = t::fixture();
    client.connect();
    mcp::Call c = client.call_tool("hang", "", {}, [&](mcp::Outcome o) { tally.add(o); });
    c.cancel();
    CHECK(tally.wait(1));
    CHECK_EQ(tally.cancelled, 1);
    c.cancel();  // after completion: nothing
    auto fut = client.call_tool("hang", "", {}, mcp::use_future);
    for (int i = 0; i < 10; i++) client.call_tool("hang", "", {}, [&](mcp::Outcome o) { tally.add(o); });
    client.close();
    CHECK(tally.wait(11));
    CHECK_EQ(tally.closed, 10);
    EXPECT_THROW(mcp::ClosedError, fut.get());
    EXPECT_THROW(mcp::ClosedError, client.call_tool("echo", "", {}, [&](mcp::Outcome o) { tally.add(o); }));
}

TEST(async, host_loop_runs_completions_on_this_thread) {
    auto me = std::this_thread::get_id();
    std::atomic<int> off_thread{0};
    Tally tally;
    auto client = t::fixture();
    int fd = client.use_host_loop();
    CHECK(fd >= 0);
    for (int i = 0; i < 32; i++) {
        client.call_tool("echo", R"({"text":"x"})", {}, [&](mcp::Outcome o) {
            if (std::this_thread::get_id() != me) off_thread++;
            tally.add(o);
        });
    }
    auto start = std::chrono::steady_clock::now();
    while (tally.done < 32 && t::elapsed_ms(start) < 5000) {
        pollfd p{fd, POLLIN, 0};
        poll(&p, 1, 100);
        client.dispatch();
    }
    CHECK_EQ(tally.ok, 32);
    CHECK_EQ(off_thread.load(), 0);
}

// The started forms of the tasks, skills, listen and legacy subscription calls (callback and
// future overloads), against the fixture.
TEST(async, tasks_skills_listen_and_legacy_started) {
    std::mutex lock;
    std::vector<std::string> events;
    mcp::Options options;
    options.extra_json = R"({"tasks":true,"manual_input":["elicitation"]})";
    auto client = t::fixture({}, options);
    client.on_task_status([&](const std::string& task) {
        std::lock_guard<std::mutex> g(lock);
        events.push_back(task);
    });
    EXPECT_THROW(mcp::InputRequiredError, client.call_tool("task_input", "", {}, mcp::use_future).get());
    std::string id;
    CHECK(t::wait_until([&] {
        std::lock_guard<std::mutex> g(lock);
        for (const auto& event : events) {
            if (event.find("\"input_required\"") != std::string::npos) id = mcp::json::string_at(event, "/taskId");
        }
        return !id.empty();
    }));
    CHECK_EQ(client.update_task(id, R"({"confirm":{"action":"accept","content":{"confirmed":true}}})", {},
                                mcp::use_future)
                 .get(),
             std::string("{}"));
    std::this_thread::sleep_for(60ms);  // the fixture flags polls closer than its pollIntervalMs
    CHECK_CONTAINS(t::text(client.resume_task(id, {}, mcp::use_future).get()), "confirmed:");
    CHECK_CONTAINS(client.get_task(id, {}, mcp::use_future).get(), "\"completed\"");
    EXPECT_THROW(mcp::RpcError, client.cancel_task("task-none", {}, mcp::use_future).get());
    Tally tally;
    client.get_task(id, {}, [&](mcp::Outcome o) { tally.add(o); });
    CHECK(tally.wait(1));
    CHECK_EQ(tally.ok, 1);

    mcp::Options skilled;
    skilled.extra_json = R"({"skills":true})";
    auto skills = t::fixture({"--skills", "genuine"}, skilled);
    CHECK_CONTAINS(skills.list_skills({}, mcp::use_future).get(), "hello-world");
    std::string entry = skills.get_skill("skill://fixture/hello-world/SKILL.md", {}, mcp::use_future).get();
    CHECK_CONTAINS(skills.read_skill_file(entry, std::nullopt, {}, mcp::use_future).get(), "Say hello");
    EXPECT_THROW(mcp::SkillVerificationError,
                 skills.read_skill_file(entry, std::string("skill://fixture/hello-world/other.md"), {}, mcp::use_future)
                     .get());

    auto modern = t::fixture();
    mcp::Subscription sub = modern.listen(R"({"toolsListChanged":true})", {}, mcp::use_future).get();
    CHECK_CONTAINS(sub.acknowledged(), "toolsListChanged");
    CHECK(!sub.next(30ms, mcp::use_future).get().has_value());  // nothing yet: a timeout
    auto next = sub.next(std::nullopt, mcp::use_future);
    modern.call_tool("notify");
    CHECK_CONTAINS(next.get().value_or(""), "notifications/tools/list_changed");
    // The callback form; then a listen refused by a legacy server hands over an empty subscription.
    std::promise<bool> listened;
    modern.listen(R"({"toolsListChanged":true})", {}, [&](mcp::Subscription s, std::exception_ptr error) {
        listened.set_value(bool(s) && !error);
    });
    CHECK(listened.get_future().get());
    auto legacy = t::fixture({"--era", "legacy"});
    EXPECT_THROW(mcp::UnsupportedError, legacy.listen(R"({"toolsListChanged":true})", {}, mcp::use_future).get());
    CHECK_EQ(legacy.subscribe_resource("fixture://static", {}, mcp::use_future).get(), std::string("{}"));
    CHECK_EQ(legacy.unsubscribe_resource("fixture://static", {}, mcp::use_future).get(), std::string("{}"));
    CHECK_EQ(legacy.notify_roots_changed(mcp::use_future).get(), std::string("{}"));
    EXPECT_THROW(mcp::InvalidArgumentError, modern.listen("[1]", {}, mcp::use_future));
}
