// Builds the @trading/api-client package into dist/ (`npm run build` here, `npx nx build api-client`,
// or `npm pack`, whose prepack runs it): CommonJS and .d.ts by tsc, the generated schema types
// (src/schema.d.ts, which tsc does not copy) beside them, and an ES module entry over the CommonJS
// one, so `import` and `require` get the same module. Built in a staging folder, then swapped in
// whole, so a concurrent build or pack never sees a half-written dist/.
import { execFileSync } from 'node:child_process';
import { copyFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const dist = join(here, 'dist');
const staging = join(here, `.dist-${process.pid}`);

rmSync(staging, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.lib.json'), '--outDir', staging], {
    stdio: 'inherit',
  });
  copyFileSync(join(here, 'src/schema.d.ts'), join(staging, 'schema.d.ts'));
  const names = Object.keys(require(join(staging, 'index.js'))).filter((name) => name !== '__esModule' && name !== 'default');
  writeFileSync(join(staging, 'index.mjs'), `import api from './index.js';\n\nexport const { ${names.join(', ')} } = api;\n`);
  writeFileSync(join(staging, 'index.d.mts'), "export * from './index.js';\n");
  for (let attempt = 0; ; attempt++) {
    rmSync(dist, { recursive: true, force: true });
    try {
      renameSync(staging, dist);
      break;
    } catch (error) {
      // Another build put its dist/ in between: take its place again.
      if (attempt >= 5 || !['ENOTEMPTY', 'EEXIST'].includes(error.code)) throw error;
    }
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
