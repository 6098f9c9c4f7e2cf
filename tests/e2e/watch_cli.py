#!/usr/bin/env python3
"""`pp-timeline watch` through the real binary, on logs that grow while it
runs: a writer process appends generated logs step by step (two runs in each
file, a rank whose file appears late, a job line written in two halves, a file
rotated by a rename and a new file) while `watch --jsonl` follows them. Every
step must be reported once, with the figures `stats --json` computes on the
finished logs; SIGINT must leave a complete .pftrace (the same slices as the
finished logs' trace). Then the static cases: --stop-after, alerts with --exec,
the self-reloading page, the dashboard.

No check depends on timing: the writer's pauses only interleave the writes
with the watch's polls; the watch's end (SIGINT, --stop-after) makes every step
complete.

  watch_cli.py --binary build/pp-timeline [--protoc protoc]
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

RUN = ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "6", "--seed", "5",
       "--rerun", "--start-step", "10"]
# More layouts, each followed live the same way: machine folders with skewed
# clocks, and the schedule marker Paddle prints at every iteration.
MORE = [["--schedule", "1f1b", "--stages", "4", "--dp", "2", "--machines", "2", "--micro-batches", "4", "--steps",
         "5", "--seed", "6", "--skew", "1:5", "--rerun"],
        ["--schedule", "vpp", "--stages", "4", "--chunks", "2", "--micro-batches", "8", "--steps", "5", "--seed", "2",
         "--marker", "every-iteration", "--start-step", "5"]]
POLL = ["--poll-ms", "10"]

checks = Checks()
check = checks.check


def chunks(path):
    """The file's lines in pieces, each ending with an optimizer job line."""
    with open(path) as f:
        lines = f.readlines()
    out, cur = [], []
    for line in lines:
        cur.append(line)
        if "type = optimizer" in line:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def wait_for_a_step(jsonl):
    """Until the watch has reported a step: it has then looked at the folder
    while every file was in place (a watch that first looks after the
    rotation would never see the rotated file's lines, as convert would not)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if os.path.exists(jsonl) and os.path.getsize(jsonl) > 0:
            return
        time.sleep(0.01)
    sys.exit("the watch reported no step before the rotation")


def writer(src, dst, pause, jsonl):
    """Appends src's logs to dst, one step of every rank at a time."""
    names = sorted((os.path.relpath(os.path.join(d, n), src) for d, _, ns in os.walk(src) for n in ns
                    if n.startswith("workerlog.")), key=lambda n: (os.path.dirname(n), int(n.split(".")[-1])))
    pieces = [chunks(os.path.join(src, n)) for n in names]
    late, rotated, cut = len(names) - 1, 1, 0
    steps = max(len(p) for p in pieces)

    def append(rank, text):
        path = os.path.join(dst, names[rank])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:
            f.write(text)

    for k in range(steps):
        for r in range(len(names)):
            if k >= len(pieces[r]) or (r == late and k == 0):
                continue
            if r == rotated and k == steps // 2:
                wait_for_a_step(jsonl)
                os.rename(os.path.join(dst, names[r]), os.path.join(dst, names[r] + ".1"))
                time.sleep(pause)
            text = pieces[r][k]
            if r == cut and k == 1:
                half = text.index("job_end_time") + 5
                append(r, text[:half])
                time.sleep(pause)
                text = text[half:]
            append(r, text)
        if k == 0:
            append(late, pieces[late][0])  # its file appears only now
        time.sleep(pause)


def stats_steps(binary, logs):
    # stats measures one run of an appended log (the last, or --run N); watch
    # reports every run as it goes, so take each run's steps in turn. The
    # last run's come from the plain call (times from the whole log's
    # origin); `--run 1` starts at that origin too. A selected later run
    # would be timed from its own first job, so the logs here hold two runs
    # at most.
    p = ppt_test.run(binary, ["stats", "--json", "--log_dir", logs], timeout=60)
    check(p.returncode == 0, "stats on %s: %s" % (logs, p.stderr))
    if p.returncode != 0:
        return []
    doc = json.loads(p.stdout)
    runs = doc.get("runs", 1)
    check(runs <= 2, "the test logs hold at most two runs (%d)" % runs)
    steps = []
    if runs == 2:
        p = ppt_test.run(binary, ["stats", "--json", "--run", "1", "--log_dir", logs], timeout=60)
        check(p.returncode == 0, "stats --run 1 on %s: %s" % (logs, p.stderr))
        if p.returncode == 0:
            steps += json.loads(p.stdout)["steps"]
    return steps + doc["steps"]


def read_jsonl(path):
    if not check(os.path.exists(path), "%s was not written" % path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def same_steps(got, want, what):
    keys = [(s["run"], s["step"]) for s in got]
    check(len(keys) == len(set(keys)), "%s: a step reported twice: %s" % (what, keys))
    check(keys == [(s["run"], s["step"]) for s in want],
          "%s: steps %s, stats has %s" % (what, keys, [(s["run"], s["step"]) for s in want]))
    by_key = {(s["run"], s["step"]): s for s in got}
    for s in want:
        g = by_key.get((s["run"], s["step"]))
        if g is not None and g != s:
            diff = {k: (g.get(k), s.get(k)) for k in set(g) | set(s) if g.get(k) != s.get(k)}
            check(False, "%s: run %d step %d differs from stats (watch, stats): %s" %
                  (what, s["run"], s["step"], json.dumps(diff)[:600]))


def slices_of(binary, protoc, path):
    text = ppt_test.decode_pftrace(path, protoc)
    slices, tracks = ppt_test.pftrace_slices(text)
    return sorted((tracks.get(u, "?"), s, e, n) for u, lst in slices.items() for (s, e, n) in lst)


def live_case(binary, protoc, tmp, gen_args=RUN, runs=2):
    src, live = os.path.join(tmp, "src"), os.path.join(tmp, "live")
    ppt_test.gen_logs(src, gen_args)
    os.makedirs(live)
    jsonl, trace = os.path.join(tmp, "steps.jsonl"), os.path.join(tmp, "live.pftrace")
    watch = subprocess.Popen([binary, "watch", "--log_dir", live, "--jsonl", jsonl, "-o", trace, "--keep-steps", "2",
                              "--idle-timeout", "60", "-q"] + POLL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--writer", src, live, "0.02", jsonl])
    check(w.wait(timeout=120) == 0, "the writer failed")
    time.sleep(0.1)
    watch.send_signal(signal.SIGINT)
    out, err = watch.communicate(timeout=120)
    check(watch.returncode == 0, "watch after SIGINT: exit %s: %s" % (watch.returncode, err))
    check(glob.glob(os.path.join(live, "**", "workerlog.*.1"), recursive=True), "the writer rotated no file")
    want = stats_steps(binary, src)
    check(len({s["run"] for s in want}) == runs, "the finished logs hold %d runs" % runs)
    same_steps(read_jsonl(jsonl), want, "live watch")
    check(os.path.exists(trace), "SIGINT left no .pftrace")
    if os.path.exists(trace):
        ref = os.path.join(tmp, "ref.pftrace")
        p = ppt_test.run(binary, ["--log_dir", src, "-o", ref, "-q"])
        check(p.returncode == 0, "convert: " + p.stderr)
        got, exp = slices_of(binary, protoc, trace), slices_of(binary, protoc, ref)
        check(got == exp, "the watch's .pftrace: %d slices, the finished logs' %d" % (len(got), len(exp)))
    return src


def static_cases(binary, src, tmp):
    want = stats_steps(binary, src)
    # --stop-after N stops by itself; an idle timeout of 0 makes every step complete.
    out = os.path.join(tmp, "three.jsonl")
    p = ppt_test.run(binary, ["watch", src, "--jsonl", out, "--stop-after", "3", "--idle-timeout", "0", "-q"] + POLL,
                     timeout=60)
    check(p.returncode == 0, "--stop-after 3: exit %d: %s" % (p.returncode, p.stderr))
    same_steps(read_jsonl(out), want[:3], "--stop-after 3")
    # Standard output is not a terminal: the JSON lines go there.
    p = ppt_test.run(binary, ["watch", src, "--stop-after", str(len(want)), "--idle-timeout", "0", "-q"] + POLL,
                     timeout=60)
    check(p.returncode == 0, "watch to stdout: " + p.stderr)
    same_steps([json.loads(l) for l in p.stdout.splitlines()], want, "stdout jsonl")

    # A straggler: an alert, the command run with its details, exit 1.
    slow = os.path.join(tmp, "slow")
    ppt_test.gen_logs(slow, ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "4",
                             "--seed", "3", "--slow", "2:1.5"])
    n = len(stats_steps(binary, slow))
    alerts = os.path.join(tmp, "alerts.txt")
    report = os.path.join(tmp, "live.html")
    p = ppt_test.run(binary, ["watch", slow, "--stop-after", str(n), "--idle-timeout", "0", "--alert-if-slower", "5",
                              "--exec", "env | grep ^PPT_ALERT_ | sort >> '%s'" % alerts, "--report", report,
                              "--report-every", "1", "--jsonl", os.path.join(tmp, "slow.jsonl")] + POLL, timeout=60)
    check(p.returncode == 1, "an alert fired: exit 1, got %d: %s" % (p.returncode, p.stderr))
    check("alert: " in p.stderr and "straggler rank 2" in p.stderr, "the alert is printed: " + p.stderr)
    env = open(alerts).read() if os.path.exists(alerts) else ""
    check("PPT_ALERT_KIND=straggler" in env and "PPT_ALERT_RANK=2" in env, "--exec got the details: " + env)
    # Runs are counted from 1 in the message and its variable alike, as --run counts them.
    check("alert: run 1 step" in p.stderr and "run 0" not in p.stderr, "the alert counts runs from 1: " + p.stderr)
    check("PPT_ALERT_RUN=1\n" in env and "PPT_ALERT_MESSAGE=run 1 step" in env and "run 0" not in env,
          "--exec's run and message count from 1: " + env)
    page = open(report).read() if os.path.exists(report) else ""
    check('<meta http-equiv="refresh"' in page and "</html>" in page, "the page reloads itself and is whole")
    # Without an alert threshold nothing fires: exit 0.
    p = ppt_test.run(binary, ["watch", slow, "--stop-after", str(n), "--idle-timeout", "0", "--jsonl", os.devnull]
                     + POLL, timeout=60)
    check(p.returncode == 0, "no alert asked: exit 0, got %d" % p.returncode)

    # The dashboard, forced on without a terminal.
    p = ppt_test.run(binary, ["watch", src, "--stop-after", "2", "--idle-timeout", "0", "--dashboard", "on", "--jsonl",
                              os.devnull] + POLL, timeout=60)
    check(p.returncode == 0 and "\x1b[H" in p.stdout and "bubble" in p.stdout and "slowest rank" in p.stdout,
          "the dashboard is drawn: " + p.stdout[-400:])

    # Usage errors.
    p = ppt_test.run(binary, ["watch", "-"], timeout=30)
    check(p.returncode == 2, "standard input cannot be followed: exit 2, got %d" % p.returncode)
    log = os.path.join(src, "workerlog.0")
    before = open(log).read()
    p = ppt_test.run(binary, ["watch", src, "--jsonl", log, "--stop-after", "1"], timeout=30)
    check(p.returncode == 2 and open(log).read() == before, "--jsonl onto a log: exit 2, the log untouched")
    p = ppt_test.run(binary, ["watch", src, "--exec", "true"], timeout=30)
    check(p.returncode == 2, "--exec without --alert-if-slower: exit 2, got %d" % p.returncode)


def wait_for_text(proc_out, text, timeout=60):
    """Until `text` is in what a reader thread collected (proc_out: a list of
    chunks); False when the watch never said it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in "".join(proc_out):
            return True
        time.sleep(0.05)
    return False


def waiting_cases(binary, tmp):
    """Before its first step the watch says at once what it waits for: the
    folder, then logs in it, on the dashboard and (without one) on stderr."""
    import threading
    for dashboard, stream in (("on", "stdout"), ("off", "stderr")):
        logs = os.path.join(tmp, "later-" + dashboard)
        proc = subprocess.Popen([binary, "watch", "--log_dir", logs, "--dashboard", dashboard, "--jsonl", os.devnull]
                                + POLL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got = {"stdout": [], "stderr": []}
        readers = [threading.Thread(target=lambda f=f, k=k: [got[k].append(c) for c in iter(lambda: f.read(1), "")])
                   for k, f in (("stdout", proc.stdout), ("stderr", proc.stderr))]
        for r in readers:
            r.start()
        try:
            check(wait_for_text(got[stream], "waiting for %s to be created" % logs),
                  "--dashboard %s: says it waits for the folder (%r)" % (dashboard, "".join(got[stream])[-300:]))
            os.makedirs(logs)
            check(wait_for_text(got[stream], "waiting for workerlog.<i> files in %s" % logs),
                  "--dashboard %s: says it waits for logs (%r)" % (dashboard, "".join(got[stream])[-300:]))
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            for r in readers:
                r.join()
        check(proc.returncode in (0, 1), "--dashboard %s: SIGINT ends the watch (exit %s)" % (dashboard, proc.returncode))


def dashboard_screens(stdout):
    return [s for s in stdout.split("\x1b[H\x1b[2J") if s.strip()]


def number_cases(binary, tmp):
    """What watch shows is what the other commands compute, numbered as the logs are."""
    # --pp-degree is checked as every command checks it: 3 does not divide 8 ranks.
    eight = os.path.join(tmp, "eight")
    ppt_test.gen_logs(eight, ["--schedule", "1f1b", "--stages", "4", "--dp", "2", "--micro-batches", "4",
                              "--steps", "3", "--seed", "4"])
    conv = ppt_test.run(binary, ["--log_dir", eight, "--pp-degree", "3", "-o", os.path.join(tmp, "x.json")])
    p = ppt_test.run(binary, ["watch", eight, "--pp-degree", "3", "--stop-after", "1", "--idle-timeout", "0",
                              "--jsonl", os.devnull] + POLL, timeout=30)
    check(conv.returncode == 2 and p.returncode == 2, "--pp-degree 3 on 8 ranks: convert exit %d, watch exit %d: %s"
          % (conv.returncode, p.returncode, p.stderr))
    check("--pp-degree 3 does not divide the 8 ranks" in p.stderr, "watch names the bad P: " + p.stderr)
    # --strict as every command has it: a rejected job line stops the watch, exit 1.
    bad = os.path.join(ppt_test.ROOT, "testdata", "cases", "bad_lines", "logs")
    p = ppt_test.run(binary, ["watch", bad, "--strict", "--idle-timeout", "0", "--jsonl", os.devnull] + POLL,
                     timeout=30)
    check(p.returncode == 1 and "--strict" in p.stderr, "watch --strict on a rejected line: exit %d: %s"
          % (p.returncode, p.stderr))
    # --steps is the selection elsewhere: watch names the option that stops it.
    p = ppt_test.run(binary, ["watch", eight, "--steps", "2", "--jsonl", os.devnull], timeout=30)
    check(p.returncode == 2 and "--stop-after" in p.stderr, "watch --steps names --stop-after: " + p.stderr)

    # Seven steps, six periods: the dashboard's median period is stats' (the
    # mean of the two middle periods), and the run's last step has none.
    seven = os.path.join(tmp, "seven")
    ppt_test.gen_logs(seven, ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "7",
                              "--seed", "9", "--jitter", "0.2"])
    p = ppt_test.run(binary, ["stats", "--json", seven], timeout=60)
    check(p.returncode == 0, "stats: " + p.stderr)
    doc = json.loads(p.stdout) if p.returncode == 0 else {"step_period": {"median_us": 0, "count": 0}}
    check(doc["step_period"]["count"] == 6, "seven steps have six periods: %s" % doc["step_period"])
    p = ppt_test.run(binary, ["watch", seven, "--stop-after", "7", "--idle-timeout", "0", "--dashboard", "on",
                              "--jsonl", os.devnull] + POLL, timeout=60)
    screens = dashboard_screens(p.stdout)
    check(p.returncode == 0 and screens, "the dashboard is drawn: exit %d %s" % (p.returncode, p.stderr))
    last = screens[-1] if screens else ""
    want_median = "median %.3f ms" % (doc["step_period"]["median_us"] / 1000.0)
    check(want_median in last, "the dashboard's median is stats' (%s): %s" % (want_median, last[:300]))
    check("period none" in last, "the run's last step has no period, as in stats: " + last[:300])
    check("(run 1)" in last, "the dashboard counts runs from 1, as --run does: " + last[:300])

    # Steps 500-529, 20 kept: the page shows steps 510-529, as the logs number them.
    late = os.path.join(tmp, "late")
    ppt_test.gen_logs(late, ["--schedule", "1f1b", "--stages", "2", "--micro-batches", "2", "--steps", "30",
                             "--seed", "8", "--start-step", "500"])
    page = os.path.join(tmp, "late.html")
    jsonl = os.path.join(tmp, "late.jsonl")
    p = ppt_test.run(binary, ["watch", late, "--stop-after", "30", "--idle-timeout", "0", "--keep-steps", "20",
                              "--report", page, "--report-every", "1", "--jsonl", jsonl] + POLL, timeout=120)
    check(p.returncode == 0, "watch --report: exit %d: %s" % (p.returncode, p.stderr))
    steps = [s["step"] for s in read_jsonl(jsonl)]
    check(steps == list(range(500, 530)), "the steps are the logs' 500-529: %s" % steps[:5])
    text = open(page).read() if os.path.exists(page) else ""
    # 20 steps of 10 jobs are too dense to draw whole: the picture shows the
    # slowest of the 20 (the one picture rule), named by the logs' number.
    check(re.search(r"steps 510-529 of 20|step 5[12]\d \(slowest of 20\)", text) is not None,
          "the page shows the last 20 steps, 510-529: %s" %
          re.findall(r"steps? \d+(?:-\d+)? (?:of \d+|\(slowest of \d+\))", text)[:2])
    named = {int(n) for n in re.findall(r"\bstep (\d+)", text)}
    check(named and all(510 <= n <= 529 for n in named), "every step the page names is one of 510-529: %s"
          % sorted(named))
    # The last line names every file written.
    check(jsonl in p.stderr and page in p.stderr, "the last line names the files written: " + p.stderr[-300:])


def accounting_case(binary, tmp):
    """watch's last line gives convert's account (written, rejected by kind) and names the logs it cannot
    open and the ranks that are missing."""
    logs = os.path.join(tmp, "acct")
    ppt_test.gen_logs(logs, ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "3"])
    with open(os.path.join(logs, "workerlog.0"), "a") as f:
        f.write(ppt_test.JOB_LINE % (0, "forward", 0, "abc", "1697793307254.006104"))
    os.remove(os.path.join(logs, "workerlog.2"))
    os.remove(os.path.join(logs, "workerlog.1"))
    os.symlink("nowhere", os.path.join(logs, "workerlog.1"))
    p = ppt_test.run(binary, ["watch", logs, "--idle-timeout", "0", "--stop-after", "1", "--jsonl", os.devnull] + POLL,
                     timeout=60)
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    m = re.search(r"(\d+) profiler lines: (\d+) jobs written, (\d+) rejected \(1 bad_time\)", last)
    if not check(m is not None, "the last line does not give the account: %r" % p.stderr):
        return
    seen, written, rejected = (int(g) for g in m.groups())
    check(rejected == 1 and written + rejected == seen, "written + rejected != seen: %r" % last)
    check("workerlog.1: cannot open: a symbolic link to nothing" in p.stderr, "the dangling link is not named: %r" % p.stderr)
    check("workerlog.2" in p.stderr, "the missing rank is not named: %r" % p.stderr)


def gone_case(binary, tmp):
    """A log, then the whole log directory, deleted while watched: each is
    said as it happens (as `tail -F` says "has become inaccessible"), the
    directory again when it comes back, and the watch goes on to a clean end
    at SIGINT. Waits for each message (no sleep decides anything)."""
    logs = os.path.join(tmp, "gone")
    ppt_test.gen_logs(logs, ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "3"])
    jsonl = os.path.join(tmp, "gone.jsonl")
    proc = subprocess.Popen([binary, "watch", logs, "--idle-timeout", "0", "--jsonl", jsonl] + POLL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()

    def said(text):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if any(text in line for line in list(lines)):
                return True
            time.sleep(0.01)
        return any(text in line for line in list(lines))

    try:
        wait_for_a_step(jsonl)
        os.remove(os.path.join(logs, "workerlog.3"))
        check(said(os.path.join(logs, "workerlog.3") + ": has become inaccessible: No such file or directory"),
              "a deleted log is not said: %r" % lines)
        shutil.rmtree(logs)
        check(said(logs + ": the log directory has become inaccessible: No such file or directory"),
              "a deleted log directory is not said: %r" % lines)
        os.makedirs(logs)
        check(said(logs + ": the log directory has appeared again"), "the directory's return is not said: %r" % lines)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        reader.join(timeout=10)
    check(proc.returncode == 0, "the watch goes on and ends cleanly: exit %s: %r" % (proc.returncode, lines))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--writer":
        writer(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
        return 0
    ap = arg_parser(__doc__)
    ap.add_argument("--protoc", default=None)
    ap.add_argument("--only", default=None, help="numbers: only the cases of what watch shows; waiting: those and what it says before a step")
    args = ap.parse_args()
    protoc = ppt_test.find_protoc(args.protoc)
    with temp_dir("ppt-watch-cli-") as tmp:
        try:
            number_cases(args.binary, tmp)
        except ppt_test.Failure as e:
            check(False, str(e))
    if args.only == "numbers":
        return checks.exit_code("watch_cli")
    with temp_dir("ppt-watch-cli-") as tmp:
        waiting_cases(args.binary, tmp)
    if args.only == "waiting":
        return checks.exit_code("watch_cli")
    with temp_dir("ppt-watch-cli-") as tmp:
        try:
            accounting_case(args.binary, tmp)
            gone_case(args.binary, tmp)
            src = live_case(args.binary, protoc, tmp)
            static_cases(args.binary, src, tmp)
        except ppt_test.Failure as e:
            check(False, str(e))
    for gen_args in MORE:
        with temp_dir("ppt-watch-cli-") as tmp:
            try:
                live_case(args.binary, protoc, tmp, gen_args, runs=2 if "--rerun" in gen_args else 1)
            except ppt_test.Failure as e:
                check(False, "%s: %s" % (" ".join(gen_args), e))
    return checks.exit_code("watch_cli")


if __name__ == "__main__":
    sys.exit(main())
