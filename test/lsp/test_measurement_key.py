# Measurements kept by what decides them (docs/editors.md, "Where the
# measurement comes from"): a report measured with other compile flags is
# shown marked, saying so; one kept under the program's key now is shown
# unmarked. The flags come from the workspace's compile_commands.json,
# changed between saves as a user changes a build; the server's key for the
# code as it is now is read from its log message (the test computes no
# hash of its own).
import json
import re
import shutil

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import MOCK_FLAGS, SKYLINE_LSP

KEY = re.compile(
    r"skyline-lsp: (?P<file>\S+): measurement (?P<report>\S+) \((?P<how>[^)]*)"
    r"\); the program's key now: (?P<name>[0-9a-f]{24}) \(sources "
    r"(?P<sources>[0-9a-f]{64}), compile_flags (?P<flags>[0-9a-f]{64}), "
    r"libtorch (?P<libtorch>[0-9a-f]{64}), device (?P<device>\w+)\)$")

SUGGESTION = (
    "batch size 16 is below the throughput knee: 152 is predicted to train "
    "99% faster (30% to 203%, 90% interval; 4444 -> 8837 samples/s) with "
    "2.40 MiB peak memory of 3.43 MiB usable (extrapolated outside the sizes "
    "measured)")


def write_database(workspace, extra):
    build = workspace / "build"
    build.mkdir(exist_ok=True)
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(workspace),
        "file": str(workspace / "train.cpp"),
        "arguments": ["clang++"] + MOCK_FLAGS + extra +
                     ["-c", str(workspace / "train.cpp")]}]))


def keyed(report_text, key):
    """The report as skyline-check writes it after measuring under key."""
    return report_text + (
        "measured_with:\n  sources: %s\n  compile_flags: %s\n"
        "  libtorch: %s\n  device: %s\n" % (
            key["sources"], key["flags"], key["libtorch"], key["device"]))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[SKYLINE_LSP]))
async def client(lsp_client: LanguageClient, workspace):
    # Measured with -DMEASURED=1 in the build's flags: -p build, whose work
    # directory is build/skyline-work.
    write_database(workspace, ["-DMEASURED=1"])
    work = workspace / "build" / "skyline-work"
    work.mkdir()
    shutil.move(str(workspace / "skyline-work" / "report.yaml"),
                str(work / "report.yaml"))
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        initialization_options={"compilationDatabase": "build"}))
    yield
    await lsp_client.shutdown_session()


async def analyzed(client, workspace, first=False):
    """Opens (first) or saves train.cpp; its diagnostics' messages and the
    server's key for the program now."""
    path = workspace / "train.cpp"
    logged = len(client.log_messages)
    if first:
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="cpp", version=1,
                text=path.read_text())))
    else:
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    keys = [KEY.match(m.message) for m in client.log_messages[logged:]]
    keys = [k for k in keys if k]
    assert len(keys) == 1, [m.message for m in client.log_messages]
    assert keys[0]["file"] == str(path)
    return ([d.message for d in client.diagnostics[path.as_uri()]],
            keys[0])


async def test_flags_decide_which_measurement_is_current(client, workspace):
    work = workspace / "build" / "skyline-work"
    latest = work / "report.yaml"
    unkeyed = latest.read_text()

    # A report from before keys were kept: only its sources are compared.
    messages, measured = await analyzed(client, workspace, first=True)
    assert measured["how"] == "written without a key"
    assert measured["report"] == str(latest)
    assert measured["device"] == "auto"
    assert SUGGESTION in messages

    # skyline-check measured it with -DMEASURED=1: the latest report carries
    # that key. The same flags now: shown as it is.
    latest.write_text(keyed(unkeyed, measured))
    messages, now = await analyzed(client, workspace)
    assert now["how"] == "the same key"
    assert now["name"] == measured["name"]
    assert SUGGESTION in messages

    # The build's flags changed since: the same report, marked as measured
    # before the change of the compile flags and of nothing else.
    write_database(workspace, [])
    messages, now = await analyzed(client, workspace)
    assert now["how"] == "measured before the change: compile flags"
    assert now["report"] == str(latest)
    assert now["flags"] != measured["flags"]
    assert (now["sources"], now["libtorch"], now["device"]) == (
        measured["sources"], measured["libtorch"], measured["device"])
    assert SUGGESTION + " (measured before the change: compile flags)" \
        in messages
    assert SUGGESTION not in messages
    # The text did not change: the suggestion's fix-it still applies.
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(
                uri=(workspace / "train.cpp").as_uri()),
            range=types.Range(types.Position(2, 28), types.Position(2, 28)),
            context=types.CodeActionContext(diagnostics=[])))
    assert actions[0].title == \
        "Set batch size to 152 (suggested: +99% throughput, 2.40 MiB peak)"

    # A measurement kept under the key of these flags (an earlier run with
    # them, or the next): shown instead of the latest, unmarked.
    kept = work / "reports" / (now["name"] + ".yaml")
    kept.parent.mkdir()
    kept.write_text(keyed(unkeyed, now))
    messages, exact = await analyzed(client, workspace)
    assert exact["report"] == str(kept)
    assert exact["how"] == "the same key"
    assert SUGGESTION in messages
    assert not [m for m in messages if "measured before the change" in m]

    # Back to -DMEASURED=1: the latest is the exact one again.
    write_database(workspace, ["-DMEASURED=1"])
    messages, back = await analyzed(client, workspace)
    assert back["report"] == str(latest)
    assert back["how"] == "the same key"
    assert back["name"] == measured["name"]
    assert SUGGESTION in messages
