/**
 * Record runs on a Redis namespace that ended without closing (killed, crashed, exited before
 * close()): the replacement a record run makes at close never happened, so the older recordings
 * of the requests it re-recorded are still there, and replay serves those first. The tape keeps
 * this note in `<tape>.writers/`; a namespace keeps it in its `record-runs` hash (./redis.ts),
 * and this module says it, to a replay, the next writer, and `tapedeck verify`.
 */
import type { StoreWarning } from '../backend.ts';
import { FRAME_HEADER_SIZE, peekFrame } from '../tape-file.ts';
import { byProcess, runsAfterOthers, type WriterInfo } from '../tape-writers.ts';
import type { StoredRecord } from './redis.ts';

const RUN: readonly string[] = ['run'];

/**
 * The notes for the ended record runs `ended` of the namespace at `location` whose recordings
 * follow an older recording of the same request by another run (`records`, in namespace
 * order): a run that left nothing beside an older recording left nothing stale, and is not
 * named. One note per process.
 *
 * @example
 * interruptedRedisRuns('redis://127.0.0.1:6379/0 (namespace ci)', await store.endedRecordRuns(), await store.readAll())
 */
export function interruptedRedisRuns(location: string, ended: readonly { info: WriterInfo }[], records: readonly StoredRecord[]): StoreWarning[] {
  if (ended.length === 0) return [];
  const runs = new Set(ended.map((e) => e.info.run).filter((r): r is string => typeof r === 'string'));
  const recorded: { id: string; run: string }[] = [];
  for (const r of [...records].sort((a, b) => a.seq - b.seq)) {
    let run: unknown;
    try {
      run = peekFrame(r.payload, { offset: -FRAME_HEADER_SIZE, length: r.payload.length + FRAME_HEADER_SIZE }, RUN).run;
    } catch {
      continue;
    }
    if (typeof run === 'string') recorded.push({ id: r.key, run });
  }
  const stale = runsAfterOthers(recorded, runs);
  const named = ended.map((e) => e.info).filter((w) => typeof w.run !== 'string' || stale.has(w.run));
  return byProcess(named).map((ws) => ({ code: 'TAPEDECK_INTERRUPTED_RUN', offset: 0, message: interruptedRedisRunMessage(location, ws) }));
}

/** What one process's ended record runs left in the namespace, and the fix. */
function interruptedRedisRunMessage(location: string, runs: readonly WriterInfo[]): string {
  const pid = runs[0]?.pid;
  const ids = runs.map((w) => w.run).filter((r): r is string => typeof r === 'string');
  const who = [typeof pid === 'number' ? `pid ${pid}` : undefined, ids.length > 0 ? `run${ids.length > 1 ? 's' : ''} ${ids.join(', ')}` : undefined].filter(Boolean).join(', ');
  return `${location}: a record run (${who}) ended without closing the namespace (killed, crashed, exited before close(), or its close could not remove the older recordings). Its recordings are kept, but any older recordings of the same requests it was to replace were not removed, and replay serves those first. Record again (TAPEDECK_MODE=record, or tapedeck serve --mode record) and let it close, to replace them. A test runner that stops it with SIGKILL ends every record run so: in Playwright, give the webServer that starts it gracefulShutdown: { signal: 'SIGTERM', timeout: 15000 } (docs/proxy.md, End-to-end tests).`;
}
