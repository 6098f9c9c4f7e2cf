#!/usr/bin/env python3
"""End-to-end checks of the convert command's flows, clock alignment and
.pftrace output, with the real binary on logs from scripts/gen_logs.py.

  flows_clocks_pftrace.py --binary build/pp-timeline [--protoc /usr/bin/protoc]

Checks:
  - 3 machines whose clocks are skewed by +4 ms and +8 ms: the summary names
    the offsets, the residual against the generator's truth is well under a
    millisecond, no dependency stays contradicted, the logged times are kept;
  - the same logs without skew: output byte-identical with --align-clocks off;
  - --align-clocks off on skewed logs: times as logged, contradictions counted;
  - --no-flows: no flow events; with flows: one s/f pair per dependency;
  - .pftrace decodes with protoc and has as many slices as jobs,
    and, replayed as trace_processor links flow ids, one arrow per dependency
    with fewer flow ids than two per dependency (chains share one);
  - usage errors: --pp-degree that does not divide the ranks, a bad
    --align-clocks value, an unknown extension (exit 2, one clear line).
"""

import os
import re
import sys

import ppt_test
from ppt_test import Checks, arg_parser, decode_pftrace, gen_logs, pftrace_slices, read_json, temp_dir

checks = Checks()
check = checks.check


def gen(work, name, args):
    out = os.path.join(work, name)
    return out, gen_logs(out, args, truth=True)


def run(binary, args):
    p = ppt_test.run(binary, args)
    return p.returncode, p.stderr


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--protoc", default="", help="decode the .pftrace with this protoc (default: the one on PATH)")
    a = ap.parse_args()
    protoc = ppt_test.find_protoc(a.protoc)
    binary = a.binary
    with temp_dir("ppt-flows-clocks-") as work:
        common = ["--stages", "6", "--machines", "3", "--schedule", "1f1b", "--micro-batches", "8", "--steps", "3"]
        skewed, truth = gen(work, "skewed", common + ["--skew", "1:4", "--skew", "2:8"])
        plain, _ = gen(work, "plain", common)

        # Skewed: aligned.
        js, pf = os.path.join(work, "s.json"), os.path.join(work, "s.pftrace")
        code, err = run(binary, ["--log_dir", skewed, "-o", js, "-o", pf])
        check(code == 0, "skewed: exit %d\n%s" % (code, err))
        m = re.search(r"clocks aligned: machine1 (-?[\d.]+) ms, machine2 (-?[\d.]+) ms", err)
        check(m is not None, "skewed: the summary names the offsets:\n" + err)
        check("contradicted" not in err.splitlines()[-1], "skewed: contradictions left:\n" + err)
        check("clock_offset" in err, "skewed: the clock_offset diagnostic is shown")
        doc = read_json(js)
        skew = {r["machine"]: r["skew_ns"] for r in truth["ranks"]}
        offsets = {o["machine"]: o["offset_ns"] for o in doc["metadata"].get("clock_offsets", [])}
        for k in (1, 2):
            residual = skew[k] + offsets.get("machine%d" % k, 0) - skew[0]
            check(abs(residual) < 100000, "skewed: machine%d residual %d ns" % (k, residual))
        logged = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "logged_start_ms" in e.get("args", {})]
        check(len(logged) > 0, "skewed: logged times kept in args")
        flows = [e for e in doc["traceEvents"] if e.get("ph") in ("s", "f")]
        check(len(flows) == 2 * doc["metadata"].get("flows", -1), "skewed: one s/f pair per dependency")
        check(len(flows) > 0, "skewed: flows drawn")
        text = decode_pftrace(pf, protoc)
        begins = text.count("type: 1\n")
        steps = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "step")
        check(begins == doc["metadata"]["jobs"] + steps,
              "pftrace: %d slices for %d jobs and %d steps" % (begins, doc["metadata"]["jobs"], steps))
        arrows = []
        pftrace_slices(text, arrows)
        check(len(arrows) == len(set(arrows)) == doc["metadata"]["flows"],
              "pftrace: %d arrows in Perfetto's reading for %d dependencies" % (len(arrows), doc["metadata"]["flows"]))
        # A micro-batch's chain through the stages shares one flow id.
        check(text.count("flow_ids:") < len(flows),
              "pftrace: %d flow ids carried, not fewer than two per dependency" % text.count("flow_ids:"))

        # Skewed, alignment off: times as logged, contradictions counted.
        js_off = os.path.join(work, "off.json")
        code, err = run(binary, ["--log_dir", skewed, "-o", js_off, "--align-clocks", "off"])
        check(code == 0, "off: exit %d" % code)
        check(re.search(r"\d+ of \d+ dependencies contradicted by the times", err) is not None,
              "off: contradictions counted:\n" + err)
        check("clocks aligned" not in err, "off: nothing aligned")
        off = read_json(js_off)
        check("clock_offsets" not in off["metadata"], "off: no offsets in the metadata")
        # Every arrow goes forward in time, also the contradicted ones (viewers
        # link a flow's events in time order; catapult drops an f before its s).
        starts = {e["id"]: e for e in off["traceEvents"] if e.get("ph") == "s"}
        finishes = {e["id"]: e for e in off["traceEvents"] if e.get("ph") == "f"}
        check(starts.keys() == finishes.keys() and len(starts) == off["metadata"]["flows"], "off: one s/f per flow")
        backwards = [i for i in starts if finishes[i]["ts"] < starts[i]["ts"]]
        check(not backwards, "off: %d arrows go back in time, e.g. %s" % (
            len(backwards), backwards and (starts[backwards[0]], finishes[backwards[0]])))
        check(any("contradicted" in e["name"] for e in starts.values()), "off: contradicted flows named so")

        # No skew: --align-clocks auto changes nothing.
        p1, p2 = os.path.join(work, "p1.json"), os.path.join(work, "p2.json")
        run(binary, ["--log_dir", plain, "-o", p1])
        code, err = run(binary, ["--log_dir", plain, "-o", p2, "--align-clocks", "off"])
        with open(p1, "rb") as f1, open(p2, "rb") as f2:
            check(f1.read() == f2.read(), "plain: alignment changed logs without skew")
        check("clocks aligned" not in err and "contradicted" not in err, "plain: summary clean:\n" + err)

        # --no-flows.
        nf = os.path.join(work, "nf.json")
        code, err = run(binary, ["--log_dir", plain, "-o", nf, "--no-flows"])
        d = read_json(nf)
        check(not any(e.get("ph") in ("s", "f") for e in d["traceEvents"]), "--no-flows: flow events written")

        # Usage errors.
        code, err = run(binary, ["--log_dir", plain, "-o", nf, "--pp-degree", "4"])
        check(code == 2 and "--pp-degree 4 does not divide the 6 ranks" in err, "bad --pp-degree: %d %s" % (code, err))
        code, err = run(binary, ["--log_dir", plain, "-o", nf, "--align-clocks", "maybe"])
        check(code == 2 and "--align-clocks" in err, "bad --align-clocks: %d %s" % (code, err))
        code, err = run(binary, ["--log_dir", plain, "-o", os.path.join(work, "x.protobuf")])
        check(code == 2 and ".pftrace" in err, "unknown extension mentions .pftrace: %d %s" % (code, err))
        code, err = run(binary, ["--log_dir", plain, "-o", os.path.join(work, "y.perfetto-trace"), "--pp-degree", "3"])
        check(code == 0 and os.path.getsize(os.path.join(work, "y.perfetto-trace")) > 0, "--pp-degree 3 .perfetto-trace")
        check("3 stages x 2 replicas (--pp-degree)" in err, "summary names the replicas:\n" + err)
    return checks.exit_code("flows, clocks, .pftrace")


if __name__ == "__main__":
    sys.exit(main())
