/**
 * The telephony provider as the service uses it (plivo-style REST). The numbers the
 * provider account rents are the pool that workspaces claim numbers from. Calls are placed
 * here and then reported by the provider's status callbacks to the URLs given at creation
 * (see ./callbacks.ts); audio streams come later.
 */
export interface Telephony {
  /** One page of the account's voice-capable numbers, in the provider's order. */
  listNumbers(query: NumberQuery): Promise<NumberPage>;
  /** One number of the account, or null when the account does not rent it. */
  getNumber(number: string): Promise<ProviderNumber | null>;
  /**
   * Places an outbound call; the provider dials it after answering. Not idempotent: a
   * timeout leaves it unknown whether the call was placed.
   */
  createCall(call: NewCall): Promise<PlacedCall>;
  /**
   * Ends a call: a ringing one is canceled, an answered one completed (the hang-up callback
   * says which). A call the provider no longer holds (already over) is left alone.
   */
  hangupCall(providerCallId: string): Promise<void>;
  /**
   * Transfers an answered call (its A leg) to the XML at `alegUrl`, fetched with POST: what the
   * call does from then on (Plivo's `POST .../Call/{uuid}/` with `legs=aleg`). The call's audio
   * stream ends. False when the provider no longer holds the call (404).
   */
  transferCall(providerCallId: string, alegUrl: string): Promise<boolean>;
}

export interface NewCall {
  /** E.164, a number of the account. */
  from: string;
  /** E.164. */
  to: string;
  /** Gets the `in-progress` callback when the callee answers. */
  answerUrl: string;
  /** Gets the `ringing` callback. */
  ringUrl: string;
  /** Gets the final callback: Plivo's `completed`, `no-answer`, `busy`, `failed`, `cancel` or `timeout` (see ./callbacks.ts). */
  hangupUrl: string;
  /** The provider hangs up this long after the answer. */
  timeLimitSeconds: number;
  /**
   * Answering-machine detection (docs/decisions/0158): the provider listens to the callee's first
   * `timeMs` while the call goes on as usual, then posts its verdict (`Machine=true|false`) to `url`.
   */
  machineDetection?: { url: string; timeMs: number };
  /** How long it may ring before it is `no-answer` (Plivo's `ring_timeout`; its default when absent). */
  ringTimeoutSeconds?: number;
}

export interface PlacedCall {
  /** The provider's id of the call, as its callbacks name it. */
  providerCallId: string;
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
