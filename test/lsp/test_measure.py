# The measure command (workspace/executeCommand skyline.measure): the
# dynamic phase in the background with work-done progress, cancellable, one
# at a time a program; when it lands the diagnostics, hints and hovers come
# from its report. skyline-check is stood in for by fake-skyline-check.py,
# which prints the sweep's progress lines and writes the lit tests' report.
import asyncio
import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import MOCK_FLAGS, SKYLINE_LSP

FAKE = pathlib.Path(__file__).parent / "fake-skyline-check.py"


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[SKYLINE_LSP, "--skyline-check=" + str(FAKE)]))
async def client(lsp_client: LanguageClient, workspace):
    # Not measured yet: the report is what the measurement will write.
    (workspace / "skyline-work" / "report.yaml").rename(
        workspace / "fake-report.yaml")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)),
        root_uri=workspace.as_uri(),
        initialization_options={"arguments": ["--"] + MOCK_FLAGS}))
    yield
    await lsp_client.shutdown_session()


async def open_program(client, workspace):
    path = workspace / "train.cpp"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(
            uri=path.as_uri(), language_id="cpp", version=1,
            text=path.read_text())))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return path.as_uri()


async def progress_until(client, done):
    for _ in range(1200):
        for token, reports in client.progress_reports.items():
            if done(reports):
                return token, reports
        await asyncio.sleep(0.05)
    raise AssertionError("no such progress: %r" % client.progress_reports)


def ended(reports):
    return reports and reports[-1].kind == "end"


async def test_measure_lands(client, workspace):
    uri = await open_program(client, workspace)
    assert [d.severity for d in client.diagnostics[uri]].count(
        types.DiagnosticSeverity.Warning) == 0
    # Offered as an action on the batch size's line too.
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(2, 28), types.Position(2, 28)),
            context=types.CodeActionContext(diagnostics=[])))
    measure = actions[-1]
    assert measure.title == "Measure the batch sizes (skyline-check)"
    assert measure.command == "skyline.measure"
    assert list(measure.arguments) == [uri]
    assert await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="skyline.measure",
                                   arguments=[uri])) is None
    _, reports = await progress_until(client, ended)
    assert reports[0].kind == "begin"
    assert reports[0].title == "skyline-check: measuring train.cpp"
    assert reports[0].cancellable
    messages = [(r.message, r.percentage) for r in reports[1:-1]]
    # The build's share is 30%, the planned runs' 60% (MeasureProgress.h):
    # each run's line starts its share.
    assert ("run 1/2 at batch size 16...", 30) in messages
    assert ("run 2/2 at batch size 32...", 60) in messages
    percentages = [r.percentage for r in reports[1:-1]]
    assert percentages == sorted(percentages), "it never goes back"
    assert reports[-1].message == (
        "measured; suggested batch size: 152 (99% more throughput than 16; "
        "90% interval 30% to 203%)")
    # skyline-check was given what the analysis is: the source, then the
    # flags after --.
    assert (workspace / "fake-arguments.txt").read_text().split("\n")[0] == \
        str(workspace / "train.cpp")
    # The analysis that follows reads the new report. (Its diagnostics may
    # have come while the progress was awaited: the program is unchanged,
    # its model is read back, not parsed.)
    def warnings():
        return [d.message for d in client.diagnostics[uri]
                if d.severity == types.DiagnosticSeverity.Warning]
    for _ in range(1200):
        if warnings():
            break
        await asyncio.sleep(0.05)
    warnings = warnings()
    assert warnings[0].startswith("batch size 16 is below the throughput "
                                  "knee: 152 is predicted")
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(0, 0), types.Position(40, 0))))
    assert "4444 samples/s, 1.11 MiB peak" in [h.label for h in hints]


async def test_measure_cancelled_and_one_at_a_time(client, workspace):
    (workspace / "fake-slow").write_text("")
    uri = await open_program(client, workspace)
    params = types.ExecuteCommandParams(command="skyline.measure",
                                        arguments=[uri])
    await client.workspace_execute_command_async(params)
    token, _ = await progress_until(client, lambda reports: any(
        getattr(r, "message", None) == "run 2/2 at batch size 32..."
        for r in reports))
    # A second measurement of the program waits for the first to end.
    with pytest.raises(Exception, match="already running: cancel it first"):
        await client.workspace_execute_command_async(params)
    # Other requests are answered meanwhile.
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(2, 28))) is not None
    client.window_work_done_progress_cancel(
        types.WorkDoneProgressCancelParams(token=token))
    _, reports = await progress_until(client, ended)
    assert reports[-1].message == "cancelled"
    assert not (workspace / "skyline-work" / "report.yaml").exists()


async def test_measure_failure_shown(client, workspace):
    (workspace / "fake-fail").write_text("")
    uri = await open_program(client, workspace)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="skyline.measure", arguments=[uri]))
    _, reports = await progress_until(client, ended)
    assert reports[-1].message == (
        "failed (exit 1): error: the instrumented program does not build "
        "(log: skyline-work/build.log)")
    # Said as an error too (the message follows the progress's end).
    for _ in range(1200):
        if client.messages:
            break
        await asyncio.sleep(0.05)
    assert client.messages[-1].type == types.MessageType.Error
    assert client.messages[-1].message == "skyline-check: " + \
        reports[-1].message
