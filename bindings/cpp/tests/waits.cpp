// Waiting for another thread without sleeping for a guessed time (see harness.hpp): the fixture
// server's --signal FIFO, and a thread parked inside the library.
#include "harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace t {

FixtureSignal::FixtureSignal() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/mcp-cpptest-signal-XXXXXX";
    std::vector<char> buf(dir.begin(), dir.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) return;
    dir_ = buf.data();
    path_ = dir_ + "/signal.fifo";
    if (mkfifo(path_.c_str(), 0600) != 0) return;
    // Read-write: opening does not wait for the server, and EOF never comes.
    fd_ = open(path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

FixtureSignal::~FixtureSignal() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
    if (!dir_.empty()) rmdir(dir_.c_str());
}

bool FixtureSignal::wait(const std::string& prefix, int count, std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (count > 0) {
        size_t nl;
        while (count > 0 && (nl = buf_.find('\n')) != std::string::npos) {
            if (buf_.compare(0, prefix.size(), prefix) == 0) count--;
            buf_.erase(0, nl + 1);
        }
        if (count == 0) break;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (fd_ < 0 || left.count() <= 0) return false;
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) > 0) {
            char chunk[1024];
            ssize_t got = read(fd_, chunk, sizeof chunk);
            if (got > 0) buf_.append(chunk, static_cast<size_t>(got));
        }
    }
    return true;
}

long thread_id() { return static_cast<long>(syscall(SYS_gettid)); }

namespace {
// Sleeping in a futex (condition variables, channels, a runtime's park) or an epoll wait.
bool parked(long tid) {
    std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long nr = -1;
    if (!(f >> nr)) return false;
    switch (nr) {
    case SYS_futex:
    case SYS_epoll_pwait:
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
        return true;
    default:
        return false;
    }
}
}  // namespace

bool wait_parked(const std::atomic<long>& tid, std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    // Polled, as no event marks "now asleep"; seen twice in a row, so a brief lock wait on the
    // way in does not count.
    for (int seen = 0; seen < 2;) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        long id = tid.load();
        seen = id != 0 && parked(id) ? seen + 1 : 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

}  // namespace t
