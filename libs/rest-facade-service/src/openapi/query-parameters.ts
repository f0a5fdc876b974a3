import type { QueryParameters } from '../edge/route-guard';

type Operation = { parameters?: Array<{ name: string; in: string }> };

/** Each operation's query parameters, by `METHOD /path/:param` as the route table writes paths: what the facade lets through. */
export function queryParametersOf(document: { paths: object }): QueryParameters {
  const taken = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, Operation>>))
    for (const [method, op] of Object.entries(operations))
      taken.set(
        `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
        (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      );
  return taken;
}
