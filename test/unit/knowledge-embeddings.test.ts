import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import { embeddingsConfig, loadConfig } from '../../config/env';
import { cosine, EmbeddingsFailedError, embedTexts, vectorFromBytes, vectorToBytes } from '../../providers/embeddings/openai-compatible';
import { simulatedEmbedding, startEmbeddingsSimulator, type EmbeddingsSimulator } from '../support/embeddings-simulator';

describe('knowledge embeddings', () => {
  describe('settings', () => {
    it('are off unless EMBEDDINGS_BASE_URL is set (retrieval then works offline with BM25)', () => {
      expect(embeddingsConfig({})).to.equal(null);
      expect(loadConfig({}).embeddings).to.equal(null);
      expect(embeddingsConfig({ EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_MODEL: 'm' })).to.equal(null);
    });

    it('take the base URL (without trailing slashes), key and model, with text-embedding-3-small by default', () => {
      expect(embeddingsConfig({ EMBEDDINGS_BASE_URL: 'https://api.example.com/v1/' })).to.deep.equal({
        baseUrl: 'https://api.example.com/v1',
        apiKey: '',
        model: 'text-embedding-3-small',
      });
      const config = loadConfig({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1', EMBEDDINGS_API_KEY: 'sk-x', EMBEDDINGS_MODEL: 'nomic-embed-text' });
      expect(config.embeddings).to.deep.equal({ baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'sk-x', model: 'nomic-embed-text' });
    });

    it('refuse a base URL that is not http(s)', () => {
      expect(() => embeddingsConfig({ EMBEDDINGS_BASE_URL: 'localhost:8000' })).to.throw('EMBEDDINGS_BASE_URL');
    });
  });

  describe('vectors', () => {
    it('store as float32 bytes and read back from a Buffer or a BSON Binary', () => {
      const vector = Float32Array.from([0.6, -0.8, 0, 1e-7]);
      const bytes = vectorToBytes(vector);
      expect(bytes.length).to.equal(16);
      expect(vectorFromBytes(bytes)).to.deep.equal(vector);
      expect(vectorFromBytes({ buffer: new Uint8Array(bytes) })).to.deep.equal(vector);
    });

    it('compare by dot product (they are unit length), 0 for different dimensions', () => {
      expect(cosine(Float32Array.from([0.6, 0.8]), Float32Array.from([0.6, 0.8]))).to.be.closeTo(1, 1e-6);
      expect(cosine(Float32Array.from([1, 0]), Float32Array.from([0, 1]))).to.equal(0);
      expect(cosine(Float32Array.from([1, 0]), Float32Array.from([1, 0, 0]))).to.equal(0);
    });
  });

  describe('against an OpenAI-compatible server (simulator)', () => {
    let simulator: EmbeddingsSimulator;
    before(async () => (simulator = await startEmbeddingsSimulator()));
    after(() => simulator.close());
    beforeEach(() => (simulator.requests.length = 0));
    const config = () => ({ baseUrl: simulator.baseUrl, apiKey: simulator.apiKey, model: simulator.model });
    const request = { timeoutMs: 5000, maxRetries: 0 };

    it('sends batches of 64 inputs and answers unit vectors in input order', async () => {
      const texts = Array.from({ length: 130 }, (_, i) => `text number ${i}`);
      const vectors = await embedTexts(config(), texts, request);
      expect(simulator.requests.map((r) => r.input.length)).to.deep.equal([64, 64, 2]);
      expect(vectors).to.have.length(130);
      for (const [i, vector] of vectors.entries()) {
        const raw = simulatedEmbedding(texts[i]);
        const norm = Math.hypot(...raw);
        expect(vector[raw.findIndex((v) => v !== 0)]).to.be.closeTo(raw.find((v) => v !== 0)! / norm, 1e-6);
        expect(cosine(vector, vector)).to.be.closeTo(1, 1e-5);
      }
    });

    it('throws EmbeddingsFailedError when the server refuses', async () => {
      let error: unknown;
      try {
        await embedTexts({ ...config(), apiKey: 'sk-wrong' }, ['x'], request);
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(EmbeddingsFailedError);
      expect((error as Error).message).to.include('401');
    });

    it('throws EmbeddingsFailedError for an answer with too few vectors or vectors of unequal length', async () => {
      for (const data of [
        [{ object: 'embedding', index: 0, embedding: [1, 0] }],
        [
          { object: 'embedding', index: 0, embedding: [1, 0] },
          { object: 'embedding', index: 1, embedding: [1] },
        ],
      ]) {
        const server = createServer((_req, res) =>
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: 'm', usage: {} })),
        );
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
        try {
          await embedTexts({ baseUrl, apiKey: '', model: 'm' }, ['one', 'two'], request).then(
            () => expect.fail('accepted a malformed answer'),
            (err) => expect(err).to.be.instanceOf(EmbeddingsFailedError),
          );
        } finally {
          await new Promise((resolve) => server.close(resolve));
        }
      }
    });

    it('speaks the official client default (base64) as well, as the real API does', async () => {
      const client = new OpenAI({ baseURL: simulator.baseUrl, apiKey: simulator.apiKey });
      const response = await client.embeddings.create({ model: simulator.model, input: 'refund policy' });
      expect(simulator.requests[0].encodingFormat).to.equal('base64');
      expect(Array.from(response.data[0].embedding)).to.deep.equal(simulatedEmbedding('refund policy'));
    });
  });
});
