import { request as httpRequest, Agent } from 'node:http';
import { expect } from 'chai';
import { openApiDocument } from '../../api/openapi-document';
import { startApi, type RunningApi } from '../support/api';

/**
 * Every operation of the contract, asked for under spellings that a router, a proxy or a
 * client could take for the same path, without credentials (issue 29, item 1: `POST
 * /api/v1/Tools/Test` once ran the HTTP tool for nobody). Each answer must be 401 or 404 in
 * the contract's shape, never served and never a 5xx; an operation the contract marks public
 * may also answer what its canonical spelling answers, and nothing else.
 */

interface Operation {
  method: string;
  path: string;
  isPublic: boolean;
}

interface Answer {
  status: number;
  body: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function operations(): Operation[] {
  const paths = (openApiDocument() as { paths: Record<string, Record<string, { 'x-access'?: { credentials?: string } }>> }).paths;
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) found.push({ method: method.toUpperCase(), path, isPublic: operation['x-access']?.credentials === 'public' });
    }
  }
  return found;
}

/** The operation's path with a plain value in each template (`/agents/{agent_id}` → `/agents/x1`). */
function concrete(path: string): string {
  return path.replace(/\{[^}]+\}/g, 'x1');
}

/** `tools` → `%74ools`: the first letter of the first literal segment, percent-encoded. */
function encodeFirstLetter(path: string): string {
  return path.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`);
}

function capitalise(path: string): string {
  return path.replace(/\/([a-z])/g, (_m, letter: string) => `/${letter.toUpperCase()}`);
}

/** Spellings of `base + path` that are not the canonical one, each with a name for the report. */
function spellings(base: string, path: string): [string, string][] {
  const segments = path.split('/').filter(Boolean);
  const lastSlash = path.lastIndexOf('/');
  const first = `/${segments[0]}`;
  const rest = path.slice(first.length);
  return [
    ['upper case', base + path.toUpperCase()],
    ['mixed case', base + capitalise(path)],
    ['upper-case base', base.toUpperCase() + path],
    ['mixed-case base', capitalise(base) + path],
    ['percent-encoded letter', base + encodeFirstLetter(path)],
    ['percent-encoded letter in the base', encodeFirstLetter(base) + path],
    ['upper-case percent-encoded letter', base + path.replace(/[a-z]/, (l) => `%${l.toUpperCase().charCodeAt(0).toString(16)}`)],
    ['percent-encoded slash', lastSlash > 0 ? base + path.slice(0, lastSlash) + '%2F' + path.slice(lastSlash + 1) : `${base}%2F${path.slice(1)}`],
    ['percent-encoded slash after the base', `${base}%2f${path.slice(1)}`],
    ['trailing slash', `${base + path}/`],
    ['duplicate slash after the base', `${base}/${path}`],
    ['duplicate slash inside', `${base}${first}/${rest || '/'}`],
    ['leading duplicate slash', `/${base}${path}`],
    ['dot segment', `${base}/.${path}`],
    ['dot-dot segment', `${base}/x/..${path}`],
    ['percent-encoded dot segment', `${base}/%2e${path}`],
    ['trailing dot segment', `${base + path}/.`],
    ['matrix parameter on the first segment', `${base}${first};x=1${rest}`],
    ['matrix parameter at the end', `${base + path};x=1`],
  ];
}

/** A raw request: fetch would normalise dot segments and some escapes before sending. */
function raw(baseUrl: string, agent: Agent, method: string, path: string): Promise<Answer> {
  const url = new URL(baseUrl);
  const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, agent, headers: hasBody ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(hasBody ? '{}' : undefined);
  });
}

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/** The body without its request id, which differs on every answer. */
function withoutRequestId(body: string): string {
  try {
    const { request_id: _ignored, ...rest } = JSON.parse(body) as Record<string, unknown>;
    return JSON.stringify(rest);
  } catch {
    return body;
  }
}

function hasDetail(body: string): boolean {
  try {
    return typeof (JSON.parse(body) as { detail?: unknown }).detail === 'string';
  } catch {
    return false;
  }
}

describe('every operation under other spellings of its path, without credentials (issue 29)', () => {
  let api: RunningApi;
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  before(async () => {
    api = await startApi();
  });
  after(async () => {
    agent.destroy();
    await api.close();
  });

  it('the sweep covers the whole contract, and each canonical path without credentials is 401 unless public', async () => {
    const all = operations();
    expect(all.length).to.be.greaterThan(100);
    const wrong: string[] = [];
    await inBatches(all, 8, async (op) => {
      if (op.isPublic) return;
      const answer = await raw(api.baseUrl, agent, op.method, `/api/v1${concrete(op.path)}`);
      if (answer.status !== 401) wrong.push(`${op.method} ${op.path}: ${answer.status}`);
    });
    expect(wrong).to.deep.equal([]);
  });

  it('answers 401 or 404 in the contract shape (or, for a public operation, what its canonical path answers), never served and never 5xx', async function () {
    this.timeout(300_000);
    const cases: { op: Operation; name: string; path: string; canonical: string }[] = [];
    for (const op of operations()) {
      for (const base of ['/api/v1', '/api']) {
        for (const [name, path] of spellings(base, concrete(op.path))) cases.push({ op, name, path, canonical: base + concrete(op.path) });
      }
    }
    const canonicalAnswers = new Map<string, Answer>();
    const failures: string[] = [];
    await inBatches(cases, 8, async ({ op, name, path, canonical }) => {
      const answer = await raw(api.baseUrl, agent, op.method, path);
      if ((answer.status === 401 || answer.status === 404) && hasDetail(answer.body)) return;
      if (op.isPublic) {
        const key = `${op.method} ${canonical}`;
        if (!canonicalAnswers.has(key)) canonicalAnswers.set(key, await raw(api.baseUrl, agent, op.method, canonical));
        const expected = canonicalAnswers.get(key) as Answer;
        if (answer.status === expected.status && answer.status < 500 && withoutRequestId(answer.body) === withoutRequestId(expected.body)) return;
      }
      failures.push(`${op.method} ${path} (${name}): ${answer.status} ${answer.body.slice(0, 120)}`);
    });
    expect(failures.length, `${failures.length} of ${cases.length} spellings were not refused:\n${failures.slice(0, 40).join('\n')}`).to.equal(0);
  });
});
