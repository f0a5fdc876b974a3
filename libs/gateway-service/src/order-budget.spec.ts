import { parse, type OperationDefinitionNode } from 'graphql';
import { placeOrderCount } from './order-budget';

const count = (query: string) => {
  const document = parse(query);
  return placeOrderCount(document, document.definitions.find((d) => d.kind === 'OperationDefinition') as OperationDefinitionNode);
};

describe('order budget', () => {
  it('charges every order-placing mutation field: placeOrder, replaceOrder, closePosition, closeAllPositions', () => {
    expect(count('mutation { placeOrder(input: {}) { id } }')).toBe(1);
    expect(count('mutation { a: replaceOrder(input: {}) { id } b: replaceOrder(input: {}) { id } }')).toBe(2);
    expect(count('mutation { closePosition(input: {}) { id } closeAllPositions(accountId: "a") { id } }')).toBe(2);
    expect(count('mutation { ...F } fragment F on Mutation { x: closePosition(input: {}) { id } y: placeOrder(input: {}) { id } }')).toBe(
      2,
    );
    expect(count('mutation { cancelOrder(orderId: "a") { id } whatIfOrder(input: {}) { quantity } }')).toBe(0);
    expect(count('query { closePosition { id } }')).toBe(0);
  });
});
