#!/usr/bin/env python3
"""Opens an --html page in headless Chromium and fails on what a reader would
see go wrong: a console message (the page has no script, so any message is a
fault), a request to the network, an empty screenshot, a missing element.

usage: check-html.py PAGE.html SCREENSHOT.png [--expect-id ID ...]

Exit codes: 0 the page is fine, 1 it is not (the reasons on stderr), 2 usage,
77 chromium is not installed (tests report this as unsupported).
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

TIMEOUT_SECONDS = 60
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WINDOW = (1280, 2000)

# Schemes a page may load from disk without a network.
LOCAL_SCHEMES = ("file:", "data:", "about:", "chrome:", "chrome-error:", "blob:")

# src=, href=, xlink:href=, url(...) and @import that leave the machine.
# The SVG namespace (xmlns="http://www.w3.org/2000/svg") is a name, not a
# request, and is not matched.
NETWORK_REFERENCE = re.compile(
    r"""(?:\b(?:src|href|srcset|action|poster|data)\s*=\s*["']?\s*|url\(\s*["']?|@import\s+["']?)"""
    r"""(?:https?:|ftp:|wss?:|//)""",
    re.IGNORECASE,
)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_command(chromium, profile, net_log, extra, url):
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=%d,%d" % WINDOW,
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=2000",
        "--user-data-dir=" + profile,
        # Keep the browser's own traffic (updates, sync, dictionaries) out of
        # the net log, and make sure nothing leaves the machine anyway.
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--log-net-log=" + net_log,
    ] + extra + [url]


def run_chromium(args):
    try:
        done = subprocess.run(args, capture_output=True, timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return None, "chromium did not finish within %d s" % TIMEOUT_SECONDS
    return done, None


def console_problems(stderr):
    problems = []
    for line in stderr.splitlines():
        # "[pid:tid:time:INFO:CONSOLE:3] "text", source: ..." for console
        # messages; without the ids and time the two runs read the same.
        text = re.sub(r"^\[[^\]]*\]\s*", "", line).strip()
        if ":CONSOLE" in line or "Uncaught" in line:
            problems.append("console message: " + text)
        elif "Failed to load resource" in line or "net::ERR_" in line:
            problems.append("failed load: " + text)
    return problems


def page_requests(net_log_path):
    """URLs the page (not the browser itself) asked for over the network."""
    try:
        with open(net_log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return ["cannot read the net log %s: %s" % (net_log_path, e)]
    try:
        log = json.loads(text)
    except json.JSONDecodeError:
        # Chromium may leave the closing brackets off when killed.
        try:
            log = json.loads(text.rstrip().rstrip(",") + "]}")
        except json.JSONDecodeError as e:
            return ["cannot parse the net log: %s" % e]
    types = {v: k for k, v in log.get("constants", {}).get("logEventTypes", {}).items()}
    urls = []
    for event in log.get("events", []):
        if types.get(event.get("type")) != "URL_REQUEST_START_JOB":
            continue
        params = event.get("params", {})
        url = params.get("url", "")
        # The page is a file: its requests carry a file:// isolation key.
        from_page = ("file://" in params.get("network_isolation_key", "")
                     or params.get("initiator") == "null")
        if from_page and not url.startswith(LOCAL_SCHEMES) and url not in urls:
            urls.append(url)
    return ["network request: " + url for url in urls]


def screenshot_problems(path):
    try:
        with open(path, "rb") as f:
            head = f.read(24)
        size = os.path.getsize(path)
    except OSError:
        return ["no screenshot was written to " + path]
    if size == 0:
        return ["the screenshot is empty"]
    if not head.startswith(PNG_MAGIC) or head[12:16] != b"IHDR":
        return ["the screenshot is not a PNG"]
    width, height = struct.unpack(">II", head[16:24])
    if (width, height) != WINDOW:
        return ["the screenshot is %dx%d, expected %dx%d" % ((width, height) + WINDOW)]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("screenshot")
    parser.add_argument("--expect-id", action="append", default=[], metavar="ID")
    args = parser.parse_args()

    chromium = find_chromium()
    if not chromium:
        print("chromium not found", file=sys.stderr)
        return 77
    page = os.path.abspath(args.page)
    if not os.path.isfile(page):
        print("check-html: no page at " + page, file=sys.stderr)
        return 1
    with open(page, encoding="utf-8", errors="replace") as f:
        html = f.read()
    problems = ["network reference in the page: " + m.group(0)
                for m in NETWORK_REFERENCE.finditer(html)]

    screenshot = os.path.abspath(args.screenshot)
    if os.path.exists(screenshot):
        os.remove(screenshot)
    url = "file://" + page
    with tempfile.TemporaryDirectory(prefix="check-html-") as tmp:
        shot_log = os.path.join(tmp, "screenshot-net.json")
        done, error = run_chromium(chromium_command(
            chromium, os.path.join(tmp, "profile-screenshot"), shot_log,
            ["--screenshot=" + screenshot], url))
        if error:
            problems.append(error)
        else:
            stderr = done.stderr.decode("utf-8", "replace")
            if done.returncode != 0:
                problems.append("chromium --screenshot exited with %d:\n%s"
                                % (done.returncode, stderr[-2000:]))
            problems += console_problems(stderr)
            problems += page_requests(shot_log)
            problems += screenshot_problems(screenshot)

        dom_log = os.path.join(tmp, "dom-net.json")
        done, error = run_chromium(chromium_command(
            chromium, os.path.join(tmp, "profile-dom"), dom_log, ["--dump-dom"], url))
        if error:
            problems.append(error)
        else:
            problems += console_problems(done.stderr.decode("utf-8", "replace"))
            problems += page_requests(dom_log)
            dom = done.stdout.decode("utf-8", "replace")
            if done.returncode != 0 or "<body" not in dom:
                problems.append("chromium --dump-dom gave no document (exit %d)"
                                % done.returncode)
            ids = set(re.findall(r"""\bid\s*=\s*["']([^"']+)["']""", dom))
            problems += ["no element with id=\"%s\" in the DOM" % i
                         for i in args.expect_id if i not in ids]

    # Both runs log the same console messages and requests: report each once.
    unique = list(dict.fromkeys(problems))
    for problem in unique:
        print("check-html: " + problem, file=sys.stderr)
    if unique:
        print("check-html: FAIL %s" % args.page, file=sys.stderr)
        return 1
    print("check-html: ok %s (%d bytes of PNG)" % (args.page, os.path.getsize(screenshot)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
