import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import {
  GraphQLError,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import { DEFAULT_LIMIT } from '@trading/pagination';

/** What one operation may ask for; checked during validation, before anything runs. */
export interface GraphQLLimits {
  maxAliases: number;
  /** Top-level fields of one operation (each one a separate read of the service). */
  maxRootFields: number;
  maxDepth: number;
  maxTokens: number;
  maxDirectives: number;
  /** The estimate of `operationCost`: objects 2, scalars 1, times 1.5 per level of depth, sized fields times their size. */
  maxCost: number;
}

/** Generous for every operation the REST facade and the docs' examples send; far below what hurts. */
export const DEFAULT_GRAPHQL_LIMITS: GraphQLLimits = {
  maxAliases: 15,
  maxRootFields: 10,
  maxDepth: 12,
  maxTokens: 2000,
  maxDirectives: 50,
  maxCost: 5000,
};

/** The gateway's query plans wrap fields in `_entities { ... on Type }`: subgraphs allow that much more depth. */
export const SUBGRAPH_GRAPHQL_LIMITS: GraphQLLimits = { ...DEFAULT_GRAPHQL_LIMITS, maxDepth: DEFAULT_GRAPHQL_LIMITS.maxDepth + 2 };

/**
 * Root fields whose work grows with one argument: a page size (its default when absent) or a
 * list's length. Each costs its shape's estimate once per `perUnit` items it may return (at
 * least once), so ten aliases of a page cost ten times one. A size beyond the field's own
 * maximum counts as the maximum: the field refuses it itself, naming the argument.
 */
const SIZED_FIELDS: Readonly<Record<string, { argument: string; default: number; max: number; perUnit: number }>> = {
  marketBars: { argument: 'limit', default: DEFAULT_LIMIT, max: 10_000, perUnit: 100 },
  marketBarSets: { argument: 'limit', default: DEFAULT_LIMIT, max: 10_000, perUnit: 100 },
  marketQuotes: { argument: 'symbols', default: 1, max: 100, perUnit: 2 },
};
/**
 * Bars are read from their key and formatted by the database, so what they cost the services
 * grows with the bars served, a unit of 100 bars: one operation may ask for one 10,000-bar page as
 * the REST facade selects it, not two, and the same bars split into aliased pages cost the same.
 * The OMS reads only a few pages at once (OMS_BAR_READS), so many such operations together wait
 * for each other instead of taking the database from orders. A quote costs a unit per two symbols.
 */
const OBJECT_COST = 2;
const SCALAR_COST = 1;
const DEPTH_FACTOR = 1.5;

/**
 * Apollo Server options that bound an operation (GraphQL Armor for aliases, depth and
 * directives, rules of ours for root fields and cost, graphql-js's own parser for tokens) and,
 * unless `suggestions`, strip "did you mean" hints from errors.
 */
export function graphqlLimits(
  limits: GraphQLLimits,
  options: { suggestions: boolean },
): { plugins: ApolloServerPlugin[]; validationRules: ValidationRule[]; parseOptions: { maxTokens: number } } {
  const armor = new ApolloArmor({
    maxAliases: { n: limits.maxAliases },
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true },
    // The parser's own limit answers 400 GRAPHQL_PARSE_FAILED; Armor's plugin would surface as a 500.
    maxTokens: { enabled: false },
    maxDirectives: { n: limits.maxDirectives },
    // Armor's cost sees neither variables nor our page sizes: costLimit below replaces it.
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: !options.suggestions },
  }).protect();
  return {
    plugins: [...armor.plugins, costLimit(limits.maxCost)],
    validationRules: [...armor.validationRules, maxRootFieldsRule(limits.maxRootFields)],
    parseOptions: { maxTokens: limits.maxTokens },
  };
}

/** Refuses an operation with more than `max` top-level fields (aliases and fragments counted as what they expand to). */
function maxRootFieldsRule(max: number): ValidationRule {
  return (context) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    const count = (set: SelectionSetNode, seen: Set<string>): number =>
      set.selections.reduce((n, selection) => {
        if (selection.kind === Kind.FIELD) return n + (selection.name.value === '__typename' ? 0 : 1);
        if (selection.kind === Kind.INLINE_FRAGMENT) return n + count(selection.selectionSet, seen);
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || seen.has(name)) return n;
        return n + count(fragment.selectionSet, new Set([...seen, name]));
      }, 0);
    return {
      OperationDefinition(operation) {
        const fields = count(operation.selectionSet, new Set());
        if (fields > max) {
          context.reportError(
            new GraphQLError(`Syntax Error: Query root fields limit of ${max} exceeded, found ${fields}.`, {
              nodes: [operation],
              extensions: { code: 'BAD_USER_INPUT' },
            }),
          );
        }
      },
    };
  };
}

/**
 * Refuses an operation whose estimated cost (`operationCost`, with the request's variables) is
 * over `maxCost`, once it is parsed and validated and before anything runs, with 400
 * GRAPHQL_VALIDATION_FAILED. The hook throws at once rather than returning a rejected promise,
 * so the hooks of the plugins after it (the gateway's order budgets) are never called for a
 * refused operation.
 */
function costLimit(maxCost: number): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        didResolveOperation({ document, operation, request }) {
          const cost = operation ? operationCost(document, operation, request.variables ?? {}) : 0;
          if (cost > maxCost)
            throw new GraphQLError(`Syntax Error: Query Cost limit of ${maxCost} exceeded, found ${Math.ceil(cost)}.`, {
              extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } },
            });
          return Promise.resolve();
        },
      };
    },
  };
}

/**
 * An operation's estimated cost: a scalar 1, an object 2 plus 1.5 times what it
 * selects, fragments counted where they are spread, `__schema` nothing; a root field of
 * SIZED_FIELDS times its size in units of its `perUnit` items. Aliases each count: every one runs.
 */
export function operationCost(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const defaults = new Map<string, ValueNode>();
  for (const definition of operation.variableDefinitions ?? [])
    if (definition.defaultValue) defaults.set(definition.variable.name.value, definition.defaultValue);

  /** The fields a selection set selects, fragments expanded (validation has refused cycles; `seen` guards anyway). */
  const fieldsOf = (set: SelectionSetNode, seen: ReadonlySet<string>): FieldNode[] =>
    set.selections.flatMap((selection) => {
      if (selection.kind === Kind.FIELD) return [selection];
      if (selection.kind === Kind.INLINE_FRAGMENT) return fieldsOf(selection.selectionSet, seen);
      const fragment = fragments.get(selection.name.value);
      if (!fragment || seen.has(fragment.name.value)) return [];
      return fieldsOf(fragment.selectionSet, new Set([...seen, fragment.name.value]));
    });
  const fieldCost = (field: FieldNode): number => {
    if (field.name.value === '__schema') return 0;
    if (!field.selectionSet) return SCALAR_COST;
    return fieldsOf(field.selectionSet, new Set()).reduce((sum, child) => sum + DEPTH_FACTOR * fieldCost(child), OBJECT_COST);
  };
  /** A sized field's size: its argument as sent (a literal or a variable), its default when absent, within 1 and its maximum. */
  const sizeOf = (field: FieldNode, sized: (typeof SIZED_FIELDS)[string]): number => {
    const argument = field.arguments?.find((a) => a.name.value === sized.argument)?.value;
    const value = argument?.kind === Kind.VARIABLE ? (variables[argument.name.value] ?? defaults.get(argument.name.value)) : argument;
    const size = itemCount(value);
    return Math.min(Math.max(size ?? sized.default, 1), sized.max);
  };
  const total = fieldsOf(operation.selectionSet, new Set()).reduce((sum, field) => {
    const sized = operation.operation === 'query' ? SIZED_FIELDS[field.name.value] : undefined;
    const times = sized ? Math.max(1, sizeOf(field, sized) / sized.perUnit) : 1;
    return sum + fieldCost(field) * times;
  }, 0);
  return total;
}

/** How many items an argument asks for: an integer as sent, a list's length (a lone value is a list of one); undefined when absent or null. */
function itemCount(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.floor(value) : undefined;
  if (Array.isArray(value)) return value.length;
  if (typeof value !== 'object') return 1;
  const node = value as Partial<ValueNode>;
  if (node.kind === Kind.INT) return Number.parseInt(node.value!, 10);
  if (node.kind === Kind.LIST) return node.values!.length;
  if (node.kind === Kind.NULL) return undefined;
  return 1;
}
