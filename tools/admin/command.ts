/** What every admin command is: the request it makes and how its answer is printed. */

export interface Command {
  method?: 'GET' | 'POST';
  path: string;
  body: Record<string, unknown>;
  /** Ask for the password (prompt or standard input) and send it as body.password. */
  password?: boolean;
  /** The part of the answer this command is about (undefined: nothing matched, said on stderr). */
  select?(result: Record<string, unknown>): Record<string, unknown> | undefined;
  /** What to say when `select` finds nothing. */
  notFound?: string;
  print(result: Record<string, unknown>): string;
}

/** The options as parsed; each command reads its own. */
export type Values = Record<string, string | boolean | string[] | undefined>;

/** A required option's value (missing: a usage error naming it). */
export type Need = (key: any) => string;

/** A command line the CLI cannot act on: said with the usage. */
export class UsageError extends Error {}

/** Times as everywhere a person reads one: `YYYY-MM-DD HH:MM UTC` (the API's ISO instants, shortened). */
export const isoMinute = (iso: string) => `${iso.replace('T', ' ').slice(0, 16)} UTC`;
