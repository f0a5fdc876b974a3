import { isoMinute, UsageError, type Command, type Need, type Values } from './command';

/** Users and their personal access tokens. */
export function usersCommand(what: string, values: Values, need: Need): Command | undefined {
  if (what === 'users create') {
    if (values['password'] !== undefined) {
      throw new UsageError(
        '--password is not taken: a password in the command line lands in shell history and in ps. Type it at the prompt, or pipe it on standard input',
      );
    }
    return {
      path: '/admin/users',
      body: { email: need('email'), firstName: need('first-name'), lastName: need('last-name') },
      password: true,
      print: (r) => `created user ${r['email']} (userId ${r['userId']})`,
    };
  }
  if (what === 'users list') {
    return {
      method: 'GET',
      path: '/admin/users?limit=500',
      body: {},
      print: (r) =>
        (r['users'] as Array<Record<string, string>>)
          .map((u) => `${u['email']}  ${u['firstName']} ${u['lastName']}  ${u['userId']}  since ${u['createdAt']!.slice(0, 10)}`)
          .join('\n') || 'no users yet',
    };
  }
  if (what === 'pat list') {
    return {
      method: 'GET',
      path: `/admin/pats?email=${encodeURIComponent(need('email'))}`,
      body: {},
      print: (r) =>
        (r['tokens'] as Array<Record<string, any>>)
          .map(
            (t) =>
              `${t['tokenId']}  ${String(t['name']).padEnd(16)} ${t['scope'].padEnd(10)} valid through ${t['validThrough']}  ${t['revokedAt'] ? `revoked ${isoMinute(t['revokedAt'])}` : t['lastUsedAt'] ? `last used ${isoMinute(t['lastUsedAt'])}` : 'never used'}`,
          )
          .join('\n') || `${r['email']} has no personal access tokens`,
    };
  }
  if (what === 'pat revoke') {
    return {
      path: `/admin/pats/${encodeURIComponent(need('token-id'))}/revoke`,
      body: { email: need('email') },
      print: (r) => `revoked ${r['tokenId']} ("${r['name']}"): it no longer logs in, and its sessions have ended`,
    };
  }
  if (what === 'pat create') {
    const ips = ((values['ip'] as string[] | undefined) ?? [])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    return {
      path: '/admin/pats',
      body: { email: need('email'), name: need('name'), scope: need('scope'), expires: need('expires'), ips },
      print: (r) =>
        `created ${r['scope']} token "${r['name']}" (id ${r['tokenId']}), valid through ${r['validThrough']} (UTC)\n\n  ${r['token']}\n\nThis is the only time the token is shown: store it now.`,
    };
  }
  return undefined;
}
