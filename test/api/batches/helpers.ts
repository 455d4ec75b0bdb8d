import { expect } from 'chai';
import type { ApiResponse, RunningApi } from '../../support/api';

export type BatchFields = Record<string, string | undefined>;

/** POST /batches with the CSV as the file `fileName` and the other form fields. */
export function uploadBatch(
  api: RunningApi,
  headers: Record<string, string>,
  csv: string,
  fields: BatchFields,
  fileName = 'contacts.csv',
): Promise<ApiResponse> {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), fileName);
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, value);
  return api.request('/api/v1/batches', { method: 'POST', body: form, headers });
}

/** Creates a batch and answers `{batch, rejected_rows}`; fails the test unless 201. */
export async function createdBatch(
  api: RunningApi,
  headers: Record<string, string>,
  csv: string,
  fields: BatchFields,
): Promise<{ batch: Batch; rejected_rows: { row: number; number: string; reason: string }[] }> {
  const res = await uploadBatch(api, headers, csv, fields);
  expect(res.status, await res.clone().text()).to.equal(201);
  return res.json();
}

export type Batch = Record<string, unknown> & { id: string; status: string; counts: Record<string, number>; contacts_total: number };
export type Contact = {
  row: number;
  number: string;
  user_data: Record<string, string>;
  status: string;
  attempts: number;
  latest_call_id: string | null;
  next_attempt_at: string | null;
};

/** Requests of the batch endpoints, acting with the given headers. */
export function batchesClient(api: RunningApi, headers: Record<string, string>) {
  return {
    get: async (id: string): Promise<Batch> => {
      const res = await api.request(`/api/v1/batches/${id}`, { headers });
      expect(res.status, await res.clone().text()).to.equal(200);
      return res.json();
    },
    contactsPage: (id: string, query = ''): Promise<ApiResponse> => api.request(`/api/v1/batches/${id}/contacts${query ? `?${query}` : ''}`, { headers }),
    /** Every contact of the batch, in file order (pages of 200). */
    allContacts: async (id: string): Promise<Contact[]> => {
      const all: Contact[] = [];
      for (;;) {
        const res = await api.request(`/api/v1/batches/${id}/contacts?limit=200&skip=${all.length}`, { headers });
        expect(res.status, await res.clone().text()).to.equal(200);
        const page = await res.json();
        all.push(...page.items);
        if (all.length >= page.total || !page.items.length) return all;
      }
    },
    control: (id: string, action: 'pause' | 'resume' | 'cancel'): Promise<ApiResponse> =>
      api.request(`/api/v1/batches/${id}/${action}`, { method: 'POST', headers }),
  };
}
