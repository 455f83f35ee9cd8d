/**
 * The fault seed of a test that asks for faults without one (tape.chaos()): derived from what
 * names the test (its file and name, else its tape), never from the clock or the machine, so
 * every run of the test, locally and in CI, injects the same faults and fails the same way.
 */
import { createHash } from 'node:crypto';

/**
 * A seed (0 to 2^31 - 1, the range `chaos.seed` takes) from a test's identity.
 *
 * @example
 * testSeed('test/chat.test.ts > falls back') // the same number on every run and machine
 */
export function testSeed(identity: string): number {
  return createHash('sha256').update(`chaos seed\0${identity.replace(/\\/g, '/')}`).digest().readUInt32BE(0) & 0x7fffffff;
}
