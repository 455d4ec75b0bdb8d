import { ApplicationFailure } from '@temporalio/common';
import { DialRefusedError } from '../../providers/errors';
import type { Telephony } from '../../providers/telephony/types';
import { Call } from '../../db/models/call';

export interface TelephonyDeps {
  /** The telephony provider's adapter; absent in workers that never dial. */
  telephony?: Telephony;
  /**
   * The API's public address, where the provider posts status callbacks
   * (`<base>/telephony/calls/{call_id}/status`) and asks what an answered call does
   * (`<base>/telephony/calls/{call_id}/answer`), e.g. `https://api.example.com/api/v1`.
   */
  telephonyCallbackBaseUrl?: string;
}

/** Dialling and hanging up through the provider; the call's progress comes back as status callbacks. */
export function createCallTelephonyActivities(deps: TelephonyDeps) {
  const provider = () => {
    if (!deps.telephony || !deps.telephonyCallbackBaseUrl) throw ApplicationFailure.nonRetryable('telephony is not configured in this worker (TELEPHONY_BASE_URL, PUBLIC_API_URL)', 'TelephonyNotConfigured');
    return { telephony: deps.telephony, base: deps.telephonyCallbackBaseUrl.replace(/\/$/, '') };
  };
  return {
    /**
     * Asks the provider to dial. A refusal (the provider answered 4xx) fails at once. Creating a
     * call is not idempotent (a timed-out request may still have placed it), so the workflow
     * makes one attempt only and treats any failure as a refused dial.
     */
    async dialCall(input: { callId: string; from: string; to: string; timeLimitSeconds: number }): Promise<{ providerCallId: string }> {
      const { telephony, base } = provider();
      const statusUrl = `${base}/telephony/calls/${input.callId}/status`;
      const answerUrl = `${base}/telephony/calls/${input.callId}/answer`;
      try {
        return await telephony.createCall({ from: input.from, to: input.to, answerUrl, ringUrl: statusUrl, hangupUrl: statusUrl, timeLimitSeconds: input.timeLimitSeconds });
      } catch (error) {
        if (error instanceof DialRefusedError) throw ApplicationFailure.nonRetryable(error.message, 'DialRefused');
        throw error;
      }
    },

    /** Ends the call at the provider; the final status arrives as a callback. */
    async hangupProviderCall(input: { callId: string }): Promise<void> {
      const { telephony } = provider();
      const call = await Call.findById(input.callId, { provider_call_id: 1 }).lean();
      if (!call?.provider_call_id) return;
      await telephony.hangupCall(call.provider_call_id);
    },
  };
}
