#!/usr/bin/env python3
"""Checks a report of a sweep that reached the end of a short dataset: one
run ended early with an iteration across an epoch's end left out, every run
measured at least one iteration (none was spent on a size whose data never
reaches one), and no run after the first that ran out of data went past it.
Not a test on its own (lit runs the .test files)."""
import sys
import yaml

runs = yaml.safe_load(open(sys.argv[1]))["runs"]
assert all(r["iterations"] >= 1 for r in runs), runs
ended = [i for i, r in enumerate(runs)
         if r.get("ended_early") and r.get("epoch_end_iterations", 0) >= 1]
assert ended, "no run ended early across an epoch's end: %s" % runs
limit = runs[ended[0]]["batch_size"]
after = [r["batch_size"] for r in runs[ended[0] + 1:]]
assert all(size < limit for size in after), (limit, after)
print("sizes:", [r["batch_size"] for r in runs])
