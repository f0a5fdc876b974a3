import { plainTextProblem, printable, printableDeep, printableJson, unsafeCharacter } from './text';

/** Whatever would act on a terminal or reorder text: nothing of it may survive printing. */
const RAW = /(?!\n)[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe('text from others', () => {
  it('names the first control or bidi character, and passes plain text of any script', () => {
    expect(unsafeCharacter('Trusted Bank Ltd')).toBeNull();
    expect(plainTextProblem('Zürich Börse – 株式会社 – شركة')).toBeNull();
    expect(unsafeCharacter('A\u001b[2J')).toBe('U+001B');
    expect(unsafeCharacter('ring\u0007')).toBe('U+0007');
    expect(unsafeCharacter('csi\u009b31m')).toBe('U+009B');
    expect(unsafeCharacter('del\u007f')).toBe('U+007F');
    expect(unsafeCharacter('evil\u202Egnp.exe')).toBe('U+202E');
    for (const c of ['\u2066', '\u2069', '\u200e', '\u200f', '\u061c', '\n', '\t', '\u2028'])
      expect(plainTextProblem(`a${c}b`)).toContain('must not contain control characters');
  });

  it('prints controls and bidi characters as escapes, a value line break too', () => {
    const hostile = 'Acme\u001b[1A\u001b[2KTrusted Bank Ltd ACTIVE\u0007\u001b]0;pwned\u0007\u009b2J\u202Etxt.exe\nfake row';
    const shown = printable(hostile);
    expect(shown).not.toMatch(RAW);
    expect(shown).not.toContain('\n');
    expect(shown).toBe('Acme\\x1b[1A\\x1b[2KTrusted Bank Ltd ACTIVE\\x07\\x1b]0;pwned\\x07\\x9b2J\\u{202e}txt.exe\\x0afake row');
    expect(printable('row one\nrow two\u001b', { keepLineBreaks: true })).toBe('row one\nrow two\\x1b');
    expect(printableDeep({ ['k\u001b']: ['a\u0007', 1, null, { b: '\u2066x' }] })).toEqual({
      'k\\x1b': ['a\\x07', 1, null, { b: '\\u{2066}x' }],
    });
  });

  it('keeps JSON the same JSON, with nothing raw in it', () => {
    const value = { appName: 'A\u001b\u007f\u0085\u202e\u2069B', n: 1 };
    const text = printableJson(value);
    expect(text).not.toMatch(RAW);
    expect(JSON.parse(text)).toEqual(value);
  });
});
