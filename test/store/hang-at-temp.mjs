// Preloaded (`node --import`) into a tapedeck process: the first temp file it opens beside a
// tape (`.<tape>.<pid>.<hex>.tmp`, a rewrite's; `.<tape>.<pid>.<hex>.import.tmp`, an import's)
// is created, then the process says TEMP on stdout and hangs there, alive (a timer keeps it
// from exiting), so a test can kill it with SIGKILL midway through the rewrite or import.
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

const open = fsp.open;
fsp.open = async (path, ...rest) => {
  const fh = await open(path, ...rest);
  if (/\.tmp$/.test(String(path))) {
    process.stdout.write('TEMP\n');
    await new Promise(() => setInterval(() => {}, 60_000));
  }
  return fh;
};
syncBuiltinESMExports();
