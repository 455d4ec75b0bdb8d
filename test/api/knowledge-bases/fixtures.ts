import { KnowledgeChunkGroup, KnowledgeDocument, KnowledgeSlot } from '../../../db/models/knowledge-base';
import type { RunningApi } from '../../support/api';
import { withJson } from '../../support/accounts';

/**
 * A real, minimal PDF 1.4 written by hand: one page per entry, each line a text-showing
 * operator in Helvetica, with a correct cross-reference table (so no reader has to repair it).
 */
export function minimalPdf(pages: string[][]): Buffer {
  const escape = (line: string) => line.replace(/[\\()]/g, (c) => `\\${c}`);
  const bodies: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>'];
  const pageIds: number[] = [];
  for (const lines of pages) {
    const stream = ['BT', '/F1 12 Tf', '14 TL', '72 720 Td', ...lines.map((l) => `(${escape(l)}) Tj T*`), 'ET'].join('\n');
    const pageId = bodies.length + 1;
    pageIds.push(pageId);
    bodies.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId + 1} 0 R >>`);
    bodies.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
  }
  bodies[1] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageIds.length} >>`;
  let pdf = '%PDF-1.4\n';
  const offsets = bodies.map((body, i) => {
    const offset = Buffer.byteLength(pdf, 'latin1');
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return offset;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${bodies.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${bodies.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

export function uploadRequest(bytes: Buffer, filename: string, declaredType: string, headers: Record<string, string>): RequestInit {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: declaredType }), filename);
  return { method: 'POST', body: form, headers };
}

/** Creates a base through the API and answers its JSON (fails the test on any other status). */
export async function createBase(api: RunningApi, headers: Record<string, string>, name = 'Help centre') {
  const res = await api.request('/api/v1/knowledge-bases', withJson('POST', { name }, headers));
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Uploads text and answers the document's JSON (fails the test on any other status). */
export async function uploadText(
  api: RunningApi,
  headers: Record<string, string>,
  kbId: string,
  filename: string,
  text: string | Buffer,
  declaredType = 'text/plain',
) {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const res = await api.request(`/api/v1/knowledge-bases/${kbId}/documents`, uploadRequest(bytes, filename, declaredType, headers));
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  return res.json();
}

export async function search(api: RunningApi, headers: Record<string, string>, kbId: string, query: string, limit?: number) {
  const res = await api.request(`/api/v1/knowledge-bases/${kbId}/search`, withJson('POST', { query, ...(limit ? { limit } : {}) }, headers));
  if (res.status !== 200) throw new Error(`search answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** A small help centre: three documents on different subjects, one of them Markdown with sections. */
export const HELP_CENTRE = {
  'returns.md': [
    '# Returns',
    '',
    'You can send back any unused item within 30 days of delivery.',
    '',
    '## Refunds',
    '',
    'Once the returned item reaches our warehouse, the full amount goes back to your original payment method within 5 working days.',
    '',
    '## Exchanges',
    '',
    'Sizes and colours can be swapped once per order, free of charge.',
  ].join('\n'),
  'shipping.txt': [
    'Orders leave our Pune warehouse every weekday at 4 pm.',
    '',
    'Delivery takes 2 to 4 days to metro cities and up to 7 days elsewhere in India. Shipping is free above 999 rupees.',
  ].join('\n'),
  'support.txt': 'Our support desk answers calls from Monday to Saturday, 9 am to 6 pm IST. On Sundays write to help@example.com.',
};

/** A document's stored chunks in order, read through its chunk groups (a test may scan). */
export async function storedChunks(documentId: string) {
  const groups = await KnowledgeChunkGroup.find({ document_id: documentId }).lean();
  return groups.sort((a, b) => Number(a._id.split(':')[1]) - Number(b._id.split(':')[1])).flatMap((g) => g.chunks);
}

/** How many records of each kind the base has. */
export async function storedCounts(knowledgeBaseId: string) {
  const [slots, documents, groups] = await Promise.all([
    KnowledgeSlot.countDocuments({ knowledge_base_id: knowledgeBaseId }),
    KnowledgeDocument.countDocuments({ knowledge_base_id: knowledgeBaseId }),
    KnowledgeChunkGroup.countDocuments({ knowledge_base_id: knowledgeBaseId }),
  ]);
  return { slots, documents, groups };
}
