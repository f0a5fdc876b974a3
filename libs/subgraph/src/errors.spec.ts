import { buildSchema, graphql, GraphQLError } from 'graphql';
import { AppError } from '@trading/errors';
import { createLogger } from '@trading/logging';
import { DecimalScalar } from './scalars';
import { formatSubgraphError, variableFieldAtFault } from './errors';

describe('subgraph errors', () => {
  const logger = createLogger('errors-spec', 'silent');

  it("names the input field a variable failed on, from graphql-js's own messages", async () => {
    const schema = buildSchema(`
      scalar Decimal
      input Leg { quantity: Decimal! }
      input Order { amount: Decimal!, legs: [Leg!] }
      type Query { place(order: Order, amount: Decimal): String }
    `);
    Object.assign(schema.getType('Decimal')!, { parseValue: DecimalScalar.parseValue, parseLiteral: DecimalScalar.parseLiteral });
    const failOn = async (source: string, variableValues: Record<string, unknown>) =>
      (await graphql({ schema, source, variableValues, rootValue: { place: () => 'ok' } })).errors?.[0]?.message ?? '';

    const nested = await failOn('query($o: Order) { place(order: $o) }', { o: { amount: '1e3' } });
    expect(nested).toMatch(/^Variable "\$o" got invalid value "1e3" at "o\.amount"; Decimal must be/);
    expect(variableFieldAtFault(nested)).toBe('amount');
    const inList = await failOn('query($o: Order) { place(order: $o) }', { o: { amount: '1', legs: [{ quantity: 'ten' }] } });
    expect(variableFieldAtFault(inList)).toBe('legs[0].quantity');
    const whole = await failOn('query($amount: Decimal) { place(amount: $amount) }', { amount: 10.5 });
    expect(variableFieldAtFault(whole)).toBe('amount');
    const missing = await failOn('query($o: Order) { place(order: $o) }', { o: {} });
    expect(variableFieldAtFault(missing)).toBe('o');
    expect(variableFieldAtFault('Cannot query field "x" on type "Query".')).toBeUndefined();
  });

  it('keeps the code and field of deliberate errors and masks everything else', () => {
    const refused = new GraphQLError('x', {
      originalError: new AppError('BAD_USER_INPUT', 'amount must be positive', { field: 'amount' }),
    });
    expect(formatSubgraphError({ message: 'x' }, refused, logger)).toEqual({
      message: 'amount must be positive',
      extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'amount' }),
    });
    const coerced = {
      message: 'Variable "$input" got invalid value "1e3" at "input.amount"; Decimal must be a decimal string such as "10.50"; got "1e3"',
      extensions: { code: 'BAD_USER_INPUT', stacktrace: ['at secret.ts:1'] },
    };
    expect(formatSubgraphError(coerced, new GraphQLError(coerced.message), logger)).toEqual({
      message: coerced.message,
      extensions: { code: 'BAD_USER_INPUT', field: 'amount' },
    });
    const bug = new GraphQLError('boom', { originalError: new TypeError('cannot read x of undefined at /srv/app.ts') });
    expect(formatSubgraphError({ message: 'cannot read x of undefined at /srv/app.ts', path: ['deposit'] }, bug, logger)).toEqual({
      message: 'Internal server error',
      path: ['deposit'],
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
  });

  it('says SERVICE_UNAVAILABLE (retry) when the database said "not now", without its words or SQL', () => {
    const lockWait = Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03', query: 'SELECT secret FROM x' });
    const failed = new GraphQLError(lockWait.message, { originalError: lockWait });
    expect(formatSubgraphError({ message: lockWait.message, path: ['withdraw'] }, failed, logger)).toEqual({
      message: expect.stringMatching(/briefly unavailable; nothing was changed, try again/),
      path: ['withdraw'],
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
    const duplicate = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    expect(formatSubgraphError({ message: duplicate.message }, new GraphQLError('x', { originalError: duplicate }), logger)).toMatchObject({
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
  });
});
