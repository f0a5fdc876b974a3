import { UsageError, type Command, type Need, type Values } from './command';

/** Vendor apps' webhook endpoints in one environment: register, list, change, rotate, remove, and the delivery log. */

const endpointLine = (e: Record<string, any>) =>
  `${e['id']}  ${e['enabled'] ? 'on ' : 'off'}  ${e['url']}\n    events: ${(e['eventTypes'] as string[]).join(' ')}` +
  (e['disabledReason'] ? `\n    turned off: ${e['disabledReason']}` : '') +
  (e['failingSince'] ? `\n    failing since ${e['failingSince']}` : '');

/** The secret is printed once, here. */
const withSecret = (what: string) => (e: Record<string, unknown>) =>
  `${what} ${endpointLine(e)}\n\n  signing secret  ${e['secret']}\n\nThe secret is shown only this once: give it to the vendor's receiver now.`;

const eventTypes = (v: string | boolean | string[] | undefined) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

function enabledFlag(values: Values): boolean | undefined {
  if (values['enable'] && values['disable']) throw new UsageError('give --enable or --disable, not both');
  return values['enable'] ? true : values['disable'] ? false : undefined;
}

export function webhookCommand(what: string, values: Values, need: Need): Command | undefined {
  if (!what.startsWith('apps webhooks')) return undefined;
  const base = () => `/admin/apps/${encodeURIComponent(need('app'))}`;
  const environment = () => need('env');
  const endpoint = () => encodeURIComponent(need('endpoint'));
  switch (what) {
    case 'apps webhooks list':
      return {
        method: 'GET',
        path: `${base()}/webhooks?environment=${encodeURIComponent(environment())}`,
        body: {},
        print: (r) => (r['endpoints'] as Array<Record<string, any>>).map(endpointLine).join('\n') || 'no webhook endpoints',
      };
    case 'apps webhooks add':
      return {
        path: `${base()}/webhooks`,
        body: { environment: environment(), url: need('url'), eventTypes: eventTypes(values['events']), enabled: enabledFlag(values) },
        print: withSecret('registered'),
      };
    case 'apps webhooks update':
      return {
        path: `${base()}/webhooks/${endpoint()}`,
        body: { environment: environment(), url: values['url'], eventTypes: eventTypes(values['events']), enabled: enabledFlag(values) },
        print: (r) => `updated ${endpointLine(r)}`,
      };
    case 'apps webhooks rotate-secret':
      return { path: `${base()}/webhooks/${endpoint()}/rotate-secret`, body: { environment: environment() }, print: withSecret('rotated') };
    case 'apps webhooks remove':
      return {
        path: `${base()}/webhooks/${endpoint()}/remove`,
        body: { environment: environment() },
        print: (r) => `removed ${r['removed']}`,
      };
    case 'apps webhooks deliveries':
      return {
        method: 'GET',
        path: `${base()}/webhook-deliveries?environment=${encodeURIComponent(environment())}`,
        body: {},
        print: (r) =>
          (r['deliveries'] as Array<Record<string, any>>)
            .map((d) => `${d['createdAt']}  ${d['status'].padEnd(9)} ${d['eventType']}  ${d['messageId']}  attempts: ${d['attempts']}`)
            .join('\n') || 'no deliveries',
      };
    default:
      return undefined;
  }
}
