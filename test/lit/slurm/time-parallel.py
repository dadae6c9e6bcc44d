#!/usr/bin/env python3
"""Times one sweep through Slurm with --parallel-runs=1, then =2.

usage: time-parallel.py REPORT_PREFIX COMMAND [ARGS...]

Runs COMMAND --parallel-runs=N --report=REPORT_PREFIX-N.yaml for N = 1, 2
(its output to this script's stderr), prints each wall time and their
ratio, and fails unless both measured the same sizes and the sweep with two
runs at once took less wall time than the one at a time.
"""
import subprocess
import sys
import time

import yaml


def sweep(command, prefix, n):
    report = "%s-%d.yaml" % (prefix, n)
    start = time.monotonic()
    subprocess.run(command + ["--parallel-runs=%d" % n, "--report=" + report],
                   stdout=sys.stderr, stderr=sys.stderr, check=True)
    seconds = time.monotonic() - start
    with open(report) as f:
        runs = yaml.safe_load(f)["runs"]
    return seconds, [run["batch_size"] for run in runs]


def main():
    prefix, command = sys.argv[1], sys.argv[2:]
    one, sizes_one = sweep(command, prefix, 1)
    two, sizes_two = sweep(command, prefix, 2)
    print("sizes: %s, %s" % (sizes_one, sizes_two))
    print("wall time: %.1f s one at a time, %.1f s two at a time, ratio %.2f"
          % (one, two, two / one))
    if sizes_one != sizes_two:
        sys.exit("the sweeps measured different sizes")
    if two >= one:
        sys.exit("two runs at once took no less wall time")


if __name__ == "__main__":
    main()
