import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * A security-relevant change: who (actor), did what (action), to what (target), when, from
 * where. Events about a person (sign-in, password change) are written once per workspace the
 * person belongs to, so each workspace's audit log is one equality query.
 */
const auditEventSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, default: null },
    at: { type: Date, required: true },
    action: { type: String, required: true },
    actor: {
      type: { type: String, required: true },
      id: { type: String, default: null },
      name: { type: String, default: null },
    },
    target: {
      type: { type: String, required: true },
      id: { type: String, default: null },
      name: { type: String, default: null },
    },
    ip: { type: String, default: null },
    details: { type: Schema.Types.Mixed, default: {} },
  },
  { collection: 'audit_events', versionKey: false, minimize: false },
);
auditEventSchema.index({ workspace_id: 1, at: -1 });
auditEventSchema.index({ 'actor.id': 1, at: -1 });

export type AuditEventDocument = InferSchemaType<typeof auditEventSchema>;
export const AuditEvent = model('AuditEvent', auditEventSchema);
