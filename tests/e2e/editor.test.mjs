// The code editor and the source view, end to end: CodeMirror with highlighting for every language, the error
// marked where it is, readonly when a lab locks the pattern, the plain text box when the editor script is
// missing, and the source view's numbers per line against the instruction list for a real kernel (the CUDA
// samples' transpose as CUDA, its PTX and its SASS). Screenshots go to test-results/ (or $SHOTS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';
import { patternText, pastePattern } from './pattern.mjs';

const SHOTS = process.env.SHOTS ?? new URL('../../test-results/', import.meta.url).pathname;
const KERNELS = new URL('../data/kernels/transpose/', import.meta.url);

let site, browser, base;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite();
  ({ browser, base } = site);
});
after(async () => { await site?.close(); });

async function open(url = base, viewport = { width: 1280, height: 720 }, setup) {
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to|warpscope:/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  if (setup) await setup(page);
  await page.goto(url);
  await page.waitForSelector('svg#figure');
  return { page, problems };
}
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
}
const number = (s) => Number(String(s).replace(/,/g, ''));

test('the pattern is a code editor: highlighted in every language, error marked at its line:column', async () => {
  const { page, problems } = await open();
  await page.waitForSelector('#pane-a .cm-editor #pattern.cm-content');
  assert.equal(await page.locator('textarea#pattern').count(), 0, 'the editor replaced the text box');
  // Typing goes through the editor into the page's state: BPG 9.2.1.3, stride 2 is 8 sectors.
  await page.fill('#pattern', '8*lane');
  await settled(page);
  assert.equal(await page.locator('#pane-a [data-metric="sectors"]').textContent(), '8');
  assert.equal(await patternText(page), '8*lane');
  // The expression's built-in variable and its number are highlighted.
  assert.equal(await page.locator('#pattern .tok-variableName2').first().textContent(), 'lane');
  assert.equal(await page.locator('#pattern .tok-number').first().textContent(), '8');

  // The error `4*lane + )` is at 1:10 (the page's error says so); the editor marks that character and its line.
  await page.fill('#pattern', '4*lane + )');
  await settled(page);
  assert.match(await page.locator('#error').textContent(), /1:10/);
  await page.waitForSelector('#pattern .cm-lintRange-error');
  assert.equal(await page.locator('#pattern .cm-lintRange-error').textContent(), ')');
  assert.equal(await page.locator('#pane-a .cm-lint-marker-error').count(), 1, 'a marker in the gutter');
  await page.screenshot({ path: join(SHOTS, 'editor-error.png') });
  await page.fill('#pattern', '4*lane');
  await settled(page);
  assert.equal(await page.locator('#pattern .cm-lintRange-error').count(), 0, 'fixed: the mark goes');

  // A multi-line CUDA error: its line and column in the editor.
  await page.selectOption('#lang', 'cuda');
  await pastePattern(page, 'float *in;\nfloat x = in[threadIdx.x * ];\n');
  await settled(page);
  const err = await page.locator('#error').textContent();
  const [, line, col] = err.match(/(\d+):(\d+)/).map(Number);
  assert.equal(line, 2, err);
  const marked = await page.locator('#pattern .cm-lintRange-error').evaluate((el) => {
    const lines = [...document.querySelectorAll('#pattern .cm-line')];
    const at = lines.findIndex((l) => l.contains(el));
    const before = document.createRange();
    before.setStart(lines[at], 0);
    before.setEndBefore(el);
    return [at + 1, before.toString().length + 1];
  });
  assert.deepEqual(marked, [line, col], 'the mark sits where the error says');

  // Every language is highlighted by its own grammar.
  const cases = [
    ['transpose-naive', '.tok-keyword', /^for$/],
    ['transpose-naive', '.tok-typeName', /^float$/],
    ['ptx-transpose-naive', '.tok-keyword', /^ld\.global/],
  ];
  for (const [preset, sel, re] of cases) {
    await page.selectOption('#preset', preset);
    await settled(page);
    const words = await page.locator(`#pattern ${sel}`).allTextContents();
    assert.ok(words.some((w) => re.test(w)), `${preset}: ${words.slice(0, 12)}`);
  }
  // The instruction the figure shows is marked in the editor at its line (moved in the next animation frame),
  // and the mark follows the choice: the PTX transpose's load and store are on different lines.
  const markedLine = () => page.locator('#pattern .cm-line').evaluateAll((ls) => ls.findIndex((l) => l.classList.contains('cm-instr-line')) + 1);
  const marks = [];
  for (const k of [0, 1]) {
    await page.locator('#pane-a ol.instructions li').nth(k).locator('button').click();
    await settled(page);
    const n = Number((await page.locator('#pane-a ol.instructions li.selected .access').textContent()).match(/^line (\d+)/)[1]);
    await page.waitForFunction((n) => {
      const ls = [...document.querySelectorAll('#pattern .cm-line')];
      return ls.findIndex((l) => l.classList.contains('cm-instr-line')) + 1 === n;
    }, n);
    assert.equal(await page.locator('#pattern .cm-instr-line').count(), 1, 'one line marked');
    marks.push(await markedLine());
  }
  assert.notEqual(marks[0], marks[1], `the mark moved: ${marks}`);
  await page.selectOption('#lang', 'sass');
  await pastePattern(page, '/*0000*/ MOV R1, c[0x0][0x28] ;\n/*0010*/ @!P0 LDG.E R2, [R4.64] ;\n');
  assert.deepEqual(await page.locator('#pattern .tok-keyword').allTextContents(), ['MOV', 'LDG.E']);
  assert.ok((await page.locator('#pattern .tok-variableName').allTextContents()).includes('R4.64'));
  assert.deepEqual(await page.locator('#pattern .tok-meta').allTextContents(), ['@!P0']);
  await page.selectOption('#lang', 'addresses');
  const warp = Array.from({ length: 32 }, (_, i) => (i === 1 ? '-' : `0x${(0x1000 + 4 * i).toString(16)}`));
  await pastePattern(page, `LDG.E.32\n${warp.join(' ')} # lane 1 inactive\n`);
  await settled(page);
  assert.equal(await page.locator('#error').count(), 0);
  const numbers = await page.locator('#pattern .tok-number').allTextContents();
  assert.deepEqual([numbers.length, numbers[0], numbers[30]], [31, '0x1000', '0x107c']);
  assert.deepEqual(await page.locator('#pattern .tok-atom').allTextContents(), ['-']);
  assert.deepEqual(await page.locator('#pattern .tok-comment').allTextContents(), ['# lane 1 inactive']);
  assert.deepEqual(problems, [], 'no script error, no CSP violation');
  await page.close();
});

test('the dark theme styles the editor; a locked pattern is read-only; keys in the editor do not step', async () => {
  const { page, problems } = await open(`${base}?lab=memory`);
  await page.waitForSelector('#lab #goals li');
  // Exercise 4 locks the pattern.
  await page.click('#exercises li:nth-child(4) button');
  await settled(page);
  const before = await patternText(page);
  assert.equal(await page.locator('#pattern').getAttribute('aria-readonly'), 'true');
  await page.click('#pattern');
  await page.keyboard.type('junk');
  assert.equal(await patternText(page), before, 'typing changes nothing');
  // Arrow keys move the caret in the editor; they do not step the animation.
  const step = await page.locator('#step-label').textContent();
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Home');
  assert.equal(await page.locator('#step-label').textContent(), step);
  await page.click('#theme');
  const [bg, fg] = await page.locator('#pane-a .cm-editor').evaluate((el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]);
  assert.equal(bg, 'rgb(31, 35, 41)', 'the dark panel colour');
  assert.equal(fg, 'rgb(236, 239, 243)', 'the dark text colour');
  assert.deepEqual(problems, []);
  await page.close();
});

test('without the editor script the plain text box works', async () => {
  const { page, problems } = await open(base, undefined, (p) => p.route('**/warpscope-editor.js', (r) => r.abort()));
  assert.equal(await page.locator('textarea#pattern').count(), 1);
  await page.fill('#pattern', '8*lane');
  await settled(page);
  assert.equal(await page.locator('#pane-a [data-metric="sectors"]').textContent(), '8');
  assert.deepEqual(problems.filter((p) => !/warpscope-editor\.js|Failed to load resource/.test(p)), []);
  await page.close();
});

// Reads the source view: per line with instructions, its cells and its instructions' op names.
async function sourceRows(page) {
  return page.locator('#source-view tr.has-instr').evaluateAll((rows) => rows.map((r) => ({
    line: Number(r.dataset.line),
    heat: Number(r.dataset.heat),
    code: r.querySelector('td.code').textContent,
    ops: [...r.querySelectorAll('.op-chip')].map((b) => b.textContent),
    cells: Object.fromEntries([...r.querySelectorAll('td[data-col]')].map((c) => [c.dataset.col, c.textContent])),
  })));
}

for (const [lang, file] of [['cuda', 'transpose.cu'], ['ptx', 'nvrtc_sm_80.ptx'], ['sass', 'nvrtc_sm_80.sass']]) {
  test(`source view of the CUDA samples' transpose (${lang}): each line's numbers are its instructions' sums`, async () => {
    const { page, problems } = await open();
    const text = await readFile(new URL(file, KERNELS), 'utf8');
    await page.selectOption('#lang', lang);
    await page.fill('#block', '32x16');
    await page.fill('#grid', '1');
    await pastePattern(page, text);
    await settled(page);
    // The naive transpose: its column writes are the worst line.
    const naive = await page.locator('#kernel option').evaluateAll((os) => os.find((o) => o.textContent.includes('transposeNaive')).value);
    await page.selectOption('#kernel', naive);
    await settled(page);
    assert.equal(await page.locator('#error').count(), 0);
    await page.click('#show-source');
    const rows = await sourceRows(page);
    const list = await page.locator('#pane-a ol.instructions li').count();
    assert.ok(rows.length > 0);
    assert.equal(rows.flatMap((r) => r.ops).length, list, 'every instruction of the list is on one line');
    const lines = text.split('\n');
    let chip = 0;
    let worst = { excess: -1 };
    for (const row of rows) {
      assert.equal(row.code.trim(), lines[row.line - 1].trim(), `line ${row.line}: the pasted text (less the shared indentation)`);
      const sum = { requests: 0, sectors: 0, wavefronts: 0, bank_conflicts: 0 };
      for (let k = 0; k < row.ops.length; k++, chip++) {
        // Choosing the instruction in the source view selects it in the list and the figure.
        await page.locator('#source-view .op-chip').nth(chip).click();
        await settled(page);
        const access = await page.locator('#pane-a ol.instructions li.selected .access').textContent();
        assert.match(access, new RegExp(`^line ${row.line}\\b`), `the list says line ${row.line}: ${access}`);
        assert.equal(await page.locator('#pane-a ol.instructions li.selected .op').textContent(), row.ops[k]);
        for (const m of Object.keys(sum)) {
          const el = page.locator(`#pane-a .metrics [data-metric="${m}"]`);
          if (await el.count()) sum[m] += number(await el.textContent());
        }
        assert.equal(await page.locator('#source-view tr.selected').getAttribute('data-line'), String(row.line));
      }
      if (sum.requests) {
        assert.equal(number(row.cells.sectors), sum.sectors, `line ${row.line}: sectors`);
        assert.equal(row.cells.sectors_per_request, (sum.sectors / sum.requests).toFixed(2), `line ${row.line}: sectors / request`);
      } else assert.equal(row.cells.sectors, '');
      if (row.cells.wavefronts) {
        assert.equal(number(row.cells.wavefronts), sum.wavefronts, `line ${row.line}: wavefronts`);
        assert.equal(number(row.cells.bank_conflicts), sum.bank_conflicts, `line ${row.line}: conflicts`);
      }
      const excess = number(row.cells.excess_sectors || 0) + number(row.cells.bank_conflicts || 0);
      if (excess > worst.excess) worst = { excess, row };
      assert.equal(row.heat === 0, excess === 0, `line ${row.line}: coloured exactly when it has excess`);
    }
    assert.equal(worst.row.heat, 4, 'the worst line has the hottest colour');
    await page.locator('#source-view').screenshot({ path: join(SHOTS, `source-view-${lang}.png`) });
    assert.deepEqual(problems, []);
    await page.close();
  });
}
