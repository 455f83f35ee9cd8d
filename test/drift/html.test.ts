// The HTML drift report in real headless Chromium: opened from a file with every network request
// refused, its summary counts read back from the DOM equal the report's, the class filter shows
// exactly the entries of the ticked classes, and recorded text is shown as text, never as markup.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIFT_CLASSES } from '../../src/drift/classify.ts';
import { loadPaths } from '../../src/drift/load.ts';
import { renderHtml } from '../../src/drift/render-html.ts';
import { driftReport, type DriftReport } from '../../src/drift/report.ts';
import { launchChromium, skipReason } from '../browser/chromium.ts';
import { recordVariant } from './record.ts';

const reason = skipReason();
if (reason) console.log(reason);

describe.skipIf(reason !== undefined)('the HTML drift report in headless Chromium', () => {
  // Made in beforeAll: a describe's body runs even when the suite is skipped (no Chromium).
  let dir = '';
  let report: DriftReport;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const requested: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-html-'));
    mkdirSync(join(dir, 'old'));
    mkdirSync(join(dir, 'new'));
    for (const v of ['text', 'tool-calls', 'benign', 'finish'] as const) {
      await recordVariant(join(dir, 'old', `${v}.tape`), 'base');
      await recordVariant(join(dir, 'new', `${v}.tape`), v);
    }
    const { before, after } = await loadPaths(join(dir, 'old'), join(dir, 'new'));
    report = driftReport(before.tapes, after.tapes, { old: 'old', new: 'new' });
    browser = await launchChromium();
    // Offline: anything but the page's own file is refused and noted.
    await browser.context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      requested.push(url);
      return route.abort();
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function open(r: DriftReport) {
    const file = join(dir, `report-${Math.random().toString(36).slice(2)}.html`);
    writeFileSync(file, renderHtml(r));
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    return { page, errors };
  }

  it('shows the summary counts of the report, and opens on what changed', async () => {
    const { page, errors } = await open(report);
    for (const c of DRIFT_CLASSES) {
      expect(await page.locator(`#summary [data-class="${c}"] b`).textContent(), c).toBe(String(report.summary.classes[c]));
    }
    expect(await page.locator('#pairs').textContent()).toBe(String(report.summary.pairs));
    expect(report.summary.classes.text).toBeGreaterThan(0);
    expect(report.summary.classes['tool-calls']).toBeGreaterThan(0);
    const changed = report.entries.filter((e) => e.classes.some((c) => c !== 'identical' && c !== 'benign')).length;
    expect(await page.locator('section.entry:visible').count()).toBe(changed);
    expect(await page.locator('#shown').textContent()).toBe(String(changed));
    // Side by side: the old text with its removed words, the new with the added ones.
    const text = page.locator('section.entry[data-classes="text"]').first();
    expect(await text.locator('pre.old del').first().textContent()).toBe('Paris.');
    expect(await text.locator('pre.new ins').first().textContent()).toBe('Paris,');
    expect(errors).toEqual([]);
    expect(requested).toEqual([]);
    await page.close();
  });

  it('the class filter shows exactly the ticked classes', async () => {
    const { page } = await open(report);
    for (const box of await page.locator('#filters input').all()) if (await box.isChecked()) await box.uncheck();
    expect(await page.locator('section.entry:visible').count()).toBe(0);
    await page.locator('#filters input[value="tool-calls"]').check();
    expect(await page.locator('section.entry:visible').count()).toBe(report.summary.classes['tool-calls']);
    for (const s of await page.locator('section.entry:visible').all()) expect((await s.getAttribute('data-classes'))!.split(' ')).toContain('tool-calls');
    await page.locator('#filters input[value="benign"]').check();
    expect(await page.locator('section.entry:visible').count()).toBe(report.summary.classes['tool-calls'] + report.summary.classes.benign);
    await page.locator('#filters input[value="identical"]').check();
    expect(await page.locator('#shown').textContent()).toBe(String(report.summary.classes['tool-calls'] + report.summary.classes.benign + report.summary.classes.identical));
    await page.close();
  });

  it('recorded text is text: markup in an answer is not run or rendered', async () => {
    const hostile = structuredClone(report);
    const e = hostile.entries.find((x) => x.details.text)!;
    e.summary = '<img id="inj1" src="x" onerror="window.hit=1">';
    e.details.text!.ops = [['-', '<b id="inj2">old</b>'], ['+', '</pre><script>window.hit=2</script>']];
    e.tape = '"><i id="inj3">';
    const { page, errors } = await open(hostile);
    expect(await page.locator('#inj1, #inj2, #inj3').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { hit?: number }).hit)).toBeUndefined();
    expect(await page.locator(`section.entry[data-index="${e.new!.index}"] pre.new ins`).first().textContent()).toBe('</pre><script>window.hit=2</script>');
    expect(errors).toEqual([]);
    await page.close();
  });
});
