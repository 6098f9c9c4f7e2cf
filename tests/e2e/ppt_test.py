"""What the tests that drive the pp-timeline binary share.

The scripts beside this one (and tests/browser, tests/consumers) import it:

  ROOT, GEN, CASES, BAD, PROTO_DIR    where things are in the source tree
  arg_parser(doc)                     an ArgumentParser with --binary (made absolute)
  run(binary, args, ...)              the binary with a timeout; a CompletedProcess
                                      (returncode, stdout, stderr), text by default
  gen_logs(out, args, truth=...)      logs (and the ground truth) from scripts/gen_logs.py
  temp_dir(prefix)                    a scratch folder, removed afterwards
  read_json(path)                     a trace or report, plain or gzip
  find_protoc(), decode_pftrace()     a .pftrace through protoc and
                                      tests/proto/perfetto_trace_subset.proto
  inflate_pftrace(data)               a .pftrace's compressed packets inflated in
                                      place, as trace_processor reads them
  parse_text_proto(), pftrace_slices()  protoc's text output as nested dicts; the
                                      slices of each track, as a viewer pairs them
  pftrace_origin()                    the epoch ns of a .pftrace's time zero
  json_slices(), nesting_problems()   the slices of each (pid, tid) of a JSON trace;
                                      where slices on one track partially overlap
  snapshot(root)                      every entry under a folder, files hashed
  summary_counts(stderr)              (seen, written, rejected) of the summary line
  check(), Failure, Checks            a failed check: raise, or record and go on
"""

import argparse
import bisect
import codecs
import contextlib
import gzip
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zlib
from decimal import Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, "scripts", "gen_logs.py")
CASES = os.path.join(ROOT, "testdata", "cases")
BAD = os.path.join(ROOT, "testdata", "bad")
EXAMPLE = os.path.join(ROOT, "testdata", "example")
PROTO_DIR = os.path.join(ROOT, "tests", "proto")
PROTO = os.path.join(PROTO_DIR, "perfetto_trace_subset.proto")

SUMMARY_RE = re.compile(r"(\d[\d,]*) profiler lines?: (\d[\d,]*) jobs? written, (\d[\d,]*) rejected")
# A job line as Paddle prints it (standalone_executor.cc), for hand-written logs.
JOB_LINE = ("I1020 09:15:07.265326 4242 standalone_executor.cc:217] Profiler Info: Job (%d), type = %s, "
            "micro_batch_id = %d, job_start_time = %s, job_end_time = %s\n")


# ---------------------------------------------------------------- checks --

class Failure(Exception):
    """A check that failed; the message says what and with which values."""


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Checks:
    """Failed checks recorded one by one, for scripts that go on after one:
    `c.check(cond, what)` prints `FAIL what` and remembers it."""

    def __init__(self):
        self.failures = []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
            print("FAIL " + what, flush=True)
        return bool(cond)

    def exit_code(self, name):
        print("%s: %s (%d failed checks)" % (name, "ok" if not self.failures else "FAILED", len(self.failures)))
        return 1 if self.failures else 0


# ----------------------------------------------------------- the binary --

def arg_parser(doc=None):
    """An ArgumentParser with --binary; parse_args() makes the path absolute."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, type=os.path.abspath, help="the pp-timeline binary")
    return ap


def run(binary, args, cwd=None, stdin=None, input=None, timeout=300, text=True, env=None):
    """The binary with `args`, its output captured; raises Failure when it
    runs past `timeout` seconds (a hang). stdin: a file object, or DEVNULL
    when neither it nor `input` is given."""
    if stdin is None and input is None:
        stdin = subprocess.DEVNULL
    try:
        return subprocess.run([binary] + list(args), cwd=cwd, stdin=stdin, input=input, capture_output=True,
                              text=text, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise Failure("no exit within %d s: a hang: %s" % (timeout, " ".join([binary] + list(args))))


# A small 1F1B run (4 stages, 4 micro-batches, 2 steps): enough for checks of
# what the command line says and writes.
SMALL_RUN = ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "2", "--seed", "4"]


def run_status(binary, *args, cwd=None):
    """The binary's exit status, standard output and standard error."""
    p = run(binary, args, cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


def summary_counts(stderr):
    """(seen, written, rejected) of the summary line."""
    m = SUMMARY_RE.search(stderr)
    check(m, "no summary line in stderr:\n" + stderr)
    return tuple(int(g.replace(",", "")) for g in m.groups())


# ----------------------------------------------------------------- input --

def gen_logs(out, args, truth=False, seed=None, jobs=1):
    """scripts/gen_logs.py --out OUT ARGS (`jobs` worker processes; None:
    the generator's default, one per core); with truth, the ground truth
    (written to OUT.truth.json, or to `truth` when it is a path) is returned."""
    cmd = [sys.executable, GEN, "--out", out, "--quiet"]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    truth_path = None
    if truth:
        truth_path = truth if isinstance(truth, str) else out.rstrip("/") + ".truth.json"
        cmd += ["--truth", truth_path]
    subprocess.run(cmd + list(args), check=True)
    if truth_path:
        with open(truth_path) as f:
            return json.load(f)
    return None


def ms(ns):
    """Integer nanoseconds as Paddle prints a time: milliseconds, six decimals."""
    return "%d.%06d" % (ns // 1000000, ns % 1000000)


@contextlib.contextmanager
def temp_dir(prefix="ppt-test-", keep=None):
    """A fresh folder, removed afterwards; `keep`: use (and keep) this one."""
    if keep:
        os.makedirs(keep, exist_ok=True)
        yield keep
        return
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def snapshot(root):
    """Every entry under `root` by relative path: ("file", size, sha1,
    mtime_ns), ("link", target), ("dir",), ("fifo",) or ("other", mode)."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha1()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                snap[rel] = ("file", st.st_size, h.hexdigest(), st.st_mtime_ns)
            elif stat.S_ISLNK(st.st_mode):
                snap[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                snap[rel] = ("dir",)
            elif stat.S_ISFIFO(st.st_mode):
                snap[rel] = ("fifo",)
            else:
                snap[rel] = ("other", st.st_mode)
    return snap


# ---------------------------------------------------------------- output --

def read_bytes(path):
    """A file's bytes, decompressed when it is gzip (told by its first bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def read_json(path, exact=False):
    """A JSON file, plain or gzip; exact: numbers with a fraction as Decimal."""
    return json.loads(read_bytes(path).decode("utf-8"), parse_float=Decimal if exact else None)


def us_to_ns(x):
    """A JSON time in microseconds as integer nanoseconds, rounded as
    Perfetto rounds x * 1000."""
    return int((Decimal(str(x)) * 1000).to_integral_value())


def json_slices(trace):
    """The slices of a JSON trace (dict, exact=True for exact times) by
    (pid, tid): lists of (start_ns, end_ns, name, event), in file order.
    Complete (X) events, and B/E pairs matched per track as viewers match
    them (an E closes the latest open B)."""
    tracks, open_ = {}, {}
    for e in trace["traceEvents"]:
        ph = e.get("ph")
        key = (e.get("pid"), e.get("tid"))
        if ph == "X":
            start = us_to_ns(e["ts"])
            tracks.setdefault(key, []).append((start, start + us_to_ns(e.get("dur", 0)), e.get("name"), e))
        elif ph == "B":
            open_.setdefault(key, []).append(e)
        elif ph == "E":
            check(open_.get(key), "an E event without its B on %s: %s" % (key, e))
            b = open_[key].pop()
            tracks.setdefault(key, []).append((us_to_ns(b["ts"]), us_to_ns(e["ts"]), b.get("name"), b))
    left = {k: v for k, v in open_.items() if v}
    check(not left, "B events never ended: %s" % left)
    return tracks


def nesting_problems(slices, limit=3):
    """Where slices on one track are neither nested nor disjoint: up to
    `limit` descriptions, [] when they nest. `slices`: (start, end, name, ...)."""
    problems = []
    order = sorted(slices, key=lambda s: (s[0], -s[1]))
    stack = []
    for s in order:
        check(s[1] >= s[0], "a slice ends before it starts: %s" % (s[:3],))
        while stack and stack[-1][1] <= s[0]:
            stack.pop()
        if stack and s[1] > stack[-1][1]:
            top = stack[-1]
            problems.append("%s [%d, %d] overlaps %s [%d, %d] by %d ns" % (
                top[2], top[0], top[1], s[2], s[0], s[1], top[1] - s[0]))
            if len(problems) >= limit:
                break
        stack.append(s)
    return problems


def find_protoc(explicit=None):
    """protoc: the given path, else the one on PATH. Without one the test
    cannot check a .pftrace: it stops with exit 1 (scripts/setup.sh installs
    protobuf-compiler), never a pass that checked less."""
    found = explicit or shutil.which("protoc")
    if not found:
        sys.exit("protoc not found (Debian: protobuf-compiler, which scripts/setup.sh installs)")
    return found


def _varint(data, pos):
    value = shift = 0
    while True:
        check(pos < len(data), "a varint runs past the end")
        b = data[pos]
        value |= (b & 0x7f) << shift
        pos += 1
        if b < 0x80:
            return value, pos
        shift += 7


def _fields(data):
    """(field, wire type, start, end) of each field of a message; `start`
    and `end` bound the value (a length-delimited one without its length)."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, end = _varint(data, pos)
        elif wire == 1:
            end = pos + 8
        elif wire == 5:
            end = pos + 4
        else:
            check(wire == 2, "wire type %d" % wire)
            size, pos = _varint(data, pos)
            end = pos + size
        check(end <= len(data), "a field runs past the end")
        yield field, wire, pos, end
        pos = end


COMPRESSED_PACKETS = 50  # TracePacket.compressed_packets


def inflate_pftrace(data, stats=None):
    """The trace with each compressed_packets packet replaced by the packets
    it holds, as trace_processor reads them (google/perfetto,
    src/trace_processor/importers/proto/proto_trace_tokenizer.h): a zlib
    stream (header and trailer, one frame) holding Trace.packet fields only;
    a compressed packet under 512 KB (trace_packet.proto) with no other
    field, and no compressed packet inside one (trace_processor's packet
    parser refuses them). `stats` (a dict) gets the counts of compressed
    packets and of the packets inside them."""
    out = bytearray()
    packed = inner = 0
    for field, wire, start, end in _fields(data):
        check(field == 1 and wire == 2, "a Trace field other than packet: %d" % field)
        body = data[start:end]
        inside = [f for f in _fields(body) if f[0] == COMPRESSED_PACKETS]
        if not inside:
            out += _packet_bytes(body)
            continue
        check(len(list(_fields(body))) == 1, "a compressed packet with other fields")
        check(end - start < 512 * 1024, "a compressed packet of %d bytes" % (end - start))
        _, _, zs, ze = inside[0]
        check(body[zs] & 0x0f == 8 and (body[zs] << 8 | body[zs + 1]) % 31 == 0, "not a zlib stream")
        z = zlib.decompressobj()
        plain = z.decompress(body[zs:ze])
        check(z.eof and not z.unused_data, "a compressed packet is not one whole zlib stream")
        for f, w, s, e in _fields(plain):
            check(f == 1 and w == 2, "a compressed packet holds field %d" % f)
            check(not any(g[0] == COMPRESSED_PACKETS for g in _fields(plain[s:e])), "nested compressed packets")
            inner += 1
        out += plain
        packed += 1
    if stats is not None:
        stats.update(compressed=packed, inner=inner)
    return bytes(out)


def _packet_bytes(body):
    key = bytearray([0x0a])
    n = len(body)
    while n >= 0x80:
        key.append((n & 0x7f) | 0x80)
        n >>= 7
    key.append(n)
    return bytes(key) + body


def decode_pftrace(path, protoc):
    """protoc's text form of a .pftrace (Failure when protoc rejects it),
    compressed packets inflated first (inflate_pftrace)."""
    with open(path, "rb") as f:
        data = inflate_pftrace(f.read())
    p = subprocess.run([protoc, "--decode=perfetto.protos.Trace", "-I", PROTO_DIR, PROTO], input=data,
                       capture_output=True, timeout=300)
    check(p.returncode == 0, "%s: protoc failed: %s" % (path, p.stderr.decode("utf-8", "replace")))
    return p.stdout.decode("utf-8")


_TEXT_TOKEN = re.compile(r'\s*(?:(\})|([A-Za-z_][A-Za-z0-9_]*)\s*(?:(\{)|:\s*("(?:[^"\\]|\\.)*"|[^\s}]+)))')


def parse_text_proto(text):
    """protoc's text format as nested dicts: each field a list of values
    (strings, still quoted for string fields, or dicts for messages)."""
    root = {}
    stack = [root]
    pos = 0
    while True:
        m = _TEXT_TOKEN.match(text, pos)
        if not m:
            check(not text[pos:].strip(), "cannot read protoc output at %r" % text[pos:pos + 80])
            break
        pos = m.end()
        close, name, opens, value = m.groups()
        if close:
            stack.pop()
            check(stack, "unbalanced protoc output")
        elif opens:
            child = {}
            stack[-1].setdefault(name, []).append(child)
            stack.append(child)
        else:
            stack[-1].setdefault(name, []).append(value)
    check(len(stack) == 1, "unbalanced protoc output")
    return root


def unquote(value):
    """A string field of protoc's text output as text (octal and C escapes)."""
    check(len(value) >= 2 and value[0] == value[-1] == '"', "not a quoted string: %r" % value)
    return codecs.escape_decode(value[1:-1].encode("utf-8"))[0].decode("utf-8", "replace")


def _one(msg, field, default=None):
    v = msg.get(field)
    return v[0] if v else default


class _SeqClock:
    """A sequence-scoped clock (ids 64-127) as trace_processor keeps it
    (src/trace_processor/util/clock_synchronizer.{h,cc}: ClockDomain::ToNs,
    AddSnapshot, Convert): a delta-encoded clock adds each timestamp to the
    last; a value maps to BOOTTIME (the trace clock) through the latest
    snapshot at or before it."""

    def __init__(self):
        self.incremental, self.unit, self.last, self.snapshots = False, 1, 0, []

    def snapshot(self, value, unit, incremental, boottime):
        if self.snapshots:
            check((self.unit, self.incremental) == (unit, incremental), "a clock's unit or kind changed")
            check(boottime >= self.snapshots[-1][1], "the trace clock goes back between snapshots")
        self.unit, self.incremental, self.last = unit, incremental, value * unit
        self.snapshots.append((self.last, boottime))

    def to_trace(self, value):
        check(self.snapshots, "a timestamp on a clock with no snapshot")
        ns = value * self.unit
        if self.incremental:
            self.last += ns
            ns = self.last
        i = bisect.bisect_right([s[0] for s in self.snapshots], ns)
        base, boot = self.snapshots[max(i - 1, 0)]
        return boot + ns - base


def pftrace_origin(text):
    """The epoch nanoseconds of a decoded .pftrace's time zero: REALTIME minus
    BOOTTIME (the trace clock) in the trace's own clock snapshot."""
    for p in parse_text_proto(text).get("packet", []):
        cs = _one(p, "clock_snapshot")
        if cs and _one(cs, "primary_trace_clock") is not None:
            at = {_one(c, "clock_id"): int(_one(c, "timestamp")) for c in cs.get("clocks", [])}
            return at["1"] - at["6"]
    raise Failure("no trace clock snapshot")


def pftrace_slices(text, arrows=None):
    """The slices of a decoded .pftrace by track uuid, replayed as a viewer
    does: per-sequence default track, clock and interned names, delta-encoded
    timestamps resolved as trace_processor does, each end closing the latest
    open begin on its track. Lists of (start_ns, end_ns, name) in the order
    they ended; also checks that every track's events go forward in time.
    Returns (slices, tracks: uuid -> descriptor name). With a list `arrows`,
    appends the flow arrows as Perfetto draws them (trace_processor's
    FlowTracker): the begins that carry one flow id, linked in the order of
    their timestamps, each to the next, as ((track, ts), (track, ts))."""
    trace = parse_text_proto(text)
    check(not any(re.match(r"\d+$", k) for p in trace.get("packet", []) for k in p),
          "a field the subset proto does not declare")
    defaults, names, tracks, open_, last, slices = {}, {}, {}, {}, {}, {}
    default_clock, clocks, flows = {}, {}, {}
    for p in trace.get("packet", []):
        seq = _one(p, "trusted_packet_sequence_id")
        if int(_one(p, "sequence_flags", "0")) & 1:
            names[seq] = {}
            default_clock[seq] = 0
        d = _one(p, "trace_packet_defaults")
        if d:
            defaults[seq] = _one(_one(d, "track_event_defaults", {}), "track_uuid")
            default_clock[seq] = int(_one(d, "timestamp_clock_id", "0"))
        cs = _one(p, "clock_snapshot")
        if cs:
            check("track_event" not in p and "track_descriptor" not in p,
                  "a packet with a clock snapshot carries more (trace_processor reads only the snapshot)")
            if _one(cs, "primary_trace_clock") is None:
                boot = [int(_one(c, "timestamp")) for c in cs.get("clocks", []) if _one(c, "clock_id") == "6"]
                check(len(boot) == 1, "a sequence's clock snapshot without BOOTTIME")
                for c in cs.get("clocks", []):
                    cid = int(_one(c, "clock_id"))
                    if cid == 6:
                        continue
                    check(64 <= cid < 128, "clock %d is not sequence-scoped" % cid)
                    clocks.setdefault((seq, cid), _SeqClock()).snapshot(
                        int(_one(c, "timestamp")), int(_one(c, "unit_multiplier_ns", "1")),
                        _one(c, "is_incremental") == "true", boot[0])
            continue
        interned = _one(p, "interned_data")
        if interned:
            for e in interned.get("event_names", []):
                names.setdefault(seq, {})[_one(e, "iid")] = unquote(_one(e, "name"))
        td = _one(p, "track_descriptor")
        if td:
            tracks[_one(td, "uuid")] = unquote(_one(td, "name", '""'))
        te = _one(p, "track_event")
        if not te:
            continue
        track = _one(te, "track_uuid") or defaults.get(seq)
        ts = int(_one(p, "timestamp"))
        cid = int(_one(p, "timestamp_clock_id", "0")) or default_clock.get(seq, 0)
        if 64 <= cid < 128:
            check((seq, cid) in clocks, "sequence %s: a timestamp on clock %d before its snapshot" % (seq, cid))
            ts = clocks[(seq, cid)].to_trace(ts)
        else:
            check(cid in (0, 6), "a timestamp on clock %d" % cid)
        if ts < last.get(track, ts):
            raise Failure("track %s: an event at %d after one at %d" % (track, ts, last[track]))
        last[track] = ts
        kind = int(_one(te, "type", "0"))
        if kind == 1:
            name = _one(te, "name")
            name = unquote(name) if name else names.get(seq, {}).get(_one(te, "name_iid"))
            open_.setdefault(track, []).append((ts, name))
            ids = te.get("flow_ids", [])
            check(len(set(ids)) == len(ids), "track %s at %d: a flow id twice on one event" % (track, ts))
            for f in ids:
                flows.setdefault(f, []).append((ts, track))
            slices.setdefault(track, [])
        elif kind == 2:
            check(open_.get(track), "track %s: an end at %d with no open slice" % (track, ts))
            start, name = open_[track].pop()
            slices[track].append((start, ts, name))
    left = {k: v for k, v in open_.items() if v}
    check(not left, "slices never ended: %s" % left)
    if arrows is not None:
        for ends in flows.values():
            ends.sort(key=lambda e: e[0])
            arrows.extend(((a[1], a[0]), (b[1], b[0])) for a, b in zip(ends, ends[1:]))
    return slices, tracks
