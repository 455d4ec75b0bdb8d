import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { KnowledgeBase, KnowledgeSlot, slotId } from '../../../db/models/knowledge-base';
import { MAX_CHUNKS_PER_BASE, MAX_DOCUMENTS_PER_BASE } from '../../../domain/knowledge/bases';
import { UPLOAD_MAX_BYTES } from '../../../api/uploads';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, type SignedUp } from '../../support/accounts';
import { createBase, minimalPdf, search, storedChunks, storedCounts, uploadRequest, uploadText } from './fixtures';

describe('knowledge documents: upload, list, delete', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Kabir Shah' });
  });
  after(() => api.close());

  const post = (kbId: string, bytes: Buffer, filename: string, declaredType: string, headers = owner.auth) =>
    api.request(`/api/v1/knowledge-bases/${kbId}/documents`, uploadRequest(bytes, filename, declaredType, headers));
  const documentsOf = async (kbId: string) => (await api.request(`/api/v1/knowledge-bases/${kbId}/documents`, { headers: owner.auth })).json();

  it('indexes plain text: the document, its chunks and term counts are stored, the file is not', async () => {
    const base = await createBase(api, owner.auth);
    const text = 'Our store in Indiranagar opens at 10 am.\n\nParking is free for customers.';
    const res = await post(base.id, Buffer.from(text), 'store.txt', 'text/plain');
    expect(res.status).to.equal(201);
    const document = await res.json();
    expect(document).to.include({
      knowledge_base_id: base.id,
      name: 'store.txt',
      content_type: 'text/plain',
      size_bytes: Buffer.byteLength(text),
      character_count: text.length,
      chunk_count: 1,
      embedding_model: null,
      uploaded_by: 'Kabir Shah',
    });
    expect(document.uploaded_at).to.match(/\+05:30$/);
    const [chunk] = await storedChunks(document.id);
    expect(chunk).to.include({ text, position: 0, heading: null, embedding: null });
    expect(await storedCounts(base.id)).to.deep.equal({ slots: 1, documents: 1, groups: 1 });
    expect(chunk.term_counts).to.equal('store:1 indiranagar:1 opens:1 10:1 parking:1 free:1 customers:1');
    expect(chunk.term_total).to.equal(7); // store indiranagar opens 10 parking free customers (the rest are stop words)
    expect(await documentsOf(base.id)).to.deep.equal([document]);
  });

  it('indexes Markdown (by extension or by declared type) with its headings', async () => {
    const base = await createBase(api, owner.auth);
    const markdown = '# Plans\n\nStarter costs 499 rupees.\n\n## Growth\n\nGrowth costs 1999 rupees a month.';
    const byName = await uploadText(api, owner.auth, base.id, 'plans.md', markdown, 'application/octet-stream');
    expect(byName).to.include({ content_type: 'text/markdown', chunk_count: 2 });
    const byType = await uploadText(api, owner.auth, base.id, 'plans', markdown, 'text/markdown; charset=utf-8');
    expect(byType.content_type).to.equal('text/markdown');
    const chunks = await storedChunks(byName.id);
    expect(chunks.map((c) => [c.position, c.heading, c.text])).to.deep.equal([
      [0, 'Plans', 'Plans\n\nStarter costs 499 rupees.'],
      [1, 'Plans > Growth', 'Plans > Growth\n\nGrowth costs 1999 rupees a month.'],
    ]);
    const plain = await uploadText(api, owner.auth, base.id, 'notes.txt', markdown, 'text/markdown');
    expect(plain.content_type, 'the extension wins over the declared type').to.equal('text/plain');
  });

  it('keeps UTF-8 names and Hindi text, and drops a byte-order mark', async () => {
    const base = await createBase(api, owner.auth);
    const hindi = 'दुकान सुबह दस बजे खुलती है।';
    const document = await uploadText(api, owner.auth, base.id, 'समय.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(hindi)]));
    expect(document).to.include({ name: 'समय.txt', character_count: hindi.length });
    const [chunk] = await storedChunks(document.id);
    expect(chunk.text).to.equal(hindi);
    expect(chunk.term_counts).to.include('खुलती:1');
  });

  it('extracts the text of a real PDF, every page, and makes it retrievable', async () => {
    const base = await createBase(api, owner.auth);
    const pdf = minimalPdf([
      ['Warranty terms.', 'Every speaker carries a two year warranty (parts and labour).'],
      ['Claims need the original invoice number.'],
    ]);
    const res = await post(base.id, pdf, 'warranty.pdf', 'application/octet-stream');
    expect(res.status).to.equal(201);
    const document = await res.json();
    expect(document).to.include({ content_type: 'application/pdf', name: 'warranty.pdf', size_bytes: pdf.length, chunk_count: 1 });
    const [chunk] = await storedChunks(document.id);
    expect(chunk.text).to.include('two year warranty (parts and labour)').and.include('original invoice number');
    const { results } = await search(api, owner.auth, base.id, 'How long is the warranty on speakers?');
    expect(results[0]).to.include({ document_id: document.id, document_name: 'warranty.pdf' });
  });

  it('answers 422 for a PDF that cannot be read and for one without text, storing nothing', async () => {
    const base = await createBase(api, owner.auth);
    const damaged = Buffer.from('%PDF-1.4\nthis is not really a PDF\n');
    const blank = minimalPdf([[]]);
    for (const [label, bytes, message] of [
      ['damaged', damaged, 'could not be read'],
      ['blank', blank, 'no text'],
    ] as const) {
      const res = await post(base.id, bytes, `${label}.pdf`, 'application/pdf');
      expect(res.status, label).to.equal(422);
      const [issue] = (await res.json()).detail;
      expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'file'], input: `${label}.pdf` });
      expect(issue.msg).to.include(message);
    }
    expect(await storedCounts(base.id)).to.deep.equal({ slots: 0, documents: 0, groups: 0 });
  });

  for (const [label, text, filename] of [
    ['whitespace and punctuation only', ' \n-- ... \n', 'empty.txt'],
    ['Markdown headings without sections', '# Title\n\n## Subtitle\n', 'empty.md'],
    ['an empty file', '', 'nothing.txt'],
  ] as const) {
    it(`answers 422 for ${label}`, async () => {
      const base = await createBase(api, owner.auth);
      const res = await post(base.id, Buffer.from(text), filename, 'text/plain');
      expect(res.status).to.equal(422);
      expect((await res.json()).detail[0].msg).to.include('no text');
      expect(await storedCounts(base.id)).to.deep.equal({ slots: 0, documents: 0, groups: 0 });
    });
  }

  for (const [label, bytes, filename, declared] of [
    ['a PNG', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), 'image.png', 'image/png'],
    ['UTF-8 text named .csv and declared text/csv', Buffer.from('a,b\n1,2\n'), 'data.csv', 'text/csv'],
    ['UTF-8 text declared application/pdf', Buffer.from('not a pdf'), 'file.pdf', 'application/pdf'],
    ['invalid UTF-8 named .txt', Buffer.from([0x68, 0x69, 0xff, 0xfe]), 'notes.txt', 'text/plain'],
    ['text with a NUL byte named .md', Buffer.from('abc\0def'), 'notes.md', 'text/markdown'],
    ['a PDF signature not at the start', Buffer.concat([Buffer.from([0x00]), minimalPdf([['x']])]), 'file.pdf', 'application/pdf'],
  ] as const) {
    it(`answers 415 for ${label}, storing nothing`, async () => {
      const base = await createBase(api, owner.auth);
      const res = await post(base.id, bytes, filename, declared);
      expect(res.status).to.equal(415);
      expect((await res.json()).detail).to.include('not a PDF');
      expect(await storedCounts(base.id)).to.deep.equal({ slots: 0, documents: 0, groups: 0 });
    });
  }

  it('answers 415 for a body that is not multipart', async () => {
    const base = await createBase(api, owner.auth);
    const res = await api.request(`/api/v1/knowledge-bases/${base.id}/documents`, {
      method: 'POST',
      headers: { ...owner.auth, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).to.equal(415);
  });

  it('answers 422 when the form has no file', async () => {
    const base = await createBase(api, owner.auth);
    const form = new FormData();
    form.append('file', 'just a field');
    const res = await api.request(`/api/v1/knowledge-bases/${base.id}/documents`, { method: 'POST', body: form, headers: owner.auth });
    expect(res.status).to.equal(422);
    expect((await res.json()).detail[0]).to.include({ type: 'missing' });
  });

  it('accepts exactly 5 MB and answers 413 one byte over, storing nothing', async function () {
    this.timeout(120_000);
    const base = await createBase(api, owner.auth);
    // Sentences of text, so the 5 MB are indexed for real (about 6500 chunks).
    const line = 'Every order is packed in recycled cardboard and sealed with paper tape. ';
    const atLimit = Buffer.from(line.repeat(Math.ceil(UPLOAD_MAX_BYTES / line.length)).slice(0, UPLOAD_MAX_BYTES));
    const ok = await post(base.id, atLimit, 'big.txt', 'text/plain');
    expect(ok.status).to.equal(201);
    expect((await ok.json()).size_bytes).to.equal(5 * 1024 * 1024);
    const over = await post(base.id, Buffer.concat([atLimit, Buffer.from('x')]), 'bigger.txt', 'text/plain');
    expect(over.status).to.equal(413);
    expect((await over.json()).detail).to.include('5 MB');
    expect(await storedCounts(base.id)).to.deep.include({ slots: 1, documents: 1 });
  });

  /** Slots taken by documents the test does not need to exist: they count towards the limits. */
  const takenSlot = (kbId: string, slot: number, chunkCount: number) => ({
    _id: slotId(kbId, slot),
    workspace_id: owner.workspaceId,
    knowledge_base_id: kbId,
    document_id: newId(),
    chunk_count: chunkCount,
  });

  it(`holds at most ${MAX_CHUNKS_PER_BASE} chunks per base (409 beyond)`, async () => {
    const base = await createBase(api, owner.auth);
    await KnowledgeSlot.create(takenSlot(base.id, 0, MAX_CHUNKS_PER_BASE - 2));
    const longer = ['First part. '.repeat(70), 'Second part. '.repeat(60), 'Third part. '.repeat(60)].join('\n\n');
    const tooMany = await post(base.id, Buffer.from(longer), 'longer.txt', 'text/plain');
    expect(tooMany.status).to.equal(409);
    expect((await tooMany.json()).detail).to.include(`at most ${MAX_CHUNKS_PER_BASE} chunks`);
    const two = await uploadText(api, owner.auth, base.id, 'two.txt', ['First part. '.repeat(60), 'Second part. '.repeat(60)].join('\n\n'));
    expect(two.chunk_count, 'exactly at the limit').to.equal(2);
    expect((await post(base.id, Buffer.from('One more.'), 'more.txt', 'text/plain')).status).to.equal(409);
  });

  it(`holds at most ${MAX_DOCUMENTS_PER_BASE} documents per base (409 beyond)`, async () => {
    const base = await createBase(api, owner.auth);
    // Every slot but one in the middle: the upload finds the free one.
    await KnowledgeSlot.insertMany(Array.from({ length: MAX_DOCUMENTS_PER_BASE }, (_, n) => takenSlot(base.id, n, 0)).filter((_, n) => n !== 17));
    await uploadText(api, owner.auth, base.id, 'last.txt', 'The last document that fits.');
    const full = await post(base.id, Buffer.from('One more.'), 'more.txt', 'text/plain');
    expect(full.status).to.equal(409);
    expect((await full.json()).detail).to.include(`at most ${MAX_DOCUMENTS_PER_BASE} documents`);
    expect(await storedCounts(base.id)).to.deep.equal({ slots: MAX_DOCUMENTS_PER_BASE, documents: 1, groups: 1 });
    expect((await KnowledgeSlot.findById(slotId(base.id, 17)).lean())?.chunk_count).to.equal(1);
  });

  it('deletes a document: its chunks go, retrieval stops finding it, the base revision changes', async () => {
    const base = await createBase(api, owner.auth);
    const keep = await uploadText(api, owner.auth, base.id, 'keep.txt', 'Gift cards never expire.');
    const drop = await uploadText(api, owner.auth, base.id, 'drop.txt', 'Gift wrapping costs 49 rupees.');
    expect((await search(api, owner.auth, base.id, 'gift wrapping')).results[0].document_id).to.equal(drop.id);
    const revision = (await KnowledgeBase.findById(base.id).lean())!.revision;

    const res = await api.request(`/api/v1/knowledge-bases/${base.id}/documents/${drop.id}`, { method: 'DELETE', headers: owner.auth });
    expect(res.status).to.equal(204);
    expect(await storedChunks(drop.id)).to.deep.equal([]);
    expect(await storedChunks(keep.id)).to.have.length(1);
    expect(await storedCounts(base.id)).to.deep.equal({ slots: 1, documents: 1, groups: 1 });
    expect((await KnowledgeBase.findById(base.id).lean())!.revision).not.to.equal(revision);
    const { results } = await search(api, owner.auth, base.id, 'gift wrapping');
    expect(results.map((r: { document_id: string }) => r.document_id)).to.deep.equal([keep.id]);
    expect((await documentsOf(base.id)).map((d: { id: string }) => d.id)).to.deep.equal([keep.id]);

    const again = await api.request(`/api/v1/knowledge-bases/${base.id}/documents/${drop.id}`, { method: 'DELETE', headers: owner.auth });
    expect(again.status).to.equal(404);
    const otherBase = await createBase(api, owner.auth);
    const wrongBase = await api.request(`/api/v1/knowledge-bases/${otherBase.id}/documents/${keep.id}`, { method: 'DELETE', headers: owner.auth });
    expect(wrongBase.status, 'a document is addressed through its own base').to.equal(404);
    expect(await storedChunks(keep.id)).to.have.length(1);
  });

  it('answers 404 for uploads to an unknown base, and 403 for a viewer', async () => {
    const unknown = await post(newId(), Buffer.from('text'), 'a.txt', 'text/plain');
    expect(unknown.status).to.equal(404);
    const base = await createBase(api, owner.auth);
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const denied = await post(base.id, Buffer.from('text'), 'a.txt', 'text/plain', viewer.headers);
    expect(denied.status).to.equal(403);
    expect((await api.request(`/api/v1/knowledge-bases/${base.id}/documents`, { headers: viewer.headers })).status).to.equal(200);
  });
});
