/**
 * Characters that are not text to show a person: C0 and C1 controls and DEL (a terminal acts on
 * them: ESC starts a sequence that moves the cursor, recolours or retitles the window, BEL rings),
 * line and paragraph separators, and the Unicode controls that reorder or hide what surrounds
 * them (bidi embeddings, overrides, isolates and marks). Text others give us (a vendor's app name,
 * a URL) must not hold them, and anything printed to an operator is shown with them escaped.
 */
const CONTROL_OR_BIDI = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const CONTROL_OR_BIDI_ALL = new RegExp(CONTROL_OR_BIDI.source, 'gu');

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first control or bidi character in `value` as `U+001B`, or null when it has none. */
export function unsafeCharacter(value: string): string | null {
  const found = CONTROL_OR_BIDI.exec(value);
  return found ? codePoint(found[0]) : null;
}

/** Why `value` is not plain text ("must not contain control or bidi characters (U+001B)"), or null. */
export function plainTextProblem(value: string): string | null {
  const found = unsafeCharacter(value);
  return found ? `must not contain control characters or bidirectional-text controls (found ${found})` : null;
}

/**
 * `text` safe to write to a terminal: every control character becomes `\xNN` and every bidi
 * control `\u{NNNN}`, so what is printed is what is there. Line breaks are kept only when asked
 * (the layout's own lines); a value's line break is escaped, so it cannot draw a row of its own.
 */
export function printable(text: string, options: { keepLineBreaks?: boolean } = {}): string {
  return text.replace(CONTROL_OR_BIDI_ALL, (c) => {
    if (c === '\n' && options.keepLineBreaks) return c;
    const n = c.codePointAt(0)!;
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u{${n.toString(16)}}`;
  });
}

/** Every string in a JSON value (keys too) passed through `printable`. */
export function printableDeep<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T;
  if (Array.isArray(value)) return value.map((v) => printableDeep(v)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)])) as T;
  return value;
}

/**
 * A JSON document safe to write to a terminal and still the same JSON: the controls and bidi
 * characters `JSON.stringify` leaves as they are (DEL, C1, bidi) become `\uNNNN` escapes.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(CONTROL_OR_BIDI_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
