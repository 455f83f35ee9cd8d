// `tapedeck scan` on a realtime tape recorded before the connect's own key was masked in the
// client's frames: an Azure key (32 hex characters, no prefix a credential pattern knows) stood
// in clear in a `session.update`'s instructions while the server's `session.updated`, which
// repeats them, had it masked. scan said "No credentials found". The mask in the server's copy
// tells where the key is: a client string that reads as the server's masked text with a token
// in the mask's place is reported.
import { describe, expect, it } from 'vitest';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const KEY = '5f4dcc3b5aa765d61d8327deb882cf99';

/** A part of a session as the recorder stored it: the client's frame (parsed) and the server's (wire text). */
function part(instructions: string, echoed: string): unknown {
  return {
    v: 1,
    kind: 'realtime',
    role: 'part',
    key: 'b0892555-3959-4c87-8137-457172b7d129/1',
    keyVersion: 1,
    sid: 'b0892555-3959-4c87-8137-457172b7d129',
    n: 1,
    recordedAt: '2026-12-07T03:45:57.714Z',
    frames: [
      { ms: 8.351, c: 1, key: 'e3d8e26e141f2dcdee69f01235cbdf38087e0f3af01a8f5394b3a470fda75bcb', msg: { type: 'session.update', session: { type: 'realtime', instructions, output_modalities: ['text'] } } },
      { ms: 11.004, c: 1, key: '76aed5992d00bd8b52276def86e9baaadec6513cb7b73af7f4b8d1c4eacc36cf', msg: { type: 'response.create' } },
      {
        ms: 13.563,
        text: JSON.stringify({ event_id: 'event_cac28ab73d7f03b8', type: 'session.updated', session: { id: 'sess_c551fad063e61a1b', object: 'realtime.session', type: 'realtime', instructions: echoed, output_modalities: ['text'] } }),
      },
    ],
  };
}

describe('scan: a key in a realtime client frame that the server frame repeating it has masked', () => {
  it('is found, by where the mask stands in the server frame', () => {
    const found = secretsInValue(part(`Use key ${KEY} for the backend`, 'Use key [REDACTED] for the backend'));
    expect(found.map((f) => [f.path, f.kind])).toEqual([['$.frames[0].msg.session.instructions', 'echoed secret']]);
    expect(found[0]!.excerpt).not.toContain(KEY.slice(4, 12));
  });

  it('is found with a keyed mask, and at the start or end of the text', () => {
    expect(secretsInValue(part(`${KEY} is the key`, '[REDACTED:1d255ce2d6100be9] is the key')).map((f) => f.kind)).toEqual(['echoed secret']);
    expect(secretsInValue(part(`the key: ${KEY}`, 'the key: [REDACTED]')).map((f) => f.kind)).toEqual(['echoed secret']);
  });

  it('leaves a tape recorded today alone: the client frame masked too, or no key where the server masked one', () => {
    expect(secretsInValue(part('Use key [REDACTED] for the backend', 'Use key [REDACTED] for the backend'))).toEqual([]);
    // The server masked something the client did not send there (its own text): nothing in the client's to report.
    expect(secretsInValue(part('Be brief.', 'Use key [REDACTED] for the backend'))).toEqual([]);
    expect(secretsInValue(part('Use key of the house for the backend', 'Use key [REDACTED] for the backend'))).toEqual([]);
  });
});
