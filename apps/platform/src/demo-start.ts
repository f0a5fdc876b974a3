import type { Platform, PlatformConfig } from './app';
import { DEMO_USERS, DEMO_VENDOR_APP } from './demo-data';

/** The demo's per-start extras: a fresh READ_WRITE PAT for alice, and the demo vendor app registered. */
export async function prepareDemo(platform: Platform, config: PlatformConfig): Promise<string> {
  if (!config.PLATFORM_SEED_DEMO) return '';
  const alice = (await platform.auth.users.findByEmail(DEMO_USERS[0]!.email))!;
  const expires = new Date(Date.now() + 30 * 86400_000).toISOString().slice(0, 10);
  const { token } = await platform.auth.pats.create({
    userId: alice.id,
    name: `all-in-one demo ${new Date().toISOString()}`,
    access: 'READ_WRITE',
    expires,
  });
  await platform.auth.registry.ensureDemoApp(DEMO_VENDOR_APP.registration, DEMO_VENDOR_APP.credentials);
  return token;
}
