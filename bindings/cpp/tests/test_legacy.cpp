// The legacy era (`--era legacy`): initialize, ping, logging/setLevel, resource subscriptions,
// roots notifications, and real server->client requests answered by the same C++ handlers.
#include "harness.hpp"

#include <atomic>
#include <thread>

using namespace std::chrono_literals;

namespace {
mcp::Client legacy_client() { return t::fixture({"--era", "legacy"}); }
const char* kAcceptAda = R"({"action":"accept","content":{"name":"Ada"}})";
}  // namespace

TEST(legacy, connect_ping_and_era) {
    auto client = legacy_client();
    std::string info = client.connect();
    CHECK(client.era() == mcp::Era::Legacy);
    CHECK_CONTAINS(info, "\"era\":\"legacy\"");
    CHECK_CONTAINS(info, "2025-11-25");
    client.ping();
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"legacy"})"), "legacy");
    CHECK_NOT_CONTAINS(client.call_tool("echo", R"({"text":"legacy"})"), "resultType");
}

TEST(legacy, pinned_mode_and_version) {
    mcp::Options o;
    o.mode = mcp::Mode::Legacy;
    auto client = t::fixture({}, o);
    client.connect();
    CHECK(client.era() == mcp::Era::Legacy);

    mcp::Options v;
    v.protocol_version = "2025-06-18";
    auto pinned = t::fixture({}, v);
    CHECK_CONTAINS(pinned.connect(), "2025-06-18");
    CHECK(pinned.era() == mcp::Era::Legacy);
}

TEST(legacy, server_requests_use_the_handlers) {
    t::Workers workers;
    auto client = legacy_client();
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    client.on_roots([](const std::string&) { return std::string(R"({"roots":[{"uri":"file:///legacy"}]})"); });
    client.on_sampling([&](const std::string&, mcp::Responder r) {
        workers.spawn([r = std::move(r)]() mutable {
            r.reply_json(R"({"role":"assistant","content":{"type":"text","text":"legacy sample"},"model":"m"})");
        });
    });
    CHECK_CONTAINS(client.call_tool("elicit_once"), "Hello, Ada!");
    CHECK_CONTAINS(client.call_tool("roots"), "roots: file:///legacy");
    CHECK_CONTAINS(client.call_tool("sample_only"), "sampled: legacy sample");
    CHECK_CONTAINS(client.call_tool("ping_client"), "client answered ping");
    workers.join();
}

TEST(legacy, handler_exception_reaches_the_server) {
    auto client = legacy_client();
    client.on_elicitation([](const std::string&) -> std::string { throw std::runtime_error("legacy boom"); });
    // Legacy: the server receives the JSON-RPC error; the tool reports it as a tool error.
    std::string r = client.call_tool("elicit_once");
    CHECK_CONTAINS(r, "\"isError\":true");
    CHECK_CONTAINS(r, "client error");
    CHECK_CONTAINS(r, "legacy boom");
}

TEST(legacy, without_capability_the_server_does_not_ask) {
    auto client = legacy_client();
    std::string r = client.call_tool("elicit_once");
    CHECK_CONTAINS(r, "client lacks elicitation");
}

TEST(legacy, log_level_subscribe_and_roots_changed) {
    t::Events notes;
    auto client = legacy_client();
    client.on_notification([&](const std::string& method, const std::string& params) { notes.push(method + " " + params); });
    client.connect();
    client.set_log_level("debug");
    CHECK_CONTAINS(client.call_tool("log_level"), "debug");

    client.subscribe_resource("fixture://static");
    CHECK_CONTAINS(client.call_tool("touch", R"({"uri":"fixture://static"})"), "touched");
    CHECK(notes.wait_for("notifications/resources/updated"));
    CHECK_CONTAINS(notes.joined(), "fixture://static");
    client.unsubscribe_resource("fixture://static");

    CHECK_CONTAINS(client.call_tool("notify"), "notified");
    CHECK(notes.wait_for("notifications/tools/list_changed"));
    CHECK(notes.wait_for("notifications/message"));

    // Without a roots handler the client declared no roots capability: nothing is sent.
    client.notify_roots_changed();
    CHECK_CONTAINS(client.call_tool("roots_changed_count"), "\"text\":\"0\"");
}

TEST(legacy, roots_changed_with_roots_handler) {
    auto client = legacy_client();
    client.on_roots([](const std::string&) { return std::string(R"({"roots":[]})"); });
    client.connect();
    client.notify_roots_changed();
    client.notify_roots_changed();
    CHECK(t::wait_until([&] { return client.call_tool("roots_changed_count").find("\"text\":\"2\"") != std::string::npos; }));
}

TEST(legacy, modern_only_features) {
    auto client = legacy_client();
    client.connect();
    bool threw = false;
    try {
        auto sub = client.listen(R"({"toolsListChanged":true})");
    } catch (const mcp::Error&) {
        threw = true;
    }
    CHECK(threw);
    client.notify_roots_changed();  // fine in both eras
}
