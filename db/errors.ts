import { mongo } from 'mongoose';

/**
 * Whether a write failed on a unique index. MongoDB answers code 11000 everywhere; FerretDB
 * v1 does so for inserts but reports an update that breaks a unique index as InternalError
 * (code 1) carrying SQLite's "UNIQUE constraint failed".
 */
export function isDuplicateKeyError(err: unknown): boolean {
  if (!(err instanceof mongo.MongoServerError)) return false;
  return err.code === 11000 || (err.code === 1 && /UNIQUE constraint failed/.test(err.message));
}
