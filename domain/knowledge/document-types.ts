import type { KnowledgeContentType } from '../../db/models/knowledge-base';

const PDF_MAGIC = Buffer.from('%PDF-');
const MARKDOWN_EXTENSIONS = ['md', 'markdown'];
const TEXT_EXTENSIONS = ['txt', 'text'];
const MARKDOWN_TYPES = ['text/markdown', 'text/x-markdown'];

/**
 * What an uploaded knowledge document is, or null when it is none of the three types taken.
 * A PDF is recognised by its content alone. Text has no signature, so a text document must be
 * valid UTF-8 without NUL bytes (which rules out binary files) and say what it is: by its
 * extension, else by the declared type. The extension comes first because browsers declare
 * `.md` files inconsistently (often `application/octet-stream` or nothing).
 */
export function detectKnowledgeType(bytes: Buffer, filename: string, declaredType: string): KnowledgeContentType | null {
  if (bytes.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) return 'application/pdf';
  if (!isUtf8Text(bytes)) return null;
  const extension = /\.([^./\\]+)$/.exec(filename)?.[1]?.toLowerCase() ?? '';
  if (MARKDOWN_EXTENSIONS.includes(extension)) return 'text/markdown';
  if (TEXT_EXTENSIONS.includes(extension)) return 'text/plain';
  const mediaType = declaredType.split(';')[0].trim().toLowerCase();
  if (MARKDOWN_TYPES.includes(mediaType)) return 'text/markdown';
  if (mediaType === 'text/plain') return 'text/plain';
  return null;
}

function isUtf8Text(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const EXTENSION_OF: Record<KnowledgeContentType, string> = { 'application/pdf': 'pdf', 'text/plain': 'txt', 'text/markdown': 'md' };

/** The uploaded name without folders or control characters (results quote it), or `document.<ext>`. */
export function documentName(filename: string, type: KnowledgeContentType): string {
  const base = (filename.split(/[/\\]/).pop() ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 200);
  return base || `document.${EXTENSION_OF[type]}`;
}
