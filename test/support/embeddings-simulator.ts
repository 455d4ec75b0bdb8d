import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking OpenAI's `POST /v1/embeddings` (bearer key, `input` as a string or
 * a list, `encoding_format` `float` or `base64`, the `{object: "list", data, model, usage}`
 * answer and the `{error: {...}}` shape for failures).
 *
 * Its "model" is deterministic: words (lowercased letter/digit runs) are mapped through a
 * small synonym table, so that "reimbursed" and "refund" mean the same concept as a trained
 * model would have them, function words are ignored (a trained model gives them next to no
 * weight), and each concept is hashed (FNV-1a) into one of 256 dimensions. Texts sharing
 * concepts point the same way; texts sharing none are orthogonal.
 */
export interface EmbeddingsSimulator {
  /** The base URL a client is given (ends in `/v1`). */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Every accepted request's inputs, in order. */
  requests: { model: string; input: string[]; encodingFormat: string }[];
  /** While true, every request answers 500. */
  failing: boolean;
  close(): Promise<void>;
}

const DIMENSIONS = 256;

/** Words of one meaning: each maps to the first word of its group. */
const SYNONYM_GROUPS = [
  ['refund', 'refunds', 'reimbursed', 'reimbursement', 'repaid', 'money', 'amount'],
  ['delivery', 'shipping', 'ship', 'shipped', 'arrive', 'arrives', 'courier', 'parcel', 'dispatch'],
  ['support', 'help', 'helpdesk', 'desk', 'assistance', 'agent', 'talk'],
];
const CONCEPT = new Map(SYNONYM_GROUPS.flatMap((group) => group.map((word) => [word, group[0]] as const)));
const FUNCTION_WORDS = new Set([
  'a',
  'an',
  'and',
  'any',
  'be',
  'can',
  'do',
  'does',
  'from',
  'get',
  'i',
  'in',
  'is',
  'it',
  'my',
  'of',
  'on',
  'or',
  'our',
  'the',
  'to',
  'we',
  'will',
  'you',
  'your',
]);

export function simulatedEmbedding(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const [word] of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    if (FUNCTION_WORDS.has(word)) continue;
    const hash = fnv1a(CONCEPT.get(word) ?? word);
    vector[hash % DIMENSIONS] += hash & 0x100 ? -1 : 1;
  }
  return vector;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

export async function startEmbeddingsSimulator({ apiKey = 'sk-sim-embeddings', model = 'sim-embed-1' } = {}): Promise<EmbeddingsSimulator> {
  const simulator: EmbeddingsSimulator = { baseUrl: '', apiKey, model, requests: [], failing: false, close: async () => undefined };
  const server = createServer((req, res) => {
    void handle(simulator, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  simulator.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  simulator.close = () => new Promise((resolve) => server.close(() => resolve()));
  return simulator;
}

async function handle(simulator: EmbeddingsSimulator, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.method !== 'POST' || req.url !== '/v1/embeddings') return error(res, 404, 'not found', 'invalid_request_error');
  if (req.headers.authorization !== `Bearer ${simulator.apiKey}`)
    return error(res, 401, 'Incorrect API key provided', 'invalid_request_error', 'invalid_api_key');
  if (simulator.failing) return error(res, 500, 'The server had an error while processing your request.', 'server_error');
  let body: { model?: unknown; input?: unknown; encoding_format?: unknown };
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return error(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || !input.length || !input.every((i) => typeof i === 'string' && i.length > 0)) {
    return error(res, 400, "'input' must be a non-empty string or array of non-empty strings", 'invalid_request_error');
  }
  if (body.model !== simulator.model) return error(res, 404, `The model '${String(body.model)}' does not exist`, 'invalid_request_error', 'model_not_found');
  const encodingFormat = body.encoding_format ?? 'float';
  if (encodingFormat !== 'float' && encodingFormat !== 'base64')
    return error(res, 400, "'encoding_format' must be 'float' or 'base64'", 'invalid_request_error');
  simulator.requests.push({ model: body.model, input, encodingFormat });
  const data = input.map((text: string, index: number) => {
    const vector = simulatedEmbedding(text);
    const embedding = encodingFormat === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  const tokens = input.reduce((sum: number, text: string) => sum + text.split(/\s+/).filter(Boolean).length, 0);
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: simulator.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
}

function error(res: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}
