# Opening a file of a hostile repository runs nothing it chose and writes
# nothing it names (docs/reliability.md, "Trust"): its compile_commands.json
# loads a plugin (a constructor that leaves a marker) and writes a dependency
# file over a stand-in for ~/.bashrc. The open parses the file and then
# precompiles its preamble with clang, both with the sanitized command.
import json
import os
import pathlib
import subprocess
import time

from conftest import INPUTS
from test_skyline_lsp import RawClient, frame, initialize_and_open

EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


def test_opening_a_hostile_repository_runs_and_writes_nothing(tmp_path):
    subprocess.run(["sh", str(INPUTS / "hostile" / "make-repo.sh"),
                    str(tmp_path), str(INPUTS / "mock")], check=True)
    repo = tmp_path / "repo"
    bashrc = (tmp_path / "victim" / ".bashrc").read_text()
    marker = tmp_path / "marker"
    cache = tmp_path / "cache"  # empty: the preamble is made on open
    env = dict(os.environ, SKYLINE_CACHE_DIR=str(cache),
               HOSTILE_MARKER=str(marker))
    source = repo / "src" / "train.cpp"
    log_path = tmp_path / "server.log"
    log_file = open(log_path, "w")
    client = RawClient(repo, ["--log=info"], env, log_file)
    client.send(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"capabilities": {},
                                  "rootUri": repo.as_uri(),
                                  "initializationOptions": {
                                      "compilationDatabase":
                                          str(repo / "build")}}}) +
                frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": {
                           "uri": source.as_uri(), "languageId": "cpp",
                           "version": 1, "text": source.read_text()}}}))
    published = client.receive_until(
        lambda m: m.get("method") == "textDocument/publishDiagnostics")
    messages = [d["message"] for d in published["params"]["diagnostics"]]
    assert any("training batch size 'kTrainBatchSize' = 64" in m
               for m in messages), messages
    # The preamble's clang ran with the command too: wait until it is made.
    deadline = time.monotonic() + 120
    while not list((cache / "preamble").glob("*.pch")):
        assert time.monotonic() < deadline, "no preamble was made"
        time.sleep(0.1)
    client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
                EXIT)
    client.receive_until(lambda m: m.get("id") == 2)
    assert client.server.wait(timeout=60) == 0
    log_file.close()
    log = log_path.read_text()
    assert "dropped from the compile command of" in log
    assert "'-fplugin=./tools/libevil.so' (loads code into the compiler)" in log
    assert not marker.exists(), "the repository's plugin ran"
    assert (tmp_path / "victim" / ".bashrc").read_text() == bashrc
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == \
        [".bashrc"]
    assert not (tmp_path / "PWNED").exists()


def test_an_include_of_stdin_is_refused_not_read(workspace):
    # The parse used to read the server's own JSON-RPC stream through
    # '#include "/dev/stdin"' (and then never answered shutdown): the
    # include is an error at its line, and the server answers on.
    path = workspace / "train.cpp"
    path.write_text('#include "/dev/stdin"\n' + path.read_text())
    client = RawClient(workspace, stderr=subprocess.DEVNULL)
    client.send(initialize_and_open(workspace, path))
    published = client.receive_until(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and
        m["params"]["diagnostics"])
    messages = [d["message"] for d in published["params"]["diagnostics"]]
    assert any("cannot open file '/dev/stdin': not a regular file" in m
               for m in messages), messages
    client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
                EXIT)
    assert client.receive_until(lambda m: m.get("id") == 2)["result"] is None
    assert client.server.wait(timeout=60) == 0
