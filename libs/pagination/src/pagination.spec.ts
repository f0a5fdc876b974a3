import { CursorCodec, parseDateRange, parseLimit } from './index';

describe('pagination', () => {
  const codec = new CursorCodec('s'.repeat(32));

  it('round-trips cursors and refuses edited or forged ones with a 400 naming the field', () => {
    const cursor = codec.encode({ at: '2026-01-01T00:00:00.000Z', id: 42 });
    expect(codec.decode(cursor, ['at', 'id'])).toEqual({ at: '2026-01-01T00:00:00.000Z', id: 42 });
    const [body, mac] = cursor.split('.');
    const edited = Buffer.from(JSON.stringify({ at: '1999-01-01', id: 1 })).toString('base64url') + '.' + mac;
    for (const bad of [edited, `${body}.x`, 'garbage', 'a.b.c', new CursorCodec('t'.repeat(32)).encode({ at: 'x', id: 1 }), 7]) {
      expect(() => codec.decode(bad, ['at', 'id'])).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'cursor' }));
    }
    expect(() => codec.decode(codec.encode({ at: 'x' }), ['at', 'id'])).toThrow(/cursor/);
    expect(codec.decode(undefined, ['at'])).toBeNull();
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
