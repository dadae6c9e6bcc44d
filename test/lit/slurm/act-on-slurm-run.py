#!/usr/bin/env python3
"""Acts on a skyline-check whose run goes through Slurm, mid-run.

usage: act-on-slurm-run.py ACTION LOG TEXT COMMAND [ARGS...]

Starts COMMAND as a process group leader (a shell's foreground job), waits
(at most 5 minutes) until LOG (the run's log, which srun fills) contains
TEXT, then acts: `cancel` cancels every job named skyline-* (scancel, as a
user or an administrator would), `INT` sends SIGINT to the group (Ctrl-C).
Prints how COMMAND ended ("exit N", 128 + the signal where one ended it),
then what squeue still lists ("queue: empty", else its lines). COMMAND's
output goes to this script's stderr.
"""
import os
import signal
import subprocess
import sys
import time


def queue():
    out = subprocess.run(["squeue", "-h", "-o", "%i %j %T"], capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def main():
    action, log, text = sys.argv[1:4]
    command = sys.argv[4:]
    for default in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(default, signal.SIG_DFL)
    child = subprocess.Popen(command, stdout=sys.stderr, stderr=sys.stderr,
                             start_new_session=False, process_group=0)
    deadline = time.time() + 300
    while time.time() < deadline and child.poll() is None:
        try:
            with open(log, errors="replace") as f:
                if text in f.read():
                    break
        except OSError:
            pass
        time.sleep(0.2)
    if child.poll() is None:
        if action == "cancel":
            ids = [line.split()[0] for line in queue()
                   if line.split()[1].startswith("skyline-")]
            subprocess.run(["scancel"] + ids, check=True)
        else:
            os.killpg(child.pid, getattr(signal, "SIG" + action))
    code = child.wait()
    print("exit %d" % (128 - code if code < 0 else code))
    left = queue()
    print("queue: " + ("empty" if not left else "; ".join(left)))


if __name__ == "__main__":
    main()
