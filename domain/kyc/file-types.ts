/** The document types KYC accepts, each recognised by the magic bytes its format starts with. */
const SIGNATURES = [
  { contentType: 'application/pdf', extension: 'pdf', magic: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // "%PDF-"
  { contentType: 'image/png', extension: 'png', magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { contentType: 'image/jpeg', extension: 'jpg', magic: [0xff, 0xd8, 0xff] }, // SOI marker, then any segment
] as const;

export type DocumentType = (typeof SIGNATURES)[number];

/**
 * What the bytes are, whatever the upload declared: a declared type or file name is the
 * client's claim, and a document staff will open must really be a PDF or an image. Null for
 * anything else.
 */
export function detectDocumentType(bytes: Uint8Array): DocumentType | null {
  return SIGNATURES.find((s) => s.magic.length <= bytes.length && s.magic.every((b, i) => bytes[i] === b)) ?? null;
}
