// The dist-test host in C++ (mcp_client.hpp from the installed include/): calls the fixture
// server's `echo` tool and checks the answer.
#include <iostream>

#include "mcp_client.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " FIXTURE\n";
        return 2;
    }
    try {
        auto client = mcp::Client::stdio(argv[1]);
        std::string result = client.call_tool("echo", R"({"text":"hello from C++"})");
        std::string text = mcp::json::string_at(result, "/content/0/text");
        bool ok = text == "hello from C++";
        std::cout << (ok ? "ok: " : "WRONG ANSWER: ") << text << "\n";
        return ok ? 0 : 1;
    } catch (const mcp::Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
