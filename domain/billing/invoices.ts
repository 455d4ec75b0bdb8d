import type { BillingConfig } from '../../config/env';
import { createHash } from 'node:crypto';
import { isDuplicateKeyError } from '../../db/errors';
import { Invoice, type InvoiceDocument } from '../../db/models/invoice';
import { InvoiceCounter } from '../../db/models/invoice-counter';
import { KycRecord } from '../../db/models/kyc';
import { Payment, type PaymentDocument } from '../../db/models/payment';
import { Workspace } from '../../db/models/workspace';
import { financialYearOf, invoiceNumber, rupees } from './gst';
import { packOf } from './packs';

export interface Seller {
  name: string;
  gstin: string | null;
  /** ISO 3166-2:IN code without `IN-`. */
  state: string;
}

/** The platform as the seller on invoices (config BILLING_SELLER_*; Karnataka when not given). */
export function sellerOf(config: BillingConfig | undefined): Seller {
  return { name: config?.sellerName ?? 'Voice Agents Platform', gstin: config?.sellerGstin ?? null, state: config?.sellerState ?? 'KA' };
}

export type StoredInvoice = InvoiceDocument & { _id: string };

/** An invoice's id: derived from its payment's, so that issuing twice writes one document. */
export function invoiceIdFor(paymentId: string): string {
  return createHash('sha256').update(`invoice:${paymentId}`).digest('hex').slice(0, 32);
}

/** The next number of a financial year's sequence: one atomic `$inc` on its counter. */
export async function takeInvoiceSeq(financialYear: string): Promise<number> {
  for (;;) {
    try {
      const counter = await InvoiceCounter.findOneAndUpdate({ _id: financialYear }, { $inc: { seq: 1 } }, { returnDocument: 'after', upsert: true }).lean();
      return counter!.seq;
    } catch (err) {
      // Two first numbers of a year at once: both upserts insert, one loses on `_id` and increments.
      if (!isDuplicateKeyError(err)) throw err;
    }
  }
}

/**
 * Issues the payment's GST invoice once. The number's place is taken once per payment and
 * stored on the payment before the invoice is written (guarded by `invoice_seq: null`), so a
 * completion that retries after a crash reuses it: numbers have no duplicates, and no gaps
 * unless two completions of one payment race past each other's lease (the loser's number is
 * then unused; the lease makes that need a completion stalled for 30 seconds).
 */
export async function issueInvoice(payment: PaymentDocument & { _id: string }, seller: Seller, at: Date): Promise<StoredInvoice> {
  const id = invoiceIdFor(payment._id);
  const existing = await Invoice.findById(id).lean<StoredInvoice>();
  if (existing) return existing;
  let placed = payment;
  if (placed.invoice_seq == null) {
    const financialYear = financialYearOf(at);
    const seq = await takeInvoiceSeq(financialYear);
    placed =
      (await Payment.findOneAndUpdate(
        { _id: payment._id, invoice_seq: null },
        { $set: { invoice_seq: seq, invoice_fy: financialYear, invoice_issued_at: at } },
        { returnDocument: 'after' },
      ).lean<typeof payment>()) ?? (await Payment.findById(payment._id).lean<typeof payment>())!;
  }
  const [kyc, workspace] = await Promise.all([
    KycRecord.findById(payment.workspace_id, { details: 1 }).lean(),
    Workspace.findById(payment.workspace_id, { name: 1 }).lean(),
  ]);
  const details = kyc?.details;
  const address = details?.address;
  const invoice = {
    _id: id,
    workspace_id: payment.workspace_id,
    payment_id: payment._id,
    number: invoiceNumber(placed.invoice_fy!, placed.invoice_seq!),
    financial_year: placed.invoice_fy!,
    issued_at: placed.invoice_issued_at!,
    seller: { name: seller.name, gstin: seller.gstin, state: seller.state, address: null },
    customer: {
      name: details?.legal_name ?? workspace?.name ?? 'Customer',
      gstin: details?.gstin ?? null,
      state: address?.state ?? null,
      address: address ? [address.line1, address.line2, address.city, `${address.state} ${address.pin_code}`].filter(Boolean).join(', ') : null,
    },
    place_of_supply: payment.tax.place_of_supply,
    description: describe(payment),
    taxable_paise: payment.value_paise,
    cgst_paise: payment.tax.cgst_paise,
    sgst_paise: payment.tax.sgst_paise,
    igst_paise: payment.tax.igst_paise,
    total_paise: payment.total_paise,
    credits_paise: payment.credits_paise,
  };
  try {
    await Invoice.create(invoice);
    return invoice as StoredInvoice;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return (await Invoice.findById(id).lean<StoredInvoice>())!;
  }
}

/** The line on the invoice (SAC 998319: other IT services). Plain ASCII: the PDF's standard fonts have no rupee sign. */
function describe(payment: PaymentDocument): string {
  const pack = payment.pack_id ? packOf(payment.pack_id) : undefined;
  const what = pack ? `credit pack ${pack.id}` : 'custom top-up';
  const bonus = payment.bonus_paise ? ` (+ INR ${rupees(payment.bonus_paise)} bonus credits, free of charge)` : '';
  return `Prepaid voice agent credits, ${what}${bonus}`;
}

/** The workspace's last 200 invoices, newest first. */
export function recentInvoices(workspaceId: string): Promise<StoredInvoice[]> {
  return Invoice.find({ workspace_id: workspaceId }).sort({ issued_at: -1, number: -1 }).limit(200).lean<StoredInvoice[]>();
}
