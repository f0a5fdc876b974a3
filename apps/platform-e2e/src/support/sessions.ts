import { randomUUID } from 'node:crypto';
import { SessionStore } from '@trading/auth';
import { http } from '@trading/testing';
import { inDays, type TestPlatform } from './test-platform';

/** A PAT session JWT for a seeded user, made the way a user would: PAT, then POST /v1/pat/login. */
export async function patSession(p: TestPlatform, email: string, access: 'READ_ONLY' | 'READ_WRITE'): Promise<string> {
  const user = (await p.auth.users.findByEmail(email))!;
  const { token } = await p.auth.pats.create({ userId: user.id, name: `e2e ${access}`, access, expires: inDays(7) });
  const res = await http('POST', `${p.urls.api}/pat/login`, { body: { token } });
  if (res.status !== 200) throw new Error(`PAT login failed: ${res.status}`);
  return res.body.token as string;
}

/** An OAuth-style session with exactly `scope`, for wrong-scope checks (what a vendor app with narrow consent holds). */
export async function scopedSession(p: TestPlatform, email: string, scope: string[], clientId = 'e2e-vendor'): Promise<string> {
  const user = (await p.auth.users.findByEmail(email))!;
  const sid = randomUUID();
  await new SessionStore(p.store).create({
    sid,
    userId: user.id,
    kind: 'oauth',
    clientId,
    expiresAt: Math.floor(Date.now() / 1000) + 600,
  });
  return p.auth.signer.sign({ sub: user.id, sid, kind: 'oauth', clientId, scope }, 600);
}
