/**
 * The folder a command run by npx (npm exec) was typed in. In a package of an npm workspace, npm
 * runs the command in the package's folder, not in the sub-folder the user was in, and passes
 * that sub-folder as INIT_CWD: a tape path typed relative to it was read in the package folder
 * ("does not exist" of a tape `ls` shows) and a tape to write went there too. Outside a workspace
 * npm leaves the folder alone. Only a folder inside the one npm chose counts: `npm exec -w <ws>`
 * from the workspace root runs in the workspace's folder on purpose (INIT_CWD is above it then),
 * and so do `npm run` scripts (npm_command `run-script`, or `run`).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * The folder to run in instead of `cwd`, or undefined to stay.
 *
 * @example
 * npmExecDirectory({ npm_command: 'exec', INIT_CWD: '/ws/packages/a/test' }, '/ws/packages/a') // '/ws/packages/a/test'
 * npmExecDirectory({ npm_command: 'run-script', INIT_CWD: '/ws/packages/a/test' }, '/ws/packages/a') // undefined
 */
export function npmExecDirectory(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const typed = env.INIT_CWD;
  if (env.npm_command !== 'exec' || !typed || !isAbsolute(typed)) return undefined;
  const down = relative(resolve(cwd), resolve(typed));
  // Below the folder npm chose: not itself, not above it, not beside it.
  if (down === '' || down === '..' || down.startsWith(`..${sep}`) || isAbsolute(down)) return undefined;
  return resolve(typed);
}
