"""dist-test host for the Python wheel: run from outside the repository, with no MCP_CLIENT_LIB,
in a venv where only the wheel is installed.

    python hello.py FIXTURE VENV

Checks that the package and its library come from VENV (the bundled copy), that a tool call on
the fixture server answers, and that the server's stderr reaches Python's logging by default.
"""

import logging
import os
import sys
import threading

import mcp_client

fixture, venv = sys.argv[1], os.path.realpath(sys.argv[2])
package_dir = os.path.dirname(os.path.realpath(mcp_client.__file__))
library = os.path.realpath(mcp_client.library_path)
assert package_dir.startswith(venv + os.sep), f"mcp_client imported from {package_dir}, not from {venv}"
assert os.path.dirname(library) == package_dir, f"library {library} is not the one bundled in {package_dir}"
assert os.path.isfile(os.path.join(package_dir, "py.typed")), "py.typed is not installed"

banner = "hello from the fixture's stderr"
heard = threading.Event()


class Listen(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == banner:
            heard.set()


server_log = logging.getLogger("mcp_client.server")
server_log.setLevel(logging.INFO)
server_log.addHandler(Listen())

with mcp_client.Client.stdio(fixture, ["--stderr-banner", banner], request_timeout_ms=10000) as client:
    result = client.call_tool("add", {"a": 2, "b": 40})
    assert result["structuredContent"] == {"result": 42}, result
    assert result["content"][0]["text"] == "42", result
    assert heard.wait(10), "the server's stderr did not reach the mcp_client.server logger"

print(f"python: add(2, 40) = 42 via {library} ({mcp_client.library_version()}); stderr logged")
