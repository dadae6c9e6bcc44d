#!/usr/bin/env python3
"""Validate a SARIF log against the SARIF 2.1.0 JSON schema (draft-04).

    validate-sarif.py SCHEMA FILE

Prints "FILE: valid SARIF 2.1.0 (N results)" and exits 0, or prints each
schema violation with the JSON path where it is and exits 1. A missing file
or one that is not JSON is an error too (exit 1).
"""

import json
import sys

import jsonschema


def load_json(path, what):
    """The parsed file, or exit 1 saying why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"{path}: cannot read the {what}: {e.strerror}")
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        sys.exit(f"{path}: the {what} is not JSON: {e}")


def json_path(error):
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def result_count(log):
    runs = log.get("runs") if isinstance(log, dict) else None
    if not isinstance(runs, list):
        return 0
    return sum(len(run.get("results") or []) for run in runs
               if isinstance(run, dict))


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    schema_path, log_path = argv[1], argv[2]
    schema = load_json(schema_path, "schema")
    log = load_json(log_path, "SARIF file")

    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log),
                    key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        print(f"{log_path}: {json_path(error)}: {error.message}",
              file=sys.stderr)
    if errors:
        return 1
    print(f"{log_path}: valid SARIF 2.1.0 ({result_count(log)} results)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
