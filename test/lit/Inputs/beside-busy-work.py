#!/usr/bin/env python3
"""beside-busy-work.py COMMAND...: runs COMMAND while a child process keeps
one CPU busy the whole time (other work on the machine), and exits with
COMMAND's status. The child is killed however COMMAND ends."""
import multiprocessing
import subprocess
import sys


def spin():
    while True:
        pass


if __name__ == "__main__":
    busy = multiprocessing.Process(target=spin, daemon=True)
    busy.start()
    try:
        status = subprocess.run(sys.argv[1:]).returncode
    finally:
        busy.kill()
        busy.join()
    sys.exit(status)
