import { ApolloServer } from '@apollo/server';
import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { DEFAULT_GRAPHQL_LIMITS, graphqlLimits } from './index';

const schema = buildSchema(`
  type Account { id: ID! margin: Margin portfolios: [Portfolio!]! owner: Account }
  type Margin { equity: String }
  type Portfolio { symbol: String }
  type Query { account: Account accounts: [Account!]! }
`);

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
});
