import { expect } from 'chai';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { CALL_REFUSALS, callRefusalFailure, refusalOf, refusalOfRecordedReason } from '../../contracts/refusals';

/** Refusals cross the activity/workflow boundary as typed failures; workflows read the type, not the text. */
describe('call refusals as typed failures', () => {
  const asActivityFailure = (cause: Error) => new ActivityFailure('activity failed', 'prepareDial', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, cause);

  it('each refusal is a non-retryable, benign ApplicationFailure of its type, read back by type whatever its message', () => {
    for (const refusal of Object.keys(CALL_REFUSALS) as (keyof typeof CALL_REFUSALS)[]) {
      const failure = callRefusalFailure(refusal);
      expect(failure).to.include({ type: refusal, nonRetryable: true, category: 'BENIGN', message: CALL_REFUSALS[refusal].reason });
      expect(refusalOf(asActivityFailure(failure))).to.equal(refusal);
      const reworded = ApplicationFailure.create({ message: 'a different wording', type: refusal, nonRetryable: true });
      expect(refusalOf(asActivityFailure(reworded))).to.equal(refusal);
    }
  });

  it('any other failure is no refusal (the workflow rethrows it)', () => {
    expect(refusalOf(asActivityFailure(ApplicationFailure.create({ message: 'out of credits', type: 'DialRefused' })))).to.equal(null);
    expect(refusalOf(asActivityFailure(new Error('out of credits')))).to.equal(null);
    expect(refusalOf(new Error('boom'))).to.equal(null);
  });

  it('maps the reasons recorded before refusals were typed, and nothing else', () => {
    expect(refusalOfRecordedReason('out of credits')).to.equal('OutOfCredits');
    expect(refusalOfRecordedReason('agent deleted')).to.equal('AgentDeleted');
    expect(refusalOfRecordedReason('the caller hung up')).to.equal(null);
    expect(refusalOfRecordedReason(null)).to.equal(null);
  });
});
