// Kernels as people publish them, on the page: every kernel of a file is choosable even when one fails,
// a template kernel takes its arguments in a field, and nothing a result assumes or leaves out is hidden
// (program notes beside the totals, marks in the source view, a footnote on the embed and the exported SVG).
// The histogram and the softmax are verbatim public kernels from tests/data/published/ (origins and licenses in
// its README).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { startSite } from './site.mjs';

const SHOTS = new URL('../../test-results/', import.meta.url).pathname;
const DATA = new URL('../data/published/', import.meta.url).pathname;
// A share link as the page writes one (src/share.rs): version 1, raw deflate, URL-safe base64.
const link = (view) => `1.${deflateRawSync(Buffer.from(JSON.stringify(view))).toString('base64url')}`;
const cuda = (text, extra = {}) => ({ panes: [{ cc: '8.0', lang: 'cuda', text, op: '', block: '256', grid: '1', ...extra }] });

let site, browser, base;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite();
  ({ browser, base } = site);
});
after(async () => { await site?.close(); });

async function open(url, viewport = { width: 1400, height: 1000 }) {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await settled(page);
  return { page, errors };
}
const settled = (page) => page.waitForFunction(() => !document.querySelector('[data-busy]'), null, { timeout: 120000 });
const text = (page, sel) => page.locator(sel).first().textContent();
const options = (page, sel) => page.locator(`${sel} option`).allTextContents();
const metric = (page, name) => page.locator(`[data-metric="${name}"]`).first().textContent();

// The first kernel fails (a name nothing declares), the second runs, the third is a template nothing
// instantiates.
const TEMPLATES = '__global__ void broken(float *a) {\n    a[threadIdx.x] = undefined_name;\n}\n'
  + '__global__ void good(float *a) {\n    a[threadIdx.x] = 1.0f;\n}\n'
  + 'template <typename T, int BLOCK>\n__global__ void tiled(T *a) {\n    a[threadIdx.x * BLOCK] = 0;\n}\n';

test('a failing first kernel leaves the others choosable, and a template kernel takes its arguments in a field', async () => {
  const { page, errors } = await open(`${base}#${link(cuda(TEMPLATES, { block: '32' }))}`);
  assert.match(await text(page, '#error'), /2:22: unknown name `undefined_name`/);
  // Every kernel of the text, read from its top level: the failing one, the good one, the template.
  assert.deepEqual(await options(page, '#kernel'), ['broken', 'good', 'tiled (template)']);
  await page.selectOption('#kernel', 'good');
  await settled(page);
  assert.equal(await page.locator('#error').count(), 0);
  // One warp storing 32 consecutive floats: 128 bytes, 4 sectors (CUDA Best Practices Guide 9.2.1.1).
  assert.equal(await metric(page, 'sectors'), '4');
  const notes = await text(page, '#program-notes');
  assert.match(notes, /Kernel: This file has 2 kernels \(broken, good\); this is good\. Choose another in the kernel menu\./);
  assert.match(notes, /Template kernels that nothing in the file instantiates: tiled\. Choose one in the kernel menu and give its arguments in the template arguments field, for example 'tiled<int, 256>'/);
  // The template: its suggested arguments run at once, in a field that takes others.
  await page.selectOption('#kernel', { label: 'tiled (template)' });
  await settled(page);
  assert.equal(await page.inputValue('#kernel-args'), 'int, 256');
  // int a[threadIdx.x * 256]: 1 KB apart, one 32-byte sector per lane (BPG 9.2.1.3, strided access).
  assert.equal(await metric(page, 'sectors'), '32');
  await page.fill('#kernel-args', 'int, 1');
  await settled(page);
  // Stride 1: 32 consecutive ints, 4 sectors.
  assert.equal(await metric(page, 'sectors'), '4');
  assert.equal(await page.inputValue('#kernel-args'), 'int, 1');
  await page.screenshot({ path: join(SHOTS, 'published-templates.png'), fullPage: true });
  // Another file: the menu is the new text's (one kernel, no menu), not the old one's.
  await page.goto(`${base}#${link(cuda('__global__ void only(float *a) {\n    a[threadIdx.x] = 0;\n}\n', { block: '32' }))}`);
  await page.reload();
  await settled(page);
  assert.equal(await page.locator('#kernel').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a histogram's atomics are named as not counted, beside the totals, in the source view and on exported figures", async () => {
  // NVIDIA cuda-samples' histogram256 with its header pasted above it, as a page user gives an include.
  const header = await readFile(join(DATA, 'NVIDIA__cuda-samples/histogram_common.h'), 'utf8');
  const kernel = await readFile(join(DATA, 'NVIDIA__cuda-samples/histogram256.cu'), 'utf8');
  const whole = `${header}\n${kernel}`;
  const lineOf = (needle) => whole.split('\n').findIndex((l) => l.includes(needle)) + 1;
  const atomicLine = lineOf('atomicAdd(s_WarpHist + data, 1)');
  const { page, errors } = await open(`${base}#${link(cuda(whole))}`);
  assert.equal(await page.locator('#error').count(), 0);
  // addByte's atomicAdd, inlined at addWord's four calls: its bin is data, so it is listed and not counted
  // (docs/model.md#atomics); nvcc makes an unused `atomicAdd(p, 1)` in shared memory ATOMS.POPC.INC.
  const notes = page.locator('#program-notes li.important[data-note="atomics-not-costed"]');
  assert.match(
    await notes.textContent(),
    new RegExp(`^Not counted: Atomics whose address is data are listed but not counted, since warpscope reads data only where it is given \\(on the command line, \`warpscope analyze --data NAME=SOURCE\` with a \\.npy file or a generator such as uniform\\(0, 1024, n=4096\\); this page does not take arrays yet\\): ATOMS\\.POPC\\.INC\\.32 \\(line ${atomicLine}\\) ×4\\.`),
  );
  // Its four inlined copies are listed after the counted instructions, marked and not selectable (no issue).
  assert.equal(await page.locator('.instructions li.not-counted').count(), 4);
  assert.equal(await page.locator('.instructions li.not-counted button').first().isDisabled(), true);
  assert.match(await page.locator('.instructions li.not-counted').first().textContent(), /not counted \(address is data\)/);
  // The launch and the values given are said too.
  const all = await text(page, '#program-notes');
  assert.match(all, /Launch from the code: The launch at line \d+ \(`histogram256Kernel<<<…>>>`\) gives block 192x1x1 and grid 240x1x1/);
  assert.match(all, /Values given: Integer kernel parameters given the launch's thread count: dataCount = 46080/);
  // The source view marks the atomic's line.
  await page.click('#show-source');
  const row = page.locator(`#source-view tr[data-line="${atomicLine}"]`);
  assert.equal(await row.getAttribute('class').then((c) => c.includes('uncounted')), true);
  assert.equal(await row.locator('.not-counted').textContent(), 'ATOMS.POPC.INC.32: not counted');
  await row.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'published-histogram.png'), fullPage: false });
  // The exported SVG carries the footnote.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  const svg = await readFile(await download.path(), 'utf8');
  assert.match(svg, new RegExp(`Assumptions: parameter values warpscope gave; atomics whose address is data not counted \\(line ${atomicLine}\\)\\.`));
  // So does the embed.
  const embed = await browser.newPage({ viewport: { width: 960, height: 700 } });
  await embed.goto(`${base}?embed#${link(cuda(whole))}`);
  await settled(embed);
  await embed.waitForSelector('#embed-assumptions');
  assert.equal(await text(embed, '#embed-assumptions'), `Assumptions: parameter values warpscope gave; atomics whose address is data not counted (line ${atomicLine}).`);
  await embed.screenshot({ path: join(SHOTS, 'published-histogram-embed.png') });
  await embed.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test("a softmax's data-dependent branch states its assumption, and the menu changes it", async () => {
  // karpathy/llm.c's dev/cuda/softmax_forward.cu, softmax_forward_kernel1: `if (inp_row[j] > maxval)
  // maxval = inp_row[j];` reads memory under a condition on loaded data.
  const file = await readFile(join(DATA, 'karpathy__llm.c/softmax_forward.cu'), 'utf8');
  // The kernel's own line (the file's CPU reference has the same `if` earlier).
  const lines = file.split('\n');
  const start = lines.findIndex((l) => l.includes('__global__ void softmax_forward_kernel1('));
  const ifLine = start + lines.slice(start).findIndex((l) => l.includes('if (inp_row[j] > maxval)')) + 1;
  const { page, errors } = await open(`${base}#${link(cuda(file, { block: '32', kernel: 'softmax_forward_kernel1', sets: ['C=64'] }))}`);
  assert.equal(await page.locator('#error').count(), 0);
  const note = () => text(page, '#program-notes li[data-note="data-branch-assumed"]');
  // The note, then where the rule comes from.
  assert.equal(
    await note(),
    `Assumed about data: The condition of the \`if\` on line ${ifLine} depends on data loaded from memory at ${ifLine}:17; warpscope reads data only where it is given (on the command line, \`warpscope analyze --data NAME=SOURCE\` with a .npy file or a generator such as uniform(0, 1024, n=4096); this page does not take arrays yet). What it decides moves memory, so warpscope assumed the code it guards runs and a loop does not repeat (the data-dependent conditions menu chooses another): the counts hold under that assumption. (warpscope's model of data-dependent control flow)`,
  );
  assert.equal(await page.inputValue('#data-branches'), 'runs');
  // The guarded load (`maxval = inp_row[j]`) is the second instruction: with the condition held in every
  // lane it runs on each of the C = 64 passes of the loop, once per pass.
  const guarded = page.locator('ol.instructions li').nth(1);
  assert.equal(await guarded.textContent(), `LDG.E.32line ${ifLine + 1}: inp_row[j]`);
  await page.screenshot({ path: join(SHOTS, 'published-softmax.png'), fullPage: false });
  await page.selectOption('#data-branches', 'false');
  await settled(page);
  assert.match(await note(), /warpscope assumed its condition fails in every lane/);
  // Held in no lane, the guarded load never issues: the list keeps only what runs.
  assert.doesNotMatch(await text(page, 'ol.instructions'), new RegExp(`line ${ifLine + 1}:`));
  await page.selectOption('#data-branches', 'lanes');
  await settled(page);
  assert.equal(await page.inputValue('#data-lanes'), '0x0000ffff');
  assert.match(await note(), /its condition holds in lanes 0-15 and fails in the others/);
  assert.deepEqual(errors, []);
  await page.close();
});
