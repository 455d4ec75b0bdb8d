import { randomBytes } from 'node:crypto';

/** A new resource id: 32 lowercase hex characters, as the contract requires. */
export function newId(): string {
  return randomBytes(16).toString('hex');
}
