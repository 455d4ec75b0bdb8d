import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { parseStatusCallback, signPlivoCallback, verifyPlivoCallback } from '../../providers/telephony/callbacks';

/** Plivo's signature V3 and the status a callback reports, apart from any simulator. */
describe('Plivo callback signatures', () => {
  const authToken = 'MzQ4YzY2NzVmZjI0ZDk0NjFhMjg3OTU5ZWYzNzk1';
  const url = 'https://voice.example.in/telephony/hangup?call=7d3f';
  const nonce = '05429567804466091622';
  const params = { To: '919876543210', From: '918047180001', CallUUID: 'c2a1', CallStatus: 'completed', Duration: '42', HangupCause: 'NORMAL_CLEARING' };

  it('sign the URL without its query, `?`, the query sorted, `.`, the fields sorted by name as name and value, a dot and the nonce', () => {
    const text =
      'https://voice.example.in/telephony/hangup?call=7d3f.' +
      'CallStatuscompleted' +
      'CallUUIDc2a1' +
      'Duration42' +
      'From918047180001' +
      'HangupCauseNORMAL_CLEARING' +
      'To919876543210' +
      '.05429567804466091622';
    const expected = createHmac('sha256', authToken).update(text, 'utf8').digest('base64');
    expect(signPlivoCallback(authToken, url, params, nonce)).to.equal(expected);
    expect(verifyPlivoCallback({ authToken, url, params, nonce, signature: expected })).to.equal(true);
  });

  it('sign a URL without a query as the URL, `?` and the fields; one without fields as the URL (and its sorted query); a GET with its fields in the query', () => {
    const hmac = (text: string) => createHmac('sha256', authToken).update(text, 'utf8').digest('base64');
    const plain = 'https://voice.example.in/telephony/hangup';
    expect(signPlivoCallback(authToken, plain, { To: '91', CallStatus: 'ringing' }, nonce)).to.equal(hmac(`${plain}?CallStatusringingTo91.${nonce}`));
    expect(signPlivoCallback(authToken, plain, {}, nonce)).to.equal(hmac(`${plain}.${nonce}`));
    // The query decoded (`+` and %2B), sorted by name, a repeated name's values sorted.
    expect(signPlivoCallback(authToken, `${plain}?to=%2B9198&b=2&a=x+y&b=1`, {}, nonce)).to.equal(hmac(`${plain}?a=x y&b=1&b=2&to=+9198.${nonce}`));
    expect(signPlivoCallback(authToken, `${plain}?b=2`, { A: '1' }, nonce, 'GET')).to.equal(hmac(`${plain}?A=1&b=2.${nonce}`));
    expect(signPlivoCallback(authToken, plain, {}, nonce, 'GET')).to.equal(hmac(`${plain}.${nonce}`));
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

  it("take every CallStatus Plivo documents, in the contract's words: cancel is canceled, timeout is no-answer", () => {
    const taken = Object.fromEntries(
      ['ringing', 'in-progress', 'completed', 'no-answer', 'busy', 'failed', 'cancel', 'timeout'].map((word) => [
        word,
        parseStatusCallback({ CallUUID: 'c', CallStatus: word })?.status,
      ]),
    );
    expect(taken).to.deep.equal({
      ringing: 'ringing',
      'in-progress': 'in-progress',
      completed: 'completed',
      'no-answer': 'no-answer',
      busy: 'busy',
      failed: 'failed',
      cancel: 'canceled',
      timeout: 'no-answer',
    });
  });

  it('read the status, the call id (RequestUUID first), the answered seconds and the cause', () => {
    expect(parseStatusCallback(params)).to.deep.equal({ status: 'completed', providerCallId: 'c2a1', durationSeconds: 42, cause: 'NORMAL_CLEARING' });
    expect(parseStatusCallback({ CallUUID: 'c', RequestUUID: 'r', CallStatus: 'ringing' })).to.deep.equal({ status: 'ringing', providerCallId: 'r' });
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'no-answer', Duration: '0', HangupCause: 'NO_ANSWER' })).to.deep.equal({
      status: 'no-answer',
      providerCallId: 'c',
      durationSeconds: 0,
      cause: 'NO_ANSWER',
    });
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'completed', Duration: '4.5' })).to.deep.equal({ status: 'completed', providerCallId: 'c' });
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'answered' })).to.equal(null);
    // Twilio's word, not Plivo's.
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'canceled' })).to.equal(null);
    expect(parseStatusCallback({ CallUUID: 'c', CallStatus: 'constructor' })).to.equal(null);
    expect(parseStatusCallback({ CallStatus: 'completed' })).to.equal(null);
  });
});
