import { expect } from 'chai';
import { extractText, getDocumentProxy } from 'unpdf';
import { newId } from '../../../db/ids';
import { KycRecord } from '../../../db/models/kyc';
import { takeInvoiceSeq } from '../../../domain/billing/invoices';
import { financialYearOf, invoiceNumber } from '../../../domain/billing/gst';
import type { PaymentSimulator } from '../../../simulators/payments/simulator';
import type { RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson } from '../../support/accounts';
import { payAtGateway, paymentStackPerSuite } from '../../support/payment-gateway';

type Headers = Record<string, string>;

/**
 * GST invoices of completed top-ups: the tax split by the KYC address's state against the
 * platform's (Karnataka by default), numbers sequential per financial year under concurrent
 * completions, and the PDF, parsed back with unpdf.
 */
describe('billing: GST invoices', () => {
  let api: RunningApi;
  let gateway: PaymentSimulator;
  const stack = paymentStackPerSuite();
  before(() => ({ api, gateway } = stack));

  /** An active workspace whose KYC details put it in `state` (or none). */
  async function customer(state: string | null, gstin: string | null = null): Promise<{ workspaceId: string; headers: Headers }> {
    const signedUp = await activeOwner(api);
    if (state) {
      await KycRecord.create({
        _id: signedUp.workspaceId,
        status: 'approved',
        details: {
          legal_name: 'Kaveri Textiles Private Limited',
          business_type: 'private_limited',
          pan: 'AABCK1234C',
          gstin,
          address: { line1: '12 MG Road', line2: null, city: state === 'KA' ? 'Bengaluru' : 'Mumbai', state, pin_code: state === 'KA' ? '560001' : '400001' },
          contact: { name: 'Asha Rao', email: 'asha@example.com', phone: '+919800000001' },
        },
      });
    }
    return { workspaceId: signedUp.workspaceId, headers: { ...signedUp.auth, 'X-Workspace-ID': signedUp.workspaceId } };
  }

  async function paidTopup(headers: Headers, body: unknown) {
    const started = await api.request('/api/v1/billing/topup', withJson('POST', body, headers));
    expect(started.status, await started.clone().text()).to.equal(201);
    const payment = await started.json();
    const res = await api.request(`/api/v1/billing/payments/${payment.id}/complete`, withJson('POST', await payAtGateway(gateway, payment.order_id), headers));
    expect(res.status, await res.clone().text()).to.equal(200);
    return res.json();
  }
  const invoices = async (headers: Headers) => (await api.request('/api/v1/billing/invoices', { headers })).json();
  async function pdfText(headers: Headers, invoiceId: string): Promise<string> {
    const res = await api.request(`/api/v1/billing/invoices/${invoiceId}/pdf`, { headers });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 5)).toString()).to.equal('%PDF-');
    expect(Number(res.headers.get('content-length'))).to.equal(bytes.length);
    const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
    return text;
  }

  it('splits 18% as CGST 9% + SGST 9% for a customer in Karnataka, and prints it', async () => {
    const { headers } = await customer('KA', '29AABCK1234C1Z5');
    const payment = await paidTopup(headers, { pack_id: 'pack_1000' });
    const [invoice] = await invoices(headers);
    expect(invoice).to.include({
      id: payment.invoice_id,
      payment_id: payment.id,
      place_of_supply: 'KA',
      taxable_paise: 100_000,
      cgst_paise: 9_000,
      sgst_paise: 9_000,
      igst_paise: 0,
      total_paise: 118_000,
      credits_paise: 105_000,
    });
    expect(invoice.financial_year).to.equal(financialYearOf(new Date()));
    expect(invoice.number).to.match(/^VA\/\d{2}-\d{2}\/\d{6}$/);
    expect(invoice.customer).to.deep.equal({
      name: 'Kaveri Textiles Private Limited',
      gstin: '29AABCK1234C1Z5',
      state: 'KA',
      address: '12 MG Road, Bengaluru, KA 560001',
    });
    expect(invoice.seller).to.include({ name: 'Voice Agents Platform', state: 'KA' });

    const text = await pdfText(headers, invoice.id);
    expect(text).to.include('TAX INVOICE').and.include(`Invoice number: ${invoice.number}`);
    expect(text).to.include('Kaveri Textiles Private Limited').and.include('29AABCK1234C1Z5').and.include('Place of supply: KA');
    expect(text).to.match(/Taxable value\s*INR 1,000\.00/);
    expect(text).to.match(/CGST @ 9%\s*INR 90\.00/);
    expect(text).to.match(/SGST @ 9%\s*INR 90\.00/);
    expect(text).to.match(/Total\s*INR 1,180\.00/);
    expect(text).not.to.include('IGST');
  });

  it('charges IGST 18% for a customer in another state, rounding each line half up to the paisa', async () => {
    const { headers } = await customer('MH');
    // ₹100.05: 18% is 1800.9 paise -> 1801 as IGST (as CGST + SGST it would be 900 + 900).
    const payment = await paidTopup(headers, { amount_paise: 10_005 });
    expect(payment).to.include({
      tax_split: 'inter',
      place_of_supply: 'MH',
      igst_paise: 1_801,
      cgst_paise: 0,
      sgst_paise: 0,
      total_paise: 11_806,
      credits_paise: 10_005,
    });
    const [invoice] = await invoices(headers);
    expect(invoice).to.include({ place_of_supply: 'MH', igst_paise: 1_801, total_paise: 11_806 });
    const text = await pdfText(headers, invoice.id);
    expect(text).to.match(/IGST @ 18%\s*INR 18\.01/);
    expect(text).to.match(/Total\s*INR 118\.06/);
    expect(text).not.to.include('CGST');

    const local = await customer('KA');
    expect(await paidTopup(local.headers, { amount_paise: 10_005 })).to.include({
      tax_split: 'intra',
      cgst_paise: 900,
      sgst_paise: 900,
      igst_paise: 0,
      total_paise: 11_805,
    });
    // No KYC address yet: taxed as supplied in the platform's state.
    expect(await paidTopup((await customer(null)).headers, { amount_paise: 10_050 })).to.include({
      tax_split: 'intra',
      place_of_supply: 'KA',
      cgst_paise: 905,
      sgst_paise: 905,
    });
  });

  it('numbers invoices one after another, without gaps or duplicates, when payments complete at once', async () => {
    const workspaces = await Promise.all([customer('KA'), customer('TN'), customer(null)]);
    const before = (await invoices(workspaces[0]!.headers)).length;
    expect(before).to.equal(0);
    const payments = await Promise.all(Array.from({ length: 9 }, (_, i) => paidTopup(workspaces[i % 3]!.headers, { pack_id: 'pack_500' })));
    const all = (await Promise.all(workspaces.map((w) => invoices(w.headers)))).flat();
    expect(all).to.have.length(9);
    expect(new Set(all.map((i: { payment_id: string }) => i.payment_id))).to.deep.equal(new Set(payments.map((p) => p.id)));
    const seqs = all.map((i: { number: string }) => Number(i.number.split('/')[2])).sort((a: number, b: number) => a - b);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).to.equal(seqs[0] + i);
    // Each workspace lists its own, newest first.
    const own = await invoices(workspaces[1]!.headers);
    expect(own).to.have.length(3);
    expect(own.map((i: { issued_at: string }) => i.issued_at)).to.deep.equal([...own.map((i: { issued_at: string }) => i.issued_at)].sort().reverse());
  });

  it('takes 50 numbers of one year at once as 1 to 50', async () => {
    const year = `test-${newId().slice(0, 8)}`;
    const seqs = await Promise.all(Array.from({ length: 50 }, () => takeInvoiceSeq(year)));
    expect([...seqs].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(invoiceNumber('2026-27', seqs.length)).to.equal('VA/26-27/000050');
  });

  it("serves an invoice's PDF only in its workspace, to those who may view billing", async () => {
    const { workspaceId, headers } = await customer('KA');
    await paidTopup(headers, { pack_id: 'pack_500' });
    const [invoice] = await invoices(headers);
    const path = `/api/v1/billing/invoices/${invoice.id}/pdf`;
    expect((await api.request(path, { headers: (await apiKeyFor(workspaceId)).headers })).status).to.equal(200);
    expect((await api.request(path, { headers: (await memberWithRole(api, workspaceId, 'developer')).headers })).status).to.equal(403);
    expect((await api.request(path, { headers: (await customer('KA')).headers })).status).to.equal(404);
    expect((await api.request(`/api/v1/billing/invoices/${newId()}/pdf`, { headers })).status).to.equal(404);
    expect((await api.request('/api/v1/billing/invoices/not-an-id/pdf', { headers })).status).to.equal(422);
  });
});
