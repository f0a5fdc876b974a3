import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { resolverTypes, staleFiles } from './generate';
import { SUBGRAPH_TYPES } from './subgraphs';

const ROOT = join(__dirname, '../..');

/**
 * The type errors of `code` as if it were the file `path` of the repository, type-checked with
 * the repository's tsconfig (the file need not exist: the compiler host serves it).
 */
function typeErrors(path: string, code: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const fixture = join(ROOT, path);
  const host = ts.createCompilerHost(config.options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => file === fixture || fileExists(file);
  host.readFile = (file) => (file === fixture ? code : readFile(file));
  host.getSourceFile = (file, language, ...rest) =>
    file === fixture ? ts.createSourceFile(file, code, language) : getSourceFile(file, language, ...rest);
  const program = ts.createProgram([fixture], config.options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(fixture)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
}

describe('generated resolver types', () => {
  // The OMS's instruments resolvers, as a fixture beside the real ones.
  const fixture = 'libs/oms-service/src/instruments/fixture.ts';
  const resolvers = (map: string) =>
    `import type { Resolvers } from '../resolvers-types.generated';\n\nexport const resolvers: Resolvers = ${map};\n`;

  it('accept resolvers that match the SDL', () => {
    expect(typeErrors(fixture, resolvers('{ Query: { instruments: () => [] }, Instrument: { tradable: () => true } }'))).toEqual([]);
  }, 120_000);

  it('refuse a resolver for a field the SDL does not have', () => {
    expect(typeErrors(fixture, resolvers('{ Query: { instruments: () => [], delistedInstruments: () => [] } }'))).toEqual([
      expect.stringMatching(/'delistedInstruments' does not exist in type 'QueryResolvers/),
    ]);
  }, 120_000);

  it('refuse resolvers for a type the SDL does not have, and a resolver returning the wrong type', () => {
    expect(typeErrors(fixture, resolvers('{ Stock: {} }'))).toEqual([expect.stringMatching(/'Stock' does not exist in type 'Resolvers/)]);
    expect(typeErrors(fixture, resolvers(`{ Instrument: { tradable: () => 'yes' } }`))).toEqual([
      expect.stringMatching(/Type 'string' is not assignable to type 'ResolverTypeWrapper<boolean>/),
    ]);
  }, 120_000);
});

describe('npm run graphql-types:check', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'graphql-types-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };

  it('names each generated file that is stale or missing, and only those', async () => {
    const [accounts, banking, oms] = SUBGRAPH_TYPES as [
      (typeof SUBGRAPH_TYPES)[number],
      (typeof SUBGRAPH_TYPES)[number],
      (typeof SUBGRAPH_TYPES)[number],
    ];
    write(accounts.output, await resolverTypes(accounts));
    // banking's SDL gained a field since its types were generated
    write(banking.output, (await resolverTypes(banking)).replace(/\n {2}availableToWithdraw\?: [^\n]*/, ''));
    // oms's types were never generated
    expect(await staleFiles(root)).toEqual([banking.output, oms.output]);
    write(banking.output, await resolverTypes(banking));
    write(oms.output, await resolverTypes(oms));
    expect(await staleFiles(root)).toEqual([]);
  });

  it('finds the committed files current', async () => {
    expect(await staleFiles()).toEqual([]);
  });
});
