import { expect } from 'chai';
import mongoose from 'mongoose';
import { openApiDocument } from '../../api/openapi-document';
import { OperationIndex } from '../../api/operation-index';
import { startApi, type RunningApi } from '../support/api';
import { activeOwner, type SignedUp } from '../support/accounts';

interface OperationObject {
  requestBody?: { content?: Record<string, unknown> };
}

/**
 * Every operation that takes a JSON body, sent bodies no schema accepts: each answers 422 in
 * the contract's shape and changes nothing in the database. Driven by the document, so the
 * operations of later issues are covered as they arrive.
 */
const document = openApiDocument() as { paths: Record<string, Record<string, OperationObject>> };
const withJsonBody = new OperationIndex(document as never)
  .all()
  .filter((op) => document.paths[op.path][op.method.toLowerCase()].requestBody?.content?.['application/json']);

const BAD_BODIES: [string, string][] = [
  ['an array', '[]'],
  ['a string', '"text"'],
  ['an object with an unknown field only', '{"no_such_field_anywhere": 1}'],
];

async function databaseFingerprint(): Promise<string> {
  const db = mongoose.connection.db!;
  // The server logs grow with every request (written in batches after the response), so they
  // are no sign of a change the bad body made.
  const collections = (await db.listCollections().toArray())
    .map((c) => c.name)
    .filter((name) => name !== 'server_logs')
    .sort();
  const counts = await Promise.all(collections.map(async (name) => `${name}:${await db.collection(name).countDocuments()}`));
  return counts.join(',');
}

describe('bad JSON bodies on every operation', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
  });
  after(() => api.close());

  it('covers the operations that take a body', () => expect(withJsonBody.length).to.be.greaterThan(10));

  for (const op of withJsonBody) {
    it(`${op.method} ${op.path}: 422 {detail: [{type, loc, msg, input}]} and nothing changed`, async () => {
      const path = '/api/v1' + op.path.replace(/\{[^}]+\}/g, '0123456789abcdef0123456789abcdef');
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(op.access.credentials === 'public' ? {} : owner.auth) };
      for (const [what, body] of BAD_BODIES) {
        const before = await databaseFingerprint();
        const res = await api.request(path, { method: op.method, headers, body });
        expect(res.status, `${what}: ${await res.clone().text()}`).to.equal(422);
        const { detail } = await res.json();
        expect(detail).to.be.an('array').that.is.not.empty;
        for (const issue of detail) {
          expect(issue).to.have.all.keys('type', 'loc', 'msg', 'input');
          expect(issue.type).to.be.a('string');
          expect(issue.loc[0]).to.be.oneOf(['body', 'path', 'query', 'header']);
          expect(issue.msg).to.be.a('string');
        }
        expect(await databaseFingerprint(), `${what} changed the database`).to.equal(before);
      }
    });
  }
});
