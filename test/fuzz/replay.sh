#!/bin/sh
# replay.sh FUZZER DIR...: runs FUZZER once on every file in the DIRs (its
# seeds and the inputs that once crashed it) without fuzzing; fails on the
# first crash, leak or sanitizer report. Missing DIRs are skipped, but not
# every DIR: a fuzzer without a single input is a broken checkout.
set -eu
fuzzer=$1
shift
count=0
for dir in "$@"; do
  [ -d "$dir" ] || continue
  for input in "$dir"/*; do
    [ -f "$input" ] || continue
    # One process per input: a crash names the input that caused it.
    "$fuzzer" -runs=1 -rss_limit_mb=2048 -timeout=30 -close_fd_mask=1 "$input" \
      > /dev/null 2> "${TMPDIR:-/tmp}/skyline-replay.$$" || {
      cat "${TMPDIR:-/tmp}/skyline-replay.$$" >&2
      rm -f "${TMPDIR:-/tmp}/skyline-replay.$$"
      echo "replay: $fuzzer failed on $input" >&2
      exit 1
    }
    count=$((count + 1))
  done
done
rm -f "${TMPDIR:-/tmp}/skyline-replay.$$"
if [ "$count" = 0 ]; then
  echo "replay: no inputs in $*" >&2
  exit 1
fi
echo "replay: $count inputs, no crash"
