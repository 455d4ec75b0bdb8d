import { Schema, model, type InferSchemaType } from 'mongoose';

const partySchema = new Schema(
  {
    name: { type: String, required: true },
    gstin: { type: String, default: null },
    /** ISO 3166-2:IN code without `IN-`; null when the customer gave no address yet. */
    state: { type: String, default: null },
    address: { type: String, default: null },
  },
  { _id: false },
);

/**
 * A GST tax invoice for one completed payment. Its id derives from the payment's, so issuing
 * it twice writes one document; `number` is unique (sequential per financial year).
 */
const invoiceSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    payment_id: { type: String, required: true },
    number: { type: String, required: true },
    financial_year: { type: String, required: true },
    issued_at: { type: Date, required: true },
    seller: { type: partySchema, required: true },
    customer: { type: partySchema, required: true },
    place_of_supply: { type: String, required: true },
    description: { type: String, required: true },
    taxable_paise: { type: Number, required: true },
    cgst_paise: { type: Number, required: true },
    sgst_paise: { type: Number, required: true },
    igst_paise: { type: Number, required: true },
    total_paise: { type: Number, required: true },
    credits_paise: { type: Number, required: true },
  },
  { collection: 'invoices', versionKey: false },
);
invoiceSchema.index({ number: 1 }, { unique: true });
invoiceSchema.index({ workspace_id: 1, issued_at: -1 });

export type InvoiceDocument = InferSchemaType<typeof invoiceSchema>;
export const Invoice = model('Invoice', invoiceSchema);
