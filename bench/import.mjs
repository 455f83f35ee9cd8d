// Import rows: `tapedeck import` of a 10,000-entry HAR (a browser session against an LLM API:
// devtools-style headers, JSON answers, every fifth answer streamed) onto a new tape, against
// the baseline of reading the same file and JSON.parse-ing it, measured in the same run.
// Target: the import costs at most twice the parse (ratio = parse time / import time >= 0.5x).
// The same ratio is also given in CPU time (process.cpuUsage, every thread of the process, GC
// helpers included), which a busy shared machine disturbs less than wall time.
// Where it stands: the secret checks of two later rounds (a key cut across a stream's events
// masked across them; the request's own secrets looked for in its answer) had taken the import
// from ~350 to ~450 ms of CPU (an import alone, five imports a process). A git bisect
// over the 538 commits since put the step at the stream masking's commit (~360 -> ~415 ms);
// a CPU profile against the older build's put the rest in the echo search. Kept: a request's
// header secrets judged once per frozen header map an importer's entries share, no copy of
// each request to say its body is plain, no map for a request without secrets, the stream
// lexer's member names read a character at a time and its places hashed to 32-bit keys (a
// 52-bit hash made a number object per string). This script alternating with the start build,
// two pairs: 0.43x / 0.45x -> 0.53x / 0.52x in wall time, 0.50x / 0.53x -> 0.59x / 0.60x in CPU
// time (import 436-441 -> 381-397 ms). Full runs after: see docs/benchmarks.md (t145-).
// Before them: three full runs of `npm run bench` of the latest round's final build, one
// after another (load 1.5-2.2 at the end of each): 0.57x / 0.61x / 0.61x in wall time and
// 0.65x / 0.69x / 0.67x in CPU time (medians: read + JSON.parse 173-185 ms against the import
// 302-312 ms). The round before's: 0.57x / 0.59x / 0.52x and 0.69x / 0.67x / 0.59x (201-209
// against 344-421 ms); the one before it 0.58x / 0.52x / 0.50x and 0.51x / 0.53x / 0.53x.
// Before those, the round that kept the import's code compiled measured (this script alone,
// four pairs alternating with the round's start build, shared 2-core machine, load 1.5-2):
// 0.70x / 0.65x / 0.69x / 0.65x in CPU time and 0.66x / 0.62x / 0.63x / 0.61x in wall time
// (import 292-304 ms of CPU), against
// 0.59x / 0.58x / 0.60x / 0.59x and 0.57x / 0.55x / 0.57x / 0.62x (339-365 ms); three more
// pairs (load 2.2-3): 0.69x / 0.67x / 0.79x in CPU time (import 292-327 ms) against 0.60x /
// 0.62x / 0.60x (345-377 ms): met with a margin. What that round found: the import's code was compiled again for every import. Its
// loop was the body of writeImport, which runs once per import, so V8 compiled it by on-stack
// replacement for that call's own closures and dropped the code when they died ("weak
// objects"): all of writeImport compiled twice an import (30-90 ms on the compiler thread,
// counted in the CPU time). The generator of the entries was made per import (each generator
// function's objects have a map of their own), and the deck's key options, a spread of the
// shared options then the endpoint, got a new map per deck, deoptimizing the deck's prepare
// and the raw keying at every import. Kept: the entry's work in a function of its own
// (importEntry), a module-level generator, the endpoint before the spread (tapes byte for byte
// as before). Callgrind (node --predictable, the 10,000-entry HAR, the third and fourth
// imports): ~3,627M -> ~3,479M instructions an import (-4.1%; compiling then runs on the main
// thread); CPU in alternating processes (eight imports each, the fourth to the eighth): median
// ~384 -> ~330 ms. Measured and not kept: the request body's mask and escape check on the
// array itself instead of a Buffer view and Buffer#indexOf (no fewer instructions).
// Where it stood before, three full runs of `npm run bench` of the round's final build (chunked read,
// per-record trims, early flushes; the target lines the median of seven rounds' own ratios):
// speed 0.58x / 0.52x / 0.50x (the last just under), CPU time 0.51x / 0.53x / 0.53x; medians
// read + JSON.parse 215-230 ms against the import 422-458 ms. On the line, a little higher.
// Before those (the HAR read in chunks; 2 cores shared with one other process, load
// 0.9-2.4): the import's CPU 0.87-0.91x the whole-buffer build's with both builds' imports
// alternating in one process (six runs of eight imports each, either build first), 0.86-0.92x
// in alternating processes in a quieter window (six pairs of five imports, each after a read +
// JSON.parse as here: import 418-454 ms against 450-492, baseline 222-240 ms in both: 0.51-0.56x
// against 0.47-0.50x), within the spread in a busier one (473-543 against 489-546 ms). This
// script, alternating with main's build, eight pairs in two windows: 0.52x / 0.47x / 0.49x /
// 0.55x and 0.44x / 0.52x / 0.53x / 0.47x in CPU time (import 403-500 ms of CPU) against
// 0.45x / 0.50x / 0.47x / 0.45x and 0.41x / 0.47x / 0.43x / 0.48x (433-556 ms); wall time
// 0.46-0.54x against 0.43-0.49x: better, over the line in half the runs, not met reliably.
// The rounds before (2 cores shared with other sessions, load ~4; this script and main's
// alternating in processes of their own, three pairs): 0.48x / 0.41x / 0.41x in CPU time
// (import 605 / 571 / 584 ms of CPU against read + JSON.parse 293 / 245 / 241 ms; wall
// 0.48x / 0.41x / 0.41x), main's 0.40x / 0.44x / 0.45x (import 636 / 651 / 644 ms): the target
// is still missed by ~80-100 ms of CPU, ~8-10 us an entry. Kept in that round (instruction
// counts of four imports of the first 1,000 entries, callgrind with node --predictable, 4,646M
// -> 4,258M): entries listing the same request headers share one frozen map, redacted and
// framed once (~-5%); a JSON answer's secret members judged on the parse its JSON check
// makes, no scan of its text for their names (~-2.6%, and names with escapes or doubled
// separators are no longer missed); an answer given as ASCII text checked and scanned as that
// text (~-3.4%); a repeated URL redacted once (~-1%); header names lowercased once per place
// (~-0.7%). Not kept: the request body's ASCII text handed to its parse (no change).
// After merging main, six pairs against main's build (load 3-3.7): 0.46-0.52x in CPU time
// (three of six at or over 0.5x), 0.44-0.51x in wall time; import 510-579 ms of CPU against
// main's 588-677: on the line, not yet met reliably.
// A later round (instruction counts: callgrind, four imports of the first 1,000 entries, whose
// repeated counts spread by ~+-15M of ~655M an import; CPU by alternating processes): kept, a
// request view without tools or holes shares one empty array (rawRequestKey ~0.19 us less,
// 0.93-0.95x in one process). Measured and not kept: bodies written into a 64 KB slab of the
// importer's own instead of Buffer's pool (instructions within the spread, none fewer); the
// loop staged by batches of 32 or 128 entries, their requests keyed before their records are
// built, for locality (CPU medians 0.96 / 1.00 / 0.98x: the spread); the entries' separator
// searched as a line's closing brace or whole (37-38 ms against 13 ms for the brace hop). Four
// quick runs each against main's build: 0.50x / 0.44x / 0.51x / 0.52x in CPU time, main's
// 0.47x / 0.46x / 0.50x / 0.44x: still on the line.
// Per-record trims after that (instructions: callgrind, four imports of the first 1,000
// entries, ~756M -> ~715M an import; each kept where it cleared the runs' spread): the frame
// writer lists an object's names and values with for-in into arrays of its own, and sorts and
// encodes each list of names once (shapes kept by first name; ~-2.7%); redaction, the mask
// count and storedResponse walk names with for-in, not Object.keys (~-1.2%); content-type
// tests keep their last answer, repeats are counted without hashing each 64-hex key, the CRC
// reads a plain view (~-1%); records and entries are whole literals, not a spread of an
// optional member in the middle (~-0.4%). Taken back out after: the for-in in redaction, the
// kept content-type answers of the deck, the answers' JSON check and redaction, and the deck's
// record as whole literals (they are in the browser bundle, which they took to 100.2 KB, over
// its 100 KB budget; without them an import of the first 1,000 entries runs ~554M instructions
// against ~539M with them and ~622M before the trims). Measured and not kept: each response header's last
// clean value kept by name to skip the credential scan (no fewer instructions). Against main's
// build (shared machine, load ~1.7): the import's CPU 0.93x (six alternating pairs of
// processes, five imports each: 451-488 against 488-551 ms); this script, three pairs: 0.55x /
// 0.55x / 0.49x in CPU time (import 428-491 ms) against main's 0.50x / 0.55x / 0.51x (488-517
// ms), wall 0.54x / 0.52x / 0.47x against 0.48x / 0.51x / 0.48x: better, still on the line.
// The round before (load 2.6-3.1, three pairs): 0.42-0.44x in wall time and
// 0.43-0.45x in CPU time (read + JSON.parse 208-214 ms, 239-249 ms of CPU; import 468-499 ms,
// 549-568 ms of CPU): the target is still missed. The import's CPU is 0.86-0.89x main's in the
// same windows (622-643 ms), its wall time 0.86-0.97x. Main's ratios there, 0.44-0.46x and
// 0.46-0.48x, came from a slower baseline (read + JSON.parse 236-239 ms, 295-303 ms of CPU)
// measured in the same process after main's import, whose parsed HAR the collector had
// promoted. A second window after merging main (load ~1.1): the import's CPU 660-684 against
// main's 740-770 ms (0.86-0.92x), the ratios 0.36-0.38x against main's 0.31-0.44x.
// What this build does: a HAR's entries are parsed one at a time from a checked split of the
// file's bytes, so the 42 MB parsed document is not held through the import, and the file is
// read as bytes instead of as a UTF-8 string (~100 ms). A regular file laid out one entry a
// line is read in 256 KB chunks into one reused buffer (src/store/import/har-chunks.ts; the
// text after the entries array checked at the end of the file, before the tape is moved into
// place), so no 42 MB buffer is filled: in the import's CPU profile (two runs of five imports
// each build) reading 23.5-25.0 -> 9.1-11.0 ms an import, GC 26.4-27.9 -> 24.0-25.3 ms,
// isAscii ~4 -> ~1.5 ms, all of the import 501-540 -> 461-493 ms (with the profiler's cost);
// read, split and the entries' parses alone (2 MB chunks) 128-133 -> 100-109 ms; one import's
// peak RSS 126 -> 86 MB. Any other layout, a pipe or
// stdin is read whole and split by har-split.ts as before (a minified HAR element by element,
// ~40 ms for 27.5 MB). Measured for the chunks and not kept: 2 MB chunks (reading the file
// ~5 ms against ~3 ms in 128-512 KB; imports 10-20 ms of CPU more), and other searches for
// the entries' separator over the 42 MB (one process, medians): the brace hop 12 ms, against
// Buffer#indexOf of its first 2 to 8 bytes 23-24 ms (Node's search for a needle of more than
// one byte is slower than its memchr for one), of `\n      {` 51 ms or `,\n      {` 46 ms, a
// newline hop 20 ms, Uint8Array#indexOf for the brace 25 ms, a plain byte loop 47 ms, and
// String#indexOf on 1 MB Latin-1 strings 28 ms (brace hop) or 45 ms (whole separator); and the
// entries' texts as slices of one Latin-1 string per chunk instead of a copy each (import
// 548-573 against 507-542 ms of CPU, five pairs of processes: slower).
// What is left per entry (CPU profile, in the loop): keying the request ~7-8 us (~4.4 us
// alone: the core's index, view and digest, and the calls around them), building the record
// ~9 us (answer redaction ~4: its member-name and credential scans; the answer's JSON check
// ~1.5; header redaction ~1.5; the trace token ~1), writing the frame ~6 us, parsing the
// entry's text ~10.7 us (~8 in a loop of its own), reading the entry ~5 us, parsing and
// redacting the request body ~2 us. Tried and not kept: remembering clean header values
// (hashing a new string costs what the scan does), a byte-level JSON validator for the
// answer's check (0.9 against 1.1 us for JSON.parse), a credential pattern with one shared \b
// or a first-character lookahead (the same or slower), the member-name scan as a lookbehind
// from each `":` (0.75x), the entries' separator found by String#indexOf or Buffer#indexOf of
// the whole separator (~40-55 ms for this file: slower than hopping brace to brace, ~12 ms).
// Run by bench/run.mjs, or alone: node bench/import.mjs [--quick].
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTarget, targetLine } from './targets.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const header = (name, value) => ({ name, value });

/** One HAR entry as Chrome or Playwright saves it: request i and its answer. */
function entry(i) {
  const stream = i % 5 === 0;
  const body = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: `Question number ${i}: what is ${i} squared, and is it even?` },
    ],
    ...(stream ? { stream: true } : {}),
  };
  const text = `${i} squared is ${i * i}, which is ${i % 2 ? 'odd' : 'even'}.`;
  const head = { id: `chatcmpl-${i}`, created: 1767225600, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_1' };
  let answer;
  if (stream) {
    const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    answer = chunk({ role: 'assistant', content: '' }) + text.match(/\S+\s*/g).map((w) => chunk({ content: w })).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n';
  } else {
    answer = JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 31, completion_tokens: 14, total_tokens: 45 } });
  }
  const started = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return {
    startedDateTime: started,
    time: 420.5,
    request: {
      method: 'POST',
      url: 'https://api.openai.com/v1/chat/completions',
      httpVersion: 'HTTP/2',
      cookies: [],
      headers: [
        header(':authority', 'api.openai.com'),
        header(':method', 'POST'),
        header(':path', '/v1/chat/completions'),
        header(':scheme', 'https'),
        header('accept', 'application/json'),
        header('accept-encoding', 'gzip, deflate, br, zstd'),
        header('accept-language', 'en-US,en;q=0.9'),
        header('authorization', 'Bearer sk-proj-benchKey0123456789abcdefghijklmnop'),
        header('content-type', 'application/json'),
        header('origin', 'https://app.example.com'),
        header('user-agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'),
      ],
      queryString: [],
      postData: { mimeType: 'application/json', text: JSON.stringify(body) },
      headersSize: -1,
      bodySize: 0,
    },
    response: {
      status: 200,
      statusText: '',
      httpVersion: 'HTTP/2',
      cookies: [],
      headers: [
        header('content-type', stream ? 'text/event-stream; charset=utf-8' : 'application/json'),
        header('content-encoding', 'br'),
        header('date', 'Thu, 01 Jan 2026 00:00:00 GMT'),
        header('openai-processing-ms', '380'),
        header('openai-version', '2020-10-01'),
        header('x-request-id', `req_${i.toString(16).padStart(12, '0')}`),
        header('strict-transport-security', 'max-age=31536000; includeSubDomains; preload'),
        header('cf-ray', `8f${i.toString(16)}-AMS`),
      ],
      content: { size: answer.length, mimeType: stream ? 'text/event-stream' : 'application/json', text: answer },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
      _transferSize: 900,
    },
    cache: {},
    timings: { blocked: 1.2, dns: -1, ssl: -1, connect: -1, send: 0.3, wait: 390.1, receive: 28.9 },
    serverIPAddress: '162.159.140.245',
    _initiator: { type: 'script' },
    _priority: 'High',
    _resourceType: 'fetch',
  };
}

/**
 * The baseline, once: read + JSON.parse of the file, timed. In a function of its own so that
 * the parsed document is garbage when the import that follows runs (held in the loop's scope,
 * it stayed alive through the import, and every collection of the import marked its 42 MB).
 */
function parseOnce(file, cpu) {
  const c = cpu();
  const t = performance.now();
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  return { parseMs: performance.now() - t, parseCpuMs: cpu() - c, entries: doc.log.entries.length };
}

/**
 * Times the import of a 10,000-entry HAR against reading and parsing the same file.
 *
 * @param {{ importRecordings: Function }} mod the import module (dist/proxy/import.js)
 */
export async function importBench(mod, { quick = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bench-import-'));
  try {
    const n = 10_000;
    const file = join(dir, 'session.har');
    writeFileSync(file, JSON.stringify({ log: { version: '1.2', creator: { name: 'bench', version: '1' }, pages: [], entries: Array.from({ length: n }, (_, i) => entry(i)) } }, null, 2));
    const size = readFileSync(file).length;
    // Seven rounds: the ratio of one round moves with the load of the shared machine (a full
    // run of five read 0.43x in one run and 0.61x in another); the median of seven moves less.
    const rounds = quick ? 2 : 7;
    const parse = [];
    const imp = [];
    const parseCpu = [];
    const impCpu = [];
    const cpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    let records = 0;
    let sink = 0;
    // Alternated rounds, so a busy moment on the shared machine falls on both alike.
    for (let r = 0; r < rounds + 1; r++) {
      const { parseMs, parseCpuMs, entries } = parseOnce(file, cpu);
      sink += entries;
      const c = cpu();
      const t = performance.now();
      const report = await mod.importRecordings(file, join(dir, 'out.tape'), { force: true, recordedAt: '2026-01-01T00:00:00.000Z' });
      const importMs = performance.now() - t;
      const importCpuMs = cpu() - c;
      records = report.records;
      if (r === 0) continue; // warm-up
      parse.push(parseMs);
      imp.push(importMs);
      parseCpu.push(parseCpuMs);
      impCpu.push(importCpuMs);
    }
    if (records !== n || sink === 0) throw new Error(`bench: the import wrote ${records} records of ${n}`);
    const parseMs = median(parse);
    const importMs = median(imp);
    const parseCpuMs = median(parseCpu);
    const importCpuMs = median(impCpu);
    // Each round's ratio, from its own baseline and import (run back to back): the median of
    // these is the target's value, as for the floor rows (bench/floor-rounds.mjs), so that a
    // slow stretch of the machine is not set against a fast one.
    const speed = median(parse.map((p, i) => p / imp[i]));
    const cpuSpeed = median(parseCpu.map((p, i) => p / impCpu[i]));
    const rows = [
      { label: 'baseline: read + JSON.parse of the HAR', ms: parseMs, ratio: 1, baseline: 'baseline: read + JSON.parse of the HAR' },
      { label: `tapedeck import, ${n} entries (${(size / 1048576).toFixed(1)} MB) -> tape`, ms: importMs, ratio: speed, baseline: 'baseline: read + JSON.parse of the HAR' },
    ];
    const targets = [
      makeTarget({ label: `import of a ${n}-entry HAR, speed vs read + JSON.parse of it`, unit: 'x', value: speed, op: '>=', goal: 0.5, baseline: `the median of ${rounds} rounds' ratios, each round a read + JSON.parse then an import; medians: read + JSON.parse ${parseMs.toFixed(1)} ms, import ${importMs.toFixed(1)} ms` }),
      makeTarget({ label: `import of a ${n}-entry HAR, CPU time vs read + JSON.parse of it`, unit: 'x', value: cpuSpeed, op: '>=', goal: 0.5, baseline: `the median of ${rounds} rounds' ratios in CPU time (process.cpuUsage, all threads); medians: read + JSON.parse ${parseCpuMs.toFixed(1)} ms of CPU, import ${importCpuMs.toFixed(1)} ms of CPU` }),
    ];
    return { rows, targets, bytes: size };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mod = await import(new URL('../dist/proxy/import.js', import.meta.url).href);
  const res = await importBench(mod, { quick: process.argv.includes('--quick') });
  // --json: bench/run.mjs runs these rows in a process of their own and reads the last line.
  if (process.argv.includes('--json')) console.log(JSON.stringify(res));
  else {
    for (const r of res.rows) console.log(`${r.label.padEnd(70)} ${`${r.ms.toFixed(1)} ms`.padStart(12)}  ${r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x`}`);
    for (const t of res.targets) console.log(`  ${targetLine(t)}`);
  }
}
