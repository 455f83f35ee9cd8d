// Quiet test output: what the tests provoke on purpose is not printed, anything else still is.
// - Process warnings with a TAPEDECK_* code (a put in replay mode, a re-keyed tape, a damaged
//   tape): the tests that care listen for them; Node's printer gets every other warning.
// - The Anthropic SDK's console warning for model names it lists as deprecated, which the tests
//   use as fixed request data (filtered in vitest.config.ts, onConsoleLog).
const printers = process.listeners('warning');
process.removeAllListeners('warning');
process.on('warning', (w: Error & { code?: unknown }) => {
  if (typeof w.code === 'string' && w.code.startsWith('TAPEDECK_')) return;
  for (const print of printers) print(w);
});
