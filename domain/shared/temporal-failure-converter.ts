import { DefaultFailureConverter } from '@temporalio/common';

/**
 * The failure converter of every client, worker and workflow bundle (docs/decisions/0200): a
 * failure's message and stack trace go into its `encodedAttributes` payload, which the payload
 * codec encrypts, instead of plain fields of the history (an error may quote a phone number or
 * a reason). Loaded by path (`failureConverterPath`), so it is also bundled into the workflow
 * sandbox; decoding reads both shapes, so failures recorded before stay readable.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
