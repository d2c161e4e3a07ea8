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

test('slides: a reveal.js deck with embedded figures reads from the back row and gets its keys back', async () => {
  // The embed codes the page offers for two views: the naive transpose's 32-way conflict, and a comparison.
  const { page } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.locator('.instructions button').nth(2).click();
  await settled(page);
  const one = await page.getAttribute('#copy-embed', 'title');
  await page.selectOption('#preset', 'strided');
  await settled(page);
  await page.click('#compare');
  await settled(page);
  const two = await page.getAttribute('#copy-embed', 'title');
  await page.close();
  assert.match(one, /\?embed=slides#/);
  const height = (code) => Number(/height="(\d+)"/.exec(code)[1]);
  assert.ok(height(one) > 600, `the tall figure's frame is offered taller: ${height(one)}`);
  frames = [one, two].map((c) => c.replace(/src="[^"]*\?/, (m) => m.replace(/^src="https?:\/\/[^/]+\//, 'src="/')));

  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    const deckPage = await browser.newPage({ viewport: { width: w, height: h } });
    await deckPage.goto(`${base}deck/index.html`);
    await deckPage.waitForFunction(() => window.Reveal?.isReady());
    for (const [k, panes] of [[0, 1], [1, 2]]) {
      await deckPage.evaluate((k) => window.Reveal.slide(k), k);
      const frame = deckPage.frameLocator(`#f${k}`);
      await frame.locator('svg#figure').first().waitFor();
      await deckPage.waitForTimeout(300);
      // The deck scales the slide to the screen: the frame's drawn width over its own.
      const zoom = await deckPage.locator(`#f${k}`).evaluate((f) => f.getBoundingClientRect().width / f.offsetWidth);
      const sizes = await frame.locator('svg.figure').evaluateAll((svgs) => svgs.map((s) => 24 * s.getBoundingClientRect().width / s.viewBox.baseVal.width));
      assert.equal(sizes.length, panes);
      for (const px of sizes) assert.ok(px * zoom >= 16, `${w}x${h} slide ${k + 1}: figure labels ${(px * zoom).toFixed(1)} px`);
      assert.ok(Math.abs(sizes[0] - sizes[sizes.length - 1]) < 0.01, 'both panes at one scale');
      const caption = await frame.locator('figcaption').first().evaluate((c) => parseFloat(getComputedStyle(c).fontSize));
      assert.ok(caption <= sizes[0] + 0.5, `the caption (${caption} px) is no bigger than the figure's labels (${sizes[0].toFixed(1)} px)`);
      await deckPage.screenshot({ path: join(SHOTS, `hall-deck-${w}x${h}-slide${k + 1}.png`) });
    }
    // The presenter clicks into the first figure, steps to its end; the next key moves the deck on.
    await deckPage.evaluate(() => window.Reveal.slide(0));
    const frame = deckPage.frameLocator('#f0');
    await frame.locator('#step').click();
    await frame.locator('body').press('End');
    await frame.locator('body').press('PageDown');
    await deckPage.waitForFunction(() => window.Reveal.getIndices().h === 1, null, { timeout: 5000 });
    await deckPage.close();
  }
});
