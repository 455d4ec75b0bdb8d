import type { ValidationIssue } from '../shared/validation-issues';

/** The fields these rules read; formats were already checked by the OpenAPI schema. */
interface Details {
  business_type: string;
  pan: string;
  gstin?: string;
}

/**
 * The PAN's fourth character says who holds it. For these business types there is one right
 * holder type; `society` (AOP or trust) and `other` are left unchecked.
 */
const PAN_HOLDER_BY_BUSINESS_TYPE: Record<string, { letter: string; holder: string }> = {
  proprietorship: { letter: 'P', holder: 'an individual (P)' },
  partnership: { letter: 'F', holder: 'a firm (F)' },
  llp: { letter: 'F', holder: 'a firm (F)' },
  private_limited: { letter: 'C', holder: 'a company (C)' },
  public_limited: { letter: 'C', holder: 'a company (C)' },
  trust: { letter: 'T', holder: 'a trust (T)' },
};

const GSTIN_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** The GSTIN's 15th character: a base-36 Luhn-style check over the first 14 (factors 1, 2, 1, ...). */
export function gstinCheckCharacter(first14: string): string {
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    const product = GSTIN_ALPHABET.indexOf(first14[i]) * (i % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return GSTIN_ALPHABET[(36 - (sum % 36)) % 36];
}

/** Rules between fields that a JSON schema cannot state; 422 issues in the contract's shape. */
export function businessRuleIssues(details: Details): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const expected = PAN_HOLDER_BY_BUSINESS_TYPE[details.business_type];
  if (expected && details.pan[3] !== expected.letter) {
    issues.push({
      type: 'value_error',
      loc: ['body', 'pan'],
      msg: `the PAN of a ${details.business_type.replace('_', ' ')} business is held by ${expected.holder}: its fourth character must be ${expected.letter}`,
      input: details.pan,
    });
  }
  const { gstin } = details;
  if (gstin !== undefined) {
    if (gstin.slice(2, 12) !== details.pan) {
      issues.push({ type: 'value_error', loc: ['body', 'gstin'], msg: 'characters 3 to 12 of the GSTIN must be the PAN', input: gstin });
    } else if (gstinCheckCharacter(gstin.slice(0, 14)) !== gstin[14]) {
      issues.push({
        type: 'value_error',
        loc: ['body', 'gstin'],
        msg: 'the GSTIN check character (the last one) does not match; check for a typing mistake',
        input: gstin,
      });
    }
  }
  return issues;
}
