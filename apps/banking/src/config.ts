import { field, loadConfig, z } from '@trading/config';

export const bankingConfigSchema = z.object({
  LOG_LEVEL: field.logLevel(),
  INTERNAL_SIGNING_KEY: field.secret(),
  BANKING_PORT: field.port(4002),
  BANKING_DATABASE_URL: field.postgresUrl(),
});

export type BankingConfig = z.output<typeof bankingConfigSchema>;

export const loadBankingConfig = (env: NodeJS.ProcessEnv = process.env): BankingConfig => loadConfig('banking', bankingConfigSchema, env);
