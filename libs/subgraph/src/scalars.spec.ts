import { buildSchema, graphql, GraphQLString } from 'graphql';
import { DateTimeScalar, DecimalScalar } from './scalars';

describe('Decimal and DateTime', () => {
  it('serialise exactly as String did, and refuse what is not in their syntax', () => {
    for (const value of ['10.50', '-3', '0', '0.0025', '-0.00', '1050']) {
      expect(DecimalScalar.serialize(value)).toBe(GraphQLString.serialize(value));
    }
    for (const value of ['2026-11-21T14:03:12.000Z', '2026-11-21T14:03:12Z', '2026-11-21T14:03:12.5+01:00']) {
      expect(DateTimeScalar.serialize(value)).toBe(value);
    }
    // A Date reaches the wire in its ISO form (String would have written its milliseconds).
    expect(DateTimeScalar.serialize(new Date('2026-11-21T14:03:12Z'))).toBe('2026-11-21T14:03:12.000Z');
    for (const bug of ['1e3', 'NaN', '', ' 1', '1,5', '+1', '.5'])
      expect(() => DecimalScalar.serialize(bug)).toThrow(/Decimal cannot represent/);
    for (const bug of ['2026-11-21', '2026-13-40T00:00:00Z', 'yesterday'])
      expect(() => DateTimeScalar.serialize(bug)).toThrow(/DateTime cannot/);
  });

  it('take input as a string in their syntax, as variables or literals, and refuse anything else as bad user input', async () => {
    const schema = buildSchema(`scalar Decimal scalar DateTime type Query { echo(amount: Decimal, at: DateTime): String }`);
    Object.assign(schema.getType('Decimal')!, { parseValue: DecimalScalar.parseValue, parseLiteral: DecimalScalar.parseLiteral });
    Object.assign(schema.getType('DateTime')!, { parseValue: DateTimeScalar.parseValue, parseLiteral: DateTimeScalar.parseLiteral });
    const rootValue = { echo: (args: { amount?: string; at?: string }) => `${args.amount}|${args.at}` };
    const run = (source: string, variableValues?: Record<string, unknown>) => graphql({ schema, source, rootValue, variableValues });

    expect((await run('{ echo(amount: "10.50", at: "2026-11-21T14:03:12Z") }')).data).toEqual({ echo: '10.50|2026-11-21T14:03:12Z' });
    const byVariables = await run('query($a: Decimal, $t: DateTime) { echo(amount: $a, at: $t) }', {
      a: '-0.0025',
      t: '2026-11-21T14:03:12.000Z',
    });
    expect(byVariables.data).toEqual({ echo: '-0.0025|2026-11-21T14:03:12.000Z' });

    for (const [source, variables] of [
      ['{ echo(amount: 10.5) }', undefined],
      ['{ echo(amount: "1e3") }', undefined],
      ['{ echo(at: "2026-11-21") }', undefined],
      ['query($a: Decimal) { echo(amount: $a) }', { a: 10.5 }],
      ['query($a: Decimal) { echo(amount: $a) }', { a: 'ten' }],
      ['query($t: DateTime) { echo(at: $t) }', { t: 1732230000000 }],
    ] as const) {
      const { errors } = await run(source, variables);
      expect(errors?.[0]?.message).toMatch(/(Decimal must be a decimal string|DateTime must be an RFC 3339 time)/);
    }
  });
});
