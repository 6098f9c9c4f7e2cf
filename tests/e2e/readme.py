#!/usr/bin/env python3
"""The README a new user reads first stays true to the project: it names every
command the binary has (`pp-timeline --help`'s subcommands) and pp-demo,
links every page of docs/ (docs/*.md), and any count of hostile cases it
gives is the number of cases in testdata/bad.

  readme.py --binary build/pp-timeline
"""

import glob
import os
import re
import sys

import ppt_test
from ppt_test import Checks, arg_parser

checks = Checks()
check = checks.check
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    binary = arg_parser(__doc__).parse_args().binary
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()

    # Every subcommand, as `pp-timeline COMMAND` somewhere in the README.
    rc, out, err = ppt_test.run_status(binary, "--help")
    check(rc == 0, "pp-timeline --help (got %d: %r)" % (rc, err))
    commands = re.findall(r"^  ([a-z]+)\s{2,}\S", out.split("SUBCOMMANDS:", 1)[-1], re.M)
    check(len(commands) >= 6, "the subcommands in --help (%r)" % commands)
    for command in commands:
        check(re.search(r"pp-timeline %s\b" % command, readme) is not None,
              "the README shows `pp-timeline %s`" % command)
    check(re.search(r"\bpp-demo --log_dir\b", readme) is not None, "the README shows how to run pp-demo")

    # Every page of docs/, linked.
    for page in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        name = os.path.basename(page)
        check("(docs/%s" % name in readme, "the README links docs/%s" % name)

    # A count of hostile cases, where given, is the folder's.
    cases = len(glob.glob(os.path.join(ROOT, "testdata", "bad", "*", "case.json")))
    for said in re.findall(r"(\d+) hostile cases", readme):
        check(int(said) == cases, "the README says %s hostile cases; testdata/bad holds %d" % (said, cases))
    return checks.exit_code("README")


if __name__ == "__main__":
    sys.exit(main())
