# skyline-lsp's end-to-end tests: pytest-lsp's client drives the real server
# over stdio. CTest passes the binaries and inputs in the environment.
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SKYLINE_LSP = os.environ.get("SKYLINE_LSP", "skyline-lsp")
SKYLINE_CHECK = os.environ.get("SKYLINE_CHECK", "skyline-check")
INPUTS = pathlib.Path(
    os.environ.get("SKYLINE_TEST_INPUTS",
                   pathlib.Path(__file__).parent.parent / "lit" / "Inputs"))
MOCK_FLAGS = ["-std=c++17", "-isystem", str(INPUTS / "mock")]
# The servers' precompiled preambles go to a cache of the tests' own, never
# the user's (CTest gives one in the build tree).
os.environ.setdefault("SKYLINE_CACHE_DIR",
                      os.path.join(tempfile.gettempdir(),
                                   "skyline-lsp-test-cache"))


@pytest.fixture
def workspace(tmp_path):
    """train.cpp on the mock LibTorch headers, and the report of a
    measurement of it where skyline-check leaves its latest one
    (skyline-work/report.yaml): no build, no run."""
    shutil.copy(INPUTS / "reports" / "train.cpp", tmp_path / "train.cpp")
    subprocess.run(["sh", str(INPUTS / "reports" / "make-report.sh"),
                    SKYLINE_CHECK, str(tmp_path),
                    str(INPUTS / "reports" / "measured.yaml")] + MOCK_FLAGS,
                   check=True)
    (tmp_path / "skyline-work").mkdir()
    (tmp_path / "report.yaml").rename(tmp_path / "skyline-work" / "report.yaml")
    return tmp_path


def initialize_params(root, arguments=None):
    # Markdown hovers, as editors declare them (a client that lists no
    # format gets plain text).
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                hover=types.HoverClientCapabilities(content_format=[
                    types.MarkupKind.Markdown, types.MarkupKind.PlainText]))),
        root_uri=root.as_uri(),
        initialization_options={"arguments": (arguments or []) + ["--"] +
                                MOCK_FLAGS})


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[SKYLINE_LSP]))
async def client(lsp_client: LanguageClient, workspace):
    await lsp_client.initialize_session(initialize_params(workspace))
    yield
    await lsp_client.shutdown_session()
