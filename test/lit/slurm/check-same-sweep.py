#!/usr/bin/env python3
"""Compares a local sweep's report with one through Slurm of the same program.

usage: check-same-sweep.py LOCAL.yaml SLURM.yaml LOCAL.log SLURM.log

Prints the sizes each measured, then fails unless the planned sizes are the
same, every Slurm run records its node (name, CPU model, cores), no local
run does, and the suggestions agree (test/lit/Inputs/sweep_agreement.py:
what the runs' noise decides is left out).
"""
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
import sweep_agreement  # noqa: E402


def main():
    reports = [sweep_agreement.load(path) for path in sys.argv[1:3]]
    local, slurm = reports
    settled = sweep_agreement.compare(reports, sys.argv[3:5], ["local", "slurm"])
    for run in slurm["runs"]:
        node = run.get("node") or {}
        if not node.get("name") or not node.get("cpu_model") or not node.get("cores"):
            sys.exit("a Slurm run without its node: %r" % run.get("node"))
    print("slurm nodes:", sorted({run["node"]["name"] for run in slurm["runs"]}))
    if any("node" in run for run in local["runs"]):
        sys.exit("a local run records a node")
    sweep_agreement.compare_suggestions(reports, settled)


if __name__ == "__main__":
    main()
