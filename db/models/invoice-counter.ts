import { Schema, model } from 'mongoose';

/**
 * The last invoice number taken in one financial year (`_id` is its label, `2026-27`).
 * Incremented with one atomic `$inc`, so concurrent completions never share a number.
 */
const invoiceCounterSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
  },
  { collection: 'invoice_counters', versionKey: false },
);

export const InvoiceCounter = model('InvoiceCounter', invoiceCounterSchema);
