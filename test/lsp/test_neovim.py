# One smoke test in a real editor: Debian's headless Neovim and its built-in
# LSP client open the program and print what skyline-lsp published.
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import INPUTS, MOCK_FLAGS, SKYLINE_LSP

DOCS = pathlib.Path(__file__).parent.parent.parent / "docs" / "editors.md"


@pytest.mark.skipif(shutil.which("nvim") is None,
                    reason="Neovim is not installed (utils/bootstrap)")
def test_neovim_shows_the_diagnostics(workspace):
    script = pathlib.Path(__file__).parent / "neovim-smoke.lua"
    env = dict(os.environ, SKYLINE_LSP=SKYLINE_LSP, ROOT=str(workspace),
               FILE=str(workspace / "train.cpp"), MOCK=str(INPUTS / "mock"))
    run = subprocess.run(["nvim", "--headless", "--clean", "-c",
                          "luafile " + str(script)],
                         env=env, cwd=workspace, capture_output=True,
                         text=True, timeout=120)
    shown = run.stdout.splitlines()
    # The command line's clang-style locations and messages
    # (test/lit/rules/from-report.test), as the editor received them.
    assert "train.cpp:3:28: training batch size 'kBatchSize' = 16 " \
        "(namespace-constant) [skyline-batch-size]" in shown
    assert "train.cpp:3:28: batch size 16 is below the throughput knee: 152 " \
        "is predicted to train 99% faster (30% to 203%, 90% interval; 4444 " \
        "-> 8837 samples/s) with 2.40 MiB peak memory of 3.43 MiB usable " \
        "(extrapolated outside the sizes measured) [skyline-batch-size]" \
        in shown
    assert "train.cpp:11:21: layer 'fc1' (torch::nn::Linear) takes 56% of " \
        "the median iteration time at batch size 16: forward 1.00 ms, " \
        "backward 1.00 ms of 3.60 ms [skyline-hot-layer]" in shown
    assert len(shown) == 13, run.stdout + run.stderr


def documented_setup(version_heading):
    """The Lua block under a Neovim heading of docs/editors.md, as written."""
    section = DOCS.read_text().split("### " + version_heading, 1)[1]
    return re.search(r"```lua\n(.*?)```", section, re.S).group(1)


@pytest.mark.skipif(shutil.which("nvim") is None,
                    reason="Neovim is not installed (utils/bootstrap)")
def test_documented_neovim_setup_from_another_directory(workspace,
                                                        tmp_path_factory):
    # The project as a user has it: a repository (.git) whose build
    # directory holds the compilation database and skyline-check's work
    # directory with its latest measurement (-p build).
    (workspace / ".git").mkdir()
    build = workspace / "build"
    build.mkdir()
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(workspace), "file": str(workspace / "train.cpp"),
        "arguments": ["clang++-19"] + MOCK_FLAGS +
                     ["-c", str(workspace / "train.cpp")]}]))
    (workspace / "skyline-work").rename(build / "skyline-work")
    # docs/editors.md's set-up for Debian 12's Neovim, with this build's
    # server; Neovim started elsewhere, the file opened by its path.
    setup = documented_setup("Neovim 0.7 to 0.9")
    placeholder = "/path/to/skyline-check/build/bin/skyline-lsp"
    assert setup.count(placeholder) == 1
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    init = elsewhere / "init.lua"
    init.write_text(setup.replace(placeholder, SKYLINE_LSP))
    home = tmp_path_factory.mktemp("home")  # nothing of the user's read
    env = dict(os.environ, FILE=str(workspace / "train.cpp"),
               **{v: str(home) for v in ["HOME", "XDG_CONFIG_HOME",
                                         "XDG_DATA_HOME", "XDG_STATE_HOME",
                                         "XDG_CACHE_HOME"]})
    script = pathlib.Path(__file__).parent / "neovim-docs.lua"
    run = subprocess.run(["nvim", "--headless", "-u", str(init), "-i", "NONE",
                          "-c", "luafile " + str(script)],
                         env=env, cwd=elsewhere, capture_output=True,
                         text=True, timeout=120)
    shown = run.stdout.splitlines()
    assert shown[0] == "cwd: " + str(elsewhere), run.stdout + run.stderr
    # The project's database and measurement, found from the file: the
    # front end's notes and the measured findings, as in the smoke test.
    assert "3:28: training batch size 'kBatchSize' = 16 " \
        "(namespace-constant) [skyline-batch-size]" in shown
    assert "3:28: batch size 16 is below the throughput knee: 152 is " \
        "predicted to train 99% faster (30% to 203%, 90% interval; 4444 -> " \
        "8837 samples/s) with 2.40 MiB peak memory of 3.43 MiB usable " \
        "(extrapolated outside the sizes measured) [skyline-batch-size]" \
        in shown
    assert len(shown) == 1 + 13 + 1, run.stdout + run.stderr
    # K, as the set-up maps it, asked the server for the batch size's
    # hover (unmapped, Neovim 0.7's K runs :Man and no hover comes).
    assert shown[-1] == "hover: **training batch size** `kBatchSize` = 16 " \
        "(namespace-constant)", run.stdout + run.stderr


@pytest.mark.skipif(shutil.which("nvim") is None,
                    reason="Neovim is not installed (utils/bootstrap)")
def test_documented_neovim_setups_are_lua(tmp_path):
    # The 0.10 set-up cannot run on 0.7 (vim.fs.root, vim.lsp.start), but
    # LuaJIT compiles it as written.
    for heading in ["Neovim (0.10 or later)", "Neovim 0.7 to 0.9"]:
        path = tmp_path / "setup.lua"
        path.write_text(documented_setup(heading))
        run = subprocess.run(
            ["nvim", "--headless", "--clean", "-i", "NONE", "-c",
             "lua local _, e = loadfile('%s') io.stdout:write(e or 'ok')" %
             path, "-c", "qa!"],
            capture_output=True, text=True, timeout=60)
        assert run.stdout == "ok", heading + ": " + run.stdout + run.stderr
