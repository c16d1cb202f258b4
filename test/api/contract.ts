/**
 * The contract check for the behaviour suite: is this answer what the OpenAPI
 * document says the operation answers with this status? The schemas are
 * compiled (ajv, JSON Schema 2020-12, as OpenAPI 3.1 uses) from the generated
 * document itself, never from a copy.
 *
 *   const errors = validateResponse(operationIdFor(path), status, JSON.parse(text));
 *   expect(errors).toEqual([]);
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../build/site/openapi.ts';
import { matchRoute } from '../../src/http/request.ts';

type Doc = {
  paths: Record<
    string,
    { get: { operationId: string; responses: Record<string, { content?: Record<string, { schema: object }> }> } }
  >;
  components: { schemas: Record<string, object> };
};

const COMPONENTS_ID = 'https://film-awards-archive.invalid/components';
/** Bodies that mean "no body": what a test may hold for a 204/304/HEAD answer. */
const isEmpty = (body: unknown) =>
  body === null || body === undefined || body === '' || (body instanceof Uint8Array && body.length === 0);

export interface Contract {
  validateResponse(operationId: string | null, status: number, body: unknown): string[];
  /** For a body that is not JSON (a dataset file): whether the operation documents that media type for that status. */
  validateMedia(operationId: string, status: number, type: string): string[];
  operationIds: string[];
}

/** A validator for a given document (default: the one the build would publish). */
export function createContract(doc: object = openApiDocument({ yearRange: [1929, 2026] })): Contract {
  const { paths, components } = doc as Doc;
  // No schema uses `format`: strict mode throws on one it does not know, so one added later says to add ajv-formats.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  // OpenAPI keeps schemas under components/schemas; JSON Schema resolves refs to $defs of a schema with an id.
  const retarget = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value), (key, v) =>
      key === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`
        : v,
    );
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: retarget(components.schemas) as Record<string, object> });

  const validators = new Map<string, ValidateFunction | null>();
  const byOperation = new Map<string, Doc['paths'][string]['get']>();
  for (const item of Object.values(paths)) byOperation.set(item.get.operationId, item.get);
  const errorValidator = ajv.compile(retarget({ $ref: '#/components/schemas/Error' }) as object);

  function validatorFor(operationId: string, status: number): ValidateFunction | null | undefined {
    const cacheKey = `${operationId} ${status}`;
    if (!validators.has(cacheKey)) {
      const response = byOperation.get(operationId)?.responses[String(status)];
      if (!response) return undefined;
      const schema = response.content?.['application/json']?.schema;
      validators.set(cacheKey, schema ? ajv.compile(retarget(schema) as object) : null);
    }
    return validators.get(cacheKey);
  }

  const describe = (v: ValidateFunction) =>
    (v.errors ?? []).map(
      (e) =>
        `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`,
    );

  function validateResponse(operationId: string | null, status: number, body: unknown): string[] {
    if (operationId === null) {
      // Outside the six operations (the description at `/`, public files,
      // unknown paths) only error bodies are part of the contract.
      if (status < 400) return [];
      return errorValidator(body) ? [] : describe(errorValidator);
    }
    if (!byOperation.has(operationId)) return [`${operationId} is not an operation of the document`];
    const validator = validatorFor(operationId, status);
    if (validator === undefined) return [`${operationId} does not document a ${status} answer`];
    if (validator === null) return isEmpty(body) ? [] : [`${operationId} documents no body for ${status}, got one`];
    return validator(body) ? [] : describe(validator);
  }

  function validateMedia(operationId: string, status: number, type: string): string[] {
    const media = type.split(';')[0].trim();
    const content = byOperation.get(operationId)?.responses[String(status)]?.content;
    return content && media in content ? [] : [`${operationId} does not document a ${status} answer of ${media}`];
  }

  return { validateResponse, validateMedia, operationIds: [...byOperation.keys()] };
}

let shared: Contract | undefined;

/** Errors of `body` against the document's schema for this operation and status; empty when it conforms. */
export function validateResponse(operationId: string | null, status: number, body: unknown): string[] {
  shared ??= createContract();
  return shared.validateResponse(operationId, status, body);
}

/** Errors of a body that is not JSON: its media type must be one the operation documents for this status. */
export function validateMedia(operationId: string, status: number, type: string): string[] {
  shared ??= createContract();
  return shared.validateMedia(operationId, status, type);
}

/** The operation a request path (path and query, or a full URL) belongs to; null for `/` and unknown paths. */
export function operationIdFor(path: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(path, 'http://localhost').pathname;
  } catch {
    return null;
  }
  const m = matchRoute(pathname);
  return m === null || m === 'root' ? null : m.route.id;
}
