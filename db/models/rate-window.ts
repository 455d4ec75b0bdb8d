import { Schema, model, type InferSchemaType } from 'mongoose';

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 120;

/**
 * The per-minute limit, a field of each rate-limited credential (API key, connected-app
 * token). Set by the platform; the credential's owner cannot change it.
 */
export const rateLimitField = {
  rate_limit_per_minute: { type: Number, default: DEFAULT_RATE_LIMIT_PER_MINUTE },
};

/**
 * A rate-limited credential's own request counts (decision 0151): `counts` maps each calendar
 * minute that has requests (`m<unix seconds of its start>`) to its count, and minutes before
 * the current one are dropped when a request finds them; `last_used_at` is the last request.
 * Every keyed request reads the credential and counts itself in one `findOneAndUpdate` by
 * `_id`, atomic on MongoDB and on the patched FerretDB (its update and findAndModify run one at
 * a time per collection, so a count never writes back over a revocation: docs/infrastructure.md).
 */
export const requestCountFields = {
  counts: { type: Schema.Types.Mixed },
  last_used_at: { type: Date, default: null },
};

/**
 * Superseded by `requestCountFields` (decision 0151); read only for the `last_used_at` of
 * credentials not used since. The request counts of one credential, one document per credential (`_id` is
 * `<kind>:<credential id>`, for example `api_key:<id>`). `counts` maps each calendar
 * minute that has requests (`m<unix seconds of its start>`) to its count; minutes before the
 * current one are dropped when a request finds them. `last_used_at` is the last request.
 *
 * Why not on the credential's own document: the hot path then never writes the credential.
 * FerretDB v1 applies every update as read, modify, write back the whole document, so a
 * counter on the key would let an in-flight request write `revoked_at: null` back over a
 * revocation that landed in between. And why keyed by `_id` alone: FerretDB v1 (SQLite)
 * pushes only an exact `{_id}` filter down to SQL; every other filter scans the collection.
 */
const rateWindowSchema = new Schema(
  {
    _id: { type: String, required: true },
    counts: { type: Schema.Types.Mixed, default: {} },
    last_used_at: { type: Date, default: null },
  },
  { collection: 'rate_windows', versionKey: false, minimize: false },
);

export type RateWindowDocument = InferSchemaType<typeof rateWindowSchema>;
export const RateWindow = model('RateWindow', rateWindowSchema);

export type RateLimitedKind = 'api_key' | 'oauth';

export function rateWindowId(kind: RateLimitedKind, credentialId: string): string {
  return `${kind}:${credentialId}`;
}
