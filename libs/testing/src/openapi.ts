import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks real responses against an OpenAPI 3.1 document's response schemas (JSON Schema
 * 2020-12). Returns a function that throws with ajv's explanation when a body does not match.
 */
export function openApiResponseValidator(document: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  return (
    method: string,
    pathTemplate: string,
    status: number,
    body: unknown,
    contentType = status < 300 ? 'application/json' : 'application/problem+json',
  ) => {
    const pointer = `openapi.json#/paths/${escape(pathTemplate)}/${method.toLowerCase()}/responses/${status}/content/${escape(contentType)}/schema`;
    let validate;
    try {
      validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
    } catch (err) {
      throw new Error(`OpenAPI has no ${status} ${contentType} response for ${method} ${pathTemplate}: ${(err as Error).message}`);
    }
    if (!validate(body)) {
      throw new Error(
        `${method} ${pathTemplate} ${status} does not match the OpenAPI document:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\nbody: ${JSON.stringify(body).slice(0, 800)}`,
      );
    }
  };
}
