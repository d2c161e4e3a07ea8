// What every end-to-end test starts from: the built site (dist/) served on a free local port, and headless
// Chromium (Debian's, or $CHROMIUM) through playwright-core. Not a test file itself.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { chromium } from 'playwright-core';

const DIST = new URL('../../dist/', import.meta.url).pathname;
const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css',
  '.toml': 'text/plain', '.svg': 'image/svg+xml', '.png': 'image/png',
};

/**
 * Serves dist/ and starts the browser: `{ base, browser, close }`. Options: `prefix`, the path the site is
 * served under (`/course/warpscope/`: dist/ copied into a course site; anything outside it is a 404, as the
 * site's other pages would be to this test); `files`, extra files by path (`{ '/course/warpscope/labs-origins':
 * 'https://other.example\n' }`, or `{ type, body }` for another content type).
 */
export async function startSite({ prefix = '/', files = {} } = {}) {
  const server = createServer(async (req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path in files) {
      // A string is served as text; `{ type, body }` with its type (a slide deck's page, its scripts).
      const f = typeof files[path] === 'string' ? { type: 'text/plain', body: files[path] } : files[path];
      res.writeHead(200, { 'content-type': f.type }).end(f.body);
      return;
    }
    if (!path.startsWith(prefix)) { res.writeHead(404).end('not found'); return; }
    path = `/${path.slice(prefix.length)}`;
    const file = join(DIST, path === '/' ? 'index.html' : path);
    if (!file.startsWith(DIST)) { res.writeHead(403).end(); return; }
    let body;
    try { body = await readFile(file); } catch { res.writeHead(404).end('not found'); return; }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}${prefix}`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  return { base, browser, close: async () => { await browser.close(); server.close(); } };
}
