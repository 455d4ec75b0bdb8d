/**
 * GST on top-ups: 18%, as CGST 9% + SGST 9% when the customer is in the platform's state
 * (intra-state supply), else IGST 18%. Each tax line is rounded half up to the paisa on its
 * own, so CGST and SGST are always equal and the invoice's lines add up to its total.
 */
export const GST_RATE_PERCENT = 18;

export interface TaxSplit {
  split: 'intra' | 'inter';
  place_of_supply: string;
  cgst_paise: number;
  sgst_paise: number;
  igst_paise: number;
}

/** `amount * percent / 100`, rounded half up to a whole paisa, in integers only. */
export function percentOf(amountPaise: number, percent: number): number {
  return Math.floor((amountPaise * percent + 50) / 100);
}

/**
 * The tax on `taxablePaise`. `customerState` is the state of the customer's KYC address; a
 * customer without one is taxed as in the platform's state (the place of supply of a service
 * to an unregistered person without an address on record is the supplier's location).
 */
export function gstFor(taxablePaise: number, customerState: string | null, platformState: string): TaxSplit {
  const placeOfSupply = customerState ?? platformState;
  if (placeOfSupply === platformState) {
    const half = percentOf(taxablePaise, GST_RATE_PERCENT / 2);
    return { split: 'intra', place_of_supply: placeOfSupply, cgst_paise: half, sgst_paise: half, igst_paise: 0 };
  }
  return { split: 'inter', place_of_supply: placeOfSupply, cgst_paise: 0, sgst_paise: 0, igst_paise: percentOf(taxablePaise, GST_RATE_PERCENT) };
}

export function taxTotal(tax: Pick<TaxSplit, 'cgst_paise' | 'sgst_paise' | 'igst_paise'>): number {
  return tax.cgst_paise + tax.sgst_paise + tax.igst_paise;
}

/** Indian financial years run April to March, by the date in India (IST, UTC+05:30, no DST). */
const IST_OFFSET_MS = 330 * 60_000;

/** The financial year of a moment, labelled `2026-27`. */
export function financialYearOf(at: Date): string {
  const inIndia = new Date(at.getTime() + IST_OFFSET_MS);
  const year = inIndia.getUTCMonth() >= 3 ? inIndia.getUTCFullYear() : inIndia.getUTCFullYear() - 1;
  return `${year}-${String((year + 1) % 100).padStart(2, '0')}`;
}

/**
 * The invoice number: `VA/26-27/000042` (15 characters; GST allows at most 16, unique per
 * financial year, letters, digits, `/` and `-`). Beyond 999999 a year the number grows a digit.
 */
export function invoiceNumber(financialYear: string, seq: number): string {
  const [start, end] = financialYear.split('-');
  return `VA/${start!.slice(2)}-${end}/${String(seq).padStart(6, '0')}`;
}

/** Rupees as an invoice prints them: `₹1,18,000.00` style Indian grouping, without the sign. */
export function rupees(paise: number): string {
  const sign = paise < 0 ? '-' : '';
  const abs = Math.abs(paise);
  const whole = String(Math.floor(abs / 100));
  const fraction = String(abs % 100).padStart(2, '0');
  const lastThree = whole.slice(-3);
  const rest = whole.slice(0, -3).replace(/\B(?=(\d{2})+(?!\d))/g, ',');
  return `${sign}${rest ? `${rest},${lastThree}` : lastThree}.${fraction}`;
}
