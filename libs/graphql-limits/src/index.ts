import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, Kind, type FragmentDefinitionNode, type SelectionSetNode, type ValidationRule } from 'graphql';

/** What one operation may ask for; checked during validation, before anything runs. */
export interface GraphQLLimits {
  maxAliases: number;
  /** Top-level fields of one operation (each one a separate read of the service). */
  maxRootFields: number;
  maxDepth: number;
  maxTokens: number;
  maxDirectives: number;
  /** GraphQL Armor's estimate: objects 2, scalars 1, times 1.5 per level of depth. */
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
 * Apollo Server options that bound an operation (GraphQL Armor for aliases, depth, directives
 * and cost, one rule of ours for root fields, graphql-js's own parser for tokens) and, unless
 * `suggestions`, strip "did you mean" hints from errors.
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
    costLimit: { maxCost: limits.maxCost, ignoreIntrospection: true },
    blockFieldSuggestion: { enabled: !options.suggestions },
  }).protect();
  return {
    plugins: armor.plugins,
    validationRules: [...armor.validationRules, maxRootFieldsRule(limits.maxRootFields)],
    parseOptions: { maxTokens: limits.maxTokens },
  };
}

/** Refuses an operation with more than `max` top-level fields (aliases and fragments counted as what they expand to). */
export function maxRootFieldsRule(max: number): ValidationRule {
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
