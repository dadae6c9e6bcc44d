# The editor and the command line on one saved report say the same numbers
# (issue 33, item 5): the sizes the code actions offer stay under the bound
# the command line puts on its suggestion, the hot layer's share is of the
# median iteration, the warnings the command line prints about the
# measurement reach the editor; and the answers take the form the client
# asked for (hover's contentFormat, codeAction's context.only).
#
# The report is the lit tests' (iteration 2 + 0.1 b ms, peak 1e6 + 1e4 b
# bytes, 4e6 bytes of capacity: 260 fits) with a loader of 400 samples, so
# the command line suggests nothing past 200, a run at 32 that shared the
# CPUs with other work, and one problem of the sweep's.
import os
import re
import shutil
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import (INPUTS, MOCK_FLAGS, SKYLINE_CHECK, SKYLINE_LSP,
                      initialize_params)

PROBLEM = ("the run at batch size 512 failed (exit 1) once batch size 64 had "
           "measured; no size from it on is suggested")
W = types.DiagnosticSeverity.Warning


@pytest.fixture
def measured(tmp_path):
    shutil.copy(INPUTS / "reports" / "train.cpp", tmp_path / "train.cpp")
    text = (INPUTS / "reports" / "measured.yaml").read_text()
    # Every run saw the loader's 400 samples; the one at 32 had other work
    # on the CPUs (1.5 cores, on average); the sweep said one problem.
    text = text.replace("    wall_seconds: 1\n",
                        "    wall_seconds: 1\n    dataset_size: 400\n")
    text = text.replace("    throughput: 6153.846\n",
                        "    throughput: 6153.846\n    other_work_cores: 1.5\n")
    text = text.replace("problems: []", "problems: ['%s']" % PROBLEM)
    assert text.count("dataset_size: 400") == 3
    (tmp_path / "measured.yaml").write_text(text)
    subprocess.run(["sh", str(INPUTS / "reports" / "make-report.sh"),
                    SKYLINE_CHECK, str(tmp_path),
                    str(tmp_path / "measured.yaml")] + MOCK_FLAGS, check=True)
    (tmp_path / "skyline-work").mkdir()
    shutil.copy(tmp_path / "report.yaml",
                tmp_path / "skyline-work" / "report.yaml")
    return tmp_path


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[SKYLINE_LSP]))
async def client(lsp_client: LanguageClient, measured):
    # A client that declares no hover format (conftest's declares Markdown).
    params = initialize_params(measured)
    params.capabilities = types.ClientCapabilities()
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def markdown_capabilities(root):
    params = initialize_params(root)
    params.capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[
                types.MarkupKind.Markdown, types.MarkupKind.PlainText])))
    return params


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[SKYLINE_LSP]))
async def markdown_client(lsp_client: LanguageClient, measured):
    await lsp_client.initialize_session(markdown_capabilities(measured))
    yield
    await lsp_client.shutdown_session()


def document(root):
    return types.TextDocumentIdentifier(uri=(root / "train.cpp").as_uri())


async def open_and_wait(client, root):
    path = root / "train.cpp"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=path.as_uri(), language_id="cpp", version=1,
            text=path.read_text())))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return client.diagnostics[path.as_uri()]


def command_line(root):
    """What skyline-check --from-report prints on the same report."""
    run = subprocess.run([SKYLINE_CHECK, "--from-report=report.yaml"],
                         cwd=root, capture_output=True, text=True)
    assert run.returncode in (0, 2), run.stderr
    return run.stdout + run.stderr


async def code_actions(client, root, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=document(root),
            range=types.Range(types.Position(2, 28), types.Position(2, 28)),
            context=types.CodeActionContext(diagnostics=[], only=only)))


async def test_the_offered_sizes_stay_under_the_command_lines_bound(
        client, measured):
    await open_and_wait(client, measured)
    printed = command_line(measured)
    # The command line: 260 fits, but no size past 200 is suggested; under
    # 200 it suggests 128 (8649 samples/s within 5% of 200's 9091).
    assert "largest batch size that fits: 260 (3.43 MiB usable of " \
        "3.81 MiB)" in printed
    assert "the training data holds 400 samples: no size past half of it " \
        "(200) is suggested" in printed
    assert "suggested batch size: 128 (95% more throughput than 16" in printed
    actions = await code_actions(client, measured)
    assert [a.title for a in actions
            if getattr(a, "kind", None) == "quickfix"] == [
        "Set batch size to 128 (suggested: +95% throughput, 2.17 MiB peak)",
        "Set batch size to 128 and scale the learning rate to 0.08 (linear "
        "scaling rule)",
        "Set batch size to 144 (+98% throughput, 2.33 MiB peak)",
        "Set batch size to 168 (+101% throughput, 2.56 MiB peak)",
        "Set batch size to 200 (half the training data: +105% throughput, "
        "2.86 MiB peak)",
        "Set batch size to 32 (doubled: +38% throughput, 1.26 MiB peak)",
    ]


async def test_the_measurements_warnings_reach_the_editor(client, measured):
    got = await open_and_wait(client, measured)
    printed = command_line(measured)
    # The command line prints the sweep's problem under its run table.
    assert "skyline-check: warning: " + PROBLEM in printed
    cores = os.cpu_count()
    busy = ("other work held the CPUs during the kept runs at batch size 32 "
            "(1.5 of %d cores, on average): their times include waiting for "
            "a CPU; measure on a quiet machine" % cores)
    # In the editor: warnings at the batch-size literal, with no rule id
    # (no rule makes them), after the rules' findings.
    warnings = [(d.range.start.line, d.range.start.character,
                 d.range.end.line, d.range.end.character, d.severity,
                 d.message) for d in got if not d.code]
    assert warnings == [(2, 27, 2, 29, W, PROBLEM), (2, 27, 2, 29, W, busy)]
    assert [d.source for d in got if not d.code] == ["skyline-check"] * 2


async def test_the_hot_layer_is_a_share_of_the_median(client, measured):
    got = await open_and_wait(client, measured)
    printed = command_line(measured)
    # The run table's iteration is the median: 3.60 ms at 16.
    assert re.search(r"\n +16 +8 +3\.60 ± 0\.05 ", printed), printed
    message = ("layer 'fc1' (torch::nn::Linear) takes 56% of the median "
               "iteration time at batch size 16: forward 1.00 ms, backward "
               "1.00 ms of 3.60 ms")
    assert "train.cpp:11:21: warning: " + message + " [skyline-hot-layer]" \
        in printed
    assert message in [d.message for d in got]
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=document(measured),
                              range=types.Range(types.Position(0, 0),
                                                types.Position(40, 0))))
    labels = [h.label for h in hints]
    assert "fwd 1.00 ms, bwd 1.00 ms, 56% of the median iteration" in labels
    assert "median iteration 3.60 ms at batch size 16" in labels


async def test_markdown_hovers_for_a_client_that_takes_them(markdown_client,
                                                            measured):
    await open_and_wait(markdown_client, measured)
    hover = await markdown_client.text_document_hover_async(types.HoverParams(
        text_document=document(measured), position=types.Position(2, 28)))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith(
        "**training batch size** `kBatchSize` = 16 (namespace-constant)")


async def test_plain_text_hovers_for_a_client_that_lists_no_markdown(
        client, measured):
    await open_and_wait(client, measured)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=document(measured), position=types.Position(10, 22)))
    assert hover.contents.kind == types.MarkupKind.PlainText
    assert hover.contents.value == (
        "layer 'fc1' (torch::nn::Linear) at batch size 16\n"
        "\n"
        "forward                               1.00 ms\n"
        "backward                              1.00 ms\n"
        "share of the median iteration  56% of 3.60 ms\n"
        "activations at the peak              32.0 KiB\n"
        "weights                              1.53 MiB\n")


async def test_code_actions_of_the_kinds_asked_for(client, measured):
    await open_and_wait(client, measured)
    every = await code_actions(client, measured)
    fixes = [a for a in every if getattr(a, "kind", None) == "quickfix"]
    assert len(fixes) == 6
    # Quick fixes asked for: those, without the measure command.
    asked = await code_actions(client, measured, only=["quickfix"])
    assert [a.title for a in asked] == [a.title for a in fixes]
    # Another kind: none.
    assert list(await code_actions(client, measured, only=["refactor"])) == []
