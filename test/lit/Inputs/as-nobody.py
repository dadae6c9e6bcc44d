#!/usr/bin/env python3
"""Runs a command as an unprivileged user, so that a file with no read
permission cannot be read: as root (uid 0) it drops to nobody (65534),
otherwise it runs the command as it is.

usage: as-nobody.py COMMAND [ARGS...]
"""
import os
import sys

if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
os.execvp(sys.argv[1], sys.argv[1:])
