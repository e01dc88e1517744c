#!/usr/bin/python3
"""Validates hybridbench reports against the published schema (reports/schema/report.schema.json).

usage: validate_report.py FILE.json...   exit 0: all valid; 1: one is not (each error printed as
file: JSON path: message); 2: bad usage or unreadable file; 77: python3-jsonschema is missing
(CTest's skip code), with the reason.

Run it with Debian's /usr/bin/python3, which python3-jsonschema installs into; a pyenv or venv
python3 first on PATH usually lacks the module.
"""
import json
import os
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports", "schema",
                      "report.schema.json")


def main(argv):
    if len(argv) < 2:
        print("usage: validate_report.py FILE.json...", file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("SKIP: the jsonschema module is missing for " + sys.executable +
              " (Debian: apt-get install python3-jsonschema)", file=sys.stderr)
        return 77
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in argv[1:]:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot read as JSON: {e}", file=sys.stderr)
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            print(f"{path}: {where}: {e.message}", file=sys.stderr)
        if len(errors) > 20:
            print(f"{path}: ... and {len(errors) - 20} more errors", file=sys.stderr)
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
