# An experiment's finding in the editor: the saved report of test_skyline_lsp
# with a threads trial (test/lit/experiments/threads.test: 3.0 ms against the
# declared size's 3.6 ms, one run each, the runs' assumed 5% spread: +20%
# throughput, 90% interval 6.8% to 34.8%). The warning at main's `{`, its
# fix-it as the preferred quickfix, and a hover with the measured effect.
import shutil
import subprocess

import pytest
from lsprotocol import types

from conftest import INPUTS, MOCK_FLAGS, SKYLINE_CHECK


@pytest.fixture
def workspace(tmp_path):
    """train.cpp and its report with the threads trial, where skyline-check
    leaves its latest (skyline-work/report.yaml)."""
    shutil.copy(INPUTS / "reports" / "train.cpp", tmp_path / "train.cpp")
    trial = (INPUTS / "experiments" / "threads-trial.yaml").read_text()
    measured = tmp_path / "measured.yaml"
    measured.write_text((INPUTS / "reports" / "measured.yaml").read_text() +
                        trial.replace("TRIAL_MS", "3.0"))
    subprocess.run(["sh", str(INPUTS / "reports" / "make-report.sh"),
                    SKYLINE_CHECK, str(tmp_path), str(measured)] + MOCK_FLAGS,
                   check=True)
    (tmp_path / "skyline-work").mkdir()
    (tmp_path / "report.yaml").rename(tmp_path / "skyline-work" / "report.yaml")
    return tmp_path


def doc(workspace):
    return types.TextDocumentIdentifier(uri=(workspace / "train.cpp").as_uri())


async def open_and_wait(client, workspace):
    path = workspace / "train.cpp"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=path.as_uri(), language_id="cpp", version=1,
            text=path.read_text())))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return client.diagnostics[path.as_uri()]


MESSAGE = ("experiment threads: with 1 intra-op thread (the program's 2) at "
           "batch size 16 an iteration took 3.000 ms against 3.600 ms (+20.0% "
           "throughput; 90% interval 6.8% to 34.8%), faster beyond the runs' "
           "noise")


async def test_the_warning_and_its_quickfix(client, workspace):
    diagnostics = await open_and_wait(client, workspace)
    found = [d for d in diagnostics if d.code == "skyline-experiment-threads"]
    assert [(d.range.start.line, d.range.start.character, d.severity,
             d.message) for d in found] == [
        (16, 12, types.DiagnosticSeverity.Warning, MESSAGE)]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(workspace),
            range=types.Range(types.Position(16, 12), types.Position(16, 12)),
            context=types.CodeActionContext(diagnostics=found)))
    fixes = [a for a in actions if getattr(a, "edit", None)]
    assert [a.title for a in fixes] == [
        "Apply experiment threads: +20% throughput measured (6.8% to 35%)"]
    fix = fixes[0]
    assert fix.is_preferred
    assert [d.message for d in fix.diagnostics] == [MESSAGE]
    (uri, edits), = fix.edit.changes.items()
    assert uri == doc(workspace).uri
    assert [(e.range.start.line, e.range.start.character, e.range.end.line,
             e.range.end.character, e.new_text) for e in edits] == [
        (16, 12, 16, 12, "\n  torch::set_num_threads(1);")]
    # Applied as an editor applies it, the program compiles.
    path = workspace / "train.cpp"
    lines = path.read_text().split("\n")
    lines[16] = lines[16][:12] + edits[0].new_text + lines[16][12:]
    path.write_text("\n".join(lines))
    assert "int main() {\n  torch::set_num_threads(1);\n" in path.read_text()
    subprocess.run(["clang++-19", "-fsyntax-only"] + MOCK_FLAGS + [str(path)],
                   check=True)
    # Elsewhere, no experiment's action.
    elsewhere = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(workspace),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[])))
    assert not [a for a in elsewhere or [] if a.title.startswith("Apply experiment")]


async def test_hover_says_the_measured_effect(client, workspace):
    await open_and_wait(client, workspace)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=doc(workspace), position=types.Position(16, 4)))
    text = hover.contents.value
    assert "**experiment** `threads` at batch size 16" in text
    assert "| trial | 1 intra-op thread (the program's 2) |" in text
    assert "| iteration | 3.000 ms against 3.600 ms |" in text
    assert "| throughput | +20% (6.8% to 35%, 90% interval) |" in text
    assert "| verdict | faster |" in text
