#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets into testdata/fuzz/<target>/.

Seeds are small on purpose (libFuzzer mutates small inputs faster): one line
per variant for the line parser, a few ranks of a tiny run per schedule for
the conversion (scripts/gen_logs.py, 2 stages, 2 micro-batches, 2 steps).
Inputs that once broke a target are kept beside them as crash-<what> and are
never rewritten by this script.

  tests/fuzz/make_seeds.py            rewrite the seed-* files
"""

import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "fuzz")
GEN = os.path.join(ROOT, "scripts", "gen_logs.py")
SEPARATOR = b"@@FILE@@"

PREFIX = b"I1020 09:15:07.265326 22317 standalone_executor.cc:217] "
YEAR_PREFIX = b"I20231020 09:15:07.265326 22317 standalone_executor.cc:217] "
JOB = b"Profiler Info: Job (3), type = forward, micro_batch_id = 2, job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104"


def job(id_=b"3", type_=b"forward", mb=b"2", start=b"1697793307213.760986", end=b"1697793307254.006104"):
    line = b"Profiler Info: Job (" + id_ + b"), type = " + type_
    if mb is not None:
        line += b", micro_batch_id = " + mb
    return line + b", job_start_time = " + start + b", job_end_time = " + end


LINES = {
    "canonical": PREFIX + JOB,
    "glog_year": YEAR_PREFIX + JOB,
    "no_prefix": JOB,
    "crlf": PREFIX + JOB + b"\r",
    "trailing_blanks": PREFIX + JOB + b" \t ",
    "no_micro_batch": PREFIX + job(mb=None),
    "chunk_parens": PREFIX + job(type_=b"forward(chunk0)"),
    "split_backward": PREFIX + job(type_=b"backward_w1_reduce"),
    "zero_times": PREFIX + job(type_=b"recv_forward", start=b"0.000000", end=b"0.000000"),
    "half_zero": PREFIX + job(start=b"0.000000"),
    "end_before_start": PREFIX + job(start=b"1697793307254.006104", end=b"1697793307213.760986"),
    "negative": PREFIX + job(start=b"-1697793307213.760986"),
    "nan_inf": PREFIX + job(start=b"nan", end=b"inf"),
    "many_digits": PREFIX + job(start=b"9" * 300 + b".5", id_=b"1" * 200, mb=b"7" * 120),
    "int64_edge": PREFIX + job(start=b"9223372036854.775807", end=b"9223372036854.775808"),
    "comma_in_type": PREFIX + job(type_=b"forward, backward"),
    "empty_type": PREFIX + job(type_=b""),
    "non_utf8_type": PREFIX + job(type_=b"forw\xff\xfeard\xc3"),
    "nul_byte": PREFIX + job(type_=b"for\x00ward"),
    "cut_off": PREFIX + JOB[:70],
    "marker_only": b"Profiler Info: Job (",
    "schedule_marker": b"[2023-10-20 09:15:02,000] [INFO] - Schedule Profiler start at step 10 and end at step 20",
    "bad_schedule_marker": b"Schedule Profiler start at step ten and end at step 99999999999999999999999",
    "two_lines": PREFIX + JOB + b"\n" + PREFIX + job(id_=b"4", type_=b"backward"),
    "times_as_text": b"1697793307213.760986\n.5\n5.\n-0.1\n00000000000001\n",
}


def conversion_seeds(work):
    seeds = {}
    schedules = {
        "1f1b": ["--schedule", "1f1b"],
        "vpp": ["--schedule", "vpp", "--chunks", "2"],
        "zbvpp": ["--schedule", "zbvpp", "--chunks", "2"],
        "pir1f1b": ["--schedule", "pir1f1b"],
        "overlap": ["--schedule", "overlap"],
        "marker_rerun": ["--schedule", "1f1b", "--rerun", "--start-step", "5"],
        "no_mb_crlf": ["--schedule", "fthenb", "--no-mb", "--job-id", "index", "--crlf"],
        "overlapping": ["--schedule", "1f1b", "--overlap", "1:0"],
    }
    for name, args in schedules.items():
        out = os.path.join(work, name)
        subprocess.run([sys.executable, GEN, "--out", out, "--stages", "2", "--micro-batches", "2", "--steps", "2",
                        "--noise", "1", "--seed", "3", "--quiet"] + args, check=True)
        files = sorted(glob.glob(os.path.join(out, "**", "workerlog.*"), recursive=True))
        parts = []
        for f in files:
            with open(f, "rb") as fh:
                parts.append(fh.read())
        # Options byte: a 332-byte read buffer; bit 7 compares 1 and 2 threads.
        seeds[name] = bytes([0x90]) + SEPARATOR.join(parts)
    seeds["empty"] = b"\x00"
    seeds["junk_and_long_line"] = bytes([0x01]) + PREFIX + JOB + b"\n" + b"x" * 400 + b"Profiler Info: Job (" + \
        b"y" * 300 + b"\n" + PREFIX + job(id_=b"4", type_=b"backward") + b"\n"
    seeds["clock_jump_back"] = bytes([0x40]) + PREFIX + JOB + b"\n" + PREFIX + \
        job(start=b"1697790000000.000000", end=b"1697790000001.000000") + b"\n" + SEPARATOR + PREFIX + JOB + b"\n"
    return seeds


# The escape target: text a hostile log or folder name may hold.
ESCAPE_SEEDS = {
    "osc_title": b"fwd\x1b]0;owned\x07",
    "clear_screen": b"clear\x1b[2J\x1b[H",
    "c1_controls": b"csi\xc2\x9b2J raw\x9b31m",
    "invalid_utf8": b"bad\xff\xfe\xc0\xaf\xed\xa0\x80\xe2\x82",
    "markdown_image_link": b"![t](https://e.example/p.png) [x](https://e.example)",
    "table_breaks": b"a|b\rc\nd\te",
    "autolinks": b"me@e.example www.e.example http://e.example",
    "markup": b"<b>x</b> &amp; *em* _u_ `code` ~~s~~ # h \\",
    "unicode_controls": b"rtl\xe2\x80\xaeevil\xe2\x81\xa6 \xe2\x80\xa8 \xef\xbf\xbe \xf0\x9f\x98\x80",
    "backticks": b"``a`b``` \\|x|",
    "plain": b"forward_backward",
}


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def main():
    for target in ("line_parser", "conversion", "escape"):
        for old in glob.glob(os.path.join(OUT, target, "seed-*")):
            os.remove(old)
    for name, line in LINES.items():
        write("line_parser", name, line + (b"" if name in ("cut_off", "times_as_text") else b"\n"))
    with tempfile.TemporaryDirectory(prefix="ppt-seeds-") as work:
        for name, data in conversion_seeds(work).items():
            write("conversion", name, data)
    for name, data in ESCAPE_SEEDS.items():
        write("escape", name, data)
    print("seeds written to", OUT)


if __name__ == "__main__":
    main()
