import type { Role } from '../../../domain/accounts/permissions';
import type { RunningApi } from '../../support/api';
import { memberWithRole, withJson } from '../../support/accounts';

/** Complete, valid business details: a private limited company in Karnataka. */
export function validDetails() {
  return {
    legal_name: 'Acme Voice Private Limited',
    business_type: 'private_limited',
    pan: 'AAGCB7383J',
    gstin: '29AAGCB7383J1Z4',
    address: { line1: '12 MG Road', line2: 'Floor 3', city: 'Bengaluru', state: 'KA', pin_code: '560001' },
    contact: { name: 'Asha Rao', email: 'asha@example.com', phone: '+919876543210' },
  };
}

/** The smallest files that start as their formats do; the API reads only the signature. */
export const FILES = {
  pdf: Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'),
  png: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0', 'binary')]),
  jpg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]),
  text: Buffer.from('this is plain text pretending to be a PDF\n'),
  gif: Buffer.from('GIF89a\x01\0\x01\0\0\0\0;', 'binary'),
};

export function uploadRequest(bytes: Buffer, filename: string, declaredType: string, headers: Record<string, string>): RequestInit {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: declaredType }), filename);
  return { method: 'POST', body: form, headers };
}

/** Uploads and answers the stored document's JSON (fails the test on any other status). */
export async function upload(
  api: RunningApi,
  headers: Record<string, string>,
  bytes: Buffer = FILES.pdf,
  filename = 'certificate.pdf',
  declaredType = 'application/pdf',
) {
  const res = await api.request('/api/v1/kyc/documents', uploadRequest(bytes, filename, declaredType, headers));
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Saves valid details and one document: ready to submit. */
export async function readyToSubmit(api: RunningApi, headers: Record<string, string>): Promise<void> {
  const res = await api.request('/api/v1/kyc', withJson('PUT', validDetails(), headers));
  if (res.status !== 200) throw new Error(`PUT /kyc answered ${res.status}: ${await res.text()}`);
  await upload(api, headers);
}

/** Headers of a new user who holds `role` in the workspace (added directly, not by invite). */
export async function memberHeaders(api: RunningApi, workspaceId: string, role: Role): Promise<Record<string, string>> {
  return (await memberWithRole(api, workspaceId, role)).headers;
}
