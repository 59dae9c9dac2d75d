// Issue 17 through the C++ binding: URL-mode elicitation handlers, the tasks extension (a task
// followed to its result with status events; answered by hand with update_task, then resumed;
// get and cancel by id).
#include "harness.hpp"

#include <mutex>
#include <vector>

namespace {
mcp::Options with(const char* extra_json) {
    mcp::Options options;
    options.extra_json = extra_json;
    return options;
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
