// The C++ binding's response caching (a second tools/list within the TTL sends
// nothing; bypass, partition, clear, client-wide off) and output schema validation
// (OutputSchemaError with the raw result; off per call and per client).
#include "harness.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {
int tools_lists(const std::string& record) {
    std::ifstream in(record);
    std::stringstream all;
    all << in.rdbuf();
    std::string text = all.str();
    int n = 0;
    for (size_t at = text.find("\"tools/list\""); at != std::string::npos; at = text.find("\"tools/list\"", at + 1)) ++n;
    return n;
}

std::string record_path(const char* tag) {
    std::string path = std::string("/tmp/mcp_cpp_") + tag + "_" + std::to_string(getpid()) + ".jsonl";
    std::remove(path.c_str());
    return path;
}
}  // namespace

TEST(cache, second_list_within_ttl_sends_nothing) {
    std::string record = record_path("cache");
    auto client = t::fixture({"--cache-ttl-ms", "60000", "--record", record});
    std::string first = client.list(mcp::ListKind::Tools);
    CHECK_EQ(client.list(mcp::ListKind::Tools), first);
    CHECK_EQ(tools_lists(record), 1);
    mcp::CallOptions bypass;
    bypass.cache_mode = MCP_CACHE_BYPASS;
    client.list(mcp::ListKind::Tools, std::nullopt, bypass);
    CHECK_EQ(tools_lists(record), 2);
    client.set_cache_partition("user-b");
    client.list(mcp::ListKind::Tools);
    CHECK_EQ(tools_lists(record), 3);
    client.clear_cache();
    client.list(mcp::ListKind::Tools);
    CHECK_EQ(tools_lists(record), 4);
    std::remove(record.c_str());

    std::string off_record = record_path("cache_off");
    mcp::Config config(R"({"response_cache_max_entries":8})");
    config.command(t::fixture_path()).arg("--cache-ttl-ms").arg("60000").arg("--record").arg(off_record);
    config.response_cache(false);
    mcp::Client off(config);
    off.list(mcp::ListKind::Tools);
    off.list(mcp::ListKind::Tools);
    CHECK_EQ(tools_lists(off_record), 2);
    std::remove(off_record.c_str());
}

TEST(cache, output_schema_validation) {
    auto client = t::fixture();
    CHECK_CONTAINS(client.call_tool("typed", R"({"value":5})"), "\"result\":5");
    auto e = EXPECT_THROW(mcp::OutputSchemaError, client.call_tool("typed", R"({"value":"five"})"));
    CHECK_EQ(e.status(), MCP_OUTPUT_SCHEMA_INVALID);
    CHECK_CONTAINS(std::string(e.what()), "/result");
    CHECK_CONTAINS(e.result_json(), "\"five\"");
    mcp::CallOptions skip;
    skip.validate_output = false;
    CHECK_CONTAINS(client.call_tool("typed", R"({"value":"five"})", skip), "\"five\"");

    mcp::Config config;
    config.command(t::fixture_path()).validate_output_schema(false);
    mcp::Client off(config);
    CHECK_CONTAINS(off.call_tool("typed", R"({"value":"five"})"), "\"five\"");
}
