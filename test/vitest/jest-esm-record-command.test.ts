// A native-ESM jest project runs as jest's docs say, with NODE_OPTIONS=--experimental-vm-modules.
// The command a miss prints to record the test must run as printed. Before, it was always
// `TAPEDECK_MODE=update npx jest <file> -t ...`, which in such a project fails every test file
// ("Must use import to load ES Module") and records nothing. Now it keeps the flag; and
// configureTapes({ testCommand }) names the command outright. jest really runs, through a shell.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('jest-esm-record-command');

const testFile = (setup: string) => `import { tape, configureTapes } from 'llm-tapedeck/jest';
${setup}
test('esm one', async () => {
  const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'esm one' }] }),
  });
  expect(r.status).toBe(200);
});
`;

const files = (setup: string) => ({
  'jest.config.mjs': `export default { transform: {}, reporters: ['default', 'llm-tapedeck/jest/reporter'] };\n`,
  'chat.test.js': testFile(setup),
});

describe('the record command of a jest ESM project', () => {
  const cases: [string, string, RegExp][] = [
    ['run with NODE_OPTIONS=--experimental-vm-modules', '', /NODE_OPTIONS=--experimental-vm-modules npx jest chat\.test\.js -t/],
    ['configureTapes({ testCommand })', "configureTapes({ testCommand: 'NODE_OPTIONS=--experimental-vm-modules npx jest --ci' });", /TAPEDECK_MODE=update NODE_OPTIONS=--experimental-vm-modules npx jest --ci chat\.test\.js -t/],
  ];
  for (const [what, setup, shape] of cases) {
    it(`runs as printed (${what})`, { timeout: 120_000 }, async () => {
      const base = join(suite.dir, what.replace(/\W+/g, '-'));
      mkdirSync(base, { recursive: true });
      const dir = runnerProject(base, 'esm', files(setup));
      const ci = await sh('NODE_OPTIONS=--experimental-vm-modules npx jest', dir, { UPSTREAM: suite.upstream.url, CI: 'true' });
      expect(ci.code, ci.out).toBe(1);
      const command = /Record it: (TAPEDECK_MODE=update [^\n]*)/.exec(ci.out)?.[1];
      expect(command, ci.out).toMatch(shape);
      const recorded = await sh(command!, dir, { UPSTREAM: suite.upstream.url });
      expect(recorded.code, recorded.out).toBe(0);
      expect(recorded.out).toContain('1 recording added');
      const again = await sh('NODE_OPTIONS=--experimental-vm-modules npx jest', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(again.code, again.out).toBe(0);
    });
  }
});
