// Export, embed and compare keep their promise: "all steps" is one download (a zip of numbered SVG and PNG
// frames), SVG export and embed code carry what is on screen (both panes, every warp), and compare mode marks
// differences only between the same program.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';
import { patternText } from './pattern.mjs';

const SHOTS = new URL('../../test-results/', import.meta.url).pathname;
let site, browser, base;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite();
  ({ browser, base } = site);
});
after(async () => { await site?.close(); });

async function open(url = base, viewport = { width: 1280, height: 720 }) {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector('svg#figure');
  return { page, errors };
}
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
}
async function read(page, selector) {
  await settled(page);
  return page.locator(selector).textContent();
}
async function save(page, id) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(id)]);
  return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
}

// The entries of a zip archive, from its central directory (APPNOTE 4.3.12 and 4.3.16): name and data.
function unzip(buf) {
  let end = buf.length - 22;
  while (end >= 0 && buf.readUInt32LE(end) !== 0x06054b50) end--;
  assert.ok(end >= 0, 'an end of central directory record');
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const entries = [];
  for (let k = 0; k < count; k++) {
    assert.equal(buf.readUInt32LE(at), 0x02014b50, 'a central directory header');
    const size = buf.readUInt32LE(at + 20);
    const [n, e, c] = [buf.readUInt16LE(at + 28), buf.readUInt16LE(at + 30), buf.readUInt16LE(at + 32)];
    const local = buf.readUInt32LE(at + 42);
    const name = buf.subarray(at + 46, at + 46 + n).toString();
    const data = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    entries.push({ name, data: buf.subarray(data, data + size) });
    at += 46 + n + e + c;
  }
  return entries;
}

test('"all steps" saves one zip holding every step as a numbered SVG and PNG', async () => {
  const { page, errors } = await open();
  // The default view: LDG.E.32 at 4*lane + 4 on CC 8.0 is one request of 5 sectors (BPG 9.2.1.2): 5 steps,
  // and frame 0 before the first: 6 frames.
  assert.equal(await page.locator('#step-label').textContent(), 'step 5 / 5');
  const zip = await save(page, '#export-frames');
  assert.equal(zip.name, 'warpscope-ldg-e-32-cc80-steps.zip');
  const entries = unzip(zip.bytes);
  const names = entries.map((e) => e.name).sort();
  const expected = [0, 1, 2, 3, 4, 5].flatMap((k) => [`warpscope-ldg-e-32-cc80-step0${k}.png`, `warpscope-ldg-e-32-cc80-step0${k}.svg`]);
  assert.deepEqual(names, expected);
  for (const e of entries) {
    if (e.name.endsWith('.png')) assert.equal(e.data.subarray(1, 4).toString(), 'PNG', e.name);
    else assert.match(e.data.toString(), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/, e.name);
  }
  // Frame 0 has nothing served yet; the last shows the fifth sector served.
  const svg = (k) => entries.find((e) => e.name.endsWith(`step0${k}.svg`)).data.toString();
  assert.notEqual(svg(0), svg(5));
  assert.match(await read(page, '#notice'), /6 frames saved in one zip/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('SVG export in all-warps mode holds every warp', async () => {
  const { page, errors } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  await page.click('#all-warps');
  await settled(page);
  // The naive transpose's block is 32x8: 8 warps, each loop running 4 passes, 32 issues stacked (w0 p1 ..
  // w7 p4), as on screen.
  const onScreen = await page.locator('svg#figure text').allTextContents();
  const rows = onScreen.filter((t) => /^w\d p\d$/.test(t));
  assert.equal(rows.length, 32);
  const { bytes } = await save(page, '#export-svg');
  const exported = [...bytes.toString().matchAll(/>(w\d p\d)</g)].map((m) => m[1]);
  assert.deepEqual(exported, rows);
  // The link carries the stacked view: opened again, it shows every warp.
  const again = await open(await page.locator('#share-link').inputValue());
  await settled(again.page);
  assert.equal((await again.page.locator('svg#figure text').allTextContents()).filter((t) => /^w\d p\d$/.test(t)).length, 32);
  await again.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('compare: pane B follows pane A until edited, and marks differences only for the same program', async () => {
  const { page, errors } = await open();
  await page.click('#compare');
  await settled(page);
  assert.match(await read(page, '#compare-note'), /follows its edits/);
  // An example chosen in pane A reaches pane B (on its own CC, 7.5).
  await page.selectOption('#preset', 'kepler-4byte-stride2');
  await settled(page);
  assert.equal(await patternText(page, '#pattern-b'), await patternText(page));
  assert.equal(await page.locator('select#cc-b').inputValue(), '7.5');
  // docs/model.md#shared-memory: stride 2 is conflict-free in Kepler's 4-byte mode, 2-way (1 conflict) on 5.x and later.
  assert.equal(await read(page, '#pane-a [data-metric="bank_conflicts"]'), '0');
  assert.equal(await read(page, '#pane-b [data-metric="bank_conflicts"]'), '1');
  assert.ok(await page.locator('#pane-b .delta').count() > 0, 'same program: differences marked');
  // Editing pane B's pattern makes it pane B's own program: no deltas, and the note says what differs.
  await page.fill('#pattern-b', '4*lane');
  await settled(page);
  assert.equal(await page.locator('#pane-b .delta').count(), 0);
  assert.match(await read(page, '#compare-note'), /different program \(its pattern differs from pane A's\)/);
  // Pane A's edits no longer reach it ...
  await page.fill('#pattern', '8*lane');
  await settled(page);
  assert.equal(await patternText(page, '#pattern-b'), '4*lane');
  // ... until it follows again.
  await page.click('#follow-a');
  await settled(page);
  assert.equal(await patternText(page, '#pattern-b'), '8*lane');
  assert.match(await read(page, '#compare-note'), /follows its edits/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('compare: SVG export and embed code carry both panes', async () => {
  const { page, errors } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await page.click('#compare');
  await settled(page);
  // Selecting an instruction in pane A selects it in the following pane B: the LDS of the tile's column.
  await page.locator('#pane-a .instructions button').nth(2).click();
  await settled(page);
  assert.equal(await page.locator('#pane-b .instructions li').nth(2).getAttribute('class'), 'selected');
  const { bytes } = await save(page, '#export-svg');
  const svg = bytes.toString();
  assert.match(svg, />A · CC 8\.0</);
  assert.match(svg, />B · CC 7\.5</);
  // The embed code opens both panes, each with its numbers: 32-way conflicts on both CCs (BPG 9.2.3.3).
  const iframe = await page.locator('#copy-embed').getAttribute('title');
  const src = iframe.match(/src="([^"]+)"/)[1];
  const embed = await open(src, { width: 1280, height: 600 });
  await embed.page.waitForSelector('svg#figure-b');
  assert.match(await read(embed.page, '#metric-line'), /LDS\.32 · CC 8\.0 · .*32-way/);
  assert.match(await read(embed.page, '#metric-line-b'), /LDS\.32 · CC 7\.5 · .*32-way/);
  await embed.page.screenshot({ path: join(SHOTS, 'embed-compare-1280x600.png') });
  assert.deepEqual(embed.errors, []);
  await embed.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});
