#!/usr/bin/env python3
"""Compares a local run's report with one --from-runs wrote of a bundle.

usage: check-same-answer.py LOCAL.yaml BUNDLED.yaml LOCAL.log BUNDLED.log

Prints the sizes each measured and the layers named, then fails unless the
planned sizes are the same, the bundled runs' layers carry the local runs'
names, and the suggestions agree (test/lit/Inputs/sweep_agreement.py: what
the runs' noise decides is left out).
"""
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
import sweep_agreement  # noqa: E402


def layer_names(report):
    return sorted({layer["name"] for run in report["runs"]
                   for layer in run.get("layers") or []})


def main():
    reports = [sweep_agreement.load(path) for path in sys.argv[1:3]]
    settled = sweep_agreement.compare(reports, sys.argv[3:5],
                                      ["local", "bundled"])
    names = [layer_names(r) for r in reports]
    print("bundled layers:", names[1])
    if names[0] != names[1]:
        sys.exit("the layers are named differently: %r, %r" % tuple(names))
    sweep_agreement.compare_suggestions(reports, settled)


if __name__ == "__main__":
    main()
