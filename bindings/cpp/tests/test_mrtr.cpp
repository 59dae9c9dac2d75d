// Multi Round-Trip Requests: automatic (lambdas answer each round) and manual driving.
#include "harness.hpp"

#include <atomic>
#include <thread>

using namespace std::chrono_literals;

namespace {

// The requestStates the fixture issues (tests/fixture-server/README.md); `\n` is a literal
// backslash followed by `n`.
const std::string kElicitOnceState =
    "st\xc3\xa9:1 {\"flow\":\"elicit_once\",\"round\":1,\"values\":[]} +/=\\n \xf0\x9f\x94\x91#4bf93ac3968345b1";
const std::string kThreeRounds1 =
    "st\xc3\xa9:1 {\"flow\":\"three_rounds\",\"round\":1,\"values\":[]} +/=\\n \xf0\x9f\x94\x91#3ca41149c919ad5b";
const std::string kThreeRounds2a =
    "st\xc3\xa9:2 {\"flow\":\"three_rounds\",\"round\":2,\"values\":[\"a\"]} +/=\\n \xf0\x9f\x94\x91#786de8b116c83101";
const std::string kRootsState =
    "st\xc3\xa9:1 {\"flow\":\"roots\",\"round\":1,\"values\":[]} +/=\\n \xf0\x9f\x94\x91#834eeac450e06050";
const std::string kPromptState =
    "st\xc3\xa9:1 {\"flow\":\"prompt:needs_input\",\"round\":1,\"values\":[]} +/=\\n \xf0\x9f\x94\x91#6f3148e0fcc9ec09";

const char* kAcceptAda = R"({"action":"accept","content":{"name":"Ada"}})";

// Input answered by hand is declared ("manual_input"): the fixture, like the SDK servers, asks
// only for declared input.
mcp::Options manual(const char* kinds = R"(["elicitation","sampling","roots"])") {
    mcp::Options options;
    options.extra_json = std::string(R"({"manual_input":)") + kinds + "}";
    return options;
}

}  // namespace

TEST(mrtr, auto_elicit_once_full_handler) {
    t::Events params;
    std::atomic<bool> pending{false}, cancelled{true}, accepted{false};
    auto client = t::fixture();
    // (CHECK throws, so handlers record what they saw and the test checks it afterwards.)
    client.on_elicitation([&](const std::string& p, mcp::Responder r) {
        params.push(p);
        pending = r.pending();
        cancelled = r.is_cancelled();
        accepted = r.reply_json(kAcceptAda);
    });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
    CHECK(pending.load());
    CHECK(!cancelled.load());
    // reply_json's return value is stored after the call may already have returned.
    CHECK(t::wait_until([&] { return accepted.load(); }));
    CHECK_EQ(params.size(), size_t(1));
    CHECK_CONTAINS(params.joined(), "What is your name?");
    CHECK_CONTAINS(params.joined(), "requestedSchema");
}

TEST(mrtr, auto_elicit_once_simple_handler) {
    auto client = t::fixture();
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
    // Declining explicitly.
    client.on_elicitation([](const std::string&, mcp::Responder r) { r.decline(); });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, stranger (declined)"));
    // std::function objects work too.
    mcp::SimpleInputHandler cancel = [](const std::string&) { return std::string(R"({"action":"cancel"})"); };
    client.on_elicitation(cancel);
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, stranger (cancelled)"));
}

TEST(mrtr, auto_three_rounds) {
    std::atomic<int> n{0};
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&) {
        int i = ++n;
        return std::string(R"({"action":"accept","content":{"value":"v)") + std::to_string(i) + "\"}}";
    });
    CHECK_EQ(t::text(client.call_tool("three_rounds")), std::string("steps: v1,v2,v3"));
    CHECK_EQ(n.load(), 3);
}

TEST(mrtr, auto_elicit_and_sample) {
    t::Events methods;
    auto client = t::fixture();
    client.on_elicitation([&](const std::string& p) {
        methods.push("elicitation " + p);
        return std::string(R"({"action":"accept","content":{"confirmed":true}})");
    });
    client.on_sampling([&](const std::string& p, mcp::Responder r) {
        methods.push("sampling " + p);
        r.reply_json(R"({"role":"assistant","content":{"type":"text","text":"A fine summary"},"model":"cpp-test"})");
    });
    CHECK_EQ(t::text(client.call_tool("elicit_and_sample")), std::string("confirm=accept; summary=A fine summary"));
    CHECK_CONTAINS(methods.joined(), "Summarise the fixture");
    CHECK_EQ(methods.size(), size_t(2));
}

// Options::sampling_tools declares sampling.tools: tools and toolChoice reach the handler, its
// tool_use answer reaches the server (SEP-1577), on both eras; an unoffered tool fails the call.
TEST(mrtr, sampling_with_tools) {
    for (const char* era : {"modern", "legacy"}) {
        t::Events seen;
        mcp::Options options;
        options.sampling_tools = true;
        auto client = t::fixture({"--era", era}, options);
        client.on_sampling([&](const std::string& p) {
            seen.push(p);
            if (p.find(R"("toolChoice":{"mode":"none"})") != std::string::npos)
                return std::string(R"({"role":"assistant","model":"m","content":{"type":"text","text":"mild"}})");
            return std::string(R"({"role":"assistant","model":"m","stopReason":"toolUse","content":[)"
                               R"({"type":"tool_use","id":"cpp-1","name":"get_weather","input":{"city":"Paris"}}]})");
        });
        CHECK_EQ(t::text(client.call_tool("sample_with_tools")),
                 std::string(R"(weather: mild; tool get_weather({"city":"Paris"}) id cpp-1)"));
        CHECK_EQ(seen.size(), size_t(2));
        CHECK_CONTAINS(seen.joined(), R"("name":"get_weather")");
        CHECK_CONTAINS(seen.joined(), R"("toolUseId":"cpp-1")");
    }
    mcp::Options options;
    options.sampling_tools = true;
    auto client = t::fixture({}, options);
    client.on_sampling([](const std::string&) {
        return std::string(R"({"role":"assistant","model":"m","content":{"type":"tool_use","id":"x","name":"rm_rf","input":{}}})");
    });
    std::string message;
    try {
        client.call_tool("sample_with_tools");
    } catch (const mcp::Error& e) {
        message = e.what();
    }
    CHECK_CONTAINS(message, "which the request did not offer");
}

// MCP Apps: each tool's UI link, a verified view (blocking and future), the checks a view
// fails, and app-only tools kept out of the export.
TEST(mrtr, apps) {
    for (const char* era : {"modern", "legacy"}) {
        mcp::Options options;
        options.extra_json = R"({"apps":true})";
        auto client = t::fixture({"--apps", "--era", era}, options);
        std::string tools = client.list_all(mcp::ListKind::Tools);
        CHECK_CONTAINS(mcp::apps::tool_ui(R"({"name":"a","_meta":{"ui":{"resourceUri":"ui://x","visibility":["app"]}}})"),
                       R"("model":false)");
        CHECK_EQ(mcp::apps::tool_ui(R"({"name":"plain"})"), std::string("null"));
        CHECK_CONTAINS(client.read_app("ui://fixture/weather"), "weather app</body>");
        CHECK_CONTAINS(client.read_app("ui://fixture/blob", 0, mcp::CallOptions(), mcp::use_future).get(),
                       "weather app</body>");
        std::string message;
        try {
            client.read_app("ui://fixture/plain-html");
        } catch (const mcp::Error& e) {
            message = e.what();
        }
        CHECK_CONTAINS(message, "text/html;profile=mcp-app");
        std::string exported = mcp::model::export_tools(tools);
        CHECK_CONTAINS(exported, R"("name":"weather_app")");
        CHECK(exported.find(R"("name":"refresh_app")") == std::string::npos);
    }
}

TEST(mrtr, auto_roots) {
    auto client = t::fixture();
    client.on_roots([](const std::string&) {
        return std::string(R"({"roots":[{"uri":"file:///a","name":"a"},{"uri":"file:///b"}]})");
    });
    CHECK_EQ(t::text(client.call_tool("roots")), std::string("roots: file:///a,file:///b"));
}

TEST(mrtr, auto_prompt_and_resource) {
    auto client = t::fixture();
    client.on_elicitation([](const std::string& p) {
        if (p.find("topic") != std::string::npos)
            return std::string(R"({"action":"accept","content":{"topic":"C++"}})");
        return std::string(R"({"action":"accept","content":{"password":"hunter2"}})");
    });
    CHECK_CONTAINS(client.get_prompt("needs_input"), "Topic: C++");
    CHECK_CONTAINS(client.read_resource("fixture://needs-input"), "secret accepted");
}

TEST(mrtr, manual_elicit_once) {
    auto client = t::fixture({}, manual());
    auto e = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("elicit_once"));
    CHECK_EQ(e.status(), MCP_INPUT_REQUIRED);
    CHECK(e.request_state().has_value());
    CHECK_EQ(*e.request_state(), kElicitOnceState);  // byte for byte
    CHECK_CONTAINS(e.input_requests_json(), "\"name\"");
    CHECK_CONTAINS(e.input_requests_json(), "elicitation/create");
    CHECK_CONTAINS(e.result_json(), "input_required");

    mcp::CallOptions retry;
    retry.input_responses_json = std::string(R"({"name":)") + kAcceptAda + "}";
    retry.request_state = e.request_state();
    CHECK_EQ(t::text(client.call_tool("elicit_once", "", retry)), std::string("Hello, Ada!"));

    // A state that is not byte-exact is refused by the server.
    retry.request_state = kElicitOnceState.substr(0, kElicitOnceState.size() - 1);
    auto bad = EXPECT_THROW(mcp::RpcError, client.call_tool("elicit_once", "", retry));
    CHECK_EQ(bad.code(), -32602);
}

TEST(mrtr, manual_three_rounds) {
    auto client = t::fixture({}, manual());
    auto r1 = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("three_rounds"));
    CHECK_EQ(r1.request_state().value_or(""), kThreeRounds1);
    CHECK_CONTAINS(r1.input_requests_json(), "step1");

    mcp::CallOptions o;
    o.input_responses_json = R"({"step1":{"action":"accept","content":{"value":"a"}}})";
    o.request_state = r1.request_state();
    auto r2 = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("three_rounds", "", o));
    CHECK_EQ(r2.request_state().value_or(""), kThreeRounds2a);
    CHECK_CONTAINS(r2.input_requests_json(), "step2");

    o.input_responses_json = R"({"step2":{"action":"decline"}})";
    o.request_state = r2.request_state();
    auto r3 = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("three_rounds", "", o));
    CHECK_CONTAINS(r3.input_requests_json(), "step3");

    o.input_responses_json = R"({"step3":{"action":"accept","content":{"value":"c"}}})";
    o.request_state = r3.request_state();
    CHECK_EQ(t::text(client.call_tool("three_rounds", "", o)), std::string("steps: a,(decline),c"));
}

TEST(mrtr, manual_roots_prompt_and_no_state) {
    auto client = t::fixture({}, manual());
    auto roots = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("roots"));
    CHECK_EQ(roots.request_state().value_or(""), kRootsState);
    mcp::CallOptions o;
    o.input_responses_json = R"({"roots":{"roots":[{"uri":"file:///manual"}]}})";
    o.request_state = roots.request_state();
    CHECK_EQ(t::text(client.call_tool("roots", "", o)), std::string("roots: file:///manual"));

    auto prompt = EXPECT_THROW(mcp::InputRequiredError, client.get_prompt("needs_input"));
    CHECK_EQ(prompt.request_state().value_or(""), kPromptState);
    o.input_responses_json = R"({"topic":{"action":"accept","content":{"topic":"manual"}}})";
    o.request_state = prompt.request_state();
    CHECK_CONTAINS(client.get_prompt("needs_input", "", o), "Topic: manual");

    auto nostate = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("no_state"));
    CHECK(!nostate.request_state().has_value());
    mcp::CallOptions o2;
    o2.input_responses_json = R"({"ok":{"action":"accept","content":{"ok":true}}})";
    CHECK_EQ(t::text(client.call_tool("no_state", "", o2)), std::string("no state ok"));
}

TEST(mrtr, missing_handler_for_one_method) {
    // An elicitation handler alone cannot answer elicit_and_sample: nothing runs, the whole
    // request set comes back.
    std::atomic<int> calls{0};
    auto client = t::fixture({}, manual(R"(["sampling"])"));
    client.on_elicitation([&](const std::string&) {
        calls++;
        return std::string(R"({"action":"accept","content":{"confirmed":true}})");
    });
    auto e = EXPECT_THROW(mcp::InputRequiredError, client.call_tool("elicit_and_sample"));
    CHECK_CONTAINS(e.input_requests_json(), "confirm");
    CHECK_CONTAINS(e.input_requests_json(), "summary");
    CHECK_CONTAINS(e.unanswered_json(), "summary");  // sampling is answered by hand
    CHECK(e.unanswered_json().find("\"confirm\"") == std::string::npos);
    CHECK_EQ(calls.load(), 0);
}

TEST(mrtr, state_only_rounds) {
    auto client = t::fixture();
    CHECK_EQ(t::text(client.call_tool("state_only")), std::string("done after 2 state-only rounds"));
}

TEST(mrtr, rounds_exceeded) {
    mcp::Options options;
    options.max_input_rounds = 3;
    std::atomic<int> calls{0};
    auto client = t::fixture({}, options);
    client.on_elicitation([&](const std::string&) {
        calls++;
        return std::string(R"({"action":"accept","content":{"value":"x"}})");
    });
    auto e = EXPECT_THROW(mcp::RoundsExceededError, client.call_tool("always_input"));
    CHECK_EQ(e.status(), MCP_INPUT_ROUNDS_EXCEEDED);
    CHECK(e.request_state().has_value());
    CHECK_EQ(e.request_state()->rfind("loop-", 0), size_t(0));
    CHECK_CONTAINS(e.input_requests_json(), "again");
    CHECK_CONTAINS(e.result_json(), "input_required");
    CHECK(calls.load() >= 3);
    CHECK(calls.load() <= 4);
    // Not an InputRequiredError: manual-retry code must not catch it by accident.
    const mcp::Error& base = e;
    CHECK(dynamic_cast<const mcp::InputRequiredError*>(&base) == nullptr);
    CHECK(dynamic_cast<const mcp::InputRequestsError*>(&base) != nullptr);
}

TEST(mrtr, handler_throws_becomes_handler_error) {
    auto client = t::fixture();
    client.on_elicitation([](const std::string&, mcp::Responder) { throw std::runtime_error("boom from C++"); });
    auto e = EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
    CHECK_EQ(e.status(), MCP_HANDLER_FAILED);
    CHECK_CONTAINS(e.message(), "boom from C++");

    client.on_elicitation([](const std::string&) -> std::string { throw 42; });  // not a std::exception
    EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));

    // The client is still usable.
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
}

TEST(mrtr, handler_reply_error_and_bad_json) {
    std::atomic<bool> threw{false};
    auto client = t::fixture();
    client.on_elicitation([](const std::string&, mcp::Responder r) { r.reply_error(-32001, "user said no"); });
    auto e = EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
    CHECK_CONTAINS(e.message(), "user said no");

    // Unusable JSON: reply_json throws in the handler, the input fails.
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        try {
            r.reply_json("not json");
        } catch (const mcp::InvalidArgumentError&) {
            threw = true;
        }
    });
    EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
    // The call may return before the handler's catch block runs on the dispatcher thread.
    CHECK(t::wait_until([&] { return threw.load(); }));

    // A simple handler returning bad JSON fails the input the same way.
    client.on_elicitation([](const std::string&) { return std::string("[1,2]"); });
    EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
}

TEST(mrtr, handler_returning_without_reply_fails_promptly) {
    auto client = t::fixture();
    client.on_elicitation([](const std::string&, mcp::Responder) { /* dropped */ });
    auto start = std::chrono::steady_clock::now();
    auto e = EXPECT_THROW(mcp::HandlerError, client.call_tool("elicit_once"));
    CHECK(t::elapsed_ms(start) < 3000);
    CHECK_CONTAINS(e.message(), "without replying");
}

TEST(mrtr, double_reply_throws_already_used) {
    std::atomic<bool> second_threw{false}, still_pending{true};
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        r.reply_json(kAcceptAda);
        still_pending = r.pending();
        try {
            r.reply_json(kAcceptAda);
        } catch (const mcp::AlreadyUsedError&) {
            second_threw = true;
        }
    });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
    CHECK(t::wait_until([&] { return second_threw.load(); }));
    CHECK(!still_pending.load());
}

TEST(mrtr, reentrant_call_from_handler) {
    std::atomic<int> status{-1};
    auto client = t::fixture();
    client.on_elicitation([&](const std::string&, mcp::Responder r) {
        try {
            client.list(mcp::ListKind::Tools);
            status = 0;
        } catch (const mcp::ReentrantCallError& e) {
            status = e.status();
        }
        r.reply_json(kAcceptAda);
    });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
    CHECK_EQ(status.load(), MCP_REENTRANT_CALL);
}

TEST(mrtr, unregister_handler) {
    auto client = t::fixture();
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    client.on_elicitation(nullptr);
    EXPECT_THROW(mcp::CapabilityMissingError, client.call_tool("elicit_once"));  // nothing declared
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
    client.on_elicitation(mcp::InputHandler());  // an empty std::function unregisters too
    EXPECT_THROW(mcp::CapabilityMissingError, client.call_tool("elicit_once"));  // nothing declared
}

TEST(mrtr, capability_required) {
    auto client = t::fixture({"--require-elicitation"});
    auto e = EXPECT_THROW(mcp::CapabilityMissingError, client.call_tool("elicit_once"));
    CHECK_EQ(e.status(), MCP_CAPABILITY_MISSING);
    CHECK(e.data_json().has_value());
    CHECK_CONTAINS(*e.data_json(), "elicitation");
    client.on_elicitation([](const std::string&) { return std::string(kAcceptAda); });
    CHECK_EQ(t::text(client.call_tool("elicit_once")), std::string("Hello, Ada!"));
}
