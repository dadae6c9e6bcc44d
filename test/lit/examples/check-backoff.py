#!/usr/bin/env python3
"""Checks a report of an out-of-memory sweep: an OOM run, peaks under the
budget for the runs that fit, and a back-off between the last fit and the
first OOM. Not a test on its own (lit runs the .test files)."""
import sys
import yaml

report = yaml.safe_load(open(sys.argv[1]))
runs = report["runs"]
budget = report["device"]["memory_capacity_bytes"]
oom = [r["batch_size"] for r in runs if r["oom"]]
fit = [r["batch_size"] for r in runs if not r["oom"]]
assert oom, "no out-of-memory run: %s" % runs
assert all(r["peak_bytes"] <= budget for r in runs if not r["oom"]), runs
first = next(i for i, r in enumerate(runs) if r["oom"])
first_oom = runs[first]["batch_size"]
assert fit and max(fit) < first_oom, runs
after = runs[first + 1:]
assert after, "no back-off after the first OOM: %s" % runs
assert max(fit) < after[0]["batch_size"] < first_oom, runs
print("sizes:", [(r["batch_size"], r["oom"]) for r in runs])
