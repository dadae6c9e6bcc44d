# skyline-lsp through a real LSP client (pytest-lsp): the program is the lit
# tests' train.cpp on the mock LibTorch headers (a parse takes 0.3 s), its
# measurement the saved report the rules' lit tests use (from-report.test:
# iteration 2 + 0.1 b ms, peak 1e6 + 1e4 b bytes, 4e6 bytes of capacity), so
# the figures are exact and the same as the command line's.
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest
from lsprotocol import types

from conftest import INPUTS, MOCK_FLAGS, SKYLINE_LSP, initialize_params


def doc(workspace):
    return types.TextDocumentIdentifier(uri=(workspace / "train.cpp").as_uri())


async def open_and_wait(client, workspace, name="train.cpp"):
    path = workspace / name
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=path.as_uri(), language_id="cpp", version=1,
            text=path.read_text())))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return client.diagnostics[path.as_uri()]


def summary(diagnostic):
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character,
            diagnostic.severity, diagnostic.code, diagnostic.message)


W = types.DiagnosticSeverity.Warning
I = types.DiagnosticSeverity.Information
H = types.DiagnosticSeverity.Hint


async def test_diagnostics_on_open(client, workspace):
    got = [summary(d) for d in await open_and_wait(client, workspace)]
    # The front end's notes (--analyze-only), then the rules on the report,
    # with the command line's messages (test/lit/rules/from-report.test).
    assert got == [
        (2, 27, 2, 29, I, "skyline-batch-size",
         "training batch size 'kBatchSize' = 16 (namespace-constant)"),
        (6, 33, 6, 34, H, "skyline-module",
         "module 'fc1' (torch::nn::Linear) constructed here, registered at "
         "train.cpp:7"),
        (7, 33, 7, 34, H, "skyline-module",
         "module 'fc2' (torch::nn::Linear) constructed here, registered at "
         "train.cpp:8"),
        (17, 15, 17, 16, H, "skyline-module",
         "module 'model' (Net) constructed here"),
        (10, 20, 10, 21, H, "skyline-module-call", "call of module 'fc1'"),
        (11, 11, 11, 12, H, "skyline-module-call", "call of module 'fc2'"),
        (22, 20, 22, 21, H, "skyline-module-call", "call of module 'model'"),
        (20, 2, 20, 3, H, "skyline-training-loop",
         "training loop in 'main': optimizer 'optimizer' "
         "(torch::optim::SGD); 1 zero_grad, 1 backward, 1 step"),
        (2, 27, 2, 29, W, "skyline-batch-size",
         "batch size 16 is below the throughput knee: 152 is predicted to "
         "train 99% faster (30% to 203%, 90% interval; 4444 -> 8837 "
         "samples/s) with 2.40 MiB peak memory of 3.43 MiB usable "
         "(extrapolated outside the sizes measured)"),
        (18, 76, 18, 80, I, "skyline-batch-size",
         "a batch size of 152 may need the learning rate of 'optimizer' "
         "scaled with it: 0.01 x 152/16 = 0.095 (linear scaling rule; "
         "optional, export with --scale-learning-rate)"),
        (10, 20, 10, 26, W, "skyline-hot-layer",
         "layer 'fc1' (torch::nn::Linear) takes 56% of the median iteration "
         "time at batch size 16: forward 1.00 ms, backward 1.00 ms of "
         "3.60 ms"),
        (6, 33, 6, 34, I, "skyline-hot-layer",
         "'fc1' is constructed here with 784, 512"),
        (2, 27, 2, 29, I, "skyline-memory-breakdown",
         "peak memory at batch size 16 is 1.11 MiB: weights 195 KiB, "
         "gradients 195 KiB, activations 156 KiB, untracked 586 KiB (made "
         "before training and no model's or optimizer's: a dataset held in "
         "memory, LibTorch's own); each sample adds 9.77 KiB"),
    ]


async def test_related_locations(client, workspace):
    # The notes the terminal prints under a warning are its related
    # locations: where the hot layer is made, the learning rate to scale.
    got = await open_and_wait(client, workspace)
    uri = (workspace / "train.cpp").as_uri()
    related = {d.message[:30]: [(r.location.uri, r.location.range.start.line,
                                 r.location.range.start.character, r.message)
                                for r in d.related_information or []]
               for d in got if d.severity == W}
    assert related == {
        "batch size 16 is below the thr": [
            (uri, 18, 76, "a batch size of 152 may need the learning rate of "
             "'optimizer' scaled with it: 0.01 x 152/16 = 0.095 (linear "
             "scaling rule; optional, export with --scale-learning-rate)")],
        "layer 'fc1' (torch::nn::Linear": [
            (uri, 6, 33, "'fc1' is constructed here with 784, 512")],
    }
    # The batch size's path to its loader, the terminal's notes without a
    # rule under the front end's note, is that note's (and no diagnostic of
    # its own).
    notes = [d for d in got if d.message.startswith("training batch size")]
    assert [[(r.location.uri, r.location.range.start.line,
              r.location.range.start.character, r.message)
             for r in d.related_information or []] for d in notes] == [
        [(uri, 19, 81, "given to make_data_loader() as the batch size here")]]
    assert not [d for d in got if d.code is None]


def open_raw(workspace, name="train.cpp"):
    """A server on workspace with the mock flags, the file opened; its
    first diagnostics."""
    client = RawClient(workspace)
    path = workspace / name
    client.send(initialize_and_open(workspace, path))
    published = client.receive_until(
        lambda m: m.get("method") == "textDocument/publishDiagnostics")
    client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
                frame({"jsonrpc": "2.0", "method": "exit"}))
    assert client.server.wait(timeout=60) == 0
    return published["params"]["diagnostics"]


def test_skyline_yaml_as_on_the_command_line(workspace):
    # The nearest .skyline.yaml above the source sets the rules' options:
    # at a 60% share fc1 (56%) is no hot layer.
    (workspace / ".skyline.yaml").write_text("hot-layer-share: 60\n")
    codes = [d["code"] for d in open_raw(workspace) if d["severity"] == 2]
    assert codes == ["skyline-batch-size"]
    # A bad one is an error naming the file, as skyline-check says it.
    (workspace / ".skyline.yaml").write_text("hot-layer-shares: 60\n")
    (error,) = open_raw(workspace)
    assert error["severity"] == 1
    assert error["range"]["start"] == {"line": 0, "character": 0}
    assert error["message"] == (
        "unknown option 'hot-layer-shares' in config file '%s' (keys are "
        "long option names, like memory-margin)" %
        (workspace / ".skyline.yaml"))


def test_no_database_said_once():
    # Without -p, flags or a compile_commands.json above the source, the
    # command line's fallback is used and the editor is told, once. (In the
    # system's temporary directory: CTest's is below the build's database.)
    with tempfile.TemporaryDirectory() as directory:
        no_database(pathlib.Path(directory))


def no_database(workspace):
    for name in ("train.cpp", "other.cpp"):
        (workspace / name).write_text("int main() {}\n")
    client = RawClient(workspace)
    client.send(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"capabilities": {},
                                  "rootUri": workspace.as_uri()}}))
    messages = []
    for name in ("train.cpp", "other.cpp"):
        path = workspace / name
        client.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                           "params": {"textDocument": {
                               "uri": path.as_uri(), "languageId": "cpp",
                               "version": 1, "text": path.read_text()}}}))
        while True:
            message = client.receive()
            if message.get("method") == "window/showMessage":
                messages.append(message["params"])
            if message.get("method") == "textDocument/publishDiagnostics":
                break
    client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
                frame({"jsonrpc": "2.0", "method": "exit"}))
    assert client.server.wait(timeout=60) == 0
    assert messages == [{
        "type": 2,
        "message": "skyline-lsp: no compilation database found for '%s'; "
                   "using C++17 and the LibTorch headers skyline-check was "
                   "built with (give -p BUILD_DIR or flags after -- to use "
                   "the program's own) (initializationOptions."
                   "compilationDatabase names it)" % (workspace / "train.cpp")}]


async def test_no_training_program_no_error(client, workspace):
    # A C++ file that trains nothing (most files an editor opens) gets the
    # front end's notes and no error.
    path = workspace / "layer.cpp"
    shutil.copy(INPUTS / "simple" / "no-batch-size.cpp", path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=path.as_uri(), language_id="cpp", version=1,
            text=path.read_text())))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    assert [summary(d) for d in client.diagnostics[path.as_uri()]] == [
        (3, 20, 3, 21, H, "skyline-module",
         "module 'model' (torch::nn::Linear) constructed here"),
        (4, 11, 4, 12, H, "skyline-module-call", "call of module 'model'"),
    ]


async def test_hover_batch_size(client, workspace):
    await open_and_wait(client, workspace)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=doc(workspace), position=types.Position(2, 28)))
    text = hover.contents.value
    assert "**training batch size** `kBatchSize` = 16 (namespace-constant)" in text
    # current, suggested, doubled, largest that fits, with 90% intervals
    assert ("| 16 | current | 3.60 (3.20..4.04) | 4444 (3956..4993) | "
            "1.11 MiB (1.09 MiB..1.12 MiB) |") in text
    assert ("| 152 | suggested (extrapolated) | 17.20 (11.28..26.22) | "
            "8837 (5798..13470) | 2.40 MiB (2.29 MiB..2.53 MiB) |") in text
    assert ("| 32 | doubled | 5.20 (4.63..5.84) | 6154 (5478..6913) | "
            "1.26 MiB (1.24 MiB..1.27 MiB) |") in text
    assert "| 260 | largest that fits (extrapolated) | 28.00" in text
    assert ("Fits: iteration time R² 1.0000, peak memory R² 1.0000, over 3 "
            "batch sizes measured (up to 64); suggested 152: 99% more "
            "throughput (30% to 203%).") in text


async def test_hover_layer(client, workspace):
    await open_and_wait(client, workspace)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=doc(workspace), position=types.Position(10, 22)))
    text = hover.contents.value
    assert "**layer** `fc1` (torch::nn::Linear) at batch size 16" in text
    assert "| forward | 1.00 ms |" in text
    assert "| backward | 1.00 ms |" in text
    assert "| share of the median iteration | 56% of 3.60 ms |" in text
    assert "| weights | 1.53 MiB |" in text
    # Nothing measured on a line with no layer or batch size.
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=doc(workspace), position=types.Position(0, 3))) is None


async def test_inlay_hints_follow_edits(client, workspace):
    await open_and_wait(client, workspace)

    async def hints():
        got = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=doc(workspace),
            range=types.Range(types.Position(0, 0), types.Position(40, 0))))
        return [(h.position.line, h.position.character, h.label) for h in got]

    before = await hints()
    assert before == [
        (10, 26, "fwd 1.00 ms, bwd 1.00 ms, 56% of the median iteration"),
        (11, 17, "fwd 0.30 ms, bwd 0.20 ms, 14% of the median iteration"),
        (22, 46, "fwd 0.20 ms, bwd 0.10 ms, 8.3% of the median iteration"),
        (2, 29, "4444 samples/s, 1.11 MiB peak"),
        (20, 2, "median iteration 3.60 ms at batch size 16"),
    ]
    # Two lines added above the class, not saved: the hints move with them.
    text = (workspace / "train.cpp").read_text().replace(
        "struct Net", "// a comment\n// another\nstruct Net")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(
            uri=doc(workspace).uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    after = await hints()
    assert after == [(line + 2 if line > 3 else line, col, label)
                     for line, col, label in before]


async def test_code_action_sets_batch_size(client, workspace):
    await open_and_wait(client, workspace)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(workspace),
            range=types.Range(types.Position(2, 28), types.Position(2, 28)),
            context=types.CodeActionContext(diagnostics=[])))
    assert actions[-1].command == "skyline.measure"  # test_measure.py
    actions = actions[:-1]
    assert [a.title for a in actions] == [
        "Set batch size to 152 (suggested: +99% throughput, 2.40 MiB peak)",
        "Set batch size to 152 and scale the learning rate to 0.095 (linear "
        "scaling rule)",
        "Set batch size to 176 (+102% throughput, 2.63 MiB peak)",
        "Set batch size to 216 (+106% throughput, 3.01 MiB peak)",
        "Set batch size to 260 (largest that fits: +109% throughput, "
        "3.43 MiB peak)",
        "Set batch size to 32 (doubled: +38% throughput, 1.26 MiB peak)",
    ]
    suggested = actions[0]
    assert suggested.is_preferred
    (uri, edits), = suggested.edit.changes.items()
    assert uri == doc(workspace).uri
    assert [(e.range.start.line, e.range.start.character, e.range.end.line,
             e.range.end.character, e.new_text) for e in edits] == [
        (2, 27, 2, 29, "152")]
    # The learning rate goes along in the second: the rule's optional
    # fix-it (--scale-learning-rate).
    (_, scaled), = actions[1].edit.changes.items()
    assert [(e.range.start.line, e.range.start.character, e.new_text)
            for e in scaled] == [(2, 27, "152"), (18, 76, "0.095")]
    # Applied as an editor applies it, the program compiles at 152.
    path = workspace / "train.cpp"
    lines = path.read_text().split("\n")
    lines[2] = lines[2][:27] + "152" + lines[2][29:]
    path.write_text("\n".join(lines))
    assert "const int64_t kBatchSize = 152;" in path.read_text()
    subprocess.run(["clang++-19", "-fsyntax-only"] + MOCK_FLAGS + [str(path)],
                   check=True)
    # Saved: the front end sees 152; the measurement, made at 16, is shown
    # as made before the change.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(
            uri=doc(workspace).uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(
            text=path.read_text())]))
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=doc(workspace)))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    messages = [d.message for d in client.diagnostics[doc(workspace).uri]]
    assert messages[0] == \
        "training batch size 'kBatchSize' = 152 (namespace-constant)"
    assert ("batch size 16 is below the throughput knee: 152 is predicted to "
            "train 99% faster (30% to 203%, 90% interval; 4444 -> 8837 "
            "samples/s) with 2.40 MiB peak memory of 3.43 MiB usable "
            "(extrapolated outside the sizes measured) (measured before the "
            "change: sources)") in messages


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize_and_open(workspace, path):
    """The frames of a client that initializes the server on workspace with
    the mock flags and opens path."""
    return (frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"capabilities": {"textDocument": {
                                  "hover": {"contentFormat": ["markdown"]}}},
                              "rootUri": workspace.as_uri(),
                              "initializationOptions": {
                                  "arguments": ["--"] + MOCK_FLAGS}}}) +
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {
                       "uri": path.as_uri(), "languageId": "cpp",
                       "version": 1, "text": path.read_text()}}}))


def test_client_gone_without_shutdown(workspace):
    # A client that initializes, opens the program and closes its end
    # without shutdown or exit: the server ends, with 1 as the protocol
    # asks, whatever it was doing.
    server = subprocess.Popen([SKYLINE_LSP], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=workspace)
    path = workspace / "train.cpp"
    out, err = server.communicate(
        initialize_and_open(workspace, path) +
        b"Content-Length: 20\r\n\r\n{not json at all...}", timeout=60)
    assert server.returncode == 1
    assert b'"serverInfo"' in out
    assert b"the client went away" in err


def replies(out):
    """The JSON messages of a server's output, in order."""
    messages = []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        messages.append(json.loads(rest[:length]))
        out = rest[length:]
    return messages


def test_initialize_shutdown_exit(workspace):
    server = subprocess.Popen([SKYLINE_LSP], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, cwd=workspace)
    out, _ = server.communicate(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"capabilities": {}}}) +
        frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
        frame({"jsonrpc": "2.0", "method": "exit"}), timeout=60)
    assert server.returncode == 0
    initialize, shutdown = replies(out)
    assert initialize["result"]["capabilities"] == {
        "textDocumentSync": {"openClose": True, "change": 1,
                             "save": {"includeText": False}},
        "hoverProvider": True,
        "inlayHintProvider": True,
        "codeActionProvider": {"codeActionKinds": ["quickfix"]},
        # skyline-check beside skyline-lsp measures (test_measure.py)
        "executeCommandProvider": {"commands": ["skyline.measure"]},
    }
    assert initialize["result"]["serverInfo"]["name"] == "skyline-lsp"
    assert shutdown == {"jsonrpc": "2.0", "id": 2, "result": None}


class RawClient:
    """The protocol by hand, for what a well-behaved client never sends."""

    def __init__(self, workspace, arguments=(), env=None, stderr=None):
        self.server = subprocess.Popen([SKYLINE_LSP] + list(arguments),
                                       stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=stderr,
                                       cwd=workspace, env=env)

    def send(self, data):
        self.server.stdin.write(data)
        self.server.stdin.flush()

    def receive(self):
        length = None
        while True:
            line = self.server.stdout.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.server.stdout.read(length))

    def receive_until(self, accept):
        while True:
            message = self.receive()
            if accept(message):
                return message


def test_malformed_requests_answered(workspace):
    client = RawClient(workspace)
    path = workspace / "train.cpp"
    client.send(initialize_and_open(workspace, path))
    client.receive_until(lambda m: m.get("method") ==
                         "textDocument/publishDiagnostics")
    # Parameters that do not decode, a method the server does not have, and
    # a message that is not JSON: errors, and the server answers after them.
    client.send(
        frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
               "params": {"textDocument": {"uri": path.as_uri()},
                          "position": "x"}}) +
        frame({"jsonrpc": "2.0", "id": 3, "method": "skyline/nothing",
               "params": {}}) +
        b"Content-Length: 9\r\n\r\n{not json" +
        frame({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover",
               "params": {"textDocument": {"uri": path.as_uri()},
                          "position": {"line": 2, "character": 28}}}))
    bad = client.receive_until(lambda m: m.get("id") == 2)
    assert bad["error"]["code"] == -32602  # InvalidParams
    assert "failed to decode textDocument/hover request" in \
        bad["error"]["message"]
    unknown = client.receive_until(lambda m: m.get("id") == 3)
    assert unknown["error"]["code"] == -32601  # MethodNotFound
    hover = client.receive_until(lambda m: m.get("id") == 4)
    assert "`kBatchSize` = 16" in hover["result"]["contents"]["value"]
    client.send(frame({"jsonrpc": "2.0", "id": 5, "method": "shutdown"}) +
                frame({"jsonrpc": "2.0", "method": "exit"}))
    assert client.receive_until(lambda m: m.get("id") == 5)["result"] is None
    assert client.server.wait(timeout=60) == 0


def test_preamble_precompiled_and_used(workspace, tmp_path_factory):
    # The first analysis parses everything and then precompiles the
    # source's leading system #includes (the mock <torch/torch.h>); the
    # next, after an edit and a save, loads them from there and publishes
    # the same. (A save without an edit reads the model kept by the last
    # parse: test_model_cache.py.)
    cache = tmp_path_factory.mktemp("cache")
    log = workspace / "server.log"
    env = dict(os.environ, SKYLINE_CACHE_DIR=str(cache))
    with open(log, "w") as stderr:
        client = RawClient(workspace, ["--log=info"], env, stderr)
        path = workspace / "train.cpp"
        client.send(initialize_and_open(workspace, path))
        cold = client.receive_until(lambda m: m.get("method") ==
                                    "textDocument/publishDiagnostics")
        # The preamble is made on a thread of its own (a save meanwhile is
        # parsed whole, at once: test_dependable.py): wait for it here.
        deadline = time.monotonic() + 120
        while not list((cache / "preamble").glob("*.pch")):
            assert time.monotonic() < deadline, "no preamble was made"
            time.sleep(0.05)
        with open(path, "a") as source:
            source.write("// edited\n")
        client.send(frame({"jsonrpc": "2.0", "method": "textDocument/didSave",
                           "params": {"textDocument": {
                               "uri": path.as_uri()}}}))
        warm = client.receive_until(lambda m: m.get("method") ==
                                    "textDocument/publishDiagnostics")
        # An edit that does not compile: its error, and the preamble is
        # kept for the save that fixes it.
        text = path.read_text()
        path.write_text(text.replace("kBatchSize = 16;", "kBatchSize = ;"))
        client.send(frame({"jsonrpc": "2.0", "method": "textDocument/didSave",
                           "params": {"textDocument": {
                               "uri": path.as_uri()}}}))
        broken = client.receive_until(lambda m: m.get("method") ==
                                      "textDocument/publishDiagnostics")
        path.write_text(text + "// fixed\n")
        client.send(frame({"jsonrpc": "2.0", "method": "textDocument/didSave",
                           "params": {"textDocument": {
                               "uri": path.as_uri()}}}))
        fixed = client.receive_until(lambda m: m.get("method") ==
                                     "textDocument/publishDiagnostics")
        client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
                    frame({"jsonrpc": "2.0", "method": "exit"}))
        assert client.server.wait(timeout=60) == 0
    # The same, the measurement now marked as made before the edit.
    stale = " (measured before the change: sources)"
    assert json.loads(json.dumps(warm["params"]["diagnostics"]).replace(
        stale, "")) == cold["params"]["diagnostics"]
    (pch,) = (cache / "preamble").glob("*.pch")
    assert (cache / "preamble" / (pch.stem + ".h")).read_text() == \
        "#include <torch/torch.h>\n"
    lines = log.read_text().splitlines()
    analyses = [line.split("] ", 1)[1] for line in lines
                if "] analyzed " in line]
    assert analyses[0].startswith("analyzed %s in " % path)
    assert not analyses[0].endswith("(with its precompiled preamble)")
    assert analyses[1].endswith("(with its precompiled preamble)")
    assert any("] precompiled the preamble %s in " % pch in line
               for line in lines)
    # Clang's error at its place; the findings before it kept (marked).
    (error,) = [d for d in broken["params"]["diagnostics"]
                if d["severity"] == 1]
    assert error["source"] == "clang"
    assert error["message"] == "expected expression"
    assert any(line.endswith("] %s does not parse, with or without the "
                             "preamble %s" % (path, pch)) for line in lines)
    assert pch.exists()
    # Fixed: parsed through the preamble again.
    assert fixed["params"]["diagnostics"] == warm["params"]["diagnostics"]
    assert analyses[3].endswith("(with its precompiled preamble)")


RUNTIME_READ = """#include <cstdlib>
#include <torch/torch.h>

int main() {
  const char *env = std::getenv("TRAIN_BATCH");
  const int64_t batch_size = std::atoi(env);
  torch::nn::Linear model(3, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    model(torch::randn({batch_size, 3})).backward();
    opt.step();
  }
}
"""


async def test_batch_size_read_at_run_time(client, workspace):
    # The training loop's size comes from the environment with no default:
    # the read is named where it is, not a training loop "without a batch
    # size" (test/lit/batch-size/runtime-read.cpp on the command line).
    (workspace / "runtime.cpp").write_text(RUNTIME_READ)
    got = [summary(d)
           for d in await open_and_wait(client, workspace, "runtime.cpp")
           if d.code == "skyline-batch-size"]
    assert got == [
        (5, 29, 5, 43, I, "skyline-batch-size",
         "training batch size 'batch_size' read at run time from environment "
         "variable 'TRAIN_BATCH', with no default in the source (runtime)"),
        (5, 29, 5, 43, I, "skyline-batch-size",
         "the training batch size is read at run time from environment "
         "variable 'TRAIN_BATCH', with no default in the source: a "
         "measurement runs at the size the program is given and predicts no "
         "other; give it a default here, or name a variable that holds a "
         "literal with --batch-size-var=NAME"),
    ]
