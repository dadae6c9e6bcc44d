# One smoke test in a real editor: Debian's headless Neovim and its built-in
# LSP client open the program and print what skyline-lsp published.
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import INPUTS, SKYLINE_LSP


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
        "the iteration time at batch size 16: forward 1.00 ms, backward " \
        "1.00 ms of 3.60 ms [skyline-hot-layer]" in shown
    assert len(shown) == 13, run.stdout + run.stderr
