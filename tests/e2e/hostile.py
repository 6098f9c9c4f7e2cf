#!/usr/bin/env python3
"""Hostile inputs: the real binary on what a crashed, killed or misconfigured
training run leaves behind, and on outputs that cannot be written.

A case is a folder testdata/bad/<name>/ holding case.json and, usually, the
static inputs (logs/...). case.json:
  about     what the case is, in one line
  args      the command line after the binary; it runs in a scratch copy of
            the case folder, so paths are the case's own. An argument written
            {"hex": HEX} is the bytes HEX spells (a name that is not UTF-8)
  setup     inputs made at run time, in order (what git cannot hold or what
            is too big to commit):
              ["dir", PATH]                      a directory
              ["fifo", PATH]                     a named pipe
              ["symlink", PATH, TARGET]          a symbolic link
              ["long_line", PATH, BYTES, MARKER, NEWLINE]
                                                 appends one line of BYTES bytes,
                                                 starting with the job marker if
                                                 MARKER, ended by '\\n' if NEWLINE
              ["big_log", PATH, MEGABYTES]       noise with a job line every 1000 lines
              ["jobs", PATH, COUNT]              COUNT job lines (large outputs)
              ["stale_jobs", PATH, COUNT]        COUNT jobs from one start (a stale
                                                 timer): all overlap each other
              ["clock_jumps", PATH, COUNT]       COUNT jobs, each 2 s before the last
              ["append", PATH, TEXT]             appends TEXT
              ["glued", PATH, COUNT]             one line of COUNT job lines, each cut
                                                 short and followed by the next
              ["gzip", SRC, DST, FRACTION]       DST = gzip of SRC cut to FRACTION
              ["rename", PATH, HEX]              renames PATH to the name whose bytes
                                                 HEX spells, in the same folder (names
                                                 git cannot hold: escapes, newlines,
                                                 bytes that are not UTF-8)
              ["zip", PATH, [[NAME, SRC], ...]]  a zip made by Python's zipfile (as CI
                                                 tools make them: names flagged UTF-8
                                                 when not ASCII), entry NAME holding
                                                 the file SRC, or, when SRC is a number,
                                                 that many job lines
              ["marker", PATH]                   an empty file (a folder's mark)
              ["one_line_logs", DIR, COUNT]      DIR/workerlog.0 .. COUNT-1, one job line
                                                 each, all forward:0 (COUNT ranks of one
                                                 job each, one plan: P is every rank)
  during    what happens while the binary runs:
              {"grow": PATH}      once it has read part of PATH, it is stopped
                                  (SIGSTOP), job lines are appended, it goes on
              {"truncate": PATH}  likewise, PATH is cut halfway into what is unread
              {"append_forever": PATH}  a writer appends lines until it exits
              {"signal": "TERM"}  sent once an output's temporary file exists
              {"signal": "TERM", "when": GLOB}  sent once a file matching GLOB
                                  (relative to the case) exists and is not empty
  limits    for the binary: {"fsize": BYTES} RLIMIT_FSIZE (a full quota),
            {"as": BYTES} RLIMIT_AS (out of memory), {"nofile": N}
            RLIMIT_NOFILE (too many open files); a case with either is skipped
            for a sanitizer build, whose runtime needs terabytes of address
            space and descriptors of its own
  stdout    "closed", "broken_pipe" or "full" (/dev/full: every write
            fails with ENOSPC) (default: captured)
  exit      the expected exit status, or "SIGTERM" for a death by that signal
  message   text(s) that stderr must contain
  message_lacks  texts that stderr must not contain (a claim that is false)
  outputs   files the run must leave (paths relative to the case; a folder
            ends with '/'); default none
  removed   inputs the run must remove (what it left there itself before)
  output_lacks  {PATH: [TEXT, ...]}: texts an output must not hold
  count     false when the profiler lines of the input cannot be counted
            beforehand (default true)

Every case must also: end by itself within --timeout (a hang fails), exit
below 128 (no death by a signal, unless one was sent), leave every input as
it was, leave no file but the expected outputs (no temporary or partial
output), write outputs that parse, and account for every profiler line:
written + rejected = seen = the lines of the input with the job marker.

And whatever the input holds (the logs, their folders' names, an archive are
all someone else's bytes), every case's text outputs obey the escaping rules
(docs/hardening.md, src/util/escape.h):
  - stderr, stdout (unless it is binary: gzip, or holding a NUL byte) and
    every .md, .txt and .json file written are valid UTF-8 with no control
    character but newline and tab (C0, DEL, C1);
  - every JSON output parses (stdout too, when --json chose it);
  - every Markdown output (a .md file; stdout when --markdown chose it)
    renders with cmark-gfm (GFM tables and autolinks on) into one table row
    per row of the source, with no image and no link but the relative links
    to files the run wrote.

With --accounting the same summary check runs on every golden case
(testdata/cases/<name>/args) and on the bundled example (testdata/example)
instead.

  hostile.py --binary build/pp-timeline               every case under testdata/bad
  hostile.py --binary build/pp-timeline CASE...       some of them
  hostile.py --binary build/pp-timeline --accounting  the golden cases' summaries
"""

import glob
import gzip
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zlib

from ppt_test import BAD, CASES, EXAMPLE, SUMMARY_RE, Failure, arg_parser, check, run, snapshot

MARKER = b"Profiler Info: Job ("
PREFIX = b"I1020 09:15:07.265326 22317 standalone_executor.cc:217] "
SANITIZER_RE = re.compile(r"ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: LeakSanitizer")


def job_line(i, start_ms=1697793307000):
    start = (start_ms + i) * 1000000
    end = start + 700000
    return PREFIX + b"Profiler Info: Job (%d), type = forward, micro_batch_id = %d, job_start_time = %d.%06d, job_end_time = %d.%06d\n" % (
        i % 64, i % 64, start // 1000000, start % 1000000, end // 1000000, end % 1000000)


# ------------------------------------------------------------------ setup --

def do_setup(work, steps):
    for step in steps:
        kind, path = step[0], os.path.join(work, step[1])
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        if kind == "dir":
            os.makedirs(path, exist_ok=True)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "symlink":
            os.symlink(step[2], path)
        elif kind == "long_line":
            size, marker, newline = step[2], step[3], step[4]
            with open(path, "ab") as f:
                head = PREFIX + MARKER if marker else b""
                f.write(head)
                left = size - len(head)
                block = b"x" * (1 << 20)
                while left > 0:
                    n = min(left, len(block))
                    f.write(block[:n])
                    left -= n
                if newline:
                    f.write(b"\n")
        elif kind == "big_log":
            noise = b"I1020 09:15:07.265326 22318 reader.cc:12] loading batch, nothing to see here: 0123456789abcdef\n"
            block = noise * 999
            with open(path, "wb") as f:
                written, i = 0, 0
                while written < step[2] << 20:
                    chunk = block + job_line(i)
                    f.write(chunk)
                    written += len(chunk)
                    i += 1
        elif kind == "jobs":
            with open(path, "wb") as f:
                f.write(b"".join(job_line(i) for i in range(step[2])))
        elif kind == "stale_jobs":
            with open(path, "wb") as f:
                for i in range(step[2]):
                    end = 1697793307213000000 + 1000 + i * 1000
                    f.write(PREFIX + b"Profiler Info: Job (%d), type = forward, micro_batch_id = %d, job_start_time = "
                            b"1697793307213.000000, job_end_time = %d.%06d\n" % (i, i, end // 1000000, end % 1000000))
        elif kind == "clock_jumps":
            with open(path, "wb") as f:
                for i in range(step[2]):
                    start = 1697793307213000000 - i * 2000000000
                    f.write(PREFIX + b"Profiler Info: Job (0), type = forward, micro_batch_id = 0, job_start_time = "
                            b"%d.%06d, job_end_time = %d.%06d\n" % (start // 1000000, start % 1000000,
                                                                    (start + 500000) // 1000000, (start + 500000) % 1000000))
        elif kind == "glued":
            with open(path, "ab") as f:
                f.write(b"".join(job_line(i)[:-30] for i in range(step[2])) + b"\n")
        elif kind == "append":
            with open(path, "ab") as f:
                f.write(step[2].encode("utf-8"))
        elif kind == "gzip":
            with open(os.path.join(work, step[1]), "rb") as f:
                data = gzip.compress(f.read(), mtime=0)
            dst = os.path.join(work, step[2])
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data[:int(len(data) * step[3])])
        elif kind == "rename":
            target = os.path.join(os.fsencode(os.path.dirname(path)), bytes.fromhex(step[2]))
            os.rename(os.fsencode(path), target)
        elif kind == "zip":
            import warnings
            import zipfile
            with warnings.catch_warnings(), zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                warnings.simplefilter("ignore")  # "Duplicate name": made on purpose
                for name, src in step[2]:
                    if isinstance(src, int):
                        z.writestr(name, b"".join(job_line(i) for i in range(src)))
                    else:
                        z.write(os.path.join(work, src), name)
        elif kind == "marker":
            open(path, "wb").close()
        elif kind == "one_line_logs":
            os.makedirs(path, exist_ok=True)
            for i in range(step[2]):
                with open(os.path.join(path, "workerlog.%d" % i), "wb") as f:
                    f.write(job_line(i).replace(b"micro_batch_id = %d," % (i % 64), b"micro_batch_id = 0,")
                            .replace(b"Job (%d)" % (i % 64), b"Job (0)"))
        else:
            raise Failure("unknown setup step %r" % (step,))


# ---------------------------------------------------------------- inputs --

def input_files(work, args, stdin_path=None):
    """The log files the binary reads (as found by the layout rules), or None
    when they cannot be told (--devices). `stdin_path`: what '-' reads."""
    if "--devices" in args:
        return None
    files = []
    args = [x for a in args for x in (a.split("=", 1) if a.startswith("--") and "=" in a else [a])]
    takes_value = {"--log_dir", "--log-dir", "-o", "--output", "--perfetto-json", "--threads", "--devices", "--steps",
                   "--align-clocks", "--pp-degree", "--color", "--max-jobs", "--straggler-margin"}
    log_dir = None
    for spelling in ("--log_dir", "--log-dir"):
        if spelling in args:
            log_dir = args[args.index(spelling) + 1]
    positional = []
    i = 0
    while i < len(args):
        if args[i] in takes_value:
            i += 2
            continue
        if args[i] == "-" or not args[i].startswith("-"):
            positional.append(args[i])
        i += 1
    if log_dir is None and len(positional) == 1 and os.path.isdir(os.path.join(work, positional[0])):
        log_dir = positional.pop()  # a directory named alone is the log directory
    log_dirs = [log_dir] if log_dir is not None else []
    if args and args[0] in ("stats", "diff"):
        # diff A B: each directory named is a log directory.
        log_dirs += [a for a in positional if os.path.isdir(os.path.join(work, a))]
        positional = [a for a in positional if not os.path.isdir(os.path.join(work, a))]
    for log_dir in log_dirs:
        d = os.path.join(work, log_dir)
        if os.path.isdir(d):
            names = os.listdir(d)
            # Every sub-folder holding workerlog files is a machine (log_layout.h).
            machines = [m for m in names if os.path.isdir(os.path.join(d, m)) and
                        any(re.fullmatch(r"workerlog\.(\d{1,6})(\.gz)?", n) for n in os.listdir(os.path.join(d, m)))]
            dirs = [os.path.join(d, m) for m in machines] if machines else [d]
            for sub in dirs:
                logs = {}
                for n in os.listdir(sub):
                    m = re.fullmatch(r"workerlog\.(\d{1,6})(\.gz)?", n)
                    if m and (int(m.group(1)) not in logs or not m.group(2)):
                        logs[int(m.group(1))] = os.path.join(sub, n)
                files += logs.values()
            # Dynamic-graph profile files, in DIR and its sub-folders (dygraph_profile.h).
            for sub in [d] + [os.path.join(d, m) for m in names if os.path.isdir(os.path.join(d, m))]:
                files += [os.path.join(sub, n) for n in sorted(os.listdir(sub))
                          if re.fullmatch(r"profile_record_tmp_file_for_rank_\d{1,7}", n)]
    for a in positional:
        if a == "-":
            if stdin_path:
                files.append(stdin_path)
        elif os.path.exists(os.path.join(work, a)):
            files.append(os.path.join(work, a))
    return files


# A line that holds several job lines, each cut short and followed by the
# next, is taken apart into at most this many pieces (file_scanner.cc), each a
# profiler line of its own.
MAX_PIECES_PER_LINE = 8


def count_profile_jobs(data):
    """The jobs a dynamic-graph profile file describes, counted apart from
    the reader: a B record and the next E of its name are one, a record
    left unpaired is one, a non-blank line that is not a B/E record is one."""
    n = 0
    open_names = set()
    for raw in data.split(b"\n"):
        line = raw.strip(b" \t\r").rstrip(b",")
        if not line:
            continue
        try:
            r = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            r = None
        if not (isinstance(r, dict) and isinstance(r.get("name"), str) and r.get("ph") in ("B", "E")):
            n += 1
            continue
        if r["ph"] == "B":
            n += r["name"] in open_names  # the earlier B is left unpaired
            open_names.add(r["name"])
        elif r["name"] in open_names:
            open_names.discard(r["name"])
            n += 1
        else:
            n += 1
    return n + len(open_names)


DETAILS = b"[Pipeline details] "
DETAILS_RE = re.compile(
    rb"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\].*?\[Pipeline details\] "
    rb"(?:(Start|End)_forward_backward_pipeline|(Before|After)_(forward|backward)_step_chunk_(None|\d{1,9})"
    rb"_step_(None|\d{1,9})): memory_allocated_size=\d{1,9}(?:\.\d{1,9})?, "
    rb"memory_reserved_size=\d{1,9}(?:\.\d{1,9})?[ \r]*$")
STARTUP = b"Please NOTE: device: "


def count_details_jobs(lines, with_job_lines):
    """The jobs a launch log's `[Pipeline details]` lines describe, counted
    apart from the reader: a Before and the next After of its step are one
    (not counted when the file has job lines: those are the jobs), a half
    left unpaired is one, a line holding the literal that is not a details
    line is one."""
    n = pairs = 0
    open_key = None
    for line in lines:
        if STARTUP in line and DETAILS not in line:
            n += open_key is not None
            open_key = None
            continue
        if DETAILS not in line or MARKER in line:
            continue
        m = DETAILS_RE.search(line)
        if not m:
            n += 1
            continue
        if m.group(1):  # Start / End
            n += open_key is not None
            open_key = None
            continue
        key = (m.group(3), m.group(4), m.group(5))
        if m.group(2) == b"Before":
            n += open_key is not None
            open_key = key
        elif open_key == key:
            pairs += 1
            open_key = None
        else:
            n += 1
    n += open_key is not None
    return n + (0 if with_job_lines else pairs)


def count_marker_lines(paths, prefixes):
    """Job lines in the regular files among `paths` (each cut to
    prefixes[path] bytes when given): the lines with the job marker, a line
    with several markers counting as one per marker, up to
    MAX_PIECES_PER_LINE."""
    n = 0
    for p in paths:
        try:
            if not stat.S_ISREG(os.stat(p).st_mode):
                continue
            with open(p, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if data[:2] == b"\x1f\x8b":
            try:
                data = gunzip_keeping_trailer(data)
            except zlib.error:
                return None
        if p in prefixes:
            data = data[:prefixes[p]]
        if os.path.basename(p).startswith("profile_record_tmp_file_for_rank_"):
            n += count_profile_jobs(data)
            continue
        data = as_utf8(data)
        # A lone '\r' ends a line as '\n' does (file_scanner.cc).
        lines = re.split(b"\r(?!\n)|\n", data)
        markers = sum(min(line.count(MARKER), MAX_PIECES_PER_LINE) for line in lines)
        n += markers
        if DETAILS in data:
            n += count_details_jobs(lines, markers > 0)
    return n


def gunzip_keeping_trailer(data):
    """Every gzip member of `data` decompressed, then the bytes after them
    that are not gzip as they are (what pp-timeline reads; gunzip drops
    them with a warning)."""
    out = b""
    while data[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(wbits=31)
        out += d.decompress(data)
        if not d.eof:
            raise zlib.error("cut short")
        data = d.unused_data
    return out + data


def as_utf8(data):
    """A UTF-16 log (a byte-order mark, or nine in ten of its first 256 units
    ASCII beside a NUL) as the UTF-8 the binary reads; other bytes as they
    are."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data[2:].decode("utf-16-le" if data[:2] == b"\xff\xfe" else "utf-16-be", "replace").encode()
    head = data[:512][:len(data[:512]) // 2 * 2]
    if len(head) >= 32:
        units = [head[i:i + 2] for i in range(0, len(head), 2)]
        if sum(1 for u in units if u[0] and not u[1]) * 10 >= len(units) * 9:
            return data.decode("utf-16-le", "replace").encode()
        if sum(1 for u in units if u[1] and not u[0]) * 10 >= len(units) * 9:
            return data.decode("utf-16-be", "replace").encode()
    return data


def check_summary(stderr, expected_seen, required, sides=1):
    """`sides`: 2 for diff A B, which prints a summary for each side (each
    only beside input problems: both must be there to be counted)."""
    found = list(SUMMARY_RE.finditer(stderr))
    if not found:
        check(not required, "no summary line in stderr")
        return None
    if sides == 2 and len(found) != 2:
        expected_seen = None
    seen = written = rejected = 0
    for m in found[:sides]:
        s, w, r = (int(g.replace(",", "")) for g in m.groups())
        seen, written, rejected = seen + s, written + w, rejected + r
    check(written + rejected == seen, "summary: written %d + rejected %d != seen %d" % (written, rejected, seen))
    if expected_seen is not None:
        check(seen == expected_seen, "summary: %d profiler lines seen, the input has %d" % (seen, expected_seen))
    return seen


# ---------------------------------------------------------------- during --

def read_pos(pid, real):
    """The read offset of `real` in process `pid`, or None when not open."""
    d = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(d)
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(os.path.join(d, fd)) != real:
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("pos:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return None


def stop_mid_read(proc, path, act, limit):
    """Stops `proc` once it has read part, not all, of `path`; runs act(pos)
    and lets it go on. False if the moment was missed."""
    real = os.path.realpath(path)
    size = os.path.getsize(path)
    deadline = time.time() + limit
    while proc.poll() is None and time.time() < deadline:
        pos = read_pos(proc.pid, real)
        if pos is not None and 0 < pos < size:
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                pos = read_pos(proc.pid, real)
                if pos is not None and 0 < pos < size:
                    act(pos)
                    return True
                return False
            finally:
                os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.0001)
    return False


class During:
    """What happens to the inputs while the binary runs."""

    def __init__(self, spec, work, timeout):
        self.spec = spec or {}
        self.work = work
        self.timeout = timeout
        self.prefixes = {}   # path -> bytes that count (what the binary may see)
        self.changed = set()  # inputs changed on purpose (not compared)
        self.caught = True
        self.thread = None
        self.stop = threading.Event()
        for key in ("grow", "truncate", "append_forever"):
            if key in self.spec:
                self.changed.add(os.path.normpath(self.spec[key]))

    def start(self, proc):
        s = self.spec
        if "grow" in s:
            path = os.path.join(self.work, s["grow"])
            self.prefixes[path] = os.path.getsize(path)

            def grow(pos):
                with open(path, "ab") as f:
                    f.write(b"".join(job_line(100000 + i) for i in range(10)))
            self.thread = threading.Thread(target=lambda: setattr(self, "caught", stop_mid_read(proc, path, grow, self.timeout)))
        elif "truncate" in s:
            path = os.path.join(self.work, s["truncate"])

            def cut(pos):
                size = os.path.getsize(path)
                # Cut halfway into what is left, and inside a line.
                to = pos + (size - pos) // 2 + 7
                os.truncate(path, to)
                self.prefixes[path] = to
            self.thread = threading.Thread(target=lambda: setattr(self, "caught", stop_mid_read(proc, path, cut, self.timeout)))
        elif "append_forever" in s:
            path = os.path.join(self.work, s["append_forever"])

            def writer():
                block = b"".join(job_line(200000 + i) for i in range(300))
                total = 0
                with open(path, "ab", buffering=0) as f:
                    while not self.stop.is_set() and proc.poll() is None:
                        f.write(block)
                        total += len(block)
                        # At most about 256 MB, then a trickle: a hang must not fill the disk.
                        time.sleep(0.0005 if total < (256 << 20) else 0.01)
            self.thread = threading.Thread(target=writer)
        elif "signal" in s:
            sig = getattr(signal, "SIG" + s["signal"])

            when = s.get("when")

            def interrupt():
                deadline = time.time() + self.timeout
                while proc.poll() is None and time.time() < deadline:
                    if when is not None:
                        if any(os.path.isfile(f) and os.path.getsize(f) > 0
                               for f in glob.glob(os.path.join(self.work, when))):
                            os.kill(proc.pid, sig)
                            return
                    else:
                        for dirpath, _, files in os.walk(self.work):
                            if any(".tmp." in f for f in files):
                                os.kill(proc.pid, sig)
                                return
                    time.sleep(0.0005)
                self.caught = False
            self.thread = threading.Thread(target=interrupt)
        if self.thread:
            self.thread.start()

    def finish(self):
        self.stop.set()
        if self.thread:
            self.thread.join()


# ---------------------------------------------------------- text outputs --

# Control characters (Unicode category Cc) but newline and tab.
CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TABLE_ROW_RE = re.compile(r"^\|.*\|$")
DELIMITER_ROW_RE = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


def check_text(name, data):
    """`data` (bytes) is valid UTF-8 with no control character but newline
    and tab; returns it decoded."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure("%s is not valid UTF-8 (%s): %r" % (name, e, data[max(0, e.start - 40):e.start + 40]))
    m = CONTROL_RE.search(text)
    check(m is None, "%s holds the control character %r: %r" % (name, m and m.group(), text[max(0, (m.start() if m else 0) - 60):(m.start() if m else 0) + 20]))
    return text


def check_markdown(name, text, work, written):
    """`text` renders with cmark-gfm into one table row per source row, with
    no image and no link but relative ones to files the run wrote."""
    exe = shutil.which("cmark-gfm")
    check(exe is not None, "cmark-gfm is not installed (scripts/setup.sh installs it)")
    p = subprocess.run([exe, "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter"],
                       input=text.encode("utf-8"), capture_output=True, timeout=60)
    check(p.returncode == 0, "%s: cmark-gfm failed: %s" % (name, p.stderr.decode("utf-8", "replace")))
    html = p.stdout.decode("utf-8")
    rows = sum(1 for line in text.splitlines() if TABLE_ROW_RE.match(line) and not DELIMITER_ROW_RE.match(line))
    rendered = html.count("<tr>")
    check(rendered == rows, "%s: %d table rows in the source but %d rendered:\n%s" % (name, rows, rendered, text))
    check("<img" not in html, "%s: renders an image:\n%s" % (name, html))
    written = {os.path.normpath(w) for w in written}
    for href in re.findall(r'<a href="([^"]*)"', html):
        relative = ":" not in href.split("/")[0] and not href.startswith("//")
        check(relative, "%s: renders a link to %s:\n%s" % (name, href, html))
        check(os.path.normpath(href) in written, "%s: renders a link to %s, no file the run wrote" % (name, href))


def report_format(args):
    """What the report on stdout is (stats, diff): "markdown", "json" or
    None when -o names files only."""
    if not args or args[0] not in ("stats", "diff"):
        return None
    outs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output")]
    if outs and "-" not in outs:
        return None
    return "markdown" if "--markdown" in args else "json" if "--json" in args else None


def check_text_outputs(work, args, err, out, new_files):
    check_text("stderr", err)
    if out and not out.startswith(b"\x1f\x8b") and b"\0" not in out:
        text = check_text("stdout", out)
        kind = report_format(args)
        if kind == "json":
            try:
                json.loads(text)
            except ValueError as e:
                raise Failure("stdout does not parse as JSON: %s" % e)
        elif kind == "markdown":
            check_markdown("stdout", text, work, new_files)
    for rel in new_files:
        path = os.path.join(work, rel)
        if not os.path.isfile(path) or not rel.endswith((".md", ".txt", ".json")):
            continue
        with open(path, "rb") as f:
            text = check_text(rel, f.read())
        if rel.endswith(".json"):
            try:
                json.loads(text)
            except ValueError as e:
                raise Failure("output %s does not parse: %s" % (rel, e))
        elif rel.endswith(".md"):
            folder = os.path.dirname(rel)
            check_markdown(rel, text, work, [os.path.relpath(w, folder) for w in new_files])


_SANITIZED = {}


def sanitizer_build(binary):
    """Whether `binary` is built with AddressSanitizer or ThreadSanitizer."""
    if binary not in _SANITIZED:
        with open(binary, "rb") as f:
            data = f.read()
        _SANITIZED[binary] = b"__asan_init" in data or b"__tsan_init" in data
    return _SANITIZED[binary]


# ------------------------------------------------------------------- run --

def run_binary(binary, args, work, spec, during, timeout):
    limits = spec.get("limits", {})
    stdout_mode = spec.get("stdout", "capture")
    read_end = None
    stdout = subprocess.PIPE
    if stdout_mode == "broken_pipe":
        read_end, stdout = os.pipe()
        os.close(read_end)  # nobody will read: every write gets EPIPE
    elif stdout_mode == "full":
        stdout = os.open("/dev/full", os.O_WRONLY)

    def preexec():
        if "fsize" in limits:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits["fsize"], limits["fsize"]))
        if "as" in limits:
            resource.setrlimit(resource.RLIMIT_AS, (limits["as"], limits["as"]))
        if "nofile" in limits:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limits["nofile"], limits["nofile"]))
        if stdout_mode == "closed":
            os.close(1)
        # The default dispositions, whatever this runner inherited.
        for s in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(s, signal.SIG_DFL)

    proc = subprocess.Popen([binary] + args, cwd=work, stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=subprocess.PIPE, preexec_fn=preexec)
    if read_end is not None or stdout_mode == "full":
        os.close(stdout)
    during.start(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        during.finish()
        raise Failure("no exit within %d s: a hang" % timeout)
    during.finish()
    return proc.returncode, err.decode("utf-8", "replace"), err, out or b""


def run_case(binary, name, timeout, attempt=0):
    case_dir = os.path.join(BAD, name)
    with open(os.path.join(case_dir, "case.json")) as f:
        spec = json.load(f)
    work = tempfile.mkdtemp(prefix="ppt-hostile-")
    dev_stdout = os.readlink("/dev/stdout") if os.path.islink("/dev/stdout") else None
    try:
        for entry in os.listdir(case_dir):
            if entry == "case.json":
                continue
            src = os.path.join(case_dir, entry)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(work, entry), symlinks=True)
            else:
                shutil.copy2(src, os.path.join(work, entry))
        do_setup(work, spec.get("setup", []))
        args = [os.fsdecode(bytes.fromhex(a["hex"])) if isinstance(a, dict) else a for a in spec["args"]]
        before = snapshot(work)
        inputs = input_files(work, args)
        during = During(spec.get("during"), work, timeout)
        # A sanitizer's runtime needs terabytes of address space and files of
        # its own: those limits are tested on the plain build.
        if ({"as", "nofile"} & set(spec.get("limits", {}))) and sanitizer_build(binary):
            return True
        code, err, err_bytes, out_bytes = run_binary(binary, args, work, spec, during, timeout)
        if not during.caught:
            if attempt < 4:
                return run_case(binary, name, timeout, attempt + 1)
            raise Failure("could not act while the binary was reading (it was too quick %d times)" % (attempt + 1))

        want = spec["exit"]
        if want == "SIGTERM":
            check(code == -signal.SIGTERM, "exit %d, expected death by SIGTERM\n%s" % (code, err))
        else:
            check(code >= 0, "killed by signal %d (exit status %d)\n%s" % (-code, 128 - code, err))
            check(code < 128, "exit status %d\n%s" % (code, err))
            check(code == want, "exit %d, expected %d\n%s" % (code, want, err))
        check(not SANITIZER_RE.search(err), "sanitizer report:\n" + err)
        pieces = spec.get("message", [])
        for piece in [pieces] if isinstance(pieces, str) else pieces:
            check(piece in err, "stderr lacks %r:\n%s" % (piece, err))
        for piece in spec.get("message_lacks", []):
            check(piece not in err, "stderr holds %r:\n%s" % (piece, err))

        # Inputs untouched; nothing left but the expected outputs.
        after = snapshot(work)
        expected_outputs = {os.path.normpath(o) for o in spec.get("outputs", [])}
        expected_dirs = {os.path.normpath(o) for o in spec.get("outputs", []) if o.endswith("/")}
        removed = {os.path.normpath(o) for o in spec.get("removed", [])}
        for rel in removed:
            check(rel not in after, "%s was not removed\n%s" % (rel, err))
        for rel, what in before.items():
            if rel in during.changed or any(rel == r or rel.startswith(r + os.sep) for r in removed):
                continue
            check(rel in after, "input %s was removed" % rel)
            check(after[rel] == what, "input %s was changed: %s -> %s" % (rel, what, after[rel]))
        # The folders that hold expected outputs are expected too.
        expected_folders = {os.path.dirname(o) for o in expected_outputs}
        for o in list(expected_folders):
            while o:
                o = os.path.dirname(o)
                expected_folders.add(o)
        for rel in sorted(set(after) - set(before)):
            check(".tmp." not in rel, "temporary file left behind: " + rel)
            if after[rel][0] == "dir" and rel in expected_folders:
                continue
            check(rel in expected_outputs, "unexpected file left behind: %s\n%s" % (rel, err))
        for rel in expected_outputs:
            kind = "dir" if rel in expected_dirs else "file"
            check(rel in after and after[rel][0] == kind, "expected output %s not written\n%s" % (rel, err))
            for text in spec.get("output_lacks", {}).get(rel, []):
                with open(os.path.join(work, rel), "rb") as f:
                    check(text.encode() not in f.read(), "output %s holds %r" % (rel, text))
            path = os.path.join(work, rel)
            if rel.endswith(".json"):
                with open(path, "rb") as f:
                    try:
                        json.loads(f.read().decode("utf-8"))
                    except (ValueError, UnicodeDecodeError) as e:
                        raise Failure("output %s does not parse: %s" % (rel, e))

        # The escaping rules, on every text output.
        check_text_outputs(work, args, err_bytes, out_bytes, sorted(set(after) - set(before)))

        # Nothing lost.
        expected_seen = None
        if spec.get("count", True) and inputs is not None:
            expected_seen = count_marker_lines(inputs, during.prefixes)
        # stats and diff print the summary only beside input problems (whatif
        # never: its table is the output); batch prints one line per run, not
        # convert's summary.
        check_summary(err, expected_seen,
                      required=code == 0 and want != "SIGTERM" and args[0] not in ("stats", "diff", "batch", "whatif"),
                      sides=2 if args[0] == "diff" else 1)
        return True
    finally:
        shutil.rmtree(work, ignore_errors=True)
        now = os.readlink("/dev/stdout") if os.path.islink("/dev/stdout") else None
        if dev_stdout is not None and now != dev_stdout and os.geteuid() == 0:
            # A binary that writes "-o -" through the path /dev/stdout, with
            # descriptor 1 closed, replaces that link with a file: put it back.
            if os.path.lexists("/dev/stdout"):
                os.remove("/dev/stdout")
            os.symlink(dev_stdout, "/dev/stdout")
            raise Failure("/dev/stdout was replaced by the run (restored)")


# Log sets checked by --accounting besides the golden cases: (name, folder
# the arguments are relative to, arguments).
EXTRA_ACCOUNTING = {
    "example": (EXAMPLE, ["--log_dir", "logs", "-o", "{out}/trace.json"]),
}


def run_accounting(binary, name, timeout):
    """A golden case (or the bundled example): its summary accounts for every
    profiler line."""
    if name in EXTRA_ACCOUNTING:
        case_dir, args = EXTRA_ACCOUNTING[name]
    else:
        case_dir = os.path.join(CASES, name)
        with open(os.path.join(case_dir, "args")) as f:
            args = [a for a in f.read().splitlines() if a]
    out = tempfile.mkdtemp(prefix="ppt-accounting-")
    try:
        args = [a.replace("{out}", out) for a in args]
        stdin_path = os.path.join(case_dir, "stdin")
        stdin_path = stdin_path if os.path.exists(stdin_path) else None
        with open(stdin_path or os.devnull, "rb") as stdin:
            p = run(binary, args, cwd=case_dir, stdin=stdin, text=False, timeout=timeout)
        err = p.stderr.decode("utf-8", "replace")
        check(0 <= p.returncode < 128, "exit status %d\n%s" % (p.returncode, err))
        inputs = input_files(case_dir, args, stdin_path)
        expected = count_marker_lines(inputs, {}) if inputs is not None else None
        # stats, diff, report and whatif print the summary only beside input
        # problems (the conversion and batch always).
        required = p.returncode == 0 and args[0] not in ("stats", "diff", "report", "whatif")
        seen = check_summary(err, expected, required=required)
        left = [f for f in os.listdir(out) if ".tmp." in f]
        check(not left, "temporary files left: %s" % left)
        return seen
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--accounting", action="store_true", help="check the golden cases' summaries instead")
    ap.add_argument("--timeout", type=int, default=60, help="seconds a case may take")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    binary = a.binary
    base = CASES if a.accounting else BAD
    marker = "args" if a.accounting else "case.json"
    names = a.cases or sorted(d for d in os.listdir(base) if os.path.isfile(os.path.join(base, d, marker)))
    if a.accounting and not a.cases:
        names += sorted(EXTRA_ACCOUNTING)
    failed = 0
    for name in names:
        t0 = time.time()
        try:
            if a.accounting:
                seen = run_accounting(binary, name, a.timeout)
                detail = "" if seen is None else " (%d profiler lines accounted for)" % seen
            else:
                run_case(binary, name, a.timeout)
                detail = ""
            print("ok   %-40s %5.2f s%s" % (name, time.time() - t0, detail))
        except (Failure, subprocess.SubprocessError, OSError) as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
        sys.stdout.flush()
    print("%d passed, %d failed" % (len(names) - failed, failed))
    if not names:
        print("no cases found under %s" % base)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
