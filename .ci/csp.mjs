// Trunk post-build hook: add a strict Content-Security-Policy to the built index.html. Only the page's own
// files run; Trunk's inline loader script is allowed by its hash; wasm needs 'wasm-unsafe-eval'; the lab
// worker starts from a blob that imports the worker script from the same origin.
import { readFile, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR ?? 'dist';
const file = join(dir, 'index.html');
let html = await readFile(file, 'utf8');
const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
  .map((m) => `'sha256-${createHash('sha256').update(m[1]).digest('base64')}'`);
const policy = [
  "default-src 'self'",
  `script-src 'self' 'wasm-unsafe-eval' ${hashes.join(' ')}`.trim(),
  "worker-src 'self' blob:",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self' https: ws:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
html = html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>\s*/g, '');
html = html.replace('<head>', `<head>\n    <meta http-equiv="Content-Security-Policy" content="${policy}" />`);
await writeFile(file, html);
console.log(`csp: ${hashes.length} inline script hash(es) allowed`);
