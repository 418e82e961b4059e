import fc from 'fast-check';

/**
 * Generated hostile requests over every operation of the OpenAPI document. fast-check supplies the
 * seeded randomness and its string/JSON generators, so a seed always produces the same requests.
 */

export type Operation = {
  method: string;
  path: string;
  bodyFields: { name: string; schema: JsonSchema }[];
  hasBody: boolean;
  queryParams: string[];
};

/** What a request must carry to pass authentication and reach the resources the paths name. */
export type FuzzWorld = {
  /** Path parameter name -> a real id (`orgDocumentId` for organization knowledge base documents). */
  ids: Record<string, string>;
  token: string;
  key: string;
};

export type FuzzRequest = {
  kind: Kind;
  method: string;
  /** Already percent-encoded, possibly malformed on purpose. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent as-is on a raw socket instead (what Node's own HTTP parser refuses). */
  raw?: Buffer;
};

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
};
type OpenApiDocument = {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
};
type OpenApiOperation = {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
};

export const KINDS = [
  'nul-body',
  'lone-surrogate-body',
  'nul-query',
  'bad-percent-path',
  'bad-content-encoding',
  'huge-page',
  'wrong-type',
  'huge-string',
  'deep-nesting',
  'injection',
  'garbage-auth',
  'random-json',
  'bad-json',
  'wrong-content-type',
  'mixed-case-id',
  'parser-error',
  'huge-body',
  'bad-utf8-path',
  'duplicate-query',
] as const;
export type Kind = (typeof KINDS)[number];

/** Kinds whose mutation is refused before any action, whatever the method: safe for DELETE. */
const REFUSED_BEFORE_ACTION: Kind[] = [
  'nul-query',
  'bad-percent-path',
  'injection',
  'garbage-auth',
  'parser-error',
  'bad-utf8-path',
];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function resolve(document: OpenApiDocument, schema: JsonSchema | undefined, depth = 0): JsonSchema | undefined {
  if (!schema || depth > 5) return schema;
  if (schema.$ref) return resolve(document, document.components?.schemas?.[schema.$ref.split('/').pop()!], depth + 1);
  const parts = schema.allOf ?? schema.oneOf ?? schema.anyOf;
  if (!schema.properties && parts) {
    const properties = Object.assign({}, ...parts.map((p) => resolve(document, p, depth + 1)?.properties ?? {}));
    return { ...schema, properties };
  }
  return schema;
}

/** Every operation of the document, with its body fields and query parameters. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const schema = resolve(document, operation.requestBody?.content?.['application/json']?.schema);
      operations.push({
        method: method.toUpperCase(),
        path,
        hasBody: operation.requestBody !== undefined,
        bodyFields: Object.entries(schema?.properties ?? {}).map(([name, s]) => ({
          name,
          schema: resolve(document, s) ?? {},
        })),
        queryParams: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      });
    }
  }
  return operations;
}

const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE agents; --",
  '" OR ""="',
  '1; SELECT pg_sleep(10)',
  '<script>alert(1)</script>',
  '${jndi:ldap://example.invalid/a}',
  '{{7*7}}',
  '../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%s%s%s%n',
  '\\x00\\u0000',
  '$where',
  '{"$gt":""}',
  'admin\r\nX-Injected: 1',
  '😀'.repeat(20),
  '\u202e\u0301\ufeff',
  'a'.repeat(300),
];

const WRONG_VALUES: unknown[] = [
  123,
  -1,
  1.5,
  1e308,
  true,
  null,
  [],
  {},
  [[[]]],
  '',
  ' ',
  'x',
  { $gt: '' },
  ['a', 1, null],
  '9999999999999999999999',
];

const BAD_PERCENT = ['%E0%A4%A', '%', '%zz', '%C0%AF', '%ED%A0%80', '%F0%9F%98', '%%', '%E0%A4%A%00', '%FF%FE'];
const HUGE_PAGES = [
  ['page', '99999999999999999999'],
  ['page', '1e20'],
  ['page', '9007199254740993'],
  ['page', '1000001'],
  ['page', '-1'],
  ['page', '0'],
  ['page', '1.5'],
  ['page', '0x10'],
  ['page', '%EF%BC%91'],
  ['limit', '99999999999999999999'],
  ['limit', '101'],
  ['limit', '0'],
  ['limit', '1e3'],
  ['page', '1&page=2'],
  ['limit', '10&limit=20'],
] as const;
/**
 * Invalid UTF-8, percent-encoded: overlong forms (`%C0%AF` is an overlong `/`), surrogates, bytes
 * that never occur in UTF-8, truncated and mis-continued sequences.
 */
const BAD_UTF8 = [
  '%C0%AF',
  '%C0%80',
  '%E0%80%AF',
  '%F0%80%80%AF',
  '%ED%A0%80',
  '%ED%BF%BF',
  '%FF',
  '%FE%FF',
  '%C3%28',
  '%E2%82',
  '%F4%90%80%80',
  '%F8%88%80%80%80',
  'a%80b',
];
/** The same as raw bytes on the request line (only a raw socket sends them). */
const RAW_BAD_UTF8 = [[0xc0, 0xaf], [0xff, 0xfe], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xfc], [0x80, 0x80]];
/** A shared 10 MB of body filler (generated once, sent many times). */
const TEN_MB = 10 * 1024 * 1024;
let filler: Buffer | undefined;
function hugeBody(size: number): Buffer {
  filler ??= Buffer.alloc(TEN_MB, 'a');
  const head = Buffer.from('{"x":"');
  const tail = Buffer.from('"}');
  return Buffer.concat([head, filler.subarray(0, Math.max(0, size - head.length - tail.length)), tail]);
}
const CONTENT_ENCODINGS = ['gzip', 'br', 'deflate', 'x-bogus', 'gzip, br', 'identity, gzip', 'zstd', 'compress'];
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/xml',
];
const BAD_JSON = [
  '{',
  '{"a":',
  '[1,2',
  'nul',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '"str"',
  '1e999',
  '[]',
  'null',
  '{"a":1,}',
];

/** Percent-encodes UTF-8 bytes (a lone surrogate becomes U+FFFD, as any client would send it). */
function encode(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

function fillPath(template: string, world: FuzzWorld, transform: (id: string) => string = (id) => id): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const key = name === 'documentId' && template.startsWith('/v1/organization/') ? 'orgDocumentId' : name;
    return transform(world.ids[key] ?? '00000000-0000-4000-8000-000000000000');
  });
}

function plausible(schema: JsonSchema, world: FuzzWorld): unknown {
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return schema.format === 'uuid' ? world.ids.agentId : 'x';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'x';
  }
}

function isStringField(schema: JsonSchema): boolean {
  return schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'));
}

/** The raw bytes fast-check drew for one request; `build` turns them into a request. */
type Draw = {
  kind: Kind;
  pick: number;
  text: string;
  injection: string;
  wrong: unknown;
  json: unknown;
  auth: number;
  useKey: boolean;
};

const drawArbitrary = fc.record({
  kind: fc.constantFrom(...KINDS),
  pick: fc.nat(),
  text: fc.string({ unit: 'binary', maxLength: 30 }),
  injection: fc.constantFrom(...INJECTIONS),
  wrong: fc.constantFrom(...WRONG_VALUES),
  json: fc.jsonValue({ maxDepth: 3 }),
  auth: fc.nat(),
  useKey: fc.boolean(),
});

function at<T>(list: readonly T[], n: number): T {
  return list[n % list.length]!;
}

function deep(depth: number, leaf: string): string {
  return `${'{"a":['.repeat(depth)}${leaf}${']}'.repeat(depth)}`;
}

function garbageAuth(n: number, world: FuzzWorld): Record<string, string> {
  const options: Record<string, string>[] = [
    {},
    { 'X-API-Key': 'svc_live_' + 'g'.repeat(32) },
    { 'X-API-Key': 'svc_live_' + '0'.repeat(32) },
    { 'X-API-Key': world.key.toUpperCase() },
    { 'X-API-Key': world.key + ' ' },
    { 'X-API-Key': "' OR 1=1 --" },
    { 'X-API-Key': 'x'.repeat(8000) },
    { Authorization: 'Bearer x.y.z' },
    { Authorization: 'Bearer ' },
    { Authorization: 'Basic Zm9vOmJhcg==' },
    {
      Authorization: `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x","exp":9999999999}').toString('base64url')}.`,
    },
    { Authorization: `Bearer ${world.token.slice(0, -3)}abc` },
    { Authorization: `Bearer ${world.token}`, 'X-API-Key': 'svc_live_' + 'f'.repeat(32) },
    { Authorization: 'Bearer ' + 'a'.repeat(6000) },
  ];
  return at(options, n);
}

function build(operation: Operation, draw: Draw, world: FuzzWorld): FuzzRequest {
  const kind =
    operation.method === 'DELETE' && !REFUSED_BEFORE_ACTION.includes(draw.kind)
      ? at(REFUSED_BEFORE_ACTION, draw.pick)
      : draw.kind;
  const auth: Record<string, string> =
    draw.useKey && !operation.path.startsWith('/v1/api-keys') && !operation.path.startsWith('/v1/organization/')
      ? { 'X-API-Key': world.key }
      : { Authorization: `Bearer ${world.token}` };
  const base: Record<string, unknown> = Object.fromEntries(
    operation.bodyFields.map((f) => [f.name, plausible(f.schema, world)]),
  );
  const fields = operation.bodyFields;
  const stringFields = fields.filter((f) => isStringField(f.schema));
  const field = (preferString: boolean) => {
    const list = preferString && stringFields.length > 0 ? stringFields : fields;
    return list.length > 0 ? at(list, draw.pick).name : 'unexpected_field';
  };
  const queryName = operation.queryParams.length > 0 ? at(operation.queryParams, draw.pick) : 'search';
  let path = fillPath(operation.path, world);
  let query = '';
  const headers: Record<string, string> = { ...auth };
  let body: string | Buffer | undefined;
  const json = (value: unknown) => {
    headers['Content-Type'] = 'application/json';
    body = typeof value === 'string' ? value : JSON.stringify(value);
  };

  switch (kind) {
    case 'nul-body':
      if (operation.hasBody) json({ ...base, [field(true)]: `${draw.text}\u0000${draw.text}` });
      else query = `${queryName}=a%00b`;
      break;
    case 'lone-surrogate-body':
      if (operation.hasBody) json({ ...base, [field(true)]: `${draw.text}\ud800` });
      else query = `${queryName}=%ED%A0%80`;
      break;
    case 'nul-query':
      query = `${queryName}=${encode(draw.text)}%00`;
      break;
    case 'bad-percent-path': {
      const segments = path.split('/');
      const index = 2 + (draw.pick % Math.max(1, segments.length - 2));
      segments[Math.min(index, segments.length - 1)] = at(BAD_PERCENT, draw.auth);
      path = segments.join('/');
      break;
    }
    case 'bad-content-encoding':
      json({ ...base });
      headers['Content-Encoding'] = at(CONTENT_ENCODINGS, draw.pick);
      if (draw.auth % 3 === 0) body = Buffer.from(draw.text, 'utf8');
      break;
    case 'huge-page': {
      const [name, value] = at(HUGE_PAGES, draw.pick);
      query = `${name}=${value}`;
      break;
    }
    case 'wrong-type':
      if (draw.pick % 5 === 0) json([base]);
      else if (draw.pick % 7 === 0) json(draw.wrong);
      else json({ ...base, [field(false)]: draw.wrong });
      break;
    case 'huge-string': {
      const size = at([300, 5_001, 100_001, 700_000], draw.auth);
      if (operation.hasBody) json({ ...base, [field(true)]: 'é'.repeat(size) });
      else query = `${queryName}=${'a'.repeat(Math.min(size, 6_000))}`;
      break;
    }
    case 'deep-nesting': {
      const depth = at([40, 2_000, 100_000], draw.auth);
      json(`{"${field(false)}":${deep(depth, '1')}}`);
      break;
    }
    case 'injection':
      // A DELETE must never carry out its action: the injection goes into the id.
      if (draw.pick % 3 === 0 || operation.method === 'DELETE') {
        const segments = path.split('/');
        segments[segments.length - 1] = encode(draw.injection);
        path = segments.join('/');
      } else if (draw.pick % 3 === 1 || !operation.hasBody) {
        query = `${queryName}=${encode(draw.injection)}`;
      } else json({ ...base, [field(true)]: draw.injection });
      break;
    case 'garbage-auth':
      delete headers.Authorization;
      delete headers['X-API-Key'];
      Object.assign(headers, garbageAuth(draw.auth, world));
      if (operation.hasBody) json(base);
      // Some of the garbage still carries a valid credential: a DELETE must not be carried out.
      if (operation.method === 'DELETE') query = 'x=%00';
      break;
    case 'random-json':
      json(
        typeof draw.json === 'object' && draw.json !== null && draw.pick % 2 === 0
          ? draw.json
          : { ...base, [field(false)]: draw.json },
      );
      break;
    case 'bad-json':
      json(at(BAD_JSON, draw.pick));
      break;
    case 'wrong-content-type':
      json(base);
      headers['Content-Type'] = at(CONTENT_TYPES, draw.pick);
      break;
    case 'mixed-case-id':
      path = fillPath(operation.path, world, (id) => id.toUpperCase());
      if (operation.hasBody) json({ ...base, [field(false)]: draw.wrong });
      if (operation.method === 'DELETE') query = 'x=%00';
      break;
    case 'parser-error':
      return { kind, method: operation.method, path, headers, raw: parserError(draw, path) };
    case 'huge-body': {
      // Just over the 1 MB limit, or 10 MB; with a Content-Length (413 at once) or chunked.
      const size = at([1_048_577, TEN_MB], draw.auth);
      headers['Content-Type'] = 'application/json';
      if (draw.pick % 3 === 0) headers['Transfer-Encoding'] = 'chunked';
      body = hugeBody(size);
      break;
    }
    case 'bad-utf8-path': {
      const segments = path.split('/');
      const index = 2 + (draw.pick % Math.max(1, segments.length - 2));
      const slot = Math.min(index, segments.length - 1);
      if (draw.auth % 3 === 0) {
        // Raw bytes in the path: Node's parser refuses them before Express.
        const prefix = Buffer.from(`${operation.method} ${segments.slice(0, slot).join('/')}/`, 'latin1');
        const credentials = Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('');
        const rest = Buffer.from(` HTTP/1.1\r\nHost: x\r\n${credentials}Connection: close\r\n\r\n`, 'latin1');
        const raw = Buffer.concat([prefix, Buffer.from(at(RAW_BAD_UTF8, draw.pick)), rest]);
        return { kind, method: operation.method, path, headers, raw };
      }
      segments[slot] = at(BAD_UTF8, draw.auth);
      path = segments.join('/');
      // Outside a DELETE the query gets some too (a DELETE must be refused by its path alone).
      if (operation.method !== 'DELETE' && draw.pick % 2 === 0) query = `${queryName}=${at(BAD_UTF8, draw.pick)}`;
      break;
    }
    case 'duplicate-query': {
      const names = operation.queryParams.length > 0 ? operation.queryParams : ['limit', 'page'];
      const name = at(names, draw.pick);
      const values = name === 'limit' || name === 'page' ? ['1', '2'] : ['a', encode(draw.text)];
      query = at(
        [
          `${name}=${values[0]}&${name}=${values[1]}`,
          `limit=1&limit=2`,
          `page=1&page=2&page=3`,
          `${name}=${values[0]}&${name}=${values[0]}`,
          `${name}[]=${values[0]}&${name}[]=${values[1]}`,
          `${name}[a]=${values[0]}`,
          `${name}=&${name}=${values[1]}`,
          names.map((n) => `${n}=${values[0]}&${n}=${values[1]}`).join('&'),
        ],
        draw.auth,
      );
      break;
    }
  }
  return {
    kind,
    method: operation.method,
    path: query ? `${path}?${query}` : path,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body }),
  };
}

/** Requests Node's HTTP parser refuses before Express sees them. */
function parserError(draw: Draw, path: string): Buffer {
  const lines = [
    `BREW ${path} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    `GET ${path} HTTP/9.9\r\nHost: x\r\n\r\n`,
    `GET  HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET ${path} HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`,
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef`,
    `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
    `GET ${path} HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n`,
  ];
  return Buffer.from(at(lines, draw.pick), 'latin1');
}

/**
 * `count` requests, spread evenly over the operations (each gets every kind in turn as the seed
 * draws them). The same seed gives the same requests.
 */
export function* fuzzRequests(
  operations: Operation[],
  world: FuzzWorld,
  options: { seed: number; count: number },
): Generator<FuzzRequest> {
  const batch = 500;
  for (let start = 0; start < options.count; start += batch) {
    const n = Math.min(batch, options.count - start);
    const draws = fc.sample(drawArbitrary, { seed: options.seed + start, numRuns: n }) as Draw[];
    for (let i = 0; i < n; i++) yield build(operations[(start + i) % operations.length]!, draws[i]!, world);
  }
}
