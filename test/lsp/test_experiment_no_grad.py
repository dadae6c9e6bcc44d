# The no-grad evaluation experiment in the editor: a saved report of
# Inputs/experiments/eval-train.cpp (a test loop in main without a guard)
# with a paired trial (test/lit/experiments/no-grad-eval.test: passes that
# cross, so no clear effect on time, and 12 MiB held against 30 MiB). The
# warning at the loop's `{`, the guard as the preferred quickfix, whose title
# says the memory saved, and a hover with both arms' figures. Guarded passes
# slower beyond the noise but lighter: the guard is offered, not preferred.
import shutil
import subprocess

import pytest
from lsprotocol import types

from conftest import INPUTS, MOCK_FLAGS, SKYLINE_CHECK


def make_workspace(tmp_path, baseline, guarded):
    """train.cpp and its report with a no-grad-eval trial of these passes,
    where skyline-check leaves its latest (skyline-work/report.yaml)."""
    shutil.copy(INPUTS / "experiments" / "eval-train.cpp", tmp_path / "train.cpp")
    trial = (INPUTS / "experiments" / "no-grad-eval-trial.yaml").read_text()
    trial = (trial.replace("TRIAL_PEAK", "12582912")
             .replace("[BASELINE]", baseline)
             .replace("[TRIAL]", guarded))
    measured = tmp_path / "measured.yaml"
    measured.write_text((INPUTS / "reports" / "measured.yaml").read_text() +
                        trial)
    subprocess.run(["sh", str(INPUTS / "reports" / "make-report.sh"),
                    SKYLINE_CHECK, str(tmp_path), str(measured)] + MOCK_FLAGS,
                   check=True)
    (tmp_path / "skyline-work").mkdir()
    (tmp_path / "report.yaml").rename(tmp_path / "skyline-work" / "report.yaml")
    return tmp_path


@pytest.fixture
def workspace(tmp_path, request):
    """Passes that cross, unless a test names its own (indirect)."""
    baseline, guarded = getattr(request, "param",
                                ("[10, 9, 10, 9]", "[9, 10, 9, 10]"))
    return make_workspace(tmp_path, baseline, guarded)


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


async def fixes_at_the_loop(client, workspace, found):
    """The code actions with an edit at the test loop's `{` (28:38)."""
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(workspace),
            range=types.Range(types.Position(28, 38), types.Position(28, 38)),
            context=types.CodeActionContext(diagnostics=found)))
    return [a for a in actions if getattr(a, "edit", None)]


async def test_the_guard_is_the_quickfix_and_says_the_memory(client, workspace):
    diagnostics = await open_and_wait(client, workspace)
    found = [d for d in diagnostics
             if d.code == "skyline-experiment-no-grad-eval"]
    assert [(d.range.start.line, d.range.start.character, d.severity)
            for d in found] == [(28, 38, types.DiagnosticSeverity.Warning)]
    assert found[0].message.endswith(
        "held at most 12.0 MiB against 30.0 MiB (-60.0%): less memory, and "
        "no clear effect on time")
    fixes = await fixes_at_the_loop(client, workspace, found)
    assert [a.title for a in fixes] == [
        "Apply experiment no-grad-eval: -60% peak memory, +0.0% throughput "
        "measured (-13% to 15%)"]
    assert fixes[0].is_preferred
    (uri, edits), = fixes[0].edit.changes.items()
    assert [(e.range.start.line, e.range.start.character, e.new_text)
            for e in edits] == [(28, 38, "\n      torch::NoGradGuard no_grad;")]
    # Applied as an editor applies it, the program compiles.
    path = workspace / "train.cpp"
    lines = path.read_text().split("\n")
    lines[28] = lines[28][:38] + edits[0].new_text + lines[28][38:]
    path.write_text("\n".join(lines))
    subprocess.run(["clang++-19", "-fsyntax-only"] + MOCK_FLAGS + [str(path)],
                   check=True)


async def test_hover_says_both_arms(client, workspace):
    await open_and_wait(client, workspace)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=doc(workspace), position=types.Position(28, 6)))
    text = hover.contents.value
    assert "**experiment** `no-grad-eval` in the program's evaluation passes" \
        in text
    assert "| pass | 9.500 ms against 9.500 ms |" in text
    assert "| peak memory | 12.0 MiB against 30.0 MiB (-60%) |" in text
    assert "| verdict | less memory |" in text


# -9.0% throughput (-10.5% to -7.5%), 60% less memory
# (test/lit/experiments/no-grad-eval.test works the figures).
@pytest.mark.parametrize(
    "workspace", [("[10, 10.2, 10, 10.2]", "[11, 11.1, 11.2, 11.1]")],
    indirect=True)
async def test_a_trade_of_time_for_memory_is_offered_not_preferred(
        client, workspace):
    diagnostics = await open_and_wait(client, workspace)
    found = [d for d in diagnostics
             if d.code == "skyline-experiment-no-grad-eval"]
    assert [d.severity for d in found] == [types.DiagnosticSeverity.Warning]
    assert found[0].message.endswith(
        "less memory, but slower beyond the passes' noise: a trade of time "
        "for memory")
    fixes = await fixes_at_the_loop(client, workspace, found)
    assert [a.title for a in fixes] == [
        "Apply experiment no-grad-eval: -60% peak memory, -9.0% throughput "
        "measured (-10% to -7.5%)"]
    assert not fixes[0].is_preferred
