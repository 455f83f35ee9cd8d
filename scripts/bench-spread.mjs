#!/usr/bin/env node
// The spread of several full benchmark runs, as docs/benchmarks.md reports it:
//
//   npm run bench -- --out runs/1.json      (three times, nothing else running)
//   node scripts/bench-spread.mjs runs/1.json runs/2.json runs/3.json [--all] [--quiet-within 1.1]
//
// Prints each floor row's readings split by whether the machine was quiet while the row ran
// (bench/spread.mjs says how that is decided), then every target line that missed in any run
// (every line with --all).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatSpread, spread } from '../bench/spread.mjs';

const fail = (message) => {
  console.error(`bench-spread: ${message}`);
  process.exit(2);
};

let args;
try {
  args = parseArgs({ allowPositionals: true, options: { all: { type: 'boolean', default: false }, 'quiet-within': { type: 'string', default: '1.1' }, help: { type: 'boolean', short: 'h', default: false } } });
} catch (e) {
  fail(`${e.message}\nusage: node scripts/bench-spread.mjs <results.json>... [--all] [--quiet-within 1.1]`);
}
const { values: opts, positionals: files } = args;
if (opts.help || files.length === 0) {
  console.log('usage: node scripts/bench-spread.mjs <results.json>... [--all] [--quiet-within 1.1]\n(results files of full runs: npm run bench -- --out <file>)');
  process.exit(files.length === 0 && !opts.help ? 2 : 0);
}
const quietWithin = Number(opts['quiet-within']);
if (!(quietWithin >= 1)) fail(`--quiet-within must be a number of at least 1 (a ratio to the fastest floor), got "${opts['quiet-within']}"`);

const runs = files.map((file) => {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    fail(`cannot read ${file}: ${e.code ?? e.message}`);
  }
  let r;
  try {
    r = JSON.parse(text);
  } catch (e) {
    fail(`${file} is not JSON (${e.message}); pass the file written by npm run bench -- --out <file>`);
  }
  if (!r || !Array.isArray(r.targets)) fail(`${file} has no "targets": not a results file of npm run bench`);
  return r;
});
console.log(formatSpread(spread(runs, { quietWithin }), { all: opts.all }));
