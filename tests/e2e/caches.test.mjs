// The memory system on the page (docs/model.md#the-memory-system): the memory chart for a whole grid, light and dark, with the
// model's label, the bounds and the schedule check beside the modelled figures. The numbers are J's: the
// naive SGEMM at M = N = K = 256 (64 blocks of 32x32) reads each of A's sectors once every 8 k and B's row
// once per block (32x32 threads: 2 resident blocks per SM): L1 load hit rate 95 %, L2 load hit rate 87.5 %, DRAM read 512 KiB (tests/caches.rs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startSite } from './site.mjs';

const SHOTS = new URL('../../test-results/', import.meta.url).pathname;
const link = (view) => `1.${deflateRawSync(Buffer.from(JSON.stringify(view))).toString('base64url')}`;
const NAIVE = `__global__ void sgemm(const float *A, const float *B, float *C, int M, int N, int K) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[r * K + k] * B[k * N + c];
    C[r * N + c] = sum;
}
`;
const view = { panes: [{ cc: '8.0', lang: 'cuda', text: NAIVE, op: '', block: '32x32', grid: '8x8', sets: ['M=256', 'N=256', 'K=256'], caches: 'on' }] };

let site, browser, base;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite();
  ({ browser, base } = site);
});
after(async () => { await site?.close(); });

for (const theme of ['light', 'dark']) {
  test(`the memory chart shows L1, L2 and DRAM for the grid (${theme})`, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, colorScheme: theme });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}#${link(view)}`);
    if (theme === 'dark') await page.click('#theme');
    await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
    const chart = await page.locator('#memory-chart').textContent();
    // In a student's words, Nsight Compute's names on hover.
    assert.match(chart, /Modelled, not measured, for the grid: 108 SMs with 2 blocks each, a 40 MiB L2 cache \(16-way\), all caches empty at the start/);
    const box = async (level) => (await page.locator(`#memory-chart .${level}`).textContent());
    assert.equal(await box('mc-l1'), 'L1 cache95 % hit192 KB in each of 108 SMs');
    assert.equal(await box('mc-l2'), 'L2 cache87.5 % hit40 MiB, one for the GPU');
    assert.equal(await box('mc-dram'), 'DRAM768.0 KiBread and written');
    assert.match(await page.getAttribute('#memory-chart .mc-l1', 'title'), /l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit\.sum/);
    assert.match(chart, /read 512\.0 KiB/);
    assert.match(chart, /512\.0 KiB had to come from DRAM at least once/);
    assert.match(chart, /With 1 block per SM instead of 2/);
    assert.doesNotMatch(chart, /L1\/TEX|\breq\b|lockstep schedule|16 ways|--shared-bytes/, 'no jargon or command-line flag on the page');
    assert.equal(await page.locator('#caches').inputValue(), 'on');
    await page.locator('#memory-chart').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}memory-chart-${theme}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

// The source view's modelled columns: per line, the loads' L1 hit rate, the L2 hit rate and the DRAM reads,
// the same numbers as the memory chart's per-line table (tests/caches.rs).
test('the source view shows each line\'s modelled L1 and L2 hit rates and DRAM reads', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}#${link(view)}`);
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  await page.click('#show-source');
  const head = await page.locator('.source-table thead').textContent();
  assert.match(head, /L1 hit/);
  assert.match(head, /L2 hit/);
  assert.match(head, /DRAM/);
  // Line 6 holds both loads: their L1 hits over their sectors, against the chart's per-instruction rows.
  const row = page.locator('.source-table tr[data-line="6"]');
  assert.match(await row.locator('[data-col="l1_hit"]').textContent(), /^\d+(\.\d+)? %$/);
  assert.match(await row.locator('[data-col="dram_read"]').textContent(), /KiB|B$/);
  assert.match(await page.locator('.source-legend').textContent(), /modelled/);
  await page.locator('.source-view').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}source-view-caches.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

// The caches lab (www/labs/caches.toml): exercise 1 starts with the memory system off, so the misaligned load
// shows no L1 hits; turning it on meets the goal (7 hits per block of 8 warps, docs/model.md#the-memory-system).
test('the caches lab: turning the memory system on meets the misaligned copy\'s goal', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?lab=caches`);
  await page.waitForSelector('#lab #goals li');
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
  assert.match(await page.locator('#exercise h3').textContent(), /misaligned copy/);
  assert.equal(await page.locator('#goals li.fail').count(), 1);
  assert.equal(await page.locator('#grid').isDisabled(), true, 'the grid is locked');
  await page.selectOption('#caches', 'on');
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  await page.waitForSelector('#goals li.pass');
  assert.match(await page.locator('#memory-chart').textContent(), /17\.5 %/);
  // The figure colours warp 0's sectors by where they came from: nobody read them before, so DRAM.
  await page.waitForFunction(() => /sectors came from L1/.test(document.querySelector('svg#figure')?.textContent ?? ''));
  assert.match(await page.locator('svg#figure').textContent(), /L1 \(light green\): 0,\s*L2 \(yellow\): 0,\s*DRAM \(purple\): 5/);
  // The memory chart follows the figure's issue: the step's sector came from DRAM, whose box is outlined.
  assert.match(await page.locator('#mc-issue').textContent(), /warp 0, pass 1\), sector by sector: 0 from L1 \(green\) · 0 from L2 \(yellow\) · 5 from DRAM \(purple\)/);
  assert.equal(await page.locator('#memory-chart .mc-box.mc-now').count(), 1);
  await page.screenshot({ path: `${SHOTS}lab-caches.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

// An atomic's lanes on one word: the figure draws the queue they form (docs/model.md#atomics).
test('a shared atomic on one counter is drawn as a queue of 32 read-modify-writes', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const counter = `__global__ void count_odd(const int *in, int *total) {
    __shared__ int s_count;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&s_count, in[i] & 1);
}
`;
  const v = { panes: [{ cc: '8.0', lang: 'cuda', text: counter, op: '', block: '32', grid: '1', sets: [], instr: 1 }] };
  await page.goto(`${base}#${link(v)}`);
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('svg#figure'), null, { timeout: 60000 });
  await page.waitForFunction(() => /one after another/.test(document.querySelector('svg#figure')?.textContent ?? ''));
  const fig = await page.locator('svg#figure').textContent();
  assert.match(fig, /ATOMS\.ADD/);
  assert.match(fig, /At 0x0: 32 read-modify-writes, one after another/);
  await page.screenshot({ path: `${SHOTS}atomic-queue.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

// The memory system is a feature of its own (docs/performance.md, "one worker per feature family"): a CUDA
// pane loads the CUDA worker and no cache model; turning the memory system on loads `warpscope-engine-memory`,
// which answers with the chart; turning it off goes back to the CUDA worker.
test('the cache model loads only when a pane turns the memory system on', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const wasm = [];
  page.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(r.url().split('/').pop()); });
  const off = { panes: [{ ...view.panes[0], caches: 'off' }] };
  await page.goto(`${base}#${link(off)}`);
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('.metric'), null, { timeout: 120000 });
  assert.ok(wasm.some((w) => w.startsWith('warpscope-engine-cuda')), `loaded: ${wasm.join(', ')}`);
  assert.ok(!wasm.some((w) => w.startsWith('warpscope-engine-memory')), `loaded: ${wasm.join(', ')}`);
  assert.equal(await page.locator('#memory-chart').count(), 0);
  await page.selectOption('#caches', 'on');
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  // Two of them where the browser reports two cores or more: the grid's schedule check runs beside the main run.
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const memory = wasm.filter((w) => w.startsWith('warpscope-engine-memory')).length;
  assert.equal(memory, cores >= 2 ? 2 : 1, `loaded: ${wasm.join(', ')} with ${cores} cores`);
  assert.equal(await page.locator('#memory-chart .mc-l1 .mc-value').textContent(), '95 % hit');
  assert.match(await page.locator('#memory-chart .mc-schedule').textContent(), /^With \d+ blocks? per SM instead of \d+: /);
  await page.selectOption('#caches', 'off');
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && !document.querySelector('#memory-chart'), null, { timeout: 120000 });
  assert.deepEqual(errors, []);
  await page.close();
});

// Choosing another instruction while a memory-system run goes on waits for that run instead of starting it
// again (the selection does not change the scenario), and so does typing into a comment (the program is the
// same): no worker is started for either, the progress goes on, and the figure then shows the chosen
// instruction with the run's figures.
test('choosing an instruction or typing a comment during a memory-system run does not start the run again', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let workers = 0;
  page.on('worker', () => { workers += 1; });
  const commented = { panes: [{ ...view.panes[0], text: NAIVE.replace('= sum;', '= sum; // the result') }] };
  await page.goto(`${base}#${link(commented)}`);
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  // The naive SGEMM at N = 2048: a run of seconds on any machine (at N = 1024 it can end within the half
  // second below).
  await page.fill('#grid', '64x64');
  await page.fill('#sets', 'M=2048, N=2048, K=2048');
  await page.waitForSelector('#progress', { timeout: 120000 });
  const before = workers;
  await page.locator('ol.instructions li button').nth(1).click();
  // Typed key by key at the end of the comment on line 7.
  await page.locator('#pattern .cm-line').nth(6).click();
  await page.keyboard.press('End');
  await page.keyboard.type(' of the multiply', { delay: 20 });
  assert.match(await page.locator('#pattern').innerText(), /= sum; \/\/ the result of the multiply\n\}/);
  await page.waitForTimeout(500);
  assert.equal(await page.locator('#progress').count(), 1, 'the run goes on, its progress shown');
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  assert.equal(workers, before, 'no worker started for the selection or the comment');
  assert.equal(await page.locator('ol.instructions li button').nth(1).getAttribute('aria-pressed'), 'true');
  assert.match(await page.locator('svg#figure').textContent(), /B\[k \* N \+ c\]/);
  // The model's figure at N = 2048 on the A100 (docs/model.md#canonical-figures): the run finished, not a restart
  // that was cut short.
  assert.equal(await page.locator('#memory-chart .mc-l2 .mc-value').textContent(), '98.4375 % hit');
  assert.deepEqual(errors, []);
  await page.close();
});

// A verbatim public kernel through the memory worker: siboehm's SGEMM_CUDA 1_naive.cuh (tests/data/published,
// MIT), launched as its runner does at M = N = K = 256. The page's memory chart gives the command line's figures
// for the same file and flags (`warpscope analyze --caches --format json`, its Nsight-named metrics): the L1 and
// L2 load hit rates to the chart's rounding, and the modelled DRAM read.
test('a published kernel\'s memory chart is the command line\'s', async () => {
  const file = new URL('../data/published/siboehm__SGEMM_CUDA/1_naive.cuh', import.meta.url).pathname;
  const cli = new URL('../../target/debug/warpscope', import.meta.url).pathname;
  const flags = ['--kernel', 'sgemm_naive', '--block', '32x32', '--grid', '8x8', '--set', 'M=256', '--set', 'N=256', '--set', 'K=256'];
  const json = JSON.parse(execFileSync(cli, ['analyze', '--cuda', file, ...flags, '--caches', '--format', 'json'], { maxBuffer: 1 << 28 }));
  const m = Object.fromEntries(json.caches.metrics.map((x) => [x.name, x.value]));
  const l1 = 100 * m['l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum'] / m['l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum'];
  const l2 = 100 * m['lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum'] / m['lts__t_sectors_srcunit_tex_op_read.sum'];
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const pane = { cc: '8.0', lang: 'cuda', text: readFileSync(file, 'utf8'), op: '', block: '32x32', grid: '8x8', kernel: 'sgemm_naive', sets: ['M=256', 'N=256', 'K=256'], caches: 'on' };
  await page.goto(`${base}#${link({ panes: [pane] })}`);
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  const chart = await page.locator('#memory-chart').textContent();
  const rate = async (level) => Number((await page.locator(`#memory-chart .${level} .mc-value`).textContent()).match(/([0-9.]+) % hit/)[1]);
  assert.ok(Math.abs(await rate('mc-l1') - l1) <= 0.05, `chart L1 ${await rate('mc-l1')} %, CLI ${l1} %`);
  assert.ok(Math.abs(await rate('mc-l2') - l2) <= 0.05, `chart L2 ${await rate('mc-l2')} %, CLI ${l2} %`);
  assert.match(chart, new RegExp(`read ${(m['dram__bytes_read.sum'] / 1024).toFixed(1)} KiB`));
  assert.deepEqual(errors, []);
  await page.close();
});

// A device setting out of range is an error that names the range and the example GPU's value (issue 37), shown
// under the editor with the last result dimmed, and a headline that sends the reader to the device field.
test('a device setting out of range names its range, and the page says which field to fix', async () => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}#${link(view)}`);
  await page.waitForFunction(() => !document.querySelector('[data-busy]') && document.querySelector('#memory-chart'), null, { timeout: 120000 });
  await page.fill('#cache-device', 'sms=108 ways=0');
  await page.waitForSelector('#error', { timeout: 60000 });
  assert.match(await page.textContent('#error'), /memory system L2 ways 0 is out of range: give 1 to 128 \(8\.0's example GPU, the A100, has 16\)/);
  assert.match(await page.textContent('.stale-label'), /Fix the memory system's device setting to update/);
  await page.screenshot({ path: `${SHOTS}device-setting-error.png` });
  await page.fill('#cache-device', 'sms=108 ways=16');
  await page.waitForFunction(() => !document.querySelector('#error') && !document.querySelector('[data-busy]'), null, { timeout: 120000 });
  assert.deepEqual(errors, []);
  await page.close();
});
