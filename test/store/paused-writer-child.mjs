// Child process for the paused-writer tests: a record-mode writer (createFetch, as built in dist/)
// on a tape or a Redis namespace with a short writer lease. It makes one call, prints the answer
// once it has it (acknowledged: stored before it is answered), then waits for a line on stdin
// before it closes, so the test can pause it with SIGSTOP in between.
// argv: <dist dir> <JSON { store: 'tape' | 'redis', target, leaseMs, namespace?, upstream, body }>
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [dist, json] = process.argv.slice(2);
const cfg = JSON.parse(json);
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { createFetch } = await load('proxy/fetch.js');
const store =
  cfg.store === 'tape'
    ? new (await load('store/backends/tape.js')).TapeBackend(cfg.target, { lock: { staleMs: cfg.leaseMs } })
    : new (await load('store/backends/redis-backend.js')).RedisBackend(cfg.target, { namespace: cfg.namespace, writerLeaseMs: cfg.leaseMs });
const f = createFetch({ store, mode: 'record' });
const res = await f(`${cfg.upstream}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: cfg.body });
process.stdout.write(`${JSON.stringify({ status: res.status, recorded: res.headers.get('x-tapedeck-recorded'), text: await res.text() })}\n`);
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
await f.close();
process.stdout.write('closed\n');
