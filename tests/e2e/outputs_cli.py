#!/usr/bin/env python3
"""What -o means, for every command, through the real binary: the extension
decides the format, -o is repeatable, an extension a command does not write
and a directory are usage errors (exit 2) that name the choices, .json.gz is
the same JSON gzipped; and the small things a CI log shows (-q without
notes, a misspelt command).

  outputs_cli.py --binary build/pp-timeline
"""

import gzip
import json
import os
import sys

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

RUN = ppt_test.SMALL_RUN
run = ppt_test.run_status

checks = Checks()
check = checks.check


def gunzip(path):
    """The bytes of a gzip file, or None when it is not one (or is missing)."""
    try:
        with open(path, "rb") as f:
            return gzip.decompress(f.read())
    except (OSError, EOFError):
        return None


def main():
    binary = arg_parser(__doc__).parse_args().binary
    with temp_dir("ppt-outputs-cli-") as tmp:
        a, slow = os.path.join(tmp, "a"), os.path.join(tmp, "slow")
        ppt_test.gen_logs(a, RUN)
        ppt_test.gen_logs(slow, RUN + ["--slow", "1:1.2"])
        o = lambda name: os.path.join(tmp, name)

        # convert: .json.gz is the .json, gzipped, one member from the first byte
        rc, _, err = run(binary, "--log_dir", a, "-o", o("t.json"), "-o", o("t.json.gz"), "-q")
        check(rc == 0, f"convert -o t.json -o t.json.gz ({err.strip()})")
        if rc == 0:
            raw = open(o("t.json.gz"), "rb").read()
            check(raw[:3] == b"\x1f\x8b\x08", "the .json.gz starts with gzip's magic and deflate")
            check(gunzip(o("t.json.gz")) == open(o("t.json"), "rb").read(), ".json.gz holds the bytes of .json")
        rc, _, err = run(binary, "--log_dir", a, "--perfetto-json", o("p.json.gz"), "-q")
        check(rc == 0 and json.loads(gunzip(o("p.json.gz")) or "{}").get("traceEvents"),
              f"--perfetto-json p.json.gz is gzipped ({err.strip()})")

        # stats: several formats from one run
        rc, out, err = run(binary, "stats", "--log_dir", a, "-o", o("s.json"), "-o", o("s.md"), "-o", o("s.txt"))
        check(rc == 0 and out == "", f"stats with files only prints nothing ({rc}: {err.strip()})")
        if rc == 0 and os.path.exists(o("s.json")):
            check(json.load(open(o("s.json")))["schema"] == "pp-timeline-stats/2", "stats -o s.json is the JSON")
            check(open(o("s.md")).read().startswith("### "), "stats -o s.md is Markdown")
            check(open(o("s.txt")).read().startswith("pp-timeline stats: "), "stats -o s.txt is the text")
        rc, out, err = run(binary, "stats", "--log_dir", a, "--json", "-o", o("s2.md"), "-o", "-")
        check(rc == 0 and out.startswith("{") and json.loads(out)["schema"] == "pp-timeline-stats/2" and
              os.path.exists(o("s2.md")) and open(o("s2.md")).read().startswith("### "), f"stats --json -o s2.md -o -: JSON on stdout ({err.strip()})")
        rc, _, err = run(binary, "stats", "--log_dir", a, "-o", o("s.html"), "-q")
        check(rc == 0 and os.path.exists(o("s.html")) and "pp-timeline stats: " in open(o("s.html")).read(),
              "stats -o s.html is the page")

        # diff: -o d.json is the diff JSON; the trace of both runs is --trace
        rc, out, err = run(binary, "diff", a, slow, "--json", "-o", o("d.json"))
        try:
            doc = json.load(open(o("d.json")))
        except (OSError, ValueError):
            doc = {}
        check(doc.get("schema") == "pp-timeline-diff/2", f"diff --json -o d.json writes the diff JSON ({err.strip()})")
        check("verdict" in out and not out.startswith("{"), "with files only, the verdict is printed as text")
        rc, _, err = run(binary, "diff", a, slow, "--markdown", "-o", o("d.md"))
        check(rc == 0 and os.path.exists(o("d.md")) and open(o("d.md")).read().startswith("### "), f"diff --markdown -o d.md ({err.strip()})")
        rc, _, err = run(binary, "diff", a, slow, "--trace", o("both.json.gz"), "-q")
        if rc == 0 and gunzip(o("both.json.gz")) is not None:
            trace = json.loads(gunzip(o("both.json.gz")))
            names = sorted(e["args"]["name"] for e in trace["traceEvents"]
                           if e.get("ph") == "M" and e.get("name") == "process_name")
            check(names == ["A: " + a, "B: " + slow], f"diff --trace x.json.gz holds both runs ({names})")
        else:
            check(False, f"diff --trace both.json.gz ({err.strip()})")

        # exit 2: a format the command does not write, named with the choices; a directory
        os.makedirs(o("dir"))
        for args, want, what in [
            (["report", "--log_dir", a, "-o", o("r.svg")], ".html", "report -o r.svg"),
            (["stats", "--log_dir", a, "-o", o("s.svg")], ".md", "stats -o s.svg"),
            (["diff", a, slow, "-o", o("d.pftrace")], ".json", "diff -o d.pftrace"),
            (["--log_dir", a, "-o", o("t.txt")], ".json.gz", "convert -o t.txt"),
            (["--log_dir", a, "-o", o("dir") + "/"], "is a directory", "convert -o DIR/"),
            (["stats", "--log_dir", a, "-o", o("dir")], "is a directory", "stats -o DIR"),
            (["report", "--log_dir", a, "-o", o("new") + "/"], "is a directory", "report -o NEW/"),
            (["stats", "--log_dir", a, "--json", "-o", o("s3.md")], "--json", "stats --json -o s3.md"),
            (["--log_dir", a, "-o", o("x.json"), "-o", o("x.json")], "twice", "the same -o twice"),
        ]:
            rc, _, err = run(binary, *args)
            check(rc == 2 and want in err, f"{what}: exit 2 naming {want!r} (got {rc}: {err.strip()[:300]})")
        check(not os.path.exists(o("r.svg")) and not os.path.exists(o("s3.md")), "nothing written on a usage error")

        # -q prints no notes (a machine's clock shifted is a note)
        skew = o("skew")
        ppt_test.gen_logs(skew, RUN + ["--machines", "2", "--skew", "1:3"])
        rc, _, err = run(binary, "stats", "--log_dir", skew, "-o", o("k.txt"))
        check(rc == 0 and "clock_offset" in err, f"stats names the clock shift ({err.strip()})")
        rc, _, err = run(binary, "stats", "--log_dir", skew, "-o", o("k.txt"), "-q")
        # ... and, as convert, the summary line with the file written
        check(rc == 0 and "note:" not in err and "clock_offset" not in err and err.count("\n") == 1
              and ("-> " + o("k.txt") + " (") in err,
              f"stats -q: no notes, the summary with the file written ({err.strip()})")

        # a misspelt command is not a missing log
        rc, _, err = run(binary, "stat", "--log_dir", a, cwd=tmp)
        check(rc == 2 and "'pp-timeline stats'" in err, f"pp-timeline stat suggests stats ({err.strip()})")

    return checks.exit_code("outputs CLI")


if __name__ == "__main__":
    sys.exit(main())
