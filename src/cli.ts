#!/usr/bin/env node
// The tapedeck command. Subcommands grow with the project; today: version, help, and the core's
// canonicalize/hash tools, which are handy for checking what a request hashes to.

import { backend, canonicalizeJSON, hashJSON, pathHashes, requestKeys, TapedeckError, VERSION } from './index.ts';
import { readFileSync, statSync } from 'node:fs';
import { exportTapeJSON, importTapeJSON } from './store/export.ts';
import { importCacheJSON, importRecordingsDir } from './store/migrate.ts';
import { readTape, rewriteTape } from './store/tape-file.ts';
import { normalizeRequest } from './match/normalize.ts';

const HELP = `tapedeck ${VERSION} — record and replay LLM API calls deterministically

Usage:
  tapedeck <command> [arguments]

Commands:
  canonical [file]      Print the RFC 8785 canonical form of JSON (file or stdin)
  hash [file]           Print the SHA-256 digest of the canonical form
  paths [file]          Print message and path hashes of a JSON array of messages
                        (or of the "messages" member of a request object)
  key [file]            Print what the matcher keys an LLM request body by: provider,
                        request key, signature and the hashes of the normalized messages
  verify <tape>         Check a tape file: header, every record's frame and checksum;
                        report torn tails and damaged records with their byte offsets
  inspect <tape>        List the records: offset, size, key, signature, model and the
                        first user message
  tree <tape> [--hashes] [--json] [--width N] [--collapse N]
                        Print the recorded conversations as a tree: turns, branches,
                        alternative answers, excerpts (docs/tree.md)
  prune <tape>          Compact a tape: drop damaged bytes and records that do not decode
                        (atomic rewrite under the tape lock; concurrent appends are kept)
  export <tape> [--json] Print a tape as deterministic, pretty JSON (sorted keys, binary as
                        base64) for code review
  import <src> <tape> [--force] [--ignore a,b]
                        Write a tape from such JSON (lossless), from a directory of
                        JSON recordings (one request/response per file), or from
                        a DSPy-style cache.json
                        (refuses to overwrite without --force)
  serve --upstream URL --tape FILE [--mode M] [--port N] [--host H] ...
                        Record/replay proxy for LLM APIs (tapedeck serve --help;
                        docs/proxy.md)
  push <tape> <redis-url> [--namespace NS] [--ttl S]
                        Copy a tape's records into a shared Redis store (docs/redis.md)
  pull <redis-url> <tape> [--namespace NS] [--force]
                        Write a Redis store's records to a tape (byte-exact round trip)
  version               Print the version and the active backend
  help                  Show this help

Options:
  --ignore <k1,k2>      Drop these object members (any depth) before hashing;
                        for \`key\`, request arguments to leave out (ignoreArgs)
  -h, --help            Show this help
  -v, --version         Print the version

Environment:
  TAPEDECK_BACKEND      Force a backend: wasm-simd | wasm | js
`;

function readInput(file: string | undefined): Buffer {
  return readFileSync(file === undefined || file === '-' ? 0 : file);
}

/** The first user message of a recorded request, as one short line. */
function firstUserText(request: unknown): string {
  try {
    const m = normalizeRequest(request).messages.find((x) => (x as { role?: unknown }).role === 'user') as { content?: unknown } | undefined;
    const parts = Array.isArray(m?.content) ? (m.content as { type?: string; text?: string }[]) : [];
    const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join(' ');
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > 60 ? `${line.slice(0, 59)}…` : line || '-';
  } catch {
    return '-';
  }
}

async function inspect(file: string | undefined): Promise<number> {
  if (!file) {
    process.stderr.write('tapedeck inspect: give the tape, e.g. tapedeck inspect recordings/app.tape\n');
    return 2;
  }
  const t = await readTape(file);
  process.stdout.write('#\toffset\tbytes\tkey\tsignature\tmodel\tfirst user message\n');
  t.records.forEach((r, i) => {
    const v = (r.value ?? {}) as { key?: unknown; signature?: { toolNames?: unknown[]; messageCount?: unknown }; request?: { model?: unknown } };
    const key = typeof v.key === 'string' ? v.key.slice(0, 12) : '-';
    const sig = v.signature ? `${v.signature.messageCount ?? '?'} msgs, ${v.signature.toolNames?.length ?? 0} tools` : '-';
    const model = typeof v.request?.model === 'string' ? v.request.model : '-';
    process.stdout.write(`${i}\t${r.offset}\t${r.length}\t${key}\t${sig}\t${model}\t${firstUserText(v.request)}\n`);
  });
  for (const w of t.warnings) process.stdout.write(`${w.code} at byte ${w.offset}: ${w.message}\n`);
  return 0;
}

async function prune(file: string | undefined): Promise<number> {
  if (!file) {
    process.stderr.write('tapedeck prune: give the tape, e.g. tapedeck prune recordings/app.tape\n');
    return 2;
  }
  const before = (await readTape(file)).size;
  const r = await rewriteTape(file, () => true);
  const after = (await readTape(file)).size;
  process.stdout.write(`${file}: kept ${r.kept} record${r.kept === 1 ? '' : 's'}, removed ${before - after} bytes of damage\n`);
  return 0;
}

async function verify(file: string | undefined): Promise<number> {
  if (!file) {
    process.stderr.write('tapedeck verify: give the tape file to check, e.g. tapedeck verify test/fixtures/app.tape\n');
    return 2;
  }
  const t = await readTape(file);
  process.stdout.write(
    `${file}: format ${t.header.formatVersion}, created ${t.header.created}, tapedeck ${t.header.tapedeckVersion}, ` +
      `${t.records.length} record${t.records.length === 1 ? '' : 's'}, ${t.size} bytes\n`,
  );
  for (const w of t.warnings) process.stdout.write(`${w.code} at byte ${w.offset}: ${w.message}\n`);
  process.stdout.write(t.warnings.length ? `${t.warnings.length} problem(s); the records listed above are intact.\n` : 'ok\n');
  return t.warnings.length ? 1 : 0;
}

function main(argv: string[]): number | Promise<number> {
  // serve has its own flags (--help included); loaded on demand so other commands stay light.
  if (argv[0] === 'serve') return import('./proxy/cli.ts').then((m) => m.serveCommand(argv.slice(1)));
  if (argv[0] === 'tree') return import('./tree/cli.ts').then((m) => m.treeCommand(argv.slice(1)));
  if (argv[0] === 'push') return import('./store/redis-cli.ts').then((m) => m.pushCommand(argv.slice(1)));
  if (argv[0] === 'pull') return import('./store/redis-cli.ts').then((m) => m.pullCommand(argv.slice(1)));
  const args: string[] = [];
  let ignoreKeys: string[] | undefined;
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--ignore') ignoreKeys = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a.startsWith('--ignore=')) ignoreKeys = a.slice(9).split(',').filter(Boolean);
    else if (a === '--force') force = true;
    else if (a === '--json') continue; // export prints JSON; the flag is accepted for clarity
    else if (a === '-h' || a === '--help') args.unshift('help');
    else if (a === '-v' || a === '--version') args.unshift('version');
    else args.push(a);
  }
  const opts = ignoreKeys ? { ignoreKeys } : undefined;
  const [cmd = 'help', file, second] = args;
  switch (cmd) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      process.stdout.write(`tapedeck ${VERSION} (backend: ${backend()}, node ${process.versions.node})\n`);
      return 0;
    case 'canonical':
      process.stdout.write(canonicalizeJSON(readInput(file), opts));
      process.stdout.write('\n');
      return 0;
    case 'hash':
      process.stdout.write(`${hashJSON(readInput(file), opts)}\n`);
      return 0;
    case 'paths': {
      const input = readInput(file);
      const first = input.toString('utf8').trimStart()[0];
      const messages = first === '{' ? (JSON.parse(input.toString('utf8')) as { messages?: unknown[] }).messages ?? [] : input;
      const r = pathHashes(messages, opts);
      r.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${r.pathHashes[i]}\n`));
      process.stdout.write(`digest\t${r.digest}\n`);
      return 0;
    }
    case 'verify':
      return verify(file);
    case 'inspect':
      return inspect(file);
    case 'prune':
      return prune(file);
    case 'export':
      if (!file) {
        process.stderr.write('tapedeck export: give the tape, e.g. tapedeck export recordings/app.tape > app.tape.json\n');
        return 2;
      }
      return exportTapeJSON(file).then((json) => {
        process.stdout.write(json);
        return 0;
      });
    case 'import':
      if (!file || !second) {
        process.stderr.write('tapedeck import: give the JSON and the tape to write, e.g. tapedeck import app.tape.json recordings/app.tape\n');
        return 2;
      }
      return importAny(file, second, force, ignoreKeys).then(({ records, skipped, from }) => {
        process.stdout.write(`wrote ${second}: ${records} record${records === 1 ? '' : 's'} from ${from}${skipped ? ` (${skipped} skipped, see warnings)` : ''}\n`);
        return 0;
      });
    case 'key': {
      const k = requestKeys(readInput(file), ignoreKeys ? { ignoreArgs: ignoreKeys } : {});
      process.stdout.write(`provider\t${k.provider}\nkey\t${k.key}\n`);
      process.stdout.write(`signature\t${JSON.stringify(k.signature)}\t${k.signatureDigest}\n`);
      k.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${k.pathHashes[i]}\n`));
      return 0;
    }
    default:
      process.stderr.write(`tapedeck: unknown command ${JSON.stringify(cmd)}\n\n${HELP}`);
      return 2;
  }
}

/**
 * `tapedeck import` takes three inputs and tells them apart by shape: a directory holds JSON
 * recordings (one request/response per file), a JSON object with `entries` is a DSPy-style cache.json, anything else must be a
 * tapedeck JSON export.
 */
async function importAny(src: string, out: string, force: boolean, ignoredArgs: string[] | undefined): Promise<{ records: number; skipped: number; from: string }> {
  if (src !== '-' && statSync(src, { throwIfNoEntry: false })?.isDirectory()) {
    return { ...(await importRecordingsDir(src, out, { force, ignoredArgs })), from: 'a directory of JSON recordings' };
  }
  const text = readInput(src).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined; // importTapeJSON reports where the JSON breaks
  }
  if (parsed !== null && typeof parsed === 'object' && 'entries' in parsed && !('records' in parsed)) {
    return { ...(await importCacheJSON(src, out, { force, ignoredArgs })), from: 'a DSPy-style cache.json' };
  }
  const { records } = await importTapeJSON(text, out, { force });
  return { records, skipped: 0, from: 'a tapedeck JSON export' };
}

function fail(e: unknown): void {
  if (e instanceof TapedeckError) {
    process.stderr.write(`tapedeck: ${e.code}: ${e.message}\n`);
    process.exitCode = 1;
  } else if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
    process.stderr.write(`tapedeck: ${(e as Error).message}\n`);
    process.exitCode = 1;
  } else throw e;
}

try {
  const code = main(process.argv.slice(2));
  if (typeof code === 'number') process.exitCode = code;
  else code.then((c) => (process.exitCode = c), fail);
} catch (e) {
  fail(e);
}
