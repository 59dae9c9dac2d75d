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
