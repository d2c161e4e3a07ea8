// Browser measurements for the README's performance table (run by .ci/bench.sh after `trunk build --release`):
// time to interactive from localhost, keystroke-to-repaint over many edits of a 1024-thread block, and frame
// times while the animation plays with 32 warps on screen. Prints one line per measurement.
// Run by hand: `trunk build --release && node .ci/perf.mjs` (PERF_DETAIL=1 prints every edit).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { chromium } from 'playwright-core';

const DIST = new URL('../dist/', import.meta.url).pathname;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.toml': 'text/plain' };
const server = createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  try {
    const body = await readFile(join(DIST, path === '/' ? 'index.html' : path));
    res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'text/html' }).end(body);
  } catch { res.writeHead(404).end(); }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const fmt = (v) => `p50 ${pct(v, 0.5).toFixed(1)} ms, p95 ${pct(v, 0.95).toFixed(1)} ms, max ${Math.max(...v).toFixed(1)} ms over ${v.length}`;

// 1. Time to interactive: navigation start until the figure is drawn and the page answers an edit.
{
  const times = [];
  for (let i = 0; i < 7; i++) {
    const page = await browser.newPage();
    await page.goto(base);
    await page.waitForSelector('svg#figure');
    times.push(await page.evaluate(() => performance.now()));
    await page.close();
  }
  console.log(`load: interactive ${fmt(times)}`);
}

// 2. Keystroke to figure. Analyses run in a web worker; `warpscope:edit` is the page's own performance measure
//    from the input event to the render that shows the figure answering that edit. Each edit waits for the
//    answer before the next (a typist's pace; faster typing cancels the older runs). Long tasks (over 50 ms)
//    on the main thread are observed the whole time. The first edits after load run while V8 still compiles
//    the wasm (baseline tier), so they are reported apart from the steady state.
async function edits(label, setup, texts, warmup = 15) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base);
  await page.waitForSelector('svg#figure');
  await page.waitForSelector('#pattern.cm-content');
  await setup(page);
  await page.waitForFunction(() => !document.querySelector('[data-busy]'), null, { timeout: 60000 });
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
      .observe({ type: 'longtask' });
  });
  const answered = [];
  for (const t of texts) {
    answered.push(await page.evaluate(async (text) => {
      // The pattern is a code editor (CodeMirror; its text is set as one change, as a paste or a keystroke
      // makes one), or a plain text box where the editor's script is missing.
      const el = document.querySelector('#pattern');
      const t0 = performance.now();
      if (el instanceof HTMLTextAreaElement) {
        el.value = text;
        el.dispatchEvent(new InputEvent('input', { bubbles: true }));
      } else {
        window.warpscopeEditor.setText(el, text);
      }
      await new Promise((r) => {
        const poll = () => (document.querySelector('[data-busy]') ? setTimeout(poll, 1) : r());
        requestAnimationFrame(poll);
      });
      return performance.now() - t0;
    }, t));
  }
  const marks = await page.evaluate(() => performance.getEntriesByName('warpscope:edit').map((e) => e.duration));
  const long = await page.evaluate(() => window.__long);
  const edits = marks.slice(-texts.length);
  console.log(`edit ${label}: warm-up (first ${warmup}) ${fmt(edits.slice(0, warmup))}`);
  console.log(`edit ${label}: steady ${fmt(edits.slice(warmup))}; to all answered ${fmt(answered.slice(warmup))}`);
  console.log(`edit ${label}: main-thread tasks over 50 ms: ${long.length}${long.length ? ` (longest ${Math.max(...long).toFixed(1)} ms)` : ''}`);
  if (process.env.PERF_DETAIL) console.log(edits.map((w) => w.toFixed(1)).join(' '));
  await page.close();
}
await edits('expression, block 1024', async (p) => { await p.fill('#block', '1024'); },
  Array.from({ length: 115 }, (_, i) => `4*tid + ${4 * (i % 9)}`));
await edits('CUDA transpose, block 32x32', async (p) => {
  await p.selectOption('#preset', 'transpose-naive');
  await p.fill('#block', '32x32');
}, Array.from({ length: 75 }, (_, i) => (i % 2 ? '' : ' ') + (
  '#define TILE 32\n__shared__ float tile[TILE][TILE + ' + (i % 3) + '];\nfloat *in, *out;\nconst int width = 1024;\n' +
  'int x = blockIdx.x * TILE + threadIdx.x;\nint y = blockIdx.y * TILE + threadIdx.y;\n' +
  'for (int j = 0; j < TILE; j += 8)\n    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];\n__syncthreads();\n' +
  'for (int j = 0; j < TILE; j += 8)\n    out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];\n')));
// The tiled SGEMM preset (N = 1024, block 32x32: 2.2 million accesses per block), edited as a student would:
// the B tile's row index and the padding of Bs change, so the program and its counts change every time.
const sgemm = (i) => '#define TILE 32\n__global__ void sgemm(const float *A, const float *B, float *C, int N) {\n' +
  '    __shared__ float As[TILE][TILE];\n    __shared__ float Bs[TILE][TILE + ' + (i % 3) + '];\n' +
  '    int tx = threadIdx.x, ty = threadIdx.y;\n    int row = blockIdx.y * TILE + ty;\n    int col = blockIdx.x * TILE + tx;\n' +
  '    float acc = 0.0f;\n    for (int k = 0; k < N / TILE; k++) {\n        As[ty][tx] = A[row * N + k * TILE + tx];\n' +
  '        Bs[ty][tx] = B[(k * TILE + ty) * N + col' + (i % 2 ? ' + 1' : '') + '];\n        __syncthreads();\n' +
  '        for (int j = 0; j < TILE; j++)\n            acc += As[ty][j] * Bs[j][tx];\n        __syncthreads();\n    }\n' +
  '    C[row * N + col] = acc;\n}\n';
await edits('CUDA SGEMM N=1024, block 32x32', async (p) => { await p.selectOption('#preset', 'sgemm-tiled'); },
  Array.from({ length: 55 }, (_, i) => sgemm(i)));

// 3. Animation with 32 warps on screen: the naive transpose's column read on a 32x32 block, every warp
//    stacked, playing at the fastest speed. Frame intervals from requestAnimationFrame, and the page's
//    `warpscope:step` measures (tick to rendered DOM).
{
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base);
  await page.waitForSelector('svg#figure');
  await page.selectOption('#preset', 'transpose-naive');
  await page.fill('#block', '32x32');
  await page.locator('.instructions button').nth(2).click();
  await page.click('#all-warps');
  await page.selectOption('#speed', '60');
  const warps = await page.locator('svg#figure text').evaluateAll((ts) => ts.filter((t) => /^w\d+ p\d+$|^warp \d+$/.test(t.textContent)).length);
  const frames = await page.evaluate(async () => {
    performance.clearMeasures('warpscope:step');
    document.querySelector('#play').click();
    const times = [];
    let last = performance.now();
    await new Promise((done) => {
      const t0 = last;
      const tick = (t) => {
        times.push(t - last);
        last = t;
        if (t - t0 < 4000) requestAnimationFrame(tick); else done();
      };
      requestAnimationFrame(tick);
    });
    document.querySelector('#play').click();
    return times.slice(1);
  });
  const steps = await page.evaluate(() => performance.getEntriesByName('warpscope:step').map((e) => e.duration));
  console.log(`animation, ${warps} warps on screen: frame time ${fmt(frames)}; step render ${fmt(steps)}`);
  await page.close();
}

await browser.close();
server.close();
