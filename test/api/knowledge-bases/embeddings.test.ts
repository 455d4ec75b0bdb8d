import { expect } from 'chai';
import { retrieve } from '../../../domain/knowledge/bases';
import type { EmbeddingsConfig } from '../../../config/env';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, type SignedUp } from '../../support/accounts';
import { startEmbeddingsSimulator, type EmbeddingsSimulator } from '../../support/embeddings-simulator';
import { createBase, HELP_CENTRE, search, storedChunks, storedCounts, uploadRequest, uploadText } from './fixtures';

/**
 * Retrieval with an OpenAI-compatible embeddings endpoint: a local simulator of
 * `POST /v1/embeddings` whose deterministic "model" knows a few synonyms (so a question can
 * match a passage it shares no word with). The endpoint is the app's configuration
 * (Config.embeddings, from EMBEDDINGS_* at start): a change of settings is another API process,
 * as in production, on the same database.
 */
describe('knowledge retrieval with embeddings', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let simulator: EmbeddingsSimulator;
  /** One API per configuration, started when first used. */
  const apis = new Map<string, RunningApi>();
  let embeddings: EmbeddingsConfig | null = null;

  const apiWith = async (config: EmbeddingsConfig | null) => {
    const key = JSON.stringify(config);
    if (!apis.has(key)) apis.set(key, await startApi({ embeddings: config }));
    embeddings = config;
    api = apis.get(key)!;
  };
  const useEmbeddings = (settings: Partial<EmbeddingsConfig> = {}) =>
    apiWith({ baseUrl: settings.baseUrl ?? simulator.baseUrl, apiKey: settings.apiKey ?? simulator.apiKey, model: settings.model ?? simulator.model });
  const noEmbeddings = () => apiWith(null);

  before(async () => {
    simulator = await startEmbeddingsSimulator();
    await useEmbeddings();
    owner = await activeOwner(api);
  });
  beforeEach(async () => {
    await useEmbeddings();
    simulator.failing = false;
    simulator.requests.length = 0;
  });
  after(async () => {
    for (const running of apis.values()) await running.close();
    await simulator.close();
  });

  async function helpCentre() {
    const base = await createBase(api, owner.auth, 'Help centre');
    const ids: Record<string, string> = {};
    for (const [name, text] of Object.entries(HELP_CENTRE)) ids[name] = (await uploadText(api, owner.auth, base.id, name, text)).id;
    return { base, ids };
  }

  it('embeds every chunk at upload, as floats, with the configured model and key', async () => {
    const base = await createBase(api, owner.auth);
    const document = await uploadText(api, owner.auth, base.id, 'returns.md', HELP_CENTRE['returns.md']);
    expect(document.embedding_model).to.equal(simulator.model);
    const chunks = await storedChunks(document.id);
    expect(simulator.requests).to.deep.equal([{ model: simulator.model, input: chunks.map((c) => c.text), encodingFormat: 'float' }]);
    for (const chunk of chunks) expect(Buffer.from(chunk.embedding!.buffer).length).to.equal(256 * 4);
  });

  it('finds the passage for a question that shares no word with it (hybrid), where BM25 alone finds nothing', async () => {
    const { base, ids } = await helpCentre();
    const question = 'Can I get reimbursed?';
    const hybrid = await search(api, owner.auth, base.id, question);
    expect(hybrid.mode).to.equal('hybrid');
    expect(hybrid.results[0]).to.include({ document_id: ids['returns.md'] });
    expect(hybrid.results[0].text.startsWith('Returns > Refunds')).to.equal(true);
    expect(simulator.requests.at(-1)!.input).to.deep.equal([question]);

    await noEmbeddings();
    const lexical = await search(api, owner.auth, base.id, question);
    expect(lexical).to.deep.equal({ mode: 'bm25', results: [] });
  });

  it('still ranks lexical matches first when both rankings agree, and fuses scores by rank', async () => {
    const { base, ids } = await helpCentre();
    const { mode, results } = await search(api, owner.auth, base.id, 'Which courier delivers to metro cities, and how many days does delivery take?');
    expect(mode).to.equal('hybrid');
    expect(results[0].document_id).to.equal(ids['shipping.txt']);
    // First in both rankings: 1/(60+1) twice.
    expect(results[0].score).to.be.closeTo(2 / 61, 1e-12);
  });

  it('answers the engine the same way through retrieve()', async () => {
    const { base, ids } = await helpCentre();
    const [first] = await retrieve({
      workspaceId: owner.workspaceId,
      knowledgeBaseIds: [base.id],
      query: 'I need assistance from a human',
      limit: 1,
      embeddings,
    });
    expect(first.document_id).to.equal(ids['support.txt']);
  });

  it('ranks by BM25 alone while a base holds documents uploaded without vectors (before embeddings were configured)', async () => {
    await noEmbeddings();
    const base = await createBase(api, owner.auth);
    const old = await uploadText(api, owner.auth, base.id, 'old.txt', 'Bulk orders above 100 units get a quote within a day.');
    expect(old.embedding_model).to.equal(null);
    await useEmbeddings();
    const current = await uploadText(api, owner.auth, base.id, 'new.txt', HELP_CENTRE['support.txt']);
    expect(await search(api, owner.auth, base.id, 'bulk orders quote')).to.deep.include({ mode: 'bm25' });
    expect((await search(api, owner.auth, base.id, 'I need assistance')).results, 'no lexical match, no semantic ranking').to.deep.equal([]);

    await api.request(`/api/v1/knowledge-bases/${base.id}/documents/${old.id}`, { method: 'DELETE', headers: owner.auth });
    const { mode, results } = await search(api, owner.auth, base.id, 'I need assistance');
    expect(mode).to.equal('hybrid');
    expect(results[0].document_id).to.equal(current.id);
  });

  it('falls back to BM25 when the endpoint fails during a search (a live call must not wait on it)', async () => {
    const { base, ids } = await helpCentre();
    simulator.failing = true;
    const started = Date.now();
    const { mode, results } = await search(api, owner.auth, base.id, 'refunds payment method');
    expect(Date.now() - started).to.be.below(3000);
    expect(mode).to.equal('bm25');
    expect(results[0].document_id).to.equal(ids['returns.md']);
  });

  for (const [label, arrange] of [
    ['answers 500', () => (simulator.failing = true)],
    ['refuses the key', () => useEmbeddings({ apiKey: 'sk-wrong' })],
    ['does not know the model', () => useEmbeddings({ model: 'no-such-model' })],
    ['cannot be reached', () => useEmbeddings({ baseUrl: 'http://127.0.0.1:9/v1' })],
  ] as const) {
    it(`answers 502 for an upload when the endpoint ${label}, and stores nothing`, async function () {
      this.timeout(30_000); // the client retries a 500 twice, with backoff
      const base = await createBase(api, owner.auth);
      await arrange();
      const res = await api.request(
        `/api/v1/knowledge-bases/${base.id}/documents`,
        uploadRequest(Buffer.from('Some text.'), 'a.txt', 'text/plain', owner.auth),
      );
      expect(res.status).to.equal(502);
      expect((await res.json()).detail).to.include('embeddings endpoint failed');
      expect(await storedCounts(base.id)).to.deep.equal({ slots: 0, documents: 0, groups: 0 });
    });
  }
});
