import { EntitySchema } from 'typeorm';
import type { PatAccess } from '@trading/auth';

export interface PersonalAccessToken {
  /** The public part of the token string, e.g. `tpat_3fZ…`. */
  id: string;
  userId: string;
  name: string;
  /** SHA-256 of the secret part; the secret itself is never stored. */
  secretHash: string;
  access: PatAccess;
  ipAllowlist: string[];
  /** The accounts it reaches; null: every account of the user's. */
  accountIds: string[] | null;
  expiresAt: Date;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  lastUsedIp: string | null;
}

export const PersonalAccessTokenEntity = new EntitySchema<PersonalAccessToken>({
  name: 'PersonalAccessToken',
  tableName: 'personal_access_tokens',
  columns: {
    id: { type: 'text', primary: true },
    userId: { type: 'uuid', name: 'user_id' },
    name: { type: 'text' },
    secretHash: { type: 'text', name: 'secret_hash' },
    access: { type: 'text' },
    ipAllowlist: { type: 'text', array: true, name: 'ip_allowlist', default: () => "'{}'" },
    accountIds: { type: 'uuid', array: true, name: 'account_ids', nullable: true },
    expiresAt: { type: 'timestamptz', name: 'expires_at' },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
    revokedAt: { type: 'timestamptz', name: 'revoked_at', nullable: true },
    lastUsedAt: { type: 'timestamptz', name: 'last_used_at', nullable: true },
    lastUsedIp: { type: 'text', name: 'last_used_ip', nullable: true },
  },
});
