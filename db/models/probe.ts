import { Schema, model, type InferSchemaType } from 'mongoose';

/** A round-trip probe document, written by the `recordProbe` activity. */
const probeSchema = new Schema(
  {
    _id: { type: String, required: true },
    note: { type: String, default: '' },
    workflow_id: { type: String, required: true },
    written_at: { type: Date, required: true },
  },
  { collection: 'probes', versionKey: false },
);
probeSchema.index({ written_at: 1 });

export type ProbeDocument = InferSchemaType<typeof probeSchema>;
export const Probe = model('Probe', probeSchema);
