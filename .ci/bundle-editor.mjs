// Trunk pre-build hook: bundles the page's code editor (www/editor/, CodeMirror 6 from node_modules at the
// versions package-lock.json pins) into one minified script, warpscope-editor.js, in the build's staging
// directory. Offline: esbuild reads only node_modules. Prints the script's gzipped size, which .ci/test.sh
// holds to a budget.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const out = join(process.env.TRUNK_STAGING_DIR ?? 'dist', 'warpscope-editor.js');
const licenses = ['@codemirror/view', '@lezer/common', 'style-mod', 'crelt', 'w3c-keyname'];
const notices = await Promise.all(licenses.map(async (p) => {
  const text = await readFile(new URL(`../node_modules/${p}/LICENSE`, import.meta.url), 'utf8');
  return `${p}: ${text.split('\n').find((l) => l.startsWith('Copyright')) ?? 'MIT'}`;
}));
await build({
  entryPoints: [new URL('../www/editor/main.js', import.meta.url).pathname],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  outfile: out,
  legalComments: 'none',
  banner: { js: `/* warpscope's code editor, built from CodeMirror 6 and Lezer (MIT licence; ${notices.join('; ')}) */` },
  logLevel: 'warning',
});
const bytes = await readFile(out);
console.log(`editor: ${out} ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzipped`);
