import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/ratelimit/config/errors.js';
import { fixture, rulesFrom } from './helpers.js';

function loadError(file: string): ConfigError {
  try {
    rulesFrom({ [file]: fixture(`errors/${file}`) });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw new Error(`expected a ConfigError, got ${String(error)}`);
  }
  throw new Error(`${file} loaded without an error`);
}

describe('ratelimit config validation: one fixture per error, upstream texts', () => {
  const cases: [string, string | RegExp, string?][] = [
    ['yaml_syntax.yaml', /^yaml_syntax\.yaml: error loading config file: .+/],
    ['key_not_string.yaml', 'key_not_string.yaml: config error, key is not of type string: 0.25'],
    ['unknown_key.yaml', "unknown_key.yaml: config error, unknown key 'ratelimit'"],
    [
      'list_not_map.yaml',
      'list_not_map.yaml: config error, yaml file contains list of type other than map: key1',
    ],
    ['float_leaf.yaml', 'float_leaf.yaml: error checking config'],
    ['empty_domain.yaml', 'empty_domain.yaml: config file cannot have empty domain'],
    ['empty_key.yaml', 'empty_key.yaml: descriptor has empty key', 'test-domain'],
    [
      'duplicate_key.yaml',
      "duplicate_key.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
      'test-domain.key1_value1',
    ],
    [
      'invalid_unit.yaml',
      "invalid_unit.yaml: invalid rate limit unit 'fortnight'",
      'test-domain.key1.subkey1',
    ],
    ['missing_unit.yaml', "missing_unit.yaml: invalid rate limit unit ''", 'test-domain.key1'],
    [
      'unlimited_with_unit.yaml',
      'unlimited_with_unit.yaml: should not specify rate limit unit when unlimited',
      'test-domain.key1',
    ],
    [
      'empty_replaces.yaml',
      'empty_replaces.yaml: should not have an empty replaces entry',
      'test-domain.key1',
    ],
    [
      'replaces_self.yaml',
      'replaces_self.yaml: replaces should not contain name of same descriptor',
      'test-domain.key1',
    ],
    [
      'share_threshold_without_wildcard.yaml',
      "share_threshold_without_wildcard.yaml: share_threshold can only be used with wildcard values (containing '*'), but found key 'key1_files'",
      'test-domain.key1_files',
    ],
    [
      'wrong_type.yaml',
      /^wrong_type\.yaml: error loading config file: yaml: unmarshal errors:\n {2}line 6: cannot unmarshal !!str `lots` into uint32$/,
    ],
  ];
  for (const [file, expected, path] of cases) {
    it(`refuses ${file}`, () => {
      const error = loadError(file);
      if (typeof expected === 'string') assert.equal(error.message, expected);
      else assert.match(error.message, expected);
      assert.equal(error.file, file);
      if (path !== undefined) assert.equal(error.path, path);
    });
  }

  it('refuses a domain defined in two files, blaming the later file', () => {
    assert.throws(
      () => rulesFrom({ 'config.a.yaml': fixture('dup/a.yaml'), 'config.b.yaml': fixture('dup/b.yaml') }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message === "config.b.yaml: duplicate domain 'test-domain' in config file",
    );
  });

  it('merges a domain from two files with MERGE_DOMAIN_CONFIG, still refusing a duplicate key', () => {
    const rules = rulesFrom({ 'a.yaml': fixture('dup/a.yaml'), 'b.yaml': fixture('dup/b.yaml') }, true);
    const root = rules.domains.get('test-domain')!.root;
    assert.deepEqual([...root.exact.keys()], ['key1', 'key2']);
    assert.throws(
      () => rulesFrom({ 'a.yaml': fixture('dup/a.yaml'), 'c.yaml': fixture('dup/a.yaml') }, true),
      /c\.yaml: duplicate descriptor composite key 'test-domain\.key1'/,
    );
  });

  it('accepts what upstream accepts: any unit case, week/month/year, quota_mode, metadata, missing requests_per_unit, unlimited with a count', () => {
    const rules = rulesFrom({
      'ok.yaml': [
        'domain: d',
        'descriptors:',
        '  - key: a',
        '    quota_mode: true',
        '    metadata: { anything: [1, 2.5, {x: y}] }',
        '    rate_limit: { unit: Month, requests_per_unit: 3 }',
        '  - key: b',
        '    rate_limit: { unit: year }',
        '  - key: c',
        '    rate_limit: { unlimited: true, requests_per_unit: 9 }',
        '  - key: e',
        '    value: 123',
        '    rate_limit: { unit: week, requests_per_unit: 1 }',
      ].join('\n'),
    });
    const root = rules.domains.get('d')!.root;
    assert.equal(root.exact.get('a')!.rule!.divider, 2_592_000);
    assert.equal(root.exact.get('a')!.rule!.quotaMode, true);
    assert.equal(root.exact.get('b')!.rule!.requestsPerUnit, 0);
    assert.equal(root.exact.get('c')!.rule!.unlimited, true);
    assert.equal(root.exact.get('e_123')!.rule!.divider, 604_800);
    assert.match(rules.dump, /^d\.a: unit=MONTH requests_per_unit=3, shadow_mode: false, quota_mode: true$/m);
    assert.match(
      rules.dump,
      /^d\.c: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false$/m,
    );
  });

  it('an empty file has no domain', () => {
    assert.throws(() => rulesFrom({ 'empty.yaml': '' }), /empty\.yaml: config file cannot have empty domain/);
  });
});
