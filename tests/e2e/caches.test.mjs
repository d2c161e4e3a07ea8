// The memory system on the page (MODEL.md J): the memory chart for a whole grid, light and dark, with the
// model's label, the bounds and the schedule check beside the modelled figures. The numbers are J's: the
// naive SGEMM at M = N = K = 256 (64 blocks of 32x32) reads each of A's sectors once every 8 k and B's row
// once per block (32x32 threads: 2 resident blocks per SM): L1 load hit rate 95 %, L2 load hit rate 87.5 %, DRAM read 512 KiB (tests/caches.rs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
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
    assert.match(chart, /modelled \(LRU, lockstep schedule, 108 SMs, 2 blocks per SM, 40 MB L2, 16 ways\) for the grid/);
    assert.match(chart, /L1\/TEX95 % hit/);
    assert.match(chart, /L287\.5 % hit/);
    assert.match(chart, /read 512\.0 KiB/);
    assert.match(chart, /DRAM768\.0 KiBread \+ written/);
    assert.match(chart, /L287\.5 % hit40 MiB/);
    assert.match(chart, /compulsory DRAM read 524,288 bytes/);
    assert.match(chart, /With 1 block per SM instead of 2/);
    assert.equal(await page.locator('#caches').inputValue(), 'on');
    await page.locator('#memory-chart').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}memory-chart-${theme}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  });
}
