#!/usr/bin/env python3
"""Compares a local run's report with one --from-runs wrote of a bundle.

usage: check-same-answer.py LOCAL.yaml BUNDLED.yaml

Prints the sizes each measured and the layers named, then fails unless the
sizes are the same, the bundled runs' layers carry the local runs' names,
and the suggestions agree: both none, or gain intervals that overlap.
"""
import sys

import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def layer_names(report):
    return sorted({layer["name"] for run in report["runs"]
                   for layer in run.get("layers") or []})


def main():
    local, bundled = load(sys.argv[1]), load(sys.argv[2])
    sizes = [[run["batch_size"] for run in r["runs"]] for r in (local, bundled)]
    print("local sizes:", sizes[0])
    print("bundled sizes:", sizes[1])
    if sizes[0] != sizes[1]:
        sys.exit("the sweeps measured different sizes")
    names = [layer_names(r) for r in (local, bundled)]
    print("bundled layers:", names[1])
    if names[0] != names[1]:
        sys.exit("the layers are named differently: %r, %r" % tuple(names))
    picks = [r.get("suggestion") or {} for r in (local, bundled)]
    chosen = [p.get("batch_size") for p in picks]
    if None in chosen:
        if chosen != [None, None]:
            sys.exit("one suggests %r, the other %r" % tuple(chosen))
        print("suggestions: none in both")
        return
    (a_low, a_high), (b_low, b_high) = picks[0]["gain_90"], picks[1]["gain_90"]
    print("suggestions: %d and %d" % (chosen[0], chosen[1]))
    if a_high < b_low or b_high < a_low:
        sys.exit("the suggestions' gain intervals do not overlap")


if __name__ == "__main__":
    main()
