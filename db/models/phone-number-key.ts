import { Schema, model } from 'mongoose';

/**
 * The phone-number record (`phone_numbers`) that holds a number, keyed by the number (E.164),
 * so that an inbound call finds its number with a read by `_id`, the one lookup FerretDB
 * answers without decoding every record. A hint, not the truth: the record it names is read
 * and must still carry the number (records are never renumbered, and a released number's
 * record is deleted), otherwise the number is looked up the slow way and the hint rewritten.
 */
const phoneNumberKeySchema = new Schema(
  {
    /** E.164. */
    _id: { type: String, required: true },
    phone_number_id: { type: String, required: true },
  },
  { collection: 'phone_number_keys', versionKey: false },
);

export const PhoneNumberKey = model('PhoneNumberKey', phoneNumberKeySchema);
