#!/bin/sh
# make-report.sh SKYLINE_CHECK DIR MEASURED [MOCK_FLAGS...]: DIR/report.yaml is
# MEASURED with the program model of DIR/train.cpp appended, so the rules
# run on a saved report without building or running anything.
set -e
tool=$1 dir=$2 measured=$3
shift 3
cd "$dir"
{
  cat "$measured"
  echo "program:"
  "$tool" --analyze-only --format=yaml train.cpp -- "$@" | sed 's/^/  /'
} > report.yaml
