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
# A size whose first run (a whole timing run) ran out of data bounds every
# size the sweep chose after it. A probed size's first run asked for too few
# iterations to run out (docs/user-guide.md): its whole runs that did came
# after the sweep had chosen every size, and bound none.
for i in ended:
    if runs[i].get("probe"):
        continue
    limit = runs[i]["batch_size"]
    after = [r["batch_size"] for r in runs[i + 1:]]
    assert all(size < limit for size in after), (limit, after)
print("sizes:", [r["batch_size"] for r in runs])
