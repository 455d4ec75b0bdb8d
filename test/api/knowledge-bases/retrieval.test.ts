import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { retrieve } from '../../../domain/knowledge/bases';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { createBase, HELP_CENTRE, minimalPdf, search, uploadText } from './fixtures';

describe('knowledge retrieval (BM25)', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let helpCentre: { id: string };
  const documentIds: Record<string, string> = {};
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    helpCentre = await createBase(api, owner.auth, 'Help centre');
    for (const [name, text] of Object.entries(HELP_CENTRE)) documentIds[name] = (await uploadText(api, owner.auth, helpCentre.id, name, text)).id;
  });
  after(() => api.close());

  for (const [question, documentName, expected] of [
    ['When do refunds reach my payment method?', 'returns.md', 'Returns > Refunds\n\nOnce the returned item'],
    ['Which exchanges are free of charge?', 'returns.md', 'Returns > Exchanges\n\nSizes and colours'],
    ['How many days does delivery take to metro cities?', 'shipping.txt', 'Orders leave our Pune warehouse'],
    ['What time does the support desk open on Saturday?', 'support.txt', 'Our support desk answers calls'],
  ] as const) {
    it(`answers "${question}" with the right chunk first`, async () => {
      const { mode, results } = await search(api, owner.auth, helpCentre.id, question);
      expect(mode).to.equal('bm25');
      expect(results[0]).to.include({ document_name: documentName, document_id: documentIds[documentName], knowledge_base_id: helpCentre.id });
      expect(results[0].text.startsWith(expected), results[0].text).to.equal(true);
      for (let i = 1; i < results.length; i++) expect(results[i].score).to.be.at.most(results[i - 1].score);
    });
  }

  it('answers the contract fields, and nothing for a question that shares no word with the base', async () => {
    const { results } = await search(api, owner.auth, helpCentre.id, 'Do you sell laptops?');
    expect(results).to.deep.equal([]);
    const [first] = (await search(api, owner.auth, helpCentre.id, 'warehouse')).results;
    expect(first).to.have.all.keys('chunk_id', 'knowledge_base_id', 'document_id', 'document_name', 'position', 'text', 'score');
    expect(first.chunk_id).to.match(/^[0-9a-f]{32}$/);
    expect(first.score).to.be.greaterThan(0);
  });

  it('finds Hindi text by Hindi words', async () => {
    const base = await createBase(api, owner.auth, 'हिन्दी');
    await uploadText(api, owner.auth, base.id, 'समय.txt', 'दुकान सुबह दस बजे खुलती है और रात नौ बजे बंद होती है।');
    await uploadText(api, owner.auth, base.id, 'वापसी.txt', 'सामान तीस दिन के भीतर वापस किया जा सकता है।');
    const { results } = await search(api, owner.auth, base.id, 'दुकान कब खुलती है?');
    expect(results.map((r: { document_name: string }) => r.document_name)).to.deep.equal(['समय.txt']);
  });

  it('sees a document the moment it is uploaded, also after the base was searched (no stale cache)', async () => {
    const base = await createBase(api, owner.auth, 'growing');
    await uploadText(api, owner.auth, base.id, 'one.txt', 'Cash on delivery is available.');
    expect((await search(api, owner.auth, base.id, 'installments')).results).to.deep.equal([]);
    const later = await uploadText(api, owner.auth, base.id, 'two.pdf', minimalPdf([['Pay in three installments with no interest.']]), 'application/pdf');
    const { results } = await search(api, owner.auth, base.id, 'installments');
    expect(results.map((r: { document_id: string }) => r.document_id)).to.deep.equal([later.id]);
  });

  it('returns at most `limit` chunks (default 5; 1 to 20)', async () => {
    const base = await createBase(api, owner.auth, 'many');
    const text = Array.from(
      { length: 30 },
      (_, i) => `Store number ${i} sells umbrellas in branch ${i}. ${'Filler words about nothing in particular. '.repeat(15)}`,
    ).join('\n\n');
    await uploadText(api, owner.auth, base.id, 'stores.txt', text);
    expect((await search(api, owner.auth, base.id, 'umbrellas')).results).to.have.length(5);
    expect((await search(api, owner.auth, base.id, 'umbrellas', 1)).results).to.have.length(1);
    expect((await search(api, owner.auth, base.id, 'umbrellas', 20)).results).to.have.length(20);
    for (const [body, type] of [
      [{ query: 'umbrellas', limit: 0 }, 'greater_than_equal'],
      [{ query: 'umbrellas', limit: 21 }, 'less_than_equal'],
      [{ query: '' }, 'string_too_short'],
      [{ query: '   ' }, 'string_pattern_mismatch'],
      [{ query: 'q'.repeat(1001) }, 'string_too_long'],
      [{}, 'missing'],
    ] as const) {
      const res = await api.request(`/api/v1/knowledge-bases/${base.id}/search`, withJson('POST', body, owner.auth));
      expect(res.status, JSON.stringify(body).slice(0, 40)).to.equal(422);
      expect((await res.json()).detail[0].type).to.equal(type);
    }
    expect((await api.request(`/api/v1/knowledge-bases/${base.id}/search`, withJson('POST', { query: 'q'.repeat(1000) }, owner.auth))).status).to.equal(200);
  });

  it('lets a viewer search (agents.view)', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const res = await api.request(`/api/v1/knowledge-bases/${helpCentre.id}/search`, withJson('POST', { query: 'refunds' }, viewer.headers));
    expect(res.status).to.equal(200);
  });

  describe('retrieve(), as the conversation engine calls it', () => {
    it("searches several bases as one collection, skipping ids that are not the workspace's", async () => {
      const faq = await createBase(api, owner.auth, 'FAQ');
      const faqDocument = await uploadText(
        api,
        owner.auth,
        faq.id,
        'faq.md',
        '# Gift cards\n\nGift cards can be redeemed online and in stores, and never expire.',
      );
      const stranger = await activeOwner(api);
      const theirs = await createBase(api, stranger.auth, 'theirs');
      await uploadText(api, stranger.auth, theirs.id, 'secret.txt', 'Gift cards for partners carry a secret discount.');

      const results = await retrieve({
        workspaceId: owner.workspaceId,
        knowledgeBaseIds: [helpCentre.id, faq.id, theirs.id, newId(), faq.id],
        query: 'Do gift cards expire?',
        limit: 3,
        embeddings: null,
      });
      expect(results[0]).to.deep.include({ knowledge_base_id: faq.id, document_id: faqDocument.id, document_name: 'faq.md', position: 0 });
      expect(results[0].text).to.equal('Gift cards\n\nGift cards can be redeemed online and in stores, and never expire.');
      expect(results.every((r) => r.knowledge_base_id !== theirs.id)).to.equal(true);
      expect(results.length).to.be.at.most(3);
    });

    it('answers nothing for no bases, unknown bases, a blank query or a stop-word-only query', async () => {
      const base = { workspaceId: owner.workspaceId, limit: 5, embeddings: null };
      expect(await retrieve({ ...base, knowledgeBaseIds: [], query: 'refunds' })).to.deep.equal([]);
      expect(await retrieve({ ...base, knowledgeBaseIds: [newId()], query: 'refunds' })).to.deep.equal([]);
      expect(await retrieve({ ...base, knowledgeBaseIds: [helpCentre.id], query: '   ' })).to.deep.equal([]);
      expect(await retrieve({ ...base, knowledgeBaseIds: [helpCentre.id], query: 'what is it?' })).to.deep.equal([]);
    });

    it('keeps the limit between 1 and 20 whatever the caller passes', async () => {
      const query = 'refunds delivery support exchanges warehouse';
      expect(await retrieve({ workspaceId: owner.workspaceId, knowledgeBaseIds: [helpCentre.id], query, limit: 0, embeddings: null })).to.have.length(1);
      const all = await retrieve({ workspaceId: owner.workspaceId, knowledgeBaseIds: [helpCentre.id], query, limit: 500, embeddings: null });
      expect(all.length).to.be.within(2, 20);
    });
  });

  it('forgets a deleted base at once', async () => {
    const base = await createBase(api, owner.auth, 'short-lived');
    await uploadText(api, owner.auth, base.id, 'x.txt', 'Loyalty points double on Diwali.');
    const request = { workspaceId: owner.workspaceId, knowledgeBaseIds: [base.id], query: 'loyalty points', limit: 5, embeddings: null };
    expect(await retrieve(request)).to.have.length(1);
    expect((await api.request(`/api/v1/knowledge-bases/${base.id}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(204);
    expect(await retrieve(request)).to.deep.equal([]);
  });
});
