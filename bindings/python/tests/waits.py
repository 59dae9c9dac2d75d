"""Waiting for another thread without sleeping for a guessed time.

``FixtureSignal``: the fixture server's ``--signal`` FIFO (tests/fixture-server/README.md). The
server writes ``request <method> <name>`` when it reads a request, so a test knows that another
thread's call reached the server (and, for ``hang``, is blocked for good).

``wait_parked``: for waits no request marks (a thread inside ``Subscription.next``), the thread
is parked in the library when Linux shows it asleep in a futex or epoll wait.

``wait_until``: polls an observable condition (a callback ran, a handle was released).
"""

from __future__ import annotations

import os
import select
import tempfile
import time

# x86_64 and aarch64 numbers of futex, epoll_wait, epoll_pwait, epoll_pwait2.
_WAITING_CALLS = {"x86_64": {202, 232, 281, 441}, "aarch64": {98, 22, 441}}


class FixtureSignal:
    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="mcp-pytest-signal-")
        self.path = os.path.join(self._dir, "signal.fifo")
        os.mkfifo(self.path, 0o600)
        # Read-write: opening does not wait for the server, and EOF never comes.
        self._fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
        self._buf = b""

    def wait(self, prefix: str, count: int = 1, timeout: float = 10) -> None:
        """Consumes lines until ``count`` started with ``prefix``; fails after ``timeout``."""
        deadline = time.monotonic() + timeout
        seen = []
        while count > 0:
            while count > 0 and b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                seen.append(line.decode())
                if line.decode().startswith(prefix):
                    count -= 1
            if count == 0:
                return
            left = deadline - time.monotonic()
            assert left > 0, f"the fixture did not signal {prefix!r}; it signalled {seen}"
            if select.select([self._fd], [], [], left)[0]:
                self._buf += os.read(self._fd, 4096)

    def close(self) -> None:
        os.close(self._fd)
        os.unlink(self.path)
        os.rmdir(self._dir)


def _parked(native_id: int) -> bool:
    try:
        with open(f"/proc/self/task/{native_id}/syscall") as f:
            first = f.read().split(" ", 1)[0]
    except OSError:
        return False
    return first.isdigit() and int(first) in _WAITING_CALLS.get(os.uname().machine, set())


def wait_parked(native_id: int, timeout: float = 10) -> None:
    """Waits until thread ``native_id`` (threading.get_native_id()) sleeps in the kernel. Seen
    three times in a row, so a moment waiting for the GIL on the way in does not count."""
    deadline = time.monotonic() + timeout
    seen = 0
    while seen < 3:
        assert time.monotonic() < deadline, f"thread {native_id} never parked"
        seen = seen + 1 if _parked(native_id) else 0
        time.sleep(0.005)


def wait_until(cond, timeout: float = 5) -> bool:
    """Polls ``cond`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
