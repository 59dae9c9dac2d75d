// The runner, the watchdog and the fixture helpers (see harness.hpp).
#include "harness.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#ifndef MCP_FIXTURE_DEFAULT
#define MCP_FIXTURE_DEFAULT "../../target/debug/mcp-fixture-server"
#endif

namespace t {

std::vector<TestCase>& registry() {
    static std::vector<TestCase> tests;
    return tests;
}

void fail(const char* file, int line, const std::string& reason) {
    const char* base = std::strrchr(file, '/');
    throw Failure{std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " + reason};
}

std::string fixture_path() {
    const char* env = std::getenv("MCP_FIXTURE");
    return env && *env ? env : MCP_FIXTURE_DEFAULT;
}

mcp::Client fixture(const std::vector<std::string>& args, mcp::Options options) {
    return mcp::Client::stdio(fixture_path(), args, options);
}

long long elapsed_ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// ---- HTTP fixture ---------------------------------------------------------------------------

HttpFixture::HttpFixture(const std::vector<std::string>& extra_args) {
    // stdout: a pipe we read the URL from. stdin: a pipe we keep open, because in HTTP mode the
    // fixture exits when its stdin reaches EOF (closing it is the graceful stop).
    int fds[2], in[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        error_ = std::string("pipe: ") + std::strerror(errno);
        return;
    }
    if (pipe2(in, O_CLOEXEC) != 0) {
        error_ = std::string("pipe: ") + std::strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return;
    }
    std::string path = fixture_path();
    std::vector<std::string> argv_s = {path, "--http", "127.0.0.1:0"};
    argv_s.insert(argv_s.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(&a[0]);
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    close(in[0]);
    if (rc != 0) {
        close(fds[0]);
        close(in[1]);
        error_ = std::string("posix_spawn: ") + std::strerror(rc);
        return;
    }
    pid_ = pid;
    stdin_fd_ = in[1];

    // Read stdout (bounded) until the "listening on" line.
    std::string out;
    const std::string marker = "fixture: listening on ";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
        auto nl = out.find('\n', out.find(marker) == std::string::npos ? out.size() : out.find(marker));
        if (out.find(marker) != std::string::npos && nl != std::string::npos) {
            auto at = out.find(marker) + marker.size();
            url_ = out.substr(at, nl - at);
            while (!url_.empty() && (url_.back() == '\r' || url_.back() == ' ')) url_.pop_back();
            break;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            error_ = "no \"listening on\" line within 5 s; stdout: " + out;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        int n = poll(&p, 1, static_cast<int>(left.count()));
        if (n <= 0) continue;
        char buf[512];
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got <= 0) {
            // stdout closed: the fixture is exiting; its status says why.
            int status = 0;
            if (waitpid(pid_, &status, 0) == pid_) {
                pid_ = -1;
                error_ = "the fixture exited (status " +
                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ") without listening";
            } else {
                error_ = "the fixture closed stdout without listening";
            }
            break;
        }
        out.append(buf, static_cast<size_t>(got));
    }
    close(fds[0]);
}

HttpFixture::~HttpFixture() {
    if (stdin_fd_ >= 0) close(stdin_fd_);  // EOF: the fixture exits on its own
    if (pid_ <= 0) return;
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
}

}  // namespace t

// ---- runner ---------------------------------------------------------------------------------

namespace {

std::mutex g_watch_mutex;
std::string g_current;
std::chrono::steady_clock::time_point g_started;
std::atomic<bool> g_done{false};

long long test_bound_ms() {
    const char* slow = std::getenv("MCP_TEST_SLOW");
    return (slow && *slow && std::string(slow) != "0") ? 120000 : 30000;
}

void watchdog() {
    while (!g_done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::lock_guard<std::mutex> lock(g_watch_mutex);
        if (!g_current.empty() && t::elapsed_ms(g_started) > test_bound_ms()) {
            std::printf("not ok - %s: still running after %lld ms (watchdog)\n", g_current.c_str(), test_bound_ms());
            std::fflush(stdout);
            std::_Exit(2);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    std::thread dog(watchdog);
    int passed = 0, failed = 0;
    for (const auto& tc : t::registry()) {
        // Arguments select tests by substring; a leading '-' excludes instead ("-bugs/").
        bool any_include = false, included = false, excluded = false;
        for (int i = 1; i < argc; i++) {
            std::string arg = argv[i];
            if (!arg.empty() && arg[0] == '-') {
                if (tc.name.find(arg.substr(1)) != std::string::npos) excluded = true;
            } else {
                any_include = true;
                if (tc.name.find(arg) != std::string::npos) included = true;
            }
        }
        if (excluded || (any_include && !included)) continue;
        {
            std::lock_guard<std::mutex> lock(g_watch_mutex);
            g_current = tc.name;
            g_started = std::chrono::steady_clock::now();
        }
        std::string reason;
        try {
            tc.fn();
        } catch (const t::Failure& f) {
            reason = f.reason;
        } catch (const std::exception& e) {
            reason = std::string("unexpected exception ") + typeid(e).name() + ": " + e.what();
        } catch (...) {
            reason = "unexpected non-std exception";
        }
        long long ms;
        {
            std::lock_guard<std::mutex> lock(g_watch_mutex);
            ms = t::elapsed_ms(g_started);
            g_current.clear();
        }
        if (reason.empty()) {
            passed++;
            if (std::getenv("MCP_TEST_TIMES"))
                std::printf("ok - %s (%lld ms)\n", tc.name.c_str(), ms);
            else
                std::printf("ok - %s\n", tc.name.c_str());
        } else {
            failed++;
            std::printf("not ok - %s: %s\n", tc.name.c_str(), reason.c_str());
        }
        std::fflush(stdout);
    }
    g_done = true;
    dog.join();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
