// Loads traces written by pp-timeline with the Chrome DevTools Performance
// panel's trace engine (npm @paulirish/trace_engine) and checks what it made
// of them against the trace's own complete (X) events:
//  - parsing throws nothing and logs no console.error / console.warn;
//  - every X event (a job or a step) is exactly one entry of its thread, with
//    the same name, ts and dur (microseconds, compared exactly);
//  - no entry that the trace does not hold (no unfinished slice);
//  - slices that touch also touch in doubles, as viewers compute ends;
//  - every counter (C) event has a name, a finite ts and only finite numbers
//    in its args (memory counters: one arg, "GiB"), and each counter's
//    events are in time order; the engine reads them without a complaint;
//  - every flow (s/f pair) binds: each end lies in exactly one slice of its
//    thread, closed intervals in doubles, as catapult and Perfetto bind it (an
//    end at a boundary of two touching slices would bind the wrong one), and
//    its f is not before its s. The DevTools engine binds a flow event only to
//    a slice with the same ts and cat, which a flow inside a slice never has:
//    what it bound is printed, not checked.
// Usage: node devtools_check.mjs TRACE.json...   Exit 0 when all pass.
import fs from 'node:fs';

const problems = [];
const logged = [];
for (const level of ['error', 'warn']) {
  const original = console[level];
  console[level] = (...args) => {
    logged.push(`console.${level}: ${args.map(String).join(' ')}`);
    original.apply(console, args);
  };
}

// The engine reads DOMRect in a few insights; node has none.
if (typeof globalThis.DOMRect === 'undefined') {
  globalThis.DOMRect = class DOMRect {
    constructor(x = 0, y = 0, width = 0, height = 0) {
      Object.assign(this, {x, y, width, height, top: y, left: x, right: x + width, bottom: y + height});
    }
  };
}

const Trace = await import('@paulirish/trace_engine/models/trace/trace.js');

function key(pid, tid) {
  return `${pid}/${tid}`;
}

async function check(path) {
  const text = fs.readFileSync(path, 'utf8');
  const trace = JSON.parse(text);
  const events = trace.traceEvents ?? trace;
  const expected = new Map();  // pid/tid -> X events
  let slices = 0;
  const unpaired = events.filter(e => e.ph === 'B' || e.ph === 'E').length;
  if (unpaired > 0) problems.push(`${path}: ${unpaired} B/E events: every slice must be one X event`);
  for (const e of events) {
    if (e.ph !== 'X') continue;
    const k = key(e.pid, e.tid);
    if (!expected.has(k)) expected.set(k, []);
    expected.get(k).push(e);
    ++slices;
  }
  const before = logged.length;
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  try {
    // The engine mutates events; give it its own copy.
    const copy = JSON.parse(text);
    await model.parse(copy.traceEvents ?? copy);
  } catch (err) {
    problems.push(`${path}: the trace engine threw: ${err && err.stack || err}`);
    return;
  }
  for (const line of logged.slice(before)) problems.push(`${path}: ${line}`);
  const parsed = model.parsedTrace();
  if (!parsed) {
    problems.push(`${path}: the trace engine returned no data`);
    return;
  }
  const warnings = parsed.data.Warnings?.perWarning;
  if (warnings) {
    for (const [kind, list] of warnings) problems.push(`${path}: the trace engine warns ${kind} (${list.length} events)`);
  }
  const seen = new Map();
  for (const [pid, process] of parsed.data.Renderer.processes) {
    for (const [tid, thread] of process.threads) {
      const k = key(pid, tid);
      seen.set(k, thread.entries.filter(e => e.ph === 'X' || e.ph === 'B'));
    }
  }
  let matched = 0;
  for (const [k, want] of expected) {
    const got = seen.get(k) ?? [];
    const sig = e => `${e.name}@${e.ts}+${e.dur}`;
    const have = new Map();
    for (const e of got) have.set(sig(e), (have.get(sig(e)) ?? 0) + 1);
    for (const e of want) {
      const s = sig(e);
      const n = have.get(s) ?? 0;
      if (n === 0) {
        problems.push(`${path}: thread ${k}: ${e.name} at ts ${e.ts} dur ${e.dur} is not an entry with that span`);
      } else {
        have.set(s, n - 1);
        ++matched;
      }
    }
    for (const [s, n] of have) {
      if (n > 0) problems.push(`${path}: thread ${k}: entry ${s} (x${n}) is not in the trace`);
    }
    if (got.length !== want.length) {
      problems.push(`${path}: thread ${k}: ${got.length} entries for ${want.length} slices`);
    }
  }
  for (const k of seen.keys()) {
    if (!expected.has(k) && seen.get(k).length > 0) problems.push(`${path}: thread ${k} has entries but no slices in the trace`);
  }
  checkTouching(path, expected);
  const flows = checkFlows(path, events, expected);
  const counters = checkCounters(path, events);
  console.log(`${path}: ${matched} of ${slices} slices found exactly; ${flows} flows bind inside their slices` +
              ` (the DevTools engine bound ${parsed.data.Flows.flows.length})` +
              (counters > 0 ? `; ${counters} counter events` : ''));
}

// Slices of one thread that touch in the trace's ns must touch as a viewer
// computes them in doubles: ts + dur, and speedscope's ts - first + dur after
// rebasing the thread on its first ts (the Perfetto-read ns decide touching).
function checkTouching(path, slicesByThread) {
  const ns = x => Math.round(x * 1000);
  for (const [k, list] of slicesByThread) {
    const xs = list.slice().sort((a, b) => a.ts - b.ts);
    const first = xs.length ? xs[0].ts : 0;
    for (let i = 1; i < xs.length; ++i) {
      const a = xs[i - 1], b = xs[i];
      if (ns(a.ts) + ns(a.dur) !== ns(b.ts)) continue;
      if (a.ts + a.dur !== b.ts || (a.ts - first) + a.dur !== b.ts - first) {
        problems.push(`${path}: thread ${k}: ${a.name} (ts ${a.ts}, dur ${a.dur}) and ${b.name} (ts ${b.ts}) touch ` +
                      'in ns but not in doubles');
      }
    }
  }
}

function checkCounters(path, events) {
  const last = new Map();  // pid/name -> ts
  let n = 0;
  for (const e of events) {
    if (e.ph !== 'C') continue;
    ++n;
    const values = e.args ? Object.values(e.args) : [];
    if (typeof e.name !== 'string' || !Number.isFinite(e.ts) || values.length === 0 ||
        values.some(v => typeof v !== 'number' || !Number.isFinite(v))) {
      problems.push(`${path}: counter event ${JSON.stringify(e)} lacks a name, a finite ts or numeric args`);
      continue;
    }
    const k = `${e.pid}/${e.name}`;
    if (last.has(k) && e.ts < last.get(k)) problems.push(`${path}: counter ${k} goes back in time at ${e.ts}`);
    last.set(k, e.ts);
  }
  return n;
}

function checkFlows(path, events, slicesByThread) {
  const byId = new Map();
  for (const e of events) {
    if (e.ph !== 's' && e.ph !== 'f') continue;
    if (!byId.has(e.id)) byId.set(e.id, {});
    const pair = byId.get(e.id);
    if (pair[e.ph]) problems.push(`${path}: flow ${e.id} has two ${e.ph} events`);
    pair[e.ph] = e;
  }
  let ok = 0;
  for (const [id, pair] of byId) {
    if (!pair.s || !pair.f) {
      problems.push(`${path}: flow ${id} lacks its ${pair.s ? 'f' : 's'} event`);
      continue;
    }
    if (pair.s.name !== pair.f.name || pair.s.cat !== pair.f.cat) problems.push(`${path}: flow ${id}: s and f differ in name or cat`);
    if (pair.f.ts < pair.s.ts) problems.push(`${path}: flow ${id} (${pair.s.name}) goes back in time: ${pair.s.ts} -> ${pair.f.ts}`);
    let bound = true;
    for (const end of [pair.s, pair.f]) {
      const on = (slicesByThread.get(key(end.pid, end.tid)) ?? []).filter(x => x.ts <= end.ts && end.ts <= x.ts + x.dur);
      if (on.length !== 1) {
        problems.push(`${path}: flow ${id} ${end.ph} at ${end.ts} on ${key(end.pid, end.tid)} lies in ${on.length} slices`);
        bound = false;
      }
    }
    if (bound) ++ok;
  }
  if (byId.size > 0 && ok === 0) problems.push(`${path}: no flow binds`);
  return ok;
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.log('usage: node devtools_check.mjs TRACE.json...');
  process.exit(2);
}
for (const f of files) await check(f);
if (problems.length > 0) {
  for (const p of problems.slice(0, 50)) console.log(`FAIL ${p}`);
  if (problems.length > 50) console.log(`... and ${problems.length - 50} more`);
  process.exit(1);
}
console.log(`ok: ${files.length} traces`);
