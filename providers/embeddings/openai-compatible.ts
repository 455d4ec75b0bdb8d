import OpenAI from 'openai';
import type { EmbeddingsConfig } from '../../contracts/provider-settings';

/**
 * Vectors from an OpenAI-compatible `/embeddings` endpoint, through the `openai` package.
 * Floats are asked for explicitly: the package defaults to base64, which several
 * OpenAI-compatible servers do not implement.
 */

/** The endpoint failed or answered something that is not an embeddings response. */
export class EmbeddingsFailedError extends Error {
  override name = 'EmbeddingsFailedError';
}

/** Inputs per request: large enough to be quick, small enough for every provider's limits. */
const BATCH_SIZE = 64;

/** Uploads may wait and retry; a query runs during a live call, which must not wait long. */
export const UPLOAD_REQUEST = { timeoutMs: 30_000, maxRetries: 2 };
export const QUERY_REQUEST = { timeoutMs: 3_000, maxRetries: 0 };

const clients = new Map<string, OpenAI>();

function clientFor(config: EmbeddingsConfig): OpenAI {
  const key = `${config.baseUrl}\n${config.apiKey}`;
  let client = clients.get(key);
  if (!client) {
    // The package insists on a key; local servers usually need none.
    client = new OpenAI({ baseURL: config.baseUrl, apiKey: config.apiKey || 'none' });
    clients.set(key, client);
  }
  return client;
}

/** Unit-length vectors of the texts, in order (cosine similarity is then a dot product). */
export async function embedTexts(
  config: EmbeddingsConfig,
  texts: readonly string[],
  request: { timeoutMs: number; maxRetries: number },
): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += BATCH_SIZE) {
    const input = texts.slice(start, start + BATCH_SIZE);
    let response: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      response = await clientFor(config).embeddings.create(
        { model: config.model, input, encoding_format: 'float' },
        { timeout: request.timeoutMs, maxRetries: request.maxRetries },
      );
    } catch (err) {
      throw new EmbeddingsFailedError(`the embeddings endpoint failed: ${(err as Error).message}`);
    }
    vectors.push(...vectorsOf(response, input.length, vectors[0]?.length));
  }
  return vectors;
}

function vectorsOf(response: OpenAI.Embeddings.CreateEmbeddingResponse, expected: number, dimensions: number | undefined): Float32Array[] {
  const data = Array.isArray(response?.data) ? [...response.data].sort((a, b) => a.index - b.index) : [];
  if (data.length !== expected) throw new EmbeddingsFailedError(`the embeddings endpoint answered ${data.length} vectors for ${expected} inputs`);
  return data.map(({ embedding }) => {
    const size = dimensions ?? data[0].embedding?.length;
    if (!Array.isArray(embedding) || !size || embedding.length !== size || !embedding.every(Number.isFinite)) {
      throw new EmbeddingsFailedError('the embeddings endpoint answered vectors of unequal length or with values that are not numbers');
    }
    return unitVector(embedding);
  });
}

function unitVector(values: readonly number[]): Float32Array {
  let squares = 0;
  for (const v of values) squares += v * v;
  const norm = Math.sqrt(squares) || 1;
  return Float32Array.from(values, (v) => v / norm);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}

/** Float32 little-endian bytes, as chunks store them. */
export function vectorToBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes;
}

/** Back from stored bytes (a Buffer, or the BSON Binary a lean query answers). */
export function vectorFromBytes(stored: Uint8Array | { buffer: Uint8Array }): Float32Array {
  const bytes = Buffer.from(stored instanceof Uint8Array ? stored : stored.buffer);
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}
