import type AjvClass from 'ajv';

type Json = Record<string, any>;

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks a webhook body against the AsyncAPI document's message for its event type (the
 * document as served at /v1/asyncapi.json, or `asyncApiDocument()`): returns ajv's complaints,
 * none when the body is what the document promises. For tests and tools: ajv is a development
 * dependency, loaded only when this is called, so the facade itself never needs it.
 */
export function asyncApiMessageValidator(document: Json): (eventType: string, body: unknown) => string[] {
  const { default: Ajv } = require('ajv') as { default: typeof AjvClass };
  const { default: addFormats } = require('ajv-formats') as typeof import('ajv-formats');
  // AsyncAPI's default schema format is JSON Schema draft-07: ajv's default.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'asyncapi.json' });
  const messages = document['components']?.['messages'] ?? {};
  // Each webhook message by its name (the event type): the webhooks channel's, resolved to the component.
  const byType = new Map<string, string>();
  for (const [key, message] of Object.entries<Json>(document['channels']?.['webhooks']?.['messages'] ?? {})) {
    const component = typeof message['$ref'] === 'string' ? String(message['$ref']).replace('#/components/messages/', '') : undefined;
    const resolved = component !== undefined ? messages[component] : message;
    const pointer = component !== undefined ? `components/messages/${escape(component)}` : `channels/webhooks/messages/${escape(key)}`;
    if (resolved?.['name']) byType.set(resolved['name'], `asyncapi.json#/${pointer}/payload`);
  }
  return (eventType, body) => {
    const pointer = byType.get(eventType);
    if (!pointer) return [`no webhook message for the event type ${JSON.stringify(eventType)}`];
    const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  };
}
