import { ApolloServer } from '@apollo/server';
import { buildSchema, parse, specifiedRules, validate, type OperationDefinitionNode } from 'graphql';
import { DEFAULT_GRAPHQL_LIMITS, graphqlLimits, operationCost } from './index';

const schema = buildSchema(`
  type Account { id: ID! margin: Margin portfolios: [Portfolio!]! owner: Account }
  type Margin { equity: String }
  type Portfolio { symbol: String }
  type Query {
    account: Account
    accounts: [Account!]!
    marketBars(symbol: String!, limit: Int): BarPage!
    marketQuotes(symbols: [String!]!): [Quote!]!
  }
  type BarPage { symbol: String! timeframe: String! currency: String! nodes: [Bar!]! nextCursor: String }
  type Bar { start: String! open: String! high: String! low: String! close: String! volume: String! trades: Int! }
  type Quote { symbol: String! bid: String! ask: String! }
`);

const BARS = 'nodes { start open high low close volume trades }';
/** A page as the REST facade asks for it. */
const BAR = `symbol timeframe currency ${BARS} nextCursor`;
const costOf = (query: string, variables: Record<string, unknown> = {}) => {
  const document = parse(query);
  return operationCost(document, document.definitions.find((d) => d.kind === 'OperationDefinition') as OperationDefinitionNode, variables);
};
const aliased = (n: number, args: string, selection = BAR) =>
  `query Q($limit: Int) { ${Array.from({ length: n }, (_, i) => `a${i}: marketBars(${args}) { ${selection} }`).join(' ')} }`;

const { validationRules } = graphqlLimits(DEFAULT_GRAPHQL_LIMITS, { suggestions: false });
const problems = (query: string) => validate(schema, parse(query), [...specifiedRules, ...validationRules]).map((e) => e.message);

describe('GraphQL limits', () => {
  it('lets an ordinary operation through', () => {
    expect(problems('{ accounts { id margin { equity } portfolios { symbol } } }')).toEqual([]);
  });

  it('refuses 1,000 aliases of an expensive field before it runs', () => {
    const query = `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: account { margin { equity } portfolios { symbol } }`).join(' ')} }`;
    expect(problems(query).join(' ')).toMatch(/aliases/i);
    expect(() => parse(query, graphqlLimits(DEFAULT_GRAPHQL_LIMITS, { suggestions: false }).parseOptions)).toThrow(/2000 tokens/);
  });

  it('refuses too many root fields, also through fragments', () => {
    const fields = Array.from({ length: 11 }, (_, i) => `f${i}: accounts { id }`).join(' ');
    expect(problems(`{ ${fields} }`).join(' ')).toMatch(/root fields limit of 10/);
    expect(
      problems(`query { ...F } fragment F on Query { ${Array.from({ length: 11 }, (_, i) => `x${i}: account { id }`).join(' ')} }`).join(
        ' ',
      ),
    ).toMatch(/root fields/);
  });

  it('refuses deep nesting', () => {
    const deep = `{ account { ${'owner { '.repeat(20)}id${' }'.repeat(20)} } }`;
    expect(problems(deep).join(' ')).toMatch(/depth/i);
  });

  it('gives no "did you mean" hint for a mistyped field from a server, unless asked to', async () => {
    const answer = async (suggestions: boolean) => {
      const server = new ApolloServer({ schema, ...graphqlLimits(DEFAULT_GRAPHQL_LIMITS, { suggestions }) });
      await server.start();
      try {
        const res = await server.executeOperation({ query: '{ acount { id } }' });
        return JSON.stringify(res.body);
      } finally {
        await server.stop();
      }
    };
    expect(await answer(false)).not.toMatch(/did you mean/i);
    expect(await answer(true)).toMatch(/did you mean/i);
  });

  it('prices a page of bars by its size, however it is sent, and aliases multiply it', () => {
    const page = (args: string, variables = {}) => costOf(`query Q($limit: Int) { marketBars(${args}) { ${BAR} } }`, variables);
    // A page of 1,000 bars costs ten pages of 100; absent, the default page (20); sent as a literal or a variable alike.
    expect(page('symbol: "A", limit: 1000')).toBeCloseTo(10 * page('symbol: "A", limit: 100'));
    expect(page('symbol: "A", limit: $limit', { limit: 1000 })).toBe(page('symbol: "A", limit: 1000'));
    expect(page('symbol: "A"')).toBe(page('symbol: "A", limit: 20'));
    expect(page('symbol: "A", limit: $limit', {})).toBe(page('symbol: "A", limit: 20'));
    // Beyond the field's maximum the field refuses it itself (naming limit): counted as the maximum.
    expect(page('symbol: "A", limit: $limit', { limit: 1e9 })).toBe(page('symbol: "A", limit: 10000'));
    // Ten aliases cost ten times one.
    expect(costOf(aliased(10, 'symbol: "A", limit: $limit'), { limit: 1000 })).toBeCloseTo(
      10 * costOf(aliased(1, 'symbol: "A", limit: 1000')),
    );
    // A quotes list is priced by its symbols.
    const symbols = (n: number) => Array.from({ length: n }, (_, i) => `S${i}`);
    expect(costOf('query Q($s: [String!]!) { marketQuotes(symbols: $s) { symbol bid ask } }', { s: symbols(100) })).toBeCloseTo(
      10 * costOf('query Q($s: [String!]!) { marketQuotes(symbols: $s) { symbol bid ask } }', { s: symbols(10) }),
    );
  });

  it('lets one 10,000-bar page through and refuses two, before anything runs and before the later plugins charge anything', async () => {
    let ran = 0;
    let laterHook = 0;
    const rootValue = {
      marketBars: () => {
        ran++;
        return { symbol: 'A', timeframe: '1Min', currency: 'USD', nodes: [], nextCursor: null };
      },
      marketQuotes: () => [],
    };
    const server = new ApolloServer({
      schema,
      rootValue,
      ...graphqlLimits(DEFAULT_GRAPHQL_LIMITS, { suggestions: false }),
      plugins: [
        ...graphqlLimits(DEFAULT_GRAPHQL_LIMITS, { suggestions: false }).plugins,
        { requestDidStart: async () => ({ didResolveOperation: async () => void laterHook++ }) },
      ],
    });
    await server.start();
    try {
      const variables = { limit: 10_000 };
      const allowed = await server.executeOperation({ query: aliased(1, 'symbol: "A", limit: $limit'), variables });
      expect(allowed.body.kind === 'single' && allowed.body.singleResult.errors).toBeUndefined();
      expect([ran, laterHook]).toEqual([1, 1]);
      for (const query of [aliased(2, 'symbol: "A", limit: $limit'), aliased(10, 'symbol: "A", limit: $limit')]) {
        const refused = await server.executeOperation({ query, variables });
        expect(refused.http.status).toBe(400);
        const errors = refused.body.kind === 'single' ? refused.body.singleResult.errors : undefined;
        expect(errors?.[0]).toMatchObject({
          message: expect.stringMatching(/^Syntax Error: Query Cost limit of 5000 exceeded, found \d+\.$/),
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        });
      }
      expect([ran, laterHook]).toEqual([1, 1]);
      // Smaller pages: ten of 1,000 bars are the same 10,000 bars, and pass.
      const small = await server.executeOperation({ query: aliased(10, 'symbol: "A", limit: $limit'), variables: { limit: 1000 } });
      expect(small.body.kind === 'single' && small.body.singleResult.errors).toBeUndefined();
    } finally {
      await server.stop();
    }
  });
});
