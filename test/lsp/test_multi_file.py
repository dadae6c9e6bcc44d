# A program over several sources (the lit tests' multi/: the batch size in
# config.h, the layers made and called in block.cpp, trained in main.cpp):
# where its measurement lists the sources, the server analyzes them
# together, as skyline-check does, so that block.cpp, opened alone, is part
# of a training program and its layers get their hints.
import asyncio
import shutil
import subprocess

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import INPUTS, MOCK_FLAGS, SKYLINE_CHECK, SKYLINE_LSP

H = types.DiagnosticSeverity.Hint
I = types.DiagnosticSeverity.Information
W = types.DiagnosticSeverity.Warning


def measured_report():
    """The lit tests' measured runs, their layers the multi program's and
    their first size its declared one (24)."""
    text = (INPUTS / "reports" / "measured.yaml").read_text()
    for old, new in [
            ("batch_size: 16", "batch_size: 24"),
            ("{name: fc1, type: torch::nn::Linear, file: train.cpp, line: 11",
             "{name: inner, type: torch::nn::Linear, file: block.cpp, line: 8"),
            ("{name: fc2, type: torch::nn::Linear, file: train.cpp, line: 12",
             "{name: outer, type: torch::nn::Linear, file: block.cpp, line: 8"),
            ("{name: model, type: Net, file: train.cpp, line: 23",
             "{name: block, type: Block, file: main.cpp, line: 9")]:
        assert old in text
        text = text.replace(old, new)
    return text


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[SKYLINE_LSP]))
async def client(lsp_client: LanguageClient, tmp_path):
    for name in ["main.cpp", "block.cpp", "block.h", "config.h"]:
        shutil.copy(INPUTS / "multi" / name, tmp_path / name)
    model = subprocess.run(
        [SKYLINE_CHECK, "--analyze-only", "--format=yaml", "main.cpp",
         "block.cpp", "--"] + MOCK_FLAGS,
        cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    work = tmp_path / "skyline-work"
    work.mkdir()
    (work / "report.yaml").write_text(
        measured_report() + "program:\n" +
        "".join("  " + line + "\n" for line in model.splitlines()))
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri(),
        initialization_options={"arguments": ["--"] + MOCK_FLAGS}))
    yield
    await lsp_client.shutdown_session()


async def test_sources_analyzed_together(client, tmp_path):
    block = tmp_path / "block.cpp"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(
            uri=block.as_uri(), language_id="cpp", version=1,
            text=block.read_text())))
    # One publication a file (block.cpp, config.h, main.cpp, in that order).
    await client.wait_for_notification("textDocument/publishDiagnostics")
    main_uri = (tmp_path / "main.cpp").as_uri()
    for _ in range(1200):
        if main_uri in client.diagnostics:
            break
        await asyncio.sleep(0.05)
    # block.cpp's own notes and findings, and the other files' (published
    # with theirs). Alone, block.cpp would be no training program at all.
    got = [(d.range.start.line, d.range.start.character, d.severity,
            d.message) for d in client.diagnostics[block.as_uri()]]
    assert got == [
        (3, 35, H, "module 'inner' (torch::nn::Linear) constructed here, "
         "registered at block.cpp:4"),
        (4, 35, H, "module 'outer' (torch::nn::Linear) constructed here, "
         "registered at block.cpp:5"),
        (7, 59, H, "call of module 'outer'"),
        (7, 77, H, "call of module 'inner'"),
        # The measured rules on the whole program: its hot layer, here.
        (7, 77, W, "layer 'inner' (torch::nn::Linear) takes 56% of the "
         "median iteration time at batch size 24: forward 1.00 ms, backward "
         "1.00 ms of 3.60 ms"),
        (3, 35, I, "'inner' is constructed here with width, width"),
    ]
    main = [d.message for d in client.diagnostics[main_uri]]
    assert "module 'block' (Block) constructed here" in main
    config = [d.message for d in client.diagnostics[
        (tmp_path / "config.h").as_uri()]]
    assert config[0] == \
        "training batch size 'kBatchSize' = 24 (namespace-constant)"
    # The layers made and called in block.cpp, measured in main.cpp's
    # training: their hints, at their calls.
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=block.as_uri()),
        range=types.Range(types.Position(0, 0), types.Position(20, 0))))
    assert sorted((h.position.line, h.label) for h in hints) == [
        (7, "fwd 0.30 ms, bwd 0.20 ms, 14% of the median iteration"),
        (7, "fwd 1.00 ms, bwd 1.00 ms, 56% of the median iteration"),
    ]
