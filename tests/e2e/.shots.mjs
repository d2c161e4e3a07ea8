// scratch: screenshots for looking (not committed)
import { startSite } from './site.mjs';
const site = await startSite();
const { browser, base } = site;
async function shot(path, viewport, file, fn) {
  const page = await browser.newPage({ viewport });
  await page.goto(base + path);
  await page.waitForSelector('svg#figure');
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
  if (fn) await fn(page);
  await page.waitForTimeout(300);
  await page.screenshot({ path: `/tmp/shots/${file}.png` });
  const info = await page.evaluate(() => {
    const r = (s) => { const e = document.querySelector(s); if (!e) return null; const b = e.getBoundingClientRect(); return [Math.round(b.x), Math.round(b.y), Math.round(b.width), Math.round(b.height)]; };
    const t = document.querySelector('svg#figure text');
    const svg = document.querySelector('svg#figure');
    const scale = svg ? svg.getBoundingClientRect().width / svg.viewBox.baseVal.width : 0;
    return { figure: r('svg#figure'), editor: r('.editor'), goals: r('#goals'), task: r('.exercise'), text_px: (24 * scale).toFixed(1) };
  });
  console.log(file, JSON.stringify(info));
  await page.close();
}
const which = process.argv[2] ?? 'all';
if (which === 'all' || which === 'lab') {
  await shot('?lab=memory', { width: 1366, height: 768 }, 'lab-memory-1');
  await shot('?lab=tensor-core-smem', { width: 1366, height: 768 }, 'lab-tc-1');
}
if (which === 'all' || which === 'phone') await shot('', { width: 390, height: 844 }, 'phone');
await site.close();
