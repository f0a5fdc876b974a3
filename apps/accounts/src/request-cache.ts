/**
 * Memoises a load for the life of one GraphQL request (keyed by its context object), so the
 * gateway's batch of entity representations costs one query per account, not one per entity.
 */
const caches = new WeakMap<object, Map<string, Promise<unknown>>>();

export function perRequest<T>(context: object, key: string, load: () => Promise<T>): Promise<T> {
  let cache = caches.get(context);
  if (!cache) caches.set(context, (cache = new Map()));
  let hit = cache.get(key) as Promise<T> | undefined;
  if (!hit) cache.set(key, (hit = load()));
  return hit;
}
