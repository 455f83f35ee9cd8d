// What a `vitest --mode` says to the tapes. Internal to the vitest plugin.
import { closestName } from '../edit-distance.ts';
import { TAPE_MODES } from '../store/mode.ts';

/**
 * The tape mode a `vitest --mode` names, or a warning for one that looks like a mistyped tape
 * mode: `--mode` is also Vite's own mode (`test`, `production`, a project's own names), so other
 * values are Vite's and pass silently, but `recrod` would otherwise leave the run in its
 * default mode without a word.
 *
 * @example
 * tapeModeOfViteMode('update') // { mode: 'update' }
 * tapeModeOfViteMode('recrod').warning // 'tapedeck: vitest --mode "recrod" is no tape mode ... did you mean --mode record?'
 */
export function tapeModeOfViteMode(viteMode: string | undefined): { mode?: string; warning?: string } {
  if (viteMode === undefined) return {};
  const m = viteMode.toLowerCase();
  if ((TAPE_MODES as readonly string[]).includes(m)) return { mode: m };
  const near = closestName(m, TAPE_MODES);
  if (near === undefined) return {};
  return { warning: `tapedeck: vitest --mode ${JSON.stringify(viteMode)} is no tape mode (${TAPE_MODES.join(', ')}): the tapes keep the mode TAPEDECK_MODE, CI or the tests give them; did you mean --mode ${near}?` };
}

