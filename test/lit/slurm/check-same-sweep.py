#!/usr/bin/env python3
"""Compares a local sweep's report with one through Slurm of the same program.

usage: check-same-sweep.py LOCAL.yaml SLURM.yaml [LOCAL.log SLURM.log]

Prints the sizes each measured, then fails unless they are the same sizes,
every Slurm run records its node (name, CPU model, cores), no local run
does, and the suggestions agree: both none, or gain intervals that overlap.

With the sweeps' progress logs, a size a sweep measured only to settle an
unsure decision ("timing run 1 at batch size N (settling the decision)") is
not one of its planned sizes: whether a decision is unsure depends on the
runs' noise, so one sweep may settle where the other does not. The planned
sizes must still be the same; the suggestions are compared where both
sweeps settled the same way, since a settled one rests on more runs.
"""
import re
import sys

import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


SETTLING_PICK = re.compile(r"at batch size (\d+) \(settling the decision\)")


def settling_picks(path):
    with open(path) as f:
        return sorted({int(m.group(1)) for m in SETTLING_PICK.finditer(f.read())})


def main():
    local, slurm = load(sys.argv[1]), load(sys.argv[2])
    picks_measured = [[], []]
    if len(sys.argv) == 5:
        picks_measured = [settling_picks(sys.argv[3]), settling_picks(sys.argv[4])]
    sizes = [[run["batch_size"] for run in r["runs"] if run["batch_size"] not in extra]
             for r, extra in zip((local, slurm), picks_measured)]
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
    if picks_measured[0] != picks_measured[1]:
        print("suggestions: not compared; settling measured %r locally and %r "
              "through Slurm" % tuple(picks_measured))
        return
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
