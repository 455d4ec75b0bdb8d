import type { Model } from 'mongoose';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model: only findById is used
type AnyModel = Model<any>;

/**
 * A document by its id, answered only when it also has the given field values (usually its
 * workspace); null otherwise.
 *
 * Why not `findOne({ _id, workspace_id })`: FerretDB 1.x, as released, uses its primary key
 * only for a filter that is exactly `{ _id }`. Any other key makes it decode every document of
 * the collection, so a lookup that is 1 ms on an empty collection becomes hundreds of
 * milliseconds on a busy one. The owner check is therefore done here, after a read by id.
 * Hot paths (every request, every webhook attempt, every call) must use this or `findById`.
 * (Our own build narrows any filter naming an `_id`, docs/infrastructure.md patch 3; a
 * deployment on an unpatched FerretDB still needs this.)
 */
export async function findByIdOwned<T>(model: AnyModel, id: string, owner: Record<string, unknown>, projection?: Record<string, 0 | 1>): Promise<T | null> {
  const fields = projection ? { ...projection, ...Object.fromEntries(Object.keys(owner).map((key) => [key, 1 as const])) } : undefined;
  const found = await model.findById(id, fields).lean<Record<string, unknown>>();
  if (!found) return null;
  return Object.entries(owner).every(([key, value]) => found[key] === value) ? (found as T) : null;
}
