"""Whether two sweeps of one program agree, for the scripts that compare a
local sweep with one run elsewhere (through Slurm, from a bundle).

Two sweeps measure the same program at different times, so the runs' noise
decides some things; what it decides is left out of the comparison:

- a size a sweep measured only to settle an unsure decision ("timing run 1
  at batch size N (settling the decision)" in its progress) is not one of
  its planned sizes: one sweep may settle where the other does not;
- the suggestions are compared where both sweeps settled the same way (a
  settled one rests on more runs): both none, or gain intervals that
  overlap. A sweep with no suggestion because its pick was unsure (the
  report's suggestion.unsure) agrees with one that suggests where their
  intervals overlap: the other's runs varied less, not differently.
"""
import re
import sys

import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


SETTLING_PICK = re.compile(r"at batch size (\d+) \(settling the decision\)")


def settling_picks(log_path):
    """The sizes a sweep's progress says it measured to settle a decision."""
    if log_path is None:
        return []
    with open(log_path) as f:
        return sorted({int(m.group(1)) for m in SETTLING_PICK.finditer(f.read())})


def planned_sizes(report, settled):
    return [run["batch_size"] for run in report["runs"]
            if run["batch_size"] not in settled]


def gain_interval(suggestion):
    """The suggestion's gain interval, else its unsure pick's; None if neither."""
    if suggestion.get("batch_size") is not None:
        return suggestion["gain_90"]
    unsure = suggestion.get("unsure")
    return unsure["gain_90"] if unsure else None


def compare(reports, logs, labels):
    """Prints what each sweep measured and suggested; exits with the reason
    where they disagree."""
    settled = [settling_picks(log) for log in logs]
    sizes = [planned_sizes(r, s) for r, s in zip(reports, settled)]
    for label, planned in zip(labels, sizes):
        print("%s sizes:" % label, planned)
    if sizes[0] != sizes[1]:
        sys.exit("the sweeps measured different sizes")
    return settled


def compare_suggestions(reports, settled):
    if settled[0] != settled[1]:
        print("suggestions: not compared; settling measured %r and %r"
              % tuple(settled))
        return
    picks = [r.get("suggestion") or {} for r in reports]
    chosen = [p.get("batch_size") for p in picks]
    if chosen == [None, None]:
        print("suggestions: none in both")
        return
    intervals = [gain_interval(p) for p in picks]
    if None in intervals:
        sys.exit("one sweep suggests %r, the other %r" % tuple(chosen))
    (a_low, a_high), (b_low, b_high) = intervals
    print("suggestions: %s %s, %s %s" % (chosen[0], intervals[0],
                                          chosen[1], intervals[1]))
    if a_high < b_low or b_high < a_low:
        sys.exit("the suggestions' gain intervals do not overlap")
