#!/usr/bin/env python3
"""Interrupts a command while it compiles, as Ctrl-C in a terminal would.

usage: interrupt-build.py BUILD_DIR DIR SIGNAL COMMAND [ARGS...]

Starts COMMAND as the leader of a process group (a shell's foreground job),
waits (at most 10 minutes) until a compiler (gcc's cc1plus, clang -cc1) runs
in BUILD_DIR (not in a configure check below it), sends SIGNAL (INT, TERM,
HUP) to the group, and prints how the command ended ("exit N", 128 + the
signal when one ended it, as a shell says), then "left: none" or each
process that runs in DIR or names it in its command line and is still there
2 seconds after it ended (each is then killed). COMMAND's stdout and stderr
go to this script's stderr.
"""
import os
import signal
import subprocess
import sys
import time


def processes_under(directory):
    """(pid, argv, cwd) of every process that runs in directory (or below
    it) or whose command line names it."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % entry) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            cwd = os.readlink("/proc/%s/cwd" % entry)
        except OSError:
            continue
        if state == "Z":
            continue  # a zombie runs nothing
        argv = [a.decode(errors="replace") for a in argv if a]
        if (any(directory in a for a in argv) or cwd == directory or
                cwd.startswith(directory + "/")):
            found.append((int(entry), argv, cwd))
    return found


def is_compiler(argv):
    return bool(argv) and ("cc1plus" in os.path.basename(argv[0]) or
                           "-cc1" in argv)


def main():
    build_dir, directory = map(os.path.realpath, sys.argv[1:3])
    name = sys.argv[3]
    command = sys.argv[4:]
    sig = getattr(signal, "SIG" + name)
    # As a shell starts a foreground job: lit's workers ignore SIGINT, and
    # an ignored signal stays ignored across exec.
    for default in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(default, signal.SIG_DFL)
    child = subprocess.Popen(command, stdout=sys.stderr, stderr=sys.stderr,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 600
    while not any(is_compiler(argv) and cwd == build_dir
                  for _, argv, cwd in processes_under(build_dir)):
        if child.poll() is not None:
            print("ended before a compiler started, exit %d" % child.returncode)
            return 1
        if time.monotonic() > deadline:
            child.kill()
            print("no compiler started within 10 minutes")
            return 1
        time.sleep(0.1)
    os.killpg(child.pid, sig)
    try:
        code = child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        print("still running 60 s after SIG%s" % name)
        return 1
    print("exit %d" % (128 - code if code < 0 else code))
    time.sleep(2)
    left = processes_under(directory)
    for pid, argv, _ in left:
        print("left: %d %s" % (pid, " ".join(argv)))
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not left:
        print("left: none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
