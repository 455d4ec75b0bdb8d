import type { LedgerItemDocument } from '../../db/models/ledger-item';
import type { StoredPayment } from './payments';
import type { StoredInvoice } from './invoices';
import type { CreditPack } from './packs';
import { GST_RATE_PERCENT, percentOf } from './gst';
import type { Plan } from './plans';

/** How billing records look on the wire (dates stay Dates: the zone middleware renders them). */

export function ledgerItemView(item: LedgerItemDocument & { _id: string }) {
  return {
    id: item._id,
    at: item.at,
    kind: item.kind,
    amount_paise: item.amount_paise,
    balance_after_paise: item.balance_after_paise,
    note: item.note ?? '',
    call_id: item.call_id ?? null,
    payment_id: item.payment_id ?? null,
    by_name: item.by_name ?? null,
  };
}

export function paymentView(payment: StoredPayment) {
  return {
    id: payment._id,
    status: payment.status,
    pack_id: payment.pack_id ?? null,
    value_paise: payment.value_paise,
    bonus_paise: payment.bonus_paise,
    credits_paise: payment.credits_paise,
    tax_split: payment.tax.split,
    place_of_supply: payment.tax.place_of_supply,
    cgst_paise: payment.tax.cgst_paise,
    sgst_paise: payment.tax.sgst_paise,
    igst_paise: payment.tax.igst_paise,
    total_paise: payment.total_paise,
    currency: payment.currency,
    gateway: payment.gateway,
    order_id: payment.order_id,
    gateway_payment_id: payment.gateway_payment_id ?? null,
    invoice_id: payment.invoice_id ?? null,
    created_by: payment.created_by?.name ?? 'unknown',
    created_at: payment.created_at,
    completed_at: payment.completed_at ?? null,
  };
}

export function invoiceView(invoice: StoredInvoice) {
  const party = (p: StoredInvoice['seller']) => ({ name: p.name, gstin: p.gstin ?? null, state: p.state ?? null, address: p.address ?? null });
  return {
    id: invoice._id,
    number: invoice.number,
    financial_year: invoice.financial_year,
    issued_at: invoice.issued_at,
    payment_id: invoice.payment_id,
    seller: party(invoice.seller),
    customer: party(invoice.customer),
    place_of_supply: invoice.place_of_supply,
    description: invoice.description,
    taxable_paise: invoice.taxable_paise,
    cgst_paise: invoice.cgst_paise,
    sgst_paise: invoice.sgst_paise,
    igst_paise: invoice.igst_paise,
    total_paise: invoice.total_paise,
    credits_paise: invoice.credits_paise,
  };
}

export function packView(pack: CreditPack) {
  const gst = percentOf(pack.valuePaise, GST_RATE_PERCENT);
  return {
    id: pack.id,
    name: pack.name,
    value_paise: pack.valuePaise,
    bonus_paise: pack.bonusPaise,
    credits_paise: pack.valuePaise + pack.bonusPaise,
    gst_paise: gst,
    total_paise: pack.valuePaise + gst,
  };
}

/** A plan's public fields (`GET /billing/plan`, the plans of `GET /masters`). */
export function planFields(plan: Plan) {
  return {
    id: plan.id,
    name: plan.name,
    concurrent_calls: plan.concurrentCalls,
    price_per_minute_paise: plan.pricePerMinutePaise,
    max_agents: plan.maxAgents,
    max_members: plan.maxMembers,
  };
}

export function planView(plan: Plan, concurrencyLimit: number) {
  return { ...planFields(plan), concurrency_limit: concurrencyLimit };
}
