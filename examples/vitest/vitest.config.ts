import { defineConfig } from 'vitest/config';
import { tapedeck } from 'llm-tapedeck/vitest/plugin';

export default defineConfig({
  // The one line for tapedeck: `vitest --mode update|record|replay` and the run summary.
  plugins: [tapedeck()],
  test: {
    globalSetup: ['./global-setup.ts'],
  },
});
