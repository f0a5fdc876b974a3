/** What a proof prints: its steps, each check as ok or FAIL (failures kept for the exit status), and a table at the end. */
export class Report {
  readonly problems: string[] = [];

  check = (ok: boolean, what: string): boolean => {
    console.log(`  ${ok ? 'ok  ' : 'FAIL'}  ${what}`);
    if (!ok) this.problems.push(what);
    return ok;
  };

  step = (what: string): void => console.log(`\n== ${what}`);

  /** Runs the proof, then ends the process: `<name>: ok` (0), the count of failed checks, or the error (1). */
  finish(name: string, proof: Promise<void>): void {
    proof.then(
      () => {
        console.log(this.problems.length ? `\n${name}: ${this.problems.length} check(s) failed` : `\n${name}: ok`);
        process.exit(this.problems.length ? 1 : 0);
      },
      (err) => {
        console.error(err);
        console.log(`\n${name}: failed`);
        process.exit(1);
      },
    );
  }
}

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function printTable(header: string[], cells: string[][]): void {
  if (!cells.length) return;
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const c of cells) console.log(line(c));
}
