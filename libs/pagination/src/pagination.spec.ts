import { CursorCodec, parseDateRange, parseLimit } from './index';

describe('pagination', () => {
  const codec = new CursorCodec('s'.repeat(32));

  it('round-trips cursors and refuses edited or forged ones with a 400 naming the field', () => {
    const cursor = codec.encode('list:a', { at: '2026-01-01T00:00:00.000Z', id: 42 });
    expect(codec.decode(cursor, 'list:a', ['at', 'id'])).toEqual({ at: '2026-01-01T00:00:00.000Z', id: 42 });
    expect(() => codec.decode(cursor, 'list:b', ['at', 'id'])).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'cursor' }),
    );
    const [body, mac] = cursor.split('.');
    const edited = Buffer.from(JSON.stringify({ at: '1999-01-01', id: 1 })).toString('base64url') + '.' + mac;
    for (const bad of [edited, `${body}.x`, 'garbage', 'a.b.c', new CursorCodec('t'.repeat(32)).encode('list:a', { at: 'x', id: 1 }), 7]) {
      expect(() => codec.decode(bad, 'list:a', ['at', 'id'])).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'cursor' }));
    }
    expect(() => codec.decode(codec.encode('list:a', { at: 'x' }), 'list:a', ['at', 'id'])).toThrow(/cursor/);
    expect(codec.decode(undefined, 'list:a', ['at'])).toBeNull();
  });

  it('pages rows fetched with one extra, pointing the cursor after the last row served', () => {
    const rows = [{ seq: 3 }, { seq: 2 }, { seq: 1 }];
    const first = codec.page(
      rows,
      2,
      'l',
      (r) => ({ s: r.seq }),
      (r) => r.seq,
    );
    expect(first.nodes).toEqual([3, 2]);
    expect(codec.decode(first.nextCursor, 'l', ['s'])).toEqual({ s: 2 });
    expect(
      codec.page(
        rows,
        3,
        'l',
        (r) => ({ s: r.seq }),
        (r) => r.seq,
      ),
    ).toEqual({ nodes: [3, 2, 1], nextCursor: null });
  });

  it('bounds limits', () => {
    expect(parseLimit(undefined)).toBe(20);
    expect(parseLimit('100')).toBe(100);
    for (const bad of [0, 101, '1.5', -1, 'ten', 2.5]) expect(() => parseLimit(bad)).toThrow(expect.objectContaining({ field: 'limit' }));
  });

  it('reads date ranges with an inclusive whole-day end', () => {
    const r = parseDateRange('2026-01-01', '2026-01-31');
    expect(r.from!.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(r.to!.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(parseDateRange(undefined, '2026-01-01T10:00:00Z').to!.toISOString()).toBe('2026-01-01T10:00:00.000Z');
    expect(() => parseDateRange('2026-02-30', undefined)).toThrow(expect.objectContaining({ field: 'from' }));
    expect(() => parseDateRange('2026-02-01', '2026-01-01')).toThrow(/before/);
    expect(() => parseDateRange(undefined, 'yesterday')).toThrow(expect.objectContaining({ field: 'to' }));
  });
});
