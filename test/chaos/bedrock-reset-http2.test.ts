// `reset` through the proxy to a client on HTTP/2 (the AWS SDK's default Bedrock client): a
// dropped connection, as the docs say, which the SDK retries. Before, the stream was reset with
// INTERNAL_ERROR, an error the AWS SDK does not retry ("Stream closed with error code
// NGHTTP2_INTERNAL_ERROR", one attempt), while a connection a load balancer drops is retried:
// a test of the app's recovery from a reset failed under tapedeck only.
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startBedrock } from '../providers/fake-bedrock.ts';
import { CREDENTIALS, MODEL } from '../providers/bedrock-clients.ts';
import { tempDir } from './record.ts';

const tmp = tempDir('bedrock-reset-http2');
const tape = join(tmp.dir, 'bedrock.tape');
const converse = () => new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }] });
let recorded = '';

beforeAll(async () => {
  const bed = await startBedrock({ gapMs: 2 });
  const rec = await startProxy({ upstream: bed.url, tape, mode: 'record', port: 0 });
  const c = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: rec.url, credentials: CREDENTIALS });
  try {
    const r = await c.send(converse());
    recorded = r.output?.message?.content?.[0]?.text ?? '';
  } finally {
    c.destroy();
    await rec.close();
    await bed.close();
  }
});
afterAll(() => tmp.remove());

describe('reset to an HTTP/2 client', () => {
  it('the AWS SDK retries it and gets the recording', async () => {
    expect(recorded).not.toBe('');
    const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { faults: { reset: 1 }, attempts: 1, seed: 1 }, onWarning: () => {} });
    const c = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: p.url, credentials: CREDENTIALS, maxAttempts: 3 });
    try {
      const r = await c.send(converse());
      expect(r.output?.message?.content?.[0]?.text).toBe(recorded);
      expect(r.$metadata.attempts).toBe(2);
      expect(p.handler.stats().faults).toEqual({ reset: 1 });
    } finally {
      c.destroy();
      await p.close();
    }
  });
});
