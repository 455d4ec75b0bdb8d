import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * `created`: the gateway's order exists and the customer may pay it. `completing`: a
 * completion holds the lease (`lease_until`) while it credits the ledger and issues the
 * invoice; a completion after the lease ran out takes over. `paid`: credited and invoiced.
 */
export const PAYMENT_STATUSES = ['created', 'completing', 'paid'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

const taxSchema = new Schema(
  {
    /** `intra`: CGST + SGST (the customer is in the platform's state); `inter`: IGST. */
    split: { type: String, enum: ['intra', 'inter'], required: true },
    /** ISO 3166-2:IN code without `IN-`. */
    place_of_supply: { type: String, required: true },
    cgst_paise: { type: Number, required: true },
    sgst_paise: { type: Number, required: true },
    igst_paise: { type: Number, required: true },
  },
  { _id: false },
);

/**
 * A top-up: what the customer pays (`value_paise` plus GST = `total_paise`, the gateway
 * order's amount) and what it credits (`credits_paise` = value + bonus). The tax is fixed
 * when the order is created, so the invoice states exactly what was charged.
 */
const paymentSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    status: { type: String, enum: PAYMENT_STATUSES, required: true },
    pack_id: { type: String, default: null },
    value_paise: { type: Number, required: true },
    bonus_paise: { type: Number, required: true },
    credits_paise: { type: Number, required: true },
    tax: { type: taxSchema, required: true },
    total_paise: { type: Number, required: true },
    currency: { type: String, required: true },
    gateway: { type: String, required: true },
    order_id: { type: String, required: true },
    gateway_payment_id: { type: String, default: null },
    created_by: { user_id: { type: String, default: null }, name: { type: String, required: true } },
    created_at: { type: Date, required: true },
    lease_until: { type: Date, default: null },
    completed_at: { type: Date, default: null },
    /**
     * What completed it (docs/decisions/0185): the customer's page (`checkout`), the gateway's
     * webhook (`webhook`, with the event's id) or the order's check workflow (`gateway_check`).
     */
    completed_via: { type: String, enum: ['checkout', 'webhook', 'gateway_check', null], default: null },
    completed_by_event: { type: String, default: null },
    /** The invoice number's place, taken once per payment (see domain/billing/invoices.ts). */
    invoice_seq: { type: Number, default: null },
    invoice_fy: { type: String, default: null },
    invoice_issued_at: { type: Date, default: null },
    invoice_id: { type: String, default: null },
  },
  { collection: 'payments', versionKey: false },
);
paymentSchema.index({ workspace_id: 1, created_at: -1 });
// Webhooks name the gateway's order, not our payment.
paymentSchema.index({ order_id: 1 }, { unique: true });

export type PaymentDocument = InferSchemaType<typeof paymentSchema>;
export const Payment = model('Payment', paymentSchema);
