#!/usr/bin/env node
// Writes test/vectors/hashes.json: published vectors for the hash spec (docs/hash-spec.md).
// Computed with independent tools only (the `canonicalize` package and node:crypto), never with
// tapedeck itself, so the vectors check the implementation rather than echo it.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import canonicalize from 'canonicalize';

const sha = (s) => createHash('sha256').update(s).digest('hex');

const digestInputs = [
  '{}', '[]', 'null', 'true', '0', '-0', '1.0', '1E2', '0.70', '1e21', '1e-7', '5e-324', '"a\\u0000b"',
  '{"b":2,"a":1}', '{"a":[1,{"d":true,"c":null}]}', '{"€":1,"😂":2,"\\ufb33":3,"\\n":4}',
  '"\\u20ac\\ud83d\\ude02\\/"', '[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]',
  '{"role":"user","content":"Hello, world!"}',
  '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0,"max_tokens":64}',
];
const digest = digestInputs.map((json) => {
  const canonical = canonicalize(JSON.parse(json));
  return { json, canonical, sha256: sha(canonical) };
});

function chain(messages) {
  const messageHashes = messages.map((m) => sha(canonicalize(m)));
  const pathHashes = [];
  messageHashes.forEach((m, i) => pathHashes.push(i === 0 ? m : sha(`${pathHashes[i - 1]}:${m}`)));
  return { messages, messageHashes, pathHashes, digest: sha(canonicalize(messages)) };
}
const paths = [
  [],
  [{ role: 'user', content: 'hi' }],
  [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'What is 2+2?' },
    { role: 'assistant', content: '4' },
    { role: 'user', content: 'And 3+3?' },
  ],
  [
    { role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"a"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"result":1.5}' },
  ],
].map(chain);

const tt = (t) => {
  const ids = [...t.selectedIds].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return sha([t.documentId, t.documentVersion, t.model, t.systemPromptVersion, ids.join('\0')].join('\0'));
};
const traceInputs = [
  { documentId: 'doc-1', documentVersion: '1', model: 'gpt-4o-mini', systemPromptVersion: 'v1', selectedIds: ['s2', 's1', 's10'] },
  { documentId: 'doc-1', documentVersion: '1', model: 'gpt-4o-mini', systemPromptVersion: 'v1', selectedIds: [] },
  { documentId: 'dóc', documentVersion: '2', model: 'claude', systemPromptVersion: 'v1', selectedIds: ['😂', '\uffff', 'a'] },
];
const traceTokens = traceInputs.map((input) => ({ input, token: tt(input) }));

const out = { spec: 'tapedeck hash spec v1 (docs/hash-spec.md)', generatedBy: 'scripts/gen-vectors.mjs (canonicalize + node:crypto)', digest, paths, traceTokens };
writeFileSync(new URL('../test/vectors/hashes.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
console.log(`wrote ${digest.length} digest, ${paths.length} path and ${traceTokens.length} trace-token vectors`);
