import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { openApiDocument, openApiPath } from '../../api/openapi-document';
import { ROOT } from '../../scripts/infra/processes';

interface Operation {
  operationId?: string;
  requestBody?: unknown;
  'x-access'?: { credentials?: string; workspace?: boolean };
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

  /** Visits every object of the document once, with its JSON-pointer-like path. */
  const everyObject = (visit: (node: Record<string, unknown>, path: string) => void): void => {
    const seen = new Set<object>();
    const walk = (node: unknown, path: string): void => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      visit(node as Record<string, unknown>, path);
      for (const [key, value] of Object.entries(node)) walk(value, `${path}/${key}`);
    };
    walk(doc, '');
  };

  it('has no prose parsed as keys (an unquoted comma in a one-line mapping splits a description)', () => {
    const strayKeys: string[] = [];
    everyObject((node, path) => {
      for (const [key, value] of Object.entries(node)) if (value === null && /\s/.test(key)) strayKeys.push(`${path}/${key}`);
    });
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

    it(`${name} documents every status the common rules can answer`, () => {
      const statuses = Object.keys(op.responses);
      // 400 unknown time zone or malformed X-Workspace-ID; 422 unknown query parameters and bad headers.
      const expected = ['400', '422', '500'];
      if (op.requestBody) expected.push('413', '415'); // too large; no or another Content-Type
      const access = op['x-access'] ?? {};
      if (access.credentials !== 'public') expected.push('401');
      if (access.credentials !== 'public' && access.workspace !== false) expected.push('404'); // X-Workspace-ID names no workspace of yours
      expect(statuses, name).to.include.members(expected);
    });
  }

  it('gives every array schema its items (client generators drop a schema whose array has none, and the schemas that use it)', () => {
    const bare: string[] = [];
    everyObject((schema, path) => {
      const isArray = schema.type === 'array' || (Array.isArray(schema.type) && schema.type.includes('array'));
      if (isArray && schema.items === undefined && schema.prefixItems === undefined) bare.push(path);
    });
    expect(bare).to.deep.equal([]);
  });

  it('links each created resource to the operations that take its id, and every link resolves', () => {
    type Schema = { $ref?: string; properties?: Record<string, Schema>; allOf?: Schema[] };
    type Response = { links?: Record<string, { operationId: string; parameters: Record<string, string> }>; content?: Record<string, { schema?: Schema }> };
    const schemas = (doc.components as unknown as { schemas: Record<string, Schema> }).schemas;
    const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(schemas[schema.$ref.split('/').pop() as string]) : schema);
    const propertyOf = (schema: Schema, name: string): Schema | undefined => {
      const resolved = resolve(schema);
      return resolved.properties?.[name] ?? resolved.allOf?.map((part) => propertyOf(part, name)).find(Boolean);
    };
    const byId = new Map(Object.entries(doc.paths).flatMap(([path, item]) => Object.values(item).map((op) => [op.operationId, path] as const)));
    const problems: string[] = [];
    let links = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [code, response] of Object.entries(op.responses ?? {}) as [string, Response][]) {
          for (const [name, link] of Object.entries(response.links ?? {})) {
            links++;
            const where = `${method.toUpperCase()} ${path} ${code} ${name}`;
            const target = byId.get(link.operationId);
            if (!target) problems.push(`${where}: no operation ${link.operationId}`);
            for (const [param, expression] of Object.entries(link.parameters)) {
              if (target && !target.includes(`{${param}}`)) problems.push(`${where}: ${link.operationId} has no path parameter ${param}`);
              const fromBody = /^\$response\.body#\/(.+)$/.exec(expression);
              const fromPath = /^\$request\.path\.(.+)$/.exec(expression);
              if (fromPath && !path.includes(`{${fromPath[1]}}`)) problems.push(`${where}: ${path} has no path parameter ${fromPath[1]}`);
              if (!fromBody && !fromPath) problems.push(`${where}: unexpected expression ${expression}`);
              if (fromBody) {
                let schema: Schema | undefined = response.content?.['application/json']?.schema;
                for (const key of fromBody[1].split('/')) schema = schema && propertyOf(schema, key);
                if (!schema) problems.push(`${where}: the response has no ${fromBody[1]}`);
              }
            }
          }
        }
      }
    }
    expect(problems).to.deep.equal([]);
    expect(links).to.be.greaterThan(30);
  });

  it('states the X-Workspace-ID format the server enforces', () => {
    const header = (doc.components as unknown as { parameters: Record<string, { schema: { $ref?: string } }> }).parameters.WorkspaceHeader;
    expect(header.schema.$ref).to.equal('#/components/schemas/Id');
  });
});

/**
 * YAML 1.1 parsers (PyYAML, what most Python tools load OpenAPI files with) end a plain scalar
 * at `?` or `:` inside a flow mapping, where YAML 1.2 parsers (ours) read on: `{ default: Are
 * you still there? }` loads here and fails there. Neither the `yaml` package in 1.1 mode nor
 * js-yaml reproduce that, so the document is loaded with PyYAML itself, from .venv/
 * (scripts/python-tools.sh, which `npm test` runs through scripts/setup.sh).
 */
describe('the OpenAPI document in a YAML 1.1 parser (PyYAML)', () => {
  const python = path.join(ROOT, '.venv', 'bin', 'python');
  const load = (file: string) =>
    spawnSync(python, ['-c', 'import sys, yaml; yaml.safe_load(open(sys.argv[1], encoding="utf-8")); print("loaded")', file], { encoding: 'utf8' });

  it('loads', () => {
    expect(fs.existsSync(python), `${python} is missing: run bash scripts/python-tools.sh`).to.equal(true);
    const result = load(openApiPath());
    expect(result.stderr).to.equal('');
    expect(result.stdout.trim()).to.equal('loaded');
  });

  it('is a parser that refuses an unquoted "?" in a flow mapping (so the test above can fail)', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'yaml11-')), 'probe.yaml');
    fs.writeFileSync(file, 'message: { type: string, default: Are you still there? }\n');
    const result = load(file);
    expect(result.status).not.to.equal(0);
    expect(result.stderr).to.include('while parsing a flow mapping');
  });
});
