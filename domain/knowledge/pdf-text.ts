import { extractText, getDocumentProxy } from 'unpdf';

/** The PDF could not be read (damaged, encrypted, not really a PDF). */
export class UnreadablePdfError extends Error {
  override name = 'UnreadablePdfError';
}

/**
 * The text of every page, pages separated by a blank line (a paragraph boundary for the
 * chunker). unpdf carries a build of Mozilla's pdf.js made for servers: no worker thread, no
 * canvas, no install script, and it loads from CommonJS under Node 20. Scanned pages
 * (images without a text layer) yield no text; there is no OCR.
 */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  let document: Awaited<ReturnType<typeof getDocumentProxy>> | undefined;
  try {
    // A copy: pdf.js takes ownership of (detaches) the buffer it is given. verbosity 0: errors
    // only, instead of warnings about damaged files on stdout.
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
    const { text } = await extractText(document, { mergePages: false });
    return text
      .map((page) => page.trim())
      .filter(Boolean)
      .join('\n\n');
  } catch (err) {
    throw new UnreadablePdfError(`the PDF could not be read (${(err as Error).message})`);
  } finally {
    await document?.destroy();
  }
}
