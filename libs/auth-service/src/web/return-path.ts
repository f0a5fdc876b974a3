/**
 * Stands for this site's own origin while a return address is resolved: any origin would do, as
 * only a path on it is ever accepted, and `.invalid` can never name a real host.
 */
const OWN_ORIGIN = 'https://this-site.invalid';

/** Longest return address kept; a longer one is dropped and the page's default applies. */
const MAX_LENGTH = 2048;

/**
 * In the path part, percent-encoded dots, slashes, backslashes and control characters: the URL
 * parser turns `%2e` into a dot segment (so `/%2e//evil.example` becomes `//evil.example`), and no
 * page of ours has them in its path. The query may carry them: it holds encoded URLs
 * (`redirect_uri=https%3A%2F%2F…`) and never changes where the path leads.
 */
const ENCODED_IN_PATH = /%(2e|2f|5c|[01][0-9a-f]|7f)/i;

/**
 * A caller-supplied return address (`next`, `back`) as a path on this site, or undefined, so the
 * page falls back to its own default: never another site (no open redirect).
 *
 * The value is resolved with the URL parser first, as a browser would resolve it, and the
 * result, not the raw string, is what is checked and returned: it must be on our own origin,
 * and its path must not start with `//` (`/.//evil.example`, `/en/..//evil.example` normalise to
 * `//evil.example`, a link to another host). Refused before parsing: anything but printable
 * ASCII (browsers drop tabs and newlines inside a URL, so `/\t/evil.example` is
 * `//evil.example`), backslashes (browsers read `/\` as `//`), anything not starting with one
 * `/` (`https:`, `javascript:`, `//host`), and encoded dots, slashes and backslashes in the path.
 */
export function returnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_LENGTH) return undefined;
  if (!/^\/[\x21-\x7e]*$/.test(value) || value.includes('\\') || value.startsWith('//')) return undefined;
  if (ENCODED_IN_PATH.test(value.split(/[?#]/, 1)[0]!)) return undefined;
  let url: URL;
  try {
    url = new URL(value, OWN_ORIGIN);
  } catch {
    return undefined;
  }
  if (url.origin !== OWN_ORIGIN || url.username || url.password) return undefined;
  if (!url.pathname.startsWith('/') || url.pathname.startsWith('//')) return undefined;
  return url.pathname + url.search + url.hash;
}

/**
 * A return address taken apart, for a page that rewrites it (the language switcher swaps its
 * locale): resolved on the same stand-in origin, and written back with `pathOf`, which checks it again.
 */
export const returnUrl = (path: string) => new URL(path, OWN_ORIGIN);

/** The path, query and fragment of a rewritten return address, if it is still a path on this site. */
export const pathOf = (url: URL) => returnPath(url.pathname + url.search + url.hash);
