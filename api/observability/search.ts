import { Agent } from '../../db/models/agent';
import { Batch } from '../../db/models/batch';
import { Call } from '../../db/models/call';
import { PhoneNumber } from '../../db/models/phone-number';
import type { Permission } from '../../domain/accounts/permissions';

export const SEARCH_KINDS = ['agents', 'calls', 'phone_numbers', 'batches'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** The permission that lets a caller read each kind (the contract's "Permissions by role"). */
export const SEARCH_KIND_PERMISSION: Readonly<Record<SearchKind, Permission>> = {
  agents: 'agents.view',
  calls: 'calls.view',
  phone_numbers: 'agents.view', // agents.view "reads agents, versions, numbers"
  batches: 'calls.view', // a batch is a list of calls (its contacts are read with calls.view)
};

export const SEARCH_MIN_LENGTH = 2;
export const SEARCH_MAX_LENGTH = 80;
export const SEARCH_PER_KIND_DEFAULT = 5;
export const SEARCH_PER_KIND_MAX = 20;

/** The kinds asked for (all by default) that these permissions may read, in a fixed order. */
export function searchableKinds(asked: readonly SearchKind[] | undefined, permissions: ReadonlySet<Permission>): SearchKind[] {
  const wanted = new Set(asked?.length ? asked : SEARCH_KINDS);
  return SEARCH_KINDS.filter((kind) => wanted.has(kind) && permissions.has(SEARCH_KIND_PERMISSION[kind]));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What a query matches: a case-insensitive substring of names, and of numbers once spaces,
 * dashes and brackets are dropped (`98765 43210` finds `+919876543210`). A whole id matches
 * its record exactly.
 */
export interface SearchTerms {
  text: RegExp;
  digits: RegExp | null;
  id: string | null;
}

export function searchTerms(q: string): SearchTerms {
  const trimmed = q.trim();
  const digits = trimmed.replace(/[\s()-]/g, '');
  return {
    text: new RegExp(escapeRegExp(trimmed), 'i'),
    digits: /^\+?\d{3,}$/.test(digits) ? new RegExp(escapeRegExp(digits)) : null,
    id: /^[0-9a-f]{32}$/i.test(trimmed) ? trimmed.toLowerCase() : null,
  };
}

const NEVER = { _id: { $exists: false } };

function numberOrId(terms: SearchTerms, numberFields: string[]): Record<string, unknown>[] {
  const clauses: Record<string, unknown>[] = [];
  if (terms.id) clauses.push({ _id: terms.id });
  if (terms.digits) for (const field of numberFields) clauses.push({ [field]: terms.digits });
  return clauses;
}

/** One kind's matches, newest first, at most `cap`; always inside the workspace. */
export async function searchKind(kind: SearchKind, workspaceId: string, terms: SearchTerms, cap: number) {
  if (kind === 'agents') {
    const agents = await Agent.find(
      { workspace_id: workspaceId, $or: [{ name: terms.text }, ...numberOrId(terms, ['phone_number'])] },
      { name: 1, status: 1, phone_number: 1, updated_at: 1 },
    )
      .sort({ updated_at: -1, _id: -1 })
      .limit(cap)
      .lean<{ _id: string; name: string; status: string; phone_number: string | null; updated_at: Date }[]>();
    return agents.map((a) => ({ id: a._id, name: a.name, status: a.status, phone_number: a.phone_number ?? null, updated_at: a.updated_at }));
  }
  if (kind === 'calls') {
    const clauses = [{ agent_name: terms.text }, ...numberOrId(terms, ['to_number', 'from_number'])];
    const calls = await Call.find(
      { workspace_id: workspaceId, $or: clauses.length ? clauses : [NEVER] },
      { agent_id: 1, agent_name: 1, direction: 1, to_number: 1, from_number: 1, status: 1, created_at: 1 },
    )
      .sort({ created_at: -1, _id: -1 })
      .limit(cap)
      .lean<
        { _id: string; agent_id: string; agent_name: string; direction: string; to_number: string; from_number: string; status: string; created_at: Date }[]
      >();
    return calls.map((c) => ({
      id: c._id,
      agent_id: c.agent_id,
      agent_name: c.agent_name,
      direction: c.direction,
      to_number: c.to_number,
      from_number: c.from_number,
      status: c.status,
      created_at: c.created_at,
    }));
  }
  if (kind === 'batches') {
    const batches = await Batch.find(
      { workspace_id: workspaceId, $or: [{ name: terms.text }, { agent_name: terms.text }, ...numberOrId(terms, [])] },
      { name: 1, agent_id: 1, status: 1, created_at: 1 },
    )
      .sort({ created_at: -1, _id: -1 })
      .limit(cap)
      .lean<{ _id: string; name: string; agent_id: string; status: string; created_at: Date }[]>();
    return batches.map((b) => ({ id: b._id, name: b.name, agent_id: b.agent_id, status: b.status, created_at: b.created_at }));
  }
  const clauses = numberOrId(terms, ['number']);
  if (!clauses.length) clauses.push({ region: terms.text });
  const numbers = await PhoneNumber.find({ workspace_id: workspaceId, $or: clauses }, { number: 1, agent_id: 1, region: 1, claimed_at: 1 })
    .sort({ claimed_at: -1, _id: -1 })
    .limit(cap)
    .lean<{ _id: string; number: string; agent_id: string | null; region: string; claimed_at: Date }[]>();
  return numbers.map((n) => ({ id: n._id, number: n.number, agent_id: n.agent_id ?? null, region: n.region, claimed_at: n.claimed_at }));
}
