# The front end's model kept between analyses (FrontendCache.h): opening a
# program whose files, flags and options are unchanged since a parse reads
# the model kept then instead of parsing: skyline-check's, in the work
# directory, else the server's own (in the cache); a changed file is
# parsed again. Each server's --log=info says where its model came from.
import os
import subprocess

from conftest import MOCK_FLAGS, SKYLINE_CHECK
from test_skyline_lsp import RawClient, frame, initialize_and_open


def session(workspace, cache, tmp_path, name):
    """One server: initialize, open train.cpp, its diagnostics, shutdown and
    exit; the diagnostics and the log's one analysis line."""
    log = tmp_path / (name + ".log")
    env = dict(os.environ, SKYLINE_CACHE_DIR=str(cache))
    path = workspace / "train.cpp"
    with open(log, "w") as stderr:
        client = RawClient(workspace, ["--log=info"], env, stderr)
        client.send(initialize_and_open(workspace, path))
        published = client.receive_until(
            lambda m: m.get("method") == "textDocument/publishDiagnostics")
        client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) +
                    frame({"jsonrpc": "2.0", "method": "exit"}))
        assert client.server.wait(timeout=60) == 0
    (analysis,) = [line.split("] ", 1)[1]
                   for line in log.read_text().splitlines()
                   if "] analyzed " in line]
    return published["params"]["diagnostics"], analysis


def model_from(analysis):
    """Where the analysis's model came from; None: parsed."""
    head, _, tail = analysis.partition(" (its model from ")
    return tail[:-1] if tail else None


def test_model_kept_between_sessions(workspace, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    logs = tmp_path_factory.mktemp("logs")
    work = workspace / "skyline-work"
    report = work / "report.yaml"
    kept_report = workspace / "kept-report.yaml"
    report.rename(kept_report)
    work.rmdir()
    # skyline-check keeps the model in its work directory before it builds
    # (the build fails here at once: no LibTorch in /nonexistent).
    run = subprocess.run(
        [SKYLINE_CHECK, "train.cpp", "--torch-dir=/nonexistent", "--"] +
        MOCK_FLAGS, cwd=workspace, capture_output=True, text=True)
    assert run.returncode == 1
    assert "error: --torch-dir '/nonexistent' holds no TorchConfig.cmake" in \
        run.stderr
    cli_model = work / "program-model.yaml"
    assert cli_model.exists()
    kept_report.rename(report)

    # Its model, unchanged: no parse at all.
    first, analysis = session(workspace, cache, logs, "cli")
    assert model_from(analysis) == str(cli_model)

    # Without it: a parse, which the server keeps in its cache.
    cli_model.unlink()
    parsed, analysis = session(workspace, cache, logs, "parsed")
    assert model_from(analysis) is None
    assert parsed == first
    (own,) = (cache / "models").glob("*.yaml")

    # The editor opened again: the server's own model.
    again, analysis = session(workspace, cache, logs, "again")
    assert model_from(analysis) == str(own)
    assert again == first

    # The source changed (two lines above everything): parsed, and the
    # diagnostics follow the code.
    path = workspace / "train.cpp"
    path.write_text("// one\n// two\n" + path.read_text())
    moved, analysis = session(workspace, cache, logs, "moved")
    assert model_from(analysis) is None
    batch = [d for d in first if d["code"] == "skyline-batch-size"][0]
    moved_batch = [d for d in moved if d["code"] == "skyline-batch-size"][0]
    assert moved_batch["range"]["start"]["line"] == \
        batch["range"]["start"]["line"] + 2
