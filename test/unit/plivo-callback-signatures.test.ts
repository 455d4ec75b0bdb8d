import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { parseStatusCallback, signPlivoCallback, verifyPlivoCallback } from '../../providers/telephony/callbacks';

/** Plivo's signature V3 and the status a callback reports, apart from any simulator. */
describe('Plivo callback signatures', () => {
  const authToken = 'MzQ4YzY2NzVmZjI0ZDk0NjFhMjg3OTU5ZWYzNzk1';
  const url = 'https://voice.example.in/telephony/hangup?call=7d3f';
  const nonce = '05429567804466091622';
  const params = { To: '919876543210', From: '918047180001', CallUUID: 'c2a1', CallStatus: 'completed', Duration: '42', HangupCause: 'NORMAL_CLEARING' };

  it('sign the URL, the fields sorted by name as name and value, a dot and the nonce', () => {
    const text = 'https://voice.example.in/telephony/hangup?call=7d3f' + 'CallStatuscompleted' + 'CallUUIDc2a1' + 'Duration42' + 'From918047180001' + 'HangupCauseNORMAL_CLEARING' + 'To919876543210' + '.05429567804466091622';
    const expected = createHmac('sha256', authToken).update(text, 'utf8').digest('base64');
    expect(signPlivoCallback(authToken, url, params, nonce)).to.equal(expected);
    expect(verifyPlivoCallback({ authToken, url, params, nonce, signature: expected })).to.equal(true);
  });

  it('accept any one of several comma-separated signatures, and nothing else', () => {
    const good = signPlivoCallback(authToken, url, params, nonce);
    const other = signPlivoCallback('old-token', url, params, nonce);
    expect(verifyPlivoCallback({ authToken, url, params, nonce, signature: `${other},${good}` })).to.equal(true);
    expect(verifyPlivoCallback({ authToken, url, params, nonce, signature: other })).to.equal(false);
    expect(verifyPlivoCallback({ authToken, url, params, nonce, signature: '' })).to.equal(false);
    expect(verifyPlivoCallback({ authToken, url, params, nonce, signature: good.slice(1) })).to.equal(false);
    expect(verifyPlivoCallback({ authToken, url, params: { ...params, Extra: '' }, nonce, signature: good })).to.equal(false);
  });

  it('read the status, the call id (RequestUUID first), the answered seconds and the cause', () => {
    expect(parseStatusCallback(params)).to.deep.equal({ status: 'completed', providerCallId: 'c2a1', durationSeconds: 42, cause: 'NORMAL_CLEARING' });
    expect(parseStatusCallback({ CallUUID: 'c', RequestUUID: 'r', CallStatus: 'ringing' })).to.deep.equal({ status: 'ringing', providerCallId: 'r' });
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'no-answer', Duration: '0', HangupCause: 'NO_ANSWER' })).to.deep.equal({ status: 'no-answer', providerCallId: 'c', durationSeconds: 0, cause: 'NO_ANSWER' });
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'completed', Duration: '4.5' })).to.deep.equal({ status: 'completed', providerCallId: 'c' });
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'answered' })).to.equal(null);
    expect(parseStatusCallback({ CallStatus: 'completed' })).to.equal(null);
  });
});
