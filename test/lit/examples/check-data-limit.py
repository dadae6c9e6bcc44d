#!/usr/bin/env python3
"""Checks a report of a sweep that reached the end of a short dataset: one
run ended early with an iteration across an epoch's end left out, and no
run after it went past its size (runs that measured nothing are not in the
report; the test's CHECK-NOT covers them). Not a test on its own (lit runs
the .test files)."""
import sys
import yaml

runs = yaml.safe_load(open(sys.argv[1]))["runs"]
ended = [i for i, r in enumerate(runs)
         if r.get("ended_early") and r.get("epoch_end_iterations", 0) >= 1]
assert ended, "no run ended early across an epoch's end: %s" % runs
limit = runs[ended[0]]["batch_size"]
after = [r["batch_size"] for r in runs[ended[0] + 1:]]
assert all(size < limit for size in after), (limit, after)
print("sizes:", [r["batch_size"] for r in runs])
