// Hostile input never breaks the page: junk, huge and deeply nested text in every language, mangled links
// and lab URLs. After each, the page must still be alive (no page error, the figure drawn) and responsive
// (a good edit updates the numbers), user text must never become HTML, and the CSP must hold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startSite } from './site.mjs';
import { patternText, pastePattern } from './pattern.mjs';

let site, browser, base;

before(async () => {
  site = await startSite();
  ({ browser, base } = site);
});
after(async () => { await site?.close(); });

async function open(url = base) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) problems.push(`csp: ${m.text()}`); });
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
  await page.goto(url);
  await page.waitForSelector('svg#figure');
  return { page, problems };
}

// Analyses run in a web worker: a pane carries data-busy until the latest one is answered.
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
}
async function read(page, selector) {
  await settled(page);
  return page.locator(selector).textContent();
}

async function stillWorks(page, problems, what) {
  assert.equal(await page.locator('#crash').count(), 0, `${what}: the page did not stop`);
  await page.selectOption('#lang', 'expr');
  await page.fill('#op', 'LDG.E.32');
  await page.fill('#block', '32');
  await page.fill('#pattern', '4*lane');
  await settled(page);
  // The figure is drawn in the render after the answer arrives: wait for it rather than count at once.
  await page.waitForSelector('svg#figure', { timeout: 60000 }).catch(() => {});
  assert.equal(await page.locator('svg#figure').count(), 1, `${what}: the figure comes back`);
  assert.equal(await read(page, '#pane-a [data-metric="sectors"]'), '4', `${what}: the page still answers`);
  assert.deepEqual(problems, [], what);
}

const junk = Array.from({ length: 4000 }, (_, i) => String.fromCharCode((i * 7919) % 0xd7ff || 1)).join('');
const HOSTILE = [
  ['expr', 'binary junk', junk],
  ['expr', 'deep nesting', '('.repeat(5000) + 'lane' + ')'.repeat(5000)],
  ['expr', 'huge number', '9'.repeat(400) + '*lane'],
  ['expr', 'overflow', '(1<<62)*(1<<62)*(1<<62)'],
  ['expr', 'HTML', '<img src=x onerror=alert(1)> + lane'],
  ['cuda', '1 MB paste', 'float x = 1;\n'.repeat(80000)],
  ['cuda', 'endless loop', 'float *in;\nwhile (1) in[0] = 0;\n'],
  ['cuda', 'deep blocks', '{'.repeat(3000) + '}'.repeat(3000)],
  ['cuda', 'HTML in a name', 'float *<script>;\n'],
  ['sass', 'a whole kernel of junk', ('/*0000*/ FOO.BAR R1, R2, R3 ; /* 0x0 */\n').repeat(3000) + 'LDG.E R0, [R2.64] ;\n'],
  ['sass', 'register past the file', 'LDG.E.32 R0, [R999] ;\n'],
  ['ptx', 'junk', junk],
  ['ptx', 'deep blocks', '.visible .entry k()\n' + '{'.repeat(3000) + '}'.repeat(3000)],
  ['ptx', 'endless loop', '.visible .entry k()\n{\n.reg .b64 %rd<2>;\n.reg .f32 %f1;\nmov.u64 %rd1, 0;\n$L:\nld.global.f32 %f1, [%rd1];\nbra $L;\n}\n'],
  ['ptx', 'a million registers', '.visible .entry k()\n{\n.reg .b32 %r<1048576>;\nret;\n}\n'],
  ['addresses', 'ten thousand addresses', Array.from({ length: 10000 }, (_, i) => `0x${(i * 64).toString(16)}`).join(' ')],
  ['addresses', 'junk', junk],
];

// Typing a megabyte key by key is not what a user does: they paste it. Big texts, and junk with control
// characters that no keyboard types, arrive the way a paste does: one change of the whole text.
async function paste(page, text) {
  if (text.length < 20000 && !/[\u0000-\u0008\u000b-\u001f]/.test(text)) return page.fill('#pattern', text);
  await pastePattern(page, text);
}

test('hostile patterns in every language leave the page alive and the text untouched', async () => {
  const { page, problems } = await open();
  for (const [lang, what, text] of HOSTILE) {
    await page.selectOption('#lang', lang);
    await paste(page, text);
    assert.equal(await patternText(page), text, `${what}: the editor keeps the text`);
    await settled(page);
    const err = await page.locator('#error').count();
    if (err) assert.match(await read(page, '#error'), /\d+:\d+/, `${what}: the error names a position`);
    const [wide, view] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(wide <= view, `${what}: the page stays ${view} px wide (it is ${wide} px)`);
    assert.equal(await page.locator('img[src=x], script:not([src])').evaluateAll((n) => n.filter((e) => !e.closest('head')).length), 0, `${what}: no user HTML`);
    await stillWorks(page, problems, what);
  }
  await page.close();
});

test('hostile links and lab URLs show a message and the default view', async () => {
  for (const url of [
    `${base}#1.${'A'.repeat(70000)}`,
    `${base}#1.${encodeURIComponent('\u0000\u0001')}`,
    `${base}#%E0%A4%A`,
    `${base}?embed#99.x`,
    `${base}?lab=${encodeURIComponent('javascript:alert(1)')}`,
    `${base}?lab=${encodeURIComponent('../../../../etc/passwd')}`,
    `${base}?lab=memory&lab=other#1.`,
  ]) {
    const { page, problems } = await open(url);
    const what = url.slice(base.length, base.length + 40);
    if (url.includes('lab=memory')) {
      // A repeated parameter: the first one wins and its lab opens (its exercise locks some fields).
      await page.waitForSelector('#lab #goals li');
      assert.deepEqual(problems, [], what);
    } else if (!url.includes('embed')) await stillWorks(page, problems, what);
    else assert.deepEqual(problems, [], 'embed');
    await page.close();
  }
});

test('a whole CUDA file runs its launch, lists its kernels and says where the launch came from', async () => {
  const { page, problems } = await open();
  await page.selectOption('#lang', 'cuda');
  await page.fill('#block', '32');
  await page.fill('#grid', '1');
  // Two instances of a template kernel, launched from host code with block 64 and grid 4.
  await page.fill('#pattern', 'template <int N> __global__ void k(float *p) { p[threadIdx.x * N] = 0; }\n'
    + 'int main() { float *d; k<2><<<4, 64>>>(d); k<1><<<4, 64>>>(d); return 0; }\n');
  await settled(page);
  assert.deepEqual(await page.locator('#kernel option').allTextContents(), ['k<2>', 'k<1>']);
  assert.equal(await read(page, '#code-launch'), 'the code launches block 64x1x1, grid 4x1x1');
  // k<2>, the first launched: every warp writes every other float of 256 bytes, 8 sectors; 2 warps x 4 blocks.
  assert.equal(await read(page, '#pane-a [data-metric="sectors"]'), '64');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a pasted SASS listing runs with no values: its kernel names are demangled by the demangler worker', async () => {
  const { page, problems } = await open();
  await page.selectOption('#lang', 'sass');
  await page.fill('#block', '256');
  await page.fill('#grid', '1');
  // ptxas 12.9's sm_80 SASS of cuda-samples' reduction kernels (tests/data/kernels/reduction, BSD-3-Clause):
  // seven template kernels, mangled, with their parameters in constant bank 0.
  const listing = await readFile(new URL('../data/kernels/reduction/sm_80.sass', import.meta.url), 'utf8');
  // Pasted as one change. The analysis asks for the kernel names, the demangler worker starts, and the
  // analysis runs again with them: waited for until the kernel menu is there (on a loaded 2-core machine the
  // first check could come before the paste's edit had marked the pane busy).
  await pastePattern(page, listing);
  await page.waitForFunction(() => document.querySelectorAll('#kernel option').length > 0, null, { timeout: 60000 });
  await settled(page);
  // The kernel menu shows demangled names, and the first kernel ran with defaults for its parameters.
  const kernels = await page.locator('#kernel option').allTextContents();
  assert.equal(kernels.length, 7);
  assert.ok(kernels.includes('reduce4<int, (unsigned int)256>'), JSON.stringify(kernels));
  assert.equal(await page.locator('.error').count(), 0, 'no error: every parameter has a value');
  // The first pointer parameter's default base, as the figure's lane addresses show it.
  assert.match(await page.locator('body').textContent(), /lane 0: address 0x7000_0000_0000 \(4 B\)/);
  // reduce6<int, 256, true> on one block of 256 threads: 1 global load per thread for n = 256 (the default:
  // the launch's thread count), i.e. 8 warp issues of 4 sectors.
  assert.equal(await read(page, '#pane-a [data-metric="sectors"]'), '32');
  assert.deepEqual(problems, []);
  await page.close();
});
