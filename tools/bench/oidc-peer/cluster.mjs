/**
 * The peer run the way `npm start` runs ours: Node's cluster, one worker per OIDC_WORKERS (default
 * 2, as many as this machine's cores), sharing one port, one signing key and one set of cookie
 * keys (made here once, so a flow begun at one worker finishes at the other), and the Redis
 * adapter's storage. Env: as ./server.mjs, plus OIDC_WORKERS.
 * Plain node: `node tools/bench/oidc-peer/cluster.mjs`.
 */
import cluster from 'node:cluster';
import { generateKeyPairSync, randomBytes } from 'node:crypto';

if (cluster.isPrimary) {
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const shared = { OIDC_SIGNING_JWK: JSON.stringify(signingKey), OIDC_COOKIE_KEY: randomBytes(32).toString('hex') };
  const workers = Number(process.env.OIDC_WORKERS ?? 2);
  for (let i = 0; i < workers; i++) cluster.fork(shared);
  const stop = () => Object.values(cluster.workers ?? {}).forEach((worker) => worker?.process.kill('SIGTERM'));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  cluster.on('exit', () => {
    if (!Object.keys(cluster.workers ?? {}).length) process.exit(0);
  });
} else {
  await import('./server.mjs');
}
