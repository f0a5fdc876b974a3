// Imported first by main.ts: the instrumentations must patch http, express, pg, … before anything loads them.
import { startTracing } from '@trading/tracing/sdk';

startTracing({ serviceName: 'banking' });
