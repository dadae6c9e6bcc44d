#!/usr/bin/env python3
"""Checks the report of a program that needs whole batches: every size the
sweep measured, and the suggestion, divide the dataset's size (argv[2]),
which the runs saw. Not a test on its own (lit runs the .test files)."""
import sys
import yaml

report = yaml.safe_load(open(sys.argv[1]))
samples = int(sys.argv[2])
runs = report["runs"]
assert len(runs) >= 3, runs
for run in runs:
    assert run.get("dataset_size") == samples, run
    assert samples % run["batch_size"] == 0, ("measured", run["batch_size"])
suggested = report["suggestion"]["batch_size"]
assert samples % suggested == 0, ("suggested", suggested)
assert suggested <= samples // 2, ("past half the dataset", suggested)
print("sizes:", [r["batch_size"] for r in runs], "suggested:", suggested)
