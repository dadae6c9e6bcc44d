# skyline-lsp survives what a client sends (docs/reliability.md, "The
# editor's server"): a message over the size or nesting limit, a header it
# cannot read, JSON that is no JSON-RPC message, each answered with an error
# while the server goes on; and shutdown and exit end it at once, also while
# a preamble's clang or a measurement runs. The frames are written by hand:
# no LSP client library sends these.
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import time

import pytest

from conftest import SKYLINE_LSP
from test_skyline_lsp import RawClient, frame, initialize_and_open

LIMIT = 64 << 20  # LspMaxMessageBytes
INITIALIZE = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"capabilities": {}}})


def request(id, method, params=None):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


def peak_memory_mib(pid):
    """The process's peak resident memory (VmHWM) in MiB."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM for %d" % pid)


def receive_until_id(client, id):
    """The messages up to and with the reply to id."""
    seen = []
    while True:
        message = client.receive()
        seen.append(message)
        if message.get("id") == id and "method" not in message:
            return seen


def refusals(messages):
    """The (code, message) of each error answered to id null, each checked
    against the window/logMessage that says the same."""
    logged = [m["params"]["message"] for m in messages
              if m.get("method") == "window/logMessage"]
    found = []
    for m in messages:
        if "error" in m and m["id"] is None:
            found.append((m["error"]["code"], m["error"]["message"]))
            assert "skyline-lsp: " + m["error"]["message"] in logged
    return found


def started(workspace):
    client = RawClient(workspace, stderr=subprocess.DEVNULL)
    client.send(INITIALIZE)
    receive_until_id(client, 1)
    return client


def shut_down(client, id):
    client.send(request(id, "shutdown") + EXIT)
    assert receive_until_id(client, id)[-1]["result"] is None
    assert client.server.wait(timeout=60) == 0


def test_deep_nesting_answered(workspace):
    # 1 MB of '[' overflowed the stack of MLIR's recursive JSON parser (the
    # server crashed or hung). Refused unparsed; a request's id is found.
    client = started(workspace)
    deep = b"[" * (1 << 20)
    client.send(b"Content-Length: %d\r\n\r\n" % len(deep) + deep)
    params = "[" * 300 + "]" * 300
    client.send(frame_text('{"jsonrpc":"2.0","id":7,"method":"textDocument/'
                           'hover","params":%s}' % params))
    messages = receive_until_id(client, 7)
    assert refusals(messages) == [
        (-32600, "a message nested 1048576 deep was skipped: the limit is "
                 "256")]
    assert messages[-1]["error"] == {
        "code": -32600,
        "message": "a message nested 301 deep was skipped: the limit is 256"}
    shut_down(client, 2)


def frame_text(body):
    data = body.encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def test_oversized_message_never_held(workspace):
    # One header of 1 GiB made MLIR's transport allocate 1.1 GB before
    # reading a byte of the body. Answered at the header; the body, which
    # never comes, is not allocated.
    client = started(workspace)
    client.send(b"Content-Length: 1073741824\r\n\r\n" +
                b'{"jsonrpc":"2.0","id":3,"method":"shutdown"}')
    (refused,) = refusals(receive_until_id(client, None))
    assert refused == (
        -32600, "a message of 1073741824 bytes (its Content-Length) is "
                "skipped: the limit is 67108864 bytes")
    assert peak_memory_mib(client.server.pid) < 200
    # The client ends there: the body never came whole.
    client.server.stdin.close()
    assert client.server.wait(timeout=60) == 1

    # A body one byte over the limit, sent whole, is read past in chunks;
    # the request after it is answered.
    client = started(workspace)
    client.send(b"Content-Length: %d\r\n\r\n" % (LIMIT + 1) +
                b" " * (LIMIT + 1))
    client.send(request(2, "shutdown"))
    messages = receive_until_id(client, 2)
    assert refusals(messages) == [
        (-32600, "a message of 67108865 bytes (its Content-Length) is "
                 "skipped: the limit is 67108864 bytes")]
    assert messages[-1]["result"] is None
    assert peak_memory_mib(client.server.pid) < 200
    client.send(EXIT)
    assert client.server.wait(timeout=60) == 0


def test_bad_headers_answered(workspace):
    # A Content-Length that is no number of bytes, none at all, an empty
    # body, and JSON that is no JSON-RPC 2.0 message (`[]` ended the
    # session as `exit` does): each answered, and the server reads on.
    client = started(workspace)
    body = b'{"jsonrpc":"2.0","id":4,"method":"shutdown"}'
    client.send(b"Content-Length: abc\r\n\r\n" + body +
                b"Content-Length: -5\r\n\r\n" + body + b"\r\n" +
                b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + body +
                b"Content-Length: 0\r\n\r\n" +
                frame_text("[]") +
                frame_text('{"jsonrpc":"2.0","id":5,"method":"x","params":}'))
    client.send(request(2, "shutdown"))
    messages = receive_until_id(client, 2)
    assert refusals(messages) == [
        (-32700, "a message was skipped: its Content-Length 'abc' is not a "
                 "number of bytes"),
        (-32700, "a message was skipped: its Content-Length '-5' is not a "
                 "number of bytes"),
        (-32700, "a message without a Content-Length header was skipped"),
        (-32700, "an empty message (Content-Length: 0) was skipped"),
        (-32600, "a message that is not a JSON object was skipped"),
    ]
    # Not JSON, but its id is found: the request gets its answer.
    (not_json,) = [m for m in messages if m.get("id") == 5]
    assert not_json["error"]["code"] == -32700
    assert not_json["error"]["message"].startswith(
        "a message that is not JSON was skipped")
    # The bodies that could not be framed were not read as requests.
    assert not [m for m in messages if m.get("id") == 4]
    client.send(EXIT)
    assert client.server.wait(timeout=60) == 0


def processes_with(text):
    """The pids whose command line holds text."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(entry.name))
    return found


def ended(server, seconds):
    """The server's exit code once it ended within seconds; else it is
    killed (what it started goes with it) and the test fails."""
    try:
        return server.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        raise AssertionError("still running %d s after exit" % seconds)


def mnist_command():
    """The bundled mnist example's compile command (the real LibTorch) from
    the build's compile_commands.json; None where it has none."""
    build = pathlib.Path(SKYLINE_LSP).resolve().parent.parent
    try:
        entries = json.loads((build / "compile_commands.json").read_text())
    except (OSError, ValueError):
        return None
    for entry in entries:
        if entry["file"].endswith(os.path.join("examples", "mnist",
                                               "mnist.cpp")):
            return entry
    return None

def mnist_copy(directory):
    """A copy of the mnist example in directory, with a compile database
    of its own (the real LibTorch command); the test is skipped where the
    build has none."""
    entry = mnist_command()
    if entry is None:
        pytest.skip("the build has no LibTorch example (mnist.cpp)")
    source = directory / "mnist.cpp"
    shutil.copy(entry["file"], source)
    arguments = entry.get("arguments") or shlex.split(entry["command"])
    arguments = [str(source) if a == entry["file"] else a for a in arguments]
    (directory / "compile_commands.json").write_text(json.dumps(
        [{"directory": entry["directory"], "arguments": arguments,
          "file": str(source)}]))
    return source



def test_exit_ends_the_preamble_build(tmp_path):
    # After the first analysis the server precompiles LibTorch's headers
    # (15 to 20 s of clang); shutdown and exit meanwhile kept it alive
    # until that clang ended (10 to 12 s). Now the clang is killed, its
    # temporary .pch removed, and the server gone at once.
    source = mnist_copy(tmp_path)
    cache = tmp_path / "cache"  # empty: the preamble is made
    env = dict(os.environ, SKYLINE_CACHE_DIR=str(cache))
    client = RawClient(tmp_path, [], env, subprocess.DEVNULL)
    client.send(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"capabilities": {},
                                  "rootUri": tmp_path.as_uri(),
                                  "initializationOptions": {
                                      "compilationDatabase": str(tmp_path)}}}) +
                frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": {
                           "uri": source.as_uri(), "languageId": "cpp",
                           "version": 1, "text": source.read_text()}}}))
    client.receive_until(lambda m: m.get("method") ==
                         "textDocument/publishDiagnostics")
    # The worker goes on to the preamble: its clang writes <key>.tmp<pid>.pch.
    temporary = ".tmp%d.pch" % client.server.pid
    deadline = time.monotonic() + 60
    while not processes_with(temporary):
        assert time.monotonic() < deadline, "no preamble build started"
        time.sleep(0.05)
    start = time.monotonic()
    client.send(request(2, "shutdown") + EXIT)
    # A liveness bound, not a benchmark: it took 10 s and more.
    assert ended(client.server, 5) == 0
    print("exited %.2f s after shutdown and exit" % (time.monotonic() - start))
    assert processes_with(temporary) == []
    assert list((cache / "preamble").glob("*" + temporary + "*")) == []
    assert list((cache / "preamble").glob("*.pch")) == []


def test_exit_stops_a_measurement(workspace):
    # A measurement's skyline-check (the stand-in, waiting to be stopped)
    # is stopped with SIGTERM at exit, and the server ends at once.
    fake = pathlib.Path(__file__).parent / "fake-skyline-check.py"
    (workspace / "skyline-work" / "report.yaml").rename(
        workspace / "fake-report.yaml")
    (workspace / "fake-slow").write_text("")
    client = RawClient(workspace, ["--skyline-check=" + str(fake)],
                       stderr=subprocess.DEVNULL)
    path = workspace / "train.cpp"
    client.send(initialize_and_open(workspace, path))
    client.receive_until(lambda m: m.get("method") ==
                         "textDocument/publishDiagnostics")
    client.send(request(2, "workspace/executeCommand",
                        {"command": "skyline.measure",
                         "arguments": [path.as_uri()]}))
    receive_until_id(client, 2)
    deadline = time.monotonic() + 30
    while not processes_with(str(fake)):
        assert time.monotonic() < deadline, "the measurement did not start"
        time.sleep(0.05)
    start = time.monotonic()
    client.send(request(3, "shutdown") + EXIT)
    assert ended(client.server, 5) == 0
    print("exited %.2f s after shutdown and exit" % (time.monotonic() - start))
    assert processes_with(str(fake)) == []
