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
