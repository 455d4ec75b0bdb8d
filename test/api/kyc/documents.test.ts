import { expect } from 'chai';
import { KycDocument, KycRecord } from '../../../db/models/kyc';
import { UPLOAD_MAX_BYTES } from '../../../api/uploads';
import { startApi, type RunningApi } from '../../support/api';
import { signUp, type SignedUp } from '../../support/accounts';
import { FILES, memberHeaders, upload, uploadRequest } from './fixtures';

describe('KYC documents: upload, download, delete', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await signUp(api);
  });
  after(() => api.close());

  const post = (bytes: Buffer, filename: string, declaredType: string, headers = owner.auth) =>
    api.request('/api/v1/kyc/documents', uploadRequest(bytes, filename, declaredType, headers));
  const download = (id: string, headers = owner.auth) => api.request(`/api/v1/kyc/documents/${id}`, { headers });

  for (const [kind, bytes, filename, contentType] of [
    ['PDF', FILES.pdf, 'pan-card.pdf', 'application/pdf'],
    ['PNG', FILES.png, 'gst-certificate.png', 'image/png'],
    ['JPG', FILES.jpg, 'address proof.jpg', 'image/jpeg'],
  ] as const) {
    it(`stores a ${kind} and downloads the exact bytes with the recognised type`, async () => {
      const res = await post(bytes, filename, contentType);
      expect(res.status).to.equal(201);
      const document = await res.json();
      expect(document).to.include({ filename, content_type: contentType, size_bytes: bytes.length });
      expect(document.id).to.match(/^[0-9a-f]{32}$/);
      expect(document.uploaded_at).to.match(/\+05:30$/);

      const file = await download(document.id);
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal(contentType);
      expect(file.headers.get('content-disposition')).to.equal(`attachment; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(filename)}`);
      expect(file.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(file.headers.get('x-request-id')).to.be.a('string');
      expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).to.equal(true);
    });
  }

  it('keeps a UTF-8 file name, and offers an ASCII fallback for old clients', async () => {
    const document = await upload(api, owner.auth, FILES.pdf, 'पैन कार्ड.pdf');
    expect(document.filename).to.equal('पैन कार्ड.pdf');
    const disposition = (await download(document.id)).headers.get('content-disposition');
    expect(disposition).to.equal(`attachment; filename="___ _____.pdf"; filename*=UTF-8''${encodeURIComponent('पैन कार्ड.pdf')}`);
  });

  it('lists the documents in GET /kyc, oldest first, without their bytes', async () => {
    const fresh = await signUp(api);
    const first = await upload(api, fresh.auth, FILES.pdf, 'one.pdf');
    const second = await upload(api, fresh.auth, FILES.png, 'two.png', 'image/png');
    const { documents } = await (await api.request('/api/v1/kyc', { headers: fresh.auth })).json();
    expect(documents).to.deep.equal([first, second]);
  });

  it('goes by the content, not the declared type or name: a PNG declared as text/plain is a PNG', async () => {
    const res = await post(FILES.png, 'notes.txt', 'text/plain');
    expect(res.status).to.equal(201);
    expect((await res.json()).content_type).to.equal('image/png');
  });

  for (const [name, bytes, declared] of [
    ['a text file declared as application/pdf', FILES.text, 'application/pdf'],
    ['a GIF declared as image/png', FILES.gif, 'image/png'],
    ['an empty file', Buffer.alloc(0), 'application/pdf'],
    ['a PDF signature not at the start', Buffer.concat([Buffer.from(' '), FILES.pdf]), 'application/pdf'],
  ] as const) {
    it(`answers 415 for ${name}, and stores nothing`, async () => {
      const before = await KycDocument.countDocuments({ workspace_id: owner.workspaceId });
      const res = await post(bytes, 'file.pdf', declared);
      expect(res.status).to.equal(415);
      expect((await res.json()).detail).to.include('not a PDF, PNG or JPG');
      expect(await KycDocument.countDocuments({ workspace_id: owner.workspaceId })).to.equal(before);
    });
  }

  it('answers 415 for a body that is not multipart', async () => {
    const res = await api.request('/api/v1/kyc/documents', { method: 'POST', headers: { ...owner.auth, 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).to.equal(415);
  });

  it('accepts exactly 5 MB and answers 413 one byte over, storing nothing', async () => {
    const fresh = await signUp(api);
    const atLimit = Buffer.concat([FILES.pdf, Buffer.alloc(UPLOAD_MAX_BYTES - FILES.pdf.length, 0x20)]);
    const ok = await post(atLimit, 'big.pdf', 'application/pdf', fresh.auth);
    expect(ok.status).to.equal(201);
    expect((await ok.json()).size_bytes).to.equal(5 * 1024 * 1024);
    const over = await post(Buffer.concat([atLimit, Buffer.from(' ')]), 'bigger.pdf', 'application/pdf', fresh.auth);
    expect(over.status).to.equal(413);
    const body = await over.json();
    expect(body).to.have.keys('detail');
    expect(body.detail).to.include('5 MB');
    expect(await KycDocument.countDocuments({ workspace_id: fresh.workspaceId })).to.equal(1);
  });

  it('answers 422 when the form has no file', async () => {
    const form = new FormData();
    form.append('file', 'just text');
    const res = await api.request('/api/v1/kyc/documents', { method: 'POST', body: form, headers: owner.auth });
    expect(res.status).to.equal(422);
    expect((await res.json()).detail[0]).to.include({ type: 'missing' });
  });

  it("answers 404 for another workspace's document, for a download and a delete alike", async () => {
    const document = await upload(api, owner.auth);
    const stranger = await signUp(api);
    expect((await download(document.id, stranger.auth)).status).to.equal(404);
    const deleted = await api.request(`/api/v1/kyc/documents/${document.id}`, { method: 'DELETE', headers: stranger.auth });
    expect(deleted.status).to.equal(404);
    expect((await download(document.id)).status).to.equal(200);
  });

  it('answers 404 for an unknown id and 422 for an id that is not one', async () => {
    expect((await download('0'.repeat(32))).status).to.equal(404);
    const bad = await download('not-an-id');
    expect(bad.status).to.equal(422);
    expect((await bad.json()).detail[0].loc).to.deep.equal(['path', 'doc_id']);
  });

  it('deletes a document: 204, then gone from the list and the download', async () => {
    const document = await upload(api, owner.auth);
    const res = await api.request(`/api/v1/kyc/documents/${document.id}`, { method: 'DELETE', headers: owner.auth });
    expect(res.status).to.equal(204);
    expect((await download(document.id)).status).to.equal(404);
    const { documents } = await (await api.request('/api/v1/kyc', { headers: owner.auth })).json();
    expect(documents.map((d: { id: string }) => d.id)).not.to.include(document.id);
    expect(await KycDocument.exists({ _id: document.id })).to.equal(null);
    expect((await api.request(`/api/v1/kyc/documents/${document.id}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(404);
  });

  it('keeps at most 10 documents: the 11th is a 409 and is not stored', async () => {
    const fresh = await signUp(api);
    for (let i = 0; i < 10; i++) await upload(api, fresh.auth, FILES.jpg, `page-${i}.jpg`, 'image/jpeg');
    const res = await post(FILES.jpg, 'page-10.jpg', 'image/jpeg', fresh.auth);
    expect(res.status).to.equal(409);
    expect((await res.json()).detail).to.include('at most 10 documents');
    expect(await KycDocument.countDocuments({ workspace_id: fresh.workspaceId })).to.equal(10);
  });

  it('answers 409 to uploads and deletes while the details are submitted or approved', async () => {
    const fresh = await signUp(api);
    const document = await upload(api, fresh.auth);
    for (const status of ['submitted', 'approved'] as const) {
      await KycRecord.updateOne({ _id: fresh.workspaceId }, { $set: { status } });
      expect((await post(FILES.pdf, 'late.pdf', 'application/pdf', fresh.auth)).status).to.equal(409);
      expect((await api.request(`/api/v1/kyc/documents/${document.id}`, { method: 'DELETE', headers: fresh.auth })).status).to.equal(409);
      expect((await download(document.id, fresh.auth)).status, 'downloads still work').to.equal(200);
    }
    expect(await KycDocument.countDocuments({ workspace_id: fresh.workspaceId })).to.equal(1);
  });

  it('refuses other roles with 403 naming kyc.manage, before reading the upload', async () => {
    const document = await upload(api, owner.auth);
    for (const role of ['admin', 'viewer'] as const) {
      const headers = await memberHeaders(api, owner.workspaceId, role);
      for (const res of [await post(FILES.pdf, 'x.pdf', 'application/pdf', headers), await download(document.id, headers)]) {
        expect(res.status, role).to.equal(403);
        expect((await res.json()).detail).to.include('kyc.manage');
      }
    }
  });
});
