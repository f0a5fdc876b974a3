import {
  compareActivities,
  decodePageToken,
  encodePageToken,
  mergeActivities,
  parseActivityTypes,
  sourceTo,
  type Activity,
  type ActivityType,
  type SourcePage,
} from './activities';

const T = '2026-11-20T10:00:00.000Z';
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const item = (type: ActivityType, n: number, occurredAt = T): Activity => ({ id: uuid(n), type, occurredAt });
const source = (type: ActivityType, items: Activity[], more = false): SourcePage => ({ type, items, more });
const ids = (items: Activity[]) => items.map((a) => `${a.type}:${Number(a.id.slice(-12))}`);

/** Walks every page as a client would, each source answering what it holds up to `sourceTo` of the boundary. */
function walk(all: Activity[], limit: number, sourceLimit = 100): Activity[] {
  const seen: Activity[] = [];
  let token: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const boundary = decodePageToken(token ?? undefined);
    const sources = (['FILL', 'DEPOSIT', 'WITHDRAWAL', 'FEE'] as const).map((type) => {
      const to = sourceTo(type, boundary, undefined);
      const rows = all.filter((a) => a.type === type && (!to || Date.parse(a.occurredAt) < Date.parse(to)));
      return source(type, rows.slice(0, sourceLimit), rows.length > sourceLimit);
    });
    const page = mergeActivities(sources, boundary, limit);
    seen.push(...page.activities);
    token = page.nextPageToken;
    if (!token) return seen;
  }
  throw new Error('paging did not end');
}

describe('account activity feed', () => {
  it('orders newest first, then FILL, DEPOSIT, WITHDRAWAL, FEE at the same moment, then by id descending', () => {
    const later = item('FEE', 1, '2026-11-20T10:00:00.001Z');
    const sorted = [item('FILL', 2), item('FILL', 1), item('DEPOSIT', 9), item('FEE', 3), later].sort(compareActivities);
    expect(ids(sorted)).toEqual(['FEE:1', 'FILL:2', 'FILL:1', 'DEPOSIT:9', 'FEE:3']);
  });

  it('merges the sources newest first and hands a token only while more remain', () => {
    const fills = source('FILL', [item('FILL', 1, '2026-11-20T10:00:03.000Z'), item('FILL', 2, '2026-11-20T10:00:01.000Z')]);
    const deposits = source('DEPOSIT', [item('DEPOSIT', 3, '2026-11-20T10:00:02.000Z')]);
    const first = mergeActivities([fills, deposits, source('FEE', [])], null, 2);
    expect(ids(first.activities)).toEqual(['FILL:1', 'DEPOSIT:3']);
    expect(decodePageToken(first.nextPageToken!)).toEqual({ occurredAt: '2026-11-20T10:00:02.000Z', type: 'DEPOSIT', id: uuid(3) });
    const all = mergeActivities([fills, deposits], null, 3);
    expect(ids(all.activities)).toEqual(['FILL:1', 'DEPOSIT:3', 'FILL:2']);
    expect(all.nextPageToken).toBeNull();
  });

  it('an empty source, or none at all, gives an empty last page', () => {
    expect(mergeActivities([source('FILL', []), source('FEE', [])], null, 20)).toEqual({ activities: [], nextPageToken: null });
    expect(mergeActivities([], null, 20)).toEqual({ activities: [], nextPageToken: null });
  });

  it('pages one by one through items sharing one timestamp, each exactly once and in feed order', () => {
    const all = [item('FILL', 5), item('FILL', 4), item('DEPOSIT', 7), item('FEE', 2), item('FEE', 1), item('WITHDRAWAL', 3)];
    const expected = ids([...all].sort(compareActivities));
    for (const limit of [1, 2, 4, 10]) expect(ids(walk(all, limit))).toEqual(expected);
  });

  it('serves nothing past the oldest row of a source that holds more, so its unsent rows are not skipped', () => {
    // The fill source sent 2 of its rows; the third shares the millisecond of the second.
    const fills = source('FILL', [item('FILL', 9, '2026-11-20T10:00:05.000Z'), item('FILL', 2)], true);
    const fees = source('FEE', [item('FEE', 1, '2026-11-20T09:00:00.000Z')]);
    const page = mergeActivities([fills, fees], null, 10);
    expect(ids(page.activities)).toEqual(['FILL:9']);
    expect(page.nextPageToken).not.toBeNull();
    // Walked with sources that send four rows at a time, nothing is lost or repeated, though a
    // source lists two fills of one millisecond in another order than the feed does.
    const all = [
      item('FILL', 9, '2026-11-20T10:00:05.000Z'),
      item('FILL', 8, '2026-11-20T10:00:04.000Z'),
      item('FILL', 2),
      item('FILL', 3),
      item('FILL', 4, '2026-11-20T09:30:00.000Z'),
      item('FEE', 1, '2026-11-20T09:00:00.000Z'),
    ];
    expect(ids(walk(all, 10, 4))).toEqual(['FILL:9', 'FILL:8', 'FILL:3', 'FILL:2', 'FILL:4', 'FEE:1']);
  });

  it('refuses a page that cannot move past a boundary, rather than answering the same token again', () => {
    const fills = source('FILL', [item('FILL', 2), item('FILL', 1)], true);
    expect(() => mergeActivities([fills], { occurredAt: T, type: 'FILL', id: uuid(3) }, 5)).toThrow(
      expect.objectContaining({ code: 'UNPROCESSABLE', field: 'pageToken' }),
    );
  });

  it('asks a type that comes before the boundary at its moment strictly before it, the rest up to and including it', () => {
    const boundary = { occurredAt: T, type: 'DEPOSIT' as const, id: uuid(1) };
    expect(sourceTo('FILL', boundary, '2030-01-01')).toBe(T);
    expect(sourceTo('DEPOSIT', boundary, undefined)).toBe('2026-11-20T10:00:00.001Z');
    expect(sourceTo('FEE', boundary, undefined)).toBe('2026-11-20T10:00:00.001Z');
    expect(sourceTo('FEE', null, '2026-11-21')).toBe('2026-11-21');
  });

  it('round-trips a token and refuses anything else with a 400 naming pageToken', () => {
    const key = { occurredAt: T, type: 'WITHDRAWAL' as const, id: uuid(4) };
    expect(decodePageToken(encodePageToken(key))).toEqual(key);
    expect(decodePageToken(undefined)).toBeNull();
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const bad = [
      '',
      'not a token',
      'x'.repeat(300),
      b64([T, 'FILL', uuid(1)]),
      b64({ t: T, k: 'TRADE', i: uuid(1) }),
      b64({ t: T, k: 'FILL', i: 'abc' }),
      b64({ t: '2026-11-20', k: 'FILL', i: uuid(1) }),
      b64({ t: '2026-02-30T10:00:00.000Z', k: 'FILL', i: uuid(1) }),
      b64({ t: T, k: 'FILL', i: uuid(1), x: 1 }),
      b64({ t: T, k: 'FILL' }),
      b64({ k: 'FILL', t: T, i: uuid(1) }),
      Buffer.from('{"t":').toString('base64url'),
      b64(null),
    ];
    for (const token of bad)
      expect(() => decodePageToken(token)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'pageToken' }));
  });

  it('reads types as a comma-separated list of known types, refusing any other with a 400 naming types', () => {
    expect(parseActivityTypes(undefined)).toEqual(['FILL', 'DEPOSIT', 'WITHDRAWAL', 'FEE']);
    expect(parseActivityTypes('FEE,FILL,FEE')).toEqual(['FEE', 'FILL']);
    for (const raw of ['', 'TRADE', 'FILL,', 'fill', 'FILL,SETTLEMENT'])
      expect(() => parseActivityTypes(raw)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'types' }));
  });
});
