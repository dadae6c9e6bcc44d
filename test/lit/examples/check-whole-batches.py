#!/usr/bin/env python3
"""Checks the report (argv[1]) of a program that needs whole batches: the
runs saw the training dataset's size (argv[2]) and the greatest common
divisor of it and the other loaders' (argv[3]), and every size the sweep
measured divides the latter and is at most half the former. Then writes
argv[4]: the same report
with each run's time replaced by 0.5 + 0.05 x batch size ms, three timing
runs agreeing, so that what the model concludes from it does not hang on
how busy the machine was (nor its intervals: docs/model.md). Not a
test on its own (lit runs the .test files)."""
import sys
import yaml

report = yaml.safe_load(open(sys.argv[1]))
samples, common = int(sys.argv[2]), int(sys.argv[3])
runs = report["runs"]
assert len(runs) >= 3, runs
for run in runs:
    assert run.get("dataset_size") == samples, run
    assert run.get("datasets_gcd", samples) == common, run
    size = run["batch_size"]
    assert common % size == 0, ("measured", size)
    assert size <= samples // 2, ("past half the dataset", size)
    ms = 0.5 + 0.05 * size
    run["iteration_ms"] = {"median": ms, "mean": ms, "stddev": 0.01,
                           "min": ms, "max": ms}
    run["timing_runs"] = [ms, ms, ms]
    run["throughput"] = size / ms * 1000
for key in ("fits", "predictions", "suggestion", "capacity"):
    report.pop(key, None)
yaml.safe_dump(report, open(sys.argv[4], "w"))
print("sizes:", [r["batch_size"] for r in runs])
