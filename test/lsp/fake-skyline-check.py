#!/usr/bin/env python3
# Stands in for skyline-check in the measure command's tests (a real
# measurement builds and runs a LibTorch program for a minute): prints the
# sweep's progress lines as skyline-check does, then leaves fake-report.yaml
# as the work directory's report and prints the suggestion. With a file
# fake-slow in the workspace it waits to be stopped instead (SIGTERM: exit
# 143, as skyline-check); with fake-fail it fails as a broken build does.
import os
import shutil
import signal
import sys
import time

signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
with open("fake-arguments.txt", "w") as f:
    f.write("\n".join(sys.argv[1:]) + "\n")
for run in (1, 2):
    sys.stderr.write("skyline-check: run %d/2 at batch size %d..." %
                     (run, 16 * run))
    sys.stderr.flush()
    time.sleep(0.3)
    sys.stderr.write(" 0.3 s, 8 iterations\n")
    sys.stderr.flush()
if os.path.exists("fake-slow"):
    time.sleep(120)
if os.path.exists("fake-fail"):
    sys.stderr.write("skyline-check: error: the instrumented program does "
                     "not build (log: skyline-work/build.log)\n")
    sys.exit(1)
os.makedirs("skyline-work", exist_ok=True)
shutil.copy("fake-report.yaml", "skyline-work/report.yaml")
print("suggested batch size: 152 (99% more throughput than 16; 90% interval "
      "30% to 203%)")
