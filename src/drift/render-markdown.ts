// The drift report as Markdown that fits a pull-request comment: the counts, a table of what
// changed, and each change folded in a <details> block.

import { DRIFT_CLASSES } from './classify.ts';
import { escapeHtml, escapeMarkdown, escapeTerminal } from './escape.ts';
import { foldOneSided, isFolded } from './fold.ts';
import { entryHost, failOnText, manyHosts, type DriftEntry, type DriftReport } from './report.ts';
import { inlineDiff, showsChange } from './text-diff.ts';
import { toleranceText, usageCounts } from './usage.ts';
import { uncomparedPhrase } from './uncompared.ts';

// Recorded text as Markdown text; its control characters are shown too, as the report is often
// read in a terminal or a CI log before it is posted.
const cell = (s: string) => escapeMarkdown(escapeTerminal(s));
// A run of backticks longer than any inside, so a code span or block cannot be closed early.
const longestTicks = (s: string) => Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length));
const fence = (s: string) => '`'.repeat(Math.max(2, longestTicks(s)) + 1);
// A code span shows its content as is (backslashes included), so it is delimited, not escaped;
// the spaces keep a backtick at either end from joining the delimiters.
const code = (s: string) => {
  const one = escapeTerminal(s).replace(/\r\n?|\n/g, ' ');
  const ticks = '`'.repeat(longestTicks(one) + 1);
  const pad = one.startsWith('`') || one.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${one}${pad}${ticks}`;
};
const block = (lang: string, s: string) => {
  const f = fence(s);
  return `${f}${lang}\n${s}\n${f}\n`;
};

function detailsOf(e: DriftEntry): string {
  const d = e.details;
  let out = '';
  if (e.requestChange.length) out += `Request changed: ${e.requestChange.map(cell).join('; ')}\n\n`;
  if (d.status) out += `Status ${d.status.old} → ${d.status.new}\n\n`;
  if (d.error) out += `Error: ${cell(d.error.old ?? 'none')} → ${cell(d.error.new ?? 'none')}\n\n`;
  if (d.structure) out += d.structure.map((s) => `- ${cell(s)}`).join('\n') + '\n\n';
  if (d.toolCalls) {
    for (const t of d.toolCalls) {
      out += `- tool call ${t.index} ${code(t.name)}: ${t.change}${t.oldName ? ` (was ${code(t.oldName)})` : ''}\n`;
      if (t.changes) out += t.changes.map((c) => `  - ${code(c.path || '(arguments)')} ${c.kind}: ${cell(JSON.stringify(c.old) ?? '')} → ${cell(JSON.stringify(c.new) ?? '')}`).join('\n') + '\n';
    }
    out += '\n';
  }
  if (d.finish) out += `Finish: ${d.finish.old.map(cell).join(', ') || '-'} → ${d.finish.new.map(cell).join(', ') || '-'}${d.finish.oldRefusal || d.finish.newRefusal ? `; refusal: ${cell(d.finish.oldRefusal ?? '-')} → ${cell(d.finish.newRefusal ?? '-')}` : ''}\n\n`;
  if (d.text && showsChange(d.text.ops)) out += `Text, ${Math.round(d.text.similarity * 100)}% similar (\`[-removed-]{+added+}\`):\n\n${block('text', inlineDiff(d.text.ops.map(([op, t]) => [op, escapeTerminal(t)])))}\n`;
  if (d.usage) out += `Usage: ${usageCounts(d.usage, '→')}, beyond ${toleranceText(d.usage)}${d.text ? '' : '; the text is the same'}.\n\n`;
  if (d.stream) out += `Stream: ${d.stream.oldEvents} → ${d.stream.newEvents} events; order ${d.stream.oldOrder.map(cell).join(' ')} → ${d.stream.newOrder.map(cell).join(' ')}\n\n`;
  if (d.benign) out += `Noise: ${d.benign.map(cell).join('; ')}\n\n`;
  if (!out && e.status !== 'paired') out += `${e.status === 'added' ? 'New' : 'Removed'} recording of ${cell(e.route)}${(e.new ?? e.old)?.model ? ` (${cell((e.new ?? e.old)!.model!)})` : ''}.\n\n`;
  return out;
}

/**
 * The report as Markdown for a pull-request comment.
 *
 * @example
 * writeFileSync('drift.md', renderMarkdown(report))
 */
export function renderMarkdown(r: DriftReport): string {
  const s = r.summary;
  let out = `### tapedeck diff: ${code(r.old)} → ${code(r.new)}\n\n`;
  out += `${s.pairs} pair${s.pairs === 1 ? '' : 's'}, ${s.added} added, ${s.removed} removed. `;
  const unseen = uncomparedPhrase(s.notCompared ?? []);
  if (s.failing) out += `**${s.failing} failing** (fail-on: ${failOnText(s.failOn)}).${unseen ? ` ${cell(unseen)}.` : ''}\n\n`;
  else out += unseen ? `Nothing fails among the compared recordings (fail-on: ${failOnText(s.failOn)}); **${cell(unseen)}**.\n\n` : `Nothing fails (fail-on: ${failOnText(s.failOn)}).\n\n`;
  out += '| class | pairs |\n|---|---:|\n';
  for (const c of DRIFT_CLASSES) if (s.classes[c] > 0) out += `| ${c} | ${s.classes[c]} |\n`;
  // Identical pairs are counted, not listed, but for copies a record run kept: stale, prunable.
  const rows = r.entries.filter((e) => e.primary !== 'identical' || e.kept);
  if (rows.length === 0) return `${out}\nNo answer changed.\n`;
  // The host after the model when the recordings were made for several hosts (see manyHosts).
  const hosts = manyHosts(r);
  out += '\n| class | tape | # | request | what changed |\n|---|---|---:|---|---|\n';
  // Many recordings of a tape added or removed: one row for them (fold.ts), no details each.
  for (const e of foldOneSided(rows)) {
    if (isFolded(e)) {
      out += `| ${e.status} | ${cell(e.tape)} | ${e.first}–${e.last} | ${cell(e.route)} | ${cell(e.summary)} |\n`;
      continue;
    }
    const model = (e.new ?? e.old)?.model;
    const host = hosts ? ` ${cell(entryHost(e) ?? '(no host)')}` : '';
    out += `| ${e.classes.join(', ') || e.status} | ${cell(e.tape)} | ${e.new?.index ?? e.old?.index} | ${cell(e.route)}${model ? ` ${cell(model)}` : ''}${host} | ${cell(e.summary)} |\n`;
  }
  out += '\n';
  for (const e of foldOneSided(rows)) {
    if (isFolded(e) || e.primary === 'benign' || e.primary === 'identical') continue;
    out += `<details><summary>${escapeHtml(escapeTerminal(e.tape))} #${e.new?.index ?? e.old?.index}: ${e.classes.join(', ') || e.status}</summary>\n\n${detailsOf(e)}</details>\n\n`;
  }
  return out;
}
