import { expect } from 'chai';
import type { Request } from 'express';
import { issueLoc, issueType, toValidationIssues } from '../../domain/shared/validation-issues';

describe('validator errors to the contract’s 422 items', () => {
  it('locates fields: body, query, path and header, with integer array indexes', () => {
    expect(issueLoc('/body/call/max_duration_seconds')).to.deep.equal(['body', 'call', 'max_duration_seconds']);
    expect(issueLoc('/body/tools/2/name')).to.deep.equal(['body', 'tools', 2, 'name']);
    expect(issueLoc('/query/limit')).to.deep.equal(['query', 'limit']);
    expect(issueLoc('/params/version')).to.deep.equal(['path', 'version']);
    expect(issueLoc('/headers/x-timezone')).to.deep.equal(['header', 'x-timezone']);
    expect(issueLoc('/body/headers/a~1b')).to.deep.equal(['body', 'headers', 'a/b']);
  });

  const cases: [string, string, string][] = [
    ['maximum.openapi.validation', 'must be <= 3600', 'less_than_equal'],
    ['minimum.openapi.validation', 'must be >= 30', 'greater_than_equal'],
    ['exclusiveMaximum.openapi.validation', 'must be < 2', 'less_than'],
    ['exclusiveMinimum.openapi.validation', 'must be > 0', 'greater_than'],
    ['maxLength.openapi.validation', 'must NOT have more than 120 characters', 'string_too_long'],
    ['minLength.openapi.validation', 'must NOT have fewer than 1 characters', 'string_too_short'],
    ['pattern.openapi.validation', 'must match pattern "^[a-z]"', 'string_pattern_mismatch'],
    ['required.openapi.validation', "must have required property 'name'", 'missing'],
    ['enum.openapi.validation', 'must be equal to one of the allowed values', 'enum'],
    ['additionalProperties.openapi.validation', 'must NOT have additional properties', 'extra_forbidden'],
    ['maxItems.openapi.validation', 'must NOT have more than 10 items', 'too_long'],
    ['minItems.openapi.validation', 'must NOT have fewer than 1 items', 'too_short'],
    ['type.openapi.validation', 'must be integer', 'int_type'],
    ['type.openapi.validation', 'must be number', 'float_type'],
    ['type.openapi.validation', 'must be string', 'string_type'],
    ['type.openapi.validation', 'must be boolean', 'bool_type'],
    ['type.openapi.validation', 'must be object', 'dict_type'],
    ['type.openapi.validation', 'must be array', 'list_type'],
    ['format.openapi.validation', 'must match format "date-time"', 'value_error'],
  ];
  for (const [errorCode, message, type] of cases) {
    it(`${errorCode} (${message}) -> ${type}`, () => {
      expect(issueType({ path: '/body/x', message, errorCode })).to.equal(type);
    });
  }

  it('takes the input from the request, and null for a missing field', () => {
    const req = { body: { call: { max_duration_seconds: 5000 } }, query: { limit: '900' }, params: {}, headers: {} } as unknown as Request;
    const issues = toValidationIssues(
      [
        { path: '/body/call/max_duration_seconds', message: 'must be <= 3600', errorCode: 'maximum.openapi.validation' },
        { path: '/body/name', message: "must have required property 'name'", errorCode: 'required.openapi.validation' },
        { path: '/query/limit', message: 'must be <= 200', errorCode: 'maximum.openapi.validation' },
      ],
      req,
    );
    expect(issues).to.deep.equal([
      { type: 'less_than_equal', loc: ['body', 'call', 'max_duration_seconds'], msg: 'call.max_duration_seconds must be <= 3600', input: 5000 },
      { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: null },
      { type: 'less_than_equal', loc: ['query', 'limit'], msg: 'limit must be <= 200', input: '900' },
    ]);
  });
});
