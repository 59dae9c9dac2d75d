// The C ABI faults that live in this binding: a NUL byte in a std::string argument would end
// the C string early (a name, URI or requestState silently cut short), so it is refused.
#include "harness.hpp"

#include <cstdio>
#include <fstream>
#include <optional>
#include <thread>

#include <unistd.h>

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

// A client destroyed by a C++ thread_local's destructor (the thread's
// thread-locals, tokio's among them, are being torn down) still closes its server gracefully.
// The server runs under sh, which records "exit 0" only when the fixture ended on stdin EOF.
TEST(faults, client_destroyed_by_a_thread_local_closes_gracefully) {
    std::string marker = "/tmp/mcp-cpp-faults-" + std::to_string(::getpid()) + "-tls";
    std::remove(marker.c_str());
    std::thread([&] {
        thread_local std::optional<mcp::Client> holder;
        holder.emplace(mcp::Client::stdio("/bin/sh", {"-c", "\"$0\"; echo exit $? > \"$1\"", t::fixture_path(), marker}));
        CHECK_CONTAINS(holder->call_tool("echo", R"({"text":"x"})"), "x");
    }).join();
    std::ifstream in(marker);
    std::string line;
    std::getline(in, line);
    std::remove(marker.c_str());
    CHECK_EQ(line, std::string("exit 0"));
}
