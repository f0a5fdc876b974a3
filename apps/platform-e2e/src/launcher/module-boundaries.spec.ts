import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../../..');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

/**
 * The rules `npm run lint` enforces, shown to bite: each fixture breaks one and must be
 * refused. ESLint and Prettier run as the lint step runs them, on text given for a file that
 * does not exist (the path decides which rules apply).
 */
describe('lint rules', () => {
  /** Every problem ESLint finds in `code` as if it were `file`: "rule: message". */
  const problems = (file: string, code: string): string[] => {
    const run = spawnSync(bin('eslint'), ['--stdin', '--stdin-filename', file, '--format', 'json'], {
      cwd: ROOT,
      input: code,
      encoding: 'utf8',
    });
    const [result] = JSON.parse(run.stdout) as Array<{ messages: Array<{ ruleId: string; message: string }> }>;
    return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
  };
  const formatted = (code: string): boolean => {
    const run = spawnSync(bin('prettier'), ['--stdin-filepath', 'apps/banking/src/fixture.ts'], {
      cwd: ROOT,
      input: code,
      encoding: 'utf8',
    });
    return run.stdout === code;
  };

  it('refuses production code importing the test helpers, and lets specs and testing/ folders use them', () => {
    const code = "import { http } from '@trading/testing';\n\nexport const call = http;\n";
    expect(problems('apps/banking/src/funding/fixture.ts', code)).toEqual([
      expect.stringMatching(
        /^@nx\/enforce-module-boundaries: A project tagged with "type:app" can only depend on libs tagged with "type:util", "type:data", "type:feature"$/,
      ),
    ]);
    expect(problems('apps/banking/src/funding/fixture.spec.ts', code)).toEqual([]);
    expect(problems('apps/banking/src/testing/fixture.ts', code)).toEqual([]);
  }, 60_000);

  it("refuses an app using another domain's service, and any library using a service", () => {
    const code = "import { createOmsApp } from '@trading/oms-service';\n\nexport const start = createOmsApp;\n";
    expect(problems('apps/banking/src/fixture.ts', code)).toEqual([
      expect.stringMatching(
        /^@nx\/enforce-module-boundaries: A project tagged with "scope:banking" can only depend on libs tagged with "scope:banking", "scope:shared"$/,
      ),
    ]);
    expect(problems('libs/banking-service/src/fixture.ts', code)).toContainEqual(
      expect.stringMatching(/^no-restricted-imports: .*a library never imports a service/),
    );
    expect(problems('libs/money/src/fixture.ts', code)).toContainEqual(
      expect.stringMatching(/^no-restricted-imports: .*a library never imports a service/),
    );
    // Its own app composes it.
    expect(problems('apps/oms/src/fixture.ts', code)).toEqual([]);
  }, 60_000);

  it('refuses a library importing an app, and a spec crossing domains (specs may use the test helpers, not another domain)', () => {
    const intoApp = "import { loadPlatformConfig } from '../../../apps/platform/src/config';\n\nexport const load = loadPlatformConfig;\n";
    expect(problems('libs/money/src/fixture.ts', intoApp)).toContainEqual(
      expect.stringMatching(/^no-restricted-imports: .*import a project by its @trading\/ name/),
    );
    const otherDomain = "import { createOmsApp } from '@trading/oms-service';\n\nexport const start = createOmsApp;\n";
    expect(problems('apps/banking/src/funding/fixture.spec.ts', otherDomain)).toEqual([
      expect.stringMatching(/^@nx\/enforce-module-boundaries: A project tagged with "scope:banking" can only depend on libs tagged with/),
    ]);
  }, 60_000);

  it('refuses a lower layer depending on a higher one (a util lib on a feature lib)', () => {
    const code = "import { SessionStore } from '@trading/auth';\n\nexport const sessions = SessionStore;\n";
    expect(problems('libs/money/src/fixture.ts', code)).toEqual([expect.stringMatching(/^@nx\/enforce-module-boundaries: .*type:util/)]);
  }, 60_000);

  it('refuses a tool reaching into another project by path', () => {
    const code = "import { defaultPlatformDataDir } from '../../apps/platform/src/config';\n\nexport const dir = defaultPlatformDataDir;\n";
    expect(problems('tools/admin/fixture.ts', code)).toEqual([expect.stringMatching(/^@nx\/enforce-module-boundaries: .*relative/i)]);
    expect(
      problems(
        'tools/admin/fixture.ts',
        "import { defaultPlatformDataDir } from '@trading/config';\n\nexport const dir = defaultPlatformDataDir;\n",
      ),
    ).toEqual([]);
  }, 60_000);

  it('refuses unformatted code', () => {
    expect(formatted('export const x = {a:1}\n')).toBe(false);
    expect(formatted('export const x = { a: 1 };\n')).toBe(true);
  }, 60_000);
});
