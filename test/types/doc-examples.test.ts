// The @example blocks an editor shows on hover, held to what they show: each compiles under the
// project's strict settings with only the names the package exports, and those that say what a
// value is give that value when run. Examples are read from src (test/types/doc-example.ts), so a
// wrong example fails here, not in a user's editor.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collecting, exampleOf, root, toSource, typeCheck } from './doc-example.ts';

// Inside the checkout, so an example's bare imports (openai) resolve as in a user's project.
const dir = mkdtempSync(join(root, 'test', 'types', '.doc-examples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes an example with its setup as `name`.ts and returns the file name. */
function write(name: string, setup: string, example: string, wrap: (code: string) => string = (c) => c): string {
  const file = `${name}.ts`;
  writeFileSync(join(dir, file), toSource(`${setup}\n${wrap(example)}\nexport {};\n`, dir));
  return file;
}

const TREE_SETUP = `import { ConversationTree, requestKeys, hashValue } from 'llm-tapedeck';
export const results: unknown[] = [];
const tree = new ConversationTree();
const requestBody = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Germany?' }] };
tree.record({ request: requestBody, value: { choices: [{ message: { role: 'assistant', content: 'Berlin' } }] } });
void hashValue;`;

// The declaration an example makes, for the ones that end in one.
const TREE_EXAMPLES: [string, RegExp, string][] = [
  ['tree-find', /^ {2}find\(input/, 'results.push({ node, matched });'],
  ['tree-by-path-hash', /^ {2}byPathHash\(/, ''],
  ['tree-by-prompt-hash', /^ {2}byPromptHash\(/, ''],
  ['tree-child', /^ {2}child\(parentHash/, ''],
];

describe('doc examples', () => {
  it("the conversation tree's lookups find the recorded request in a tree of request bodies (what loadTree gives)", async () => {
    const got: Record<string, unknown[]> = {};
    for (const [name, decl, tail] of TREE_EXAMPLES) {
      const file = write(name, TREE_SETUP, exampleOf('tree/tree.ts', decl), (c) => `${collecting(c)}\n${tail}`);
      got[name] = ((await import(join(dir, file))) as { results: unknown[] }).results;
    }
    // find: the node of the last message, every message known.
    expect((got['tree-find']![0] as { matched: number }).matched).toBe(1);
    // byPathHash: the node holding the recorded answer.
    expect((got['tree-by-path-hash']![0] as unknown[] | undefined)?.length).toBe(1);
    // byPromptHash: the one place the question was asked.
    expect(got['tree-by-prompt-hash']![0]).toBe(1);
    // child(null, …): the conversation's root.
    expect((got['tree-child']![0] as { depth: number } | undefined)?.depth).toBe(0);
  });

  it("llm-tapedeck/browser's pathHashes example compiles and says true", async () => {
    const setup = `import { pathHashes } from 'llm-tapedeck/browser';\nexport const results: unknown[] = [];`;
    const file = write('browser-path-hashes', setup, exampleOf('core/index.ts', /^export function pathHashes\(/), collecting);
    expect(typeCheck(dir, [file])).toBe('');
    expect(((await import(join(dir, file))) as { results: unknown[] }).results).toEqual([true]);
  });

  it('the examples of exported functions compile with only the names the package exports', () => {
    const files = [
      // Each setup gives what the example takes as given, by the names a user can import.
      write('http-records', `import { httpRecords } from 'llm-tapedeck/store';`, exampleOf('store/records.ts', /^export function httpRecords\(/)),
      write('realtime-tape-used-marks', `import type { RealtimeTape } from 'llm-tapedeck/realtime';\ndeclare const tape: RealtimeTape;\ndeclare const head: { sid: string };`, exampleOf('realtime/tape.ts', /^ {2}usedMarks\(\)/)),
      write('realtime-endpoint-used-marks', `import type { RealtimeEndpoint } from 'llm-tapedeck/realtime';\ndeclare const endpoint: RealtimeEndpoint;\ndeclare const head: { sid: string };`, exampleOf('realtime/endpoint.ts', /^ {2}usedMarks\(\)/)),
      write('assemble-stream', `import { assembleStream, type HttpRecord } from 'llm-tapedeck/proxy';\ndeclare const rec: HttpRecord;`, exampleOf('proxy/stream-text-api.ts', /^export function assembleStream\(/)),
      write('explain-miss', `import { explainMiss, TapedeckError, type MissContext } from 'llm-tapedeck';\ndeclare const ctx: MissContext;`, exampleOf('match/diagnose-api.ts', /^export function explainMiss\(/)),
      write('closest-recordings', `import { closestRecordings, type MissContext, type NearMiss } from 'llm-tapedeck';\ndeclare const ctx: MissContext;\nexport type N = NearMiss;`, exampleOf('match/diagnose-api.ts', /^export function closestRecordings\(/)),
      write('open-test-tape', '', exampleOf('testing/session.ts', /^export function openTestTape\(/)),
    ];
    const COLLECTION = `import { RecordCollection, MemoryBackend, TapeBackend, RedisBackend, cacheRecords, httpRecords, type ReplayRecord } from 'llm-tapedeck/store';
declare const key: string;
declare const record: ReplayRecord;
declare const recordsFromAJsonExport: ReplayRecord[];
void MemoryBackend; void TapeBackend; void RedisBackend; void cacheRecords; void httpRecords;`;
    files.push(
      write('collection', COLLECTION, exampleOf('store/collection.ts', /^export class RecordCollection/), (c) => `export async function run() {\n${c}\nvoid report;\n}`),
      write('collection-open', COLLECTION, exampleOf('store/collection.ts', /^ {2}static async open</), (c) => `export async function run() {\n${c}\nvoid col;\n}`),
      write('memory-backend', COLLECTION, exampleOf('store/backends/memory.ts', /^export class MemoryBackend/), (c) => `export async function run() {\n${c}\nvoid col;\n}`),
      write('tape-backend', COLLECTION, exampleOf('store/backends/tape.ts', /^export class TapeBackend/), (c) => `export async function run() {\n${c}\nvoid col;\n}`),
      write('redis-backend', COLLECTION, exampleOf('store/backends/redis-backend.ts', /^export class RedisBackend/), (c) => `export async function run() {\n${c}\nvoid col;\n}`),
    );
    expect(typeCheck(dir, files)).toBe('');
  });

  it('an OpenAI client in an example has an apiKey: the SDK refuses to start without one in a CI replay', () => {
    const missing: string[] = [];
    const walk = (d: string): void => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts'))
          readFileSync(p, 'utf8').split('\n').forEach((l, i) => {
            // Doc-comment lines only: the code's own messages may name the constructor.
            if (/^\s*\*/.test(l) && /new OpenAI\(\{/.test(l) && !/apiKey/.test(l)) missing.push(`${p.slice(root.length + 1)}:${i + 1}`);
          });
      }
    };
    walk(join(root, 'src'));
    readFileSync(join(root, 'docs', 'vitest.md'), 'utf8').split('\n').forEach((l, i) => {
      if (/const \w+ = new OpenAI\(\{/.test(l) && !/apiKey/.test(l)) missing.push(`docs/vitest.md:${i + 1}`);
    });
    expect(missing).toEqual([]);
  });
});
