// The drift report as one self-contained HTML page (inline style and script, no network): a
// summary of the counts, a filter by class, and each changed answer side by side, old and new.
// Every piece of recorded text is escaped; the page's own script only shows and hides entries.

import { DRIFT_CLASSES } from './classify.ts';
import { escapeHtml as esc } from './escape.ts';
import { entryHost, failOnText, manyHosts, type DriftEntry, type DriftReport } from './report.ts';
import { toleranceText, usageCounts } from './usage.ts';
import { uncomparedPhrase } from './uncompared.ts';
import { showsChange } from './text-diff.ts';

const pretty = (v: unknown) => (v === undefined ? '' : (JSON.stringify(v, null, 2) ?? ''));

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1d1d1f;background:#fff}
h1{font-size:1.3rem}h2{font-size:1rem;margin:.2rem 0}
#summary{display:flex;flex-wrap:wrap;gap:.5rem;margin:.8rem 0}
.count{border:1px solid #ccc;border-radius:6px;padding:.3rem .6rem}.count b{font-size:1.1rem}
#filters label{margin-right:.8rem;white-space:nowrap}
.entry{border:1px solid #ddd;border-radius:6px;padding:.6rem .8rem;margin:.8rem 0}
.entry[hidden]{display:none}
.tag{display:inline-block;border-radius:4px;padding:0 .35rem;margin-right:.25rem;font-size:.8rem;color:#fff;background:#666}
.tag.status,.tag.tool-calls{background:#b3261e}.tag.structure{background:#7b1fa2}.tag.finish{background:#b26a00}
.tag.text{background:#8a6d00}.tag.stream{background:#00796b}.tag.benign{background:#2e7d32}.tag.identical{background:#9e9e9e}
.tag.added,.tag.removed{background:#1565c0}
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}
.sbs>div{min-width:0}.sbs h3{font-size:.8rem;margin:.3rem 0;color:#555}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.5rem;border-radius:4px;margin:0}
del{background:#ffd7d5;text-decoration:line-through}ins{background:#ccf0d4;text-decoration:none}
.muted{color:#666}ul{margin:.3rem 0}
`;

// Shows an entry when one of its classes is ticked; the counts stay those of the whole report.
const SCRIPT = `
const boxes=[...document.querySelectorAll('#filters input')];
function apply(){const on=new Set(boxes.filter(b=>b.checked).map(b=>b.value));let shown=0;
for(const e of document.querySelectorAll('.entry')){const vis=e.dataset.classes.split(' ').some(c=>on.has(c));e.hidden=!vis;if(vis)shown++;}
document.getElementById('shown').textContent=String(shown);}
for(const b of boxes)b.addEventListener('change',apply);apply();
`;

function sideBySide(oldHtml: string, newHtml: string): string {
  return `<div class="sbs"><div><h3>old</h3><pre class="old">${oldHtml}</pre></div><div><h3>new</h3><pre class="new">${newHtml}</pre></div></div>`;
}

function entryHtml(e: DriftEntry, hosts: boolean): string {
  const d = e.details;
  const classes = e.classes.length ? e.classes : [e.status];
  const idx = e.new?.index ?? e.old?.index;
  const model = (e.new ?? e.old)?.model;
  // The host when the recordings were made for several hosts (see manyHosts).
  const host = hosts ? ` · ${esc(entryHost(e) ?? '(no host)')}` : '';
  let body = `<h2>${classes.map((c) => `<span class="tag ${esc(c)}">${esc(c)}</span>`).join('')} ${esc(e.tape)} #${idx} <span class="muted">${esc(e.route)}${model ? ` · ${esc(model)}` : ''}${host}</span></h2>`;
  body += `<p class="summary">${esc(e.summary)}</p>`;
  if (e.requestChange.length) body += `<p>Request changed: ${e.requestChange.map(esc).join('; ')}</p>`;
  if (d.status) body += sideBySide(`status ${d.status.old}`, `status ${d.status.new}`);
  if (d.error) body += sideBySide(esc(d.error.old ?? 'no error'), esc(d.error.new ?? 'no error'));
  if (d.structure) body += `<ul class="structure">${d.structure.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>`;
  if (d.toolCalls) {
    for (const t of d.toolCalls) {
      body += `<p>tool call ${t.index} <code>${esc(t.name)}</code>: ${esc(t.change)}${t.oldName ? ` (was <code>${esc(t.oldName)}</code>)` : ''}</p>`;
      body += sideBySide(esc(t.oldName ?? (t.change === 'added' ? '' : t.name)) + '\n' + esc(pretty(t.oldArguments)), esc(t.change === 'removed' ? '' : t.name) + '\n' + esc(pretty(t.newArguments)));
      if (t.changes?.length) body += `<ul>${t.changes.map((c) => `<li><code>${esc(c.path || '(arguments)')}</code> ${esc(c.kind)}</li>`).join('')}</ul>`;
    }
  }
  if (d.finish) body += sideBySide(esc(`finish: ${d.finish.old.join(', ')}${d.finish.oldRefusal ? `\nrefusal: ${d.finish.oldRefusal}` : ''}`), esc(`finish: ${d.finish.new.join(', ')}${d.finish.newRefusal ? `\nrefusal: ${d.finish.newRefusal}` : ''}`));
  if (d.text && showsChange(d.text.ops)) {
    let o = '';
    let n = '';
    for (const [op, t] of d.text.ops) {
      if (op !== '+') o += op === '-' ? `<del>${esc(t)}</del>` : esc(t);
      if (op !== '-') n += op === '+' ? `<ins>${esc(t)}</ins>` : esc(t);
    }
    body += `<p class="muted">text ${Math.round(d.text.similarity * 100)}% similar</p>${sideBySide(o, n)}`;
  }
  if (d.usage) body += `<p class="usage">usage: ${esc(usageCounts(d.usage, '→'))}, beyond ${esc(toleranceText(d.usage))}${d.text ? '' : '; the text is the same'}</p>`;
  if (d.stream) body += sideBySide(esc(`${d.stream.oldEvents} events\n${d.stream.oldOrder.join(' ')}`), esc(`${d.stream.newEvents} events\n${d.stream.newOrder.join(' ')}`));
  if (d.benign) body += `<p class="muted">noise: ${d.benign.map(esc).join('; ')}</p>`;
  return `<section class="entry" data-classes="${esc(classes.join(' '))}" data-tape="${esc(e.tape)}" data-index="${idx}">${body}</section>`;
}

/**
 * The report as one self-contained HTML page (usable offline).
 *
 * @example
 * writeFileSync('report.html', renderHtml(report))
 */
export function renderHtml(r: DriftReport): string {
  const s = r.summary;
  const hosts = manyHosts(r);
  const kinds = [...DRIFT_CLASSES, 'added', 'removed'] as const;
  const count = (k: (typeof kinds)[number]) => (k === 'added' ? s.added : k === 'removed' ? s.removed : s.classes[k]);
  const summary = kinds.map((k) => `<span class="count" data-class="${k}"><b>${count(k)}</b> ${k}</span>`).join('');
  // Identical and benign pairs start hidden: the page opens on what changed.
  const filters = kinds
    .filter((k) => count(k) > 0)
    .map((k) => `<label><input type="checkbox" value="${k}"${k === 'identical' || k === 'benign' ? '' : ' checked'}> ${k} (${count(k)})</label>`)
    .join('');
  const unseen = uncomparedPhrase(s.notCompared ?? []);
  const verdict = s.failing
    ? `<p id="verdict" class="failing"><b>${s.failing} failing</b> (fail-on: ${esc(failOnText(s.failOn))})${unseen ? `; ${esc(unseen)}` : ''}</p>`
    : unseen
      ? `<p id="verdict">Nothing fails among the compared recordings (fail-on: ${esc(failOnText(s.failOn))}); <b>${esc(unseen)}</b>.</p>`
      : `<p id="verdict">Nothing fails (fail-on: ${esc(failOnText(s.failOn))}).</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>tapedeck diff: ${esc(r.old)} → ${esc(r.new)}</title><style>${STYLE}</style></head>
<body>
<h1>tapedeck diff: <code>${esc(r.old)}</code> → <code>${esc(r.new)}</code></h1>
<p><span id="pairs">${s.pairs}</span> pairs, ${s.added} added, ${s.removed} removed.</p>
${verdict}
<div id="summary">${summary}</div>
<div id="filters">${filters}</div>
<p class="muted"><span id="shown">${r.entries.length}</span> shown</p>
<main>
${r.entries.map((e) => entryHtml(e, hosts)).join('\n')}
</main>
<script>${SCRIPT}</script>
</body></html>
`;
}
