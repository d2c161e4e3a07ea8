// Browser measurements for the README's performance table (run by .ci/bench.sh after `trunk build --release`):
// time to interactive from localhost, keystroke-to-repaint over many edits of a 1024-thread block, and frame
// times while the animation plays with 32 warps on screen. Prints one line per measurement.
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

// 2. Keystroke to repaint, 1024-thread blocks. `warpscope:edit` is the page's own performance measure from the
//    input event to the rendered DOM; "frame" adds the wait for the next frame. The first edits after load
//    run while V8 still compiles the wasm (baseline tier), so they are reported apart from the steady state.
async function edits(label, setup, texts, warmup = 15) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base);
  await page.waitForSelector('svg#figure');
  await setup(page);
  const frame = [];
  for (const t of texts) {
    frame.push(await page.evaluate(async (text) => {
      const el = document.querySelector('#pattern');
      const t0 = performance.now();
      el.value = text;
      el.dispatchEvent(new InputEvent('input', { bubbles: true }));
      await new Promise((r) => requestAnimationFrame(() => r()));
      return performance.now() - t0;
    }, t));
  }
  const marks = await page.evaluate(() => performance.getEntriesByName('warpscope:edit').map((e) => e.duration));
  const edits = marks.slice(-texts.length);
  console.log(`edit ${label}: warm-up (first ${warmup}) ${fmt(edits.slice(0, warmup))}`);
  console.log(`edit ${label}: steady ${fmt(edits.slice(warmup))}; to next frame ${fmt(frame.slice(warmup))}`);
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
