import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** The Markdown the repository ships: tracked files only (not node_modules, not build output). */
function markdownFiles(): string[] {
  return execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.startsWith('node_modules/'));
}

/** Inline links and images `[text](target)` and reference definitions `[x]: target`, outside code. */
export function linksIn(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const defined = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...defined];
}

/** What is wrong with one link of `file`, or undefined. Local URLs of a running platform are fine. */
export function linkProblem(file: string, target: string): string | undefined {
  if (/^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])([:/]|$)/.test(target)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return `${file}: ${target} leaves the repository`;
  if (target.startsWith('#')) return undefined;
  const path = decodeURIComponent(target.split('#')[0]!);
  const full = resolve(join(ROOT, dirname(file)), path);
  if (relative(ROOT, full).startsWith('..')) return `${file}: ${target} points outside the repository`;
  if (!existsSync(full)) return `${file}: ${target} does not exist`;
  return undefined;
}

/**
 * Repository paths the prose names in backticks (inline code, not fenced blocks): a token that
 * starts with apps/, libs/, tools/, deploy/, docs/, reports/ or .ci/, or a name the repository keeps
 * at its top (package manifests, tsconfig*.json, nx.json, tool configs, Dockerfile,
 * docker-compose.yml, capitalised documents such as README.md). A bare file name found deeper in
 * the tree (`main.ts`) is prose, not a path, and is not checked. Globs (`*`) and URL-like tokens are
 * skipped; a `#anchor` or `:line` after the path is dropped. `<name>` and `{name}` are placeholders
 * for one part of a path: such a path must fit at least one real one.
 */
export function repositoryPathsIn(markdown: string): string[] {
  const spans = [...markdown.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
  const topLevel =
    /^(package(-lock)?\.json|tsconfig[\w.-]*\.json|nx\.json|knip\.ts|jest\.preset\.js|[\w-]+\.config\.[cm]?js|Dockerfile|docker-compose\.ya?ml|[A-Z][A-Z_-]*\.md)$/;
  return spans
    .filter((t) => !/\s/.test(t) && !t.includes('*') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(t))
    .map((t) => t.replace(/(#.*|:\d+(-\d+)?)$/, ''))
    .filter((t) => /^(apps|libs|tools|deploy|docs|reports|\.ci)\//.test(t) || topLevel.test(t));
}

/** Whether `path` (from the top of the repository, placeholders allowed) names something that exists. */
export function pathExists(path: string, root = ROOT): boolean {
  const parts = path.split('/').filter(Boolean);
  let candidates = [root];
  for (const part of parts) {
    if (!/<[^>]+>|\{[^}]+\}/.test(part)) {
      candidates = candidates.map((dir) => join(dir, part)).filter((p) => existsSync(p));
      continue;
    }
    const fits = new RegExp(
      `^${part
        .split(/<[^>]+>|\{[^}]+\}/)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.+')}$`,
    );
    candidates = candidates.flatMap((dir) =>
      existsSync(dir) && !dir.includes('node_modules')
        ? readdirSync(dir, { withFileTypes: true })
            .filter((e) => fits.test(e.name))
            .map((e) => join(dir, e.name))
        : [],
    );
  }
  return candidates.length > 0;
}

describe('the documentation', () => {
  it('links only to files inside the repository that exist', () => {
    const files = markdownFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'SECURITY.md']));
    const problems = files.flatMap((file) =>
      linksIn(readFileSync(join(ROOT, file), 'utf8'))
        .map((target) => linkProblem(file, target))
        .filter((p): p is string => !!p),
    );
    expect(problems).toEqual([]);
  });

  it('catches each kind of bad link (the check itself bites)', () => {
    expect(linksIn('see [notes](../elsewhere/notes.md) and ![x](img.png) but not `[a](b)`\n[ref]: https://example.com')).toEqual([
      '../elsewhere/notes.md',
      'img.png',
      'https://example.com',
    ]);
    expect(linkProblem('README.md', '../elsewhere/notes.md')).toMatch(/outside the repository/);
    expect(linkProblem('README.md', 'https://example.com/x')).toMatch(/leaves the repository/);
    expect(linkProblem('README.md', 'docs/missing.md')).toMatch(/does not exist/);
    expect(linkProblem('docs/vendor-quickstart.md', '../README.md#the-two-commands')).toBeUndefined();
    expect(linkProblem('README.md', 'http://localhost:8080/docs')).toBeUndefined();
  });

  it('names in backticks only repository paths that exist (docs/*.md and README.md)', () => {
    const files = markdownFiles().filter((f) => f === 'README.md' || /^docs\/[^/]+\.md$/.test(f));
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md']));
    const missing = files.flatMap((file) =>
      repositoryPathsIn(readFileSync(join(ROOT, file), 'utf8'))
        .filter((path) => !pathExists(path))
        .map((path) => `${file}: \`${path}\` does not exist`),
    );
    expect(missing).toEqual([]);
  });

  it('tells a repository path from prose, and resolves placeholders (the path check itself bites)', () => {
    const doc = [
      'see `libs/db/src/index.ts#L3`, `package.json`, `README.md` and `tools/bench/bench.ts:12`',
      'not `main.ts`, `npm run bench`, `apps/*/src/main.ts`, `https://example.com/apps/x` or `GET /v1/accounts`',
      '```\nlibs/in-a-fence.ts\n```',
      'and `libs/<domain>-service/src/scopes.ts`',
    ].join('\n');
    expect(repositoryPathsIn(doc)).toEqual([
      'libs/db/src/index.ts',
      'package.json',
      'README.md',
      'tools/bench/bench.ts',
      'libs/<domain>-service/src/scopes.ts',
    ]);
    expect(pathExists('libs/<domain>-service/src/scopes.ts')).toBe(true);
    expect(pathExists('apps/<subgraph>/src/scopes.ts')).toBe(false);
    expect(pathExists('tools/bench/no-such-file.ts')).toBe(false);
    expect(pathExists('package.json')).toBe(true);
  });
});
