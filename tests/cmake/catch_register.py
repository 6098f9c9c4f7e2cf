#!/usr/bin/env python3
"""Writes the CTest file that registers every Catch2 test case of one binary.

Run after each build of a test binary (tests/cmake/CatchTests.cmake). Catch2's
own discovery script (CatchAddTests.cmake) splits the binary's list of names
as a CMake list, where an unbalanced '[' in one name swallows the names after
it, and the test spec it passes back loses cases whose names hold a comma:
those entries then ran no case and passed. Here the names are read as lines,
each entry's spec escapes what Catch2's spec parser treats as syntax, and the
case runs with `--warn NoTests`, so a spec that matches nothing fails.
"""
import argparse
import os
import subprocess
import sys

# Catch2 v2's test-spec parser (catch_test_spec_parser.cpp): ',' separates
# filters, '[' starts a tag, '\' escapes the next character.
SPEC_SYNTAX = "\\,[]"


def spec_for(name: str) -> str:
    return "".join("\\" + c if c in SPEC_SYNTAX else c for c in name)


def unregistrable(name: str) -> str:
    """Why a name cannot be matched exactly by a Catch2 spec, or ''."""
    if name != name.strip():
        return "it starts or ends with a space (Catch2 trims patterns)"
    if name[0] in "-~\"#*" or name.endswith("*"):
        return f"it starts with '{name[0]}' or ends with '*', which a Catch2 spec reads as syntax"
    if name.lower().startswith("exclude:"):
        return "it starts with 'exclude:'"
    if "]==]" in name:
        return "it holds ']==]'"
    return ""


def cmake_arg(text: str) -> str:
    return "[==[" + text + "]==]"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--prefix", default="")
    ap.add_argument("--labels", default="")
    ap.add_argument("--working-directory", default="")
    args = ap.parse_args()

    listing = subprocess.run([args.binary, "--list-test-names-only"], capture_output=True,
                             text=True, errors="replace")
    names = [line.rstrip("\r") for line in listing.stdout.split("\n") if line.strip()]
    # Catch2 v2 exits with the number of cases listed; a negative status is a crash.
    if listing.returncode < 0 or not names:
        print(f"{args.binary}: listing its test cases failed (status {listing.returncode}):\n"
              f"{listing.stderr}", file=sys.stderr)
        return 1
    problems = [f"  '{n}': {why}" for n in names if (why := unregistrable(n))]
    if problems:
        print(f"{args.binary}: test names that ctest cannot run one by one; rename them:\n"
              + "\n".join(problems), file=sys.stderr)
        return 1

    lines = []
    workdir = args.working_directory or os.path.dirname(os.path.abspath(args.output))
    for name in names:
        # Catch2 prints a name starting with '#' in quotes; those are refused above.
        test = args.prefix + name
        lines.append(f"add_test({cmake_arg(test)} {cmake_arg(args.binary)} {cmake_arg(spec_for(name))}"
                     " --warn NoTests)")
        props = f"WORKING_DIRECTORY {cmake_arg(workdir)}"
        if args.labels:
            props += f" LABELS {cmake_arg(args.labels)}"
        lines.append(f"set_tests_properties({cmake_arg(test)} PROPERTIES {props})")
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
