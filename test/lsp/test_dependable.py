# skyline-lsp as dependable as clangd (issue 33): the URI the client opened,
# whatever links lie between it and the file; a typo saved keeps the last
# findings and shows clang's error where it is; the preamble never holds an
# analysis up; two open programs sharing a header never publish over each
# other; progress in the protocol's order, moving through every step.
import json
import os
import pathlib
import shutil
import subprocess
import time


from conftest import INPUTS, MOCK_FLAGS, SKYLINE_LSP
from test_hostile_input import mnist_copy, processes_with
from test_skyline_lsp import RawClient, frame

FAKE = pathlib.Path(__file__).parent / "fake-skyline-check.py"
EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


def initialize(root, arguments=None, capabilities=None, database=None):
    options = {"arguments": (arguments or []) + ["--"] + MOCK_FLAGS}
    if database:
        options = {"compilationDatabase": str(database)}
    return frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"capabilities": capabilities or {},
                             "rootUri": root.as_uri(),
                             "initializationOptions": options}})


def did_open(path, uri=None):
    return frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                  "params": {"textDocument": {
                      "uri": uri or path.as_uri(), "languageId": "cpp",
                      "version": 1, "text": path.read_text()}}})


def did_change(uri, version, text):
    return frame({"jsonrpc": "2.0", "method": "textDocument/didChange",
                  "params": {"textDocument": {"uri": uri, "version": version},
                             "contentChanges": [{"text": text}]}})


def did_save(uri):
    return frame({"jsonrpc": "2.0", "method": "textDocument/didSave",
                  "params": {"textDocument": {"uri": uri}}})


def did_close(uri):
    return frame({"jsonrpc": "2.0", "method": "textDocument/didClose",
                  "params": {"textDocument": {"uri": uri}}})


def request(id, method, params):
    return frame({"jsonrpc": "2.0", "id": id, "method": method,
                  "params": params})


def hover(id, uri, line, character):
    return request(id, "textDocument/hover", {
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": character}})


def diagnostics_of(client, uri, accept=lambda d: True):
    """The next publishDiagnostics for uri that accept takes; the others
    published on the way, by URI."""
    others = {}
    while True:
        m = client.receive()
        if m.get("method") != "textDocument/publishDiagnostics":
            continue
        if m["params"]["uri"] == uri and accept(m["params"]["diagnostics"]):
            return m["params"]["diagnostics"], others
        others.setdefault(m["params"]["uri"], []).append(
            m["params"]["diagnostics"])


def reply_to(client, id):
    return client.receive_until(lambda m: m.get("id") == id and
                                "method" not in m)


def shut_down(client, id=99):
    client.send(request(id, "shutdown", None) + EXIT)
    reply_to(client, id)
    assert client.server.wait(timeout=60) == 0


def test_a_symlinked_path_gets_its_findings(workspace):
    # The editor opened link/train.cpp; link points at the workspace.
    (workspace / "link").symlink_to(workspace, target_is_directory=True)
    linked = workspace / "link" / "train.cpp"
    client = RawClient(workspace, stderr=subprocess.DEVNULL)
    client.send(initialize(workspace) + did_open(linked))
    found, others = diagnostics_of(client, linked.as_uri(), bool)
    assert any(d["message"].startswith("training batch size 'kBatchSize'")
               for d in found), found
    # Nothing for the resolved path, which the editor never opened.
    assert all(not d for d in others.get((workspace / "train.cpp").as_uri(),
                                         [[]])), others
    client.send(hover(2, linked.as_uri(), 2, 28))
    assert reply_to(client, 2)["result"]["contents"]["value"]
    client.send(request(3, "textDocument/inlayHint", {
        "textDocument": {"uri": linked.as_uri()},
        "range": {"start": {"line": 0, "character": 0},
                  "end": {"line": 40, "character": 0}}}))
    assert reply_to(client, 3)["result"]
    shut_down(client)


def test_a_typo_keeps_the_findings_and_shows_the_error(workspace):
    path = workspace / "train.cpp"
    good = path.read_text()
    uri = path.as_uri()
    client = RawClient(workspace, stderr=subprocess.DEVNULL)
    client.send(initialize(workspace) + did_open(path))
    before, _ = diagnostics_of(client, uri, bool)
    assert not any(d["severity"] == 1 for d in before)
    # A typo on a line of its own above the batch size, typed and saved.
    lines = good.split("\n")
    lines.insert(1, "int broken = ;")
    path.write_text("\n".join(lines))
    client.send(did_change(uri, 2, path.read_text()) + did_save(uri))
    broken, _ = diagnostics_of(
        client, uri, lambda ds: any(d["severity"] == 1 for d in ds))
    errors = [d for d in broken if d["severity"] == 1]
    assert [(e["source"], e["range"]["start"]["line"],
             e["range"]["start"]["character"], e["message"])
            for e in errors] == [
        ("clang", 1, 13, "expected expression")]
    # The findings of the last analysis that compiled stay, marked, on
    # their lines as the text is now (the batch size moved down one).
    kept = [d for d in broken if d["source"] == "skyline-check"]
    assert len(kept) == len(before)
    assert all(d["message"].endswith(
        "(from the last analysis that compiled: the code does not now)")
        for d in kept)
    batch = [d for d in kept if d["message"].startswith("training batch size")]
    assert batch and batch[0]["range"]["start"]["line"] == 3
    client.send(hover(2, uri, 3, 28))
    assert reply_to(client, 2)["result"]["contents"]["value"]
    # Fixed and saved: as before.
    path.write_text(good)
    client.send(did_change(uri, 3, good) + did_save(uri))
    after, _ = diagnostics_of(
        client, uri, lambda ds: not any(d["severity"] == 1 for d in ds))
    assert sorted(d["message"] for d in after) == \
        sorted(d["message"] for d in before)
    shut_down(client)


def test_two_programs_sharing_a_header(tmp_path):
    for name in ["a.cpp", "b.cpp", "layers.h"]:
        shutil.copy(INPUTS / "shared-header" / name, tmp_path / name)
    a, b, header = (tmp_path / n for n in ["a.cpp", "b.cpp", "layers.h"])
    client = RawClient(tmp_path, stderr=subprocess.DEVNULL)
    client.send(initialize(tmp_path) + did_open(a))
    from_a, _ = diagnostics_of(client, header.as_uri(), bool)
    client.send(did_open(b))
    # b's analysis says of the header what a's does: shown once.
    both, _ = diagnostics_of(client, header.as_uri())
    assert sorted(json.dumps(d, sort_keys=True) for d in both) == \
        sorted(json.dumps(d, sort_keys=True) for d in from_a)
    client.send(did_close(b.as_uri()))
    left, _ = diagnostics_of(client, header.as_uri())
    assert sorted(json.dumps(d, sort_keys=True) for d in left) == \
        sorted(json.dumps(d, sort_keys=True) for d in from_a), \
        "closing b keeps what a says of the header"
    client.send(did_close(a.as_uri()))
    gone, _ = diagnostics_of(client, header.as_uri())
    assert gone == []
    shut_down(client)


def test_progress_in_the_protocols_order(workspace):
    (workspace / "skyline-work" / "report.yaml").rename(
        workspace / "fake-report.yaml")
    path = workspace / "train.cpp"
    uri = path.as_uri()
    client = RawClient(workspace, ["--skyline-check=" + str(FAKE)],
                       stderr=subprocess.DEVNULL)
    client.send(initialize(workspace, capabilities={
        "window": {"workDoneProgress": True}}) + did_open(path))
    diagnostics_of(client, uri)
    client.send(request(2, "workspace/executeCommand", {
        "command": "skyline.measure", "arguments": [uri]}))
    create = client.receive_until(
        lambda m: m.get("method") in ("window/workDoneProgress/create",
                                      "$/progress"))
    assert create["method"] == "window/workDoneProgress/create"
    token = create["params"]["token"]
    # Unanswered, no progress is sent: a hover is answered meanwhile, and
    # nothing on the way is progress.
    client.send(hover(3, uri, 2, 28))
    seen = []
    client.receive_until(lambda m: seen.append(m) or m.get("id") == 3)
    assert not any(m.get("method") == "$/progress" for m in seen)
    client.send(frame({"jsonrpc": "2.0", "id": create["id"], "result": None}))
    reports = []
    client.receive_until(lambda m: m.get("method") == "$/progress" and
                         reports.append(m["params"]) is None and
                         m["params"]["value"]["kind"] == "end")
    assert {r["token"] for r in reports} == {token}
    kinds = [r["value"]["kind"] for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    percentages = [r["value"]["percentage"] for r in reports[1:-1]]
    assert percentages == sorted(percentages)
    assert 30 in percentages and 60 in percentages
    # The measurement is over once its program is analyzed again.
    diagnostics_of(client, uri)
    # The client's own token: used, and nothing created.
    client.send(request(4, "workspace/executeCommand", {
        "command": "skyline.measure", "arguments": [uri],
        "workDoneToken": "client-token"}))
    seen = []
    client.receive_until(lambda m: seen.append(m) or (
        m.get("method") == "$/progress" and
        m["params"]["value"]["kind"] == "end"))
    assert not any(m.get("method") == "window/workDoneProgress/create"
                   for m in seen)
    assert {m["params"]["token"] for m in seen
            if m.get("method") == "$/progress"} == {"client-token"}
    shut_down(client)


def test_a_save_never_waits_for_the_preamble(tmp_path):
    # After the first analysis the server precompiles LibTorch's headers
    # (15 to 20 s of clang); a save meanwhile is analyzed at once, while
    # that clang still runs.
    source = mnist_copy(tmp_path)
    env = dict(os.environ, SKYLINE_CACHE_DIR=str(tmp_path / "cache"))
    client = RawClient(tmp_path, [], env, subprocess.DEVNULL)
    client.send(initialize(tmp_path, database=tmp_path) + did_open(source))
    diagnostics_of(client, source.as_uri(), bool)
    temporary = ".tmp%d.pch" % client.server.pid
    deadline = time.monotonic() + 60
    while not processes_with(temporary):
        assert time.monotonic() < deadline, "no preamble build started"
        time.sleep(0.05)
    client.send(did_save(source.as_uri()))
    diagnostics_of(client, source.as_uri(), bool)
    assert processes_with(temporary), \
        "the save's analysis waited for the preamble's clang"
    shut_down(client)
