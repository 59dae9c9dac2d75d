// Issue 14's faults that live in this binding: a NUL byte in a std::string argument would end
// the C string early (a name, URI or requestState silently cut short), so it is refused.
#include "harness.hpp"

using namespace std::string_literals;

TEST(faults, nul_in_string_arguments_is_refused_before_sending) {
    auto client = t::fixture({"--era", "modern"});
    auto e1 = EXPECT_THROW(mcp::Error, client.call_tool("echo\0evil"s, R"({"text":"x"})"));
    CHECK_EQ(e1.status(), MCP_INVALID_ARG);
    CHECK_CONTAINS(e1.message(), "NUL byte");
    auto e2 = EXPECT_THROW(mcp::Error, client.read_resource("file:///a\0/etc/passwd"s));
    CHECK_EQ(e2.status(), MCP_INVALID_ARG);
    mcp::CallOptions manual;
    manual.request_state = "ab\0cd"s;
    auto e3 = EXPECT_THROW(mcp::Error, client.call_tool("elicit_once", "", manual));
    CHECK_EQ(e3.status(), MCP_INVALID_ARG);
    // Inside JSON U+0000 is escaped and travels whole.
    auto res = client.call_tool("echo", R"({"text":"echo\u0000evil"})");
    CHECK_CONTAINS(res, R"(echo\u0000evil)");
}
