// In the lecture hall and the lab (issue 28): slides that read from the back row, labs that fit a 1366x768
// screen, and the small things a user meets (keys, history, stale errors, the editor's Tab, dark mode, links,
// export, the phone), on the built site (dist/). Screenshots go to test-results/ (or $SHOTS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';
import { pastePattern } from './pattern.mjs';

const SHOTS = process.env.SHOTS ?? new URL('../../test-results/', import.meta.url).pathname;
const REVEAL = new URL('../../node_modules/reveal.js/dist/', import.meta.url).pathname;
let site, browser, base;

// A reveal.js deck (its default 960x700 slides) served beside the site: two slides, each with the embed
// code the page offers, and a last slide to move on to.
const deck = (frames) => `<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/deck/reveal.css"><link rel="stylesheet" href="/deck/white.css"></head>
<body><div class="reveal"><div class="slides">
${frames.map((f, k) => `<section id="s${k}">${f.replace('<iframe ', `<iframe id="f${k}" `)}</section>`).join('\n')}
<section id="end"><h2>the end</h2></section>
</div></div><script src="/deck/reveal.js"></script>
<script>Reveal.initialize({ hash: false, transition: 'none' });</script></body></html>`;

let frames = [];
before(async () => {
  const files = {
    '/deck/reveal.js': { type: 'text/javascript', body: await readFile(join(REVEAL, 'reveal.js')) },
    '/deck/reveal.css': { type: 'text/css', body: await readFile(join(REVEAL, 'reveal.css')) },
    '/deck/white.css': { type: 'text/css', body: await readFile(join(REVEAL, 'theme/white.css')) },
  };
  // The deck's page is written once the embed codes are known (see the slides test).
  files['/deck/index.html'] = { type: 'text/html', get body() { return deck(frames); } };
  site = await startSite({ files });
  ({ browser, base } = site);
  await mkdir(SHOTS, { recursive: true });
});
after(async () => { await site?.close(); });

async function open(path = '', options = {}) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, ...options });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  await page.goto(base + path);
  await page.waitForSelector('svg#figure');
  await settled(page);
  return { page, problems };
}
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
  await page.waitForSelector('svg#figure');
}
const box = (page, sel) => page.locator(sel).first().evaluate((e) => {
  const r = e.getBoundingClientRect();
  return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height };
});
// The size in CSS pixels of the figure's labels (24 units in a 1200-unit-wide scene).
const labelPx = (page, sel = 'svg#figure') => page.locator(sel).first().evaluate((svg) => 24 * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width);

test('a normal visit logs no error or warning, keys included; space plays after an instruction was clicked', async () => {
  const { page, problems } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  // The list's button keeps the focus after the click; the footer says space plays.
  await page.locator('.instructions button').nth(2).click();
  await settled(page);
  assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'BUTTON');
  await page.keyboard.press('Home');
  await page.keyboard.press(' ');
  assert.equal(await page.getAttribute('#play', 'aria-label'), 'pause', 'space plays');
  await page.keyboard.press(' ');
  assert.equal(await page.getAttribute('#play', 'aria-label'), 'play', 'and pauses');
  for (const k of ['ArrowRight', 'ArrowLeft', 'PageDown', 'End', 'Home']) await page.keyboard.press(k);
  // Chromium warns on every key a passive listener tries to keep from scrolling: none here.
  assert.deepEqual(problems, []);
  await page.close();
});

test('a fresh visit follows the system dark setting; a link keeps its own theme', async () => {
  const { page } = await open('', { colorScheme: 'dark' });
  assert.ok(await page.locator('.app.theme-dark').count(), 'dark by the system setting');
  const link = await page.inputValue('#share-link');
  await page.close();
  const light = await open('', { colorScheme: 'light' });
  assert.ok(await light.page.locator('.app.theme-light').count(), 'light by the system setting');
  // The dark visit's link opens dark in a light system.
  await light.page.goto(link);
  await light.page.reload();
  await settled(light.page);
  assert.ok(await light.page.locator('.app.theme-dark').count(), 'the link carries dark');
  await light.page.close();
});

test('a link cut short says so in words', async () => {
  const { page } = await open();
  await page.selectOption('#preset', 'strided');
  await settled(page);
  const link = await page.inputValue('#share-link');
  await page.close();
  // Opened as someone who was sent it opens it: a fresh page.
  for (const cut of [1, 2, 3, 7]) {
    const fresh = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await fresh.goto(link.slice(0, link.length - cut));
    await fresh.waitForSelector('#notice');
    const text = await fresh.textContent('#notice');
    assert.match(text, /this link is damaged or cut short/);
    assert.doesNotMatch(text, /symbol|0b[01]|decoded as/, text);
    await fresh.close();
  }
});

test('each view change is a history entry: Back and Forward walk through them', async () => {
  const { page } = await open();
  for (const p of ['strided', 'scattered', 'broadcast']) {
    await page.selectOption('#preset', p);
    await settled(page);
  }
  await page.selectOption('#cc', '7.5');
  await settled(page);
  const cc = () => page.inputValue('#cc');
  const preset = () => page.inputValue('#preset');
  await page.goBack();
  await settled(page);
  assert.equal(await cc(), '8.0', 'Back undoes the CC');
  await page.goBack();
  await settled(page);
  assert.equal(await preset(), 'scattered');
  await page.goBack();
  await settled(page);
  assert.equal(await preset(), 'strided');
  assert.ok(page.url().startsWith(base), 'still on the site');
  await page.goForward();
  await settled(page);
  assert.equal(await preset(), 'scattered', 'Forward redoes');
  await page.close();
});

test('compare offers the same GPU for another pattern beside another GPU', async () => {
  const { page } = await open();
  await page.selectOption('#cc', '8.6');
  await settled(page);
  await page.click('#compare-pattern');
  await settled(page);
  assert.equal(await page.inputValue('#cc-b'), '8.6', 'the same GPU');
  assert.doesNotMatch(await page.textContent('#compare-note'), /follows its edits/, 'a pattern of its own');
  await page.click('#compare');
  await settled(page);
  await page.click('#compare');
  await settled(page);
  // Another GPU: 8.6's previous generation, Turing.
  assert.equal(await page.inputValue('#cc-b'), '7.5', 'another GPU: the previous generation');
  await page.close();
});

test('an error about a line the new text does not have is gone as soon as the text is replaced', async () => {
  const { page } = await open();
  await page.selectOption('#lang', 'cuda');
  await settled(page);
  const long = `${'// a comment\n'.repeat(40)}float *a;\nfloat x = a[threadIdx.x +];\n`;
  await pastePattern(page, long);
  await page.waitForSelector('#error');
  assert.match(await page.textContent('#error'), /pattern 42:/);
  await page.selectOption('#preset', 'aos-vs-soa');
  // Right away, before the new text's answer: the stale error is not shown.
  assert.equal(await page.locator('#error').count(), 0);
  await page.close();
});

test('the editor says how Tab leaves it while it has the focus', async () => {
  const { page } = await open();
  await page.waitForSelector('.cm-content');
  assert.equal(await page.locator('#pattern-keys').isVisible(), false, 'hidden until the editor has the focus');
  await page.locator('.cm-content').first().click();
  assert.equal(await page.locator('#pattern-keys').isVisible(), true);
  assert.match(await page.textContent('#pattern-keys'), /Esc then Tab leaves the editor/);
  assert.equal(await page.getAttribute('.cm-content', 'aria-describedby'), 'pattern-keys');
  // Esc, then Tab: the focus moves on.
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('cm-content')), false);
  await page.close();
});

test('the source view shows every character of the code at 1920x1080', async () => {
  const { page } = await open('', { viewport: { width: 1920, height: 1080 } });
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.click('#show-source');
  await page.waitForSelector('.source-table');
  const fit = await page.locator('.source-scroll').evaluate((s) => ({ scroll: s.scrollWidth, client: s.clientWidth }));
  assert.ok(fit.scroll <= fit.client + 1, `the table fits its box: ${JSON.stringify(fit)}`);
  const code = await box(page, '.source-table td.code');
  assert.ok(code.width >= 400, `the code column is ${code.width} px wide`);
  await page.screenshot({ path: join(SHOTS, 'hall-source-view-1920.png') });
  await page.close();
});

test('all steps shows its progress and can be cancelled', async () => {
  const { page, problems } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.locator('.instructions button').nth(2).click();
  await settled(page);
  await page.click('#export-frames');
  await page.waitForSelector('#export-progress');
  assert.match(await page.textContent('#export-progress'), /frame \d+ of 33/);
  assert.equal(await page.locator('#export-frames').isDisabled(), true, 'not started twice');
  await page.click('#export-cancel');
  await page.waitForSelector('#notice');
  assert.match(await page.textContent('#notice'), /Export cancelled/);
  assert.equal(await page.locator('#export-progress').count(), 0);
  assert.equal(await page.locator('#export-frames').isDisabled(), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('on a phone the figure comes first, under the player, at a readable size', async () => {
  const { page } = await open('', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const f = await box(page, 'svg#figure');
  assert.ok(f.top <= 300, `the figure starts at ${f.top}`);
  const px = await labelPx(page);
  assert.ok(px >= 12, `its labels are ${px.toFixed(1)} px`);
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(sideways, 0, 'the page itself does not scroll sideways');
  await page.screenshot({ path: join(SHOTS, 'hall-phone-390.png') });
  await page.close();
});

test('every lab exercise at 1366x768: task, control, goals and figure on one screen, opening on its instruction', async () => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  for (const lab of ['memory', 'tensor-core-smem', 'caches']) {
    await page.goto(`${base}?lab=${lab}`);
    await page.waitForSelector('#lab #goals li');
    await settled(page);
    const n = await page.locator('#exercises button').count();
    for (let k = 0; k < n; k++) {
      await page.locator('#exercises button').nth(k).click();
      await page.waitForSelector('#lab #goals li');
      await settled(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      // The control to change: the pattern's editor, or when the pattern is locked the first setting that is not.
      const control = await page.evaluate(() => {
        const editor = document.querySelector('.pane-a .cm-content:not([aria-readonly="true"]), .pane-a textarea.pattern:not([readonly])');
        const setting = [...document.querySelectorAll('.pane-a .inputs select, .pane-a .inputs input')].find((e) => !e.disabled);
        const el = editor ?? setting;
        const r = el.getBoundingClientRect();
        return { what: editor ? 'editor' : el.id, top: r.top, bottom: Math.min(r.bottom, r.top + 40) };
      });
      const goals = await box(page, '#goals');
      const task = await box(page, '#task');
      // With the memory system on, its chart (above the warp's figure) is the picture the exercise is about.
      const figure = await box(page, (await page.locator('#memory-chart').count()) ? '#memory-chart' : 'svg#figure');
      const where = `${lab} exercise ${k + 1}: task ${task.top}, ${control.what} ${control.top}, goals ${goals.bottom}, figure ${figure.top}`;
      assert.ok(task.top >= 0 && goals.bottom <= 768, where);
      assert.ok(control.top >= 0 && control.bottom <= 768, where);
      assert.ok(figure.top >= 0 && figure.top <= 768 - 100, where);
      await page.screenshot({ path: join(SHOTS, `hall-lab-${lab}-${k + 1}-1366x768.png`) });
    }
  }
  // The transpose exercise opens on its conflicting shared read, not on the global load.
  await page.goto(`${base}?lab=memory`);
  await page.waitForSelector('#lab #goals li');
  await page.locator('#exercises button').nth(4).click();
  await settled(page);
  assert.match(await page.textContent('.instructions li.selected .op'), /^LDS/);
  await page.close();
});

test('slides: a reveal.js deck at 1280x720 with two 960x600 embeds shows each whole and hands the clicker on', async () => {
  // The embed codes the page offers for the naive transpose's 32-way column read and for an atomic histogram.
  const { page } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.locator('.instructions button').nth(2).click();
  await settled(page);
  const conflict = await page.getAttribute('#copy-embed', 'title');
  await page.selectOption('#preset', 'atomics-global');
  await settled(page);
  const histogram = await page.getAttribute('#copy-embed', 'title');
  await page.close();
  for (const code of [conflict, histogram]) {
    assert.match(code, /\?embed=slides#/);
    assert.match(code, /width="960"/);
    const h = Number(/height="(\d+)"/.exec(code)[1]);
    assert.ok(h <= 600, `the frame (${h} px) fits a 700-px reveal.js slide under its title`);
  }
  // As a teacher lays them out: 960x600 frames.
  frames = [conflict, histogram].map((c) => c
    .replace(/src="[^"]*\?/, (m) => m.replace(/^src="https?:\/\/[^/]+\//, 'src="/'))
    .replace(/height="\d+"/, 'height="600"'));

  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    const deckPage = await browser.newPage({ viewport: { width: w, height: h } });
    await deckPage.goto(`${base}deck/index.html`);
    await deckPage.waitForFunction(() => window.Reveal?.isReady());
    for (const [k, what] of [[0, 'the 32-way conflict'], [1, 'the atomic histogram']]) {
      await deckPage.evaluate((k) => window.Reveal.slide(k), k);
      const frame = deckPage.frameLocator(`#f${k}`);
      await frame.locator('svg#figure').waitFor();
      await frame.locator('#metric-line').filter({ hasText: /\S/ }).waitFor();
      await deckPage.waitForTimeout(300);
      const zoom = await deckPage.locator(`#f${k}`).evaluate((f) => f.getBoundingClientRect().width / f.offsetWidth);
      // The whole figure and its metric line inside the frame.
      const inside = await frame.locator('body').evaluate(() => {
        const r = (s) => document.querySelector(s).getBoundingClientRect();
        const f = r('svg#figure'); const m = r('#metric-line'); const c = r('#caption');
        const fits = (b) => b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight + 0.5 && b.right <= innerWidth + 0.5;
        return { figure: fits(f), metric: fits(m), caption: fits(c), label: 24 * f.width / document.querySelector('svg#figure').viewBox.baseVal.width };
      });
      assert.ok(inside.figure && inside.metric && inside.caption, `${w}x${h}, ${what}: ${JSON.stringify(inside)}`);
      const px = (sel) => frame.locator(sel).evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
      const caption = (await px('#caption')) * zoom;
      const metric = (await px('#metric-line')) * zoom;
      console.log(`measured: ${w}x${h} slide, ${what}: caption ${caption.toFixed(1)} px, metric line ${metric.toFixed(1)} px, figure labels ${(inside.label * zoom).toFixed(1)} px`);
      assert.ok(caption >= 18 && metric >= 18, `${what}: caption ${caption} px, metric line ${metric} px`);
      if (k === 1) {
        // An atomic's line leads with its read-modify-writes and the longest chain on one address.
        assert.match(await frame.locator('#metric-line').textContent(), /^256 read-modify-writes, at most 4 in series on one address · RED\.E\.ADD/);
      }
      await deckPage.screenshot({ path: join(SHOTS, `hall-deck-${w}x${h}-slide${k + 1}.png`) });
    }
    // The presenter arrives on the first slide and only presses the clicker's "next" (PageDown): the figure
    // takes the keys on arrival, starts at step 0, steps, and at its last step hands the key to the deck.
    await deckPage.evaluate(() => window.Reveal.slide(2));
    await deckPage.evaluate(() => window.Reveal.slide(0));
    const first = deckPage.frameLocator('#f0');
    await first.locator('#step-label').filter({ hasText: /^0 \// }).waitFor();
    await deckPage.waitForFunction(() => document.activeElement?.id === 'f0', null, { timeout: 5000 });
    // reveal.js takes the focus back from an iframe once in its first second: the figure keeps it.
    await deckPage.waitForTimeout(1200);
    assert.equal(await deckPage.evaluate(() => document.activeElement?.id), 'f0', 'the figure has the keys');
    await deckPage.keyboard.press('PageDown');
    await deckPage.keyboard.press('PageDown');
    assert.match(await first.locator('#step-label').textContent(), /^2 \/ 32$/);
    assert.equal(await deckPage.evaluate(() => window.Reveal.getIndices().h), 0, 'the deck waits');
    for (let i = 2; i < 32; i++) await deckPage.keyboard.press('PageDown');
    assert.match(await first.locator('#step-label').textContent(), /^32 \/ 32$/);
    await deckPage.keyboard.press('PageDown');
    await deckPage.waitForFunction(() => window.Reveal.getIndices().h === 1, null, { timeout: 5000 });
    // The next slide's figure takes the keys in turn.
    const second = deckPage.frameLocator('#f1');
    await deckPage.waitForFunction(() => document.activeElement?.id === 'f1', null, { timeout: 5000 });
    await deckPage.waitForTimeout(1200);
    await deckPage.keyboard.press('PageDown');
    assert.match(await second.locator('#step-label').textContent(), /^1 \//);
    await deckPage.close();
  }
});

test('a lab on a laptop: the editor wraps long lines, the answers file carries the student\'s name', async () => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 }, acceptDownloads: true });
  await page.goto(`${base}?lab=caches`);
  await page.waitForSelector('#lab #goals li');
  await page.locator('#exercises button').nth(1).click();
  await settled(page);
  await page.waitForSelector('.cm-content');
  // A long line (the read-only path spelled with __ldg) stays on screen: the editor wraps it.
  const long = 'out[i] = __ldg(&in[i - 1]) + __ldg(&in[i]) + __ldg(&in[i + 1]); // the three neighbours, read only';
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(`\n${long}`);
  const fit = await page.locator('.cm-scroller').evaluate((s) => ({ scroll: s.scrollWidth, client: s.clientWidth }));
  assert.ok(fit.scroll <= fit.client + 1, `nothing cut: ${JSON.stringify(fit)}`);
  const editor = await box(page, '.cm-editor');
  console.log(`measured: the lab's editor at 1366x768 is ${editor.width.toFixed(0)} px wide and wraps`);
  // The answers: without a name the page asks for one; with it, the file and its name carry it.
  await page.click('#lab-save');
  assert.match(await page.textContent('#notice'), /Write your name/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'lab-name');
  await page.fill('#lab-name', 'Ada Lovelace');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#lab-save')]);
  assert.equal(download.suggestedFilename(), 'answers-caches-across-warps-and-blocks-ada-lovelace.json');
  const saved = JSON.parse(await readFile(await download.path(), 'utf8'));
  assert.equal(saved.student, 'Ada Lovelace');
  assert.equal(saved.lab, 'Caches across warps and blocks');
  // The questions' boxes: no heading over the border, and "next exercise →" on one line.
  const q = await page.locator('.question').first().evaluate((f) => {
    const t = f.querySelector('.question-text').getBoundingClientRect();
    return { text: t.top, box: f.getBoundingClientRect().top, border: parseFloat(getComputedStyle(f).borderTopWidth) };
  });
  assert.ok(q.text >= q.box + q.border, `the question's text is inside its box: ${JSON.stringify(q)}`);
  await page.screenshot({ path: join(SHOTS, 'hall-lab-caches-2-1366x768-wrapped.png') });
  await page.close();
});

test('a lab on a phone: task and goals above the figure, controls a finger can hit', async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  await page.goto(`${base}?lab=memory`);
  await page.waitForSelector('#lab #goals li');
  await settled(page);
  const goals = await box(page, '#goals');
  const figure = await box(page, 'svg#figure');
  assert.ok(goals.bottom <= figure.top, `the goals (ending at ${goals.bottom}) come before the figure (at ${figure.top})`);
  const small = await page.evaluate(() => [...document.querySelectorAll('button, select, input, .question label')]
    .filter((e) => e.getBoundingClientRect().width > 0 && !e.closest('.cm-editor'))
    .map((e) => ({ what: e.id || e.className || e.tagName, h: e.getBoundingClientRect().height }))
    .filter((e) => e.h < 44));
  assert.deepEqual(small, [], 'every control at least 44 px tall');
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(sideways, 0, 'the page does not scroll sideways');
  await page.screenshot({ path: join(SHOTS, 'hall-lab-phone-390.png') });
  await page.close();
});
