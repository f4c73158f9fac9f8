// The /json codec writes and walks JSON by hand; its output must equal the protojson mapping
// built the plain way (an object graph through JSON.stringify), and its decoding the
// documented rules.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { decodeRequest, encodeResponse } from '../../src/ratelimit/server/json-codec.js';
import {
  CODE_NAMES,
  Code,
  MAX_UINT32,
  UNIT_NAMES,
  Unit,
  type DescriptorStatus,
  type RateLimitResponse,
} from '../../src/ratelimit/types.js';

/** The mapping spelled out as objects: zero values omitted, enums by name, Duration "<n>s". */
function reference(r: RateLimitResponse): string {
  const status = (s: DescriptorStatus) => {
    const out: Record<string, unknown> = { code: CODE_NAMES[s.code] };
    if (s.currentLimit) {
      const limit: Record<string, unknown> = {};
      if (s.currentLimit.requestsPerUnit !== 0) limit.requestsPerUnit = s.currentLimit.requestsPerUnit;
      if (s.currentLimit.unit !== Unit.UNKNOWN) limit.unit = UNIT_NAMES[s.currentLimit.unit];
      if (s.currentLimit.name !== '') limit.name = s.currentLimit.name;
      out.currentLimit = limit;
    }
    if (s.limitRemaining !== 0) out.limitRemaining = s.limitRemaining;
    if (s.durationUntilReset !== undefined) out.durationUntilReset = `${s.durationUntilReset}s`;
    return out;
  };
  const out: Record<string, unknown> = { overallCode: CODE_NAMES[r.overallCode] };
  if (r.statuses.length > 0) out.statuses = r.statuses.map(status);
  if (r.responseHeadersToAdd.length > 0) out.responseHeadersToAdd = r.responseHeadersToAdd;
  return JSON.stringify(out);
}

describe('ratelimit /json codec', () => {
  it('encodes exactly as the object mapping would, for every field combination', () => {
    const limits = [
      undefined,
      { requestsPerUnit: 0, unit: Unit.UNKNOWN, name: '' },
      { requestsPerUnit: 10, unit: Unit.MINUTE, name: '' },
      { requestsPerUnit: MAX_UINT32, unit: Unit.WEEK, name: 'login "quoted" \\ \u0001 é 😀' },
      { requestsPerUnit: 0, unit: Unit.HOUR, name: 'n' },
    ] as const;
    const statuses: DescriptorStatus[] = [];
    for (const currentLimit of limits)
      for (const limitRemaining of [0, 7, MAX_UINT32])
        for (const durationUntilReset of [undefined, 0, 42])
          for (const code of [Code.UNKNOWN, Code.OK, Code.OVER_LIMIT])
            statuses.push({
              code,
              ...(currentLimit ? { currentLimit } : {}),
              limitRemaining,
              ...(durationUntilReset === undefined ? {} : { durationUntilReset }),
            });
    const headers = [
      { key: 'RateLimit-Limit', value: '10' },
      { key: 'x-"odd"', value: 'a\nb' },
    ];
    const responses: RateLimitResponse[] = [
      { overallCode: Code.OK, statuses: [], responseHeadersToAdd: [] },
      { overallCode: Code.OVER_LIMIT, statuses, responseHeadersToAdd: headers },
      ...statuses.map((s) => ({ overallCode: s.code, statuses: [s], responseHeadersToAdd: [] })),
      { overallCode: Code.OK, statuses: statuses.slice(0, 3), responseHeadersToAdd: headers.slice(0, 1) },
    ];
    for (const r of responses) assert.equal(encodeResponse(r), reference(r));
  });

  it('decodes both field spellings, nulls as absent, and refuses doubles and unknown names', () => {
    assert.deepEqual(
      decodeRequest({
        domain: 'd',
        hits_addend: '3',
        descriptors: [
          { entries: [{ key: 'k', value: 'v' }, { key: 'only' }], hitsAddend: 0 },
          { entries: null, limit: { requests_per_unit: '5', unit: 2 }, hits_addend: null },
        ],
      }),
      {
        domain: 'd',
        hitsAddend: 3,
        descriptors: [
          {
            entries: [
              { key: 'k', value: 'v' },
              { key: 'only', value: '' },
            ],
            hitsAddend: 0,
          },
          { entries: [], limit: { requestsPerUnit: 5, unit: 2 } },
        ],
      },
    );
    const refused: [unknown, RegExp][] = [
      [{ domain: 'd', hitsAddend: 1, hits_addend: 1 }, /request: field "hitsAddend" given twice/],
      [{ descriptors: [{ limit: { requestsPerUnit: 1, requests_per_unit: 1 } }] }, /given twice/],
      [
        { descriptors: [{ entries: [{ key: 'a', key2: 'b' }] }] },
        /descriptors\[0\]\.entries\[0\]: unknown field "key2"/,
      ],
      [JSON.parse('{"__proto__":{}}'), /request: unknown field "__proto__"/],
      [{ descriptors: [{ limit: { unit: 'toString' } }] }, /unknown unit "toString"/],
      [{ descriptors: [5] }, /descriptors\[0\]: expected a JSON object/],
      // unknown names are refused before any value is checked
      [{ domain: 5, extra: 1 }, /unknown field "extra"/],
      [{ domain: 5, descriptors: [{ entries: 'x' }] }, /descriptors\[0\]\.entries: expected an array/],
    ];
    for (const [body, message] of refused) assert.throws(() => decodeRequest(body), message);
  });
});
