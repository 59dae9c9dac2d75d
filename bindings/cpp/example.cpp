// A short tour of the C++ binding. Usage: example <server command> [args...]
// (written for the bundled fixture server: `make example`).
#include "mcp_client.hpp"

#include <iostream>
#include <thread>

static std::string text_of(const std::string& result) { return mcp::json::string_at(result, "/content/0/text"); }

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: " << argv[0] << " <server command> [args...]\n";
        return 2;
    }
    std::vector<std::thread> ui;  // declared before the client, which is destroyed first
    int status = 0;
    try {
        auto client = mcp::Client::stdio(argv[1], std::vector<std::string>(argv + 2, argv + argc));

        // Elicitations are answered later, from another thread (as a UI would).
        client.on_elicitation([&ui](const std::string& params_json, mcp::Responder responder) {
            std::cout << "server asks: " << mcp::json::string_at(params_json, "/message") << "\n";
            ui.emplace_back([r = std::move(responder)]() mutable {
                r.reply_json(R"({"action":"accept","content":{"name":"Ada"}})");
            });
        });

        std::string info = client.connect();
        std::cout << "connected to " << mcp::json::string_at(info, "/serverInfo/name") << " ("
                  << mcp::json::string_at(info, "/era") << " era)\n";
        std::cout << "first tool: " << mcp::json::string_at(client.list_all(mcp::ListKind::Tools), "/tools/0/name") << "\n";
        std::cout << text_of(client.call_tool("echo", mcp::json::object({{"text", mcp::json::quote("hi")}}))) << "\n";
        std::cout << text_of(client.call_tool("elicit_once")) << "\n";  // MRTR, answered by the handler

        client.on_elicitation(nullptr);  // now drive MRTR by hand
        try {
            client.call_tool("elicit_once");
        } catch (const mcp::InputRequiredError& e) {
            std::cout << "input required: " << e.input_requests_json() << "\n";
            mcp::CallOptions retry;
            retry.input_responses_json = R"({"name":{"action":"accept","content":{"name":"Grace"}}})";
            retry.request_state = e.request_state();
            std::cout << text_of(client.call_tool("elicit_once", "", retry)) << "\n";
        }
    } catch (const mcp::RpcError& e) {
        std::cerr << "server error " << e.code() << ": " << e.message() << "\n";
        status = 1;
    } catch (const mcp::Error& e) {
        std::cerr << e.what() << "\n";
        status = 1;
    }
    for (auto& t : ui) t.join();
    return status;
}
