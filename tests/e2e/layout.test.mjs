// The page as a projector, a phone and a screen reader meet it, on the built site (dist/): where the figure
// starts, how large its text is, contrast in both themes, names and landmarks, no sideways scrolling.
// Screenshots at 1280x720, 1920x1080 and 390x844 in both themes go to test-results/ (or $SHOTS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';

const SHOTS = process.env.SHOTS ?? new URL('../../test-results/', import.meta.url).pathname;
let site, browser, base;

before(async () => {
  site = await startSite();
  ({ browser, base } = site);
  await mkdir(SHOTS, { recursive: true });
});
after(async () => { await site?.close(); });

async function open(path = '', viewport = { width: 1280, height: 720 }, deviceScaleFactor = 1) {
  const page = await browser.newPage({ viewport, deviceScaleFactor });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  await page.goto(base + path);
  await page.waitForSelector('svg#figure');
  await settled(page);
  return { page, problems };
}
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
  await page.waitForSelector('svg#figure');
}
async function openLab(name, viewport) {
  const r = await open(`?lab=${name}`, viewport);
  await r.page.waitForSelector('#lab #goals li');
  await settled(r.page);
  return r;
}
async function dark(page) {
  await page.click('#theme');
  await page.waitForSelector('.app.theme-dark');
}
/** The figure's top edge in page coordinates, and its smallest text on screen in CSS pixels. */
function figureBox(page, id = 'figure') {
  return page.evaluate((id) => {
    const svg = document.getElementById(id);
    const r = svg.getBoundingClientRect();
    const scale = r.width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(t.getAttribute('font-size')) * scale);
    return { top: r.top + scrollY, minText: Math.min(...sizes), scale };
  }, id);
}
/** Page width beyond the window: 0 when nothing scrolls sideways. */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

// The lane view at 1280 wide draws the 1200-unit scene in the 816-pixel figure column: 24-unit labels are
// 24 * 816 / 1200 = 16.3 CSS pixels (scene.rs TEXT and MIN_SCALE).
const MIN_TEXT_PX = 16;

test('at 1280x720 the figure starts within the top 520 px for every example and every lab exercise, text 16 px or more', async () => {
  const { page, problems } = await open();
  const presets = await page.$$eval('#preset option', (os) => os.map((o) => o.value).filter(Boolean));
  assert.equal(presets.length, 40, 'every preset of presets.rs');
  const langs = new Set();
  for (const p of presets) {
    await page.selectOption('#preset', p);
    await settled(page);
    langs.add(await page.locator('#lang').inputValue());
    const f = await figureBox(page);
    // With the memory system on, its chart (above the warp's figure) is the picture the example is about.
    const chart = await page.locator('#memory-chart').count()
      ? await page.locator('#memory-chart').evaluate((c) => c.getBoundingClientRect().top + scrollY)
      : null;
    assert.ok((chart ?? f.top) <= 520, `${p}: the ${chart === null ? 'figure' : 'memory chart'} starts at ${chart ?? f.top}`);
    assert.ok(f.minText >= MIN_TEXT_PX, `${p}: figure text ${f.minText.toFixed(1)} px`);
  }
  assert.deepEqual([...langs].sort(), ['addresses', 'cuda', 'expr', 'ptx', 'sass']);
  // The tile view and all warps keep the size too.
  await page.selectOption('#preset', 'cp-async-tile');
  await settled(page);
  await page.click('#tile-view');
  assert.ok((await figureBox(page)).minText >= MIN_TEXT_PX, 'tile view');
  await page.click('#tile-view');
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.locator('.instructions button').nth(2).click();
  await page.click('#all-warps');
  await settled(page);
  const all = await figureBox(page);
  assert.ok(all.minText >= MIN_TEXT_PX && all.top <= 520, `all warps: ${JSON.stringify(all)}`);
  for (const lab of ['memory', 'tensor-core-smem']) {
    await page.goto(`${base}?lab=${lab}`);
    await page.waitForSelector('#lab #goals li');
    const n = await page.locator('#exercises button').count();
    assert.equal(n, lab === 'memory' ? 9 : 7, 'the exercises of www/labs/*.toml');
    for (let k = 0; k < n; k++) {
      await page.locator('#exercises button').nth(k).click();
      await settled(page);
      const f = await figureBox(page);
      assert.ok(f.top <= 520, `${lab} exercise ${k + 1}: the figure starts at ${f.top}`);
      assert.ok(f.minText >= MIN_TEXT_PX, `${lab} exercise ${k + 1}: figure text ${f.minText.toFixed(1)} px`);
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('figure text grows with the browser zoom: at 200% it is twice as large on screen', async () => {
  // 200% zoom on a 1280x720 screen is a 640x360 CSS-pixel window at 2 device pixels per CSS pixel.
  const normal = await open();
  const at100 = (await figureBox(normal.page)).minText;
  await normal.page.close();
  const zoomed = await open('', { width: 640, height: 360 }, 2);
  const at200 = (await figureBox(zoomed.page)).minText;
  assert.ok(at200 >= MIN_TEXT_PX, `${at200} CSS px at 200%`);
  assert.ok(at200 * 2 >= at100 * 2 * 0.98, `${at200 * 2} device px at 200% against ${at100} at 100%`);
  // The figure scrolls sideways in its own box; the page does not.
  assert.equal(await overflow(zoomed.page), 0);
  await zoomed.page.close();
});

test('the bank grid follows the step: the naive transpose draws the word and arrow of every wavefront', async () => {
  const { page, problems } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.locator('.instructions button').nth(2).click();
  await settled(page);
  await page.click('#first');
  // 32 wavefronts, one per lane (BPG 9.2.3.3): step k serves lane k-1's word in the k-th of 32 rows.
  for (const k of [1, 16, 17, 24, 32]) {
    await page.fill('#scrub', String(k));
    const drawn = await page.evaluate(() => {
      const svg = document.getElementById('figure');
      const orange = [...svg.querySelectorAll('rect')].filter((r) => r.getAttribute('fill') === '#e69f00');
      const current = [...svg.querySelectorAll('line')].filter((l) => l.getAttribute('stroke') === '#d55e00');
      const texts = [...svg.querySelectorAll('text')].map((t) => t.textContent);
      return { orange: orange.length, arrows: current.length, texts };
    });
    // The current lane and the word it reads are orange; one arrow joins them.
    assert.equal(drawn.orange, 2, `step ${k}: current lane and current word`);
    assert.equal(drawn.arrows, 1, `step ${k}: the current lane's arrow`);
    assert.ok(drawn.texts.includes(String(k)), `step ${k}: the word shows its wavefront number`);
    // The whole conflict at every step: the 32 rows' addresses (0x0 .. 0xf80) are all drawn, no window.
    for (const row of ['0x0', '0x80', '0x800', '0xf80']) assert.ok(drawn.texts.includes(row), `step ${k}: row ${row}`);
    assert.ok(!drawn.texts.some((t) => / of 32: the rows/.test(t)), `step ${k}: no window`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('the sticky player never covers the figure, one warp or all warps', async () => {
  const { page } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.locator('.instructions button').nth(2).click();
  for (const mode of ['one warp', 'all warps']) {
    if (mode === 'all warps') {
      await page.click('#all-warps');
      await settled(page);
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    const at = () => page.evaluate(() => ({
      player: document.querySelector('.player').getBoundingClientRect().bottom,
      figure: document.getElementById('figure').getBoundingClientRect().top,
    }));
    let r = await at();
    assert.ok(r.player <= r.figure, `${mode}: player ends at ${r.player}, figure starts at ${r.figure}`);
    // Brought into view (a link to it, the keyboard), it lands below the player.
    await page.evaluate(() => { window.scrollTo(0, 400); document.getElementById('figure').scrollIntoView(); });
    r = await at();
    assert.ok(r.player <= r.figure + 0.5, `${mode}, scrolled to: player ends at ${r.player}, figure starts at ${r.figure}`);
  }
  await page.close();
});

// WCAG 2.2 relative luminance and contrast (1.4.3, 1.4.11).
const CONTRAST = `
  const parse = (c) => {
    if (!c || c === 'none' || c === 'transparent') return null;
    let m = c.match(/^#([0-9a-f]{6})$/i);
    if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16)).concat(1);
    m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const v = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const lum = ([r, g, b]) => [r, g, b].map((x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; })
    .reduce((s, x, i) => s + x * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => p - q); return (y + 0.05) / (x + 0.05); };
`;

/** Every text of the page (not the figure) against the background it sits on: [what, ratio, needed]. */
function pageContrast(page) {
  return page.evaluate(`(() => { ${CONTRAST}
    // The colour behind the text: translucent backgrounds (the editor's active line, a selection) blended
    // over what lies under them, down to the first opaque one.
    const bgOf = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c && c[3] > 0) layers.push(c);
        if (c && c[3] >= 1) break;
      }
      let out = [255, 255, 255];
      for (const c of layers.reverse()) out = out.map((x, i) => c[i] * c[3] + x * (1 - c[3]));
      return [...out, 1];
    };
    const bad = [];
    let checked = 0;
    for (const el of document.querySelectorAll('.app *')) {
      if (el.closest('svg, .stale, [disabled], .sr-only, option')) continue;
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) || (el.matches('input, select, textarea') && el.value);
      if (!own || !el.getClientRects().length) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden') continue;
      const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
      const need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      const r = ratio(parse(cs.color), bgOf(el));
      checked++;
      if (r < need) bad.push([(el.id ? '#' + el.id : el.tagName.toLowerCase() + '.' + el.className) + ' "' + (el.textContent || el.value).trim().slice(0, 30) + '"', +r.toFixed(2), need]);
    }
    return { checked, bad };
  })()`);
}

/** Every shape and text of the figure against what is drawn under it: text 4.5:1, shapes 3:1 by fill or edge. */
function figureContrast(page, id = 'figure') {
  return page.evaluate(`(() => { ${CONTRAST}
    const svg = document.getElementById(${JSON.stringify(id)});
    const backs = [];
    const under = (x, y) => {
      for (let i = backs.length - 1; i >= 0; i--) {
        const b = backs[i];
        if (x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h) return b.fill;
      }
      return null;
    };
    const bad = [];
    let checked = 0;
    const figureBg = parse(svg.querySelector('rect').getAttribute('fill'));
    for (const el of svg.querySelectorAll('rect, line, text')) {
      const bb = el.getBBox();
      const cx = bb.x + bb.width / 2, cy = bb.y + bb.height / 2;
      const fill = parse(el.getAttribute('fill'));
      const sw = parseFloat(el.getAttribute('stroke-width') || '0');
      const stroke = sw > 0 ? parse(el.getAttribute('stroke')) : null;
      // Arrows run from the lanes over the figure's background to the cell they point at (crossing other
      // cells on the way): they are checked against the background.
      const bg = el.tagName === 'line' ? figureBg : (under(cx, cy) ?? figureBg);
      if (el.tagName === 'text') {
        checked++;
        const r = ratio(fill, bg);
        if (r < 4.5) bad.push(['text "' + el.textContent.slice(0, 24) + '"', el.getAttribute('fill'), +r.toFixed(2)]);
        continue;
      }
      if (el.tagName === 'rect') {
        const backdrop = backs.length === 0 || (fill && !stroke && ratio(fill, figureBg) === 1);
        if (fill) backs.push({ x: +el.getAttribute('x'), y: +el.getAttribute('y'), w: +el.getAttribute('width'), h: +el.getAttribute('height'), fill });
        if (backdrop) continue;
      }
      checked++;
      const r = Math.max(fill ? ratio(fill, bg) : 0, stroke ? ratio(stroke, bg) : 0);
      if (r < 3) bad.push([el.tagName + ' ' + (el.getAttribute('fill') ?? '') + '/' + (el.getAttribute('stroke') ?? ''), +r.toFixed(2)]);
    }
    return { checked, bad };
  })()`);
}

test('contrast in both themes: page text 4.5:1, figure text 4.5:1, figure shapes and the focus ring 3:1', async () => {
  const { page, problems } = await open();
  // Figures that between them draw every class of shape: sectors and bytes at every stage, the bank grid,
  // ldmatrix's rows, the tile view, all warps, inactive lanes.
  const views = [
    ['misaligned', 3, null], ['transpose-naive', 3, 2], ['ldmatrix-unswizzled', 5, null], ['predicated-tail', 2, null],
    ['cp-async-tile', 0, 'tile'], ['transpose-naive', 3, 'all'],
  ];
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') await dark(page);
    const text = await pageContrast(page);
    assert.ok(text.checked > 60, `${theme}: ${text.checked} texts checked`);
    assert.deepEqual(text.bad, [], `${theme}: page text under 4.5:1 (or 3:1 large)`);
    for (const [preset, step, extra] of views) {
      await page.selectOption('#preset', preset);
      await settled(page);
      if (typeof extra === 'number') await page.locator('.instructions button').nth(extra).click();
      if (extra === 'tile') await page.click('#tile-view');
      if (extra === 'all') { await page.locator('.instructions button').nth(2).click(); await page.click('#all-warps'); }
      await settled(page);
      await page.fill('#scrub', String(step));
      const fig = await figureContrast(page);
      assert.ok(fig.checked > 40, `${theme} ${preset}: ${fig.checked} shapes checked`);
      assert.deepEqual(fig.bad, [], `${theme} ${preset} ${extra ?? ''} step ${step}`);
      if (extra === 'tile') await page.click('#tile-view');
      if (extra === 'all') await page.click('#all-warps');
    }
    // The focus ring against the page and against the player's panel.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.locator('h1').click();
    await page.keyboard.press('Tab');
    const ring = await page.evaluate(`(() => { ${CONTRAST}
      const el = document.activeElement, cs = getComputedStyle(el);
      const app = getComputedStyle(document.querySelector('.app'));
      const panel = getComputedStyle(document.querySelector('.player'));
      return { id: el.id, style: cs.outlineStyle, width: parseFloat(cs.outlineWidth),
        page: ratio(parse(cs.outlineColor), parse(app.backgroundColor)), panel: ratio(parse(cs.outlineColor), parse(panel.backgroundColor)) };
    })()`);
    assert.equal(ring.style, 'solid', `${theme}: ${ring.id} shows a focus ring`);
    assert.ok(ring.width >= 2 && ring.page >= 3 && ring.panel >= 3, `${theme} focus ring: ${JSON.stringify(ring)}`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

/** Controls without a name, heading levels in order, and the number of main landmarks. */
async function a11y(page) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const controls = ['button', 'combobox', 'textbox', 'slider', 'checkbox', 'radio', 'spinbutton', 'listbox', 'switch'];
  const unnamed = nodes.filter((n) => !n.ignored && controls.includes(n.role?.value) && !(n.name?.value ?? '').trim())
    .map((n) => `${n.role.value} ${n.backendDOMNodeId}`);
  const levels = nodes.filter((n) => !n.ignored && n.role?.value === 'heading')
    .map((n) => n.properties?.find((p) => p.name === 'level')?.value?.value);
  const jumps = [];
  levels.forEach((l, i) => { if (l > (i === 0 ? 1 : levels[i - 1] + 1)) jumps.push(`h${i === 0 ? 0 : levels[i - 1]} -> h${l}`); });
  const mains = await page.locator('main, [role="main"]').count();
  await cdp.detach();
  return { unnamed, levels, jumps, mains };
}

test('every control has a name, headings do not skip a level, one main: normal, compare, lab and embed', async () => {
  const modes = [['normal', ''], ['compare', ''], ['lab', '?lab=memory'], ['embed', '?embed']];
  for (const [mode, path] of modes) {
    const { page, problems } = mode === 'lab' ? await openLab('memory') : await open(path);
    if (mode === 'compare') { await page.click('#compare'); await settled(page); }
    if (mode === 'lab') await page.click('#hint');
    const r = await a11y(page);
    assert.deepEqual(r.unnamed, [], `${mode}: controls without a name`);
    assert.deepEqual(r.jumps, [], `${mode}: heading levels ${r.levels.join(' ')}`);
    assert.equal(r.mains, 1, `${mode}: one main landmark`);
    if (mode !== 'embed') assert.equal(r.levels[0], 1, `${mode}: starts at h1`);
    // The player's buttons are announced by what they do, not by their glyphs.
    const names = await page.evaluate(() => ['first', 'back', 'play', 'step', 'last'].map((id) => document.getElementById(id)?.getAttribute('aria-label') ?? null));
    assert.deepEqual(names, mode === 'embed' ? [null, 'step back', 'play', 'step forward', null] : ['first step', 'step back', 'play', 'step forward', 'last step']);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('the lab task folds away and stays folded', async () => {
  const { page } = await openLab('memory');
  const open = () => page.locator('#task').evaluate((d) => d.open);
  assert.equal(await open(), true);
  await page.click('#task summary');
  assert.equal(await open(), false);
  assert.ok(!(await page.locator('#exercise p').first().isVisible()), 'the text is hidden');
  assert.ok(await page.locator('#goals').isVisible(), 'the goals stay');
  await page.reload();
  await page.waitForSelector('#lab #goals li');
  assert.equal(await open(), false, 'folded after a reload');
  await page.click('#exercises li:nth-child(2) button');
  assert.equal(await open(), false, 'and in the next exercise');
  await page.click('#task summary');
  await page.close();
});

test('screenshots at 1280x720, 1920x1080 and 390x844 in both themes: the figure on top, nothing scrolls sideways', async () => {
  const sizes = [[1280, 720], [1920, 1080], [390, 844]];
  const pages = [['main', ''], ['lab-memory', '?lab=memory'], ['lab-tensor-core-smem', '?lab=tensor-core-smem']];
  for (const [w, h] of sizes) {
    for (const [name, path] of pages) {
      for (const theme of ['light', 'dark']) {
        const { page, problems } = path ? await openLab(path.slice(5), { width: w, height: h }) : await open('', { width: w, height: h });
        if (theme === 'dark') await dark(page);
        if (name === 'main') {
          // The flagship: the naive transpose's column read, half way through its 32 wavefronts.
          await page.selectOption('#preset', 'transpose-naive');
          await settled(page);
          await page.locator('.instructions button').nth(2).click();
          await settled(page);
          await page.fill('#scrub', '20');
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        assert.equal(await overflow(page), 0, `${name} ${w}x${h} ${theme}: the page scrolls sideways`);
        if (w >= 1280) {
          const f = await figureBox(page);
          assert.ok(f.top <= 520, `${name} ${w}x${h}: the figure starts at ${f.top}`);
        }
        await page.screenshot({ path: join(SHOTS, `layout-${name}-${w}x${h}-${theme}.png`) });
        assert.deepEqual(problems, []);
        await page.close();
      }
    }
  }
  // Comparing, on a phone and on a projector.
  for (const [w, h] of [[390, 844], [1280, 720], [1920, 1080]]) {
    const { page } = await open('', { width: w, height: h });
    await page.click('#compare');
    await settled(page);
    assert.equal(await overflow(page), 0, `compare ${w}x${h}: the page scrolls sideways`);
    await page.screenshot({ path: join(SHOTS, `layout-compare-${w}x${h}.png`), fullPage: w < 1920 });
    await page.close();
  }
});
