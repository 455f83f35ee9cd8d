// Child process for test/store/overlapping-processes.test.ts: one record writer (createFetch) on
// a shared tape or Redis namespace, its own run, driven line by line so the parent decides the
// order of every open, recording and close across processes.
// argv: <dist dir url> <tape path or redis:// store> <upstream url>
// It prints `open` once the store is open; then, per stdin line: `ask` records the one request
// and prints `recorded <answer id>`; `close` closes, prints `closed` and exits.
import { createInterface } from 'node:readline';

const [distUrl, where, upstream] = process.argv.slice(2);
const { createFetch } = await import(new URL('proxy/fetch.js', distUrl));
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared' }] });
const f = createFetch({ ...(where.startsWith('redis') ? { store: where } : { tape: where }), mode: 'record', summary: false });
await f.ready;
process.stdout.write('open\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'ask') {
    const res = await f(`${upstream}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const answer = await res.json();
    process.stdout.write(`recorded ${res.status === 200 ? answer.id : JSON.stringify(answer)}\n`);
  } else if (line === 'close') {
    await f.close();
    process.stdout.write('closed\n');
    process.exit(0);
  }
}
