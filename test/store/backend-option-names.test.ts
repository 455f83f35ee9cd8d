// The option objects of RedisBackend and MemoryBackend, the documented way to give what a URL
// cannot carry, were taken as given: `{ namspace: 'my-app' }` recorded into and replayed from the
// shared default namespace `tapedeck` (one project's recordings answering another's requests),
// `{ ttl: 5 }` kept records forever, and `{ ttlMs: -5 }` failed only at the first call, as a 500.
// Now every misspelt or invalid option is E_ARG where the backend is made, as elsewhere.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';

const URL = 'redis://127.0.0.1:6379/0';

function refused(make: () => unknown): TapedeckError {
  try {
    make();
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    return e as TapedeckError;
  }
  throw new Error('expected E_ARG');
}

describe('RedisBackend options', () => {
  it('refuses a misspelt option, naming the one meant', () => {
    const e = refused(() => new RedisBackend(URL, { namspace: 'my-app' } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('"namspace"');
    expect(e.hint).toContain('Did you mean namespace?');
    expect(refused(() => new RedisBackend(URL, { ttl: 5 } as never)).hint).toContain('ttlMs');
  });

  it('refuses a misspelt connect option', () => {
    const e = refused(() => new RedisBackend(URL, { connect: { commandTimeout: 5 } } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('"commandTimeout"');
    expect(e.hint).toContain('commandTimeoutMs');
  });

  it('refuses an invalid ttlMs or writerLeaseMs where the backend is made, not at the first call', () => {
    for (const ttlMs of [-5, '60000', Number.NaN]) {
      const e = refused(() => new RedisBackend(URL, { ttlMs } as never));
      expect(e.code).toBe('E_ARG');
      expect(e.message).toContain('ttlMs');
    }
    expect(refused(() => new RedisBackend(URL, { writerLeaseMs: 0 })).code).toBe('E_ARG');
  });

  it('takes the options it knows', () => {
    const b = new RedisBackend(URL, { namespace: 'my-app', ttlMs: 60_000, writerLeaseMs: 5000, connect: { connectTimeoutMs: 100, commandTimeoutMs: 100, tls: {} } });
    expect(b.namespace).toBe('my-app');
  });
});

describe('MemoryBackend options', () => {
  it('refuses a misspelt option', () => {
    const e = refused(() => new MemoryBackend({ slt: 'x' } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.hint).toContain('Did you mean salt?');
  });

  it('refuses a salt that is not a redaction salt (32 hex digits)', () => {
    const e = refused(() => new MemoryBackend({ salt: 'xyz' }));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('salt');
    expect(new MemoryBackend({ salt: '0123456789abcdef0123456789abcdef' }).salt).toBe('0123456789abcdef0123456789abcdef');
  });
});
