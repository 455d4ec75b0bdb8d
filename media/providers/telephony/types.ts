/**
 * The telephony provider as the service uses it (plivo-style REST). The numbers the
 * provider account rents are the pool that workspaces claim numbers from; the calls issue
 * adds call creation, status callbacks and audio streams to this interface.
 */
export interface Telephony {
  /** One page of the account's voice-capable numbers, in the provider's order. */
  listNumbers(query: NumberQuery): Promise<NumberPage>;
  /** One number of the account, or null when the account does not rent it. */
  getNumber(number: string): Promise<ProviderNumber | null>;
}

export interface NumberQuery {
  /** Digits the number starts with, country code first (`9180`), without `+`. */
  startsWith?: string;
  limit: number;
  offset: number;
}

export interface ProviderNumber {
  /** E.164. */
  number: string;
  /** The provider's description of where the number is, e.g. `Bangalore, INDIA`. */
  region: string;
  /** `local`, `mobile`, `tollfree`, ... as the provider names it. */
  numberType: string;
  voiceEnabled: boolean;
}

export interface NumberPage {
  numbers: ProviderNumber[];
  /** Offset of the next page, or null on the last page. */
  nextOffset: number | null;
}

/** Plivo pages its lists by at most 20 objects. */
export const MAX_PAGE_SIZE = 20;
