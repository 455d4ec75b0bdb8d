import PDFDocument from 'pdfkit';
import type { StoredInvoice } from './invoices';
import { GST_RATE_PERCENT, rupees } from './gst';

const A4_HEIGHT = 841.89;

/**
 * The invoice as a one-page A4 PDF (pdfkit, standard Helvetica: nothing to embed). Amounts
 * are printed as `INR 1,180.00`; the standard fonts' WinAnsi encoding has no rupee sign.
 */
export async function renderInvoicePdf(invoice: StoredInvoice): Promise<Uint8Array> {
  const pdf = new PDFDocument({
    size: 'A4',
    margin: 0,
    info: {
      Title: `Tax invoice ${invoice.number}`,
      Author: invoice.seller.name,
      CreationDate: invoice.issued_at,
      ModDate: invoice.issued_at,
    },
  });
  const bytes = collect(pdf);
  const writer = new LineWriter(pdf);

  writer.line('TAX INVOICE', { font: 'bold', size: 18 });
  writer.gap();
  writer.line(`Invoice number: ${invoice.number}`);
  writer.line(`Date: ${indianDate(invoice.issued_at)}`);
  writer.line(`Financial year: ${invoice.financial_year}`);
  writer.line(`Payment: ${invoice.payment_id}`);
  writer.gap();
  writer.line('Seller', { font: 'bold' });
  writer.line(invoice.seller.name);
  writer.line(`GSTIN: ${invoice.seller.gstin ?? 'not registered'}   State: ${invoice.seller.state}`);
  writer.gap();
  writer.line('Bill to', { font: 'bold' });
  writer.line(ascii(invoice.customer.name));
  if (invoice.customer.address) writer.line(ascii(invoice.customer.address));
  writer.line(`GSTIN: ${invoice.customer.gstin ?? 'unregistered'}   State: ${invoice.customer.state ?? 'not given'}`);
  writer.line(`Place of supply: ${invoice.place_of_supply}`);
  writer.gap();
  writer.line(ascii(invoice.description));
  writer.line('SAC 998319', { size: 9 });
  writer.gap();
  writer.amount('Taxable value', invoice.taxable_paise);
  if (invoice.igst_paise) writer.amount(`IGST @ ${GST_RATE_PERCENT}%`, invoice.igst_paise);
  else {
    writer.amount(`CGST @ ${GST_RATE_PERCENT / 2}%`, invoice.cgst_paise);
    writer.amount(`SGST @ ${GST_RATE_PERCENT / 2}%`, invoice.sgst_paise);
  }
  writer.amount('Total', invoice.total_paise, 'bold');
  writer.gap();
  writer.line(`Credits added to the workspace: INR ${rupees(invoice.credits_paise)}`, { size: 9 });
  writer.line('This is a computer-generated invoice and needs no signature.', { size: 9 });
  pdf.end();
  return bytes;
}

/** pdfkit streams its output; callers get the whole file as a plain Uint8Array, not a Buffer. */
function collect(pdf: PDFKit.PDFDocument): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Uint8Array.from(Buffer.concat(chunks))));
    pdf.on('error', reject);
  });
}

/**
 * Lays lines out from the top on their baselines (`y` counted up from the page bottom, as in
 * PDF space); every call places its text explicitly, so pdfkit never wraps or adds a page.
 */
class LineWriter {
  private y = 790;
  constructor(private readonly pdf: PDFKit.PDFDocument) {}

  line(text: string, style: { font?: 'bold'; size?: number } = {}): void {
    const size = style.size ?? 11;
    this.draw(text, 50, size, style.font);
    this.y -= size + 6;
  }

  amount(label: string, paise: number, font?: 'bold'): void {
    const text = `INR ${rupees(paise)}`;
    this.draw(label, 50, 11, font);
    this.draw(text, 545 - this.style(11, font).widthOfString(text), 11, font);
    this.y -= 17;
  }

  gap(): void {
    this.y -= 8;
  }

  private draw(text: string, x: number, size: number, font?: 'bold'): void {
    this.style(size, font)
      .fillColor('black')
      .text(text, x, A4_HEIGHT - this.y, { baseline: 'alphabetic', lineBreak: false });
  }

  private style(size: number, font?: 'bold'): PDFKit.PDFDocument {
    return this.pdf.font(font ? 'Helvetica-Bold' : 'Helvetica').fontSize(size);
  }
}

/** `21 Nov 2026`, the date in India. */
function indianDate(at: Date): string {
  return new Intl.DateTimeFormat('en-IN', { timeZone: 'Asia/Kolkata', day: '2-digit', month: 'short', year: 'numeric' }).format(at);
}

/** Characters the standard fonts cannot encode become `?` instead of failing the whole PDF. */
function ascii(text: string): string {
  return text.replace(/[^\x20-\x7E\xA0-\xFF]/g, '?');
}
