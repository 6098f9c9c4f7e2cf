#!/usr/bin/env python3
"""What the command line says to a user who got something wrong, through the
real binary: each mistake the option parser finds is one line
`pp-timeline[ <command>]: error: ...` that says what to type instead (the
exact texts are pinned here); every command takes --version; -o's extension
is read in any case; a log that cannot be read makes the run exit 1 after
the rest is written, and says how many ranks were read; an output that
cannot be created is said before any log is read, with the system's reason;
diff labels its runs A, B, C.

  cli_messages.py --binary build/pp-timeline
"""

import os
import re
import sys

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

RUN = ppt_test.SMALL_RUN
run = ppt_test.run_status

checks = Checks()
check = checks.check


# (arguments, the whole of stderr): exit status 2, one line each.
PARSER_MESSAGES = [
    (["--log-dri", "logs"], "pp-timeline: error: unknown option --log-dri; did you mean --log-dir?"),
    (["stats", "--log-dri", "logs"], "pp-timeline stats: error: unknown option --log-dri; did you mean --log-dir?"),
    (["stats", "--skip-warm", "1", "logs"],
     "pp-timeline stats: error: unknown option --skip-warm; did you mean --skip-warmup?"),
    (["--bogus"], "pp-timeline: error: unknown option --bogus; 'pp-timeline --help' lists the options"),
    (["--fail-if-slower", "3", "logs"],
     "pp-timeline: error: unknown option --fail-if-slower: it is an option of 'pp-timeline diff' and "
     "'pp-timeline batch', not of 'pp-timeline'"),
    (["diff", "a", "b", "--fail-if-slower", "3%"],
     "pp-timeline diff: error: --fail-if-slower 3%: give the percent as a plain number: "
     "--fail-if-slower 3 means 3 %"),
    (["diff", "a", "b", "--fail-if-slower"],
     "pp-timeline diff: error: --fail-if-slower needs a value: a percent as a plain number, "
     "e.g. --fail-if-slower 3 (3 %)"),
    (["diff", "a", "b", "--fail-if-slower", "much"],
     "pp-timeline diff: error: --fail-if-slower much: not a number; give a percent as a plain number, "
     "e.g. --fail-if-slower 3 (3 %)"),
    (["stats", "logs", "--steps"],
     "pp-timeline stats: error: --steps needs a value: a range of steps A:B (A to B included), A:, :B or A, "
     "e.g. --steps 10:20"),
    (["--threads", "5000", "logs"],
     "pp-timeline: error: --threads 5000: out of range; give a whole number from 0 to 1024"),
    (["--align-clocks", "on", "logs"], "pp-timeline: error: --align-clocks on: not one of auto|off"),
    (["stats", "--json", "--markdown", "logs"],
     "pp-timeline stats: error: --json and --markdown cannot be given together"),
    (["batch", "logs"], "pp-timeline batch: error: --out is required: --out TEXT"),
]


def main():
    binary = arg_parser(__doc__).parse_args().binary
    with temp_dir("ppt-cli-messages-") as tmp:
        for args, want in PARSER_MESSAGES:
            rc, out, err = run(binary, *args, cwd=tmp)
            check(rc == 2 and err == want + "\n" and out == "",
                  "%s: exit 2 and %r (got %d: %r)" % (" ".join(args), want, rc, err))

        # Every floating-point option of every command refuses what is not a
        # finite number (NaN passes a `<`/`>` range check: --max-ratio nan
        # once switched the archive bomb limit off, --fail-if-slower nan the
        # gate), naming the option and its range; the options are read off
        # each command's --help, so a new one is checked too.
        commands = ([], ["stats"], ["diff"], ["report"], ["batch"], ["watch"], ["whatif"])
        seen_float = 0
        for command in commands:
            rc, out, _ = run(binary, *command, "--help")
            for name, lo, hi in re.findall(r"^\s+(--[a-z-]+) FLOAT:FLOAT in \[(\S+) - (\S+)\]", out, re.M):
                seen_float += 1
                for value in ("nan", "-nan", "inf", "-inf", "1e999"):
                    rc, out2, err = run(binary, *command, name, value, cwd=tmp)
                    want = "%s %s: not a finite number; give " % (name, value)
                    check(rc == 2 and want in err and (" from %g to %g" % (float(lo), float(hi))) in err
                          and out2 == "", "%s %s %s: exit 2 naming the option and its range (got %d: %r)"
                          % (" ".join(["pp-timeline"] + command), name, value, rc, err))
        check(seen_float >= 13, "the floating-point options found in --help (%d)" % seen_float)
        demo = os.path.join(os.path.dirname(os.path.abspath(binary)), "pp-demo")
        if os.path.exists(demo):
            rc, _, err = run(demo, "--log_dir", tmp, "--ranks", "2", "--steps", "1", "--work_us", "nan")
            check(rc == 2 and "--work_us" in err and "pp-demo: error:" in err,
                  "pp-demo --work_us nan: exit 2 naming it (got %d: %r)" % (rc, err))

        # --version on every command
        for command in ([], ["stats"], ["diff"], ["report"], ["batch"], ["watch"]):
            rc, out, err = run(binary, *command, "--version")
            check(rc == 0 and re.fullmatch(r"pp-timeline \d+\.\d+\.\d+\n", out),
                  "%s --version (got %d: %r %r)" % (" ".join(["pp-timeline"] + command), rc, out, err))
        # diff --help names its runs as it takes them: two or more
        rc, out, _ = run(binary, "diff", "--help")
        check(rc == 0 and "runs RUN ..." in out and "x 2" not in out, "diff --help: runs RUN ... (two or more)")

        a = os.path.join(tmp, "a")
        ppt_test.gen_logs(a, RUN)
        o = lambda name: os.path.join(tmp, name)

        # whatif --stage-scale STAGE:FACTOR: a factor that is finite and at
        # most 1000 (1e15 carried a job past 64-bit nanoseconds), a stage
        # that fits (99999999999 wrapped to 1215752191)
        for arg, want in (("0:1e15", "the factor must be a number from 0 to 1000"),
                          ("0:nan", "the factor must be a number from 0 to 1000"),
                          ("99999999999:1", "give STAGE:FACTOR")):
            rc, _, err = run(binary, "whatif", "--log_dir", a, "--stage-scale", arg)
            check(rc == 2 and "--stage-scale %s: %s" % (arg, want) in err,
                  "whatif --stage-scale %s: exit 2, %r (got %d: %r)" % (arg, want, rc, err))

        # --device-memory SIZE on whatif and stats: a size with its unit
        # (powers of 1024 with an i, of 1000 without) or whole bytes; any
        # other form is a usage error that names the units
        for command in ("whatif", "stats"):
            for arg, want in (("80G", "unknown unit 'G'"), ("0GiB", "the size must be above 0"),
                              ("1.5", "a size without a unit is whole bytes"), ("nan", "not a size")):
                rc, _, err = run(binary, command, "--log_dir", a, "--device-memory", arg)
                check(rc == 2 and "--device-memory %s: %s" % (arg, want) in err and "80GiB" in err,
                      "%s --device-memory %s: exit 2, %r (got %d: %r)" % (command, arg, want, rc, err))
            for arg in ("80GiB", "81920MiB", "80GB", "85899345920"):
                rc, _, err = run(binary, command, "--log_dir", a, "--device-memory", arg)
                check(rc == 0 and "no memory samples" in err,
                      "%s --device-memory %s: read, and a note that there is nothing to check (got %d: %r)"
                      % (command, arg, rc, err))

        # A schedule as the README spells it, and as Paddle does: one reading
        # for whatif and pp-demo; a slip is told the nearest name.
        for spelled in ("ZB-H1", "zbh1", "FThenB", "1F1B", "ZB-VPP"):
            rc, out, err = run(binary, "whatif", "--log_dir", a, "--schedule", spelled)
            check(rc == 0 and "not a schedule" not in err, "whatif --schedule %s: read (got %d: %r)" % (spelled, rc, err))
        rc, out, err = run(binary, "whatif", "--log_dir", a, "--schedule", "ZB-H2")
        check(rc == 2 and "--schedule ZB-H2: not a schedule; give one of FThenB, 1F1B, Eager1F1B, VPP, ZBH1, ZBVPP" in err
              and "did you mean ZBH1?" in err, "whatif --schedule ZB-H2: exit 2, the names, ZBH1 (got %d: %r)" % (rc, err))
        if os.path.exists(demo):
            rc, _, err = run(demo, "--log_dir", o("demo-zbvpp"), "--ranks", "2", "--steps", "1", "--micro-batches", "2",
                             "--schedule", "ZB-VPP")
            check(rc == 2 and "ZBVPP is not one of the schedules here: FThenB, 1F1B, Eager1F1B, VPP, ZBH1" in err,
                  "pp-demo --schedule ZB-VPP: exit 2, the schedules it runs (got %d: %r)" % (rc, err))
            rc, _, err = run(demo, "--log_dir", o("demo-zbh1"), "--ranks", "2", "--steps", "1", "--micro-batches", "2",
                             "--schedule", "ZB-H1", "--work_us", "10", "--device", "cpu")
            check(rc == 0 and os.path.exists(os.path.join(o("demo-zbh1"), "workerlog.1")),
                  "pp-demo --schedule ZB-H1 runs (got %d: %r)" % (rc, err))

        # A run is decided once, in one order, by every command that reads
        # logs: the input, the selection, the outputs, then a directory
        # among the files; the first error is the one said.
        b = os.path.join(tmp, "b")
        ppt_test.gen_logs(b, RUN)
        two_dirs = "%s and %s: one log directory at a time (pp-timeline batch converts many)" % (a, b)
        for args, want in (
                (["report", "-o", o("r.html")],
                 "pp-timeline report: error: give --log_dir DIR or log files (see pp-timeline report --help)"),
                (["stats", a, b, "--steps", "9:1"],
                 "pp-timeline stats: error: --steps '9:1': the first step is after the last"),
                ([a, b, "-o", o("x.bad")], "pp-timeline: error: %s: convert writes " % o("x.bad")),
                (["whatif", a, b, "--schedule", "nope"], "pp-timeline whatif: error: --schedule nope: not a schedule"),
                (["stats", a, b], "pp-timeline stats: error: " + two_dirs),
                (["watch", a, b], "pp-timeline watch: error: " + two_dirs)):
            rc, out, err = run(binary, *args, cwd=tmp)
            check(rc == 2 and err.startswith(want) and err.count("\n") == 1 and out == "",
                  "%s: exit 2, %r first (got %d: %r)" % (" ".join(args), want, rc, err))

        # -o's extension in any case
        rc, _, err = run(binary, "--log_dir", a, "-o", o("trace.JSON"), "-q")
        check(rc == 0 and ppt_test.read_json(o("trace.JSON")).get("traceEvents"),
              "-o trace.JSON is the Chrome trace JSON (%d: %s)" % (rc, err.strip()))

        # an output that cannot be created: said before reading, with the reason
        rc, _, err = run(binary, "--log_dir", a, "-o", "/proc/t.json")
        check(rc == 1 and err == "pp-timeline: error: /proc/t.json: cannot create a file in /proc: "
              "No such file or directory; nothing was read or written\n",
              "-o /proc/t.json: the system's reason, before reading (got %d: %r)" % (rc, err))
        rc, _, err = run(binary, "stats", "--log_dir", a, "-o", o("missing/s.json"))
        check(rc == 1 and err == "pp-timeline stats: error: %s: cannot create: the folder %s does not exist; "
              "nothing was read or written\n" % (o("missing/s.json"), o("missing")),
              "stats -o missing/s.json (got %d: %r)" % (rc, err))
        with open(o("plain"), "w") as f:
            f.write("x")
        rc, _, err = run(binary, "--log_dir", a, "-o", o("plain/t.json"))
        check(rc == 1 and "cannot create: %s is not a folder; nothing was read" % o("plain") in err and
              "jobs written" not in err, "-o FILE/t.json: not a folder, and no summary (got %d: %r)" % (rc, err))

        # a rank log that cannot be read (a directory named like one: EISDIR
        # also for root): the rest is written, exit 1, "3 of 4 ranks read"
        part = os.path.join(tmp, "part")
        ppt_test.gen_logs(part, RUN)
        os.remove(os.path.join(part, "workerlog.3"))
        os.mkdir(os.path.join(part, "workerlog.3"))
        rc, _, err = run(binary, "--log_dir", part, "-o", o("part.json"))
        check(rc == 1 and os.path.exists(o("part.json")) and "; 3 of 4 ranks read -> %s (" % o("part.json") in err
              and err.endswith("pp-timeline: error: 1 log file could not be read; what the others hold was "
                               "written\n"),
              "convert with an unreadable rank: written, exit 1, 3 of 4 ranks read (got %d: %r)" % (rc, err))
        rc, _, err = run(binary, "stats", "--log_dir", part, "-o", o("part.md"))
        check(rc == 1 and os.path.exists(o("part.md")) and "3 of 4 ranks read -> %s (" % o("part.md") in err,
              "stats with an unreadable rank: written, exit 1, and says what it wrote (got %d: %r)" % (rc, err))
        gone = os.path.join(tmp, "gone")
        os.makedirs(os.path.join(gone, "workerlog.0"))
        rc, _, err = run(binary, "stats", gone)
        check(rc == 1 and "pp-timeline stats: error: no job found: 1 log file could not be read" in err
              and "profiler" not in err.splitlines()[-1],
              "stats on unreadable logs says unreadable, not 'turn the profiler on' (got %d: %r)" % (rc, err))

        # How to turn the profiler on is said once per run, by every command:
        # with no job anywhere (the error says it), and with one log of two
        # lacking job lines (the count of no_profiler_lines says it).
        quiet = os.path.join(tmp, "noprof")
        os.makedirs(quiet)
        for i in range(2):
            with open(os.path.join(quiet, "workerlog.%d" % i), "w") as f:
                f.write("I1020 09:15:07.265326 22317 trainer.py:1] loss 1.0\n")
        half = os.path.join(tmp, "halfprof")
        ppt_test.gen_logs(half, RUN)
        with open(os.path.join(half, "workerlog.3"), "w") as f:
            f.write("I1020 09:15:07.265326 22317 trainer.py:1] loss 1.0\n")
        hint = "switch_job_schedule_profiler(model, step, N, M)"
        for logs in (quiet, half):
            commands = [["--log_dir", logs, "-o", o("np.json")], ["stats", logs], ["report", logs, "-o", o("np.html")],
                        ["diff", a, logs], ["whatif", logs]]
            if logs == quiet:  # batch lists a converted run's warnings in its index, not on stderr
                commands.append(["batch", logs, "--out", o("np-batch")])
            for args in commands:
                rc, out, err = run(binary, *args)
                check((out + err).count(hint) == 1,
                      "%s: how to turn the profiler on, said once (%d times: %r)"
                      % (" ".join(args[:2]), (out + err).count(hint), err))

        # stats -o says what it wrote, as convert does
        rc, out, err = run(binary, "stats", "--log_dir", a, "-o", o("s.json"))
        check(rc == 0 and out == "" and re.search(r" -> %s \(\d+\.\d KB\)\n$" % re.escape(o("s.json")), err),
              "stats -o s.json names the file written (got %d: %r)" % (rc, err))

        # diff A B C: C is called C, in the report and in the gate line
        b, c = os.path.join(tmp, "b"), os.path.join(tmp, "c")
        ppt_test.gen_logs(b, RUN)
        ppt_test.gen_logs(c, RUN + ["--slow", "1:1.5"])
        rc, out, err = run(binary, "diff", a, b, c, "--fail-if-slower", "3")
        check(rc == 1 and "A = %s" % a in out and "C = %s" % c in out and "B = %s" % c not in out,
              "diff A B C labels the third run C (got %d)" % rc)
        gate = [l for l in err.splitlines() if "--fail-if-slower" in l]
        check(len(gate) == 1 and re.fullmatch(
            r"pp-timeline diff: C \(%s\) is \d+\.\d%% slower than A \(step period \+\d+\.\d%%\), more than "
            r"--fail-if-slower 3%% \(metric: period\)" % re.escape(c), gate[0]),
            "the gate line names C (%r)" % gate)
    return checks.exit_code("CLI messages")


if __name__ == "__main__":
    sys.exit(main())
