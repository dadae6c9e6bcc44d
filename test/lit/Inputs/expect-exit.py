#!/usr/bin/env python3
"""Runs a command and fails unless it exits with the expected code.

usage: expect-exit.py CODE COMMAND [ARGS...]
stdout and stderr pass through, so FileCheck can read them.
"""
import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:])
if result.returncode != expected:
    sys.stderr.write("expect-exit: %s exited with %d, expected %d\n"
                     % (sys.argv[2], result.returncode, expected))
    sys.exit(1)
