"""mcp_client from Python in one page: python3 example.py [path/to/mcp-fixture-server]"""

import sys
import threading
from concurrent.futures import Future

from mcp_client import Client, InputRequiredError

server = sys.argv[1] if len(sys.argv) > 1 else "target/debug/mcp-fixture-server"

with Client.stdio(server, request_timeout_ms=10_000) as client:
    # Input handlers get the request params and return the result now...
    client.on_elicitation(lambda params: {"action": "accept", "content": {"name": "Ada"}})

    # ...or return a Future that another thread completes later.
    def sample(params):
        answer = Future()
        reply = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "demo"}
        threading.Timer(0.1, answer.set_result, [reply]).start()
        return answer

    client.on_sampling(sample)

    info = client.connect()
    print(f"{info['serverInfo']['name']}: {info['era']} era, protocol {info['protocolVersion']}")
    print("tools:", ", ".join(tool["name"] for tool in client.all_tools()[:4]), "...")
    print(client.call_tool("add", {"a": 2, "b": 40})["structuredContent"])  # {'result': 42}
    print(client.call_tool("elicit_once")["content"][0]["text"])  # Hello, Ada!
    print(client.call_tool("sample_only")["content"][0]["text"])  # sampled: hi

# Input answered by hand: declare the kind (manual_input) so servers ask for it; the call
# raises with what is unanswered; answer, then retry with the error's retry options.
with Client.stdio(server, manual_input=["elicitation"], request_timeout_ms=10_000) as client:
    try:
        client.call_tool("elicit_once")
    except InputRequiredError as e:
        [(key, request)] = e.unanswered.items()
        print("the server asks:", request["params"]["message"])
        answer = {key: {"action": "accept", "content": {"name": "Grace"}}}
        result = client.call_tool("elicit_once", **e.retry_options(answer))
        print(result["content"][0]["text"])  # Hello, Grace!
