import { GraphQLError, GraphQLScalarType, GraphQLString, Kind, type ValueNode } from 'graphql';
import { DECIMAL_SYNTAX } from '@trading/money';

/** An RFC 3339 / ISO 8601 time with a zone, as `Date.prototype.toISOString` writes them. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const isDecimal = (value: string) => DECIMAL_SYNTAX.test(value);
const isDateTime = (value: string) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));

/**
 * A scalar that travels as a string in a given syntax. Output is coerced exactly as `String`
 * coerces it (so the wire format is what it was before the scalar had a name) and must then be
 * in the syntax: anything else is a bug, masked by the subgraph. Input must be a string in it.
 */
function stringScalar(
  name: string,
  description: string,
  valid: (value: string) => boolean,
  expected: string,
  prepare: (value: unknown) => unknown = (value) => value,
): GraphQLScalarType<string, string> {
  const refuse = (value: unknown) =>
    new GraphQLError(`${name} must be ${expected}; got ${JSON.stringify(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  const parse = (value: unknown): string => {
    if (typeof value !== 'string' || !valid(value)) throw refuse(value);
    return value;
  };
  return new GraphQLScalarType<string, string>({
    name,
    description,
    serialize: (value) => {
      const text = GraphQLString.serialize(prepare(value));
      if (!valid(text)) throw new Error(`${name} cannot represent ${JSON.stringify(text)}`);
      return text;
    },
    parseValue: parse,
    parseLiteral: (ast: ValueNode) => {
      if (ast.kind !== Kind.STRING) throw refuse(ast.kind === Kind.NULL ? null : 'value' in ast ? ast.value : ast.kind);
      return parse(ast.value);
    },
  });
}

export const DecimalScalar = stringScalar(
  'Decimal',
  'An exact decimal number as a string: money amounts, quantities, prices and rates ("10.50", "-3", "0.0025"). Never a JSON number, never an exponent.',
  isDecimal,
  'a decimal string such as "10.50"',
);

export const DateTimeScalar = stringScalar(
  'DateTime',
  'A point in time as an RFC 3339 (ISO 8601) string in UTC, e.g. "2026-11-21T14:03:12.000Z".',
  isDateTime,
  'an RFC 3339 time such as "2026-11-21T14:03:12.000Z"',
  // String would write a Date as its milliseconds; a time field means the ISO form.
  (value) => (value instanceof Date ? value.toISOString() : value),
);

/** The scalars' SDL: each subgraph that uses them declares them (schema.ts) and registers `scalarResolvers`. */
export const SCALARS_SDL = /* GraphQL */ `
  "An exact decimal number as a string: money amounts, quantities, prices and rates (\\"10.50\\", \\"-3\\", \\"0.0025\\"). Never a JSON number, never an exponent."
  scalar Decimal

  "A point in time as an RFC 3339 (ISO 8601) string in UTC, e.g. \\"2026-11-21T14:03:12.000Z\\"."
  scalar DateTime
`;

export const scalarResolvers = { Decimal: DecimalScalar, DateTime: DateTimeScalar };
