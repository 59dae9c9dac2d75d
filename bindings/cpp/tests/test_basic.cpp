// Connecting, lists, calls, prompts, resources, completion, and the error mapping.
#include "harness.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

TEST(basic, version_and_abi) {
    CHECK(mcp::abi_compatible());
    CHECK_CONTAINS(mcp::version(), "mcp_client/");
    CHECK_EQ(mcp::status_string(MCP_OK).empty(), false);
}

TEST(basic, status_names) {
    // The names are the constants' own; a value that is no status has a stable answer.
    const std::pair<mcp_status, const char*> some[] = {
        {MCP_OK, "MCP_OK"},
        {MCP_TIMEOUT, "MCP_TIMEOUT"},
        {MCP_CAPABILITY_MISSING, "MCP_CAPABILITY_MISSING"},
        {MCP_OUTPUT_SCHEMA_INVALID, "MCP_OUTPUT_SCHEMA_INVALID"},
        {MCP_PANIC, "MCP_PANIC"},
    };
    for (const auto& [status, name] : some) CHECK_EQ(std::string(mcp::status_name(status)), std::string(name));
    CHECK_EQ(std::string(mcp::status_name(12345)), std::string("MCP_UNKNOWN"));
    // An error says both: the constant's name and the English text.
    try {
        mcp::Config config(R"({"command": "x", "request_timeout": 5})");
        mcp::Client client(config);
        CHECK(false);
    } catch (const mcp::Error& e) {
        CHECK_EQ(std::string(e.status_name()), std::string("MCP_INVALID_ARG"));
        CHECK_EQ(std::string(e.status_text()), mcp::status_string(MCP_INVALID_ARG));
        CHECK_EQ(e.message(),
                 std::string("unknown configuration key \"request_timeout\"; did you mean \"request_timeout_ms\"?"));
    }
}

TEST(basic, json_helpers) {
    CHECK_EQ(mcp::json::quote("a\"b\\c\n\x01"), std::string("\"a\\\"b\\\\c\\n\\u0001\""));
    CHECK_EQ(mcp::json::quote("sté 🔑"), std::string("\"sté 🔑\""));
    CHECK_EQ(mcp::json::object({{"a", "1"}, {"b", mcp::json::quote("x")}}), std::string("{\"a\":1,\"b\":\"x\"}"));
    CHECK_EQ(mcp::json::object({}), std::string("{}"));
}

TEST(basic, connect_stdio_modern) {
    auto client = t::fixture();
    CHECK(client.era() == mcp::Era::None);
    EXPECT_THROW(mcp::NotConnectedError, client.server_info());
    std::string info = client.connect();
    CHECK_CONTAINS(info, "\"era\":\"modern\"");
    CHECK_CONTAINS(info, "2026-07-28");
    CHECK_CONTAINS(info, "mcp-fixture-server");
    CHECK_CONTAINS(info, "Fixture server for mcp_client tests.");
    CHECK(client.era() == mcp::Era::Modern);
    CHECK_EQ(client.server_info(), info);
    CHECK_EQ(client.connect(), info);  // idempotent
}

TEST(basic, config_builder) {
    mcp::Config config(R"({"request_timeout_ms": 5000})");
    config.command(t::fixture_path()).args({"--era", "modern"}).mode(mcp::Mode::Modern).env("MCP_CPP_TEST", "1");
    mcp::Client client(config);
    CHECK_CONTAINS(client.connect(), "\"era\":\"modern\"");
    // Unknown keys are rejected at client creation; bad JSON at config creation.
    auto bad = EXPECT_THROW(mcp::InvalidArgumentError, mcp::Config("{not json"));
    CHECK_EQ(bad.status(), MCP_INVALID_JSON);
    mcp::Config typo(R"({"comand": "x"})");
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::Client(typo));
}

TEST(basic, lazy_connect_on_first_call) {
    auto client = t::fixture();
    std::string r = client.call_tool("echo", R"({"text":"lazy"})");
    CHECK_CONTAINS(r, "\"text\":\"lazy\"");
    CHECK(client.era() == mcp::Era::Modern);
}

TEST(basic, lists_and_pagination) {
    auto client = t::fixture({"--page-size", "5"});
    std::string page1 = client.list(mcp::ListKind::Tools);
    CHECK_CONTAINS(page1, "\"nextCursor\":\"page-2\"");
    CHECK_CONTAINS(page1, "\"tools\"");
    std::string page2 = client.list(mcp::ListKind::Tools, std::string("page-2"));
    CHECK_CONTAINS(page2, "\"tools\"");
    CHECK(page1 != page2);
    auto bad = EXPECT_THROW(mcp::RpcError, client.list(mcp::ListKind::Tools, std::string("nope")));
    CHECK_EQ(bad.code(), -32602);
    CHECK_CONTAINS(bad.message(), "Invalid cursor");

    std::string all = client.list_all(mcp::ListKind::Tools);
    for (const char* tool : {"\"echo\"", "\"add\"", "\"elicit_once\"", "\"crash\"", "\"cancelled_ids\"", "\"end_listens\""})
        CHECK_CONTAINS(all, tool);
    CHECK_NOT_CONTAINS(all, "nextCursor");
    CHECK_CONTAINS(client.list_all(mcp::ListKind::Prompts), "\"greeting\"");
    CHECK_CONTAINS(client.list_all(mcp::ListKind::Resources), "fixture://static");
    CHECK_CONTAINS(client.list_all(mcp::ListKind::ResourceTemplates), "fixture://items/{id}");
}

TEST(basic, call_get_read_complete_request) {
    auto client = t::fixture();
    CHECK_CONTAINS(client.call_tool("add", R"({"a":2,"b":40})"), "\"text\":\"42\"");
    CHECK_CONTAINS(client.call_tool("echo", mcp::json::object({{"text", mcp::json::quote("quote \" and 🔑")}})),
                   "quote \\\" and 🔑");
    // A tool error is a result, not an exception.
    std::string failed = client.call_tool("fail");
    CHECK_CONTAINS(failed, "\"isError\":true");
    CHECK_CONTAINS(failed, "tool failed on purpose");

    CHECK_CONTAINS(client.get_prompt("greeting", R"({"name":"Ada"})"), "Hello, Ada!");
    CHECK_CONTAINS(client.get_prompt("plain"), "A plain prompt with no arguments.");
    CHECK_CONTAINS(client.read_resource("fixture://static"), "static content");
    CHECK_CONTAINS(client.read_resource("fixture://items/7"), "item 7");
    CHECK_CONTAINS(client.read_resource("fixture://binary"), "AAECAw==");
    auto missing = EXPECT_THROW(mcp::RpcError, client.read_resource("fixture://nope"));
    CHECK_EQ(missing.code(), -32602);
    CHECK(missing.data_json().has_value());
    CHECK_CONTAINS(*missing.data_json(), "fixture://nope");

    std::string completion = client.complete(
        R"({"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":"al"}})");
    CHECK_CONTAINS(completion, "alice");
    CHECK_CONTAINS(completion, "albert");
    CHECK_NOT_CONTAINS(completion, "bob");

    CHECK_CONTAINS(client.request("tools/list"), "\"echo\"");
    CHECK_CONTAINS(client.request("tools/call", R"({"name":"echo","arguments":{"text":"raw"}})"), "raw");
}

TEST(basic, call_options_meta_and_progress) {
    // State the callbacks touch is declared before the client, which is destroyed first (and
    // waits for any callback still running).
    t::Events notifications;
    auto client = t::fixture();
    mcp::CallOptions meta;
    meta.meta_json = R"({"com.example/trace":"abc"})";
    std::string echoed = client.call_tool("echo_meta", "", meta);
    CHECK_CONTAINS(echoed, "com.example/trace");
    CHECK_CONTAINS(echoed, "io.modelcontextprotocol/protocolVersion");

    client.on_notification([&](const std::string& method, const std::string& params) {
        notifications.push(method + " " + params);
    });
    std::vector<mcp::Progress> seen;  // the call is synchronous: progress runs before it returns
    std::mutex seen_mutex;
    mcp::CallOptions o;
    o.log_level = "info";
    o.on_progress = [&](const mcp::Progress& p) {
        std::lock_guard<std::mutex> lock(seen_mutex);
        seen.push_back(p);
    };
    CHECK_CONTAINS(client.call_tool("progress", R"({"steps":3,"delay_ms":20})", o), "progress done");
    // Progress callbacks never run after the call returns; each step is 20 ms apart, so all ran.
    {
        std::lock_guard<std::mutex> lock(seen_mutex);
        CHECK_EQ(seen.size(), size_t(3));
        CHECK_EQ(seen[0].progress, 1.0);
        CHECK_EQ(seen[2].progress, 3.0);
        CHECK(seen[2].total.has_value());
        CHECK_EQ(*seen[2].total, 3.0);
        CHECK(seen[1].message.has_value());
        CHECK_EQ(*seen[1].message, std::string("step 2"));
    }
    CHECK(notifications.wait_for("progress tool ran"));
    CHECK_CONTAINS(notifications.joined(), "notifications/message");
}

TEST(basic, progress_callback_exception_is_contained) {
    auto client = t::fixture();
    mcp::CallOptions o;
    o.on_progress = [](const mcp::Progress&) { throw std::runtime_error("progress listener failure"); };
    CHECK_CONTAINS(client.call_tool("progress", R"({"steps":2,"delay_ms":1})", o), "progress done");
}

TEST(basic, listener_exceptions_are_contained) {
    std::atomic<int> calls{0};
    auto client = t::fixture();
    client.on_notification([&](const std::string&, const std::string&) {
        calls++;
        throw std::runtime_error("listener failure");
    });
    mcp::CallOptions o;
    o.log_level = "info";
    CHECK_CONTAINS(client.call_tool("progress", R"({"steps":1,"delay_ms":1})", o), "progress done");
    CHECK(t::wait_until([&] { return calls.load() >= 1; }));
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"still fine"})"), "still fine");
}

TEST(basic, log_listener_gets_server_stderr) {
    t::Events lines;
    auto client = t::fixture({"--stderr-banner", "hello from the C++ test"});
    client.on_log([&](const std::string& level, const std::string& source, const std::string& message) {
        lines.push(level + "|" + source + "|" + message);
    });
    client.connect();
    CHECK(lines.wait_for("hello from the C++ test"));
    CHECK(lines.wait_for("info|stderr|"));
    client.on_log(nullptr);  // removing is allowed
    client.on_notification(nullptr);
}

TEST(basic, error_rpc_error) {
    auto client = t::fixture();
    auto e = EXPECT_THROW(mcp::RpcError, client.call_tool("rpc_error"));
    CHECK_EQ(e.status(), MCP_JSONRPC_ERROR);
    CHECK_EQ(e.code(), -32050);
    CHECK_CONTAINS(e.message(), "fixture error");
    CHECK(e.data_json().has_value());
    CHECK_CONTAINS(*e.data_json(), "\"detail\":\"on purpose\"");
    CHECK_CONTAINS(e.what(), "fixture error");
    CHECK(e.jsonrpc_message().has_value() && *e.jsonrpc_message() == "fixture error");
    // Still usable afterwards.
    CHECK_CONTAINS(client.call_tool("echo", R"({"text":"after"})"), "after");
    auto unknown = EXPECT_THROW(mcp::RpcError, client.call_tool("no_such_tool"));
    CHECK_EQ(unknown.code(), -32602);
}

TEST(basic, error_server_crash) {
    auto client = t::fixture();
    client.connect();
    auto start = std::chrono::steady_clock::now();
    auto e = EXPECT_THROW(mcp::ServerExitedError, client.call_tool("crash"));
    CHECK(t::elapsed_ms(start) < 5000);
    CHECK_EQ(e.status(), MCP_SERVER_EXITED);
    CHECK(e.is_transport());
    CHECK_CONTAINS(e.message(), "status 7");
    CHECK_CONTAINS(e.message(), "crashing on purpose");  // the stderr tail
    // Later calls fail at once with the same cause rather than hang.
    start = std::chrono::steady_clock::now();
    auto later = EXPECT_THROW(mcp::ServerExitedError, client.call_tool("echo", R"({"text":"x"})"));
    CHECK_CONTAINS(later.message(), "status 7");
    CHECK(t::elapsed_ms(start) < 1000);
}

TEST(basic, error_invalid_input) {
    auto client = t::fixture();
    auto e = EXPECT_THROW(mcp::InvalidArgumentError, client.call_tool("echo", "{broken"));
    CHECK_EQ(e.status(), MCP_INVALID_JSON);
    auto u = EXPECT_THROW(mcp::InvalidArgumentError, client.call_tool("echo", "{\"text\":\"\xff\"}"));
    CHECK_EQ(u.status(), MCP_INVALID_UTF8);
    auto modern_ping = EXPECT_THROW(mcp::UnsupportedError, client.ping());
    CHECK_EQ(modern_ping.status(), MCP_UNSUPPORTED);
}

TEST(basic, error_timeout) {
    auto client = t::fixture();
    client.connect();
    mcp::CallOptions o;
    o.timeout = 200ms;
    auto start = std::chrono::steady_clock::now();
    auto e = EXPECT_THROW(mcp::TimeoutError, client.call_tool("hang", "", o));
    CHECK(t::elapsed_ms(start) < 3000);
    CHECK_EQ(e.status(), MCP_TIMEOUT);
    CHECK(e.is_transport());
    // The server was told (stdio: notifications/cancelled).
    CHECK(t::wait_until([&] { return client.call_tool("cancelled_ids").find("[]") == std::string::npos; }));
}

TEST(basic, error_missing_server) {
    auto client = mcp::Client::stdio("/nonexistent/mcp-server-for-cpp-tests");
    bool threw = false;
    try {
        client.connect();
    } catch (const mcp::Error& e) {
        threw = true;
        CHECK(e.status() != MCP_OK);
    }
    CHECK(threw);
}

TEST(basic, json_pointer_helpers) {
    const std::string doc = R"({"content":[{"type":"text","text":"Hello, \"Ada\"!"}],"n":3,"a/b":true})";
    CHECK_EQ(mcp::json::string_at(doc, "/content/0/text"), std::string("Hello, \"Ada\"!"));
    CHECK_EQ(mcp::json::at(doc, "/n"), std::string("3"));
    CHECK_EQ(mcp::json::at(doc, "/a~1b"), std::string("true"));
    CHECK(!mcp::json::find(doc, "/missing").has_value());
    CHECK(!mcp::json::find_string(doc, "/n").has_value());  // not a string
    CHECK_EQ(mcp::json::find_string(doc, "/content/0/type").value_or(""), std::string("text"));
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::json::at(doc, "/missing"));
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::json::string_at(doc, "/n"));
    auto bad = EXPECT_THROW(mcp::InvalidArgumentError, mcp::json::find("{oops", ""));
    CHECK_EQ(bad.status(), MCP_INVALID_JSON);
    // Round trip through quote/object.
    std::string built = mcp::json::object({{"text", mcp::json::quote("line\nbreak \"q\" \\ 🔑")}});
    CHECK_EQ(mcp::json::string_at(built, "/text"), std::string("line\nbreak \"q\" \\ 🔑"));
}

TEST(basic, span_listener) {
    // Declared before the client: spans arrive on its dispatcher thread until its destructor.
    std::mutex lock;
    std::vector<std::string> spans;
    auto client = t::fixture();
    client.on_span([&](const std::string& span) {
        std::lock_guard<std::mutex> g(lock);
        spans.push_back(span);
    });
    client.call_tool("echo", R"({"text":"s"})");
    // Delivered before the call returned: the connect the call made first, then the call.
    CHECK_EQ(spans.size(), size_t(2));
    client.call_tool("fail");
    std::lock_guard<std::mutex> g(lock);
    CHECK_EQ(spans.size(), size_t(3));
    CHECK_EQ(mcp::json::string_at(spans[0], "/name"), std::string("server/discover"));
    CHECK_EQ(mcp::json::string_at(spans[1], "/name"), std::string("tools/call echo"));
    CHECK_CONTAINS(spans[1], "\"gen_ai.tool.name\":\"echo\"");
    CHECK_CONTAINS(spans[1], "\"network.transport\":\"pipe\"");
    CHECK_NOT_CONTAINS(spans[1], "error.type");
    CHECK_EQ(mcp::json::string_at(spans[2], "/name"), std::string("tools/call fail"));
    CHECK_CONTAINS(spans[2], "\"error.type\":\"tool_error\"");
    client.on_span(nullptr);
}

TEST(basic, span_records_parsed) {
    std::mutex lock;
    std::vector<mcp::observe::Record> records;
    auto client = t::fixture();
    client.on_span([&](const std::string& json) {
        std::lock_guard<std::mutex> g(lock);
        records.push_back(mcp::observe::parse_record(json));
        if (records.back().name == "tools/call fail") throw std::runtime_error("swallowed");
    });
    const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    mcp::CallOptions traced;
    traced.meta_json = R"({"traceparent":")" + parent + R"(","tracestate":"rojo=1"})";
    client.call_tool("echo", R"({"text":"s"})", traced);
    client.call_tool("fail");
    client.call_tool("state_only");
    client.close();
    CHECK(t::wait_until([&] {
        std::lock_guard<std::mutex> g(lock);
        return records.size() == 5;
    }));
    std::lock_guard<std::mutex> g(lock);
    using Kind = mcp::observe::Record::Kind;
    // The connect the first call made: its handshake, with the call's parent.
    const auto& handshake = records[0];
    CHECK_EQ(handshake.name, std::string("server/discover"));
    CHECK_EQ(handshake.traceparent.value_or(""), parent);
    const auto& echo = records[1];
    CHECK(echo.kind == Kind::Span);
    CHECK_EQ(echo.name, std::string("tools/call echo"));
    CHECK_EQ(echo.attribute("mcp.method.name").value_or(""), std::string("tools/call"));
    CHECK_EQ(echo.attribute("gen_ai.tool.name").value_or(""), std::string("echo"));
    CHECK(!echo.error && !echo.attribute("error.type"));
    CHECK_EQ(echo.traceparent.value_or(""), parent);
    CHECK_EQ(echo.tracestate.value_or(""), std::string("rojo=1"));
    CHECK(echo.end_unix_nano >= echo.start_unix_nano && echo.start_unix_nano > 0);
    CHECK_EQ(std::string(echo.metric_name()), std::string("mcp.client.operation.duration"));
    bool has_id = false, has_method = false;
    for (const auto& [key, value] : echo.metric_attributes()) {
        has_id = has_id || key == "jsonrpc.request.id";
        has_method = has_method || (key == "mcp.method.name" && value == "\"tools/call\"");
    }
    CHECK(has_method && !has_id);
    const auto& fail = records[2];
    CHECK(fail.error);
    CHECK_EQ(fail.attribute("error.type").value_or(""), std::string("tool_error"));
    CHECK_EQ(fail.status_message, std::string("tool_error"));
    CHECK(!fail.traceparent);
    const auto& rounds = records[3];
    CHECK_EQ(rounds.events.size(), size_t(2));
    CHECK_EQ(rounds.events[1].name, std::string("mcp.mrtr.round"));
    CHECK_CONTAINS(rounds.events[1].attributes_json, "\"mcp.mrtr.round\":2");
    const auto& session = records[4];
    CHECK(session.kind == Kind::Session && !session.error);
    CHECK_EQ(std::string(session.metric_name()), std::string("mcp.client.session.duration"));
    CHECK_EQ(session.attribute("network.transport").value_or(""), std::string("pipe"));
    CHECK_EQ(mcp::observe::duration_buckets().size(), size_t(14));
    CHECK(mcp::observe::parse_record(R"({"record":"later"})").kind == Kind::Other);
}

TEST(basic, trace_context_source) {
    auto client = t::fixture();
    const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    int asked = 0;
    std::thread::id asked_on;
    client.set_trace_context([&] {
        ++asked;
        asked_on = std::this_thread::get_id();
        return mcp::TraceContext{parent, "rojo=1", "k=v"};
    });
    std::string echoed = client.call_tool("echo_meta");
    CHECK_CONTAINS(echoed, "\"traceparent\":\"" + parent + "\"");
    CHECK_CONTAINS(echoed, "\"tracestate\":\"rojo=1\"");
    CHECK_CONTAINS(echoed, "\"baggage\":\"k=v\"");
    CHECK_EQ(asked, 1);
    CHECK(asked_on == std::this_thread::get_id());
    client.set_trace_context([] { return mcp::TraceContext{"not-a-traceparent", "", ""}; });
    bool threw = false;
    try {
        client.call_tool("echo_meta");
    } catch (const mcp::Error& e) {
        threw = true;
        CHECK_EQ(e.status(), MCP_INVALID_ARG);
    }
    CHECK(threw);
    client.set_trace_context(nullptr);
    CHECK_NOT_CONTAINS(client.call_tool("echo_meta"), "traceparent");
}
