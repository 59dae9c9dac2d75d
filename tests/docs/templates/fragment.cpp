// Template for ```cpp fragment blocks (tests/docs/check.py): the block is the body of main, with
// stand-ins for what a host application provides (a browser, a pending-login list, a keychain).
#include "mcp_client.hpp"

#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

static void open_in_browser(const std::string& url) { std::cout << "open " << url << "\n"; }

struct Keychain {
    std::map<std::string, std::string> items;
    std::optional<std::string> find(const std::string& k) const {
        auto it = items.find(k);
        return it == items.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    void put(const std::string& k, const std::string& v) { items[k] = v; }
    void erase(const std::string& k) { items.erase(k); }
};

static std::vector<mcp::AuthResponder> pending_logins;
static Keychain keychain;

int main() {
    {{BODY}}

    return 0;
}
