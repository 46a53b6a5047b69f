#!/usr/bin/env python3
"""Checks every JSON line of FILE against docs/records.schema.json (python3-jsonschema, an
independent validator); prints each line that fails and exits 1, or prints how many of each
type passed."""
import collections
import json
import pathlib
import sys

import jsonschema

schema = json.loads((pathlib.Path(__file__).resolve().parent.parent / "docs/records.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
types = collections.Counter()
failed = 0
for number, line in enumerate(pathlib.Path(sys.argv[1]).read_text().splitlines(), 1):
    if not line.strip():
        continue
    record = json.loads(line)
    errors = list(validator.iter_errors(record))
    if errors:
        failed += 1
        print(f"line {number}: {errors[0].message}: {line[:200]}")
    else:
        types[record["type"]] += 1
print(" ".join(f"{name}={count}" for name, count in sorted(types.items())))
sys.exit(1 if failed else 0)
