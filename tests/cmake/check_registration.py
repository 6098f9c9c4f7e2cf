#!/usr/bin/env python3
"""Checks that ctest runs every Catch2 case of every test binary, once each.

Usage: check_registration.py --build-dir DIR BINARY...

For each binary, the cases it lists (--list-test-names-only) must be exactly
the ctest entries that run it, one entry per case, each entry's spec naming
its case (Catch2's escapes undone) and carrying `--warn NoTests`, so that an
entry whose spec matches nothing fails. Prints the counts side by side.
"""
import argparse
import json
import os
import subprocess
import sys


def unescape(spec: str) -> str:
    out, i = [], 0
    while i < len(spec):
        if spec[i] == "\\" and i + 1 < len(spec):
            i += 1
        out.append(spec[i])
        i += 1
    return "".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    shown = subprocess.run(["ctest", "--show-only=json-v1"], cwd=args.build_dir,
                           capture_output=True, text=True, check=True)
    tests = json.loads(shown.stdout)["tests"]
    by_binary = {}
    for t in tests:
        cmd = t.get("command") or []
        if cmd:
            by_binary.setdefault(os.path.realpath(cmd[0]), []).append((t["name"], cmd[1:]))

    failures = []
    for binary in args.binaries:
        listing = subprocess.run([binary, "--list-test-names-only"], capture_output=True, text=True)
        names = [l.rstrip("\r") for l in listing.stdout.split("\n") if l.strip()]
        entries = by_binary.get(os.path.realpath(binary), [])
        specs = []
        for test_name, rest in entries:
            if len(rest) < 1 or "--warn" not in rest or "NoTests" not in rest:
                failures.append(f"{test_name}: runs {binary} without a one-case spec and --warn NoTests")
                continue
            specs.append(unescape(rest[0]))
        missing = sorted(set(names) - set(specs))
        extra = sorted(set(specs) - set(names))
        dup = sorted({s for s in specs if specs.count(s) > 1})
        print(f"{os.path.basename(binary)}: {len(names)} cases in the binary, "
              f"{len(entries)} ctest entries")
        for n in missing:
            failures.append(f"{os.path.basename(binary)}: case '{n}' has no ctest entry")
        for n in extra:
            failures.append(f"{os.path.basename(binary)}: ctest entry for '{n}' names no case")
        for n in dup:
            failures.append(f"{os.path.basename(binary)}: case '{n}' has more than one entry")
        if not names:
            failures.append(f"{binary}: lists no case")
    for f in failures:
        print("error: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
