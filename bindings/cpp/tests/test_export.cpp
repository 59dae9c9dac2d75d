// Tools for the model: the fixture's tools exported, a faked model reply's calls found and made.
#include "harness.hpp"

TEST(model, export_find_and_dispatch) {
    auto client = t::fixture();
    std::string exported = mcp::model::export_tools(client.list_all(mcp::ListKind::Tools), R"({"format":"gemini"})");
    CHECK_CONTAINS(exported, "\"parametersJsonSchema\"");
    std::string reply = R"({"candidates":[{"content":{"role":"model","parts":[
        {"functionCall":{"id":"g1","name":"add","args":{"a":2,"b":3}}},
        {"functionCall":{"id":"g2","name":"add","args":{"a":"two"}}}]}}]})";
    std::string calls = mcp::model::find_calls(exported, reply);
    std::string sum = client.dispatch_tool_call(exported, mcp::json::at(calls, "/0"));
    CHECK_EQ(sum, std::string(R"({"functionResponse":{"id":"g1","name":"add","response":{"result":5}}})"));
    std::string refused = client.dispatch_tool_call(exported, mcp::json::at(calls, "/1"));
    CHECK_CONTAINS(refused, "\"error\"");
    CHECK_CONTAINS(refused, "is missing");
    // The started form: the same message through a future.
    std::future<std::string> started =
        client.dispatch_tool_call(exported, mcp::json::at(calls, "/0"), "", mcp::CallOptions(), mcp::use_future);
    CHECK_EQ(started.get(), sum);
    std::string converted = mcp::model::result_message(exported, mcp::json::at(calls, "/0"),
                                                       R"({"content":[{"type":"text","text":"done"}]})");
    CHECK_CONTAINS(converted, "{\"output\":\"done\"}");
    EXPECT_THROW(mcp::InvalidArgumentError, mcp::model::export_tools("[]", R"({"format":"cohere"})"));
}

// A hub of two fixture members, one of each era, the legacy one's filter withholding "add": its
// merged list exported, each call made on the member its name routes to (blocking and through a
// future); a withheld or unknown name is a message the model reads.
TEST(model, hub_dispatch) {
    std::string fx = mcp::json::quote(t::fixture_path());
    auto hub = mcp::Hub::from_text(R"({"mcpServers": {"new": {"command": )" + fx +
                                   R"(, "args": ["--era", "modern"]}, "old": {"command": )" + fx +
                                   R"(, "args": ["--era", "legacy"], "mcp_client": {"tools": {"deny": ["add"]}}}}})");
    hub.start();
    std::string exported = mcp::model::export_tools(hub.list(mcp::ListKind::Tools), R"({"format":"anthropic"})");
    CHECK_CONTAINS(exported, R"("old__echo":{"server":"old","tool":"echo")");
    auto call = [](const std::string& name, const std::string& input) {
        return R"({"type":"tool_use","id":"toolu_1","name":")" + name + R"(","input":)" + input + "}";
    };
    CHECK_CONTAINS(hub.dispatch_tool_call(exported, call("old__echo", R"({"text":"from old"})")), "from old");
    CHECK_CONTAINS(hub.dispatch_tool_call(exported, call("new__echo_meta", "{}")), "2026-07-28");
    CHECK(hub.dispatch_tool_call(exported, call("old__echo_meta", "{}")).find("2026-07-28") == std::string::npos);
    for (const char* name : {"old__add", "nobody__echo"}) {
        std::string refused = hub.dispatch_tool_call(exported, call(name, R"({"a":1,"b":2})"));
        CHECK_CONTAINS(refused, "\"is_error\":true");
        CHECK_CONTAINS(refused, "There is no tool named");
    }
    std::future<std::string> started = hub.dispatch_tool_call(exported, call("new__add", R"({"a":2,"b":3})"), "",
                                                              mcp::CallOptions(), mcp::use_future);
    CHECK_CONTAINS(started.get(), R"({"type":"text","text":"5"})");
}
