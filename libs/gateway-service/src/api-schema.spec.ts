import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { getNamedType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, type GraphQLSchema } from 'graphql';

/** The public API: the committed supergraph with everything @inaccessible removed, as the gateway serves it. */
const api: GraphQLSchema = Supergraph.build(readFileSync(join(__dirname, 'supergraph.graphql'), 'utf8'))
  .apiSchema()
  .toGraphQLJSSchema();

const ours = () =>
  Object.values(api.getTypeMap()).filter((t) => (!t.name.startsWith('__') && !isScalarType(t)) || ['Decimal', 'DateTime'].includes(t.name));

describe('the public GraphQL API', () => {
  it('describes every type, field, argument and enum value', () => {
    const missing: string[] = [];
    for (const type of ours()) {
      // The root operation types are named by the spec; their fields carry the meaning.
      if (!type.description && type !== api.getQueryType() && type !== api.getMutationType()) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (!field.description) missing.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : [])
            if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
      if (isEnumType(type)) for (const value of type.getValues()) if (!value.description) missing.push(`${type.name}.${value.name}`);
    }
    expect(missing).toEqual([]);
  });

  it('has exact decimals and times as Decimal and DateTime, never a bare String', () => {
    expect(isScalarType(api.getType('Decimal'))).toBe(true);
    expect(isScalarType(api.getType('DateTime'))).toBe(true);
    const typeOf = (coordinate: string) => {
      const [type, field] = coordinate.split('.') as [string, string];
      const owner = api.getType(type);
      if (!isObjectType(owner) && !isInputObjectType(owner)) throw new Error(`${type} is not an object or input type`);
      return getNamedType(owner.getFields()[field]!.type).name;
    };
    for (const money of [
      'CashBalance.cash',
      'CashBalance.availableToWithdraw',
      'CashBalance.pendingIn',
      'CashBalance.pendingOut',
      'FundingTransaction.amount',
      'Order.commission',
      'Trade.netAmount',
    ])
      expect([money, typeOf(money)]).toEqual([money, 'Decimal']);
    for (const figure of [
      'Position.quantity',
      'Position.averageCost',
      'Instrument.lastPrice',
      'OrderRules.commissionRate',
      'Portfolio.allocationPercent',
    ])
      expect([figure, typeOf(figure)]).toEqual([figure, 'Decimal']);
    // What clients send too: a bad decimal is refused by the scalar, naming the field, before any resolver runs.
    for (const input of ['FundingInput.amount', 'OrderInput.quantity', 'OrderInput.limitPrice', 'OrderInput.stopPrice'])
      expect([input, typeOf(input)]).toEqual([input, 'Decimal']);
    for (const time of ['Account.createdAt', 'Order.createdAt', 'Trade.executedAt', 'CashActivity.occurredAt', 'Margin.asOf'])
      expect([time, typeOf(time)]).toEqual([time, 'DateTime']);
  });
});
