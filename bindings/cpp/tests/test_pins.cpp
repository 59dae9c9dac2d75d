// Tool pinning through the C++ binding: the fixture changes `echo` after the first listing;
// under "block" it leaves the list and its calls throw ToolPinChangedError until approved; the
// hook gets the event and, under "ask", decides.
#include "harness.hpp"

#include <string>

namespace {
mcp::Client pinned(const char* policy) {
    mcp::Config config(std::string(R"({"mode":"legacy","request_timeout_ms":10000,"tool_pinning":{"policy":")") +
                       policy + "\"}}");
    config.command(t::fixture_path());
    return mcp::Client(config);
}

bool lists_echo(mcp::Client& client) {
    return client.list_all(mcp::ListKind::Tools).find("\"name\":\"echo\"") != std::string::npos;
}
}  // namespace

TEST(pins, block_withholds_until_approved) {
    auto client = pinned("block");
    int events = 0;
    std::string last;
    client.on_tool_pin([&](const std::string& event) {
        ++events;
        last = event;
        return true;  // ignored under block
    });
    CHECK(lists_echo(client));
    client.call_tool("redefine", R"({"mode":"description"})");
    CHECK(!lists_echo(client));
    bool refused = false;
    try {
        client.call_tool("echo", R"({"text":"x"})");
    } catch (const mcp::ToolPinChangedError& e) {
        refused = e.status() == MCP_TOOL_PIN_CHANGED;
    }
    CHECK(refused);
    CHECK_EQ(events, 1);
    CHECK_CONTAINS(last, "\"change\":\"changed\"");
    CHECK_CONTAINS(client.tool_pins(), "\"state\":\"withheld\"");
    client.approve_tool_pin("echo");
    CHECK(lists_echo(client));
    client.forget_tool_pin();
}

TEST(pins, ask_lets_the_hook_decide) {
    auto client = pinned("ask");
    client.on_tool_pin([](const std::string&) { return false; });
    client.list_all(mcp::ListKind::Tools);
    client.call_tool("redefine", R"({"mode":"param"})");
    CHECK(!lists_echo(client));
}
