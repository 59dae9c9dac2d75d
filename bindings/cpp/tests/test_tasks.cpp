// The C++ binding's URL-mode elicitation handlers, the tasks extension (a task
// followed to its result with status events; answered by hand with update_task, then resumed;
// get and cancel by id; the call's timeout ending a task that stays working).
#include "harness.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

namespace {
mcp::Options with(const char* extra_json) {
    mcp::Options options;
    options.extra_json = extra_json;
    return options;
}

/// How many `method` requests the fixture's --record file holds.
int requests(const std::string& record, const std::string& method) {
    std::ifstream in(record);
    std::stringstream all;
    all << in.rdbuf();
    std::string text = all.str(), needle = "\"method\":\"" + method + "\"";
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}
}  // namespace

TEST(tasks, url_mode_handler_gets_the_url_request) {
    auto client = t::fixture();
    std::string seen;
    client.on_elicitation_modes(MCP_ELICITATION_URL, [&](const std::string& params) {
        seen = params;
        return std::string(R"({"action":"accept"})");
    });
    CHECK_EQ(t::text(client.call_tool("url_login")), std::string("url login: accept"));
    CHECK_CONTAINS(seen, "\"mode\":\"url\"");
    // URL mode alone is declared: the server never sends a form request, the call fails -32021
    // saying what would declare form mode, and the handler is not called.
    seen.clear();
    try {
        client.call_tool("elicit_once");
        CHECK(false);
    } catch (const mcp::CapabilityMissingError& e) {
        CHECK_CONTAINS(e.message(), "register an elicitation handler for form mode");
    }
    CHECK(seen.empty());
    // A handler with no mode could never be asked: refused.
    EXPECT_THROW(mcp::InvalidArgumentError,
                 client.on_elicitation_modes(0, [](const std::string&) { return std::string("{}"); }));
}

TEST(tasks, followed_with_status_events_then_by_hand) {
    // Declared before the client: status events run on its dispatcher thread until the client's
    // destructor has waited for them, so what they touch must outlive it.
    std::mutex lock;
    std::vector<std::string> events;
    auto client = t::fixture({}, with(R"({"tasks":true,"manual_input":["elicitation"]})"));
    client.on_task_status([&](const std::string& task) {
        std::lock_guard<std::mutex> g(lock);
        events.push_back(task);
    });
    CHECK_EQ(t::text(client.call_tool("task_echo", R"({"text":"cpp"})")), std::string("task: cpp"));
    std::string id;
    try {
        client.call_tool("task_input");
        CHECK(false);
    } catch (const mcp::InputRequiredError& e) {
        CHECK_CONTAINS(e.unanswered_json(), "\"confirm\"");
    }
    // Status events reach the listener on the dispatcher thread, possibly after the call threw.
    CHECK(t::wait_until([&] {
        std::lock_guard<std::mutex> g(lock);
        for (const auto& event : events) {
            if (event.find("\"input_required\"") != std::string::npos) id = mcp::json::string_at(event, "/taskId");
        }
        return !id.empty();
    }));
    client.update_task(id, R"({"confirm":{"action":"accept","content":{"confirmed":true}}})");
    // The fixture flags polls closer than its pollIntervalMs (a protocol rule, not thread sync).
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    CHECK_CONTAINS(t::text(client.resume_task(id)), "confirmed:");
    CHECK_CONTAINS(client.get_task(id), "\"completed\"");
    try {
        client.cancel_task("task-none");
        CHECK(false);
    } catch (const mcp::RpcError& e) {
        CHECK_EQ(e.code(), int64_t(-32602));
    }
}

TEST(tasks, a_call_timeout_ends_a_task_that_stays_working) {
    std::string record = "/tmp/mcp_cpp_task_timeout_" + std::to_string(getpid()) + ".jsonl";
    std::remove(record.c_str());
    auto client = t::fixture({"--record", record}, with(R"({"tasks":true})"));
    mcp::CallOptions options;
    options.timeout = std::chrono::milliseconds(400);
    options.max_total = std::chrono::milliseconds(6000);  // a safety cap
    auto start = std::chrono::steady_clock::now();
    auto e = EXPECT_THROW(mcp::TimeoutError, client.call_tool("task_stuck", "", options));
    long long took = t::elapsed_ms(start);
    CHECK(took >= 400 && took < 2500);
    CHECK_CONTAINS(std::string(e.what()), "timed out after 400 ms: the limit is this call's timeout");
    CHECK_CONTAINS(std::string(e.what()), "; tasks/cancel sent");
    CHECK_EQ(requests(record, "tasks/cancel"), 1);
    int gets = requests(record, "tasks/get");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_EQ(requests(record, "tasks/get"), gets);
    std::remove(record.c_str());
}
