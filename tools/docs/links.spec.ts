import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
});
