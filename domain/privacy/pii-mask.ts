/**
 * Masks personal identifiers in text a call leaves behind (`call.data_storage`
 * `everything_except_pii`, docs/decisions/0213): emails, Indian PANs, card numbers (13 to 19
 * digits passing the Luhn check), Aadhaar numbers (12 digits, not starting 0 or 1) and phone
 * numbers (E.164, and Indian mobile and landline numbers written with or without +91 or 0).
 * Each becomes a label (`[email]`, `[pan]`, `[card]`, `[aadhaar]`, `[phone]`) so that a reader
 * still sees what kind of thing was said. Numbers spoken as words are not recognised.
 */

export const PII_LABELS = { email: '[email]', pan: '[pan]', card: '[card]', aadhaar: '[aadhaar]', phone: '[phone]' } as const;

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
// Five letters, four digits, a letter; the fourth letter says the holder's kind (P, C, H, F, ...), any is masked.
const PAN = /\b[A-Za-z]{5}[0-9]{4}[A-Za-z]\b/g;
// A run of digits that may carry a leading +, and spaces, hyphens, dots or brackets inside (as numbers are written and transcribed).
const DIGIT_RUN = /\+?\d(?:[\d().-]|\s(?=[\d(+]))*\d/g;

/** The Luhn check of a card number. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** What a written number is, from its digits (and whether it began with +); null: nothing personal we recognise. */
function kindOf(written: string): keyof typeof PII_LABELS | null {
  const international = written.trimStart().startsWith('+');
  const digits = written.replace(/\D/g, '');
  if (international) return digits.length >= 8 && digits.length <= 15 ? 'phone' : null;
  if (digits.length >= 13 && digits.length <= 19 && passesLuhn(digits)) return 'card';
  if (digits.length === 12 && /^91[6-9]/.test(digits)) return 'phone';
  if (digits.length === 12 && /^[2-9]/.test(digits)) return 'aadhaar';
  if (digits.length === 10 && /^[6-9]/.test(digits)) return 'phone';
  // A landline or mobile with its trunk 0 (011 2345 6789, 09876543210).
  if (digits.length === 11 && digits.startsWith('0')) return 'phone';
  return null;
}

/**
 * One run of digits, masked: whole when it is one identifier, or else piece by piece (words
 * split at spaces), longest first, so that "order 12345 9876543210" keeps the order number.
 */
function maskDigitRun(run: string): string {
  const whole = kindOf(run);
  if (whole) return PII_LABELS[whole];
  const pieces = run.split(/(\s+)/);
  const words = pieces.filter((_, i) => i % 2 === 0);
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    let matched = false;
    for (let j = words.length; j > i + 0; j--) {
      const candidate = words.slice(i, j).join(' ');
      const kind = kindOf(candidate);
      if (kind) {
        out.push(PII_LABELS[kind]);
        i = j;
        matched = true;
        break;
      }
    }
    if (!matched) out.push(words[i++]!);
  }
  return out.join(' ');
}

/** The text with every recognised identifier replaced by its label. */
export function maskPii(text: string): string {
  return text.replace(EMAIL, PII_LABELS.email).replace(PAN, PII_LABELS.pan).replace(DIGIT_RUN, maskDigitRun);
}

/** Every string (and every number written as one identifier) inside a JSON-like value, masked. */
export function maskPiiDeep<T>(value: T): T {
  return maskValue(value) as T;
}

function maskValue(value: unknown): unknown {
  if (typeof value === 'string') return maskPii(value);
  if (typeof value === 'number' && Number.isInteger(value)) {
    const kind = kindOf(String(value));
    return kind ? PII_LABELS[kind] : value;
  }
  if (Array.isArray(value)) return value.map(maskValue);
  if (value instanceof Date) return value;
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, maskValue(inner)]));
  return value;
}
