#!/usr/bin/env python3
"""Loads every JSON flavour pp-timeline writes in real trace consumers.

Generates logs for several schedules and cases with scripts/gen_logs.py,
converts them (Chrome JSON, --perfetto-json, --absolute, the diff trace) and
loads each trace with the DevTools Performance panel's trace engine
(devtools_check.mjs, npm @paulirish/trace_engine pinned in package-lock.json):
no error or warning, every slice one entry with its exact span, flows bound.
Exits 77 (ctest: skipped) when node or tests/consumers/node_modules is
missing: scripts/setup.sh installs them.
"""
import gzip
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import ppt_test  # noqa: E402
from ppt_test import arg_parser, gen_logs, temp_dir  # noqa: E402

SKIP = 77

CASES = {
    "1f1b": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--steps", "2"],
    "vpp": ["--schedule", "vpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2", "--steps", "2"],
    "zbh1": ["--schedule", "zbh1", "--stages", "4", "--micro-batches", "8", "--steps", "2"],
    "overlap_lanes": ["--schedule", "1f1b", "--stages", "4", "--steps", "2", "--overlap", "1:0", "--overlap", "3:1"],
    "overlap_schedule": ["--schedule", "overlap", "--stages", "3", "--micro-batches", "6", "--steps", "2"],
    "no_micro_batch_id": ["--schedule", "1f1b", "--no-mb", "--job-id", "index", "--steps", "2"],
    "rerun": ["--schedule", "1f1b", "--rerun", "--steps", "2"],
    # Clocks 20 ms apart, drawn as logged: dependencies the times contradict.
    "machines_contradicted": ["--schedule", "1f1b", "--stages", "4", "--machines", "2", "--skew", "1:-20", "--steps", "2"],
    # Over 5,000 jobs on one rank.
    "big_rank": ["--schedule", "1f1b", "--stages", "2", "--micro-batches", "64", "--steps", "42", "--jitter", "0.3"],
}
EXTRA = {"machines_contradicted": ["--align-clocks", "off"]}


def write_fractional_logs(folder):
    """Jobs that touch, with times of nanosecond digits (the generator's are
    whole microseconds), each rank starting at another fraction."""
    os.makedirs(folder)
    base = 1697793307213760986
    for r in range(4):
        t = base + r * 1234567 + 987
        with open(os.path.join(folder, "workerlog.%d" % r), "w") as f:
            for step in range(3):
                for mb in range(8):
                    for k, typ in enumerate(("forward", "backward")):
                        d = 900000 + (mb * 7919 + step * 104729 + r * 1299709 + k * 15485863) % 1200000 + 1 + mb
                        f.write(ppt_test.JOB_LINE % (mb, typ, mb, ppt_test.ms(t), ppt_test.ms(t + d)))
                        t += d
                f.write(ppt_test.JOB_LINE % (0, "optimizer", 0, ppt_test.ms(t), ppt_test.ms(t + 500123)))
                t += 500123 + 3000017


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--keep", help="write the traces here and keep them")
    a = ap.parse_args()
    node = shutil.which("node")
    if not node:
        print("SKIP: node not found (scripts/setup.sh installs nodejs)")
        return SKIP
    if not os.path.isdir(os.path.join(HERE, "node_modules", "@paulirish", "trace_engine")):
        print("SKIP: tests/consumers/node_modules missing (scripts/setup.sh runs npm ci there)")
        return SKIP
    with temp_dir("ppt-consumers-", keep=a.keep) as work:
        traces = []
        for name, gen in CASES.items():
            logs = os.path.join(work, name)
            gen_logs(logs, gen)
            chrome = os.path.join(work, name + ".json")
            perfetto = os.path.join(work, name + "_perfetto.json")
            p = ppt_test.run(a.binary, ["--log_dir", logs, "-o", chrome, "--perfetto-json", perfetto, "-q"] +
                             EXTRA.get(name, []))
            if p.returncode != 0:
                print("FAIL %s: pp-timeline exited %d\n%s" % (name, p.returncode, p.stderr))
                return 1
            traces += [chrome, perfetto]
        frac = os.path.join(work, "fractional")
        write_fractional_logs(frac)
        for flags, out in (([], "fractional.json"), (["--absolute"], "fractional_absolute.json")):
            subprocess.run([a.binary, "--log_dir", frac, "-o", os.path.join(work, out), "-q"] + flags, check=True)
            traces.append(os.path.join(work, out))
        absolute = os.path.join(work, "vpp_absolute.json")
        subprocess.run([a.binary, "--log_dir", os.path.join(work, "vpp"), "-o", absolute, "--absolute", "-q"],
                       check=True)
        diff = os.path.join(work, "diff_1f1b_zbh1.json")
        p = ppt_test.run(a.binary, ["diff", os.path.join(work, "1f1b"), os.path.join(work, "zbh1"), "--trace", diff, "-q"])
        if p.returncode not in (0, 1) or not os.path.exists(diff):
            print("FAIL diff: exited %d\n%s" % (p.returncode, p.stderr))
            return 1
        traces += [absolute, diff]
        # .json.gz: what a viewer reads after undoing the gzip (Perfetto and
        # catapult detect it by its magic bytes).
        gz = os.path.join(work, "vpp.json.gz")
        subprocess.run([a.binary, "--log_dir", os.path.join(work, "vpp"), "-o", gz, "-q"], check=True)
        with gzip.open(gz, "rb") as f_in, open(os.path.join(work, "vpp_from_gz.json"), "wb") as f_out:
            f_out.write(f_in.read())
        traces.append(os.path.join(work, "vpp_from_gz.json"))
        p = subprocess.run([node, os.path.join(HERE, "devtools_check.mjs")] + traces, cwd=HERE)
        return 0 if p.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
