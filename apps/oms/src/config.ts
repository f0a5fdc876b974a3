import { field, loadConfig, z } from '@trading/config';

export const omsConfigSchema = z.object({
  LOG_LEVEL: field.logLevel(),
  INTERNAL_SIGNING_KEY: field.secret(),
  OMS_PORT: field.port(4003),
  OMS_DATABASE_URL: field.postgresUrl(),
});

export type OmsConfig = z.output<typeof omsConfigSchema>;

export const loadOmsConfig = (env: NodeJS.ProcessEnv = process.env): OmsConfig => loadConfig('oms', omsConfigSchema, env);
