import { describe, expect, it } from 'vitest';
import { queryProblems, queryRules, suggestParameter } from '../../src/http/strict-query.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';

const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  components: { parameters: { DryRun: { name: 'dry_run', in: 'query', schema: { type: 'string' } } } },
  paths: {
    '/v1/things': {
      get: {
        summary: 'List things (things:read)',
        security: [{ ApiKeyAuth: [] }],
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
          { name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
        ],
        'x-query-prefixes': ['extracted.'],
        responses: {},
      },
      patch: { security: [], parameters: [{ $ref: '#/components/parameters/DryRun' }], responses: {} },
    },
  },
};

const rules = queryRules(document);
const list = rules('GET', '/v1/things')!;

describe('queryRules', () => {
  it('reads the declared query parameters, shared ones by $ref, never headers, and the prefix families', () => {
    expect([...list.names]).toEqual(['limit', 'tag']);
    expect([...list.arrays]).toEqual(['tag']);
    expect(list.accepted).toEqual(['limit', 'tag', 'extracted.<name>']);
    expect(rules('PATCH', '/v1/things')!.accepted).toEqual(['dry_run']);
    expect(rules('HEAD', '/v1/things')).toBe(list);
    expect(rules('DELETE', '/v1/things')).toBeUndefined();
  });
});

describe('queryProblems', () => {
  it('passes declared parameters, _, an array parameter given twice and a family member', () => {
    expect(queryProblems(list, { limit: '1', _: ['1', '2'], tag: ['a', 'b'], 'extracted.x[gte]': '1' })).toEqual([]);
  });

  it('names an unknown parameter and a repeated non-array one', () => {
    expect(queryProblems(list, { limt: '1', limit: ['1', '2'], X_Trace: 'a' })).toEqual([
      {
        field: 'limt',
        message: 'Unknown query parameter. Did you mean limit? This operation accepts: limit, tag, extracted.<name>.',
      },
      { field: 'limit', message: 'Given more than once; send it once' },
      { field: 'X_Trace', message: 'Unknown query parameter. This operation accepts: limit, tag, extracted.<name>.' },
    ]);
  });
});

describe('suggestParameter', () => {
  const calls = ['page', 'limit', 'done', 'from', 'to', 'phone_number', 'search', 'include_deleted', 'cursor'];

  it.each([
    ['phone', 'phone_number'],
    ['donee', 'done'],
    ['Done', 'done'],
    ['pag', 'page'],
    ['serch', 'search'],
    ['include_delted', 'include_deleted'],
    ['phone_numbers', 'phone_number'],
    ['searchterm', 'search'],
  ])('suggests for %s: %s', (given, expected) => {
    expect(suggestParameter(given, calls)).toBe(expected);
  });

  it.each(['sort', 'q', 'x', 'status', 'order_by'])('suggests nothing for %s', (given) => {
    expect(suggestParameter(given, calls)).toBeUndefined();
  });
});
