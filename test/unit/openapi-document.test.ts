import { expect } from 'chai';
import { openApiDocument } from '../../api/openapi-document';

interface Operation {
  operationId?: string;
  parameters?: { $ref?: string }[];
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
}

/** Conventions every operation of schemas/openapi.yaml must follow, so a new route cannot forget one. */
describe('the OpenAPI document', () => {
  const doc = openApiDocument() as {
    openapi: string;
    info: { version: string };
    servers: { url: string }[];
    paths: Record<string, Record<string, Operation>>;
    components: { responses: Record<string, { headers?: Record<string, unknown> }> };
  };
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
  );

  it('is OpenAPI 3.1 at version 1.0.0, served under /api/v1 and /api', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.info.version).to.equal('1.0.0');
    expect(doc.servers.map((s) => s.url)).to.deep.equal(['/api/v1', '/api']);
  });

  it('has operations', () => expect(operations).not.to.be.empty);

  it('has no prose parsed as keys (an unquoted comma in a one-line mapping splits a description)', () => {
    const strayKeys: string[] = [];
    const seen = new Set<object>();
    const walk = (node: unknown, path: string): void => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      for (const [key, value] of Object.entries(node)) {
        if (value === null && /\s/.test(key)) strayKeys.push(`${path}/${key}`);
        walk(value, `${path}/${key}`);
      }
    };
    walk(doc, '');
    expect(strayKeys).to.deep.equal([]);
  });

  for (const { name, op } of operations) {
    it(`${name} takes the timezone query parameter and X-Timezone header`, () => {
      const refs = (op.parameters ?? []).map((p) => p.$ref);
      expect(refs).to.include.members(['#/components/parameters/Timezone', '#/components/parameters/TimezoneHeader']);
    });

    it(`${name} documents X-Request-ID and X-Timezone on every response, and a 500`, () => {
      expect(op.operationId).to.be.a('string');
      expect(op.responses).to.have.property('500');
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = response.$ref ? doc.components.responses[response.$ref.split('/').pop() as string].headers : response.headers;
        expect(headers, `${name} ${status}`).to.include.keys('X-Request-ID', 'X-Timezone');
      }
    });
  }
});
