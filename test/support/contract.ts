import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import supertest from 'supertest';
import type { OpenApiDocument } from '../../src/openapi/document.js';

/**
 * Checks every answer the API tests receive against the OpenAPI document the app serves, as an
 * independent validating proxy would: the operation is found by method and path template, the status
 * must be one the operation declares, and a JSON body must match the declared schema. Written apart
 * from the app's own route matching (src/http/route-match.ts) so that a fault there cannot hide here.
 */

export type ContractAnswer = {
  method: string;
  /** Path of the request, with or without a query string or origin. */
  url: string;
  status: number;
  contentType?: string;
  /** The parsed JSON body (when the answer is JSON). */
  body: unknown;
  /** The raw body text, when known: used to tell "no body" from an empty object. */
  text?: string;
  /** The body was not kept whole (a client that reads only so much): check the status alone. */
  statusOnly?: boolean;
};

export type ContractCheck = (answer: ContractAnswer) => void;

export class ContractViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Schema = Record<string, unknown>;
type Response = { $ref?: string; content?: Record<string, { schema?: Schema }> };
type Operation = { responses?: Record<string, Response> };
type Document = {
  paths?: Record<string, Record<string, Operation | undefined>>;
  components?: { responses?: Record<string, Response> };
};

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The formats the document uses; strict mode makes any other format fail the compile, not pass silently. */
const FORMATS: Record<string, (value: string) => boolean> = {
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  'date-time': (v) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v) && !Number.isNaN(Date.parse(v)),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
  uri: (v) => URL.canParse(v),
};

function compiler(document: Document) {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    validateSchema: false,
  });
  // OpenAPI 3.1's own annotation keywords (its dialect is 2020-12 plus these).
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  // The document's own top-level fields, so that it can be added whole and pointed into.
  ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags']);
  for (const [name, test] of Object.entries(FORMATS)) ajv.addFormat(name, test);
  ajv.addSchema(document as Schema, 'openapi.json');
  const cache = new Map<string, ValidateFunction>();
  return (ref: string): ValidateFunction => {
    let validate = cache.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi.json#${ref}` });
      cache.set(ref, validate);
    }
    return validate;
  };
}

function matcher(document: Document) {
  const routes = Object.keys(document.paths ?? {}).map((template) => ({
    template,
    segments: template.split('/'),
  }));
  // Literal segments win over parameters, segment by segment (`/calls/search` before `/calls/{callId}`).
  const score = (segments: string[]) => segments.map((s) => (s.startsWith('{') ? '1' : '0')).join('');
  routes.sort((a, b) => score(a.segments).localeCompare(score(b.segments)));
  return (path: string) => {
    const parts = path.replace(/\/+$/, '').split('/');
    return routes.find(
      (r) =>
        r.segments.length === parts.length &&
        r.segments.every((s, i) => (s.startsWith('{') ? parts[i] !== '' : s === parts[i])),
    )?.template;
  };
}

/** A checker for one document; it throws a ContractViolation naming operation, status and problems. */
export function contractChecker(document: object): ContractCheck {
  const doc = document as Document;
  const validator = compiler(doc);
  const match = matcher(doc);
  const errorRef = '/components/schemas/Error';

  const checkBody = (where: string, ref: string, answer: ContractAnswer) => {
    const validate = validator(ref);
    if (!validate(answer.body)) {
      const problems = (validate.errors ?? []).map(
        (e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
      );
      throw new ContractViolation(
        `${where}: the body does not match the declared schema:\n  ${problems.join('\n  ')}\n` +
          `body: ${JSON.stringify(answer.body)?.slice(0, 2000)}`,
      );
    }
  };

  return (answer) => {
    const method = answer.method.toLowerCase();
    const path = new URL(answer.url, 'http://localhost').pathname;
    const isJson = /^application\/([\w.+-]*\+)?json\b/i.test(answer.contentType ?? '');
    if (!decodable(path)) {
      // Malformed percent-encoding: 400 where a route's parameter cannot be decoded, 404 where no
      // route matches; either in the envelope.
      if (![400, 404].includes(answer.status) || !isJson) {
        throw new ContractViolation(`${method.toUpperCase()} ${path} (malformed path): answered ${answer.status}`);
      }
      if (!answer.statusOnly)
        checkBody(`${method.toUpperCase()} ${path} (malformed path) ${answer.status}`, errorRef, answer);
      return;
    }
    const template = match(path);
    if (!template) {
      // Outside the document (the docs page, /metrics) nothing is promised; under /v1 an unknown
      // path still answers in the one error envelope.
      if (path.startsWith('/v1/') || path === '/v1') {
        if (answer.status !== 404 || !isJson) {
          throw new ContractViolation(`${method.toUpperCase()} ${path} (no operation): answered ${answer.status}`);
        }
        if (!answer.statusOnly)
          checkBody(`${method.toUpperCase()} ${path} (no operation) ${answer.status}`, errorRef, answer);
      }
      return;
    }
    const operationMethod = method === 'head' ? 'get' : method;
    const operation = doc.paths?.[template]?.[operationMethod];
    const where = `${method.toUpperCase()} ${template} ${answer.status}`;
    if (!operation || !METHODS.includes(operationMethod as (typeof METHODS)[number])) {
      // A method the path does not have: the 405 every operation of the path declares.
      if (answer.status !== 405) throw new ContractViolation(`${where}: no such operation, and not 405`);
      if (method !== 'head' && !answer.statusOnly) checkBody(where, errorRef, answer);
      return;
    }
    const responses = operation.responses ?? {};
    const status = String(answer.status);
    const key = [status, `${status[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) {
      throw new ContractViolation(
        `${where}: status not declared (the operation declares ${Object.keys(responses).join(', ')})\n` +
          `body: ${JSON.stringify(answer.body)?.slice(0, 500)}`,
      );
    }
    let responseRef = pointer('', 'paths', template, operationMethod, 'responses', key);
    let response = responses[key]!;
    if (response.$ref) {
      responseRef = response.$ref.replace(/^#/, '');
      response = doc.components?.responses?.[response.$ref.split('/').pop()!] ?? {};
    }
    if (method === 'head' || answer.statusOnly) return;
    const media = Object.keys(response.content ?? {});
    const hasBody = answer.text !== undefined ? answer.text.length > 0 : answer.body !== undefined;
    if (media.length === 0) {
      if (hasBody) throw new ContractViolation(`${where}: the operation declares no body for this status, got one`);
      return;
    }
    // application/json and +json types; not NDJSON (application/x-ndjson), which is lines of JSON.
    const json = media.find((m) => /^application\/([\w.+-]*\+)?json\b/i.test(m));
    if (!json) return;
    // An operation that offers another type as well (a bundle as YAML) may answer in that one.
    const answered = answer.contentType?.split(';')[0]?.trim().toLowerCase();
    if (!isJson && answered && media.some((m) => m.toLowerCase() === answered)) return;
    if (!isJson) {
      throw new ContractViolation(
        `${where}: declared ${json}, answered Content-Type ${answer.contentType ?? '(none)'}`,
      );
    }
    if (!response.content![json]!.schema) return;
    checkBody(where, `${responseRef}/${pointer('content', json, 'schema')}`, answer);
  };
}

/** One compiled checker per document text: the files of a worker share it (vitest isolate: false). */
const checkers = new Map<string, ContractCheck>();

export function contractCheckerFor(document: OpenApiDocument): ContractCheck {
  // The servers entry follows PUBLIC_BASE_URL and says nothing about answers.
  const key = JSON.stringify({ ...document, servers: [] });
  let check = checkers.get(key);
  if (!check) {
    check = contractChecker(document);
    checkers.set(key, check);
  }
  return check;
}

/** The served document, fetched once from a running app. */
export async function servedDocument(baseUrl: string): Promise<OpenApiDocument> {
  const res = await fetch(`${baseUrl}/v1/openapi.json`);
  if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
  return (await res.json()) as OpenApiDocument;
}

type Http = ReturnType<typeof supertest>;
type Asserting = {
  method: string;
  url: string;
  assert(error: unknown, res: supertest.Response | undefined, fn?: (err: unknown, res: unknown) => void): void;
};

/**
 * supertest, with every answer checked against the document after the test's own expectations
 * (so a wrong status is reported as the test wrote it, and a contract violation fails the request).
 */
export function checkedHttp(target: Parameters<typeof supertest>[0], check: ContractCheck): Http {
  const http = supertest(target);
  return new Proxy(http, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => unknown).apply(object, args) as Asserting;
        const assert = test.assert.bind(test);
        test.assert = (error, res, fn) =>
          assert(error, res, (err, response) => {
            let failure = err;
            if (!failure && res) {
              try {
                check({
                  method: test.method,
                  url: test.url,
                  status: res.status,
                  contentType: res.headers['content-type'] as string | undefined,
                  body: res.body,
                  text: res.text,
                });
              } catch (violation) {
                failure = violation;
              }
            }
            fn?.call(test, failure ?? null, response);
          });
        return test;
      };
    },
  });
}

/** fetch, with every answer checked as `checkedHttp` checks them (for tests that need fetch itself). */
export function checkedFetch(check: ContractCheck): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const request = new Request(input, init);
    const text = await res.clone().text();
    const contentType = res.headers.get('content-type') ?? undefined;
    let body: unknown;
    if (text && /json/i.test(contentType ?? '')) body = JSON.parse(text);
    check({ method: request.method, url: request.url, status: res.status, contentType, body, text });
    return res;
  };
}

/** Whether every segment of `path` decodes. */
function decodable(path: string): boolean {
  try {
    for (const segment of path.split('/')) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
