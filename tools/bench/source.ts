/**
 * What the bench measures: the working tree as it is (the default: a developer's own change),
 * or, with `--head`, the last commit alone (`--commit <rev>`: that commit), unpacked into a temporary
 * folder (`git archive`, the project's node_modules linked in) so that edits under way in the shared
 * tree are not measured.
 */
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes';

export interface Source {
  /** Where the targets' code is run (and built) from. */
  root: string;
  commit: string;
  /** Tracked files that differ from the commit in what is measured (none for a snapshot). */
  uncommitted: string[];
  remove(): void;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

export function workingTree(): Source {
  return {
    root: ROOT,
    commit: git('rev-parse', 'HEAD'),
    uncommitted: git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean),
    remove: () => undefined,
  };
}

export function snapshotOfHead(rev = 'HEAD'): Source {
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const root = mkdtempSync(join(tmpdir(), `bench-${commit.slice(0, 7)}-`));
  execSync(`git archive ${commit} | tar -x -C ${JSON.stringify(root)}`, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, commit, uncommitted: [], remove: () => rmSync(root, { recursive: true, force: true }) };
}
