#!/usr/bin/env python3
"""Compares a local sweep's report with one through Slurm of the same program.

usage: check-same-sweep.py LOCAL.yaml SLURM.yaml

Prints the sizes each measured, then fails unless they are the same sizes,
every Slurm run records its node (name, CPU model, cores), no local run
does, and the suggestions agree: both none, or gain intervals that overlap.
"""
import sys

import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def main():
    local, slurm = load(sys.argv[1]), load(sys.argv[2])
    sizes = [[run["batch_size"] for run in r["runs"]] for r in (local, slurm)]
    print("local sizes:", sizes[0])
    print("slurm sizes:", sizes[1])
    if sizes[0] != sizes[1]:
        sys.exit("the sweeps measured different sizes")
    for run in slurm["runs"]:
        node = run.get("node") or {}
        if not node.get("name") or not node.get("cpu_model") or not node.get("cores"):
            sys.exit("a Slurm run without its node: %r" % run.get("node"))
    print("slurm nodes:", sorted({run["node"]["name"] for run in slurm["runs"]}))
    if any("node" in run for run in local["runs"]):
        sys.exit("a local run records a node")
    picks = [r.get("suggestion") or {} for r in (local, slurm)]
    chosen = [p.get("batch_size") for p in picks]
    if None in chosen:
        if chosen != [None, None]:
            sys.exit("one sweep suggests %r, the other %r" % tuple(chosen))
        print("suggestions: none in both")
        return
    (a_low, a_high), (b_low, b_high) = picks[0]["gain_90"], picks[1]["gain_90"]
    print("suggestions: %d %s, %d %s" % (chosen[0], picks[0]["gain_90"],
                                          chosen[1], picks[1]["gain_90"]))
    if a_high < b_low or b_high < a_low:
        sys.exit("the suggestions' gain intervals do not overlap")


if __name__ == "__main__":
    main()
