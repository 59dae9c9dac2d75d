// A tiny test runner for the C++ binding: TEST(suite, name) registers a test; CHECK* macros throw
// on failure (so only use them on the test's own thread; worker threads record results and the
// test checks them after joining). The runner prints `ok - suite/name` or
// `not ok - suite/name: reason`, then `N passed, M failed`. Arguments filter tests by substring
// (a leading '-' excludes: `-bugs/`).
// A watchdog ends the run if one test exceeds its time bound, so a hang never stalls CI.
#ifndef MCP_CPP_TEST_HARNESS_HPP
#define MCP_CPP_TEST_HARNESS_HPP

#include "mcp_client.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

namespace t {

struct Failure {
    std::string reason;
};

struct TestCase {
    std::string name;
    void (*fn)();
};

std::vector<TestCase>& registry();

struct Registrar {
    Registrar(const char* suite, const char* name, void (*fn)()) {
        registry().push_back({std::string(suite) + "/" + name, fn});
    }
};

[[noreturn]] void fail(const char* file, int line, const std::string& reason);

template <class T>
std::string show(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}
inline std::string show(const std::string& v) { return "\"" + v + "\""; }
inline std::string show(const char* v) { return v ? show(std::string(v)) : std::string("NULL"); }

template <class E, class F>
E expect_throw(F&& f, const char* file, int line, const char* expr) {
    try {
        f();
    } catch (const E& e) {
        return e;
    } catch (const std::exception& e) {
        fail(file, line, std::string(expr) + " threw " + typeid(e).name() + " (" + e.what() + "), wanted " +
                             typeid(E).name());
    }
    fail(file, line, std::string(expr) + " did not throw " + typeid(E).name());
}

// ---- helpers for the fixture server ---------------------------------------------------------

/// $MCP_FIXTURE, else the build's default path.
std::string fixture_path();
/// A stdio client for the fixture with `args`.
mcp::Client fixture(const std::vector<std::string>& args = {}, mcp::Options options = {});
/// The first text block of a CallToolResult.
inline std::string text(const std::string& result) { return mcp::json::string_at(result, "/content/0/text"); }
/// Milliseconds since `start`.
long long elapsed_ms(std::chrono::steady_clock::time_point start);

/// Waits (bounded) until `pred` holds, polling.
bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds bound = std::chrono::milliseconds(3000));

/// The fixture server's --signal FIFO (waits.cpp): the server writes "request <method> <name>"
/// when it reads a request and "notification <method>" after a notification took effect. Pass
/// args() to the fixture; wait() instead of sleeping until another thread's call reached it.
class FixtureSignal {
public:
    FixtureSignal();
    ~FixtureSignal();
    FixtureSignal(const FixtureSignal&) = delete;
    FixtureSignal& operator=(const FixtureSignal&) = delete;
    std::vector<std::string> args() const { return {"--signal", path_}; }
    /// Consumes lines until `count` of them started with `prefix` (true), or `bound` passes.
    bool wait(const std::string& prefix, int count = 1,
              std::chrono::milliseconds bound = std::chrono::milliseconds(5000));

private:
    std::string dir_, path_, buf_;
    int fd_ = -1;
};

/// The calling thread's kernel id (for wait_parked).
long thread_id();
/// Waits (bounded) until thread `tid` (0: not yet known) sleeps in a futex or epoll wait, i.e.
/// is parked inside the library: for waits no fixture signal marks (Subscription::next).
bool wait_parked(const std::atomic<long>& tid, std::chrono::milliseconds bound = std::chrono::milliseconds(5000));

/// A fixture server started with `--http 127.0.0.1:0`; url() is the endpoint it printed.
class HttpFixture {
public:
    explicit HttpFixture(const std::vector<std::string>& extra_args = {});
    ~HttpFixture();
    HttpFixture(const HttpFixture&) = delete;
    HttpFixture& operator=(const HttpFixture&) = delete;
    /// Empty when the server did not start (see error()).
    const std::string& url() const { return url_; }
    const std::string& error() const { return error_; }

private:
    int pid_ = -1;
    int stdin_fd_ = -1;
    std::string url_;
    std::string error_;
};

/// A thread-safe collection of strings (events seen by callbacks) with bounded waits.
class Events {
public:
    void push(std::string s) {
        {
            std::lock_guard<std::mutex> lock(m_);
            items_.push_back(std::move(s));
        }
        cv_.notify_all();
    }
    std::vector<std::string> snapshot() const {
        std::lock_guard<std::mutex> lock(m_);
        return items_;
    }
    size_t size() const {
        std::lock_guard<std::mutex> lock(m_);
        return items_.size();
    }
    /// Waits (bounded) for an item containing `needle`.
    bool wait_for(const std::string& needle, std::chrono::milliseconds bound = std::chrono::milliseconds(3000)) {
        std::unique_lock<std::mutex> lock(m_);
        return cv_.wait_for(lock, bound, [&] {
            for (const auto& s : items_)
                if (s.find(needle) != std::string::npos) return true;
            return false;
        });
    }
    std::string joined() const {
        std::lock_guard<std::mutex> lock(m_);
        std::string out;
        for (const auto& s : items_) out += s + "\n";
        return out;
    }

private:
    mutable std::mutex m_;
    std::condition_variable cv_;
    std::vector<std::string> items_;
};

/// Threads started by handlers (which run on the dispatcher thread), joined by the test, or at
/// the latest by the destructor, so a failed CHECK never leaves a joinable std::thread behind.
class Workers {
public:
    template <class F>
    void spawn(F&& f) {
        std::lock_guard<std::mutex> lock(m_);
        threads_.emplace_back(std::forward<F>(f));
    }
    void join() {
        std::vector<std::thread> ts;
        {
            std::lock_guard<std::mutex> lock(m_);
            ts.swap(threads_);
        }
        for (auto& th : ts) th.join();
    }
    ~Workers() { join(); }

private:
    std::mutex m_;
    std::vector<std::thread> threads_;
};

}  // namespace t

#define TEST(suite, name)                                                       \
    static void test_##suite##_##name();                                        \
    static const t::Registrar reg_##suite##_##name(#suite, #name, test_##suite##_##name); \
    static void test_##suite##_##name()

#define CHECK(cond)                                                             \
    do {                                                                        \
        if (!(cond)) t::fail(__FILE__, __LINE__, "CHECK(" #cond ")");           \
    } while (0)

#define CHECK_EQ(a, b)                                                                              \
    do {                                                                                            \
        const auto& va_ = (a);                                                                      \
        const auto& vb_ = (b);                                                                      \
        if (!(va_ == vb_))                                                                          \
            t::fail(__FILE__, __LINE__, "CHECK_EQ(" #a ", " #b "): " + t::show(va_) + " != " + t::show(vb_)); \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                 \
    do {                                                                                            \
        const std::string h_ = (hay);                                                               \
        const std::string n_ = (needle);                                                            \
        if (h_.find(n_) == std::string::npos)                                                       \
            t::fail(__FILE__, __LINE__, "CHECK_CONTAINS(" #hay "): " + t::show(h_) + " lacks " + t::show(n_)); \
    } while (0)

#define CHECK_NOT_CONTAINS(hay, needle)                                                             \
    do {                                                                                            \
        const std::string h_ = (hay);                                                               \
        const std::string n_ = (needle);                                                            \
        if (h_.find(n_) != std::string::npos)                                                       \
            t::fail(__FILE__, __LINE__, "CHECK_NOT_CONTAINS(" #hay "): " + t::show(h_) + " has " + t::show(n_)); \
    } while (0)

/// Evaluates `expr`, requires it to throw `Type`, and yields the caught exception.
#define EXPECT_THROW(Type, expr) t::expect_throw<Type>([&] { (void)(expr); }, __FILE__, __LINE__, #expr)

#endif
