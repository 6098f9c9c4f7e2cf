#!/usr/bin/env python3
"""End-to-end golden tests: run the real pp-timeline binary on testdata cases.

A case is a folder testdata/cases/<name>/ with
  args       the command line after the binary, one argument per line;
             {out} stands for a fresh output folder; the command runs in the
             case folder, so paths in the output are the case's own (logs/...)
  logs/      the input (any layout)
  copy_logs  (optional, empty) copy logs/ to {out}/logs first, for commands
             that write beside their input; the copies are not compared
  stdin      (optional) given to the command as its standard input (read
             with `-`); without it the command reads an empty input
  capture_stdout  (optional, empty) the command's standard output is
             compared too, as expected/stdout.txt (whatif's and diff's
             tables, which go there)
  expected/  exit_code, stderr.txt and every file the command wrote to {out}

Volatile text is normalised before comparing: the output folder's path
becomes {out}. On a mismatch the actual file is left beside the expected one
as <name>.actual, and the command to approve the new output is printed.

  golden.py --binary build/pp-timeline              run every case
  golden.py --binary build/pp-timeline CASE...      run some cases
  golden.py --binary build/pp-timeline --approve CASE...   accept current output
"""

import os
import shutil
import sys
import tempfile

from ppt_test import CASES, Failure, arg_parser, run


def run_case(binary, case, approve):
    case_dir = os.path.join(CASES, case)
    with open(os.path.join(case_dir, "args")) as f:
        args = [a for a in f.read().splitlines() if a]
    out = tempfile.mkdtemp(prefix="ppt-golden-")
    inputs = set()
    try:
        if os.path.exists(os.path.join(case_dir, "copy_logs")):
            shutil.copytree(os.path.join(case_dir, "logs"), os.path.join(out, "logs"))
            for base, _, names in os.walk(out):
                inputs.update(os.path.relpath(os.path.join(base, n), out) for n in names)
        args = [a.replace("{out}", out) for a in args]
        stdin_path = os.path.join(case_dir, "stdin")
        with open(stdin_path if os.path.exists(stdin_path) else os.devnull, "rb") as stdin:
            p = run(binary, args, cwd=case_dir, stdin=stdin, text=False, timeout=120)
        actual = {
            "exit_code": (str(p.returncode) + "\n").encode(),
            "stderr.txt": p.stderr.replace(out.encode(), b"{out}"),
        }
        if os.path.exists(os.path.join(case_dir, "capture_stdout")):
            actual["stdout.txt"] = p.stdout.replace(out.encode(), b"{out}")
        for base, _, names in os.walk(out):
            for n in names:
                rel = os.path.relpath(os.path.join(base, n), out)
                if rel in inputs:
                    continue
                with open(os.path.join(out, rel), "rb") as f:
                    actual[rel.replace(os.sep, "__")] = f.read().replace(out.encode(), b"{out}")
        expected_dir = os.path.join(case_dir, "expected")
        if approve:
            shutil.rmtree(expected_dir, ignore_errors=True)
            os.makedirs(expected_dir)
            for name, data in actual.items():
                with open(os.path.join(expected_dir, name), "wb") as f:
                    f.write(data)
            print("approved %s (%d files)" % (case, len(actual)))
            return True
        ok = True
        expected_names = set(os.listdir(expected_dir)) if os.path.isdir(expected_dir) else set()
        expected_names = {n for n in expected_names if not n.endswith(".actual")}
        for name in sorted(expected_names | set(actual)):
            path = os.path.join(expected_dir, name)
            want = None
            if os.path.exists(path):
                with open(path, "rb") as f:
                    want = f.read()
            got = actual.get(name)
            if want == got:
                if os.path.exists(path + ".actual"):
                    os.remove(path + ".actual")
                continue
            ok = False
            if got is None:
                print("%s: %s expected but not written" % (case, name))
            elif want is None:
                print("%s: %s written but not expected" % (case, name))
            else:
                print("%s: %s differs (%d bytes expected, %d actual)" % (case, name, len(want), len(got)))
            if got is not None:
                os.makedirs(expected_dir, exist_ok=True)
                with open(path + ".actual", "wb") as f:
                    f.write(got)
        if not ok:
            print("  to accept: python3 tests/e2e/golden.py --binary %s --approve %s" % (binary, case))
        return ok
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--approve", action="store_true")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    binary = a.binary
    cases = a.cases or sorted(d for d in os.listdir(CASES) if os.path.isfile(os.path.join(CASES, d, "args")))
    failed = []
    for c in cases:
        try:
            ok = run_case(binary, c, a.approve)
        except Failure as e:
            print("%s: %s" % (c, e))
            ok = False
        if not ok:
            failed.append(c)
    print("%d passed, %d failed" % (len(cases) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
