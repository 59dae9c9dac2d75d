// The hub through mcp::Hub: fixture members over stdio and one that cannot start, the merged
// list, routed calls (blocking, callback, future), events, reload, and no process after close.
#include "harness.hpp"

#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <future>
#include <iterator>

namespace {
using namespace std::chrono_literals;

/// A fresh marker for one test's member processes (through their environment).
std::string new_mark() {
    static std::atomic<int> n{0};
    return "cpp-hub-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

/// Live processes whose environment holds MCP_HUB_TEST_MARK=mark.
int processes_with(const std::string& mark) {
    std::string needle = "MCP_HUB_TEST_MARK=" + mark + std::string(1, '\0');
    int n = 0;
    DIR* dir = opendir("/proc");
    if (!dir) return -1;
    while (dirent* e = readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::ifstream f(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
        std::string env((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (env.find(needle) != std::string::npos) n++;
    }
    closedir(dir);
    return n;
}

std::string member(const std::string& mark, const std::vector<std::string>& args = {}) {
    std::string list = "[";
    for (size_t i = 0; i < args.size(); i++) list += (i ? "," : "") + mcp::json::quote(args[i]);
    list += "]";
    return mcp::json::object({{"command", mcp::json::quote(t::fixture_path())},
                              {"args", list},
                              {"env", mcp::json::object({{"MCP_HUB_TEST_MARK", mcp::json::quote(mark)}})},
                              {"probe_timeout_ms", "500"},
                              {"shutdown_grace_ms", "500"}});
}

struct Events {
    std::mutex mutex;
    std::vector<std::string> items;
    void add(const std::string& e) {
        std::lock_guard<std::mutex> lock(mutex);
        items.push_back(e);
    }
    int count(const std::string& needle) {
        std::lock_guard<std::mutex> lock(mutex);
        int n = 0;
        for (const auto& e : items) n += e.find(needle) != std::string::npos;
        return n;
    }
};
}  // namespace

TEST(hub, merges_routes_and_survives_a_broken_member) {
    Events events;  // outlives the hub, whose destructor stops the listener
    std::string mark = new_mark();
    {
        mcp::Hub hub;
        hub.on_event([&](const std::string& e) { events.add(e); });
        hub.add_member("fix", member(mark));
        hub.add_member("old", member(mark, {"--era", "legacy"}));
        hub.add_member("missing", R"({"command":"/nonexistent/mcp-server"})");
        EXPECT_THROW(mcp::InvalidArgumentError, hub.add_member("fix", member(mark)));
        hub.start();
        std::string ms = hub.members();
        CHECK_EQ(mcp::json::string_at(ms, "/0/state"), std::string("connected"));
        CHECK_EQ(mcp::json::string_at(ms, "/1/era"), std::string("legacy"));
        CHECK_EQ(mcp::json::string_at(ms, "/2/state"), std::string("failed"));
        CHECK(mcp::json::find(ms, "/2/error").has_value());
        CHECK_EQ(processes_with(mark), 2);

        std::string tools = hub.list(mcp::ListKind::Tools);
        CHECK_CONTAINS(tools, "\"fix__echo\"");
        CHECK_CONTAINS(tools, "\"old__echo\"");
        CHECK_CONTAINS(tools, "\"mcp-client/server\":\"old\"");
        CHECK_EQ(t::text(hub.call_tool("old__echo", R"({"text":"routed"})")), std::string("routed"));
        CHECK_CONTAINS(hub.get_prompt("fix__greeting", R"({"name":"Cpp"})"), "Hello, Cpp!");
        CHECK_CONTAINS(hub.read_resource("fix", "fixture://static"), "static content");
        CHECK_CONTAINS(hub.list(mcp::ListKind::Resources), "fixture://static");
        auto unknown = EXPECT_THROW(mcp::InvalidArgumentError, hub.call_tool("fix__ecko"));
        CHECK_CONTAINS(std::string(unknown.what()), "fix__echo");
        CHECK(t::wait_until([&] { return events.count("\"state\":\"connected\"") == 2; }));

        hub.close();
        CHECK_EQ(processes_with(mark), 0);
        EXPECT_THROW(mcp::ClosedError, hub.list(mcp::ListKind::Tools));
        EXPECT_THROW(mcp::ClosedError, hub.call_tool("fix__echo", "", {}, mcp::use_future).get());
    }
}

TEST(hub, span_records_and_trace_context_cover_every_member) {
    Events records;  // outlives the hub
    std::string mark = new_mark();
    std::atomic<int> asked{0};
    mcp::Hub hub;
    hub.add_member("fix", member(mark));
    hub.on_span([&](const std::string& r) { records.add(r); });
    hub.set_trace_context([&] {
        asked++;
        return mcp::TraceContext{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", "cpp=hub"};
    });
    hub.start();
    hub.list(mcp::ListKind::Tools);
    int before = asked.load();
    std::string seen = hub.call_tool("fix__echo_meta");
    CHECK_EQ(asked.load(), before + 1);
    CHECK_CONTAINS(seen, "00f067aa0ba902b7");
    CHECK_CONTAINS(seen, "cpp=hub");
    // Delivered before the call returned, named by its member, under the context given.
    CHECK(records.count("\"name\":\"tools/call echo_meta\"") == 1);
    std::string last;
    {
        std::lock_guard<std::mutex> lock(records.mutex);
        last = records.items.back();
    }
    auto r = mcp::observe::parse_record(last);
    CHECK_EQ(r.name, std::string("tools/call echo_meta"));
    CHECK_EQ(r.attribute("mcp.server.name").value_or(""), std::string("fix"));
    CHECK_EQ(r.traceparent.value_or(""), std::string("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    // A member added later has them too.
    hub.set_member("late", member(mark));
    hub.call_tool("late__echo_meta");
    CHECK(t::wait_until([&] { return records.count("\"mcp.server.name\":\"late\"") >= 1; }));
    hub.on_span(nullptr);
    hub.set_trace_context(nullptr);
    int n = records.count("\"record\"");
    CHECK(hub.call_tool("fix__echo_meta").find("00f067aa0ba902b7") == std::string::npos);
    CHECK_EQ(records.count("\"record\""), n);
    hub.close();
    CHECK_EQ(processes_with(mark), 0);
}

TEST(hub, started_calls_events_and_reload) {
    Events events;
    std::string mark = new_mark();
    mcp::HubOptions options;
    options.separator = "-";
    mcp::Hub hub(options);
    hub.on_event([&](const std::string& e) { events.add(e); });
    hub.add_member("fix", member(mark));
    hub.start();

    // Futures and callbacks.
    CHECK_EQ(t::text(hub.call_tool("fix-echo", R"({"text":"f"})", {}, mcp::use_future).get()), std::string("f"));
    CHECK_CONTAINS(hub.get_prompt("fix-greeting", R"({"name":"Fut"})", {}, mcp::use_future).get(), "Hello, Fut!");
    CHECK_CONTAINS(hub.read_resource("fix", "fixture://static", {}, mcp::use_future).get(), "static content");
    std::promise<mcp::Outcome> got;
    hub.call_tool("fix-echo", R"({"text":"cb"})", {}, [&](mcp::Outcome o) { got.set_value(std::move(o)); });
    CHECK_EQ(t::text(got.get_future().get().get()), std::string("cb"));
    std::promise<mcp::Outcome> unknown;
    hub.call_tool("fix-nope", "", {}, [&](mcp::Outcome o) { unknown.set_value(std::move(o)); });
    CHECK_EQ(unknown.get_future().get().status, MCP_INVALID_ARG);

    // Cancelling a started call that never answers.
    std::promise<mcp::Outcome> hung;
    auto start = std::chrono::steady_clock::now();
    mcp::Call call = hub.call_tool("fix-hang", "", {}, [&](mcp::Outcome o) { hung.set_value(std::move(o)); });
    std::this_thread::sleep_for(100ms);
    call.cancel();
    CHECK_EQ(hung.get_future().get().status, MCP_CANCELLED);
    CHECK(t::elapsed_ms(start) < 3000);

    // A list_changed from the member reaches the listener with its server.
    hub.call_tool("fix-notify");
    CHECK(t::wait_until([&] { return events.count("\"type\":\"list_changed\"") > 0; }));
    CHECK(events.count("\"server\":\"fix\"") > 0);

    // Reload: a broken member, then fixed; removing it ends its process.
    std::string mark2 = new_mark();
    hub.set_member("later", R"({"command":"/nonexistent/mcp-server"})");
    CHECK_EQ(mcp::json::string_at(hub.members(), "/1/state"), std::string("failed"));
    hub.set_member("later", member(mark2));
    CHECK_EQ(mcp::json::string_at(hub.members(), "/1/state"), std::string("connected"));
    CHECK_EQ(t::text(hub.call_tool("later-echo", R"({"text":"back"})")), std::string("back"));
    hub.remove_member("later");
    CHECK_EQ(processes_with(mark2), 0);
    EXPECT_THROW(mcp::InvalidArgumentError, hub.remove_member("later"));
    CHECK_EQ(processes_with(mark), 1);

    // Moving keeps one owner; the destructor of the moved-to hub closes the member.
    mcp::Hub moved(std::move(hub));
    CHECK_CONTAINS(moved.list(mcp::ListKind::Tools), "\"fix-echo\"");
    moved = mcp::Hub();
    CHECK_EQ(processes_with(mark), 0);
}

TEST(hub, pick_string_input_offers_its_options) {
    std::string fix = mcp::json::quote(t::fixture_path());
    std::string vscode = R"({"inputs": [{"type": "pickString", "id": "era", "description": "Era", "options": ["legacy", "modern"]},
                                        {"type": "command", "id": "folder", "command": "extension.pickFolder"}],
        "servers": {"picked": {"command": )" + fix + R"(, "args": ["--era", "${input:era}"]},
                    "cmd": {"command": )" + fix + R"(, "args": ["${input:folder}"]}}})";
    for (std::string answer : {"legacy", "ancient"}) {
        std::vector<mcp::HubInput> asked;
        mcp::HubReadOptions read;
        read.on_input = [&](const mcp::HubInput& in) -> std::optional<std::string> {
            asked.push_back(in);
            return answer;
        };
        auto hub = mcp::Hub::from_text(vscode, {}, read);
        CHECK_EQ(asked.size(), size_t(1));
        CHECK_EQ(asked[0].options_json, std::string(R"(["legacy","modern"])"));
        CHECK_CONTAINS(hub.warnings(), "command");
        std::string members = hub.members();
        CHECK_CONTAINS(members, answer == "legacy" ? R"({"name":"picked","state":"idle")" : "not one of the input's options");
        CHECK_CONTAINS(members, R"({"name":"cmd","state":"failed")");
    }
}

TEST(hub, from_configuration_text_and_file) {
    std::string mark = new_mark();
    std::string vscode = R"({
        // VS Code's shape: an input the host is asked for, a comment and a trailing comma.
        "inputs": [{"type": "promptString", "id": "mark", "description": "Test mark", "password": true}],
        "servers": {"fix": {"type": "stdio", "command": )" + mcp::json::quote(t::fixture_path()) +
                         R"(, "env": {"MCP_HUB_TEST_MARK": "${input:mark}"}},},
    })";
    std::vector<mcp::HubInput> asked;
    mcp::HubReadOptions read;
    read.on_input = [&](const mcp::HubInput& in) -> std::optional<std::string> {
        asked.push_back(in);
        return mark;
    };
    {
        auto hub = mcp::Hub::from_text(vscode, {}, read);
        CHECK_EQ(asked.size(), size_t(1));
        CHECK_EQ(asked[0].id, std::string("mark"));
        CHECK(asked[0].password);
        hub.start();
        CHECK_EQ(processes_with(mark), 1);
    }
    CHECK_EQ(processes_with(mark), 0);

    // A Claude Desktop file on disk: another host's key is a warning; a reload adds a member.
    char dir[] = "/tmp/cpp-hub-XXXXXX";
    CHECK(mkdtemp(dir) != nullptr);
    std::string path = std::string(dir) + "/claude_desktop_config.json";
    auto write = [&](const std::string& text) { std::ofstream(path, std::ios::trunc) << text; };
    std::string fix = mcp::json::object({{"command", mcp::json::quote(t::fixture_path())}, {"autoApprove", R"(["echo"])"}});
    write(R"({"mcpServers": {"fix": )" + fix + "}}");
    mcp::HubOptions options;
    options.separator = "-";
    auto hub = mcp::Hub::from_file(path, options);
    CHECK_CONTAINS(hub.warnings(), "autoApprove");
    hub.start();
    CHECK_EQ(t::text(hub.call_tool("fix-echo", R"({"text":"file"})")), std::string("file"));
    write(R"({"mcpServers": {"fix": )" + fix + R"(, "two": {"command": )" + mcp::json::quote(t::fixture_path()) + "}}}");
    std::string report = hub.reload_from_file(path);
    CHECK_EQ(mcp::json::at(report, "/added"), std::string(R"(["two"])"));
    CHECK_EQ(mcp::json::at(report, "/unchanged"), std::string(R"(["fix"])"));
    EXPECT_THROW(mcp::InvalidArgumentError, hub.reload_from_text("{not json"));
    EXPECT_THROW(mcp::Error, mcp::Hub::from_file(std::string(dir) + "/missing.json"));
    hub.close();
    unlink(path.c_str());
    rmdir(dir);
}
