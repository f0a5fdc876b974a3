/** The settlement stream a target made under the run's own name: a Redis stream has no expiry, so the bench deletes it. */
import { createClient } from 'redis';

export async function deleteStream(redisUrl: string, key: string): Promise<void> {
  const client = createClient({ url: redisUrl });
  await client.connect();
  try {
    await client.del(key);
  } finally {
    await client.close();
  }
}

/** Every key matching `pattern` (SCAN, then DEL in batches): the oidc-provider peer's storage under the run's prefix. */
export async function deleteKeys(redisUrl: string, pattern: string): Promise<void> {
  const client = createClient({ url: redisUrl });
  await client.connect();
  try {
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: pattern, COUNT: 1000 })) keys.push(...batch);
    for (let i = 0; i < keys.length; i += 500) await client.del(keys.slice(i, i + 500));
  } finally {
    await client.close();
  }
}
